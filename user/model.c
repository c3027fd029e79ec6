// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "util.h"

void at_counts_merge(struct at_counts *dst, const struct at_counts *src)
{
	if (src->returns && (!dst->returns || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	if (src->max_conc > dst->max_conc)
		dst->max_conc = src->max_conc;
	dst->calls += src->calls;
	dst->returns += src->returns;
	dst->sum_ns += src->sum_ns;
	dst->total_ns += src->total_ns;
	dst->self_ns += src->self_ns;
	dst->errors += src->errors;
	dst->sumsq += src->sumsq;
}

const struct at_duty_on *at_window_duty(const struct at_window *w, uint32_t id, uint32_t *k)
{
	while (*k < w->nduty && w->duty[*k].id < id)
		(*k)++;
	return *k < w->nduty && w->duty[*k].id == id ? &w->duty[*k] : NULL;
}

uint32_t at_window_duty_index(const struct at_window *w, uint32_t id)
{
	uint32_t lo = 0, hi = w->nduty;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->duty[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->nduty && w->duty[lo].id == id ? lo : w->nduty;
}

bool at_window_rp_lost(const struct at_window *w)
{
	uint64_t by_time = 0, kept = 0;

	if (!w->has_rpath || !w->has_callers || (!w->rp_turns && !w->rp_writes) || w->nrp_callers)
		return false;
	for (uint32_t i = 0; i < w->ncls; i++)
		if (w->cls[i].cls == AT_BY_TIME)
			by_time += w->cls[i].calls;
	for (uint32_t i = 0; i < w->ncallers; i++)
		kept += w->callers[i].calls;
	return 4 * kept < 3 * by_time;
}

/*
 * In 2 of 79 redis recordings every normal window reached its run-on cap
 * before its turn ended: writeToClient and listDelNode, once a reply at a
 * turn's end, were never seen and came out 98.6 % low, with intervals
 * that did not hold their counts.
 */
bool at_windows_turn_ends_unseen(const struct at_window *w, size_t n)
{
	uint64_t ends = 0, turns = 0;
	bool rpath = false;

	for (size_t i = 0; i < n; i++) {
		if (!w[i].nduty || !w[i].has_rpath)
			continue;
		rpath = true;
		ends += at_window_rp_lost(&w[i]) ? 0 : w[i].rp_turns;
		turns += w[i].has_turns ? w[i].turn_all : 0;
	}
	return rpath && !ends && turns > 0;
}

int64_t at_window_turnwin(const struct at_window *w, uint32_t k)
{
	uint32_t n = w->has_turnwin ? w->nturnwin : 0, lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->turnwin[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && w->turnwin[lo] == k ? (int64_t)lo : -1;
}

bool at_window_turnwise(const struct at_window *w, uint32_t k)
{
	return at_window_turnwin(w, k) >= 0;
}

void at_profile_add(struct at_func_profile *p, const struct at_window_entry *e)
{
	at_counts_merge(&p->c, &e->c);
	for (uint32_t i = 0; i < e->nhist; i++)
		if (e->hist[i].bucket < AT_HIST_BUCKETS)
			p->hist[e->hist[i].bucket] += e->hist[i].count;
}

/* Add one interval's c window calls against all of a yardstick, on of it in the windows. */
static void strata_add(struct at_strata *s, double c, double all, double on)
{
	on = fmin(on, all);
	if (on >= AT_DUTY_MIN_STRATUM) {
		double m = all / on;

		s->n++;
		s->est += c * m;
		s->all += all;
		s->on += on;
		s->calls += c;
		s->cc += c * c / on;
		s->rr += all * m;
		s->poisson += c * m * m;
	} else {
		s->rest_all += all;
		s->rest_on += on;
		s->rest_calls += c;
	}
}

/* A stratum's sums over every interval: those with a ratio of their own and the rest. */
static double strata_calls(const struct at_strata *s)
{
	return s->calls + s->rest_calls;
}

static double strata_on(const struct at_strata *s)
{
	return s->on + s->rest_on;
}

static double strata_all(const struct at_strata *s)
{
	return s->all + s->rest_all;
}

/* The spread of calls per unit of the yardstick between 2 or more strata. */
static double strata_spread(const struct at_strata *s)
{
	return fmax(s->cc - s->calls * s->calls / s->on, 0) / (s->n - 1);
}

/* Calls per unit of a yardstick that never varied: Poisson on the calls seen. */
static double poisson_floor(double est, double var, double seen)
{
	return var > 0 ? var : est * est / fmax(seen, 1);
}

static double class_estimate(const struct at_strata *cls, double *var, double *unseen);
static double f99(uint32_t df);
static double class_part(const struct at_strata *cls, double *var, double *unseen, int only);

/* The reads of every class over the run: those in the windows, and all. */
static void class_reads(const struct at_strata *cls, double *on, double *all)
{
	*on = *all = 0;
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		*on += strata_on(&cls[k]);
		*all += strata_all(&cls[k]);
	}
}

/* burst_calls(): in this many intervals of so many at most, this many calls an interval. */
#define BURST_MAX_INTERVALS 2
#define BURST_MIN_INTERVALS 6
#define BURST_MIN_CALLS	    10
/* at_profile_bursty(): a 95 % interval's half width over this share of the estimate. */
#define BURSTY_HALF_WIDTH 0.5

/* A function's window calls in every read class. */
static double all_cls_calls(const struct at_duty_est *d)
{
	double c = 0;

	for (int k = 0; k < AT_READ_CLASSES; k++)
		c += strata_calls(&d->cls[k]);
	return c;
}

/* ... and those after a read of end of file: at hang-ups. */
static double hangup_calls(const struct at_duty_est *d)
{
	return strata_calls(&d->cls[AT_CLASS_EOF]);
}

/*
 * How much more of the target's reads than of its writes the windows saw
 * (1: as much). A window's calls by time follow both: scaled by the writes
 * alone, the calls of a function that runs per request come out this many
 * times too high, and those of one that runs per reply right.
 */
static double reads_over_writes(const struct at_duty_est *d)
{
	double on, all, won = strata_on(&d->wr), wall = strata_all(&d->wr);

	class_reads(d->cls, &on, &all);
	return on > 0 && all > 0 && won > 0 && wall > 0 ? (on / all) / (won / wall) : 1;
}

/*
 * The estimate against socket writes, per class of the writing thread's
 * latest read when every interval recorded them, and its variance from
 * the spread of calls per write between the strata; false with fewer than
 * 2 strata, or fewer than 3 calls seen while windows were open (no spread
 * to go by: a function the windows caught twice, both times in the same
 * ratio, would get a zero-width interval and win over the reads), or calls
 * in fewer than 3 intervals: redis's connection setup (createClient,
 * connPeerToString: 50 calls at the start) went by the writes at 300 times
 * its count, and so did zmalloc's share under it. The
 * variance holds the bias of reads_over_writes() too: redis's 2 ms windows
 * saw 3.4-9.4 times more of its reads than of its writes, which put zfree
 * (called per request and per reply) at 9.4 times its count, by the writes.
 */
static bool writes_estimate(const struct at_duty_est *d, double *est, double *var)
{
	const struct at_strata *w = &d->wr;
	double q, s2;

	if (w->n < 2 || d->nwr != d->ncls_win || !w->on || w->calls < AT_DUTY_MIN_STRATUM ||
	    d->nwr_called < 3)
		return false;
	q = w->calls / w->on;
	s2 = strata_spread(w);
	*est = w->est + fmax(w->rest_calls, q * w->rest_all);
	*var = poisson_floor(*est, s2 * w->rr + s2 * w->rest_all * w->rest_all / w->on, w->calls);
	if (d->nwr_cls == d->nwr) {
		/*
		 * Class by class, as the reads, so that the windows' mix of
		 * kinds stops mattering. Its spread stays that of all the
		 * strata: a window that closes before its turn's writes
		 * makes one class's ratio look steadier than it is.
		 */
		double cvar, rel = *est > 0 ? *var / (*est * *est) : 0;

		*est = class_estimate(d->wr_cls, &cvar, NULL);
		*var = fmax(poisson_floor(*est, cvar, w->calls), rel * *est * *est);
	}
	*var += pow(*est * fabs(1 - 1 / reads_over_writes(d)) / 1.96, 2);
	return true;
}

/* The residual sum of squares of t fitted through the origin to a yardstick x. */
static double fit_sse(double tt, double tx, double xx)
{
	return xx > 0 ? fmax(tt - tx * tx / xx, 0) : tt;
}

/*
 * The residual sums of squares of the calls fitted to the reads and to the
 * writes, class by class, and their mean squares per class, summed
 * (*ms_r, *ms_w: on the scale of a whole interval's, whatever the number
 * of classes the calls spread over).
 */
static void classed_sse(const struct at_duty_est *d, double *sse_r, double *sse_w, double *ms_r,
			double *ms_w)
{
	*sse_r = *sse_w = *ms_r = *ms_w = 0;
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		const struct at_fit *f = &d->fit[k];
		double r = fit_sse(f->tt, f->tr, f->rr), w = fit_sse(f->tt, f->tw, f->ww);

		*sse_r += r;
		*sse_w += w;
		if (f->n > 1) {
			*ms_r += r / (f->n - 1);
			*ms_w += w / (f->n - 1);
		}
	}
}

/*
 * Whether a function's calls while the windows were open follow the
 * window writes far more closely than the window reads: fitted through the
 * origin, one slope per read class, the residual sum of squares left by
 * the writes, summed over the classes, is less than a third of the reads'.
 * A reply path passes (redis's writeToClient, one call per write); a
 * request handler does not, nor does zfree, called for both (with no
 * margin, zfree went by the writes at 10 times its count once). The
 * writes' interval holds the windows' bias to reads (reads_over_writes()),
 * so it is too wide to win by width. Needs 3 intervals, all with writes by
 * class: what writes_estimate() then scales by.
 */
static bool follows_writes(const struct at_duty_est *d)
{
	double sse_r, sse_w, ms_r, ms_w;

	if (d->nwr_cls < 3 || d->nwr_cls != d->nwr)
		return false;
	classed_sse(d, &sse_r, &sse_w, &ms_r, &ms_w);
	return 3 * sse_w < sse_r;
}

/*
 * Whether a function's window calls under caller c came in a burst: in 2
 * intervals at most, fewer than half of those with its window calls.
 * Clients connecting: redis's listCreate, dictCreate, listAddNodeTail and
 * raxGenericInsert run under createClient, and a window that caught
 * 50-100 clients connecting marked them by the turns or the writes.
 * zmalloc's calls under them, scaled by the turns' ends or the writes,
 * came out 1.2-3.4 times its count in 4 of 208 recordings. Those calls go
 * with the rest, by the reads' classes.
 */
static bool burst_caller(const struct at_duty_est *d, const struct at_caller_total *c)
{
	return c->nwin <= BURST_MAX_INTERVALS && 2 * c->nwin < d->tfit.nt;
}

/*
 * A function's window calls under the callers mark[] sets (bursts too, or
 * not: burst_caller()), and *calls, all of them.
 */
static double marked_calls(const struct at_duty_est *d, const bool *mark, size_t n, bool bursts,
			   double *calls)
{
	double marked = 0;

	*calls = 0;
	/* A file cut between an interval's chunks: not every interval has its callers. */
	if (d->ncaller_win != d->ncls_win)
		return 0;
	for (uint32_t i = 0; i < d->ncallers; i++) {
		const struct at_caller_total *c = &d->callers[i];

		*calls += c->calls;
		if (mark && c->caller < n && mark[c->caller] && (bursts || !burst_caller(d, c)))
			marked += c->calls;
	}
	return marked;
}

/*
 * The share of a function's window calls made under the callers mark[id]
 * sets (n ids; 0 with fewer than AT_DUTY_MIN_STRATUM such calls; bursts
 * left out, burst_caller()), and
 * *calls, all its calls per caller. The marks are the callers that go by
 * the writes, or by the turns. Split by caller, each part
 * follows one yardstick: redis's clientHasPendingReplies, 6 per request,
 * runs twice per request under prepareClientToWrite and four times per
 * reply under writeToClient and handleClientsWithPendingWrites. Its windows
 * saw 3.4-9.4 times more of the reads than of the writes, so all of it
 * scaled by the reads came out 46-62 % low. The caller's own choice
 * decides, class by class as it is made: a fit of one caller's calls
 * against the unclassed reads and writes sent setCommand (SETs only, under
 * call) by the writes at 3 times its count.
 */
static double caller_share(const struct at_duty_est *d, const bool *mark, size_t n, double *calls)
{
	double marked = marked_calls(d, mark, n, false, calls);

	return marked >= AT_DUTY_MIN_STRATUM ? marked / *calls : 0;
}

/*
 * The calls made under the callers of the turn windows that go by the
 * turns or the wakeups (turns[id], n ids), over the intervals the windows
 * saw: their window calls per turn's end seen, pooled, times all the
 * turns' ends. *share: their part of the window calls (0 when not every
 * interval recorded its turns and callers, or too few turns or calls were
 * seen). Such a callee runs once a turn or so under them (redis:
 * zmalloc_used_memory, once per command under call and once a turn under
 * beforeSleep), and the windows other than the turn windows, which these
 * callees are in, see a few turns a second against hundreds of reads: the
 * reads scaled the calls under beforeSleep too, and it came out 35 % low.
 * By the turns' ends even under a caller that goes by the wakeups: those
 * windows slow the loop down, so it wakes up 3-4 times a turn there. Pooled,
 * since an interval's windows see 0-4 turns.
 */
static double turn_callers_estimate(const struct at_duty_est *d, const bool *turns, size_t n,
				    double *share, double *var)
{
	double calls, under, on = strata_on(&d->tu), all = strata_all(&d->tu);

	*share = caller_share(d, turns, n, &calls);
	*var = 0;
	if (!*share || d->nturn != d->ncaller_win || on < AT_DUTY_MIN_STRATUM) {
		*share = 0;
		return 0;
	}
	under = *share * calls;
	/* Poisson on the calls and on the turns seen. */
	*var = pow(under * all / on, 2) * (1 / under + 1 / on);
	return under * all / on;
}

/*
 * What the upper end of a function's interval adds for its window calls
 * under the callers mark[] sets (n ids: the turn callers, or those by the
 * writes) when the windows' read path saw a turn end in fewer than 2
 * intervals: that part then went with the reads, which see a turn start
 * and not the work at its end. In a redis recording whose read path saw
 * one end, listRewind, evictClients and zmalloc_used_memory (once a turn
 * under beforeSleep and handleClientsWithPendingWrites, besides once a
 * request) came out 36-54 % low with intervals of +-5.6-7.9 %. It allows
 * those calls twice over per unit of the yardstick s (the turns' ends, or
 * the writes) that the windows saw, one at least, at every unit of the run.
 */
static double unmeasured_calls(const struct at_duty_est *d, const bool *mark, size_t n,
			       const struct at_strata *s)
{
	double all;

	if (!mark || !d->nrp || d->nrp != d->ncls_win || d->nrp_turned >= 2)
		return 0;
	return 2 * marked_calls(d, mark, n, true, &all) / fmax(strata_on(s), 1) * strata_all(s);
}

/*
 * Calls a turn's end in the windows past which the few ends seen fit a
 * function by chance (redis's windows see 4-9 ends a recording).
 */
#define MANY_AN_END 8

/*
 * Calls a turn's end (under one turn caller, or in all) past which they are
 * work per reply rather than once a turn: the turn windows' functions run
 * 1-3 times a turn.
 */
#define MANY_UNDER_A_TURN 4

/* The largest share under turn callers at which many calls an end still go by the reads. */
#define NOT_UNDER_TURNS 0.1

/* The least share under callers by the reads that keeps a fit to the writes from scaling it all. */
#define READS_SPLIT_SHARE 0.1

/* The intervals with window calls a function needs to go by the reads itself. */
#define BY_READS_MIN_INTERVALS 3

/* Whether the windows saw a function many times a turn's end. */
static bool many_an_end(const struct at_duty_est *d)
{
	return strata_calls(&d->tu) > MANY_AN_END * strata_on(&d->tu);
}

/*
 * Whether a turn caller (turns[id], n ids) made AT_DUTY_MIN_STRATUM or more
 * of a function's window calls, and at most MANY_UNDER_A_TURN a turn's end
 * the windows saw: once-a-turn work there, which the writes do not scale.
 */
static bool few_an_end_under_turns(const struct at_duty_est *d, const bool *turns, size_t n)
{
	double ends = strata_on(&d->tu);

	if (!turns || d->ncaller_win != d->ncls_win)
		return false;
	for (uint32_t i = 0; i < d->ncallers; i++) {
		const struct at_caller_total *c = &d->callers[i];

		if (c->caller < n && turns[c->caller] && !burst_caller(d, c) &&
		    c->calls >= AT_DUTY_MIN_STRATUM && c->calls <= MANY_UNDER_A_TURN * ends)
			return true;
	}
	return false;
}

/* A function's calls on the windows' read path, under all its callers. */
static double rp_calls(const struct at_duty_est *d)
{
	double all = 0;

	for (uint32_t i = 0; i < d->nrp_callers; i++)
		all += d->rp_callers[i].calls;
	return all;
}

/* How rp_callers_estimate() splits a function's read-path calls. */
struct rp_split {
	double wshare, wpart, wvar;    /* under the callers that go by the writes */
	double whang;		       /* ... in bursts, by its callers' shares (bursts) */
	double tshare, tpart, tvar;    /* under the turn callers */
	double tw_share;	       /* the part of tshare that went by the writes */
	double taken[AT_READ_CLASSES]; /* the calls of both per read class */
};

/* Add caller c's window calls per read class into v. */
static void add_classes(double *v, const struct at_caller_total *c)
{
	for (int k = 0; k < AT_READ_CLASSES; k++)
		v[k] += c->cls[k];
}

/* A caller's calls go by the writes or the turns: its classes' too. */
static void rp_take(struct rp_split *r, const struct at_caller_total *c)
{
	add_classes(r->taken, c);
}

/*
 * A turn caller's calls of a function fitted to its read path's writes and
 * turns' ends together, interval by interval (*aw a write, *bt a turn):
 * true when each part, scaled, holds a twentieth of the calls or more and the pair
 * leaves a third of the better single fit's residue (sse1) or less. Under redis's
 * handleClientsWithPendingWrites listNext runs once a reply and once more
 * a turn: by the writes alone it came out 11-36 % low in 14 of 14
 * recordings. Not when the writes and the ends keep one ratio: then
 * either alone fits. When that fails, the intervals that saw the
 * function under the caller alone: a window that cut the caller's turn
 * leaves its writes without the calls, and one such interval (an end, 7
 * writes, no call) made listNext's turns' part negative; by the writes it
 * came out 20 % low. Calls in an interval that saw neither yardstick
 * (a turn's end outside the read path) count in no fit's residue: one
 * such call hid the pair that fitted listNext's other 131 exactly.
 */
/* The residue of caller total c's calls less a a write and b an end, over sums ww, tt and tw. */
static double pair_sse(const struct at_caller_total *c, double ww, double tt, double tw, double a,
		       double b)
{
	return c->cc - 2 * (a * c->cw + b * c->ct) + a * a * ww + b * b * tt + 2 * a * b * tw;
}

static bool pair_fit(const struct at_duty_est *d, const struct at_caller_total *c, double sse1,
		     double ww, double tt, double tw, double *aw, double *bt)
{
	double det = ww * tt - tw * tw, sse, pw, pt;

	*aw = *bt = 0;
	if (!(det > 0.01 * ww * tt))
		return false;
	*aw = (c->cw * tt - c->ct * tw) / det;
	*bt = (c->ct * ww - c->cw * tw) / det;
	sse = pair_sse(c, ww, tt, tw, *aw, *bt);
	pw = *aw * d->rp_wr_all;
	pt = *bt * d->rp_turn_all;
	/* Calls where neither yardstick saw anything leave the same residue in every fit. */
	return pw >= 0.05 * (pw + pt) && pt >= 0.05 * (pw + pt) &&
	       3 * fmax(sse - c->cc_bare, 0) <= sse1 - c->cc_bare;
}

/* Calls a function's marked callers must make before the move for part_before_move(). */
#define PRE_MOVE_MIN_CALLS 20
/*
 * The most its excess before the move may be, in parts: a timer's calls
 * add to it. With 200 clients redis's loop turned about 25 times before
 * the move, and serverCron's zmalloc_used_memory made the excess 2.4 parts.
 */
#define PRE_MOVE_MAX_PART 3

/* Whole numbers of calls a write and an end that whole_fit() tries. */
#define WHOLE_FIT_MAX 3

/*
 * Whether a calls a write and b an end give the calls to within slack, a
 * sum of squared misses (less the bare calls' residue, as pair_fit()).
 */
static bool whole_fits(const struct at_duty_est *d, const struct at_caller_total *c, int a, int b,
		       double slack)
{
	return pair_sse(c, d->rp_ww, d->rp_tt, d->rp_tw, a, b) - c->cc_bare < slack + 1e-6;
}

/*
 * Calls a write and calls an end in small whole numbers (*aw, *bt, the
 * least sum first) that give every interval's calls exactly, unless one
 * yardstick alone does as a whole number no greater. A loop over a turn's
 * replies calls its iterator once a reply and once more to end: under
 * redis's handleClientsWithPendingWrites listNext ran exactly a write
 * plus an end in every interval of 53 of 54 recordings (a window cut a
 * turn in the other). When the read path sees 1-2 turned intervals, or 3
 * with as many writes an end in each, pair_fit() cannot part the two, and
 * by the writes alone listNext came out 11-19 % low in 20 of 79
 * recordings (1.05 calls a write in one, where each interval saw 19
 * writes and an end). A function called once a write misses by an end in
 * each turned interval; one called once an end, by the writes.
 *
 * Failing that, the same within one call in all (WHOLE_FIT_SLACK), where
 * neither yardstick alone fits as closely: a window that cuts a turn
 * keeps a call whose turn it does not see end. listNext made 165 calls
 * in 160 writes and 4 ends there and went by the writes, 12.6 % low.
 */
#define WHOLE_FIT_SLACK 1.0

static bool whole_fit(const struct at_duty_est *d, const struct at_caller_total *c, double *aw,
		      double *bt)
{
	if (d->nrp_turned < 1)
		return false;
	for (double slack = 0; slack <= WHOLE_FIT_SLACK; slack += WHOLE_FIT_SLACK)
		for (int sum = 1; sum <= 2 * WHOLE_FIT_MAX; sum++) {
			if (whole_fits(d, c, sum, 0, slack) || whole_fits(d, c, 0, sum, slack))
				return false;
			for (int a = 1; a <= WHOLE_FIT_MAX && a < sum; a++)
				if (sum - a <= WHOLE_FIT_MAX &&
				    whole_fits(d, c, a, sum - a, slack)) {
					*aw = a;
					*bt = sum - a;
					return true;
				}
		}
	return false;
}

static bool both_fit(const struct at_duty_est *d, const struct at_caller_total *c, double sse_t,
		     double sse_w, double *aw, double *bt)
{
	double sse1 = fmin(sse_t, sse_w);

	if (d->nrp_turned >= 3 &&
	    (pair_fit(d, c, sse1, d->rp_ww, d->rp_tt, d->rp_tw, aw, bt) ||
	     (c->nwin >= 3 && pair_fit(d, c, sse1, c->ww_seen, c->tt_seen, c->tw_seen, aw, bt))))
		return true;
	*aw = *bt = 0;
	return whole_fit(d, c, aw, bt);
}

/*
 * The part of a function's calls under turn caller c->caller that goes by
 * the turns' ends (*part, *seen of its calls for *den of the yardstick),
 * when the windows probed the caller too (turn_end[id] > 0: its calls an
 * end in its turn windows): its calls per call of the caller on the read
 * path, times those, times all the ends (all_ends). The read path sees a
 * few ends a recording, and a turn that reads but does not write, or a
 * wakeup without a read in a turn's tail (a connection accepted), runs
 * the caller once more without one: redis's evictClients, once a
 * beforeSleep, saw 6 calls in 4 ends there and came out 10-20 % high in 3
 * of 8 recordings, where beforeSleep's turn windows saw 1.03 calls an end.
 * The intervals where the caller ran once an end, when there are enough:
 * a window cut between the caller's entry and its turn's end keeps the
 * caller's call and not those it makes later. Under 3 calls of the
 * caller, only a function called at each of them (rp_callers_estimate()
 * then takes it however few its calls): a recording whose read path saw
 * 2 ends dropped evictClients' part under beforeSleep, 1 of 1 there, and
 * came out 36 % low; propagatePendingCommands, run under
 * activeExpireCycle by time, 2 of 4, would go 30 % high (now_and_then()
 * sends it by time).
 */
static bool turn_caller_part(const struct at_caller_total *c, const double *turn_end, size_t n,
			     double all_ends, double *part, double *seen, double *den)
{
	bool even = c->own_even >= AT_DUTY_MIN_STRATUM && c->matched_even > 0;

	if (!turn_end || c->caller >= n || !(turn_end[c->caller] > 0) || !(c->own >= 1) ||
	    !(c->matched > 0) || (c->own < AT_DUTY_MIN_STRATUM && c->matched < c->own))
		return false;
	*seen = even ? c->matched_even : c->matched;
	*den = even ? c->own_even : c->own;
	*part = *seen / *den * turn_end[c->caller] * all_ends;
	return true;
}

/*
 * Whether the function ran 1-3 times a call of turn caller c on the read
 * path, exactly, over 3 of the caller's calls or more: once-a-turn work,
 * which turn_caller_part() scales by the caller. redis's moduleCount ran
 * 8 times under 4 beforeSleeps there, with 4 turns' ends and 73 writes;
 * the tie in rp_callers_estimate() sent it by the writes, 60 % low.
 */
static bool own_whole(const struct at_caller_total *c, const double *turn_end, size_t n,
		      double min_own)
{
	double k = c->own > 0 ? c->matched / c->own : 0;

	return turn_end && c->caller < n && turn_end[c->caller] > 0 && c->own >= min_own &&
	       fabs(k - round(k)) < 1e-6 && k >= 1 && k <= WHOLE_FIT_MAX;
}

/*
 * Whether turn caller c's calls of the function on the read path came 1-3
 * times each of its turns' ends, exactly, in every interval that saw an
 * end: once-a-turn work, however few ends the read path saw. Under a
 * slowed loop a turn outlasts a window and its lingering, so a
 * recording's read path may see one end: redis's listRewind (once a
 * request, and once a turn under each of handleClientsWithPendingWrites
 * and freeClientsInAsyncFreeQueue) then had a call under each, 2 in all,
 * too few for a share, and came out 53-59 % low by the reads in 5 of 244
 * stored recordings; zmalloc_used_memory and evictClients (once a turn
 * under beforeSleep) 36-45 %. turn_part_before_move() must agree.
 */
static bool once_to_thrice_an_end(const struct at_duty_est *d, const struct at_caller_total *c)
{
	double k = d->rp_turns > 0 ? c->calls / d->rp_turns : 0;

	return c->nwin == d->nrp_turned && d->nrp_turned >= 1 && fabs(k - round(k)) < 1e-6 &&
	       k >= 1 && k <= WHOLE_FIT_MAX;
}

/*
 * Whether the calls before any function moved (exact, pre[id] a
 * function's, self the function's own) leave, past those its other
 * callers make at their read-path rate a call, three quarters to
 * PRE_MOVE_MAX_PART times what its marked callers (mark[id]) would make
 * at their rate a call of the caller (or per_end, turn callers whose own
 * calls are unknown: an end). A read path that saw one end cannot tell
 * once-a-turn work from work done now and then: redis's
 * propagatePendingCommands, once a request under call and in
 * activeExpireCycle's slow cycle 10 times a second, had a call under
 * activeExpireCycle in the one turned interval of 3 recordings, and by
 * the ends came out 55-73 % high. Before the move its excess over call is
 * a few calls a second (0.32-0.65 of the part), listRewind's two a turn
 * (1.05).
 */
static bool part_before_move(const struct at_duty_est *d, const bool *mark, bool per_end,
			     const double *pre, double self, size_t n)
{
	double all = rp_calls(d), expected = 0, others = 0;

	if (!pre || !mark)
		return false;
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];
		double k;

		if (c->caller >= n) {
			if (c->calls > 0.05 * all)
				return false;
			continue;
		}
		/* At its calls per call of the caller when known, as turn_caller_part() scales. */
		if (mark[c->caller]) {
			if (!(c->own > 0) && !(per_end && d->rp_turns > 0))
				return false;
			expected += (c->own > 0 ? c->matched / c->own : c->calls / d->rp_turns) *
				    pre[c->caller];
			continue;
		}
		/*
		 * Once a call of a caller seen too few times to give a rate.
		 * Nearly whole is whole: a window cuts calls off, and the
		 * turns' part is a few % of the calls before the move (call's
		 * zmalloc_used_memory, 68 under 72 of its calls there).
		 */
		k = c->own >= AT_DUTY_MIN_STRATUM ? c->matched / c->own : 1;
		if (fabs(k - round(k)) < 0.1 * k)
			k = round(k);
		others += k * pre[c->caller];
	}
	return expected >= PRE_MOVE_MIN_CALLS && self - others >= 0.75 * expected &&
	       self - others <= PRE_MOVE_MAX_PART * expected;
}

static bool turn_part_before_move(const struct at_duty_est *d, const bool *turns, const double *pre,
				  double self, size_t n)
{
	return d->rp_turns > 0 && part_before_move(d, turns, true, pre, self, n);
}

/*
 * Whether caller c, by the writes, may scale the function on a read path
 * that saw too few writes for their ratio: at the caller's own estimate
 * per call there, when it ran under each of the caller's calls and the
 * calls before the move bear its callers by the writes out. In one
 * recording the read path saw 2 writes, and clientHasPendingReplies (3 a
 * writeToClient), updateClientMemUsageAndBucket and zfree went by the
 * reads at 24-57 % low.
 */
static bool thin_writes_caller(const struct at_caller_total *c, const double *wany, size_t n,
			       bool borne_out)
{
	return borne_out && wany && c->caller < n && wany[c->caller] > 0 && c->own >= 1 &&
	       c->matched >= c->own;
}

/*
 * Whether every turn caller on the read path made the function's calls
 * 1-3 times an end there, and the calls before the move bear it out.
 * redis's moduleCount (twice a beforeSleep, once an afterSleep) made 14
 * window calls for the one end its windows saw, "many an end", and went
 * by the writes at 80 % low.
 */
static bool whole_turn_callers(const struct at_duty_est *d, const bool *turns,
			       const struct at_caller_scales *sc, double pre_move, size_t n)
{
	uint32_t nt = 0;

	if (!turns || !d->nrp || d->nrp != d->ncls_win)
		return false;
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];

		if (c->caller >= n || !turns[c->caller])
			continue;
		if (!once_to_thrice_an_end(d, c))
			return false;
		nt++;
	}
	return nt && turn_part_before_move(d, turns, sc ? sc->pre_move : NULL, pre_move, n);
}

/*
 * Whether the function ran under at most half of turn caller c's calls on
 * the read path, over 2 of them or more: work the caller does now and
 * then, not once a turn. redis's propagatePendingCommands runs under
 * activeExpireCycle in its slow cycle, which databasesCron starts 10
 * times a second: 2 calls under 4 of activeExpireCycle's, and by the
 * ends, which the windows' slowdown makes few, it came out 31 % high in 2
 * of 32 recordings. Such a part goes by the windows' share of the time.
 * Over 3 of them until stop 60: 1 call under 2 went by the ends, 11-27 %
 * high in 3 of 776 recordings.
 */
static bool now_and_then(const struct at_caller_total *c)
{
	return c->own >= 2 && 2 * c->matched <= c->own;
}

/*
 * A function the turns scale but no turn window probed: the windows by
 * time open while the loop sleeps and see a skewed part of a turn. When
 * four fifths of its read-path calls or more are under turn callers with
 * turn windows of their own (turn_end[id] > 0), each of those parts goes
 * as its caller, by its calls per call of the caller (turn_caller_part()),
 * and the rest by time: a timer's (redis's serverCron) in the windows'
 * share of it. redis's moduleCount, twice a beforeSleep, once an
 * afterSleep and now and then a serverCron, came out 24 % low by the
 * wakeups and 26-32 % high by the ends in 3 of 24 recordings. False when
 * it cannot tell.
 */
static bool turn_callers_own(const struct at_duty_est *d, const bool *turns, const double *turn_end,
			     size_t n, double *est, double *var)
{
	double all, covered = 0, e = 0, v = 0, rest;

	if (!turns || !turn_end || !d->nrp || d->nrp != d->ncls_win || !(d->rp_turns >= 1) ||
	    !(d->on_ns > 0))
		return false;
	all = rp_calls(d);
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];
		double part, seen, den;

		if (c->caller >= n || !turns[c->caller] || now_and_then(c) ||
		    !turn_caller_part(c, turn_end, n, d->rp_turn_all, &part, &seen, &den))
			continue;
		covered += c->calls;
		e += part;
		v += part * part * (1 / seen + 1 / den);
	}
	if (!(all >= AT_DUTY_MIN_STRATUM) || covered < 0.8 * all)
		return false;
	rest = (all - covered) * d->len_ns / d->on_ns;
	*est = e + rest;
	*var = v + (all > covered ? rest * rest / (all - covered) : 0);
	return true;
}

/*
 * How much better the ends must fit a caller's calls many times an end
 * than the writes to take them: 3 times, and by chance 1 time in 100
 * over the intervals whose read path saw an end. listNext, 35 an end
 * under handleClientsWithPendingWrites over 4 such intervals, fitted the
 * ends 3.1 times better and came out at 6.2 times its count.
 */
static double many_an_end_fit(const struct at_duty_est *d)
{
	return fmax(3, f99(d->nrp_turned > 1 ? d->nrp_turned - 1 : 1));
}

/*
 * A function's calls under the callers that go by the writes (writes[id])
 * and under the turn callers (turns[id]; n ids), from the windows' read
 * path when every interval recorded it: those under the first by its
 * writes, those under a turn caller by its turns' ends or its writes,
 * whichever fits the caller's calls there interval by interval (a tie, a
 * write a turn: by the writes when the calls outnumber the ends twice;
 * past 4 calls an end, the ends must fit better by many_an_end_fit()).
 * A window ends inside a turn, and by time it saw turns begin far more
 * often than their replies and the rest of beforeSleep: evictClients,
 * clientHasPendingReplies and zfree came out 10-40 % low, writeToClient
 * 91 % low once. On the read path a turn whose last read came in the
 * window is seen to its end, with its end and its writes. Under redis's
 * handleClientsWithPendingWrites (once a turn) listRewind runs once a
 * turn and listDelNode once a reply: by the ends alone, the windows' long
 * turns sent listDelNode 1.7-3.3 times over. One turn's end on the read
 * path is enough: when the windows' turns outlast them, a recording's read
 * path sees 1-2, and without them writeToClient, under a turn caller, went
 * by the reads at 66-90 % low (the fits above still choose between the
 * writes and the ends). False, all 0, when it cannot tell; the shares are
 * of the function's calls on the read path.
 */
static bool rp_callers_estimate(const struct at_duty_est *d, const bool *writes, const bool *turns,
				const struct at_caller_scales *sc, double pre_move, size_t n,
				struct rp_split *r)
{
	const double *wpath = sc ? sc->writes_path : NULL, *turn_end = sc ? sc->turn_end : NULL;
	const double *bursts = sc ? sc->bursts : NULL;
	const double *wany = sc ? sc->writes_path_any : NULL;
	/* One answer for every caller: it reads the function's callers, not one of them. */
	bool borne_out = turn_part_before_move(d, turns, sc ? sc->pre_move : NULL, pre_move, n);
	bool w_borne_out =
	    !(d->rp_writes >= AT_DUTY_MIN_STRATUM) &&
	    part_before_move(d, writes, false, sc ? sc->pre_move : NULL, pre_move, n);
	double all;
	bool by_own = false, whole_ends = true;
	uint32_t nturn_parts = 0, nthin = 0;

	*r = (struct rp_split){0};
	if (!d->nrp || d->nrp != d->ncls_win)
		return false;
	all = rp_calls(d);
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];
		bool w = c->caller < n && writes && writes[c->caller];
		bool t = c->caller < n && turns && turns[c->caller];
		double sse_t, sse_w, part, den, seen = c->calls;
		bool by_writes = true, thin = false;

		/*
		 * In half the intervals whose read path saw its yardstick, at
		 * least: redis's freeClient, a turn caller, freed 50 clients at
		 * once between the SETs and the GETs, and zfree under it by the
		 * turns came out 25 % high. The windows' read path sees few
		 * turns: in 2 of 8 intervals in some recordings.
		 */
		if ((!w && !t) || !(c->calls > 0) ||
		    2 * c->nwin < (t ? d->nrp_turned : d->nrp_wrote))
			continue;
		/*
		 * A read path that saw too few writes for a fit still scales
		 * once-a-turn work by its ends: redis's listRewind saw 2 writes
		 * and 1 end there in one recording, and went 59 % low by the
		 * reads. A caller by the writes then scales its part as its own
		 * calls there, when borne out (thin_writes_caller()).
		 */
		if (t ? !(d->rp_turns >= 1) ||
			    (!(d->rp_writes >= AT_DUTY_MIN_STRATUM) && !once_to_thrice_an_end(d, c))
		      : !(d->rp_writes >= AT_DUTY_MIN_STRATUM) &&
			    !(thin = thin_writes_caller(c, wany, n, w_borne_out))) {
			*r = (struct rp_split){0};
			return false;
		}
		if (t && now_and_then(c) && d->on_ns > 0) {
			/* Poisson on the calls: the windows' time is known. */
			part = c->calls * d->len_ns / d->on_ns;
			r->tvar += part * part / c->calls;
			r->tpart += part;
			r->tshare += c->calls;
			rp_take(r, c);
			continue;
		}
		if (t) {
			double aw, bt;
			bool whole_before_move = own_whole(c, turn_end, n, 1) && borne_out;

			sse_t = fit_sse(c->cc, c->ct, d->rp_tt);
			sse_w = fit_sse(c->cc, c->cw, d->rp_ww);
			if (both_fit(d, c, sse_t, sse_w, &aw, &bt)) {
				part = aw * d->rp_wr_all + bt * d->rp_turn_all;
				r->tvar += part * part * (1 / c->calls + 1 / d->rp_turns);
				r->tpart += part;
				r->tshare += c->calls;
				rp_take(r, c);
				r->tw_share += c->calls * aw * d->rp_writes /
					       (aw * d->rp_writes + bt * d->rp_turns);
				continue;
			}
			/*
			 * A tie, or a gap smaller than the calls' own Poisson
			 * noise (about their mean an interval, summed over the
			 * intervals): chance picks the better fit. evictClients,
			 * once a beforeSleep, saw 1 call in 4 of 5 intervals
			 * of 1 end each; the writes fitted by 0.796 against 0.8
			 * and it came out 36 % low, with moduleCount 93 %. Not
			 * by the writes when it ran a whole number of times a
			 * call of the caller (own_whole()), over fewer calls
			 * when those before the move bear the turns out:
			 * moduleCount, twice under each of 2 beforeSleeps,
			 * went by the writes at 56 % low once.
			 */
			if (fabs(sse_t - sse_w) * fmax(d->nrp_turned, 1) <= c->calls)
				by_writes = c->calls > 2 * d->rp_turns &&
					    !own_whole(c, turn_end, n, AT_DUTY_MIN_STRATUM) &&
					    !whole_before_move;
			else if (c->calls > MANY_UNDER_A_TURN * d->rp_turns &&
				 !(many_an_end_fit(d) * sse_t < sse_w))
				/*
				 * More calls an end than once-a-turn work makes: a
				 * little better fit of the few ends is chance. Under
				 * redis's handleClientsWithPendingWrites, listNext (95
				 * calls, 6 ends, 140 writes) went by the ends at 3.7
				 * times its count, clientHasPendingReplies (40 calls, 5
				 * ends, 62 writes) at 1.8 times.
				 */
				by_writes = true;
			else
				/*
				 * evictClients, once under each of 2 beforeSleeps
				 * in 4 turned intervals, fitted the writes better
				 * and went 37 % low by them.
				 */
				by_writes = sse_w < sse_t && !whole_before_move;
		}
		den = by_writes ? d->rp_writes : d->rp_turns;
		/* A thin read path may have seen no write: the caller scales it below. */
		part = den > 0 ? c->calls / den * (by_writes ? d->rp_wr_all : d->rp_turn_all) : 0;
		/*
		 * Under a caller by the writes, as that caller's own: its calls
		 * per read-path write vary less than this function's share
		 * of them (clientHasPendingReplies, 4 a writeToClient, came
		 * out 13 % low by the read path's writes once).
		 */
		if (!t && wpath && c->caller < n && wpath[c->caller] > 0) {
			part = c->calls * wpath[c->caller];
			den = c->calls;
		} else if (thin) {
			/* Poisson on the calls and on the caller's few calls that scale them. */
			part = c->calls * wany[c->caller];
			den = c->own;
		}
		nthin += thin;
		/*
		 * Under 3 calls of the caller, only when the calls before the
		 * move bear it out: propagatePendingCommands, once under 1
		 * activeExpireCycle there, went 72 % high by it once.
		 */
		if (t && !by_writes &&
		    turn_caller_part(c, turn_end, n, d->rp_turn_all, &part, &seen, &den) &&
		    c->matched >= c->own && (c->own >= AT_DUTY_MIN_STRATUM || borne_out))
			by_own = true;
		if (t) {
			nturn_parts++;
			if (by_writes || !once_to_thrice_an_end(d, c))
				whole_ends = false;
			/* Poisson on the calls and on the yardstick seen. */
			r->tvar += part * part * (1 / seen + 1 / den);
			r->tpart += part;
			r->tshare += c->calls;
			rp_take(r, c);
			if (by_writes)
				r->tw_share += c->calls;
		} else {
			double h = bursts && c->caller < n ? bursts[c->caller] : 0;

			/*
			 * Not the caller's calls in bursts (hang-ups): the writes do
			 * not scale those. By the caller's calls there on the read
			 * path: by its window calls after reads of end of file,
			 * zfree stayed 11-16 % high in 4 recordings and 12.6 % low
			 * in one.
			 */
			part *= 1 - h;
			r->whang += c->calls * h;
			r->wvar += part * part * (1 / c->calls + 1 / den);
			r->wpart += part;
			r->wshare += c->calls;
			rp_take(r, c);
		}
	}
	/* Few calls pass when the calls before the move bear their part out. */
	if (r->tshare + r->wshare < AT_DUTY_MIN_STRATUM && !by_own &&
	    !(nturn_parts && whole_ends && !(r->wshare > 0) && borne_out) &&
	    !(nthin && !nturn_parts)) {
		*r = (struct rp_split){0};
		return false;
	}
	r->tshare /= all;
	r->wshare /= all;
	r->tw_share /= all;
	return true;
}

/*
 * Calls at hang-ups: a server frees a client that hung up (a read of end
 * of file, AT_CLASS_EOF), and redis-benchmark's 50 hang up at once between
 * its runs. A window that caught them saw zfree 10 times a client there,
 * under freeClient, _dictClear and raxRemove; split by the read path, the
 * share of those calls went with the rest by the reads, and zfree or
 * listDelNode came out 14-98 % high in 8 of 48 recordings (burst_calls()
 * serves recordings without the class). Their class scales them alone
 * (its part of *est, returned); *rest loses those not under callers by
 * the writes (rs->whang counts those), and keeps its share of the
 * others. 0 when the windows saw fewer than 3 calls there.
 */
static double hangup_part(const struct at_duty_est *d, const struct rp_split *rs, double *rest,
			  double *est)
{
	double c0 = hangup_calls(d), all = all_cls_calls(d), h, var, e0;

	if (c0 < AT_DUTY_MIN_STRATUM || !(c0 < all))
		return 0;
	h = c0 / all;
	e0 = class_part(d->cls, &var, NULL, AT_CLASS_EOF);
	*rest = fmax(*rest - fmax(c0 - rs->whang, 0) / all, 0) / (1 - h);
	*est -= e0;
	return e0;
}

/*
 * Without a class for the hang-ups (recorded before it, or too few seen
 * there): a function's read-path calls under callers seen in bursts, in 2
 * intervals at most of 6 or more, 10 calls an interval or more, under a
 * caller that neither the reads, the writes nor the turns scale and whose
 * own calls came in bursts (bursty[], at_profile_bursty()), or under none.
 * They count once, as seen: a burst's calls outside the windows are a
 * small part of the count. Over 250 redis recordings, with the hang-ups'
 * class where recorded, 97 function-recordings changed (84 closer, 8
 * further by under 3 points), and their mean error went from 14 % to 2.8
 * %; listDelNode, under unlinkClient and freeClient, had been 98 % high.
 * A caller seen in 2 intervals whose own estimate is narrow (setKey in a
 * short run of SETs) keeps scaling: counting those once put zfree 10 %
 * low in 30 recordings.
 */
static double burst_calls(const struct at_duty_est *d, const bool *writes, const bool *turns,
			  const bool *reads, const bool *bursty, size_t n, struct rp_split *rs)
{
	double b = 0;

	if (d->nrp < BURST_MIN_INTERVALS)
		return 0;
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];
		uint32_t id = c->caller;
		bool burst;

		if (id < n)
			burst = bursty && bursty[id] && !(writes && writes[id]) &&
				!(turns && turns[id]) && !(reads && reads[id]);
		else
			burst = id == AT_NO_CALLER;
		if (!burst || c->nwin > BURST_MAX_INTERVALS || c->calls < BURST_MIN_CALLS * c->nwin)
			continue;
		b += c->calls;
		if (rs)
			rp_take(rs, c);
	}
	return b;
}

/*
 * Add one interval's calls per caller (c, n) into the sums v (*nv of
 * them), with the interval's yardsticks t and w for the fits.
 */
static void caller_sums_add(struct at_caller_total **v, uint32_t *nv,
			    const struct at_caller_calls *c, uint32_t n, double t, double w,
			    const int64_t *own)
{
	for (uint32_t i = 0; i < n; i++) {
		struct at_caller_total *e = NULL;
		double x = (double)c[i].calls;

		for (uint32_t j = 0; j < *nv && !e; j++)
			if ((*v)[j].caller == c[i].caller)
				e = &(*v)[j];
		if (!e) {
			*v = at_xrealloc(*v, *nv + 1, sizeof(**v));
			e = &(*v)[(*nv)++];
			*e = (struct at_caller_total){.caller = c[i].caller};
		}
		e->nwin += x > 0;
		if (x > 0) {
			e->tt_seen += t * t;
			e->ww_seen += w * w;
			e->tw_seen += t * w;
			if (!(t > 0) && !(w > 0))
				e->cc_bare += x * x;
		}
		e->calls += x;
		e->cc += x * x;
		e->ct += x * t;
		e->cw += x * w;
		if (own && own[i] >= 0) {
			e->matched += x;
			e->own += (double)own[i];
			if (own[i] > 0 && (double)own[i] == t) {
				e->matched_even += x;
				e->own_even += (double)own[i];
			}
		}
	}
}

/* Add one interval's read path: its yardsticks and the calls there per caller. */
static void rp_add(struct at_duty_est *d, const struct at_duty_obs *o)
{
	double t = (double)o->rp_turns, w = (double)o->rp_writes;

	d->nrp++;
	d->nrp_turned += t > 0;
	d->nrp_wrote += w > 0;
	d->rp_turns += t;
	d->rp_writes += w;
	d->rp_turn_all += (double)o->turn_all;
	d->rp_wr_all += (double)o->wr_all;
	d->rp_tt += t * t;
	d->rp_ww += w * w;
	d->rp_tw += t * w;
	caller_sums_add(&d->rp_callers, &d->nrp_callers, o->rp_callers, o->nrp_callers, t, w,
			o->rp_caller_own);
}

/* Add one interval's window calls per caller. */
static void callers_add(struct at_duty_est *d, const struct at_caller_calls *c, uint32_t n)
{
	d->ncaller_win++;
	caller_sums_add(&d->callers, &d->ncallers, c, n, 0, 0, NULL);
}

/* ... per caller and read class (c, n), into the callers' sums v (nv) made of them. */
static void cls_callers_add(struct at_caller_total *v, uint32_t nv, const struct at_caller_calls *c,
			    uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < nv; j++)
			if (v[j].caller == c[i].caller && c[i].cls && c[i].cls <= AT_READ_CLASSES) {
				v[j].cls[c[i].cls - 1] += (double)c[i].calls;
				break;
			}
}

/* Add one interval's turns, and the fits of its window calls to the four yardsticks. */
static void turns_add(struct at_duty_est *d, const struct at_duty_obs *o)
{
	struct at_turn_fit *f = &d->tfit;
	double t = (double)o->cls_calls[AT_BY_TIME], r = (double)o->ref_on, w = (double)o->wr_on;
	double u = (double)o->turn_on, a = (double)o->wake_on;

	d->nturn++;
	strata_add(&d->tu, t, (double)o->turn_all, u);
	strata_add(&d->wk, t, (double)o->wake_all, a);
	f->tt += t * t;
	f->tr += t * r;
	f->rr += r * r;
	f->tw += t * w;
	f->ww += w * w;
	f->tu += t * u;
	f->uu += u * u;
	f->ta += t * a;
	f->aa += a * a;
	f->nt += t > 0;
	f->nu += u > 0;
	f->na += a > 0;
	if (o->has_tw_calls) {
		strata_add(&d->twu, (double)o->tw_calls, (double)o->turn_all,
			   (double)o->tw_turn_on);
		strata_add(&d->twk, (double)o->tw_calls, (double)o->wake_all,
			   (double)o->tw_wake_on);
		if (o->tw_bursts) {
			/* Its turns go at the calm ones' rate (tw_strata()). */
			d->twu_calm.rest_all += (double)o->turn_all;
			d->twk_calm.rest_all += (double)o->wake_all;
		} else {
			strata_add(&d->twu_calm, (double)o->tw_calls, (double)o->turn_all,
				   (double)o->tw_turn_on);
			strata_add(&d->twk_calm, (double)o->tw_calls, (double)o->wake_all,
				   (double)o->tw_wake_on);
		}
		f->nsplit++;
		f->ot_calls += t - (double)o->tw_calls;
		f->ot_turns += u - (double)o->tw_turn_on;
		f->ot_wakes += a - (double)o->tw_wake_on;
	}
}

/*
 * Turn ends or wakeups, for a function that follows the turns (u, a: the
 * mean squares of its fits to each). The turn windows see whole turns, as
 * many ends as wakeups; the other windows open while the loop sleeps, and
 * see more wakeups than ends. What the function did there, at its rate per
 * turn in the turn windows, tells which one it follows where the fits
 * cannot: in 2 of 5 redis recordings beforeSleep fitted the wakeups better
 * and came out at -10.6 %, or afterSleep the ends at +17 %.
 */
static enum at_yardstick ends_or_wakes(const struct at_duty_est *d, double u, double a)
{
	const struct at_turn_fit *f = &d->tfit;
	double tw_turns = strata_on(&d->twu);

	if (f->nsplit >= 2 && tw_turns > 0 && isfinite(u) && isfinite(a) &&
	    f->ot_turns != f->ot_wakes) {
		double q = strata_calls(&d->twu) / tw_turns;

		return fabs(f->ot_calls - q * f->ot_turns) <= fabs(f->ot_calls - q * f->ot_wakes)
			   ? AT_BY_TURNS
			   : AT_BY_WAKES;
	}
	return u <= a ? AT_BY_TURNS : AT_BY_WAKES;
}

/*
 * The 99 % quantile of Fisher's F with df and df degrees of freedom: how
 * far apart two mean squares of df degrees each fall by chance, 1 time in
 * 100 (0 past the table: below 3 from 19 on).
 */
static double f99(uint32_t df)
{
	static const double f[] = {0,	 4052, 99.0, 29.46, 15.98, 10.97, 8.47, 6.99, 6.03, 5.35,
				   4.85, 4.46, 4.16, 3.91,  3.70,  3.52,  3.37, 3.24, 3.13};

	return df < sizeof(f) / sizeof(f[0]) ? f[df] : 0;
}

/*
 * The mean squares of the window calls fitted through the origin to the
 * reads (*r), the writes (*w), the turns' ends (*u) and the wakeups (*a),
 * interval by interval (2 or more with turns). The reads and writes also
 * class by class, where a function of one kind of request fits them far
 * better, at half weight: a slope per class fits the noise too. A turn
 * yardstick seen in fewer than 3 intervals fits nothing (INFINITY).
 */
static void turn_fit_ms(const struct at_duty_est *d, double *r, double *w, double *u, double *a)
{
	const struct at_turn_fit *f = &d->tfit;

	*r = fit_sse(f->tt, f->tr, f->rr) / (d->nturn - 1);
	*w = fit_sse(f->tt, f->tw, f->ww) / (d->nturn - 1);
	if (d->nwr_cls >= 3 && d->nwr_cls == d->nwr) {
		double sse_r, sse_w, ms_r, ms_w;

		classed_sse(d, &sse_r, &sse_w, &ms_r, &ms_w);
		*r = fmin(*r, 2 * ms_r);
		*w = fmin(*w, 2 * ms_w);
	}
	*u = f->nu >= 3 ? fit_sse(f->tt, f->tu, f->uu) / (d->nturn - 1) : INFINITY;
	*a = f->na >= 3 ? fit_sse(f->tt, f->ta, f->aa) / (d->nturn - 1) : INFINITY;
}

/*
 * Whether a function's windows saw at most MANY_UNDER_A_TURN calls a turn
 * (s: by the ends or the wakeups). The other windows slow the loop so much
 * that each sees about one turn's end, so work per request in a turn fits
 * the ends as well as work once a turn: redis's listNext, 75-102 calls in
 * each of 4 intervals' windows against 1 end each, fitted the ends 15
 * times better than the reads, and came out 13 times its count by them.
 */
static bool few_under_a_turn(const struct at_strata *s)
{
	return strata_calls(s) <= MANY_UNDER_A_TURN * strata_on(s);
}

/*
 * Whether a function's window calls follow the turns of the event loop
 * (AT_BY_TURNS: their ends, AT_BY_WAKES: the wakeups, whichever fits
 * better) far more closely than the reads and the writes: fitted through
 * the origin interval by interval, the mean square residual is less than a
 * third of both of theirs. Work done once a turn passes (redis's
 * beforeSleep and afterSleep); work done per request or per reply does
 * not. The reads and writes are fitted class by class when the writes were
 * (a function run per SET fits the SETs' reads, not all the reads: fitted
 * unclassed, one went by the turns at 4 times its count). When neither the
 * writes nor its callers' writes scale it (writes_too false), a third of
 * the reads' and no more than the writes' is enough: beforeSleep's calls
 * fit the few window writes nearly as well as the turns in 3 of 8 redis
 * recordings, and stayed with the reads at -95 %. Needs every interval
 * with turns, 3 of them, 5 calls and 3 turns in the windows, and calls and
 * turns in 3 intervals each: the windows catch few turns (redis: 4-9 ends
 * a recording), and a function seen in one burst fits anything. With a
 * margin of 1 rather than 3, 2 of 8 redis recordings lost 20 functions.
 * One the loader left out of the turn windows (left_out) also needs
 * few_under_a_turn().
 */
static enum at_yardstick follows_turns(const struct at_duty_est *d, bool writes_too, bool turnwise,
				       bool left_out)
{
	double r, w, u, a, best, m = 3;

	if (d->nturn < 3 || d->nturn != d->ncls_win || strata_calls(&d->tu) < 5 || d->tfit.nt < 3)
		return AT_BY_READS;
	turn_fit_ms(d, &r, &w, &u, &a);
	best = fmin(u, a);
	if (left_out)
		m = fmax(m, f99(d->nturn - 1));
	/*
	 * A function of the turn windows ran a whole number of times a turn
	 * while it was exact: the turns scale it unless the reads or the
	 * writes fit three times better. Its window calls cannot tell by
	 * themselves: the turn windows, which see most of them, read about
	 * as many requests each turn (redis: ustime, a few more calls than
	 * turns, fitted the reads nearly as well and came out at -93 %).
	 */
	if (turnwise ? 3 * r >= best && 3 * w >= best
		     : m * best < r && (writes_too ? m * best < w : best <= w)) {
		enum at_yardstick y = ends_or_wakes(d, u, a);

		return left_out && !few_under_a_turn(y == AT_BY_TURNS ? &d->tu : &d->wk)
			   ? AT_BY_READS
			   : y;
	}
	return AT_BY_READS;
}

/*
 * The turn windows' strata by the turns' ends or the wakeups: those of the
 * intervals whose turn windows saw no hang-up or accept, with the others'
 * turns at their rate, when they saw 3 turns or more. A turn that only
 * hangs up or accepts clients has no write, so no end, and a wakeup only
 * after a write: redis's beforeSleep ran 9 times in a turn window that
 * counted 6 ends and 6 wakeups among 50 hang-ups, and 3 times against 1
 * among 51 accepts. The windows open there early, when the kind of request
 * changes: moduleCount (2 a beforeSleep, 1 an afterSleep) came out 10-35 %
 * high in 23 of 353 stored recordings, within 10 % by this rule.
 */
static const struct at_strata *tw_strata(const struct at_duty_est *d, bool ends)
{
	const struct at_strata *calm = ends ? &d->twu_calm : &d->twk_calm;

	return strata_on(calm) >= AT_DUTY_MIN_STRATUM ? calm : ends ? &d->twu : &d->twk;
}

/*
 * The estimate against the turns' ends or the wakeups (s): each interval
 * whose windows saw enough of them by its own ratio, the rest by the
 * ratio over all of them (the windows see a few a second). The variance
 * is the strata's spread, at least Poisson on the calls seen.
 */
static double turns_estimate(const struct at_strata *s, double *var)
{
	double calls = strata_calls(s), on = strata_on(s);
	double q = on > 0 ? calls / on : 0, est = s->est + fmax(s->rest_calls, q * s->rest_all);

	*var = s->n >= 2 ? strata_spread(s) * s->rr : s->n ? s->poisson : 0;
	*var += q * q * s->rest_all * s->rest_all / fmax(calls, 1);
	*var = fmax(*var, est * est / fmax(calls, 1));
	return est;
}

/*
 * Whether every interval recorded the turn windows' calls and turns apart
 * (the others see a skewed part of a turn), and they saw enough turns' ends.
 */
static bool turn_windows_apart(const struct at_duty_est *d)
{
	return d->nturn && d->tfit.nsplit == d->nturn && strata_on(&d->twu) >= AT_DUTY_MIN_STRATUM;
}

/*
 * Whether the turn windows bear out the loader's mark of a function run
 * once to three times a turn (find_per_turn()): at most MANY_UNDER_A_TURN
 * calls a turn's end there, or too few ends to tell. A step that straddles
 * a change of requests can mark one by chance: redis's stringObjectLen,
 * once a GET, made 11 calls an end in its turn windows, and by the turns
 * it came out at 12.7 times its count.
 */
static bool turnwise_borne_out(const struct at_duty_est *d)
{
	const struct at_strata *s = tw_strata(d, true);

	return !(strata_on(s) >= AT_DUTY_MIN_STRATUM) || few_under_a_turn(s);
}

/*
 * Whether e, a function's estimate by the reads or the writes, is under
 * half a call a turn's end and under half what its turn windows make of
 * it: a function of the turn windows ran a whole number of times a turn
 * while it was exact, and those windows see whole turns. The fits behind
 * the reads' choice see a few calls an interval outside the turn windows:
 * redis's afterSleep fitted the writes 3.4 times better than the turns
 * with 10 such calls, and came out 95 % low; beforeSleep and ustime 80-99
 * % low in 18 of 234 recordings. A function run per request has many
 * calls a turn in the windows, whose turns are long, and about as many
 * as the turns overall: that stays with the reads.
 */
static bool below_its_turns(const struct at_func_profile *p, double e)
{
	const struct at_duty_est *d = &p->duty;
	double var, ends = strata_all(&d->tu);

	if (!p->turn_windows || !turn_windows_apart(d) || !(ends > 0))
		return false;
	return e < 0.5 * fmin(turns_estimate(&d->twu, &var), ends);
}

/*
 * follows_turns() for p, which class_choice() gave by_writes and
 * have_writes: the writes count as fitting when they scale it, or scale
 * the *share (of *split window calls, as caller_share()) made under callers
 * they scale (writes[id], n ids). A function the loader left out of the
 * turn windows it ran does not run once to three times a turn: the fits
 * must tell it by chance 1 time in 100, not 3 times better, for it to go
 * by the turns. In 1 of 13 redis recordings, 3 times better sent zmalloc
 * (per request) by the wakeups at 5 times its count, with an interval of
 * +-10 %: 8 intervals fit noise that well.
 */
static enum at_yardstick turns_choice(const struct at_func_profile *p, bool by_writes,
				      bool have_writes, const bool *writes, size_t n, double *share,
				      double *split)
{
	const struct at_duty_est *d = &p->duty;

	*share = have_writes && !by_writes ? caller_share(d, writes, n, split) : 0;
	return follows_turns(d, by_writes || *share > 0, p->turn_windows && turnwise_borne_out(d),
			     p->turn_windows_ran && !p->turn_windows);
}

/*
 * turns_choice() for the estimate itself (est, west: by the reads and by
 * the writes), with below_its_turns(). For the marks of callers only once
 * a turn (once_a_turn()): for all, it made listAddNodeTail, called under
 * linkClient when redis's clients connect, a turn caller, and zmalloc
 * under it went 139-202 % high.
 */
static enum at_yardstick estimate_choice(const struct at_func_profile *p, bool by_writes,
					 bool have_writes, double est, double west,
					 const bool *writes, size_t n, double *share, double *split)
{
	enum at_yardstick y = turns_choice(p, by_writes, have_writes, writes, n, share, split);

	return y == AT_BY_READS && below_its_turns(p, by_writes ? west : est) ? AT_BY_TURNS : y;
}

void at_profile_free(struct at_func_profile *p)
{
	free(p->duty.callers);
	p->duty.callers = NULL;
	p->duty.ncallers = 0;
	free(p->duty.rp_callers);
	p->duty.rp_callers = NULL;
	p->duty.nrp_callers = 0;
}

void at_profile_add_duty(struct at_func_profile *p, const struct at_duty_obs *o)
{
	struct at_duty_est *d = &p->duty;
	uint64_t calls = o->calls, on_ns = o->on_ns, len_ns = o->len_ns;
	uint64_t ref_on = o->ref_on, ref_all = o->ref_all;
	double r;

	if (on_ns > len_ns || ref_on > ref_all)
		return;
	d->nwin++;
	d->calls += calls;
	d->len_ns += (double)len_ns;
	d->ref_all += (double)ref_all;
	if (on_ns) {
		r = (double)calls / (double)on_ns;
		d->on_ns += (double)on_ns;
		d->sum_r += r;
		d->sum_r2 += r * r;
	}
	if (ref_on) {
		r = (double)calls / (double)ref_on;
		d->nref++;
		d->ref_on += (double)ref_on;
		d->sum_q += r;
		d->sum_q2 += r * r;
	}
	if (o->cls_all && ref_all) {
		d->ncls_win++;
		for (int k = 0; k < AT_READ_CLASSES; k++)
			strata_add(&d->cls[k], (double)o->cls_calls[k], (double)o->cls_all[k],
				   (double)o->cls_on[k]);
		if (o->has_writes) {
			d->nwr++;
			d->nwr_called += o->cls_calls[AT_BY_TIME] > 0;
			strata_add(&d->wr, (double)o->cls_calls[AT_BY_TIME], (double)o->wr_all,
				   (double)o->wr_on);
		}
		if (o->has_callers)
			callers_add(d, o->callers, o->ncallers);
		if (o->has_callers && o->has_cls_callers) {
			d->ncls_caller_win++;
			cls_callers_add(d->callers, d->ncallers, o->cls_callers, o->ncls_callers);
		}
		if (o->has_writes && o->has_turns)
			turns_add(d, o);
		if (o->has_writes && o->has_turns && o->has_rpath) {
			rp_add(d, o);
			if (o->has_cls_callers) {
				d->nrp_cls_win++;
				cls_callers_add(d->rp_callers, d->nrp_callers, o->rp_cls_callers,
						o->nrp_cls_callers);
			}
		}
		if (o->has_writes && o->wr_cls_all) {
			d->nwr_cls++;
			for (int k = 0; k < AT_READ_CLASSES; k++) {
				double t = (double)o->cls_calls[AT_WR_CLASS(k)];
				double ron = (double)o->cls_on[k], won = (double)o->wr_cls_on[k];
				struct at_fit *f = &d->fit[k];

				strata_add(&d->wr_cls[k], t, (double)o->wr_cls_all[k], won);
				f->tt += t * t;
				f->tr += t * ron;
				f->rr += ron * ron;
				f->tw += t * won;
				f->ww += won * won;
				f->n += t > 0 || ron > 0 || won > 0;
			}
		}
		return;
	}
	if (ref_on >= AT_DUTY_MIN_STRATUM) {
		double m = (double)ref_all / (double)ref_on;

		d->strat += (double)calls * m;
		d->strat_var += (double)(calls ? calls : 1) * m * m;
		d->strat_calls += (double)calls;
		d->strat_ref_on += (double)ref_on;
	} else if (ref_all || !on_ns) {
		d->rest_calls += (double)calls;
		d->rest_ref_all += (double)ref_all;
	} else {
		/* No read in the whole interval: by time. */
		d->rest_by_time += (double)calls * (double)len_ns / (double)on_ns;
	}
}

/* Two-sided 95 % quantile of Student's t with df degrees of freedom. */
static double t975(uint32_t df)
{
	static const double t[] = {0,	  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				   2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				   2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				   2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

	return df < sizeof(t) / sizeof(t[0]) ? t[df] : 1.96;
}

static uint64_t scaled(uint64_t v, double s)
{
	double x = (double)v * s;

	return x >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(x);
}

/* Half width of a 95 % interval of a ratio seen over n intervals, in units of den. */
static double half_width(uint64_t calls, double den, uint32_t n, double sum, double sum2)
{
	/* Rule of three when none were seen: fewer than 3 with 95 % confidence. */
	double hw = 1.96 * sqrt((double)(calls ? calls : 3)) / den;

	if (n > 1) {
		double m = sum / n, var = (sum2 - n * m * m) / (n - 1);

		hw = fmax(hw, t975(n - 1) * sqrt(fmax(var, 0) / n));
	}
	return hw;
}

/*
 * Whether class k is connections' first reads and the windows saw each of
 * them alone, never AT_DUTY_MIN_STRATUM in an interval. Clients tend to
 * connect in bursts (redis-benchmark's 50 at once), and a window that
 * catches one sees a stratum of them; one it catches alone is likelier a
 * lone connection's, whose first request may be like none of the others
 * (redis-benchmark's CONFIG GET). A length class holds one kind of
 * request, but this one holds every kind: 3 such reads, 6 calls of
 * addReplyLongLongWithPrefix each where the clients' first SETs and GETs
 * make one or none, put it 16 % high (p5). The function's ratio over all
 * classes is then the better guess, as for a class seen fewer than 3 times.
 */
static bool first_reads_alone(const struct at_strata *s, int k)
{
	return k == AT_CLASS_FIRST && !s->n && strata_on(s) >= AT_DUTY_MIN_STRATUM;
}

/*
 * The calls of the intervals with read classes: per (interval, class)
 * stratum, and the rest of a class's reads at that class's ratio over
 * all windows (the function's ratio over all classes when the windows saw
 * too few of the class, or only lone first reads). *var gets the
 * estimate's Poisson variance, with the rule of three for a class in whose
 * strata the function never ran.
 * unseen (when not NULL) gets the reads of the classes the windows saw too
 * few of, and their guessed calls count as anywhere from none to twice
 * the guess: a kind of request no window caught may not call the function
 * at all, or call it far more than the others (reqmix's SET-only windows
 * put set_key at 1.81 times its count, with an interval of +-4.8 %).
 * class_part() gives class only's part of it (only -1: every class's).
 */
static double class_part(const struct at_strata *cls, double *var, double *unseen, int only)
{
	double all_c = 0, all_r = 0, est = 0;

	*var = 0;
	if (unseen)
		*unseen = 0;
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		const struct at_strata *s = &cls[k];

		if (only < 0 || k == only)
			est += s->est;
		all_c += strata_calls(s);
		all_r += strata_on(s);
		if (!s->n || (only >= 0 && k != only))
			continue;
		if (!s->calls)
			/* None seen in the class's strata: fewer than 3 in its window reads, at 95
			 * %. */
			*var += pow(3 * s->all / s->on / 1.96, 2);
		else if (s->n >= 2)
			*var += strata_spread(s) * s->rr;
		else
			*var += s->poisson;
	}
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		const struct at_strata *s = &cls[k];
		double c = strata_calls(s), r = strata_on(s), part;
		bool guessed = r < AT_DUTY_MIN_STRATUM || first_reads_alone(s, k);

		if ((!s->rest_all && !s->rest_calls) || (only >= 0 && k != only))
			continue;
		if (guessed) {
			c = all_c;
			r = all_r;
			if (unseen)
				*unseen += s->rest_all;
		}
		if (r <= 0) {
			est += s->rest_calls;
			continue;
		}
		part = fmax(s->rest_calls, c / r * s->rest_all);
		est += part;
		*var += fmax(c, 1) * pow(s->rest_all / r, 2);
		if (guessed)
			*var += pow((part - s->rest_calls) / 1.96, 2);
	}
	return est;
}

static double class_estimate(const struct at_strata *cls, double *var, double *unseen)
{
	return class_part(cls, var, unseen, -1);
}

/*
 * Mark the profile estimated at est calls, in [lo, hi], and scale its
 * figures to est: no fewer than the probes saw (a yardstick that saw none
 * of them in its windows says 0).
 */
static void finish(struct at_func_profile *p, double est, double lo, double hi)
{
	struct at_counts *c = &p->c;
	double s;

	est = fmax(est, (double)c->calls);
	hi = fmax(hi, est);
	p->estimated = true;
	p->seen_calls = c->calls;
	p->calls_lo = lo;
	p->calls_hi = hi;
	if (!c->calls)
		return;
	s = est / (double)c->calls;
	c->calls = scaled(c->calls, s);
	c->returns = scaled(c->returns, s);
	c->sum_ns = scaled(c->sum_ns, s);
	c->total_ns = scaled(c->total_ns, s);
	c->self_ns = scaled(c->self_ns, s);
	c->errors = scaled(c->errors, s);
	c->sumsq *= s;
	for (uint32_t b = 0; b < AT_HIST_BUCKETS; b++)
		p->hist[b] = scaled(p->hist[b], s);
}

/*
 * The estimates of the intervals with read classes: by the reads (*est,
 * *var), and by the writes (*west, *wvar) when *have_writes. Work a server
 * defers to the end of a turn of its event loop (replies) follows its
 * writes: they alone scale the function's calls when their interval is
 * less than half as wide, or when its window calls follow them far more
 * closely (the return value).
 */
static bool class_choice(const struct at_duty_est *d, double *est, double *var, double *unseen,
			 double *west, double *wvar, bool *have_writes)
{
	*est = class_estimate(d->cls, var, unseen);
	*var = poisson_floor(*est, *var, (double)d->calls);
	*have_writes = writes_estimate(d, west, wvar) && *west > 0;
	return *have_writes && (*est <= 0 || 4 * *wvar / (*west * *west) < *var / (*est * *est) ||
				follows_writes(d));
}

bool at_profile_by_writes(const struct at_func_profile *p)
{
	double est, var, unseen, west, wvar;
	bool have_writes;

	if (!p->duty.nwin || p->estimated || !p->duty.ncls_win)
		return p->by_writes;
	return class_choice(&p->duty, &est, &var, &unseen, &west, &wvar, &have_writes);
}

/*
 * A function of the turn windows that ran about once a turn's end there (k,
 * at_profile_turn_end_scale()), most of its window calls not at hang-ups:
 * a turn caller even where the reads or the writes would put it under its
 * turns (estimate_choice()).
 * beforeSleep by the writes left its callees once a beforeSleep
 * (evictClients, zmalloc_used_memory) 39 % low in one recording, and
 * freeClientsInAsyncFreeQueue by the reads sent listRewind 28 % low in
 * another. Over 258 recordings, 17 function-recordings changed, 12 of
 * them closer, and 11 came within ±10 %; 4 moved by under 3.5 points.
 * Not at hang-ups: listAddNodeTail, called under linkClient when clients
 * connect, then made zmalloc 189 % high.
 */
static bool once_a_turn(const struct at_func_profile *p, double k)
{
	return k >= 0.75 && k <= 1.5 && 2 * hangup_calls(&p->duty) < all_cls_calls(&p->duty);
}

/*
 * A function of the turn windows that made under TURN_CALLER_MIN calls a
 * turn's end there, over the ends they saw, is no turn caller whatever its
 * own fits say: its callees' calls under it would go by their own turns'
 * ends. redis's listCreate (clients' setup: 15 window calls, all after
 * accepts, none in 40 ends of its turn windows) went by the turns at 924
 * calls, and zmalloc's 12 window calls under it came to some 330,000 by
 * zmalloc's few ends seen (+17.6 %).
 */
#define TURN_CALLER_MIN 0.25

bool at_profile_turn_caller(const struct at_func_profile *p, const bool *writes, size_t n)
{
	double est, var, unseen, west, wvar, split, share, k;
	bool have_writes, by_writes;

	if (!p->turn_windows || !p->duty.nwin || p->estimated || !p->duty.ncls_win)
		return false;
	k = at_profile_turn_end_scale(p);
	if (turn_windows_apart(&p->duty) && k < TURN_CALLER_MIN)
		return false;
	by_writes = class_choice(&p->duty, &est, &var, &unseen, &west, &wvar, &have_writes);
	if (once_a_turn(p, k))
		return estimate_choice(p, by_writes, have_writes, est, west, writes, n, &share,
				       &split) != AT_BY_READS;
	return turns_choice(p, by_writes, have_writes, writes, n, &share, &split) != AT_BY_READS;
}

bool at_profile_under_turn_callers(const struct at_func_profile *p, const bool *turns, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	uint32_t nt = 0;

	if (p->turn_windows || !d->nwin || p->estimated || !d->nrp || d->nrp != d->ncls_win ||
	    d->nrp_turned < 2)
		return false;
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];

		if (!(c->calls > 0))
			continue;
		if (c->caller >= n || !turns[c->caller] || c->calls != d->rp_turns)
			return false;
		nt++;
	}
	return nt > 0;
}

/*
 * Calls in partly probed intervals are estimated as the rate the windows
 * saw times the intervals' socket reads (or length): a ratio estimator,
 * per interval when the windows saw enough reads, and per size class of
 * those reads when recorded (class_estimate). The
 * 95 % interval is Poisson per interval; a pooled ratio takes the larger
 * of the spread of the per-interval rates (t, n - 1 degrees of freedom)
 * and the Poisson error of the calls seen. The other figures scale with
 * the calls, so means and quantiles keep what the windows measured.
 */
void at_profile_estimate(struct at_func_profile *p)
{
	at_profile_estimate_callers(p, NULL, NULL, NULL, 0);
}

/*
 * Most of the calls not made at hang-ups, which the hang-ups' class scales
 * apart (hangup_part()). listDelNode runs once a reply under
 * handleClientsWithPendingWrites and 36-54 times when a window catches 50
 * clients hanging up: with those in the half, it was no caller by the
 * writes in 8 of 136 redis recordings, and zfree under it went by the
 * reads at -10 to -16 % in 5. Not a function run almost only at hang-ups.
 */
#define RP_REPLIES_HANGUPS_MAX 0.9

bool at_profile_rp_replies(const struct at_func_profile *p, const bool *writes, const bool *turns,
			   size_t n)
{
	double all = all_cls_calls(&p->duty), h;
	struct rp_split rs;

	if (!p->duty.nwin || p->estimated || !p->duty.ncls_win || !(all > 0))
		return false;
	h = hangup_calls(&p->duty) / all;
	return h < RP_REPLIES_HANGUPS_MAX &&
	       rp_callers_estimate(&p->duty, writes, turns, NULL, 0, n, &rs) &&
	       rs.wshare + rs.tw_share >= 0.5 * (1 - h);
}

bool at_profile_by_reads(const struct at_func_profile *p, const bool *writes, size_t n)
{
	double est, var, unseen, west, wvar, split, share;
	bool have_writes, by_writes;

	/*
	 * Seen in 3 intervals at least: redis's handleClientsWithPendingWrites,
	 * left out of the turn windows once and seen once, went by the reads,
	 * and with it writeToClient, all of whose calls it makes, at -91 %.
	 */
	if (!p->duty.nwin || p->estimated || !p->duty.ncls_win ||
	    p->duty.nwr_called < BY_READS_MIN_INTERVALS)
		return false;
	by_writes = class_choice(&p->duty, &est, &var, &unseen, &west, &wvar, &have_writes);
	return !by_writes &&
	       turns_choice(p, by_writes, have_writes, writes, n, &share, &split) == AT_BY_READS;
}

void at_profile_writes_scales(const struct at_func_profile *p, double *path, double *any)
{
	const struct at_duty_est *d = &p->duty;
	double est, var, unseen, west, wvar, seen;
	bool have_writes;

	*path = *any = 0;
	if (!d->nwin || p->estimated || !d->ncls_win || d->nrp != d->ncls_win)
		return;
	seen = rp_calls(d);
	/*
	 * By its writes estimate even where the writes mark it for its
	 * replies alone (at_profile_rp_replies()): redis's listAddNodeHead,
	 * once a request under prepareClientToWrite, had no scale, and
	 * zmalloc's calls under it went by the read path's writes (142 calls
	 * against 101 writes): 10 % high.
	 */
	class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes);
	if (!(seen >= 1) || !have_writes || !(west > 0))
		return;
	*any = west / seen;
	if (seen >= AT_DUTY_MIN_STRATUM)
		*path = *any;
}

double at_profile_turn_end_scale(const struct at_func_profile *p)
{
	const struct at_duty_est *d = &p->duty;
	const struct at_strata *s;

	if (!d->nwin || p->estimated || !turn_windows_apart(d))
		return 0;
	s = tw_strata(d, true);
	return strata_calls(s) / strata_on(s);
}

double at_profile_burst_share(const struct at_func_profile *p, const bool *writes,
			      const bool *turns, const bool *reads, const bool *bursty, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	double all;

	if (!d->nwin || p->estimated || !d->ncls_win || d->nrp != d->ncls_win)
		return 0;
	all = rp_calls(d);
	return all > 0 ? burst_calls(d, writes, turns, reads, bursty, n, NULL) / all : 0;
}

bool at_profile_bursty(const struct at_func_profile *p)
{
	const struct at_duty_est *d = &p->duty;
	double est, var, unseen, west, wvar;
	bool have_writes;

	if (!d->nwin || p->estimated || !d->ncls_win)
		return false;
	class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes);
	return !(est > 0) || 1.96 * sqrt(var) > BURSTY_HALF_WIDTH * est;
}

void at_profile_reads_scales(const struct at_func_profile *p, double *by_time, double *on_path)
{
	const struct at_duty_est *d = &p->duty;
	double est, var, unseen, west, wvar, time, path;
	bool have_writes;

	*by_time = *on_path = 0;
	if (!d->nwin || p->estimated || !d->ncls_win || d->nwr != d->ncls_win)
		return;
	class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes);
	if (!(est > 0))
		return;
	time = strata_calls(&d->wr);
	/* Not the calls after window reads: the turn windows and their arming add to those. */
	path = d->nrp == d->ncls_win ? rp_calls(d) : 0;
	*by_time = time >= AT_DUTY_MIN_STRATUM ? est / time : 0;
	*on_path = path >= AT_DUTY_MIN_STRATUM ? est / path : 0;
}

/*
 * A callee's calls per caller call can hang on the read's class: redis's
 * zfree under _sdsMakeRoomFor frees a new connection's first buffer, so
 * its read-path calls there all came after a connection's first read, a
 * class the windows saw 1 in 55 of, where its caller's own came after
 * requests too, seen 1 in 4,200. Scaled by the caller's estimate per call,
 * that part came out at 40 times its count (zfree 12 % high). callers[id]:
 * a caller's class scale averaged over its own read-path calls
 * (at_profile_rp_class_mix()); own: the callee's class scales.
 */
struct class_mix {
	const double *callers;
	double own[AT_READ_CLASSES];
};

/* How many reads of each class ran per one the function's windows saw (0: none seen). */
static void class_read_scales(const struct at_duty_est *d, double *s)
{
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		double on = strata_on(&d->cls[k]);

		s[k] = on > 0 ? strata_all(&d->cls[k]) / on : 0;
	}
}

/* The class scales s averaged over calls by class v: 0 under 3 classed calls. */
static double class_mix_scale(const double *s, const double *v)
{
	double calls = 0, scaled = 0;

	for (int k = 0; k < AT_READ_CLASSES; k++) {
		calls += v[k];
		scaled += v[k] * s[k];
	}
	return calls >= AT_DUTY_MIN_STRATUM ? scaled / calls : 0;
}

double at_profile_rp_class_mix(const struct at_func_profile *p, double on_path)
{
	const struct at_duty_est *d = &p->duty;
	double own[AT_READ_CLASSES] = {0}, s[AT_READ_CLASSES];

	if (!d->nrp || d->nrp_cls_win != d->nrp)
		return 0;
	/*
	 * A function of the turn windows makes calls there too, off the read
	 * path, and its estimate per read-path call counts them: against its
	 * class scale over its read-path calls, a callee's own would scale
	 * the callee's calls under it by that again. redis's listCreate made
	 * 147 of its 153 window calls in a turn window that saw 49 clients
	 * connect: zmalloc's 6 calls under it came out at 244,000 (zmalloc
	 * 13.6 % high). The estimate per read-path call itself weighs them:
	 * the callee's class scale alone.
	 */
	if (p->turn_windows)
		return on_path;
	for (uint32_t i = 0; i < d->nrp_callers; i++)
		add_classes(own, &d->rp_callers[i]);
	class_read_scales(d, s);
	return class_mix_scale(s, own);
}

/*
 * The calls under callers that go by the reads (c, n of them, by time or
 * on the read path), each part scaled as its caller (rscale[id] > 0, n ids):
 * *share, their part of the calls, *var, Poisson on them. When the writes
 * or the turns split off a part, the reads scaled the rest as the
 * function's read-path calls all together, and those at a turn's end fall
 * where the windows saw few reads: redis's clientHasPendingReplies, half
 * of it under prepareClientToWrite (once a call there), came out 12-32 %
 * high in 5 of 8 recordings, its part by the reads twice
 * prepareClientToWrite's count. Over 210 redis recordings, 1252
 * function-recordings changed: their mean error went from 5.5 % to 4.8 %.
 */
static double reader_callers_estimate(const struct at_caller_total *c, uint32_t nc,
				      const double *rscale, const struct class_mix *mix, size_t n,
				      double *share, double *var)
{
	double all = 0, under = 0, part = 0;

	*share = *var = 0;
	if (!rscale)
		return 0;
	for (uint32_t i = 0; i < nc; i++) {
		double k = c[i].caller < n ? rscale[c[i].caller] : 0;

		all += c[i].calls;
		if (k > 0 && mix && mix->callers[c[i].caller] > 0) {
			double m = class_mix_scale(mix->own, c[i].cls);

			if (m > 0)
				k *= m / mix->callers[c[i].caller];
		}
		if (k > 0) {
			under += c[i].calls;
			part += k * c[i].calls;
			*var += k * k * c[i].calls;
		}
	}
	if (under < AT_DUTY_MIN_STRATUM)
		return *var = 0;
	*share = under / all;
	return part;
}

double at_profile_inherited_writes_scale(const struct at_func_profile *p, const double *wpath,
					 size_t n)
{
	const struct at_duty_est *d = &p->duty;
	double share, var, part;

	if (!d->nwin || p->estimated || !d->nrp || d->nrp != d->ncls_win)
		return 0;
	/* The same sum as the reads' callers' parts: share 1 when all are under scaled callers. */
	part = reader_callers_estimate(d->rp_callers, d->nrp_callers, wpath, NULL, n, &share, &var);
	return share >= 1 ? part / rp_calls(d) : 0;
}

/*
 * reader_callers_estimate() out of the *rest the reads scale: *rest keeps
 * what is left of it, and the part above what fits in it is cut to fit.
 */
static double reader_part(const struct at_caller_total *c, uint32_t nc, const double *rscale,
			  const struct class_mix *mix, size_t n, double *rest, double *var)
{
	double share, part = reader_callers_estimate(c, nc, rscale, mix, n, &share, var), cut;

	if (!(share > 0))
		return 0;
	cut = share > *rest ? *rest / share : 1;
	*rest -= share * cut;
	*var *= cut * cut;
	return part * cut;
}

/*
 * A function's window calls after a read per read class (all[k]), and
 * those under the callers that take a part of them (taken[k]): marked by
 * the writes or the turns (bursts left out, as caller_share()), or scaled
 * by their own reads (rscale). False unless every interval recorded them.
 */
static bool callers_by_class(const struct at_duty_est *d, const bool *writes, const bool *turns,
			     const double *rscale, size_t n, double *all, double *taken,
			     double *by_writes)
{
	if (!d->ncls_win || d->ncls_caller_win != d->ncls_win || d->ncaller_win != d->ncls_win)
		return false;
	for (int k = 0; k < AT_READ_CLASSES; k++)
		all[k] = taken[k] = by_writes[k] = 0;
	for (uint32_t i = 0; i < d->ncallers; i++) {
		const struct at_caller_total *c = &d->callers[i];
		bool in = c->caller < n, burst = burst_caller(d, c);
		bool w = writes && in && writes[c->caller] && !burst;
		bool t = turns && in && turns[c->caller] && !burst;
		bool r = rscale && in && rscale[c->caller] > 0;

		add_classes(all, c);
		if (w || t || r)
			add_classes(taken, c);
		if (w)
			add_classes(by_writes, c);
	}
	return true;
}

/*
 * How much a part of a function's window calls (part[k] of all[k] per read
 * class) weighs, against its raw share, once each class is scaled as its
 * own strata (cls) scale it: each class's estimate times the part's share
 * of that class, over the estimate times the raw share. The caller shares
 * are of the raw calls, and a window that caught a connection burst (most
 * of its zmalloc calls, in the accepts' class, which scales them about
 * once) inflated the share left to the reads, whose request classes scale
 * theirs many times: zmalloc came out 26-36 % high in stop 57's rounds. 1
 * when the part or the classed calls are too few. Class skip (-1: none)
 * is left out: the hang-ups' class scales its calls apart.
 */
static double class_weight(const struct at_strata *cls, const double *all, const double *part,
			   int skip)
{
	double est = 0, weighted = 0, tot = 0, raw = 0, unknown = 0, var;

	for (int k = 0; k < AT_READ_CLASSES; k++) {
		double e;

		if (k == skip)
			continue;
		e = class_part(cls, &var, NULL, k);
		est += e;
		tot += all[k];
		raw += part[k];
		if (all[k] > 0)
			weighted += e * fmin(part[k] / all[k], 1);
		else
			unknown += e;
	}
	if (raw < AT_DUTY_MIN_STRATUM || tot <= 0 || est <= 0)
		return 1;
	/* A class whose estimate comes from calls not counted per caller takes the raw share. */
	weighted += unknown * raw / tot;
	return weighted / est / (raw / tot);
}

/*
 * class_weight() for the reads' part of a function's read-path calls: all
 * but those under the callers that rs sent by the writes or the turns or
 * counted once as bursts (burst_calls()), or that scale by their own reads
 * there (rscale). 1 unless every interval's read path recorded its classes.
 */
static double rp_class_weight(const struct at_duty_est *d, const struct rp_split *rs,
			      const double *rscale, size_t n, int skip)
{
	double all[AT_READ_CLASSES] = {0}, rest[AT_READ_CLASSES] = {0}, tot = 0, left = 0;

	if (!d->nrp || d->nrp_cls_win != d->nrp)
		return 1;
	for (uint32_t i = 0; i < d->nrp_callers; i++) {
		const struct at_caller_total *c = &d->rp_callers[i];

		add_classes(all, c);
		if (!(rscale && c->caller < n && rscale[c->caller] > 0))
			add_classes(rest, c);
	}
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		rest[k] = fmax(rest[k] - rs->taken[k], 0);
		if (k != skip) {
			tot += all[k];
			left += rest[k];
		}
	}
	/*
	 * The parts split off took every classed call: what the raw shares
	 * leave comes of calls the classes saw but the read path did not (a
	 * window's, while its links came out), and the reads' estimate holds
	 * those already.
	 */
	if (!(left > 0) && tot >= AT_DUTY_MIN_STRATUM)
		return 0;
	return class_weight(d->cls, all, rest, skip);
}

/*
 * Whether the read path splits a function the writes would scale: a tenth
 * of its window calls or more under callers that go by the reads, with
 * most under marked callers; or any under those, with most under them and
 * the turn callers and less than half under callers by the writes: the
 * writes cannot scale it all. redis's clientHasPendingReplies runs twice a
 * request under prepareClientToWrite, three times a writeToClient and once
 * more a reply under handleClientsWithPendingWrites (30-39 %, 45-53 % and
 * 15-18 % of its window calls); all by the writes, it came out at 2.2
 * times its count once, and 39 % high or 10-15 % low in 4 of 300
 * recordings while this wanted those by the reads at half.
 */
static bool split_by_reads(const struct at_duty_est *d, const bool *writes, const bool *turns,
			   const bool *by_reads, size_t n)
{
	double all;
	double r = caller_share(d, by_reads, n, &all);
	double w = caller_share(d, writes, n, &all);
	double t = caller_share(d, turns, n, &all);

	return (r >= READS_SPLIT_SHARE && r + w + t > 0.5) || (r > 0 && w < 0.5 && r + t >= 0.5);
}

bool at_profile_reads_split(const struct at_func_profile *p, const bool *writes, const bool *turns,
			    const bool *reads, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	double est, var, unseen, west, wvar, share, split;
	bool have_writes;

	if (!d->nwin || p->estimated || !d->ncls_win)
		return false;
	return class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes) &&
	       split_by_reads(d, writes, turns, reads, n) &&
	       turns_choice(p, false, have_writes, writes, n, &share, &split) == AT_BY_READS;
}

/*
 * The least share of a function's window calls under callers by the reads
 * that marks it by the reads for its callees, where its own calls fell in
 * too few intervals to go by them (at_profile_by_reads()): nearly all, so
 * that one partly under callers by the writes or the turns keeps out.
 */
#define UNDER_READERS_SHARE 0.9

bool at_profile_under_readers(const struct at_func_profile *p, const bool *reads, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	double all;

	if (!d->nwin || p->estimated || !d->ncls_win || d->nwr_called >= BY_READS_MIN_INTERVALS)
		return false;
	return caller_share(d, reads, n, &all) >= UNDER_READERS_SHARE;
}

void at_profile_estimate_callers(struct at_func_profile *p, const bool *writes, const bool *turns,
				 const bool *by_reads, size_t n)
{
	at_profile_estimate_scaled(p, writes, turns, by_reads, NULL, n);
}

void at_profile_estimate_scaled(struct at_func_profile *p, const bool *writes, const bool *turns,
				const bool *by_reads, const struct at_caller_scales *sc, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	struct at_counts *c = &p->c;
	double rate, hw, exact, est, span;

	if (!d->nwin || p->estimated)
		return;
	/* Calls outside the windows: before the move, always probed. */
	exact = (double)(c->calls - (d->calls < c->calls ? d->calls : c->calls));
	if (d->ncls_win) {
		/*
		 * Read classes: a class stands for a kind of request, so the
		 * windows' mix of requests no longer matters, only each
		 * kind's calls per read. Intervals without classes (none had
		 * reads) go as below. When the writes do not scale all of
		 * the calls, they scale the share made under callers they
		 * scale.
		 */
		double var, pool, rest, west, wvar, unseen, reads_on, reads, share, split = 0;
		double tshare = 0, tpart = 0, tvar = 0, unmeasured = 0;
		struct rp_split rs;
		bool have_writes, by_writes, rp = false;

		by_writes = class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes);
		if (by_writes && split_by_reads(d, writes, turns, by_reads, n))
			by_writes = false;
		/*
		 * Most window calls under turn callers, a few a turn's end: the
		 * turns scale those (turn_callers_estimate()), not the writes.
		 * redis's moduleCount, twice in beforeSleep and once in
		 * afterSleep, fitted the few window writes better and went by
		 * them at 73-98 % low in 15 of 218 recordings. Not at many an
		 * end: writeToClient, once a reply under
		 * handleClientsWithPendingWrites, follows the writes.
		 */
		if (by_writes &&
		    (!many_an_end(d) || whole_turn_callers(d, turns, sc, p->pre_move_calls, n)) &&
		    caller_share(d, turns, n, &split) >= 0.5)
			by_writes = false;
		/*
		 * A few calls a turn's end under turn callers, however small
		 * their share: the writes do not scale those, the read path
		 * splits it. redis's listRewind, once a request under
		 * ACLCheckAllUserCommandPerm and once a turn under each of
		 * handleClientsWithPendingWrites and freeClientsInAsyncFreeQueue,
		 * had 10 of its 247 window calls under the two: all by the
		 * writes, it came out 39 % low.
		 */
		if (by_writes && few_an_end_under_turns(d, turns, n))
			by_writes = false;
		class_reads(d->cls, &reads_on, &reads);
		p->unseen_reads = reads > 0 ? unseen / reads : 0;
		p->by_turns = estimate_choice(p, by_writes, have_writes, est, west, writes, n,
					      &share, &split);
		/*
		 * Many calls a turn's end, most of them under callers that go
		 * by the reads or the writes: the turns cannot scale it all.
		 * A window slows the loop, so its turns serve many requests
		 * each, and a few ends fit anything. clientHasPendingReplies
		 * (875 calls, 5 ends, 13 % under handleClientsWithPendingWrites)
		 * fitted the ends 8 times better than the reads in 1 of 202
		 * redis recordings, and went by them at 20 times its count.
		 * Not at a call or so an end: a caller seen a few times may go
		 * by the reads by mistake (beforeSleep, 4 calls). Nor when
		 * almost none are under turn callers, whatever the callers'
		 * own marks: setGenericCommand, all under setCommand, whose
		 * window calls by time were too few to mark it a reader, fitted
		 * the wakeups 10 times better than the reads and came out at
		 * 26 times its count.
		 */
		if (p->by_turns != AT_BY_READS && !p->turn_windows && many_an_end(d)) {
			double all, rw = caller_share(d, by_reads, n, &all) +
					 caller_share(d, writes, n, &all);
			double tc = caller_share(d, turns, n, &all);

			if (rw >= 0.5 || (all >= AT_DUTY_MIN_STRATUM && tc <= NOT_UNDER_TURNS))
				p->by_turns = AT_BY_READS;
		}
		if (p->by_turns == AT_BY_READS && !by_writes && share < 1) {
			rp = rp_callers_estimate(d, writes, turns, sc, p->pre_move_calls, n, &rs);
			if (!rp)
				tpart = turn_callers_estimate(d, turns, n, &tshare, &tvar);
		}
		tshare = fmin(tshare, 1 - share);
		if (p->by_turns != AT_BY_READS) {
			bool ends = p->by_turns == AT_BY_TURNS;

			/* The reads do not scale it: their unseen classes do not matter. */
			p->unseen_reads = 0;
			/*
			 * The turn windows alone when every interval recorded
			 * them: they count whole turns, and the others, which
			 * open while the loop sleeps, a skewed part of one
			 * (redis's moduleCount, twice in beforeSleep and once
			 * in afterSleep, came out 15 % high by both kinds).
			 */
			if (d->tfit.nsplit == d->nturn)
				est = turns_estimate(tw_strata(d, ends), &var);
			else if (p->turn_windows ||
				 !turn_callers_own(d, turns, sc ? sc->turn_end : NULL, n, &est,
						   &var))
				est = turns_estimate(ends ? &d->tu : &d->wk, &var);
		} else if (by_writes || share >= 1) {
			/* Its own callees keep the first pass's choice (reads) when share is 1. */
			est = west;
			var = wvar;
			p->by_writes = true;
		} else if (rp) {
			/* By the read path: each part scales its own calls there. */
			double rest = fmax(1 - rs.wshare - rs.tshare, 0), rvar;
			struct class_mix mix = {0}, *by_class = NULL;
			double rpart;

			if (sc && sc->reads_path_mix && d->nrp_cls_win == d->nrp) {
				mix.callers = sc->reads_path_mix;
				class_read_scales(d, mix.own);
				by_class = &mix;
			}
			rpart = reader_part(d->rp_callers, d->nrp_callers,
					    sc ? sc->reads_path : NULL, by_class, n, &rest, &rvar);
			double burst = hangup_part(d, &rs, &rest, &est), rw;
			bool hangups = burst > 0;

			if (!hangups) {
				double all = rp_calls(d);

				burst = fmin(burst_calls(d, writes, turns, by_reads,
							 sc ? sc->bursty : NULL, n, &rs),
					     rest * all);
				rest -= burst / all;
			}
			/* The reads' part weighed class by class. */
			rw = rp_class_weight(d, &rs, rpart > 0 && sc ? sc->reads_path : NULL, n,
					     hangups ? AT_CLASS_EOF : -1);
			var = pow(rest, 2) * var + rs.wvar + rs.tvar + rvar;
			est = rest * rw * est + rpart + rs.wpart + rs.tpart + burst;
			p->writes_share = rs.wshare;
			p->turns_share = rs.tshare;
		} else if (share > 0 || tshare > 0) {
			/*
			 * The estimates scale the same window calls: their errors
			 * add up. So do the shares', binomial over the calls split.
			 */
			double rest = 1 - share - tshare, rvar = 0, rpart = 0;

			if (d->ncaller_win == d->ncls_win)
				rpart =
				    reader_part(d->callers, d->ncallers, sc ? sc->reads_time : NULL,
						NULL, n, &rest, &rvar);

			double all[AT_READ_CLASSES], taken[AT_READ_CLASSES], wr[AT_READ_CLASSES];
			double left[AT_READ_CLASSES], rw = 1, ww = 1;

			/* Each part weighed class by class: the reads' and the writes'. */
			if (callers_by_class(
				d, share > 0 ? writes : NULL, tshare > 0 ? turns : NULL,
				rpart > 0 && sc ? sc->reads_time : NULL, n, all, taken, wr)) {
				for (int k = 0; k < AT_READ_CLASSES; k++)
					left[k] = fmax(all[k] - taken[k], 0);
				rw = class_weight(d->cls, all, left, -1);
				if (share > 0 && d->nwr_cls == d->nwr)
					ww = class_weight(d->wr_cls, all, wr, -1);
			}
			var = pow(rest * sqrt(var) + share * sqrt(wvar), 2) + tvar + rvar;
			/* split is 0 when only the turns split it off. */
			if (share > 0)
				var += pow(west - est, 2) * share * (1 - share) / split;
			est = rest * rw * est + share * ww * west + tpart + rpart;
			p->writes_share = share;
			p->turns_share = tshare;
		}
		pool = d->strat_ref_on > 0 ? d->strat_calls / d->strat_ref_on : 0;
		rest = fmax(d->rest_calls, pool * d->rest_ref_all) + d->rest_by_time;
		est += exact + d->strat + rest;
		p->by_time = d->rest_by_time > est / 2;
		hw = 1.96 * sqrt(var + d->strat_var);
		/* The parts that neither the turns nor the writes scaled. */
		if (p->by_turns == AT_BY_READS && !by_writes && !(tshare > 0) &&
		    !(rp && rs.tshare > 0))
			unmeasured += unmeasured_calls(d, turns, n, &d->tu);
		if (p->by_turns == AT_BY_READS && !by_writes && !(share > 0) &&
		    !(rp && rs.wshare > 0))
			unmeasured += unmeasured_calls(d, writes, n, &d->wr);
		finish(p, est, fmax(exact + (double)d->calls, est - hw), est + hw + unmeasured);
		return;
	}
	if (d->strat_ref_on > 0) {
		/*
		 * Calls per socket read of the target, interval by interval
		 * so that a workload's phases keep their own ratios: the probes
		 * slow the target down in the windows, which a rate per second
		 * would carry over to the whole run, while its work per request
		 * read stays the same. Intervals whose windows saw too few reads
		 * take the others' pooled ratio.
		 */
		double pool = d->strat_calls / d->strat_ref_on;
		double rest = fmax(d->rest_calls, pool * d->rest_ref_all) + d->rest_by_time;
		double pool_hw = half_width((uint64_t)d->strat_calls, d->strat_ref_on, d->nref,
					    d->sum_q, d->sum_q2);

		est = exact + d->strat + rest;
		p->by_time = d->rest_by_time > est / 2;
		hw = sqrt(1.96 * 1.96 * d->strat_var + pow(pool_hw * d->rest_ref_all, 2));
		finish(p, est, fmax(exact + (double)d->calls, est - hw), est + hw);
		return;
	}
	if (d->ref_on > 0) {
		/* Too few reads in any one interval: one ratio for the run. */
		rate = (double)d->calls / d->ref_on;
		hw = half_width(d->calls, d->ref_on, d->nref, d->sum_q, d->sum_q2);
		span = d->ref_all;
	} else if (d->on_ns > 0) {
		p->by_time = true;
		rate = (double)d->calls / d->on_ns;
		hw = half_width(d->calls, d->on_ns, d->nwin, d->sum_r, d->sum_r2);
		span = d->len_ns;
	} else {
		return;
	}
	est = exact + rate * span;
	finish(p, est, fmax(exact + (double)d->calls, exact + (rate - hw) * span),
	       exact + (rate + hw) * span);
}

/*
 * Interpolate linearly inside the bucket that holds the q-th value: with
 * 8 sub-buckets per power of two the error stays under 12.5 %.
 */
uint64_t at_hist_quantile(const uint64_t *hist, double q, uint64_t min_ns, uint64_t max_ns)
{
	uint64_t n = 0, seen = 0;
	double rank, lo, hi, v;

	for (uint32_t b = 0; b < AT_HIST_BUCKETS; b++)
		n += hist[b];
	if (!n)
		return 0;
	rank = q * (double)n;
	for (uint32_t b = 0; b < AT_HIST_BUCKETS; b++) {
		if (!hist[b] || (double)(seen + hist[b]) < rank) {
			seen += hist[b];
			continue;
		}
		lo = (double)at_hist_lower(b);
		hi = b + 1 < AT_HIST_BUCKETS ? (double)at_hist_lower(b + 1) : lo * 2;
		v = lo + (hi - lo) * ((rank - (double)seen) / (double)hist[b]);
		if (max_ns && v > (double)max_ns)
			v = (double)max_ns;
		if (v < (double)min_ns)
			v = (double)min_ns;
		return (uint64_t)v;
	}
	return max_ns;
}

double at_entry_quantile(const struct at_window_entry *e, double q)
{
	uint64_t n = 0, seen = 0;
	double rank, lo, hi, v;

	for (uint32_t i = 0; i < e->nhist; i++)
		if (e->hist[i].bucket < AT_HIST_BUCKETS)
			n += e->hist[i].count;
	if (!n)
		return NAN;
	rank = q * (double)n;
	for (uint32_t i = 0; i < e->nhist; i++) {
		const struct at_hist_pair *h = &e->hist[i];

		if (h->bucket >= AT_HIST_BUCKETS)
			continue;
		if (!h->count || (double)(seen + h->count) < rank) {
			seen += h->count;
			continue;
		}
		lo = (double)at_hist_lower(h->bucket);
		hi =
		    h->bucket + 1 < AT_HIST_BUCKETS ? (double)at_hist_lower(h->bucket + 1) : lo * 2;
		v = lo + (hi - lo) * ((rank - (double)seen) / (double)h->count);
		if (e->c.max_ns && v > (double)e->c.max_ns)
			v = (double)e->c.max_ns;
		if (v < (double)e->c.min_ns)
			v = (double)e->c.min_ns;
		return v;
	}
	return (double)e->c.max_ns;
}

void at_profile_explain(FILE *f, const char *name, const struct at_func_profile *p,
			const bool *writes, size_t n)
{
	const struct at_duty_est *d = &p->duty;
	const struct at_turn_fit *t = &d->tfit;
	double est, var, unseen, west = 0, wvar = 0, share, split, uvar, avar, uest, aest, r, w, u,
				 a;
	bool have_writes, by_writes;
	enum at_yardstick choice;

	if (!d->nwin || !d->ncls_win)
		return;
	by_writes = class_choice(d, &est, &var, &unseen, &west, &wvar, &have_writes);
	choice = estimate_choice(p, by_writes, have_writes, est, west, writes, n, &share, &split);
	share = caller_share(d, writes, n, &split);
	uest = turns_estimate(d->tfit.nsplit == d->nturn ? tw_strata(d, true) : &d->tu, &uvar);
	aest = turns_estimate(d->tfit.nsplit == d->nturn ? tw_strata(d, false) : &d->wk, &avar);
	r = w = u = a = NAN;
	if (d->nturn > 1)
		turn_fit_ms(d, &r, &w, &u, &a);
	fprintf(f,
		"%s: seen %" PRIu64 " tw %d reads %.0f+-%.0f writes %.0f+-%.0f(%d,%d) "
		"ends %.0f+-%.0f wakes %.0f+-%.0f | ms r %.3g w %.3g u %.3g a %.3g | "
		"share %.2f nturn %u nsplit %u ot %.0f/%.0f/%.0f tw %.0f/%.0f -> %d eof %.0f of "
		"%.0f\n",
		name, d->calls, p->turn_windows, est, sqrt(var), west, sqrt(wvar), have_writes,
		by_writes, uest, sqrt(uvar), aest, sqrt(avar), r, w, u, a, share, d->nturn,
		t->nsplit, t->ot_calls, t->ot_turns, t->ot_wakes, strata_calls(tw_strata(d, true)),
		strata_on(tw_strata(d, true)), choice, hangup_calls(d), all_cls_calls(d));
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		const struct at_strata *s = &d->cls[k];
		double part = class_part(d->cls, &var, NULL, k);

		if (strata_calls(s) > 0 || part > 0)
			fprintf(f, "  cls %d: %.0f calls, %.0f of %.0f reads%s -> %.0f\n", k,
				strata_calls(s), strata_on(s), strata_all(s),
				first_reads_alone(s, k) ? " (alone)" : "", part);
	}
}
