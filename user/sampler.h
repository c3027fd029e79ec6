/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The adaptive sampling controller (after ADP, Mertz 2021 ch. 5, with the
 * errata of design.md), as pure logic: the recorder feeds it what it
 * measured and applies what it decides (BPF rate map, attach, detach).
 *
 * States of a function the caller added (it is in the relevance set):
 *   DETAIL  detail probes attached, sampled at rate() in [min_rate, max_rate]
 *   PARKED  its profile was stationary over two cycles: detail detached,
 *           coarse counters only; it returns to DETAIL when its coarse
 *           histogram drifts. Forced functions (--detail) are never parked.
 *
 * Every second (at_sampler_tick):
 * 1. Cost estimate. The recorder calibrated three per-hit costs at start-up
 *    (ns of CPU time in the target): coarse_hit_ns (coarse probes, every
 *    hit of every traced function), attach_hit_ns (every hit of a function
 *    with detail attached, sampled or not: the Bernoulli draw) and
 *    sample_ns (what a sampled hit adds: return side, arguments, ring
 *    buffer, user-space drain). The detail cost of a tick is
 *      D = sum_f hits_f * attach_hit_ns + sum_f sampled_f * sample_ns
 *    and the coarse cost C = all_hits * coarse_hit_ns. The budget is the
 *    slowdown detail adds to the coarse-only run: D / (cpu - D) <= budget,
 *    where cpu is the target's CPU time over the tick (/proc/PID/stat,
 *    probes run in the target's context, so cpu includes D); without it
 *    (cpu == 0) one CPU's wall time is assumed. With whole_budget (an
 *    explicit --budget), the budget covers the coarse probes too: detail
 *    gets what C leaves of it. Otherwise C is reported, not budgeted.
 * 2. Stratified allocation. The affordable sampled hits are spread across
 *    the DETAIL functions by water-filling: every function gets the same
 *    number of events per second L, except that a function never goes
 *    below min_rate or above max_rate of its own hits. L is the largest
 *    level whose cost fits the budget and whose total fits --max-events.
 *    So a rare function keeps all its calls (its floor is its own rate, up
 *    to L) while hot functions share the rest: equal allocation across
 *    strata, which maximises the smallest per-function sample. The level
 *    turns into a cap per function: cap_f = clamp(L / hits_f, min, max).
 * 3. ADP step (Algorithm 2, intent). currentPerf = the mean latency of each
 *    DETAIL function this tick, normalBehavior = its mean in the detail-off
 *    reference (the window in which it was selected, or a later reference
 *    window). equal = Welch's unpaired t-test across functions does not
 *    reject at alpha (a single function: Welch on its summary statistics);
 *    diff = sum(current) / sum(reference) - 1 (> 0: slower).
 *      equal, or diff <= budget -> rate *= 1 + max(|diff|, up_step), up to cap_f
 *      significantly slower by more than the budget (the slowdown the user
 *      accepted for detail) -> rate *= 1 - min(diff, 0.5), down to min_rate,
 *                               and after ref_after such ticks in a row the
 *                               tick result asks for a reference window
 *      rate > cap_f          -> rate = cap_f at once (budget, max-events)
 *    A rate change is applied (and reported) when it moves by at least
 *    AT_SAMPLER_MIN_CHANGE relative, reaches min_rate / max_rate, or is a
 *    cut while the tick's estimate exceeds the budget (the budget is a
 *    promise, the 5 % only keeps the log short); at_sampler_rate() always
 *    returns the applied rate. A function starts at AT_SAMPLER_START_EVENTS
 *    events per second (or the last level) before the first tick sizes it.
 * 4. Cycles (Algorithm 3). A cycle counts the function's hits (population)
 *    and its events (sample) since it started; it ends once it lasted
 *    min_cycle_s and sample >= Cochran's size with the decaying confidence
 *    exp(-t / cycle_max_s), margin e and p = 0.5, finite-corrected by the
 *    population, and the sample is representative: its mean latency
 *    agrees with the population's (coarse) mean, by a one-sample t-test at
 *    alpha or within min_effect relative (Algorithm 3's second criterion;
 *    its third, the balance of request types, holds by construction here:
 *    every function has its own cycle). The sampler keeps a reservoir (AT_SAMPLER_RESERVOIR events,
 *    uniform) of each cycle. At a cycle's end it compares this cycle with
 *    the previous one (at_stationary); a non-forced function that is
 *    stationary is PARKED (AT_SEL_LEAVE with the reason).
 * 5. Drift (at_sampler_window, once per coarse interval). A PARKED
 *    function's first two full windows after parking become its reference
 *    (the same measurement conditions: detail off); later windows are
 *    tested against it with at_drift at drift_alpha; after two drifted
 *    windows in a row it returns to DETAIL (AT_SEL_ENTER) with a fresh
 *    cycle history.
 *
 * How the recorder drives it (with relevance.h):
 *   start:      at_sampler_defaults(), set budget_pct / max_events / the
 *               calibrated costs, at_sampler_new(); tr = at_rel_track_new(2, 3);
 *               at_rel_track_force() each --detail match.
 *   each coarse interval (window w):
 *               n = at_rel_rows_from_window(&w, &rows);
 *               at_rel_eval(expr, rows, n, res, NULL);
 *               at_rel_track_update(tr, rows, res, n, now, &ch, &nch);
 *               for each change: ENTER -> rate = at_sampler_add(id, forced,
 *               &entry counts, interval s), attach if at_sampler_attached();
 *               LEAVE -> detach if at_sampler_attached(), at_sampler_remove();
 *               then at_sampler_window(&w, now, &ch, &nch): ENTER -> attach.
 *   each event: at_sampler_event(ev); ring-buffer failures: at_sampler_dropped().
 *   each second: at_sampler_tick() with the coarse deltas of the attached
 *               functions and the target's CPU time; apply every AT_SEL_RATE
 *               change to the BPF rate map, detach on AT_SEL_LEAVE; if
 *               want_reference, run the next second with all rates 0 and
 *               pass it with reference = true, then restore at_sampler_rate().
 *   all changes go to the trace file's selection log as they are.
 * ADP's Algorithm 1 (sampling decision with a representativeness check) is
 * covered by the per-function rates: each function is its own stratum with
 * its own Bernoulli draw, and the allocation above balances the strata.
 *
 * Changes are appended as struct at_sel_change (model.h) with a heap reason
 * the caller owns: AT_SEL_RATE for rate changes, AT_SEL_LEAVE / AT_SEL_ENTER
 * for parking and drift. Relevance enter/leave are the caller's (hysteresis
 * in relevance.h): it calls at_sampler_add / at_sampler_remove for those.
 */
#ifndef AT_SAMPLER_H
#define AT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define AT_SAMPLER_MIN_CHANGE	0.05 /* relative rate change worth applying */
#define AT_SAMPLER_RESERVOIR	512  /* events kept per function and cycle (~100 KB) */
#define AT_SAMPLER_START_EVENTS 1000 /* events/s a new function starts with */

struct at_sampler_cfg {
	double min_rate;      /* default 0.001 (> 0: a rate of 0 never recovers) */
	double max_rate;      /* default 1.0 */
	double budget_pct;    /* --budget, default 5 */
	bool whole_budget;    /* the budget bounds coarse + detail (explicit --budget) */
	uint64_t max_events;  /* --max-events per second, 0 = no cap */
	double coarse_hit_ns; /* calibrated costs, see above; defaults 350, 30, 600 */
	double attach_hit_ns;
	double sample_ns;
	double up_step;	    /* smallest relative increase, default 1 (doubling) */
	double alpha;	    /* tests, default 0.05 */
	double margin;	    /* Cochran's e, default 0.05 */
	double cycle_max_s; /* Algorithm 3's maxLength, default 60 */
	double min_cycle_s; /* shortest cycle, default 2 */
	double min_effect;  /* at_stationary / at_drift effect floor, default 0.10 */
	uint32_t ref_after; /* slow ticks in a row before asking for a reference, default 3 */
	uint64_t seed;	    /* reservoir PRNG, default 1 */
	double drift_alpha; /* drift test level, default 0.01: tested every interval, so a
			       stricter level keeps parked functions from coming back by chance */
};

/* Fill cfg with the defaults above. */
void at_sampler_defaults(struct at_sampler_cfg *cfg);

struct at_sampler;

struct at_sampler *at_sampler_new(const struct at_sampler_cfg *cfg);
void at_sampler_free(struct at_sampler *s);

/*
 * A function enters the detail set (relevance or --detail). ref is its
 * coarse figures over a detail-off span of ref_s seconds (the interval it
 * was selected in; NULL if none): its latency is the reference and its
 * call rate sizes the first rate. Returns the initial rate (also reported
 * by at_sampler_rate); adding an id twice only updates forced.
 */
double at_sampler_add(struct at_sampler *s, uint32_t id, bool forced, const struct at_counts *ref,
		      double ref_s);
/* It leaves the detail set (relevance hysteresis): forget it. */
void at_sampler_remove(struct at_sampler *s, uint32_t id);
/* A per-sample cost for this function instead of cfg.sample_ns (e.g. string args). */
void at_sampler_set_cost(struct at_sampler *s, uint32_t id, double sample_ns);

bool at_sampler_known(const struct at_sampler *s, uint32_t id);
/* True if detail probes should be attached (known and not parked). */
bool at_sampler_attached(const struct at_sampler *s, uint32_t id);
/* Applied rate (0 if unknown or parked). */
double at_sampler_rate(const struct at_sampler *s, uint32_t id);

/*
 * A rate as the BPF side can draw it without floating point: a call is
 * sampled when (u64)bpf_get_prandom_u32() < threshold. 0 -> 0 (never),
 * 1 -> 2^32 (always), else round(rate * 2^32).
 */
uint64_t at_rate_threshold(double rate);

/* One captured call (copied; strings too). Counts toward its cycle. */
void at_sampler_event(struct at_sampler *s, const struct at_event *ev);
/* Failed ring-buffer reservations: sampled hits that cost but left no event. */
void at_sampler_dropped(struct at_sampler *s, uint32_t id, uint64_t n);

/* One DETAIL function's figures over the tick (coarse counter deltas). */
struct at_sampler_in {
	uint32_t id;
	uint64_t hits;	  /* calls */
	uint64_t sampled; /* events + drops over the tick; 0: use what was fed */
	uint64_t returns; /* timed calls */
	uint64_t sum_ns;  /* sum of their durations */
	double sumsq;	  /* sum of squared durations, ns^2 */
};

struct at_sampler_tick {
	uint64_t now_ns;   /* relative to the recording's start (for ts_ns) */
	double dt_s;	   /* tick length, seconds */
	double cpu_ns;	   /* target CPU time over the tick, 0 if unknown */
	uint64_t all_hits; /* hits of every traced function (coarse cost) */
	bool reference;	   /* rates were 0 during this tick: a reference window */
	size_t n;
	const struct at_sampler_in *in; /* DETAIL functions; others are ignored */
};

struct at_sampler_out {
	double detail_pct;   /* estimated slowdown detail added this tick, % */
	double coarse_pct;   /* coarse probes' share, %, for the record */
	double level;	     /* water level L, events per second per function */
	bool want_reference; /* the caller should run one reference tick: all rates 0 */
	size_t cycles_ended; /* cycles that ended this tick */
};

/*
 * One controller step. Appends changes (see above) to *changes, returns
 * their number; out (may be NULL) gets the tick's figures.
 */
size_t at_sampler_tick(struct at_sampler *s, const struct at_sampler_tick *in,
		       struct at_sampler_out *out, struct at_sel_change **changes,
		       size_t *nchanges);

/*
 * One coarse interval's window (all entries): drift checks for PARKED
 * functions, references for newly parked ones. Appends AT_SEL_ENTER
 * changes; returns their number.
 */
size_t at_sampler_window(struct at_sampler *s, const struct at_window *w, uint64_t now_ns,
			 struct at_sel_change **changes, size_t *nchanges);
/* Parked with its drift reference taken: later windows are compared with it. */
bool at_sampler_watching(const struct at_sampler *s, uint32_t id);

#endif
