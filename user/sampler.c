// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The adaptive sampling controller: budget, stratified rates, ADP step, cycles, parking. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convergence.h"
#include "relevance.h"
#include "sampler.h"
#include "util.h"

/* Reference windows with fewer timed calls say too little to compare with. */
#define MIN_REF_CALLS 30
/*
 * A parked function's reference histogram sums its first REF_WINDOWS
 * windows, and it comes back only after DRIFT_WINDOWS drifted windows in a
 * row: one window's stall (a VM losing its CPU for a while) is no change of
 * profile.
 */
#define REF_WINDOWS   2
#define DRIFT_WINDOWS 2

void at_sampler_defaults(struct at_sampler_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_rate = 0.001;
	cfg->max_rate = 1.0;
	cfg->budget_pct = 5;
	cfg->coarse_hit_ns = 350;
	cfg->attach_hit_ns = 30;
	cfg->sample_ns = 600;
	cfg->up_step = 1.0;
	cfg->alpha = 0.05;
	cfg->margin = 0.05;
	cfg->cycle_max_s = 60;
	cfg->min_cycle_s = 2;
	cfg->min_effect = 0.10;
	cfg->ref_after = 3;
	cfg->seed = 1;
	cfg->drift_alpha = 0.01;
}

struct reservoir {
	struct at_event *ev;
	size_t n;
	uint64_t seen;
};

struct fn {
	bool used, forced, parked, has_prev, have_ref_hist;
	double rate;	  /* applied */
	double target;	  /* the controller's unrounded rate */
	double sample_ns; /* 0: cfg.sample_ns */
	double hits_s;	  /* hits per second, last tick */
	double ref_mean, ref_var, ref_n;
	double cycle_t;
	uint64_t pop, sample, fed, dropped;
	uint32_t cycles;
	uint64_t parked_ns;
	uint32_t ref_windows, drifted; /* windows in ref_hist; drifted ones in a row */
	/* this cycle's population latency (coarse) and sample latency (events) */
	double pop_sum, pop_n, smp_sum, smp_sumsq, smp_n;
	struct reservoir cur, prev;
	uint64_t *ref_hist;
};

struct at_sampler {
	struct at_sampler_cfg cfg;
	struct fn *f;
	size_t n;
	double level;  /* last water level, events per second per function; < 0: none yet */
	uint32_t slow; /* slow ticks in a row */
	uint64_t rng;
};

struct at_sampler *at_sampler_new(const struct at_sampler_cfg *cfg)
{
	struct at_sampler *s = at_xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	if (!(s->cfg.min_rate > 0))
		s->cfg.min_rate = 1e-6;
	if (!(s->cfg.max_rate > 0) || s->cfg.max_rate > 1)
		s->cfg.max_rate = 1;
	if (s->cfg.min_rate > s->cfg.max_rate)
		s->cfg.min_rate = s->cfg.max_rate;
	s->level = -1;
	s->rng = cfg->seed ? cfg->seed : 1;
	return s;
}

static void res_clear(struct reservoir *r)
{
	for (size_t i = 0; i < r->n; i++)
		for (int a = 0; a < AT_MAX_ARGS; a++)
			free(r->ev[i].args[a].str);
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

static void fn_clear(struct fn *f)
{
	res_clear(&f->cur);
	res_clear(&f->prev);
	free(f->ref_hist);
	memset(f, 0, sizeof(*f));
}

void at_sampler_free(struct at_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		fn_clear(&s->f[i]);
	free(s->f);
	free(s);
}

static struct fn *get(struct at_sampler *s, uint32_t id)
{
	if (id >= s->n) {
		size_t n = s->n ? s->n : 64;

		while (n <= id)
			n *= 2;
		s->f = at_xrealloc(s->f, n, sizeof(*s->f));
		memset(s->f + s->n, 0, (n - s->n) * sizeof(*s->f));
		s->n = n;
	}
	return &s->f[id];
}

static const struct fn *find(const struct at_sampler *s, uint32_t id)
{
	return id < s->n && s->f[id].used ? &s->f[id] : NULL;
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The rate a function with h hits per second starts at: its share of the last level. */
static double start_rate(const struct at_sampler *s, double h)
{
	double level = s->level >= 0 ? s->level : AT_SAMPLER_START_EVENTS;

	if (!(h > 0))
		return s->cfg.max_rate;
	return clampd(level / h, s->cfg.min_rate, s->cfg.max_rate);
}

static void set_ref(struct fn *f, const struct at_counts *c)
{
	double n = (double)c->returns, mean;

	if (c->returns < 2)
		return;
	mean = (double)c->sum_ns / n;
	f->ref_mean = mean;
	f->ref_var = fmax(0, c->sumsq / n - mean * mean) * n / (n - 1);
	f->ref_n = n;
}

double at_sampler_add(struct at_sampler *s, uint32_t id, bool forced, const struct at_counts *ref,
		      double ref_s)
{
	struct fn *f = get(s, id);

	if (f->used) {
		f->forced = forced;
		return f->parked ? 0 : f->rate;
	}
	f->used = true;
	f->forced = forced;
	f->hits_s = ref && ref_s > 0 ? (double)ref->calls / ref_s : 0;
	if (ref)
		set_ref(f, ref);
	f->rate = f->target = start_rate(s, f->hits_s);
	return f->rate;
}

void at_sampler_remove(struct at_sampler *s, uint32_t id)
{
	if (id < s->n)
		fn_clear(&s->f[id]);
}

void at_sampler_set_cost(struct at_sampler *s, uint32_t id, double sample_ns)
{
	if (id < s->n && s->f[id].used)
		s->f[id].sample_ns = sample_ns;
}

bool at_sampler_known(const struct at_sampler *s, uint32_t id)
{
	return find(s, id) != NULL;
}

bool at_sampler_attached(const struct at_sampler *s, uint32_t id)
{
	const struct fn *f = find(s, id);

	return f && !f->parked;
}

bool at_sampler_watching(const struct at_sampler *s, uint32_t id)
{
	const struct fn *f = find(s, id);

	return f && f->parked && f->have_ref_hist;
}

double at_sampler_rate(const struct at_sampler *s, uint32_t id)
{
	const struct fn *f = find(s, id);

	return f && !f->parked ? f->rate : 0;
}

uint64_t at_rate_threshold(double rate)
{
	if (!(rate > 0))
		return 0;
	if (rate >= 1)
		return 1ULL << 32;
	return (uint64_t)llround(rate * 4294967296.0);
}

static uint64_t rnd(struct at_sampler *s)
{
	/* xorshift64*: deterministic, good enough for a reservoir */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ULL;
}

static void ev_copy(struct at_event *dst, const struct at_event *src)
{
	*dst = *src;
	for (int a = 0; a < AT_MAX_ARGS; a++)
		dst->args[a].str = src->args[a].str ? at_xstrdup(src->args[a].str) : NULL;
}

void at_sampler_event(struct at_sampler *s, const struct at_event *ev)
{
	struct fn *f = ev->id < s->n ? &s->f[ev->id] : NULL;
	struct reservoir *r;
	uint64_t j;

	if (!f || !f->used || f->parked)
		return;
	f->sample++;
	f->fed++;
	f->smp_sum += (double)ev->duration_ns;
	f->smp_sumsq += (double)ev->duration_ns * (double)ev->duration_ns;
	f->smp_n++;
	r = &f->cur;
	r->seen++;
	if (r->n < AT_SAMPLER_RESERVOIR) {
		/* grown on demand: rare functions never need the full reservoir */
		if (!(r->n & (r->n - 1)))
			r->ev = at_xrealloc(r->ev, r->n ? 2 * r->n : 16, sizeof(*r->ev));
		ev_copy(&r->ev[r->n++], ev);
		return;
	}
	j = rnd(s) % r->seen;
	if (j < AT_SAMPLER_RESERVOIR) {
		for (int a = 0; a < AT_MAX_ARGS; a++)
			free(r->ev[j].args[a].str);
		ev_copy(&r->ev[j], ev);
	}
}

void at_sampler_dropped(struct at_sampler *s, uint32_t id, uint64_t n)
{
	if (id < s->n && s->f[id].used && !s->f[id].parked)
		s->f[id].dropped += n;
}

/* Events per second at water level L for hits h. */
static double level_events(const struct at_sampler *s, double h, double L)
{
	return clampd(L, h * s->cfg.min_rate, h * s->cfg.max_rate);
}

struct alloc {
	double level, level_budget, level_events;
	bool over_at_min; /* even the minimum rates exceed the budget */
};

/*
 * Largest level L (bisection; the cost is monotone in L) whose cost fits
 * avail ns per second and whose events fit max_ev per second (0: none).
 */
static double fit_level(const struct at_sampler *s, const struct at_sampler_tick *in, double avail,
			double max_ev, bool by_cost)
{
	double lo = 0, hi = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct fn *f = find(s, in->in[i].id);

		if (f && !f->parked && f->hits_s * s->cfg.max_rate > hi)
			hi = f->hits_s * s->cfg.max_rate;
	}
	for (int it = 0; it < 60; it++) {
		double mid = (lo + hi) / 2, tot = 0;

		for (size_t i = 0; i < in->n; i++) {
			const struct fn *f = find(s, in->in[i].id);
			double e;

			if (!f || f->parked)
				continue;
			e = level_events(s, f->hits_s, mid);
			tot +=
			    by_cost ? e * (f->sample_ns > 0 ? f->sample_ns : s->cfg.sample_ns) : e;
		}
		if (tot <= (by_cost ? avail : max_ev))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static bool any_hits(const struct at_sampler *s, const struct at_sampler_tick *in)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct fn *f = find(s, in->in[i].id);

		if (f && !f->parked && in->in[i].hits)
			return true;
	}
	return false;
}

/* Apply r if it moved enough, reached a bound, or must come down (force). */
static void push_rate(struct at_sampler *s, uint64_t now, uint32_t id, struct fn *f, double r,
		      bool force, const char *why, struct at_sel_change **ch, size_t *nch)
{
	char buf[256];
	bool edge = (r == s->cfg.min_rate || r == s->cfg.max_rate) && r != f->rate;

	f->target = r;
	if (!edge && !(force && r < f->rate) && fabs(r - f->rate) < AT_SAMPLER_MIN_CHANGE * f->rate)
		return;
	snprintf(buf, sizeof(buf), "rate %.4g -> %.4g: %s", f->rate, r, why);
	f->rate = r;
	at_sel_change_push(ch, nch, now, id, AT_SEL_RATE, r, buf);
}

/* The ADP comparison: equal (Welch does not reject) and diff = sum(cur) / sum(ref) - 1. */
static void compare_latency(const struct at_sampler *s, const struct at_sampler_tick *in,
			    bool *equal, double *diff, double *p)
{
	double *cur = at_xcalloc(in->n + 1, sizeof(double)),
	       *ref = at_xcalloc(in->n + 1, sizeof(double));
	double sc = 0, sr = 0, cm = 0, cv = 0, cn = 0;
	size_t k = 0;
	struct at_ttest t;
	const struct fn *one = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct at_sampler_in *x = &in->in[i];
		const struct fn *f = find(s, x->id);
		double n = (double)x->returns;

		if (!f || f->parked || f->ref_n < 2 || x->returns < 2)
			continue;
		cm = (double)x->sum_ns / n;
		cv = fmax(0, x->sumsq / n - cm * cm) * n / (n - 1);
		cn = n;
		one = f;
		cur[k] = cm;
		ref[k] = f->ref_mean;
		sc += cm;
		sr += f->ref_mean;
		k++;
	}
	*equal = true;
	*diff = 0;
	*p = 1;
	if (k >= 2) {
		/* Unpaired across functions, as the thesis's worked example. */
		at_welch(ref, k, cur, k, &t);
		*p = t.p;
	} else if (k == 1) {
		at_welch_summary(one->ref_mean, one->ref_var, one->ref_n, cm, cv, cn, &t);
		*p = t.p;
	}
	if (k) {
		*equal = *p >= s->cfg.alpha;
		*diff = sr > 0 ? sc / sr - 1 : 0;
	}
	free(cur);
	free(ref);
}

static void cycle_reset(struct fn *f)
{
	f->pop = f->sample = 0;
	f->cycle_t = 0;
	f->pop_sum = f->pop_n = f->smp_sum = f->smp_sumsq = f->smp_n = 0;
}

/*
 * Algorithm 3's second criterion: the sample's mean latency agrees with the
 * population's (one-sample t-test, two-sided). A difference under
 * min_effect relative also passes: the event and coarse clocks differ by a
 * few ns per call, which a large sample of a steady function would
 * otherwise call significant forever.
 */
static bool representative(const struct at_sampler *s, const struct fn *f)
{
	double mu, m, v, t, p;

	if (f->pop_n < 1 || f->smp_n < 2)
		return true; /* nothing to compare: size alone decides */
	mu = f->pop_sum / f->pop_n;
	m = f->smp_sum / f->smp_n;
	if (mu > 0 && fabs(m - mu) < s->cfg.min_effect * mu)
		return true;
	v = fmax(0, f->smp_sumsq / f->smp_n - m * m) * f->smp_n / (f->smp_n - 1);
	if (!(v > 0))
		return m == mu;
	t = (m - mu) / sqrt(v / f->smp_n);
	p = 2 * at_t_cdf(-fabs(t), f->smp_n - 1);
	return p >= s->cfg.alpha;
}

static void end_cycle(struct at_sampler *s, uint64_t now, uint32_t id, struct fn *f,
		      struct at_sel_change **ch, size_t *nch)
{
	char why[200], buf[300];
	bool stat = false;

	f->cycles++;
	if (f->has_prev)
		stat = at_stationary(f->prev.ev, f->prev.n, f->cur.ev, f->cur.n, s->cfg.alpha,
				     s->cfg.min_effect, why, sizeof(why));
	res_clear(&f->prev);
	f->prev = f->cur;
	memset(&f->cur, 0, sizeof(f->cur));
	f->has_prev = true;
	cycle_reset(f);
	if (!stat || f->forced)
		return;
	snprintf(buf, sizeof(buf), "profile stationary over 2 cycles, detail parked: %s", why);
	f->parked = true;
	f->parked_ns = now;
	f->have_ref_hist = false;
	f->ref_windows = f->drifted = 0;
	f->has_prev = false;
	res_clear(&f->prev);
	at_sel_change_push(ch, nch, now, id, AT_SEL_LEAVE, 0, buf);
}

size_t at_sampler_tick(struct at_sampler *s, const struct at_sampler_tick *in,
		       struct at_sampler_out *out, struct at_sel_change **changes, size_t *nchanges)
{
	const struct at_sampler_cfg *c = &s->cfg;
	double dt = in->dt_s > 0 ? in->dt_s : 1, D = 0, C, cpu, base, avail, attach = 0;
	double lb, le, diff, p;
	size_t before = *nchanges, nf = 0;
	bool equal, slower;
	struct at_sampler_out o = {0};
	char why[200], ps[32];

	/* 1. what detail cost over the tick */
	for (size_t i = 0; i < in->n; i++) {
		const struct at_sampler_in *x = &in->in[i];
		struct fn *f = x->id < s->n && s->f[x->id].used ? &s->f[x->id] : NULL;
		uint64_t sampled;

		if (!f || f->parked)
			continue;
		nf++;
		sampled = x->sampled ? x->sampled : f->fed + f->dropped;
		f->fed = f->dropped = 0;
		f->hits_s = (double)x->hits / dt;
		f->pop += x->hits;
		f->cycle_t += dt;
		f->pop_sum += (double)x->sum_ns;
		f->pop_n += (double)x->returns;
		D += (double)x->hits * c->attach_hit_ns +
		     (double)sampled * (f->sample_ns > 0 ? f->sample_ns : c->sample_ns);
		attach += f->hits_s * c->attach_hit_ns;
	}
	C = (double)in->all_hits * c->coarse_hit_ns;
	cpu = in->cpu_ns > 0 ? in->cpu_ns : dt * 1e9;
	base = fmax(cpu - D, cpu * 0.01);
	o.detail_pct = 100 * D / base;
	o.coarse_pct = 100 * C / fmax(base - C, base * 0.01);

	/* 2. stratified allocation: the water level */
	avail = c->budget_pct / 100 * base / dt - attach - (c->whole_budget ? C / dt : 0);
	lb = fit_level(s, in, avail, 0, true);
	le = c->max_events ? fit_level(s, in, 0, (double)c->max_events, false) : HUGE_VAL;
	/* With no call at all the level says nothing: keep the last one for new functions. */
	if (attach > 0 || any_hits(s, in))
		s->level = fmin(lb, le);
	o.level = s->level;

	/* 3. the ADP step */
	if (in->reference) {
		for (size_t i = 0; i < in->n; i++) {
			struct fn *f = find(s, in->in[i].id) ? &s->f[in->in[i].id] : NULL;
			struct at_counts cc = {.returns = in->in[i].returns,
					       .sum_ns = in->in[i].sum_ns,
					       .sumsq = in->in[i].sumsq};

			if (f && !f->parked && cc.returns >= MIN_REF_CALLS)
				set_ref(f, &cc);
		}
		s->slow = 0;
	} else if (nf) {
		compare_latency(s, in, &equal, &diff, &p);
		/* Within the budget a slowdown is the detail cost the user accepted. */
		slower = !equal && diff > c->budget_pct / 100;
		if (p < 1e-4)
			snprintf(ps, sizeof(ps), "p < 1e-4");
		else
			snprintf(ps, sizeof(ps), "p %.2g", p);
		for (size_t i = 0; i < in->n; i++) {
			uint32_t id = in->in[i].id;
			struct fn *f = find(s, id) ? &s->f[id] : NULL;
			double cap, r;

			if (!f || f->parked)
				continue;
			cap = f->hits_s > 0 ? clampd(s->level / f->hits_s, c->min_rate, c->max_rate)
					    : c->max_rate;
			r = f->target;
			if (slower) {
				r *= 1 - fmin(diff, 0.5);
				snprintf(
				    why, sizeof(why),
				    "latency %+.1f %% against the detail-off reference (Welch %s)",
				    100 * diff, ps);
			} else {
				r *= 1 + fmax(fabs(diff), c->up_step);
				snprintf(
				    why, sizeof(why), "latency %+.1f %%, %s (Welch %s)", 100 * diff,
				    !equal && diff > 0 ? "within the budget"
						       : "not worse than the detail-off reference",
				    ps);
			}
			if (r > cap && cap < c->max_rate) {
				r = cap;
				if (lb <= le)
					snprintf(
					    why, sizeof(why),
					    "budget %.3g %%: detail cost %.2f %% this tick, %.0f "
					    "events/s per function affordable",
					    c->budget_pct, o.detail_pct, s->level);
				else
					snprintf(why, sizeof(why),
						 "max-events %llu/s shared by %zu functions",
						 (unsigned long long)c->max_events, nf);
			}
			/* over budget by the measurement: even a small cut is applied */
			push_rate(s, in->now_ns, id, f, clampd(r, c->min_rate, c->max_rate),
				  o.detail_pct > c->budget_pct, why, changes, nchanges);
		}
		s->slow = slower ? s->slow + 1 : 0;
		if (c->ref_after && s->slow >= c->ref_after) {
			o.want_reference = true;
			s->slow = 0;
		}
	}

	/* 4. cycles */
	for (size_t i = 0; i < in->n; i++) {
		uint32_t id = in->in[i].id;
		struct fn *f = find(s, id) ? &s->f[id] : NULL;

		if (!f || f->parked || f->cycle_t < c->min_cycle_s)
			continue;
		if (!at_cycle_done(f->cycle_t, c->cycle_max_s, c->margin, AT_CONV_P, f->pop,
				   f->sample) ||
		    !representative(s, f))
			continue;
		o.cycles_ended++;
		end_cycle(s, in->now_ns, id, f, changes, nchanges);
	}
	if (out)
		*out = o;
	return *nchanges - before;
}

size_t at_sampler_window(struct at_sampler *s, const struct at_window *w, uint64_t now_ns,
			 struct at_sel_change **changes, size_t *nchanges)
{
	size_t before = *nchanges;
	uint64_t *hist = at_xcalloc(AT_HIST_BUCKETS, sizeof(*hist));
	char why[200], buf[260];

	for (uint32_t i = 0; i < w->n; i++) {
		const struct at_window_entry *e = &w->e[i];
		struct fn *f = e->id < s->n && s->f[e->id].used ? &s->f[e->id] : NULL;
		uint64_t tot = 0;

		/* Only windows wholly after the parking: same conditions, detail off. */
		if (!f || !f->parked || w->start_ns < f->parked_ns)
			continue;
		memset(hist, 0, AT_HIST_BUCKETS * sizeof(*hist));
		for (uint32_t k = 0; k < e->nhist; k++)
			if (e->hist[k].bucket < AT_HIST_BUCKETS) {
				hist[e->hist[k].bucket] += e->hist[k].count;
				tot += e->hist[k].count;
			}
		if (!f->have_ref_hist) {
			if (tot < MIN_REF_CALLS)
				continue;
			if (!f->ref_hist)
				f->ref_hist = at_xcalloc(AT_HIST_BUCKETS, sizeof(*f->ref_hist));
			if (!f->ref_windows)
				memset(f->ref_hist, 0, AT_HIST_BUCKETS * sizeof(*hist));
			for (size_t k = 0; k < AT_HIST_BUCKETS; k++)
				f->ref_hist[k] += hist[k];
			f->have_ref_hist = ++f->ref_windows >= REF_WINDOWS;
			continue;
		}
		if (!at_drift(f->ref_hist, hist,
			      s->cfg.drift_alpha > 0 ? s->cfg.drift_alpha : s->cfg.alpha,
			      s->cfg.min_effect, why, sizeof(why))) {
			f->drifted = 0;
			continue;
		}
		if (++f->drifted < DRIFT_WINDOWS)
			continue;
		f->parked = false;
		f->have_ref_hist = false;
		f->ref_windows = f->drifted = 0;
		f->has_prev = false;
		cycle_reset(f);
		res_clear(&f->cur);
		f->hits_s = w->end_ns > w->start_ns
				? (double)e->c.calls * 1e9 / (double)(w->end_ns - w->start_ns)
				: 0;
		set_ref(f, &e->c);
		f->rate = f->target = start_rate(s, f->hits_s);
		snprintf(buf, sizeof(buf), "back to detail: %s", why);
		at_sel_change_push(changes, nchanges, now_ns, e->id, AT_SEL_ENTER, f->rate, buf);
	}
	free(hist);
	return *nchanges - before;
}
