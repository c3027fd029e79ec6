/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording's data model, shared by the recorder, the trace file and
 * the report: binaries, symbols, per-interval figures, and the end record.
 */
#ifndef AT_MODEL_H
#define AT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adaptrace.h"

/* A key/value pair of the file header (tool version, kernel, target...). */
struct at_kv {
	char *key;
	char *value;
};

struct at_binary {
	char *path;
	char build_id[65]; /* lowercase hex, "" if the binary has none */
};

/* Where the kernel executes the probed instruction (see design.md). */
enum at_entry_kind {
	AT_ENTRY_UNKNOWN = 0,
	AT_ENTRY_EMULATED = 1, /* push, call, jmp, jcc, nop: emulated, cheap */
	AT_ENTRY_SSTEP = 2,    /* single-stepped out of line, ~20x dearer */
	AT_ENTRY_REFUSED = 3,  /* the kernel will not probe it (lock, cs/ds prefix) */
};

struct at_arg;

/*
 * What a row of the symbol table stands for. Functions and USDT rows share
 * one table, so windows, report, diff and relevance treat them alike.
 */
enum at_symbol_kind {
	AT_SYM_FUNC = 0,     /* a function: uprobe entry + return */
	AT_SYM_USDT = 1,     /* a USDT probe, counted as a whole */
	AT_SYM_USDT_KEY = 2, /* one key of a keyed USDT probe, found while recording */
};

struct at_symbol {
	uint32_t id;	 /* index in the symbol table; the BPF cookie */
	uint32_t kind;	 /* enum at_symbol_kind */
	uint32_t binary; /* index in the binaries table */
	uint64_t addr;	 /* st_value */
	uint64_t size;
	uint64_t offset; /* file offset of the probe site */
	uint32_t entry;	 /* enum at_entry_kind */
	char *name;
	/* USDT rows only (kind != AT_SYM_FUNC), else NULL and 0. */
	char *provider;
	char *probe;	     /* the probe's name (a pair's entry probe) */
	uint32_t nkeys;	     /* AT_SYM_USDT_KEY: the key's values */
	struct at_arg *keys; /* type, v, str and truncated as for event args */
};

/* Scalar figures of one function over a span (a window or a whole run). */
struct at_counts {
	uint64_t calls;
	uint64_t returns;
	uint64_t sum_ns;
	uint64_t total_ns;
	uint64_t self_ns;
	uint64_t min_ns; /* 0 when returns == 0 */
	uint64_t max_ns;
	uint64_t errors;
	uint64_t max_conc;
	double sumsq; /* sum of squared durations, ns^2 */
};

struct at_hist_pair {
	uint32_t bucket;
	uint64_t count;
};

/* One function's figures in one window; the histogram is sparse. */
struct at_window_entry {
	uint32_t id;
	struct at_counts c;
	uint32_t nhist;
	struct at_hist_pair *hist; /* ascending bucket order */
};

/*
 * A function probed only part of an interval (the coarse budget's duty
 * cycle): its entry in the window counts on_ns of the interval.
 */
struct at_duty_on {
	uint32_t id;
	uint64_t on_ns;
};

/*
 * Window calls of the duty function duty[k] after reads of size class cls
 * (cls AT_BY_TIME: while the window was open, whatever the read).
 */
struct at_cls_calls {
	uint32_t k;
	uint32_t cls;
	uint64_t calls;
};

/*
 * Window calls of the duty function duty[k] while a window was open, under
 * one innermost traced caller (a symbol id, AT_NO_CALLER: none).
 */
struct at_caller_calls {
	uint32_t k;
	uint32_t caller;
	uint64_t calls;
	uint32_t cls; /* in cls_callers[]: the class of the thread's latest read + 1; else 0 */
};

/* A caller's order in callers[], and its value in the file: AT_NO_CALLER 0, else id + 1. */
static inline uint32_t at_caller_rank(uint32_t caller)
{
	return caller + 1u;
}

/* One interval snapshot; only functions with activity are listed. */
struct at_window {
	uint64_t start_ns; /* relative to the recording's start */
	uint64_t end_ns;
	uint32_t n;
	struct at_window_entry *e;
	uint32_t nduty; /* functions probed part of the interval, ascending ids */
	struct at_duty_on *duty;
	/* The target's socket reads in the interval, and in its windows. */
	uint64_t ref_all, ref_on;
	/*
	 * The same per size class of the reads, and the duty functions'
	 * window calls per class of the read before them (has_cls false:
	 * not recorded). cls[] ascends by duty index, then class.
	 */
	bool has_cls;
	uint64_t cls_all[AT_READ_CLASSES], cls_on[AT_READ_CLASSES];
	/* The target's socket writes, in the interval and while a window was open. */
	bool has_writes;
	uint64_t wr_all, wr_on;
	uint32_t ncls;
	struct at_cls_calls *cls;
	/*
	 * The writes per class of the writing thread's latest read, and the
	 * duty functions' calls while a window was open per that class
	 * (has_wr_cls false: not recorded). wr_cls[] ascends like cls[].
	 */
	bool has_wr_cls;
	uint64_t wr_cls_all[AT_READ_CLASSES], wr_cls_on[AT_READ_CLASSES];
	uint32_t nwr_cls;
	struct at_cls_calls *wr_cls;
	/*
	 * The duty functions' calls while a window was open, per innermost
	 * traced caller (has_callers false: not recorded). callers[] ascends
	 * by duty index, then caller.
	 */
	bool has_callers;
	uint32_t ncallers;
	struct at_caller_calls *callers;
	/*
	 * The same calls made after a read, and rp_callers' below, per class
	 * of the thread's latest read too (has_cls_callers false: not
	 * recorded): each ascends by duty index, caller, then class.
	 */
	bool has_cls_callers;
	uint32_t ncls_callers, nrp_cls_callers;
	struct at_caller_calls *cls_callers, *rp_cls_callers;
	/*
	 * The target's turns of its event loop, in the interval and while a
	 * window was open (has_turns false: not recorded): their ends (a
	 * thread's first write after it read) and its wakeups (its first
	 * read after it wrote).
	 */
	bool has_turns;
	uint64_t turn_all, turn_on;
	uint64_t wake_all, wake_on;
	/*
	 * Turn windows (has_turnwin false: none): windows that probed only the
	 * duty functions turnwin[] lists (duty indices, ascending), those run a
	 * whole number of times per turn of the event loop, so the loop kept
	 * its pace and they saw whole turns. What the socket programs counted
	 * in them, apart from the on figures above (the other windows'). A
	 * listed function's window calls are from both kinds.
	 */
	bool has_turnwin;
	uint32_t nturnwin;
	uint32_t *turnwin;
	uint64_t tw_cls_on[AT_READ_CLASSES], tw_wr_on, tw_wr_cls_on[AT_READ_CLASSES];
	uint64_t tw_turn_on, tw_wake_on;
	/*
	 * turnwin[i]'s calls in the turn windows alone (has_twcalls false:
	 * not recorded; tw_calls has nturnwin entries).
	 */
	bool has_twcalls;
	uint64_t *tw_calls;
	/*
	 * The read path of the windows other than the turn windows
	 * (has_rpath false: not recorded): turns' ends and writes of a thread
	 * whose latest read came in an open window, and the duty functions'
	 * calls there per innermost traced caller (rp_callers[] ascends like
	 * callers[]). A window's links linger to the next read, so they see
	 * the whole tail of a turn whose last read came in it.
	 */
	bool has_rpath;
	uint64_t rp_turns, rp_writes;
	uint32_t nrp_callers;
	struct at_caller_calls *rp_callers;
	/*
	 * How the socket programs counted (has_yard false: in all along):
	 * the ns they were in, the reads and writes they counted, and those
	 * imputed from the target's system calls while they were out, which
	 * the figures above include.
	 */
	bool has_yard;
	uint64_t yard_in_ns, yard_counted, yard_imputed;
};

struct at_end {
	uint64_t duration_ns;
	int32_t exit_status; /* target's, -1 when not applicable */
	uint64_t dropped_events;
	uint64_t diag[AT_DIAG_NR];
	char *reason; /* why the recording stopped */
};

/* How a captured argument was decoded (--args); raw registers otherwise. */
enum at_arg_type {
	AT_ARG_RAW = 0, /* a 64-bit register, undeclared */
	AT_ARG_INT = 1,
	AT_ARG_UINT = 2,
	AT_ARG_PTR = 3,
	AT_ARG_STR = 4, /* str holds the bytes read, bounded */
};

#define AT_MAX_ARGS 6

struct at_arg {
	uint32_t type;	/* enum at_arg_type */
	bool truncated; /* AT_ARG_STR: the string was longer than captured */
	uint64_t v;	/* the register's value (for strings: the pointer) */
	char *str;	/* AT_ARG_STR only, NUL-terminated; NULL if unreadable */
};

/* One sampled call from the detail phase. */
struct at_event {
	uint64_t ts_ns; /* entry time, relative to the recording's start */
	uint32_t pid, tid, cpu;
	uint32_t id; /* symbol id */
	uint64_t duration_ns;
	int64_t ret;
	uint32_t nargs;
	struct at_arg args[AT_MAX_ARGS];
};

/* A change of the detail selection or of a sampling rate, with its reason. */
enum at_sel_what {
	AT_SEL_ENTER = 1, /* function entered the detail phase */
	AT_SEL_LEAVE = 2, /* function left it */
	AT_SEL_RATE = 3,  /* its sampling rate changed */
};

struct at_sel_change {
	uint64_t ts_ns; /* relative to the recording's start */
	uint32_t id;	/* symbol id */
	uint32_t what;	/* enum at_sel_what */
	double rate;	/* rate after the change (0..1) */
	char *reason;	/* one line, human readable */
};

/* Detail-phase totals of one function over a recording. */
struct at_detail_stats {
	uint32_t id;
	uint64_t events;       /* written to the trace file */
	uint64_t dropped;      /* ring-buffer reservations that failed */
	double rate;	       /* last sampling rate */
	uint64_t sampled;      /* calls the draw picked: events + dropped (+ no room) */
	uint32_t ncpus;	       /* dropped_cpu[] entries */
	uint64_t *dropped_cpu; /* reservations that failed, per CPU */
};

/*
 * A ratio estimator's strata against one yardstick (the reads of one size
 * class, or the writes): the intervals whose windows saw at least
 * AT_DUTY_MIN_STRATUM of it, each scaled by its own ratio, and the rest.
 * Per stratum: R of the yardstick in the interval, r in its windows, c
 * calls in its windows.
 */
struct at_strata {
	uint32_t n;
	double est;			      /* sum of c R / r */
	double all, on, calls;		      /* sums of R, r and c */
	double cc, rr, poisson;		      /* sums of c^2 / r, R^2 / r and c R^2 / r^2 */
	double rest_all, rest_on, rest_calls; /* the other intervals' R, r and c */
};

/*
 * Sums over the intervals of one read class of the calls while the windows
 * were open (t), the window reads (r) and the window writes (w): of t^2,
 * tr, r^2, tw and w^2. They tell which of the two the calls follow.
 */
struct at_fit {
	double tt, tr, rr, tw, ww;
	uint32_t n; /* intervals with window calls, reads or writes of the class */
};

/*
 * Sums over the intervals with turns recorded of the calls while the
 * windows were open (t) and of four yardsticks in the windows: reads (r),
 * writes (w), turn ends (u) and wakeups (a). Fitted through the origin,
 * they tell whether the calls follow the turns, at either end.
 */
struct at_turn_fit {
	double tt, tr, rr, tw, ww, tu, uu, ta, aa;
	uint32_t nt, nu, na; /* intervals with window calls, turn ends, wakeups */
	/*
	 * Intervals whose turn windows' part was recorded (nsplit; that part
	 * is in at_duty_est's twu and twk): the calls, turn ends and wakeups
	 * in the other windows.
	 */
	uint32_t nsplit;
	double ot_calls, ot_turns, ot_wakes;
};

/* Which yardstick scales a function's window calls. */
enum at_yardstick {
	AT_BY_READS = 0,
	AT_BY_WRITES = 1,
	AT_BY_TURNS = 2, /* ends of turns of the event loop (replies begin) */
	AT_BY_WAKES = 3, /* wakeups of the event loop */
};

/*
 * A function's window calls under one caller, summed over the intervals.
 * For the read path's also the intervals with such calls, and the sums of
 * their products with each interval's read-path turns' ends (ct) and
 * writes (cw) and of their squares (cc): the fits that tell which of the
 * two they follow.
 */
struct at_caller_total {
	uint32_t caller; /* a symbol id, AT_NO_CALLER: none */
	uint32_t nwin;
	double calls, cc, ct, cw;
	/*
	 * The yardsticks' sums over the intervals it was called in, and its
	 * calls squared where both were 0 (both_fit()).
	 */
	double tt_seen, ww_seen, tw_seen, cc_bare;
	/*
	 * On the read path, over the intervals whose windows probed the caller
	 * too: the calls under it (matched) and the caller's own calls (own).
	 */
	double matched, own;
	double matched_even, own_even; /* in those where it ran once a turn's end */
	/* Window calls by the class of the thread's latest read (at_window.cls_callers). */
	double cls[AT_READ_CLASSES];
};

/*
 * Figures of a duty-cycled function: what its probed windows saw. The
 * calls outside them are estimated from their rates (at_profile_estimate).
 */
struct at_duty_est {
	uint32_t nwin;	      /* partly probed intervals */
	uint64_t calls;	      /* calls seen in them */
	double on_ns, len_ns; /* probed time, and those intervals' length */
	double sum_r, sum_r2; /* per-interval rates (calls/ns): sum, sum of squares */
	/* The same against the target's socket reads (ref_on, ref_all). */
	uint32_t nref;
	double ref_on, ref_all, sum_q, sum_q2;
	/*
	 * Per interval with enough reads in its windows: that interval's own
	 * ratio times its reads (strat), and that estimate's Poisson
	 * variance. The other intervals' calls and reads (rest_*) take
	 * the ratio of the strata's sums.
	 */
	double strat, strat_var, strat_calls, strat_ref_on;
	double rest_calls, rest_ref_all, rest_by_time;
	/*
	 * Intervals with read classes (ncls_win): strata per read class,
	 * with the window calls after reads of the class; and against the
	 * target's socket writes, with the window calls by time (nwr of
	 * those intervals had writes).
	 */
	uint32_t ncls_win, nwr;
	uint32_t nwr_called; /* ... and window calls by time */
	struct at_strata cls[AT_READ_CLASSES], wr;
	/* The same against the writes per class of the thread's latest read. */
	uint32_t nwr_cls;
	struct at_strata wr_cls[AT_READ_CLASSES];
	struct at_fit fit[AT_READ_CLASSES]; /* per class, for follows_writes() */
	/* Against the turns' ends and the wakeups (nturn intervals recorded them). */
	uint32_t nturn;
	struct at_strata tu, wk;
	/* The same in the turn windows alone (tfit.nsplit intervals recorded them). */
	struct at_strata twu, twk;
	/* ... and in those of them that saw no hang-up or accept (the others' turns unseen). */
	struct at_strata twu_calm, twk_calm;
	struct at_turn_fit tfit;
	/* Intervals with calls per caller recorded (ncaller_win), and the sums. */
	uint32_t ncaller_win;
	uint32_t ncls_caller_win; /* ... with them (and the read path's) per class too (.cls) */
	uint32_t ncallers;
	struct at_caller_total *callers; /* owned: at_profile_free() */
	/*
	 * Intervals with the read path recorded (nrp): its turns' ends and
	 * writes, those intervals' turns' ends and writes, the sums of the
	 * squares of the first two and of their product, and the calls there
	 * per caller.
	 */
	uint32_t nrp, nrp_turned, nrp_wrote; /* ... those with turns' ends, with writes */
	uint32_t nrp_cls_win;		     /* ... with its calls per caller and class */
	double rp_turns, rp_writes, rp_turn_all, rp_wr_all, rp_tt, rp_ww, rp_tw;
	uint32_t nrp_callers;
	struct at_caller_total *rp_callers; /* owned: at_profile_free() */
};

/* What one interval's windows saw of a duty-cycled function. */
struct at_duty_obs {
	uint64_t calls;		  /* calls seen in the windows */
	uint64_t on_ns, len_ns;	  /* probed time, and the interval's length */
	uint64_t ref_on, ref_all; /* socket reads in the windows, in the interval */
	/* Per read size class: reads in the interval and in its windows, and
	 * the window calls after them; NULL when not recorded. cls_calls has
	 * AT_SLOTS slots: then AT_BY_TIME, the calls while the windows were
	 * open, and AT_WR_CLASS(k), those by the class of the latest read. */
	const uint64_t *cls_all, *cls_on, *cls_calls;
	/* Socket writes in the interval and in its windows, when recorded. */
	bool has_writes;
	uint64_t wr_all, wr_on;
	/* The same per class of the writing thread's latest read; NULL when not recorded. */
	const uint64_t *wr_cls_all, *wr_cls_on;
	/* The function's window calls per innermost caller, when recorded. */
	bool has_callers;
	uint32_t ncallers;
	const struct at_caller_calls *callers;
	/* Those and rp_callers' per class too (at_window.cls_callers), when recorded. */
	bool has_cls_callers;
	uint32_t ncls_callers, nrp_cls_callers;
	const struct at_caller_calls *cls_callers, *rp_cls_callers;
	/* The turns' ends and the wakeups of the event loop, when recorded. */
	bool has_turns;
	uint64_t turn_all, turn_on, wake_all, wake_on;
	/*
	 * A function of the turn windows: the part of its calls (by time),
	 * turn ends and wakeups above that the turn windows saw, when recorded.
	 */
	bool has_tw_calls;
	uint64_t tw_calls, tw_turn_on, tw_wake_on;
	bool tw_bursts; /* the turn windows saw a hang-up or an accepted connection */
	/* The read path (at_window.has_rpath) and the function's calls there per caller. */
	bool has_rpath;
	uint64_t rp_turns, rp_writes;
	uint32_t nrp_callers;
	const struct at_caller_calls *rp_callers;
	/*
	 * Per rp_callers entry, its caller's own calls on the read path in the
	 * interval (-1: the windows did not probe the caller); NULL: none known.
	 */
	const int64_t *rp_caller_own;
};

/* Socket reads an interval's windows must see for a ratio of its own. */
#define AT_DUTY_MIN_STRATUM 3

/* Aggregate of one function over a whole recording. */
struct at_func_profile {
	struct at_counts c;
	uint64_t hist[AT_HIST_BUCKETS];
	struct at_duty_est duty;
	/* Set by at_profile_estimate() when counts were scaled up. */
	bool estimated;
	double calls_lo, calls_hi; /* 95 % interval of the calls */
	/* Mostly scaled by time (no socket reads): the windows' slowdown carries over. */
	bool by_time;
	/* Scaled by the target's socket writes: its calls follow them better than reads. */
	bool by_writes;
	/* Scaled by the turns of the event loop (AT_BY_TURNS, AT_BY_WAKES), else AT_BY_READS. */
	enum at_yardstick by_turns;
	/*
	 * Otherwise the share of its window calls made under callers that go
	 * by the writes: that part is scaled by the writes, the rest by the reads.
	 */
	double writes_share;
	/* The same for callers that go by the turns (or the wakeups): scaled by the turns. */
	double turns_share;
	uint64_t seen_calls; /* calls the probes saw (what they cost) */
	/* Share of the socket reads of a size class the windows saw too few of. */
	double unseen_reads;
	/* Probed in turn windows too (at_window.turnwin) in some interval. */
	bool turn_windows;
	/*
	 * The recording had turn windows: the loader found which functions run
	 * once to three times a turn, and put them there.
	 */
	bool turn_windows_ran;
	/* Exact calls in the intervals where no function was in windows (before the move). */
	double pre_move_calls;
};

void at_counts_merge(struct at_counts *dst, const struct at_counts *src);
/*
 * The duty entry of function id in window w, or NULL when id was probed all
 * along. Both lists ascend by id: *k walks w->duty across calls (start at 0).
 */
const struct at_duty_on *at_window_duty(const struct at_window *w, uint32_t id, uint32_t *k);
/* Index of id in w's duty list (ascending ids), or w->nduty. */
uint32_t at_window_duty_index(const struct at_window *w, uint32_t id);
/*
 * Whether w's read path lost its calls: it saw a turn's end or a write, no
 * window call went to it, and the window calls by time kept their callers
 * (recorded: has_callers) for less than three quarters of them. The probes
 * record no caller while quiesced (a release waiting 20 ms or more, as at a
 * move), and the socket programs go on counting: its yardsticks then have
 * no calls.
 */
bool at_window_rp_lost(const struct at_window *w);
/*
 * Whether the windows' read path (has_rpath) never saw a turn of the event
 * loop end though the target made turns: then no window saw the work at a
 * turn's end, and its estimates can be far too low.
 */
bool at_windows_turn_ends_unseen(const struct at_window *w, size_t n);
/* Whether the duty function duty[k] was in the interval's turn windows too. */
bool at_window_turnwise(const struct at_window *w, uint32_t k);
/* Its index in w->turnwin, or -1. */
int64_t at_window_turnwin(const struct at_window *w, uint32_t k);
/* Add a window entry into an aggregate. */
void at_profile_add(struct at_func_profile *p, const struct at_window_entry *e);
/* Add what one partly probed interval saw of the function. */
void at_profile_add_duty(struct at_func_profile *p, const struct at_duty_obs *o);
/* Scale a duty-cycled function's figures to estimates, once; sets estimated. */
void at_profile_estimate(struct at_func_profile *p);
/*
 * Whether the writes alone scale it rather than the reads (what
 * at_profile_estimate sets as by_writes, unless the turns scale it): its
 * callees' calls under it follow the writes. One that goes by the turns
 * counts too (redis's handleClientsWithPendingWrites runs once a turn, but
 * its callees loop over the turn's replies), unless it is a turn caller.
 */
bool at_profile_by_writes(const struct at_func_profile *p);
/*
 * Whether a function of the turn windows goes by the turns or the wakeups
 * (writes: as at_profile_estimate_callers): its callees' calls under it
 * follow the turns' ends.
 */
bool at_profile_turn_caller(const struct at_func_profile *p, const bool *writes, size_t n);
/*
 * Whether a function outside the turn windows ran once a turn's end on the
 * read path, every call there under turn callers (turns[], n ids).
 */
bool at_profile_under_turn_callers(const struct at_func_profile *p, const bool *turns, size_t n);
/*
 * Whether a function of the windows goes by the reads alone: neither the
 * writes nor the turns scale it (writes: as at_profile_estimate_callers),
 * and its window calls fell in 3 intervals or more.
 */
bool at_profile_by_reads(const struct at_func_profile *p, const bool *writes, size_t n);
/*
 * Whether most of p's read-path calls not made at hang-ups go by the
 * writes, under callers that go by them or under turn callers, per reply
 * (writes, turns: as at_profile_estimate_callers): its callees' calls
 * under it follow the writes too (redis's zfree under listDelNode under
 * handleClientsWithPendingWrites).
 */
bool at_profile_rp_replies(const struct at_func_profile *p, const bool *writes, const bool *turns,
			   size_t n);
/*
 * Whether p, which its own fit puts by the writes, has its estimate split
 * by the read path instead: enough of its window calls under callers by
 * the reads (reads[id]; writes[id], turns[id]: the callers' other marks,
 * as at_profile_estimate_callers), and the turns do not take it. Its
 * callees' calls under it then follow the reads, not the writes.
 */
bool at_profile_reads_split(const struct at_func_profile *p, const bool *writes, const bool *turns,
			    const bool *reads, size_t n);
/*
 * Whether p, whose window calls by time fell in fewer than the 3 intervals
 * at_profile_by_reads() needs, made nearly all of them under callers by
 * the reads (reads[id], n ids): a mark for its callees, with no scale of
 * its own.
 */
bool at_profile_under_readers(const struct at_func_profile *p, const bool *reads, size_t n);
/* One line to f of what each yardstick makes of p's calls, before at_profile_estimate_callers. */
void at_profile_explain(FILE *f, const char *name, const struct at_func_profile *p,
			const bool *writes, size_t n);
/*
 * at_profile_estimate, knowing which callers go by the writes (writes[id]),
 * which are turn callers (turns[id]) and which go by the reads alone
 * (reads[id]; n ids, any NULL: none; no id in two): the shares of its
 * window calls made under the first two go by the writes and by the turns'
 * ends, and one made mostly under the third does not go by the writes.
 */
void at_profile_estimate_callers(struct at_func_profile *p, const bool *writes, const bool *turns,
				 const bool *reads, size_t n);
/*
 * Per caller id, its estimate per window call, by which the calls under it
 * scale (0: not so; any NULL: none): a caller by the reads, as its calls
 * counted by time (reads_time) and on the read path (reads_path); one by
 * the writes, on the read path (writes_path).
 */
struct at_caller_scales {
	const double *reads_time, *reads_path, *writes_path;
	/* A turn caller's calls per turn's end in its turn windows. */
	const double *turn_end;
	/* Its calls in the windows came in bursts (at_profile_bursty()). */
	const bool *bursty;
	/* Its read-path calls' share made in bursts (at_profile_burst_share()). */
	const double *bursts;
	/* Its exact calls in the intervals before any function moved. */
	const double *pre_move;
	/* By the writes: its estimate per read-path call, over however few. */
	const double *writes_path_any;
	/* By the reads: at_profile_rp_class_mix(), 0 where unknown (any NULL: none). */
	const double *reads_path_mix;
};

/* at_profile_estimate_callers, with the callers' own scales (sc NULL: none). */
void at_profile_estimate_scaled(struct at_func_profile *p, const bool *writes, const bool *turns,
				const bool *reads, const struct at_caller_scales *sc, size_t n);
/*
 * A function by the reads: its estimate by them per call its windows saw,
 * by time (*by_time) and on the read path (*on_path), as its callees'
 * calls under it count in the windows' callers and their read path; 0
 * where it has none.
 */
void at_profile_reads_scales(const struct at_func_profile *p, double *by_time, double *on_path);
/*
 * How many reads its read-path calls' classes ran per one the windows saw,
 * averaged over those calls: a callee's part under it scales by the same
 * over the callee's calls there. 0 without 3 classed calls there. For a
 * function of the turn windows, its estimate per read-path call, on_path
 * (at_profile_reads_scales()).
 */
double at_profile_rp_class_mix(const struct at_func_profile *p, double on_path);
/*
 * The same for a function by the writes, on the read path (*path, over 3
 * of its calls there or more), and over however few (*any).
 */
void at_profile_writes_scales(const struct at_func_profile *p, double *path, double *any);
/*
 * For a function marked by the writes with no writes estimate of its own
 * (its windows saw none of its class's writes): its callers' scales (wpath,
 * n ids) over its read-path calls, when all of them are under such
 * callers, 3 or more. redis's removeExpire, all under setKey, had none, and
 * dictDelete under it went by the read path's raw writes, 30 % high. 0
 * otherwise.
 */
double at_profile_inherited_writes_scale(const struct at_func_profile *p, const double *wpath,
					 size_t n);
/*
 * Its calls in the windows came in bursts: the reads put it at none, or
 * at an estimate whose 95 % interval is wider than half of it.
 */
bool at_profile_bursty(const struct at_func_profile *p);
/*
 * The share of its calls on the windows' read path made under callers
 * seen in bursts (bursty[], n ids), as its callees' are (model.c's
 * burst_calls()); writes, turns and reads mark the callers the writes,
 * the turns and the reads scale.
 */
double at_profile_burst_share(const struct at_func_profile *p, const bool *writes,
			      const bool *turns, const bool *reads, const bool *bursty, size_t n);
/* A function of the turn windows: its calls per turn's end there (0: too few seen). */
double at_profile_turn_end_scale(const struct at_func_profile *p);
/* Free what a profile owns (its callers' fits). */
void at_profile_free(struct at_func_profile *p);
/* Value at quantile q (0..1) of a histogram, clamped to [min, max]. */
uint64_t at_hist_quantile(const uint64_t *hist, double q, uint64_t min_ns, uint64_t max_ns);
/* The same over one window entry's sparse histogram; NAN without timed calls. */
double at_entry_quantile(const struct at_window_entry *e, double q);

#endif
