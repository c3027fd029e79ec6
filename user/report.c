// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "detailreport.h"
#include "report.h"
#include "usdt_rec.h"
#include "util.h"

void at_profile_set_load(struct at_profile_set *ps, const struct at_trace *t)
{
	bool ran = false;

	memset(ps, 0, sizeof(*ps));
	ps->t = t;
	ps->p = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*ps->p));
	ps->n = t->nsyms;
	/* Which functions the turn windows probed: an interval cut before its list counts none. */
	for (size_t i = 0; i < t->nwins; i++)
		for (uint32_t k = 0; k < t->wins[i].nturnwin; k++)
			if (t->wins[i].turnwin[k] < t->wins[i].nduty &&
			    t->wins[i].duty[t->wins[i].turnwin[k]].id < t->nsyms) {
				ps->p[t->wins[i].duty[t->wins[i].turnwin[k]].id].turn_windows =
				    true;
				ran = true;
			}
	for (size_t id = 0; ran && id < t->nsyms; id++)
		ps->p[id].turn_windows_ran = true;
	for (size_t i = 0; i < t->nwins; i++)
		at_profile_set_add_window(ps, &t->wins[i]);
	if (t->has_end)
		ps->duration_ns = t->end.duration_ns;
}

void at_profile_set_init(struct at_profile_set *ps, const struct at_trace *t)
{
	at_profile_set_load(ps, t);
	at_profile_set_estimate(ps);
}

/*
 * A function in the turn windows too saw both kinds of window: its
 * yardsticks are both kinds' sums (into cls_on and wr_cls_on). It is
 * turnwin[i], so its calls in the turn windows alone are tw_calls[i].
 */
static void add_turnwin(struct at_duty_obs *o, const struct at_window *w, uint32_t i,
			uint64_t *cls_on, uint64_t *wr_cls_on)
{
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		cls_on[k] = w->cls_on[k] + w->tw_cls_on[k];
		wr_cls_on[k] = w->wr_cls_on[k] + w->tw_wr_cls_on[k];
		o->ref_on += w->tw_cls_on[k];
	}
	o->cls_on = cls_on;
	o->wr_cls_on = wr_cls_on;
	o->wr_on += w->tw_wr_on;
	o->turn_on += w->tw_turn_on;
	o->wake_on += w->tw_wake_on;
	if (w->has_twcalls) {
		o->has_tw_calls = true;
		o->tw_calls = w->tw_calls[i];
		o->tw_turn_on = w->tw_turn_on;
		o->tw_wake_on = w->tw_wake_on;
		o->tw_bursts = w->tw_cls_on[AT_CLASS_EOF] + w->tw_cls_on[AT_CLASS_ACCEPT] > 0;
	}
}

/*
 * Duty function k's run of a callers list (ascending by duty index): *i
 * walks the list across calls (start at 0). Returns its length, *run its
 * first entry (NULL for an empty list).
 */
static uint32_t caller_run(const struct at_caller_calls *v, uint32_t n, uint32_t k, uint32_t *i,
			   const struct at_caller_calls **run)
{
	uint32_t m = 0;

	while (*i < n && v[*i].k < k)
		(*i)++;
	*run = n ? v + *i : NULL;
	while (*i + m < n && v[*i + m].k == k)
		m++;
	return m;
}

/*
 * Each duty function's own calls on w's read path (own[k]), -1 in its
 * first interval in the windows: it may have moved there in the middle of
 * it, so its calls there and those of its callees under it cover different
 * spans.
 */
static int64_t *rp_own_calls(const struct at_profile_set *ps, const struct at_window *w)
{
	int64_t *own = at_xcalloc(w->nduty + 1, sizeof(*own));

	for (uint32_t k = 0; k < w->nduty; k++) {
		uint32_t id = w->duty[k].id;

		own[k] = w->has_rpath && id < ps->t->nsyms && ps->p[id].duty.nwin ? 0 : -1;
	}
	for (uint32_t i = 0; i < w->nrp_callers; i++)
		if (w->rp_callers[i].k < w->nduty && own[w->rp_callers[i].k] >= 0)
			own[w->rp_callers[i].k] += (int64_t)w->rp_callers[i].calls;
	return own;
}

/*
 * Per entry of a function's read-path callers (run, m of them), the
 * caller's own calls there (own, from rp_own_calls()), into v; -1 where
 * unknown. NULL when none is known (self_own < 0: the function's first
 * interval in the windows, see rp_own_calls()).
 */
static const int64_t *rp_caller_own(const struct at_window *w, const int64_t *own, int64_t self_own,
				    const struct at_caller_calls *run, uint32_t m, int64_t **v,
				    uint32_t *cap)
{
	bool any = false;

	if (self_own < 0 || !m)
		return NULL;
	if (*cap < m) {
		*v = at_xrealloc(*v, m, sizeof(**v));
		*cap = m;
	}
	for (uint32_t i = 0; i < m; i++) {
		uint32_t k = run[i].caller == AT_NO_CALLER ? w->nduty
							   : at_window_duty_index(w, run[i].caller);

		(*v)[i] = k < w->nduty ? own[k] : -1;
		any = any || (*v)[i] >= 0;
	}
	return any ? *v : NULL;
}

void at_profile_set_add_window(struct at_profile_set *ps, const struct at_window *w)
{
	uint32_t j = 0, c = 0, wc = 0, ci = 0, cci = 0, ri = 0, rci = 0, owncap = 0;
	int64_t *own = rp_own_calls(ps, w), *ownv = NULL;
	bool rp_lost = at_window_rp_lost(w);

	/* The yardsticks' counts are kept from the first move on, with the windows' intervals. */
	if (w->nduty && w->end_ns > w->start_ns) {
		ps->sock_span_ns += w->end_ns - w->start_ns;
		if (w->has_yard) {
			ps->sock_sampled = true;
			ps->sock_events += w->yard_counted;
			ps->sock_imputed += w->yard_imputed;
			ps->sock_in_ns += w->yard_in_ns;
		} else {
			ps->sock_events += w->ref_all + (w->has_writes ? w->wr_all : 0);
			ps->sock_in_ns += w->end_ns - w->start_ns;
		}
	}
	for (uint32_t i = 0; i < w->n; i++)
		if (w->e[i].id < ps->t->nsyms) {
			at_profile_add(&ps->p[w->e[i].id], &w->e[i]);
			if (!w->nduty)
				ps->p[w->e[i].id].pre_move_calls += (double)w->e[i].c.calls;
		}
	/* Both lists ascend by id. */
	for (uint32_t k = 0; k < w->nduty; k++) {
		uint32_t id = w->duty[k].id;
		uint64_t calls = 0;

		while (j < w->n && w->e[j].id < id)
			j++;
		if (j < w->n && w->e[j].id == id)
			calls = w->e[j].c.calls;
		/*
		 * A function of the turn windows in an interval without their list
		 * (a file cut between its chunks): its calls from both kinds of
		 * window would meet one kind's yardsticks. Its window calls stay
		 * as seen.
		 */
		if (id < ps->t->nsyms && ps->p[id].turn_windows && w->has_turns && !w->has_turnwin)
			continue;
		if (id < ps->t->nsyms) {
			uint64_t cc[AT_SLOTS] = {0}, tw_cls[AT_READ_CLASSES],
				 tw_wr[AT_READ_CLASSES];
			struct at_duty_obs o = {
			    .calls = calls,
			    .on_ns = w->duty[k].on_ns,
			    .len_ns = w->end_ns - w->start_ns,
			    .ref_on = w->ref_on,
			    .ref_all = w->ref_all,
			};

			for (; c < w->ncls && w->cls[c].k <= k; c++)
				if (w->cls[c].k == k)
					cc[w->cls[c].cls] = w->cls[c].calls;
			for (; wc < w->nwr_cls && w->wr_cls[wc].k <= k; wc++)
				if (w->wr_cls[wc].k == k)
					cc[AT_WR_CLASS(w->wr_cls[wc].cls)] = w->wr_cls[wc].calls;
			if (w->has_cls) {
				o.cls_all = w->cls_all;
				o.cls_on = w->cls_on;
				o.cls_calls = cc;
				o.has_writes = w->has_writes;
				o.wr_all = w->wr_all;
				o.wr_on = w->wr_on;
				if (w->has_wr_cls) {
					o.wr_cls_all = w->wr_cls_all;
					o.wr_cls_on = w->wr_cls_on;
				}
				o.has_callers = w->has_callers;
				o.has_turns = w->has_turns;
				o.turn_all = w->turn_all;
				o.turn_on = w->turn_on;
				o.wake_all = w->wake_all;
				o.wake_on = w->wake_on;
				int64_t twi = at_window_turnwin(w, k);

				if (twi >= 0) {
					add_turnwin(&o, w, (uint32_t)twi, tw_cls, tw_wr);
					ps->p[id].turn_windows = true;
				}
			}
			o.ncallers = caller_run(w->callers, w->ncallers, k, &ci, &o.callers);
			o.has_cls_callers = w->has_cls_callers;
			o.ncls_callers =
			    caller_run(w->cls_callers, w->ncls_callers, k, &cci, &o.cls_callers);
			o.nrp_cls_callers = caller_run(w->rp_cls_callers, w->nrp_cls_callers, k,
						       &rci, &o.rp_cls_callers);
			o.has_rpath = w->has_rpath;
			/*
			 * In 4 of 128 redis recordings such an interval kept 1 end and
			 * 1-29 writes: writeToClient and listDelNode went 28-33 % low
			 * by the writes, clientHasPendingReplies 40 % high.
			 */
			o.rp_turns = rp_lost ? 0 : w->rp_turns;
			o.rp_writes = rp_lost ? 0 : w->rp_writes;
			o.nrp_callers =
			    caller_run(w->rp_callers, w->nrp_callers, k, &ri, &o.rp_callers);
			o.rp_caller_own = rp_caller_own(w, own, own[k], o.rp_callers, o.nrp_callers,
							&ownv, &owncap);
			at_profile_add_duty(&ps->p[id], &o);
		}
	}
	free(ownv);
	free(own);
	if (w->end_ns > ps->duration_ns)
		ps->duration_ns = w->end_ns;
}

/*
 * ADAPTRACE_EXPLAIN, for working on the model: why each function went by
 * its yardstick, and its window calls per caller with the caller's choice
 * (W: by the writes, T: a turn caller, R: by the reads alone, Ru: by the
 * reads with no scale of its own, settle_marks()).
 */
static void explain(const struct at_profile_set *ps, const bool *writes, const bool *turns,
		    const bool *reads, const bool *unscaled)
{
	for (size_t i = 0; i < ps->t->nsyms; i++) {
		const struct at_duty_est *d = &ps->p[i].duty;

		at_profile_explain(stderr, ps->t->syms[i].name, &ps->p[i], writes, ps->t->nsyms);
		for (uint32_t c = 0; c < d->ncallers; c++) {
			uint32_t id = d->callers[c].caller;
			bool known = id < ps->t->nsyms;

			fprintf(stderr, "  < %s %.0f%s%s%s%s ot %.0f\n",
				known ? ps->t->syms[id].name : "-", d->callers[c].calls,
				known && writes[id] ? " W" : "", known && turns[id] ? " T" : "",
				known && reads[id] ? " R" : "", known && unscaled[id] ? "u" : "",
				known ? ps->p[id].duty.tfit.ot_calls : 0);
		}
		if (d->nrp_callers)
			fprintf(stderr, "  rp: %u of %u intervals, %u turned, %u wrote\n", d->nrp,
				d->ncls_win, d->nrp_turned, d->nrp_wrote);
		for (uint32_t c = 0; c < d->nrp_callers; c++) {
			const struct at_caller_total *r = &d->rp_callers[c];
			bool known = r->caller < ps->t->nsyms;

			fprintf(stderr,
				"  <rp %s %.0f in %u%s%s of %.0f turns' ends, %.0f writes; %.0f of "
				"its %.0f\n",
				known ? ps->t->syms[r->caller].name : "-", r->calls, r->nwin,
				known && writes[r->caller] ? " W" : "",
				known && turns[r->caller] ? " T" : "", d->rp_turns, d->rp_writes,
				r->matched, r->own);
		}
	}
}

/*
 * The marks, made to follow the estimates they stand for, down chains of
 * callers until none moves (marks only leave the writes and join the
 * reads, so it ends):
 * - A caller marked by the writes for its own fit whose callers by the
 *   reads split its own estimate (at_profile_reads_split()) is marked by
 *   the reads: redis's resetClient, all under commandProcessed, went by
 *   commandProcessed's writes mark at -27 % while commandProcessed went
 *   by the reads, 1 % off.
 * - A mark for replies is taken again against the writes marks by own
 *   fit left, on which it stood (redis's GET path under call).
 * - A caller whose window calls came in too few intervals to go by the
 *   reads itself, nearly all under callers by the reads, is marked by the
 *   reads with no scale of its own (unscaled[]): its callees' calls
 *   under it go with their own reads, not with their fit to the writes.
 *   redis's addReplyLongLongWithPrefix, 49 of 55 window calls under
 *   addReplyBulk (2 intervals, under getGenericCommand, 2 as well, under
 *   call), went by its writes at -35.4 %; its reads were 0.5 % off. With
 *   a scale from those intervals, zfree's parts under such callers
 *   (setKey) came out 10.6-12.8 % off in 5 of 1,248 recordings. Not a
 *   caller seen in bursts: its callees' calls there count once, as seen.
 * Each pass reads the writes marks as they were before it.
 */
static void settle_marks(const struct at_profile_set *ps, bool *writes, const bool *turns,
			 bool *reads, const bool *replies, bool *unscaled)
{
	size_t n = ps->t->nsyms;
	bool *was = at_xcalloc(n + 1, sizeof(*was));
	bool *own = at_xcalloc(n + 1, sizeof(*own));

	for (bool moved = true; moved;) {
		moved = false;
		for (size_t i = 0; i < n; i++) {
			was[i] = writes[i];
			own[i] = writes[i] && !replies[i];
		}
		for (size_t i = 0; i < n; i++) {
			const struct at_func_profile *p = &ps->p[i];

			if (was[i] &&
			    (replies[i] ? !at_profile_rp_replies(p, own, turns, n)
					: at_profile_reads_split(p, was, turns, reads, n))) {
				writes[i] = false;
				moved = true;
			}
		}
		for (size_t i = 0; i < n; i++)
			if (was[i] && !writes[i])
				reads[i] = !replies[i] || at_profile_by_reads(&ps->p[i], writes, n);
		/* Marks set here may decide others' in the same pass: they only add. */
		for (size_t i = 0; i < n; i++)
			if (!writes[i] && !turns[i] && !reads[i] && !at_profile_bursty(&ps->p[i]) &&
			    at_profile_under_readers(&ps->p[i], reads, n))
				reads[i] = unscaled[i] = moved = true;
	}
	free(own);
	free(was);
}

void at_profile_set_estimate(struct at_profile_set *ps)
{
	/*
	 * First which functions the writes alone scale, then which of the turn
	 * windows' go by the turns or the wakeups: their callees' calls under
	 * them follow the writes or the turns.
	 */
	bool *writes = at_xcalloc(ps->t->nsyms + 1, sizeof(*writes));
	bool *turns = at_xcalloc(ps->t->nsyms + 1, sizeof(*turns));
	bool *reads = at_xcalloc(ps->t->nsyms + 1, sizeof(*reads));
	bool *replies = at_xcalloc(ps->t->nsyms + 1, sizeof(*replies));
	bool *unscaled = at_xcalloc(ps->t->nsyms + 1, sizeof(*unscaled));
	double *rtime = at_xcalloc(ps->t->nsyms + 1, sizeof(*rtime));
	double *rpath = at_xcalloc(ps->t->nsyms + 1, sizeof(*rpath));
	double *wpath = at_xcalloc(ps->t->nsyms + 1, sizeof(*wpath));
	double *tend = at_xcalloc(ps->t->nsyms + 1, sizeof(*tend));
	bool *bursty = at_xcalloc(ps->t->nsyms + 1, sizeof(*bursty));
	double *bursts = at_xcalloc(ps->t->nsyms + 1, sizeof(*bursts));
	double *pre = at_xcalloc(ps->t->nsyms + 1, sizeof(*pre));
	double *wany = at_xcalloc(ps->t->nsyms + 1, sizeof(*wany));
	double *rmix = at_xcalloc(ps->t->nsyms + 1, sizeof(*rmix));
	struct at_caller_scales sc = {rtime, rpath, wpath, tend, bursty, bursts, pre, wany, rmix};

	for (size_t i = 0; i < ps->t->nsyms; i++)
		pre[i] = ps->p[i].pre_move_calls;

	for (size_t i = 0; i < ps->t->nsyms; i++)
		writes[i] = at_profile_by_writes(&ps->p[i]);
	for (size_t i = 0; i < ps->t->nsyms; i++)
		turns[i] = at_profile_turn_caller(&ps->p[i], writes, ps->t->nsyms);
	{
		/*
		 * Outside the turn windows, once a turn under turn callers alone:
		 * redis's handleClientsWithPendingWrites went by the turns on its
		 * own fit in one recording, unmarked, and listRewind and listNext
		 * under it went 28-35 % low by the reads.
		 */
		bool *under = at_xcalloc(ps->t->nsyms + 1, sizeof(*under));

		for (size_t i = 0; i < ps->t->nsyms; i++)
			under[i] = !turns[i] &&
				   at_profile_under_turn_callers(&ps->p[i], turns, ps->t->nsyms);
		for (size_t i = 0; i < ps->t->nsyms; i++)
			turns[i] = turns[i] || under[i];
		free(under);
	}
	/* A turn-window caller goes by the turns even when the writes would scale it otherwise. */
	for (size_t i = 0; i < ps->t->nsyms; i++)
		writes[i] = writes[i] && !turns[i];
	/* Read first: a mark set here must not decide another's. */
	for (size_t i = 0; i < ps->t->nsyms; i++)
		replies[i] = !writes[i] && !turns[i] &&
			     at_profile_rp_replies(&ps->p[i], writes, turns, ps->t->nsyms);
	for (size_t i = 0; i < ps->t->nsyms; i++)
		writes[i] = writes[i] || replies[i];
	for (size_t i = 0; i < ps->t->nsyms; i++)
		reads[i] =
		    !writes[i] && !turns[i] && at_profile_by_reads(&ps->p[i], writes, ps->t->nsyms);
	settle_marks(ps, writes, turns, reads, replies, unscaled);
	if (at_env_flag("ADAPTRACE_EXPLAIN"))
		explain(ps, writes, turns, reads, unscaled);
	/* writes[] holds no turn caller (see above). */
	for (size_t i = 0; i < ps->t->nsyms; i++) {
		if (reads[i] && !unscaled[i]) {
			at_profile_reads_scales(&ps->p[i], &rtime[i], &rpath[i]);
			rmix[i] = at_profile_rp_class_mix(&ps->p[i], rpath[i]);
		}
		if (writes[i])
			at_profile_writes_scales(&ps->p[i], &wpath[i], &wany[i]);
		if (turns[i])
			tend[i] = at_profile_turn_end_scale(&ps->p[i]);
		bursty[i] = at_profile_bursty(&ps->p[i]);
	}
	/* Down chains of such callers: a scale found in one pass serves the next. */
	for (int pass = 0; pass < 4; pass++)
		for (size_t i = 0; i < ps->t->nsyms; i++)
			if (writes[i] && !(wpath[i] > 0)) {
				wpath[i] = at_profile_inherited_writes_scale(&ps->p[i], wpath,
									     ps->t->nsyms);
				if (wpath[i] > 0)
					wany[i] = wpath[i];
			}
	/*
	 * After every bursty[]: a function's share reads its callers'. Only
	 * the callers by the writes use it (rp_callers_estimate()).
	 */
	for (size_t i = 0; i < ps->t->nsyms; i++)
		if (writes[i])
			bursts[i] = at_profile_burst_share(&ps->p[i], writes, turns, reads, bursty,
							   ps->t->nsyms);
	for (size_t i = 0; i < ps->t->nsyms; i++)
		at_profile_estimate_scaled(&ps->p[i], writes, turns, reads, &sc, ps->t->nsyms);
	free(wany);
	free(rmix);
	free(pre);
	free(bursts);
	free(bursty);
	free(tend);
	free(wpath);
	free(rpath);
	free(rtime);
	free(unscaled);
	free(replies);
	free(reads);
	free(turns);
	free(writes);
}

void at_profile_set_free(struct at_profile_set *ps)
{
	for (size_t i = 0; ps->p && i < ps->n; i++)
		at_profile_free(&ps->p[i]);
	free(ps->p);
	ps->p = NULL;
}

/* Derived per-function figures, computed once for sorting and output. */
struct row {
	uint32_t id;
	const char *name;
	const struct at_func_profile *p;
	double mean, p50, p90, p99, cov;
	double key; /* the --sort value; rows sort by it descending, then by name */
};

static const char *sort_keys[] = {"total", "calls", "self",   "mean", "p50", "p90",
				  "p99",   "max",   "errors", "name", NULL};

bool at_report_sort_valid(const char *key)
{
	for (int i = 0; sort_keys[i]; i++)
		if (!strcmp(key, sort_keys[i]))
			return true;
	return false;
}

static double sort_value(const struct row *r, const char *sort)
{
	const struct at_counts *c = &r->p->c;

	if (!strcmp(sort, "name"))
		return 0; /* ties everywhere: the name decides */
	if (!strcmp(sort, "calls"))
		return (double)c->calls;
	if (!strcmp(sort, "self"))
		return (double)c->self_ns;
	if (!strcmp(sort, "mean"))
		return r->mean;
	if (!strcmp(sort, "p50"))
		return r->p50;
	if (!strcmp(sort, "p90"))
		return r->p90;
	if (!strcmp(sort, "p99"))
		return r->p99;
	if (!strcmp(sort, "max"))
		return (double)c->max_ns;
	if (!strcmp(sort, "errors"))
		return (double)c->errors;
	return (double)c->total_ns;
}

static void fill_row(struct row *r, const struct at_trace *t, uint32_t id,
		     const struct at_func_profile *p, const char *sort)
{
	const struct at_counts *c = &p->c;
	double var;

	r->id = id;
	r->name = t->syms[id].name;
	r->p = p;
	r->mean = c->returns ? (double)c->sum_ns / (double)c->returns : 0;
	r->p50 = (double)at_hist_quantile(p->hist, 0.50, c->min_ns, c->max_ns);
	r->p90 = (double)at_hist_quantile(p->hist, 0.90, c->min_ns, c->max_ns);
	r->p99 = (double)at_hist_quantile(p->hist, 0.99, c->min_ns, c->max_ns);
	var = c->returns ? c->sumsq / (double)c->returns - r->mean * r->mean : 0;
	r->cov = r->mean > 0 ? sqrt(fmax(var, 0)) / r->mean : 0;
	r->key = sort_value(r, sort);
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return strcmp(x->name, y->name);
}

static const char *binary_of(const struct at_trace *t, uint32_t id)
{
	uint32_t b = t->syms[id].binary;

	return b < t->nbins ? t->bins[b].path : "";
}

/* A cost the recorder measured and kept in the header (ns), or -1. */
static double header_ns(const struct at_trace *t, const char *key)
{
	const char *v = at_trace_get(t, key);
	double ns = v ? strtod(v, NULL) : -1;

	return ns >= 0 && ns < 1e9 ? ns : -1;
}

/* The coarse probes' cost per call measured when recording (ns), or 0. */
static double probe_hit_ns(const struct at_trace *t)
{
	double ns = header_ns(t, "probe_hit_ns");

	return ns > 0 ? ns : 0;
}

/* The socket yardsticks' cost per read or write measured when recording (ns), or -1. */
static double yardstick_event_ns(const struct at_trace *t)
{
	return header_ns(t, "yardstick_event_ns");
}

/*
 * What id's probes cost the target per second of the recording (ms of CPU):
 * the calls they saw, not the estimate of a duty-cycled function.
 */
static double probe_ms_per_s(const struct at_profile_set *ps, const struct row *r, double hit_ns)
{
	if (!(hit_ns > 0) || !ps->duration_ns)
		return 0;
	uint64_t seen = r->p->estimated ? r->p->seen_calls : r->p->c.calls;

	return (double)seen * hit_ns / (double)ps->duration_ns * 1e3;
}

/* Most calls first; ties by caller (none first), so the order is the same every run. */
static int most_calls_first(const void *a, const void *b)
{
	const struct at_caller_total *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return at_caller_rank(x->caller) < at_caller_rank(y->caller) ? -1 : 1;
}

/* A function by the reads: which shares of its window calls go by the writes and the turns. */
static const char *shares_label(const struct at_func_profile *p)
{
	if (p->writes_share > 0)
		return p->turns_share > 0 ? "reads+writes+turns" : "reads+writes";
	return p->turns_share > 0 ? "reads+turns" : "reads";
}

/*
 * An estimated function's window calls per innermost traced caller, most
 * first (name null: no traced caller): what the writes share splits.
 */
static void callers_json(FILE *f, const struct at_trace *t, const struct at_duty_est *d)
{
	struct at_caller_total *v;

	if (!d->ncaller_win)
		return;
	v = at_xcalloc(d->ncallers + 1, sizeof(*v));
	if (d->ncallers) {
		memcpy(v, d->callers, d->ncallers * sizeof(*v));
		qsort(v, d->ncallers, sizeof(*v), most_calls_first);
	}
	fputs(",\"window_callers\":[", f);
	for (uint32_t i = 0; i < d->ncallers; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		if (v[i].caller < t->nsyms)
			at_esc_json(f, t->syms[v[i].caller].name);
		else
			fputs("null", f);
		fprintf(f, ",\"calls\":%.0f}", v[i].calls);
	}
	fputc(']', f);
	free(v);
}

static void print_json(FILE *f, const struct at_profile_set *ps, struct row *rows, size_t n)
{
	double hit_ns = probe_hit_ns(ps->t), yard_ns = yardstick_event_ns(ps->t);
	const struct at_trace *t = ps->t;
	const char *target = at_trace_get(t, "target");
	static const char *diag_names[AT_DIAG_NR] = {"stack_overflow", "unmatched_returns",
						     "abandoned_frames", "no_storage"};

	fputs("{\"target\":", f);
	at_esc_json(f, target ? target : "");
	if (at_trace_get(t, "detail_link")) {
		fputs(",\"detail_link\":", f);
		at_esc_json(f, at_trace_get(t, "detail_link"));
	}
	fprintf(f, ",\"duration_ns\":%" PRIu64 ",\"complete\":%s,\"probe_hit_ns\":%.0f",
		ps->duration_ns, t->has_end ? "true" : "false", hit_ns);
	if (yard_ns >= 0)
		fprintf(f,
			",\"yardstick_event_ns\":%.0f,\"socket_events\":%" PRIu64
			",\"socket_events_ns\":%" PRIu64,
			yard_ns, ps->sock_events, ps->sock_span_ns);
	if (yard_ns >= 0 && ps->sock_sampled)
		fprintf(f,
			",\"socket_yardsticks_in_ns\":%" PRIu64
			",\"socket_events_imputed\":%" PRIu64,
			ps->sock_in_ns, ps->sock_imputed);
	fputs(",\"functions\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct at_counts *c = &rows[i].p->c;
		const struct at_detail_stats *ds = at_detail_stats_of(t, rows[i].id);
		/* Sampled calls still running when tracing stopped: no event yet. */
		uint64_t unfinished = ds && ds->sampled > ds->events + ds->dropped
					  ? ds->sampled - ds->events - ds->dropped
					  : 0;

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		at_esc_json(f, t->syms[rows[i].id].name);
		fputs(",\"binary\":", f);
		at_esc_json(f, binary_of(t, rows[i].id));
		fprintf(f,
			",\"calls\":%" PRIu64 ",\"returns\":%" PRIu64 ",\"total_ns\":%" PRIu64
			",\"self_ns\":%" PRIu64 ",\"mean_ns\":%.0f,\"p50_ns\":%.0f,\"p90_ns\":%.0f"
			",\"p99_ns\":%.0f,\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			",\"cov\":%.4f,\"errors\":%" PRIu64 ",\"max_concurrency\":%" PRIu64
			",\"probe_ms_per_s\":%.3f,\"estimated\":%s,\"detail\":{\"events\":%" PRIu64
			",\"dropped\":%" PRIu64 ",\"rate\":%.6g,\"sampled\":%" PRIu64
			",\"unfinished\":%" PRIu64 "}",
			c->calls, c->returns, c->total_ns, c->self_ns, rows[i].mean, rows[i].p50,
			rows[i].p90, rows[i].p99, c->min_ns, c->max_ns, rows[i].cov, c->errors,
			c->max_conc, probe_ms_per_s(ps, &rows[i], hit_ns),
			rows[i].p->estimated ? "true" : "false", ds ? ds->events : 0,
			ds ? ds->dropped : 0, ds ? ds->rate : 0, ds ? ds->sampled : 0, unfinished);
		/* Estimates carry their interval, so no one mistakes them for counts. */
		if (rows[i].p->estimated) {
			fprintf(f,
				",\"calls_ci95\":[%.0f,%.0f],\"estimated_by\":\"%s\""
				",\"unseen_reads_pct\":%.1f",
				rows[i].p->calls_lo, rows[i].p->calls_hi,
				rows[i].p->by_time		     ? "time"
				: rows[i].p->by_turns == AT_BY_TURNS ? "turns"
				: rows[i].p->by_turns == AT_BY_WAKES ? "wakeups"
				: rows[i].p->by_writes		     ? "writes"
								     : shares_label(rows[i].p),
				100 * rows[i].p->unseen_reads);
			if (!rows[i].p->by_time && rows[i].p->writes_share > 0)
				fprintf(f, ",\"writes_share_pct\":%.1f",
					100 * rows[i].p->writes_share);
			if (!rows[i].p->by_time && rows[i].p->turns_share > 0)
				fprintf(f, ",\"turns_share_pct\":%.1f",
					100 * rows[i].p->turns_share);
			fprintf(f, ",\"turn_windows\":%s",
				rows[i].p->turn_windows ? "true" : "false");
			callers_json(f, t, &rows[i].p->duty);
		}
		fputc('}', f);
	}
	fputs("],\"usdt\":[", f);
	at_usdt_report_json(f, ps);
	fprintf(f, "],\"turn_ends_unseen\":%s",
		at_windows_turn_ends_unseen(t->wins, t->nwins) ? "true" : "false");
	fprintf(f, ",\"dropped_events\":%" PRIu64 ",\"diagnostics\":{",
		t->has_end ? t->end.dropped_events : 0);
	for (int k = 0; k < AT_DIAG_NR; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", diag_names[k],
			t->has_end ? t->end.diag[k] : 0);
	fputs("}}\n", f);
}

static void hist_row(FILE *f, uint64_t lo, uint64_t hi, uint64_t n, uint64_t peak)
{
	int width = peak ? (int)((n * 50 + peak - 1) / peak) : 0;
	char a[32], b[32];

	at_fmt_ns(a, sizeof(a), (double)lo);
	at_fmt_ns(b, sizeof(b), (double)hi);
	fprintf(f, "[%9s, %9s) %10" PRIu64 " |%-50.*s|\n", a, b, n, width,
		"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
}

/*
 * Rows at the histogram's own 12.5 % resolution when the spread is narrow,
 * else one row per power of two, like bpftrace's hist().
 */
static void print_hist(FILE *f, const struct at_trace *t, const struct row *r)
{
	const uint64_t *h = r->p->hist;
	uint64_t pows[AT_HIST_MAX_POW + 1] = {0}, peak = 0;
	int first = -1, last = -1;

	fputc('\n', f);
	at_esc_text(f, t->syms[r->id].name, 0);
	fputs(" (", f);
	at_esc_text(f, at_base_name(binary_of(t, r->id)), 0);
	fprintf(f, "): %" PRIu64 " timed calls\n", r->p->c.returns);
	for (int b = 0; b < AT_HIST_BUCKETS; b++) {
		if (!h[b])
			continue;
		if (first < 0)
			first = b;
		last = b;
	}
	if (first < 0)
		return;
	if (last - first < 32) {
		for (int b = first; b <= last; b++)
			if (h[b] > peak)
				peak = h[b];
		for (int b = first; b <= last; b++)
			hist_row(f, at_hist_lower(b), at_hist_lower(b + 1), h[b], peak);
		return;
	}
	for (int b = first; b <= last; b++) {
		uint64_t v = at_hist_lower(b);

		pows[v ? 63 - __builtin_clzll(v) : 0] += h[b];
	}
	first = 63 - __builtin_clzll(at_hist_lower(first) | 1);
	last = 63 - __builtin_clzll(at_hist_lower(last) | 1);
	for (int p = first; p <= last; p++)
		if (pows[p] > peak)
			peak = pows[p];
	for (int p = first; p <= last; p++)
		hist_row(f, p ? 1ULL << p : 0, 1ULL << (p + 1), pows[p], peak);
}

/* Counts are exact, so the table shows them whole. */
static char *exact(char *buf, size_t len, uint64_t n)
{
	snprintf(buf, len, "%" PRIu64, n);
	return buf;
}

/* A duty-cycled function's calls: an estimate, marked with ~. */
static char *calls_text(char *buf, size_t len, const struct at_func_profile *p)
{
	snprintf(buf, len, "%s%" PRIu64, p->estimated ? "~" : "", p->c.calls);
	return buf;
}

static void print_table(FILE *f, const struct at_profile_set *ps, struct row *rows, size_t n,
			size_t shown)
{
	const struct at_trace *t = ps->t;
	int w = 8;
	char b[9][24];

	for (size_t i = 0; i < shown; i++) {
		int len = (int)strlen(t->syms[rows[i].id].name);

		if (t->nbins > 1)
			len += (int)strlen(at_base_name(binary_of(t, rows[i].id))) + 3;
		if (len > w)
			w = len;
	}
	if (w > 48)
		w = 48;
	fprintf(f, "%-*s %11s %9s %9s %9s %9s %9s %9s %9s %8s", w, "FUNCTION", "CALLS", "TOTAL",
		"SELF", "MEAN", "P50", "P90", "P99", "MAX", "ERRORS");
	if (t->ndstats)
		fprintf(f, " %9s %8s %6s", "EVENTS", "DROPPED", "RATE");
	fputc('\n', f);
	for (size_t i = 0; i < shown; i++) {
		const struct row *r = &rows[i];
		const struct at_counts *c = &r->p->c;
		char name[256], shown_name[256];

		if (t->nbins > 1)
			snprintf(name, sizeof(name), "%s [%s]", t->syms[r->id].name,
				 at_base_name(binary_of(t, r->id)));
		else
			snprintf(name, sizeof(name), "%s", t->syms[r->id].name);
		fprintf(
		    f, "%-*s %11s %9s %9s %9s %9s %9s %9s %9s %8s", w,
		    at_esc_text_buf(
			shown_name,
			(size_t)w < sizeof(shown_name) ? (size_t)w + 1 : sizeof(shown_name), name),
		    calls_text(b[0], sizeof(b[0]), r->p),
		    at_fmt_ns(b[1], sizeof(b[1]), (double)c->total_ns),
		    at_fmt_ns(b[2], sizeof(b[2]), (double)c->self_ns),
		    at_fmt_ns(b[3], sizeof(b[3]), r->mean), at_fmt_ns(b[4], sizeof(b[4]), r->p50),
		    at_fmt_ns(b[5], sizeof(b[5]), r->p90), at_fmt_ns(b[6], sizeof(b[6]), r->p99),
		    at_fmt_ns(b[7], sizeof(b[7]), (double)c->max_ns),
		    exact(b[8], sizeof(b[8]), c->errors));
		if (t->ndstats) {
			const struct at_detail_stats *ds = at_detail_stats_of(t, r->id);

			if (ds)
				fprintf(f, " %9s %8s %6.4f", exact(b[0], sizeof(b[0]), ds->events),
					exact(b[1], sizeof(b[1]), ds->dropped), ds->rate);
			else
				fprintf(f, " %9s %8s %6s", "-", "-", "-");
		}
		fputc('\n', f);
	}
	if (shown < n)
		fprintf(f, "... %zu more function%s with calls (use --top to show more)\n",
			n - shown, n - shown == 1 ? "" : "s");
}

/* What the coarse probes cost the target, and where: the functions to leave out (-x). */
static void print_probe_cost(FILE *f, const struct at_profile_set *ps, const struct row *rows,
			     size_t n)
{
	double hit_ns = probe_hit_ns(ps->t), total = 0, ms[3] = {0}, yard_ns;
	const struct row *top[3] = {NULL};

	if (!(hit_ns > 0) || !n || !ps->duration_ns)
		return;
	for (size_t i = 0; i < n; i++) {
		double m = probe_ms_per_s(ps, &rows[i], hit_ns);

		total += m;
		for (int k = 0; k < 3; k++) {
			if (m > 0 && (!top[k] || m > ms[k])) {
				memmove(&top[k + 1], &top[k], (size_t)(2 - k) * sizeof(top[0]));
				memmove(&ms[k + 1], &ms[k], (size_t)(2 - k) * sizeof(ms[0]));
				top[k] = &rows[i];
				ms[k] = m;
				break;
			}
		}
	}
	fprintf(f, " Probe cost: about %.1f ms of the target's CPU per second (%.0f ns a call",
		total, hit_ns);
	for (int k = 0; k < 3 && top[k]; k++) {
		fputs(k ? ", " : "; most: ", f);
		at_esc_text(f, ps->t->syms[top[k]->id].name, 0);
		fprintf(f, " %.1f", ms[k]);
	}
	fputs(").", f);
	yard_ns = yardstick_event_ns(ps->t);
	if (yard_ns > 0 && ps->sock_events && ps->sock_span_ns && !ps->sock_sampled)
		fprintf(
		    f,
		    " The budget's socket yardsticks cost at least %.1f ms a second more (%" PRIu64
		    " reads and writes of the target in the %.1f s with windows, at %.0f ns: "
		    "what each costs every process, measured at the start).",
		    (double)ps->sock_events * yard_ns / (double)ps->sock_span_ns * 1e3,
		    ps->sock_events, (double)ps->sock_span_ns / 1e9, yard_ns);
	else if (yard_ns > 0 && ps->sock_span_ns && ps->sock_sampled)
		fprintf(f,
			" The budget's socket yardsticks cost at least %.1f ms a second more: they "
			"were in for %.0f %% of the %.1f s with windows and counted %" PRIu64
			" reads and writes of the target, at %.0f ns (what each costs every "
			"process, measured at the start); %" PRIu64
			" more were imputed from its system calls while they were out.",
			(double)ps->sock_events * yard_ns / (double)ps->sock_span_ns * 1e3,
			100.0 * (double)ps->sock_in_ns / (double)ps->sock_span_ns,
			(double)ps->sock_span_ns / 1e9, ps->sock_events, yard_ns, ps->sock_imputed);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Say which figures are estimates, and how good they are: the most called
 * one's interval and the median one's (a rarely called function seen a few
 * times in the windows gets a wide interval that says little of the rest).
 */
static void print_estimates(FILE *f, const struct at_profile_set *ps)
{
	const struct at_func_profile *top = NULL;
	const char *top_name = NULL;
	double *rel = at_xcalloc(ps->t->nsyms + 1, sizeof(*rel));
	size_t n = 0, nrel = 0, ntime = 0;
	double unseen = 0;

	for (size_t i = 0; i < ps->t->nsyms; i++) {
		const struct at_func_profile *p = &ps->p[i];

		if (!p->estimated)
			continue;
		n++;
		ntime += p->by_time;
		unseen = fmax(unseen, p->unseen_reads);
		if (!p->c.calls)
			continue;
		rel[nrel++] = (p->calls_hi - p->calls_lo) / 2 / (double)p->c.calls;
		if (!top || p->c.calls > top->c.calls) {
			top = p;
			top_name = ps->t->syms[i].name;
		}
	}
	if (!n) {
		free(rel);
		return;
	}
	fprintf(f,
		" %zu function%s cost more than --budget allowed and %s probed in short "
		"windows: the figures marked ~ are estimates scaled from those windows",
		n, n == 1 ? "" : "s", n == 1 ? "was" : "were");
	if (top) {
		qsort(rel, nrel, sizeof(*rel), cmp_double);
		fprintf(f, " (95 %% intervals of the calls: +-%.1f %% for the most called, ",
			100 * (top->calls_hi - top->calls_lo) / 2 / (double)top->c.calls);
		at_esc_text(f, top_name, 0);
		fprintf(f, "; +-%.1f %% at the median; --json gives each)", 100 * rel[nrel / 2]);
	}
	free(rel);
	fputc('.', f);
	if (ntime)
		fprintf(f,
			" %zu of them went by time, the target having read no socket: %s the "
			"windows' slowdown and %s.",
			ntime, ntime == 1 ? "it carries" : "they carry",
			ntime == 1 ? "undercounts" : "undercount");
	if (at_windows_turn_ends_unseen(ps->t->wins, ps->t->nwins))
		fputs(" The windows never saw a turn of the target's event loop end (its first "
		      "socket write after the reads they counted) with its calls: under the probes "
		      "each turn ran past the windows' cap, or the calls went unrecorded while "
		      "probes came out, so work done at a turn's end, such as sending replies, may "
		      "be far above its estimate and interval.",
		      f);
	/* Below 1 % it moves no estimate much (redis-benchmark's few CONFIG GETs). */
	if (unseen >= 0.01)
		fprintf(f,
			" %.0f %% of the target's socket reads were of a size the windows almost "
			"never saw: the calls those reads lead to are guessed from the other "
			"sizes' and may be far off (the intervals allow for none to twice the "
			"guess); record longer for more windows.",
			100 * unseen);
}

static void print_footer(FILE *f, const struct at_profile_set *ps, const struct row *rows, size_t n)
{
	const struct at_trace *t = ps->t;
	char d[32];

	fprintf(f, "\n%zu of %zu traced functions were called in %s.", n, t->nsyms,
		at_fmt_ns(d, sizeof(d), (double)ps->duration_ns));
	print_estimates(f, ps);
	print_probe_cost(f, ps, rows, n);
	if (t->has_end) {
		const uint64_t *g = t->end.diag;

		if (g[AT_DIAG_ABANDONED] || g[AT_DIAG_UNMATCHED_RET] || g[AT_DIAG_STACK_OVERFLOW] ||
		    g[AT_DIAG_NO_STORAGE])
			fprintf(f,
				" Untimed calls: %" PRIu64 " left without returning (longjmp, "
				"exception, exit, or running as the probes came off), %" PRIu64
				" deeper than %d frames, %" PRIu64 " unmatched returns, %" PRIu64
				" without thread storage.",
				g[AT_DIAG_ABANDONED], g[AT_DIAG_STACK_OVERFLOW], AT_MAX_DEPTH,
				g[AT_DIAG_UNMATCHED_RET], g[AT_DIAG_NO_STORAGE]);
		if (t->end.dropped_events)
			fprintf(f,
				" Detail events dropped (ring buffer full, or more than %d sampled "
				"calls in flight on a thread): %" PRIu64 ".",
				AT_DETAIL_DEPTH, t->end.dropped_events);
		if (t->end.reason && *t->end.reason) {
			fputs(" Stopped: ", f);
			at_esc_text(f, t->end.reason, 0);
			fputc('.', f);
		}
	} else {
		fputs(" The recording did not end cleanly: figures up to its last complete "
		      "interval.",
		      f);
	}
	fputc('\n', f);
}

void at_report_print(FILE *f, const struct at_profile_set *ps, const struct at_report_opts *o)
{
	const struct at_trace *t = ps->t;
	struct row *rows = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*rows));
	size_t n = 0, shown;

	for (uint32_t i = 0; i < t->nsyms; i++)
		if (ps->p[i].c.calls || ps->p[i].c.returns)
			fill_row(&rows[n++], t, i, &ps->p[i], o->sort ? o->sort : "total");
	qsort(rows, n, sizeof(*rows), cmp_rows);
	shown = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;
	if (o->json) {
		print_json(f, ps, rows, shown);
	} else {
		print_table(f, ps, rows, n, shown);
		for (size_t i = 0; i < n; i++)
			for (int g = 0; g < o->nhist; g++)
				if (at_glob_match(o->hist_globs[g], t->syms[rows[i].id].name)) {
					print_hist(f, t, &rows[i]);
					break;
				}
		print_footer(f, ps, rows, n);
		at_report_drops(f, t);
	}
	free(rows);
}

static void report_usage(FILE *f)
{
	fputs("Usage: adaptrace report FILE [--json] [--sort KEY] [--top N] [--hist GLOB]...\n"
	      "       adaptrace report FILE --events [GLOB] [--json]\n"
	      "       adaptrace report FILE --selection [--json]\n"
	      "\n"
	      "Print the per-function figures of a recording made by 'adaptrace record'.\n"
	      "\n"
	      "  --sort KEY     order rows by total (default: inclusive time, recursion counted\n"
	      "                 once), calls, self, mean, p50, p90, p99, max, errors or name\n"
	      "  --top N        show only the first N rows\n"
	      "  --hist GLOB    draw the latency histogram of matching functions (repeatable)\n"
	      "  --json         one JSON object (keys: target, duration_ns, probe_hit_ns,\n"
	      "                 yardstick_event_ns, socket_events and socket_events_ns\n"
	      "                 (--budget: the target's reads and writes in the intervals\n"
	      "                 with windows, and their length), socket_yardsticks_in_ns\n"
	      "                 and socket_events_imputed (ADAPTRACE_YARDSTICKS=sampled),\n"
	      "                 functions[], usdt[], turn_ends_unseen, dropped_events,\n"
	      "                 diagnostics)\n"
	      "  --salvage      report what a damaged file holds before the damage\n"
	      "  --events [GLOB]  list the calls the detail phase captured (of functions\n"
	      "                 matching GLOB): time, pid, tid, cpu, duration, return value and\n"
	      "                 arguments (typed per record --args, else six raw registers;\n"
	      "                 a cut string ends in ...); with --json one object per line\n"
	      "                 (function, pid, tid, cpu, ts_ns, duration_ns, args, ret,\n"
	      "                 truncated)\n"
	      "  --selection    how the detailed set and the sampling rates changed over\n"
	      "                 time, each change with its reason (--json: one per line)\n"
	      "\n"
	      "Times are inclusive per call (mean, p50, p90, p99, max), from a log-linear\n"
	      "histogram with 8 sub-buckets per power of two (12.5 % resolution). ERRORS counts\n"
	      "returns with a negative value. Counts are exact, except for functions that record\n"
	      "--budget probed only in windows: their figures are scaled from the windows' rate,\n"
	      "marked ~ in the table, and in --json have \"estimated\": true, \"calls_ci95\"\n"
	      "(a 95 % interval of the calls, higher at its top where the windows saw a\n"
	      "turn of the event loop end too seldom to measure the work at its end; exact\n"
	      "ones have \"estimated\": false) and\n"
	      "\"estimated_by\": \"reads\" (scaled by the target's socket reads, interval by\n"
	      "interval and by their size), \"writes\" (by its socket writes, when their\n"
	      "interval is much narrower or the function's window calls follow them far more\n"
	      "closely: work done after a turn of the event loop, like replies),\n"
	      "\"reads+writes\" (the share \"writes_share_pct\" of its window calls, made under\n"
	      "callers that go by the writes, by the writes; the rest by the reads: a\n"
	      "function called per request and per reply), \"reads+turns\" (likewise the\n"
	      "share \"turns_share_pct\" made under callers of the turn windows that go by\n"
	      "the turns or the wakeups, by the turns: a function called per request and\n"
	      "once a turn; \"reads+writes+turns\": both), \"turns\" or \"wakeups\" (by the\n"
	      "turns of the target's event loop, counted where its replies begin or where\n"
	      "it wakes up, when the window calls follow them far more closely than the\n"
	      "reads, and than the writes unless no writes scale them: work done once a\n"
	      "turn; for a function of the turn windows, unless the reads or the writes\n"
	      "fit three times better) or \"time\" (no reads: the windows' slowdown\n"
	      "carries over, so the figures undercount),\n"
	      "\"unseen_reads_pct\": the share of reads of a size the windows almost never\n"
	      "saw, whose calls are a guess from the other sizes, \"turn_windows\": whether\n"
	      "it was moved to turn windows too, with only the functions run 1-3 times a\n"
	      "turn of the event loop in (their yardsticks add up with the other\n"
	      "windows'), and \"window_callers\": its calls while the windows were open per\n"
	      "innermost traced caller (name null: none), most first. \"turn_ends_unseen\":\n"
	      "true when the windows never saw a turn of the target's event loop end with its\n"
	      "calls, so that work done at a turn's end (replies) may be far above its\n"
	      "estimate and interval (the footer says so too).\n"
	      "Exit status: 0, or 2 for a missing or corrupt file.\n",
	      f);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"sort", required_argument, NULL, 's'},
	    {"top", required_argument, NULL, 't'},
	    {"hist", required_argument, NULL, 'H'},
	    {"salvage", no_argument, NULL, 'S'},
	    {"events", optional_argument, NULL, 'E'},
	    {"selection", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct at_report_opts o = {.sort = "total"};
	bool salvage = false, events = false, selection = false;
	const char *events_glob = NULL;
	char err[AT_ERRLEN];
	struct at_trace t;
	struct at_profile_set ps;
	int c, rc;

	o.hist_globs = at_xcalloc(argc, sizeof(char *));
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 's':
			if (!at_report_sort_valid(optarg))
				at_die(AT_EXIT_USAGE,
				       "unknown sort key '%s': use total, calls, self, mean, p50, "
				       "p90, p99, max, errors or name",
				       optarg);
			o.sort = optarg;
			break;
		case 't':
			o.top = atoi(optarg);
			if (o.top <= 0)
				at_die(AT_EXIT_USAGE, "--top takes a positive number, not '%s'",
				       optarg);
			break;
		case 'H':
			o.hist_globs[o.nhist++] = optarg;
			break;
		case 'S':
			salvage = true;
			break;
		case 'E':
			events = true;
			events_glob = optarg;
			break;
		case 'L':
			selection = true;
			break;
		case 'h':
			report_usage(stdout);
			return AT_EXIT_OK;
		default:
			report_usage(stderr);
			return AT_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		at_die(AT_EXIT_USAGE, "report needs a trace file: adaptrace report FILE");
	/* report FILE --events GLOB: the glob is the second operand. */
	if (events && !events_glob && optind + 2 == argc)
		events_glob = argv[optind + 1];
	else if (optind + 1 < argc)
		at_die(AT_EXIT_USAGE, "report takes one file, got '%s' too", argv[optind + 1]);
	rc = at_trace_read(argv[optind], &t, salvage, err, sizeof(err));
	if (rc < 0) {
		at_err("%s", err);
		free(o.hist_globs);
		return AT_EXIT_USAGE;
	}
	if (rc > 0)
		at_warn("%s", err);
	else if (!t.has_end && !o.json)
		at_warn("%s has no end record (the recorder was killed?): showing its %zu "
			"complete intervals",
			argv[optind], t.nwins);
	if (events || selection) {
		if (events)
			at_report_events(stdout, &t, events_glob, o.json);
		if (selection)
			at_report_selection(stdout, &t, o.json);
		at_trace_free(&t);
		free(o.hist_globs);
		return AT_EXIT_OK;
	}
	at_profile_set_init(&ps, &t);
	at_report_print(stdout, &ps, &o);
	at_profile_set_free(&ps);
	at_trace_free(&t);
	free(o.hist_globs);
	return AT_EXIT_OK;
}
