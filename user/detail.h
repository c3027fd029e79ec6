/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The detail phase's probes and their events: loading bpf/detail.bpf.c,
 * attaching it to selected functions at run time (uprobe session link, or
 * uprobe + uretprobe), setting each function's sampling rate, draining the
 * ring buffer into the trace file in batches, and per-function totals.
 */
#ifndef AT_DETAIL_H
#define AT_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "tracefile.h"

struct bpf_program;

struct at_detail_opts {
	const struct at_symbol *syms; /* the trace's symbol table */
	uint32_t nsyms;
	/*
	 * Per symbol: the detail site, where the arguments are still in their
	 * registers (placement may move the coarse site past writes to them),
	 * and its entry kind; NULL: the symbols' own offset and entry.
	 */
	const uint64_t *args_offsets;
	const uint32_t *args_entries;
	const char *const *bin_paths; /* per binary: the path to attach to */
	const bool *bin_exe_filter;   /* per binary: count only the -b executable's calls */
	size_t nbins;
	pid_t pid;	     /* > 0: only this process */
	uint64_t target_ino; /* -b: identity of the executable (with bin_exe_filter) */
	uint32_t target_dev;
	size_t ringbuf_bytes; /* 0: default (4 MiB), else rounded up to a power of two
				 pages and drained only every interval (no wake-ups) */
	uint64_t t0;	      /* recording start, CLOCK_MONOTONIC ns */
};

/* Per-call costs measured on adaptrace's own process (ns). */
struct at_detail_costs {
	double coarse;	     /* coarse entry + return */
	double coarse_sstep; /* the same where the entry is single-stepped (design.md: ~20x) */
	double unsampled;    /* detail probe attached, call not sampled */
	double sampled;	     /* what sampling a call adds: frame, strings, event, return */
};

struct at_detail;

/*
 * Load the programs. Uses the uprobe session link when the kernel has it
 * (probed on a function of our own) unless ADAPTRACE_NO_UPROBE_SESSION=1.
 * Returns NULL with err filled.
 */
struct at_detail *at_detail_new(const struct at_detail_opts *o, char *err, size_t errlen);
void at_detail_free(struct at_detail *d);
/* "session" or "uprobe+uretprobe". */
const char *at_detail_mode(const struct at_detail *d);

struct at_argspec;

/*
 * Decode id's arguments per spec (argspec.h; kept, not copied); up to
 * AT_DETAIL_NSTR of them may be strings of at most AT_DETAIL_STRLEN bytes.
 * Default: six raw registers. Returns -1 with err filled when the
 * declaration cannot be honoured.
 */
int at_detail_set_args(struct at_detail *d, uint32_t id, const struct at_argspec *spec, char *err,
		       size_t errlen);

/* Called for every event drained, before it is written (the sampler's cycles). */
typedef void (*at_detail_event_fn)(void *ctx, const struct at_event *e);
void at_detail_on_event(struct at_detail *d, at_detail_event_fn fn, void *ctx);

/*
 * Start sampling id at rate (0..1], attaching its probe the first time.
 * Returns 0, or -errno with err filled (the function stays coarse only).
 */
int at_detail_enable(struct at_detail *d, uint32_t id, double rate, char *err, size_t errlen);
int at_detail_set_rate(struct at_detail *d, uint32_t id, double rate);
/*
 * Stop sampling id. Its probe stays attached but inert (the entry returns
 * at once, and with the session link skips the return) until the end:
 * releasing a uprobe link while coarse return probes stay on hot
 * functions can wait forever on the kernel's uretprobe SRCU.
 */
void at_detail_disable(struct at_detail *d, uint32_t id);
bool at_detail_enabled(const struct at_detail *d, uint32_t id);
double at_detail_rate(const struct at_detail *d, uint32_t id);

/* Descriptor to poll for waiting events. */
int at_detail_fd(const struct at_detail *d);
/* Set: the BPF side wakes the poller only when this many bytes wait. */
size_t at_detail_wakeup_bytes(const struct at_detail *d);
/*
 * Drain the ring buffer without blocking and append the events to w in
 * chunks. Returns the number of events, or -1 (w's error).
 */
long at_detail_drain(struct at_detail *d, struct at_writer *w);

/* Totals of id so far. */
void at_detail_stats(struct at_detail *d, uint32_t id, struct at_detail_stats *out);
/* Write a detail-stats chunk for every function that ever had detail. */
int at_detail_write_stats(struct at_detail *d, struct at_writer *w);
/* Same into memory (the caller frees with at_detail_stats_free). */
size_t at_detail_all_stats(struct at_detail *d, struct at_detail_stats **out);
void at_detail_stats_free(struct at_detail_stats *s, size_t n);

/*
 * Measure per-call costs on a function of adaptrace itself: plain, with
 * the coarse programs, with detail unsampled and sampled. Call before
 * attaching to the target.
 */
int at_detail_calibrate(struct at_detail *d, struct bpf_program *coarse_entry,
			struct bpf_program *coarse_return, uint32_t spare_id,
			struct at_detail_costs *out);

struct at_links;
/*
 * Release the session and return links, with also (the coarse return
 * links) at the same time: see at_links_destroy_together(). Before any
 * entry link. d may be NULL (then only also).
 */
void at_detail_detach_returns(struct at_detail *d, struct at_links *also);
/* Release every detail link, return and session links first. */
void at_detail_detach(struct at_detail *d);
/* Recording start for event times, if not known at at_detail_new(). */
void at_detail_set_t0(struct at_detail *d, uint64_t t0);
/* id had detail at some time. */
bool at_detail_ever(const struct at_detail *d, uint32_t id);

/* Disable id and hand its links to the caller, who releases them. */
void at_detail_take_links(struct at_detail *d, uint32_t id, struct at_links *out);
/* Sampled calls skip their return probes while on (see user/duty.h). */
void at_detail_quiesce(struct at_detail *d, bool on);

#endif
