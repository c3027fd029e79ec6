/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The detail phase's control loop inside 'record': each interval, evaluate
 * the relevance expression on the coarse window, pass the result through
 * hysteresis, attach or park detail probes, and every second let the rate
 * controller move the sampling rates; every change goes into the trace
 * file with its reason.
 */
#ifndef AT_DETAILCTL_H
#define AT_DETAILCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "detail.h"
#include "target.h"
#include "tracefile.h"

struct bpf_program;

struct at_dctl_opts {
	const char *select;    /* --select; NULL = the default expression */
	struct at_strv detail; /* --detail GLOB */
	struct at_strv args;   /* --args SPEC */
	double budget_pct;     /* --budget; <= 0 = default */
	uint64_t max_events;   /* --max-events per second; 0 = no cap */
	double fixed_rate;     /* hidden --detail-rate: one fixed rate, no controller */
	size_t ringbuf_bytes;  /* hidden --ringbuf-size (ADAPTRACE_RINGBUF_BYTES) */
	const char *baseline;  /* --baseline: what 'regressed' compares with */
	bool verbose;	       /* -v: selection changes on stderr as they happen */
};

struct at_dctl;

/* True when o asks for no detail phase at all (--select none, no --detail). */
bool at_dctl_off(const struct at_dctl_opts *o);
/*
 * Check the expression and the --args specs before anything is attached.
 * Returns AT_EXIT_OK or AT_EXIT_USAGE with err filled.
 */
int at_dctl_check(const struct at_dctl_opts *o, char *err, size_t errlen);

/*
 * Load the detail programs for the trace's symbols and calibrate costs
 * with the coarse programs on adaptrace itself (spare_id: a coarse map slot
 * no function uses). Returns NULL with err filled.
 */
struct at_dctl *at_dctl_new(const struct at_dctl_opts *o, const struct at_trace *t,
			    const struct at_target *tgt, pid_t pid, uint64_t target_ino,
			    uint32_t target_dev, struct bpf_program *coarse_entry,
			    struct bpf_program *coarse_return, uint32_t spare_id, char *err,
			    size_t errlen);
void at_dctl_free(struct at_dctl *c);
const char *at_dctl_mode(const struct at_dctl *c);
/* The coarse probes' cost per call, measured at start-up (ns; 0 unknown). */
double at_dctl_coarse_hit_ns(const struct at_dctl *c);

/* Recording starts: attach --detail functions, log them. pid: the target's process. */
int at_dctl_start(struct at_dctl *c, uint64_t t0, pid_t target_pid, struct at_writer *w);
/* One interval's window is in: selection, controller, stats. */
int at_dctl_tick(struct at_dctl *c, const struct at_window *win, uint64_t now, struct at_writer *w);
/* Descriptor that polls readable when events wait; at_dctl_drain() then. */
int at_dctl_fd(const struct at_dctl *c);
int at_dctl_drain(struct at_dctl *c, struct at_writer *w);
/*
 * Recording ends (probes detached): last events and stats into w, and
 * into t (dstats) for the closing report. Returns the dropped total.
 */
uint64_t at_dctl_finish(struct at_dctl *c, struct at_writer *w, struct at_trace *t);
/* Detail return/session links and also (coarse return links) together; c may be NULL. */
void at_dctl_detach_returns(struct at_dctl *c, struct at_links *also);
void at_dctl_detach(struct at_dctl *c);

struct at_duty;
/* Let the coarse budget move costly functions to windows through duty. */
void at_dctl_set_duty(struct at_dctl *c, struct at_duty *duty);
/*
 * Functions to move to windows, those of them run a whole number of times
 * per turn of the event loop (at_duty_demote()), every function's probe
 * cost as planned, the share of time to probe them and the windows'
 * period, once per plan.
 */
bool at_dctl_coarse_demand(struct at_dctl *c, const bool **demote, const bool **turnwise,
			   const double **cost, double *frac, double *period_s);
/* Take detail off the demoted functions (not --detail ones); their links go to out. */
void at_dctl_drop_detail(struct at_dctl *c, const bool *demote, uint64_t now, struct at_links *out);
/* at_duty_opts.quiesce_detail: ctx is the at_dctl. */
void at_dctl_quiesce(void *ctx, bool on);

#endif
