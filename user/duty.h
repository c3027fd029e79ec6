/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The coarse budget's duty cycle. Functions whose probes cost more than
 * --budget allows are taken off the always-on links and probed in short
 * windows; each interval records for how long they were probed, and the
 * report scales their figures to estimates (at_profile_estimate()).
 *
 * Moving functions means new session links of a new generation (see
 * AT_COOKIE_GEN_SHIFT) and releasing the old ones. A release waits for an
 * SRCU grace period that return probes set up meanwhile keep postponing,
 * so it runs in a thread, and when it does not end soon the probes are
 * quiesced: entries skip their returns until it has.
 */
#ifndef AT_DUTY_H
#define AT_DUTY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach.h"
#include "callsites.h"
#include "model.h"

struct bpf_program;

/* The least share of time the windows may probe: 4 ms a second. */
#define AT_DUTY_MIN_FRAC 0.004
/*
 * A window's release stays in the normal class while its costliest
 * probes, this share of their cost, come out; then it goes idle.
 */
#define AT_HOT_SHARE 0.8
/*
 * The loader's CPU time to put one probe in for a window and take it out
 * again, before the windows have measured it: about 40 us here (a
 * breakpoint write and its TLB flush, each way).
 */
#define AT_WINDOW_PROBE_NS 40000.0
/* Turns in a controller step that tell a function run 1-3 times a turn. */
#define AT_TURNWISE_MIN_TURNS 20

/* Where function id is probed. */
struct at_duty_site {
	uint32_t bin;	/* index into paths */
	uint64_t off;	/* file offset of the probe */
	uint64_t flags; /* cookie flags (AT_COOKIE_EXE_FILTER) */
	bool refused;	/* the kernel will not probe it */
	/* Its call sites (n > 0): the windows count it there, not at its single-stepped entry. */
	const struct at_callsites *calls;
};

struct at_duty_opts {
	struct bpf_program *session; /* coarse_session, loaded for session links */
	uint32_t *gen;		     /* the coarse programs' globals */
	bool *quiesce;
	bool *window_on;
	uint64_t *window_until;	 /* CLOCK_MONOTONIC ns: the programs stop counting */
	bool *read_after_window; /* the target read after window_until */
	bool *window_turns;	 /* the open window is a turn window */
	uint32_t *window_seq;	 /* numbers the windows: a thread's state counts in its own */
	int32_t *turn_gates;	 /* threads a turn window counts (a wakeup to the first after) */
	int32_t *rp_tails;	 /* threads in a read-path turn's tail (its first write on) */
	void (*quiesce_detail)(void *ctx, bool on);
	void *ctx;
	const char *const *paths;
	const struct at_duty_site *sites; /* one per function id */
	uint32_t n;
	/*
	 * ADAPTRACE_YARDSTICKS=sampled (experimental): the yardsticks go in
	 * only around the windows and for samples, the reads and writes in
	 * between imputed from the target's system calls (yardstick.h).
	 */
	struct bpf_program *inputs;  /* duty_inputs: counts the target's socket reads */
	struct bpf_program *outputs; /* duty_outputs: and writes (NULL: not on this kernel) */
	struct bpf_program *accepts; /* duty_accepts: and the accepts, on libc's (NULL: none) */
	int refcalls_fd;	     /* ... into these per-CPU counters, per size class */
	int wcalls_fd;		     /* window calls per function and read class */
	int wcallers_fd;	     /* window calls per function and innermost caller */
	pid_t pid;		     /* 0: every process */
	const char *exe;	     /* ... running this executable (-b) */
	double period_s; /* one window per period, at most (the plan may make it longer) */
	double step_s;	 /* the controller's step, which at_duty_demote()'s cost[] covers */
	/* Window entries counted, and paid for outside windows by phase (ADAPTRACE_DEBUG). */
	const uint64_t *hits_counted;
	const uint64_t *hits_phase; /* per enum at_window_phase */
	const uint64_t *uncalled;   /* window calls in no callers pair, per enum at_uncalled */
	uint32_t *window_phase;	    /* the programs' copy of the window's phase */
	int wake_fd;		    /* duty_wake: a lingering window's read (-1: none) */
	bool *linger_woken;	    /* ... sent; cleared as a window begins to linger */
};

struct at_duty;

struct at_duty *at_duty_new(const struct at_duty_opts *o);
void at_duty_free(struct at_duty *d);

/*
 * Probe the functions marked in demote[] only for frac of each period of
 * period_s (at least at_duty_opts.period_s), from
 * now on (those already demoted stay so). Those also marked in turnwise[]
 * (NULL: none) run a whole number of times per turn of the event loop:
 * they are probed in turn windows too, as long as the others' and between
 * them, with no other function in, so the loop keeps its pace and the
 * windows see whole turns. cost[] (NULL: unknown) is each function's probe
 * cost when always probed: a window arms and releases the costliest first
 * (AT_HOT_SHARE). It releases the links it replaces, the coarse entry and
 * return links the first time, and detail's links of the demoted
 * functions. Returns 0, or -errno with err filled (nothing changed; the
 * caller keeps the links).
 */
int at_duty_demote(struct at_duty *d, const bool *demote, const bool *turnwise, const double *cost,
		   double frac, double period_s, struct at_links *entry, struct at_links *ret,
		   struct at_links *detail, uint64_t now, char *err, size_t errlen);
bool at_duty_is_demoted(const struct at_duty *d, uint32_t id);
/* How many functions the windows probe. */
uint32_t at_duty_ndemoted(const struct at_duty *d);
/* How many of them the turn windows probe too. */
uint32_t at_duty_nturnwise(const struct at_duty *d);
/*
 * The target's socket reads and turns of its event loop (ends) so far; 0
 * when not counted. Once after at_duty_fill(): as it read them.
 */
void at_duty_loop(struct at_duty *d, uint64_t *reads, uint64_t *turns);
double at_duty_frac(const struct at_duty *d);
/* What a probe costs the loader per window (ns of CPU), as measured so far. */
double at_duty_probe_cpu_ns(const struct at_duty *d);
/* Windows per second that probe a function (turnwise: the turn windows too). */
double at_duty_windows_per_s(const struct at_duty *d, bool turnwise);
/* CLOCK_MONOTONIC ns of the last move's flip to the new always-on links (0: none). */
uint64_t at_duty_moved_at(const struct at_duty *d);
/* Functions it can move: ids below this. */
uint32_t at_duty_nfuncs(const struct at_duty *d);
/* Change the windows' share of time and period without moving functions. */
void at_duty_set_windows(struct at_duty *d, double frac, double period_s);
/* The shortest period, and the longest: one window per controller step. */
double at_duty_min_period_s(const struct at_duty *d);
double at_duty_max_period_s(const struct at_duty *d);

/*
 * A descriptor that polls readable when a lingering window can go (-1:
 * none); at_duty_wake_drain() empties it. at_duty_poll() then releases it.
 */
int at_duty_wake_fd(const struct at_duty *d);
void at_duty_wake_drain(struct at_duty *d);

/* Whether a window counts now: open, or closed with its links lingering. */
bool at_duty_counting(const struct at_duty *d);

/*
 * How many window lengths a closed window lingers at most, waiting for the
 * turn a thread read in to end: 3, or 6 while fewer than half the intervals
 * whose windows read while the target turned (nread_intervals) saw a turn
 * end on the read path (nturned_intervals), whose fits by the turns need
 * several, and 15 while none of 2 or more did: in 1 of 8 redis recordings
 * on a slow host the read path saw no end and no write in 10 intervals at
 * 6, and the work at a turn's end (writeToClient, listRewind) came out
 * 55-68 % low, outside its intervals; 3 more while a turn whose end the
 * read path counted is in its tail (tail), so that its replies and the
 * rest of its work count with it.
 * Under the window probes redis's turns of 50 requests outlast 3 lengths
 * (4 ms windows): with no cap, 5 of 7 ended 11-21 ms after the window
 * opened, 2 after 61-66 ms.
 */
uint32_t at_duty_linger_lengths(uint32_t nread_intervals, uint32_t nturned_intervals, bool tail);

/*
 * Whether a turn window saw too few turns to go by: it counted no turn's
 * end, or under a quarter of the reads the latest interval's rate gives
 * its length (expected). It opened in a lull, or on clients leaving
 * between a benchmark's runs: about one in five of the turn windows of 35
 * redis rounds counted no end. m7's, the only one after a move of beforeSleep
 * into the windows, counted 53 reads (50 hang-ups) and 1 end in 9.89 ms,
 * where the interval's rate gives 590 reads, and beforeSleep's callees
 * came out 21-36 % low. Turn windows slow the loop's turns, not its
 * reads: theirs counted 20-29 reads a turn where their intervals' made
 * 2-8, so turns are no measure.
 */
bool at_duty_turns_too_few(uint64_t reads, uint64_t ends, double expected);

/*
 * Whether the target's reads shifted to sizes the windows have hardly
 * seen: between refcalls' read classes at the last look (last) and now
 * (cur; n classes), AT_DUTY_SHIFT_SHARE of the reads or more, and
 * AT_DUTY_SHIFT_MIN_READS, are of classes with fewer than
 * AT_DUTY_MIN_STRATUM reads in the windows since the latest move
 * (seen_from: each class's window reads then; NULL: since the start), and
 * min_all reads or more were made (not a lull). A
 * connection's first read, an accept and end of file never count as new:
 * they come in bursts as clients come and go. After two such looks in a row
 * (duty.c) the next window opens as soon as its slot has begun, a normal
 * one, instead of at its random point, so that a kind of request that
 * lasts less than a slot is seen.
 */
#define AT_DUTY_SHIFT_SHARE	0.25
#define AT_DUTY_SHIFT_MIN_READS 30
bool at_duty_shifted(const struct at_reads *cur, const struct at_reads *last,
		     const uint64_t *seen_from, uint32_t n, double min_all);

/*
 * Whether an early window (above) missed what opened it: none of the
 * classes it opened for (mask, bit k for class k) gained
 * AT_DUTY_MIN_STRATUM window reads from its opening (at_open, refcalls'
 * read classes then) to now (cur). A run of new sizes shorter than two
 * looks has ended when its window opens, and the next such run opens the
 * next window at the same edge: with runs of 20,000 SETs and GETs (0.15 s
 * each) every window opened as a run of GETs ended, and none saw a GET in
 * 7 s. After a miss the next normal window opens at its random point.
 * False for an empty mask.
 */
bool at_duty_early_missed(const struct at_reads *at_open, const struct at_reads *cur,
			  uint32_t mask);

/*
 * Whether a due turn window may give its slot to an early normal one (a
 * shift, above) and take the next: once in 4 slots (duty.c's SWAP_SLOTS,
 * of length slot; swapped_at, the latest swap, 0 for none), and always
 * when it is a retry (at_duty_turns_too_few()). Swapping at every shift,
 * redis's warm-up left 1-3 turn windows a recording, against 4-5; never,
 * a run of GETs that came after a normal window waited for the next one,
 * a period on, and was missed. A retry that kept its slot took the one
 * slot of a run of 100,000 SETs, which no window saw then, in 2 of 160
 * recordings (setCommand -71.4 % and -97.9 %).
 */
bool at_duty_swap_ok(bool retry, uint64_t swapped_at, uint64_t now, uint64_t slot);

/*
 * Whether a turn window due now waits for the next look for a shift (at
 * most 100 ms): the last look found one (looks in a row; those before its
 * slot began count too, but a window opens early only at a look in its
 * slot), and a shift would make it give its slot away (at_duty_swap_ok()).
 * Due at its random point, 89 ms into its slot, and open by 102 ms, 9 ms
 * before that look, one took the slot of a run of GETs that ended before
 * the next slot, and no window saw the run (getCommand -98.1 %, 1 of 128
 * recordings).
 */
bool at_duty_turn_waits_look(uint32_t looks, bool retry, uint64_t swapped_at, uint64_t now,
			     uint64_t slot);

/* Open and close windows, finish releases; returns ms until the next step, or -1. */
int at_duty_poll(struct at_duty *d, uint64_t now);

/* For the interval [a, b): how long each demoted function was probed. */
void at_duty_fill(struct at_duty *d, uint64_t a, uint64_t b, struct at_window *win);

/*
 * Stop: hand the session links to the caller's final release (appended to
 * ret, released with the other return links), then wait for releases in
 * progress with at_duty_join() after that release.
 */
void at_duty_take_links(struct at_duty *d, struct at_links *ret);
void at_duty_join(struct at_duty *d);

#endif
