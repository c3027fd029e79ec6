// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The comparison engine behind 'adaptrace diff'.
 *
 * Why these tests: a recording holds millions of timed calls per function,
 * so any test on the pooled calls finds every 1 % shift "significant", and
 * calls are not independent anyway (caches, preemption, frequency). The
 * unit of replication is the interval: each interval's statistic (p50 by
 * default) is one observation, and Welch's t-test compares the two series
 * without assuming equal variances (as Wert's detection heuristics compare
 * measurement series with t-tests). The interval-to-interval scatter is the
 * yardstick, so a run that is noisy needs a larger shift to count. Only
 * when a side has fewer than three intervals with timed calls does the
 * comparison fall back to a Mann-Whitney U test computed from the two
 * histograms (O(buckets), ties within a bucket corrected). Holm-Bonferroni
 * keeps the family-wise error rate at alpha over all functions compared,
 * and a verdict also needs the effect on the chosen statistic to exceed the
 * threshold: significance alone says nothing about size.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "diff.h"
#include "report.h"
#include "util.h"

/* Fewer functions than this: no common factor. */
#define MIN_FOR_SPEED 5
/* Series with fewer intervals than this use the histogram test. */
#define MIN_INTERVALS 3
/* Different binary names are refused when fewer symbols than this match. */
#define MIN_OVERLAP 0.5

void at_diff_opts_default(struct at_diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold_pct = 10;
	o->alpha = 0.01;
	o->stat = AT_DSTAT_P50;
}

static const char *stat_names[] = {"p50", "mean", "p90", "p99"};

bool at_diff_parse_stat(const char *s, int *stat)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, stat_names[i])) {
			*stat = i;
			return true;
		}
	return false;
}

const char *at_diff_stat_name(int stat)
{
	return stat >= 0 && stat < 4 ? stat_names[stat] : "p50";
}

/* ---- statistics ---- */

/* Continued fraction of the incomplete beta (modified Lentz). */
static double beta_cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m, num, step;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		step = d * c;
		h *= step;
		if (fabs(step - 1) < eps)
			break;
	}
	return h;
}

double at_stat_ibeta(double x, double a, double b)
{
	double front;

	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(x, a, b) / a;
	return 1 - front * beta_cf(1 - x, b, a) / b;
}

double at_stat_t_p2(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return 1;
	if (isinf(t))
		return 0;
	return at_stat_ibeta(df / (df + t * t), df / 2, 0.5);
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;

	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

double at_stat_welch(const double *a, size_t na, const double *b, size_t nb, double *t, double *df)
{
	double ma, va, mb, vb, sa, sb, se2;

	*t = 0;
	*df = 0;
	if (na < 2 || nb < 2)
		return 1;
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	sa = va / (double)na;
	sb = vb / (double)nb;
	se2 = sa + sb;
	if (!(se2 > 0)) {
		/* Both series constant: equal, or different beyond doubt. */
		*t = mb == ma ? 0 : (mb > ma ? INFINITY : -INFINITY);
		*df = (double)(na + nb - 2);
		return mb == ma ? 1 : 0;
	}
	*t = (mb - ma) / sqrt(se2);
	*df = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
	return at_stat_t_p2(*t, *df);
}

double at_stat_mwu_hist(const uint64_t *a, const uint64_t *b, size_t nbuckets, double *z)
{
	double na = 0, nb = 0, below = 0, u = 0, ties = 0, n, var;

	for (size_t i = 0; i < nbuckets; i++) {
		na += (double)a[i];
		nb += (double)b[i];
	}
	*z = 0;
	if (!(na > 0) || !(nb > 0))
		return 1;
	/* U of b: for each b value, the a values below it plus half the ties. */
	for (size_t i = 0; i < nbuckets; i++) {
		double ta = (double)a[i], tb = (double)b[i], tt = ta + tb;

		u += tb * (below + 0.5 * ta);
		below += ta;
		ties += tt * tt * tt - tt;
	}
	n = na + nb;
	var = na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0))
		return 1; /* every value in one bucket */
	*z = (u - na * nb / 2) / sqrt(var);
	return erfc(fabs(*z) / M_SQRT2);
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *x, const void *y)
{
	const struct pidx *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void at_stat_holm(const double *p, size_t n, double *adj)
{
	struct pidx *s = at_xcalloc(n ? n : 1, sizeof(*s));
	double run = 0;

	for (size_t i = 0; i < n; i++) {
		s[i].p = isnan(p[i]) ? 1 : p[i];
		s[i].i = i;
	}
	qsort(s, n, sizeof(*s), cmp_pidx);
	for (size_t k = 0; k < n; k++) {
		double v = fmin(1, (double)(n - k) * s[k].p);

		run = fmax(run, v);
		adj[s[k].i] = run;
	}
	free(s);
}

/* ---- per-function figures ---- */

static double stat_q(int stat)
{
	return stat == AT_DSTAT_P90 ? 0.90 : stat == AT_DSTAT_P99 ? 0.99 : 0.50;
}

static double window_stat(const struct at_window_entry *e, int stat)
{
	if (!e->c.returns)
		return NAN;
	if (stat == AT_DSTAT_MEAN)
		return (double)e->c.sum_ns / (double)e->c.returns;
	return at_entry_quantile(e, stat_q(stat));
}

static double profile_stat(const struct at_func_profile *p, int stat)
{
	if (!p->c.returns)
		return NAN;
	if (stat == AT_DSTAT_MEAN)
		return (double)p->c.sum_ns / (double)p->c.returns;
	return (double)at_hist_quantile(p->hist, stat_q(stat), p->c.min_ns, p->c.max_ns);
}

/* Per-symbol series of the interval statistic. */
struct series {
	double *v;
	size_t n, cap;
};

static double median(double *v, size_t n);

/*
 * Per-symbol series of the interval statistic. With normalise, each
 * interval's values are divided by that interval's common factor: the
 * median, over the functions timed in it, of their value there against
 * their whole-run value. A burst of load from elsewhere slows every
 * function of the interval alike and cancels out; a change in one function
 * does not.
 */
static struct series *build_series(const struct at_trace *t, const struct at_func_profile *p,
				   int stat, bool normalise)
{
	struct series *s = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*s));
	double *run = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*run));
	double *val = NULL, *ratio = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->nsyms; i++)
		run[i] = profile_stat(&p[i], stat);
	for (size_t w = 0; w < t->nwins; w++) {
		const struct at_window *win = &t->wins[w];
		double load = 1;
		size_t nr = 0;

		if (win->n > cap) {
			cap = win->n;
			val = at_xrealloc(val, cap, sizeof(*val));
			ratio = at_xrealloc(ratio, cap, sizeof(*ratio));
		}
		for (uint32_t i = 0; i < win->n; i++) {
			const struct at_window_entry *e = &win->e[i];

			val[i] = e->id < t->nsyms ? window_stat(e, stat) : NAN;
			if (!isnan(val[i]) && run[e->id] > 0)
				ratio[nr++] = val[i] / run[e->id];
		}
		if (normalise && nr >= MIN_FOR_SPEED)
			load = median(ratio, nr);
		if (!(load > 0))
			load = 1;
		for (uint32_t i = 0; i < win->n; i++) {
			const struct at_window_entry *e = &win->e[i];
			struct series *x;
			double v = val[i];

			if (isnan(v))
				continue;
			v /= load;
			x = &s[e->id];
			if (x->n == x->cap) {
				x->cap = x->cap ? x->cap * 2 : 16;
				x->v = at_xrealloc(x->v, x->cap, sizeof(*x->v));
			}
			x->v[x->n++] = v;
		}
	}
	free(run);
	free(val);
	free(ratio);
	return s;
}

static void free_series(struct series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].v);
	free(s);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Sorts v. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Relative change of the means of two series, in percent. */
static double series_change(const double *a, size_t na, const double *b, size_t nb)
{
	double ma = 0, mb = 0;

	for (size_t i = 0; i < na; i++)
		ma += a[i];
	for (size_t i = 0; i < nb; i++)
		mb += b[i];
	ma /= (double)na;
	mb /= (double)nb;
	return ma > 0 ? (mb - ma) / ma * 100 : 0;
}

/* Mann-Whitney with NEW's histogram divided by the common factor. */
static double mwu_scaled(const struct at_func_profile *a, const struct at_func_profile *b,
			 double speed, double *z)
{
	uint64_t *h;
	double p;

	if (speed == 1)
		return at_stat_mwu_hist(a->hist, b->hist, AT_HIST_BUCKETS, z);
	h = at_xcalloc(AT_HIST_BUCKETS, sizeof(*h));
	for (uint32_t k = 0; k < AT_HIST_BUCKETS; k++) {
		double mid = ((double)at_hist_lower(k) + (k + 1 < AT_HIST_BUCKETS
							      ? (double)at_hist_lower(k + 1)
							      : 2.0 * (double)at_hist_lower(k))) /
			     2;

		if (b->hist[k])
			h[at_hist_bucket((uint64_t)(mid / speed))] += b->hist[k];
	}
	p = at_stat_mwu_hist(a->hist, h, AT_HIST_BUCKETS, z);
	free(h);
	return p;
}

static const char *sym_binary(const struct at_trace *t, size_t id)
{
	uint32_t b = t->syms[id].binary;

	return b < t->nbins ? at_base_name(t->bins[b].path) : "";
}

/* A symbol's matching key: binary basename, kind, name; then the id. */
struct key {
	const struct at_trace *t;
	uint32_t id;
	uint32_t ord; /* n-th symbol with the same key (duplicate local names) */
};

static int cmp_key_only(const struct key *a, const struct key *b)
{
	int c = strcmp(sym_binary(a->t, a->id), sym_binary(b->t, b->id));

	if (c)
		return c;
	if (a->t->syms[a->id].kind != b->t->syms[b->id].kind)
		return a->t->syms[a->id].kind < b->t->syms[b->id].kind ? -1 : 1;
	return strcmp(a->t->syms[a->id].name ? a->t->syms[a->id].name : "",
		      b->t->syms[b->id].name ? b->t->syms[b->id].name : "");
}

static int cmp_key(const void *x, const void *y)
{
	const struct key *a = x, *b = y;
	int c = cmp_key_only(a, b);

	if (c)
		return c;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_full(const struct key *a, const struct key *b)
{
	int c = cmp_key_only(a, b);

	if (c)
		return c;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static struct key *sorted_keys(const struct at_trace *t)
{
	struct key *k = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*k));

	for (size_t i = 0; i < t->nsyms; i++) {
		k[i].t = t;
		k[i].id = (uint32_t)i;
	}
	qsort(k, t->nsyms, sizeof(*k), cmp_key);
	for (size_t i = 1; i < t->nsyms; i++)
		if (!cmp_key_only(&k[i - 1], &k[i]))
			k[i].ord = k[i - 1].ord + 1;
	return k;
}

static const char *main_prog(const struct at_trace *t)
{
	return t->nbins ? at_base_name(t->bins[0].path) : "";
}

/* Standard deviation of an estimated count, from its 95 % interval; 0 when exact. */
static double est_sd(const struct at_func_profile *p)
{
	return p->estimated ? (p->calls_hi - p->calls_lo) / (2 * 1.96) : 0;
}

/* Variance of a side's normalised calls: Poisson per second, or the estimate's spread. */
static double calls_var(uint64_t calls, bool est, double sd, bool per_run, double secs)
{
	double scale = per_run ? 1 : secs;

	if (!(scale > 0))
		return 0;
	if (est)
		return sd * sd / (scale * scale);
	return per_run ? 0 : (double)calls / (scale * scale);
}

static double norm_calls(const struct at_trace *t, uint64_t calls, bool per_run, double duration_s)
{
	(void)t;
	if (per_run)
		return (double)calls;
	return duration_s > 0 ? (double)calls / duration_s : (double)calls;
}

static double trace_seconds(const struct at_trace *t)
{
	uint64_t d = t->has_end ? t->end.duration_ns : 0;

	if (!d && t->nwins)
		d = t->wins[t->nwins - 1].end_ns;
	return (double)d / 1e9;
}

static void add_row(struct at_diff_result *res, size_t *cap, const struct at_diff_row *r)
{
	if (res->nrows == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		res->rows = at_xrealloc(res->rows, *cap, sizeof(*res->rows));
	}
	res->rows[res->nrows++] = *r;
}

/* A significant change: worse or better only beyond the threshold; counted. */
static enum at_diff_verdict verdict_of(double change_pct, double threshold_pct, size_t *worse,
				       size_t *better)
{
	if (change_pct > threshold_pct) {
		++*worse;
		return AT_DV_WORSE;
	}
	if (change_pct < -threshold_pct) {
		++*better;
		return AT_DV_BETTER;
	}
	return AT_DV_SAME;
}

int at_diff_compute(const struct at_trace *base, const struct at_func_profile *bp,
		    const struct at_trace *cur, const struct at_func_profile *cp,
		    const struct at_diff_opts *o, struct at_diff_result *res, char *err,
		    size_t errlen)
{
	struct key *kb = sorted_keys(base), *kn = sorted_keys(cur);
	struct series *sb = build_series(base, bp, o->stat, !o->absolute);
	struct series *sn = build_series(cur, cp, o->stat, !o->absolute);
	double db = trace_seconds(base), dn = trace_seconds(cur);
	size_t i = 0, j = 0, cap = 0, matched = 0, smaller;
	double *p, *adj;
	size_t *idx, np = 0;

	memset(res, 0, sizeof(*res));
	res->per_run = at_trace_get(base, "target_command") && at_trace_get(cur, "target_command");
	snprintf(res->base_prog, sizeof(res->base_prog), "%s", main_prog(base));
	snprintf(res->new_prog, sizeof(res->new_prog), "%s", main_prog(cur));

	while (i < base->nsyms || j < cur->nsyms) {
		struct at_diff_row r = {
		    .base_id = -1, .new_id = -1, .p_raw = NAN, .p_adj = NAN, .calls_p_adj = NAN};
		int c = i >= base->nsyms ? 1 : j >= cur->nsyms ? -1 : cmp_full(&kb[i], &kn[j]);
		const struct at_trace *t;
		uint32_t id;

		if (c <= 0)
			r.base_id = kb[i++].id;
		if (c >= 0)
			r.new_id = kn[j++].id;
		t = r.new_id >= 0 ? cur : base;
		id = (uint32_t)(r.new_id >= 0 ? r.new_id : r.base_id);
		r.name = t->syms[id].name ? t->syms[id].name : "";
		r.binary = sym_binary(t, id);
		r.kind = t->syms[id].kind;
		if (r.base_id >= 0) {
			r.base_calls = bp[r.base_id].c.calls;
			r.base_est = bp[r.base_id].estimated;
			r.base_sd = est_sd(&bp[r.base_id]);
		}
		if (r.new_id >= 0) {
			r.new_calls = cp[r.new_id].c.calls;
			r.new_est = cp[r.new_id].estimated;
			r.new_sd = est_sd(&cp[r.new_id]);
		}
		if (r.base_id >= 0 && r.new_id >= 0)
			matched++;
		add_row(res, &cap, &r);
	}
	smaller = base->nsyms < cur->nsyms ? base->nsyms : cur->nsyms;
	res->overlap = smaller ? (double)matched / (double)smaller : 1;
	if (strcmp(res->base_prog, res->new_prog) && res->overlap < MIN_OVERLAP && !o->force) {
		snprintf(err, errlen,
			 "the recordings are of different programs (%s and %s, %.0f %% of "
			 "functions in common): compare two builds of one program, or pass "
			 "--force",
			 res->base_prog, res->new_prog, res->overlap * 100);
		at_diff_free(res);
		free(kb);
		free(kn);
		free_series(sb, base->nsyms);
		free_series(sn, cur->nsyms);
		return -1;
	}

	/* Latency: one p-value per function with timed calls on both sides. */
	p = at_xcalloc(res->nrows ? res->nrows : 1, sizeof(*p));
	adj = at_xcalloc(res->nrows ? res->nrows : 1, sizeof(*adj));
	idx = at_xcalloc(res->nrows ? res->nrows : 1, sizeof(*idx));
	for (size_t k = 0; k < res->nrows; k++) {
		struct at_diff_row *r = &res->rows[k];

		if (r->base_id < 0 || r->new_id < 0 || !bp[r->base_id].c.returns ||
		    !cp[r->new_id].c.returns)
			continue;
		r->tested = true;
		r->base = profile_stat(&bp[r->base_id], o->stat);
		r->new = profile_stat(&cp[r->new_id], o->stat);
		if (r->base > 0 && r->new > 0)
			p[np++] = r->new / r->base;
	}
	res->speed = o->absolute || np < MIN_FOR_SPEED ? 1 : median(p, np);
	np = 0;
	for (size_t k = 0; k < res->nrows; k++) {
		struct at_diff_row *r = &res->rows[k];
		const struct series *xa, *xb;
		double t, df, z, *scaled;

		if (!r->tested)
			continue;
		r->change_raw_pct = r->base > 0 ? (r->new - r->base) / r->base * 100 : 0;
		r->change_pct = r->base > 0 ? (r->new / res->speed - r->base) / r->base * 100 : 0;
		xa = &sb[r->base_id];
		xb = &sn[r->new_id];
		if (xa->n >= MIN_INTERVALS && xb->n >= MIN_INTERVALS) {
			r->test = "welch";
			scaled = at_xcalloc(xb->n, sizeof(*scaled));
			for (size_t q = 0; q < xb->n; q++)
				scaled[q] = xb->v[q] / res->speed;
			r->p_raw = at_stat_welch(xa->v, xa->n, scaled, xb->n, &t, &df);
			/*
			 * The effect from the same load-corrected series the test
			 * saw: a burst of load in part of one run shifts the
			 * whole-run value, not these.
			 */
			if (!o->absolute)
				r->change_pct = series_change(xa->v, xa->n, scaled, xb->n);
			free(scaled);
		} else {
			r->test = "mann-whitney";
			r->p_raw = mwu_scaled(&bp[r->base_id], &cp[r->new_id], res->speed, &z);
		}
		p[np] = r->p_raw;
		idx[np++] = k;
	}
	res->compared = np;
	at_stat_holm(p, np, adj);
	for (size_t k = 0; k < np; k++) {
		struct at_diff_row *r = &res->rows[idx[k]];

		r->p_adj = adj[k];
		if (r->p_adj < o->alpha)
			r->verdict = verdict_of(r->change_pct, o->threshold_pct, &res->nregressed,
						&res->nimproved);
	}

	/*
	 * Calls. Two runs of a command: exact counts per run, no test (the
	 * threshold alone decides). Otherwise rates per second, where the
	 * counts are Poisson-like: a z-test on the rate difference, Holm again.
	 * An estimated side (probing windows) brings its own spread, from its
	 * 95 % interval, and is always tested.
	 */
	np = 0;
	for (size_t k = 0; k < res->nrows; k++) {
		struct at_diff_row *r = &res->rows[k];
		double z, vb, vn;
		bool est;

		if (r->base_id < 0 || r->new_id < 0) {
			if (r->base_id < 0 && r->new_calls)
				res->nappeared++;
			if (r->new_id < 0)
				res->nvanished++;
			continue;
		}
		r->base_norm = norm_calls(base, r->base_calls, res->per_run, db);
		r->new_norm = norm_calls(cur, r->new_calls, res->per_run, dn);
		if (r->base_norm > 0)
			r->calls_change_pct = (r->new_norm - r->base_norm) / r->base_norm * 100;
		else
			r->calls_change_pct = r->new_norm > 0 ? INFINITY : 0;
		est = r->base_est || r->new_est;
		if (!est && (res->per_run || r->base_calls == r->new_calls))
			continue;
		vb = calls_var(r->base_calls, r->base_est, r->base_sd, res->per_run, db);
		vn = calls_var(r->new_calls, r->new_est, r->new_sd, res->per_run, dn);
		z = vb + vn > 0 ? (r->new_norm - r->base_norm) / sqrt(vb + vn) : 0;
		p[np] = erfc(fabs(z) / M_SQRT2);
		idx[np++] = k;
	}
	at_stat_holm(p, np, adj);
	for (size_t k = 0; k < np; k++)
		res->rows[idx[k]].calls_p_adj = adj[k];
	for (size_t k = 0; k < res->nrows; k++) {
		struct at_diff_row *r = &res->rows[k];

		bool est = r->base_est || r->new_est;

		if (r->base_id < 0 || r->new_id < 0 || (!est && r->base_calls == r->new_calls))
			continue;
		if ((!res->per_run || est) && !(r->calls_p_adj < o->alpha))
			continue;
		r->calls_verdict =
		    verdict_of(r->calls_change_pct, o->threshold_pct, &res->nmore, &res->nfewer);
	}
	free(p);
	free(adj);
	free(idx);
	free(kb);
	free(kn);
	free_series(sb, base->nsyms);
	free_series(sn, cur->nsyms);
	return 0;
}

void at_diff_free(struct at_diff_result *res)
{
	free(res->rows);
	memset(res, 0, sizeof(*res));
}

bool at_diff_failed(const struct at_diff_result *res)
{
	return res->nregressed || res->nmore;
}

void at_diff_regressed_with(const struct at_trace *base, const struct at_func_profile *bp,
			    const struct at_trace *cur, const struct at_func_profile *cp,
			    const struct at_diff_opts *o, bool *regressed)
{
	struct at_diff_result res;
	struct at_diff_opts forced = *o;
	char err[8];

	memset(regressed, 0, cur->nsyms * sizeof(*regressed));
	forced.force = true; /* the caller chose the baseline */
	if (at_diff_compute(base, bp, cur, cp, &forced, &res, err, sizeof(err)))
		return;
	for (size_t k = 0; k < res.nrows; k++)
		if (res.rows[k].new_id >= 0 && (res.rows[k].verdict == AT_DV_WORSE ||
						res.rows[k].calls_verdict == AT_DV_WORSE))
			regressed[res.rows[k].new_id] = true;
	at_diff_free(&res);
}

void at_diff_regressed(const struct at_trace *base, const struct at_trace *cur,
		       const struct at_func_profile *cp, const struct at_diff_opts *o,
		       bool *regressed)
{
	struct at_profile_set ps;

	at_profile_set_init(&ps, base);
	at_diff_regressed_with(base, ps.p, cur, cp, o, regressed);
	at_profile_set_free(&ps);
}

/* ---- output ---- */

static char *fmt_pct(char *buf, size_t len, double pct)
{
	if (isinf(pct))
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%", pct);
	return buf;
}

static char *fmt_p(char *buf, size_t len, double p)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 1e-4)
		snprintf(buf, len, "%.1e", p);
	else
		snprintf(buf, len, "%.4f", p);
	return buf;
}

/* Calls per run or per second; "~" marks an estimate (probing windows). */
static char *fmt_calls(char *buf, size_t len, double v, bool per_run, bool est)
{
	if (per_run)
		snprintf(buf, len, "%s%.0f", est ? "~" : "", v);
	else
		snprintf(buf, len, "%s%.1f/s", est ? "~" : "", v);
	return buf;
}

static void table_latency(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			  int verdict, const char *title, size_t count)
{
	char a[32], b[32], c[32], d[32], name[512], bin[512];

	fprintf(f, "\n%s (%zu)\n", title, count);
	if (!count)
		return;
	fprintf(f, "  %-40s %-16s %10s %10s %8s %9s %s\n", "FUNCTION", "BINARY",
		at_diff_stat_name(o->stat), "NEW", "CHANGE", "P(HOLM)", "TEST");
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (verdict < 0 ? !x->tested : x->verdict != verdict)
			continue;
		fprintf(f, "  %-40s %-16s %10s %10s %8s %9s %s\n",
			at_esc_text_buf(name, sizeof(name), x->name),
			at_esc_text_buf(bin, sizeof(bin), x->binary),
			at_fmt_ns(a, sizeof(a), x->base), at_fmt_ns(b, sizeof(b), x->new),
			fmt_pct(c, sizeof(c), x->change_pct), fmt_p(d, sizeof(d), x->p_adj),
			x->test);
	}
}

static void list_names(FILE *f, const struct at_diff_result *r, bool appeared, size_t count)
{
	size_t shown = 0;

	fprintf(f, "\n%s (%zu)%s", appeared ? "APPEARED, called only in NEW" : "VANISHED", count,
		count ? ":" : "");
	for (size_t k = 0; k < r->nrows && shown < 20; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (appeared ? (x->base_id < 0 && x->new_calls) : x->new_id < 0) {
			fputc(' ', f);
			at_esc_text(f, x->name, 0);
			shown++;
		}
	}
	if (count > shown)
		fprintf(f, " ... (%zu more)", count - shown);
	fputc('\n', f);
}

void at_diff_print_table(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			 const char *base_path, const char *new_path)
{
	char a[32], b[32], c[32], name[512], bin[512];
	bool est = false;

	fprintf(f,
		"adaptrace diff %s -> %s: %s, threshold %g%%, alpha %g (Holm over %zu "
		"functions)\n",
		base_path, new_path, at_diff_stat_name(o->stat), o->threshold_pct, o->alpha,
		r->compared);
	if (r->speed != 1)
		fprintf(f,
			"Common factor: NEW ran %.3fx the time of BASE over all functions (median "
			"ratio of %s; a slower or busier machine); changes are relative to it.\n",
			r->speed, at_diff_stat_name(o->stat));
	table_latency(f, r, o, AT_DV_WORSE, "REGRESSIONS", r->nregressed);
	fprintf(f, "\nCALLS CHANGED, per %s (%zu)\n", r->per_run ? "run" : "second",
		r->nmore + r->nfewer);
	if (r->nmore + r->nfewer)
		fprintf(f, "  %-40s %-16s %10s %10s %8s\n", "FUNCTION", "BINARY", "CALLS", "NEW",
			"CHANGE");
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (x->calls_verdict == AT_DV_SAME)
			continue;
		fprintf(f, "  %-40s %-16s %10s %10s %8s\n",
			at_esc_text_buf(name, sizeof(name), x->name),
			at_esc_text_buf(bin, sizeof(bin), x->binary),
			fmt_calls(a, sizeof(a), x->base_norm, r->per_run, x->base_est),
			fmt_calls(b, sizeof(b), x->new_norm, r->per_run, x->new_est),
			fmt_pct(c, sizeof(c), x->calls_change_pct));
		est |= x->base_est || x->new_est;
	}
	if (est)
		fputs("  ~: estimated from probing windows (--budget), tested against its 95 % "
		      "interval\n",
		      f);
	table_latency(f, r, o, AT_DV_BETTER, "IMPROVEMENTS", r->nimproved);
	list_names(f, r, true, r->nappeared);
	list_names(f, r, false, r->nvanished);
	if (o->all)
		table_latency(f, r, o, -1, "ALL FUNCTIONS COMPARED", r->compared);
	fprintf(f,
		"\n%s: %zu regression%s, %zu function%s called more often, %zu improvement%s; "
		"%zu functions compared.\n",
		at_diff_failed(r) ? "FAIL" : "PASS", r->nregressed, r->nregressed == 1 ? "" : "s",
		r->nmore, r->nmore == 1 ? "" : "s", r->nimproved, r->nimproved == 1 ? "" : "s",
		r->compared);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v); /* counts stay exact */
	else
		fprintf(f, "%.6g", v);
}

/* A function's object in a JSON list: opening, name and binary. */
static void json_row_head(FILE *f, bool *first, const struct at_diff_row *x)
{
	fputs(*first ? "{\"name\":" : ",{\"name\":", f);
	*first = false;
	at_esc_json(f, x->name);
	fputs(",\"binary\":", f);
	at_esc_json(f, x->binary);
}

static void json_latency(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			 int verdict)
{
	bool first = true;

	fputc('[', f);
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (verdict < 0 ? !x->tested : x->verdict != verdict)
			continue;
		json_row_head(f, &first, x);
		fprintf(f, ",\"stat\":\"%s\",\"base\":%.0f,\"new\":%.0f,\"change_pct\":",
			at_diff_stat_name(o->stat), x->base, x->new);
		json_num(f, x->change_pct);
		fputs(",\"change_raw_pct\":", f);
		json_num(f, x->change_raw_pct);
		fputs(",\"p_value\":", f);
		json_num(f, x->p_adj);
		fputs(",\"p_raw\":", f);
		json_num(f, x->p_raw);
		fprintf(f, ",\"test\":\"%s\"}", x->test);
	}
	fputc(']', f);
}

static void json_names(FILE *f, const struct at_diff_result *r, bool appeared)
{
	bool first = true;

	fputc('[', f);
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (!(appeared ? (x->base_id < 0 && x->new_calls) : x->new_id < 0))
			continue;
		json_row_head(f, &first, x);
		fprintf(f, ",\"calls\":%" PRIu64 "}", appeared ? x->new_calls : x->base_calls);
	}
	fputc(']', f);
}

void at_diff_print_json(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			const char *base_path, const char *new_path)
{
	bool first = true;

	fputs("{\"base\":", f);
	at_esc_json(f, base_path);
	fputs(",\"new\":", f);
	at_esc_json(f, new_path);
	fprintf(f,
		",\"stat\":\"%s\",\"threshold_pct\":%g,\"alpha\":%g,\"correction\":\"holm\","
		"\"calls_per\":\"%s\",\"speed_factor\":%.6g,\"regressed\":%s,\"regressions\":",
		at_diff_stat_name(o->stat), o->threshold_pct, o->alpha,
		r->per_run ? "run" : "second", r->speed, at_diff_failed(r) ? "true" : "false");
	json_latency(f, r, o, AT_DV_WORSE);
	fputs(",\"improvements\":", f);
	json_latency(f, r, o, AT_DV_BETTER);
	fputs(",\"calls_changed\":[", f);
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (x->calls_verdict == AT_DV_SAME)
			continue;
		json_row_head(f, &first, x);
		fputs(",\"stat\":\"calls\",\"base\":", f);
		json_num(f, x->base_norm);
		fputs(",\"new\":", f);
		json_num(f, x->new_norm);
		fputs(",\"change_pct\":", f);
		json_num(f, x->calls_change_pct);
		fputs(",\"p_value\":", f);
		json_num(f, x->calls_p_adj);
		fprintf(f, ",\"direction\":\"%s\",\"estimated\":%s}",
			x->calls_verdict == AT_DV_WORSE ? "more" : "fewer",
			x->base_est || x->new_est ? "true" : "false");
	}
	fputs("],\"appeared\":", f);
	json_names(f, r, true);
	fputs(",\"vanished\":", f);
	json_names(f, r, false);
	if (o->all) {
		fputs(",\"functions\":", f);
		json_latency(f, r, o, -1);
	}
	fprintf(f, ",\"compared\":%zu}\n", r->compared);
}

void at_diff_print_markdown(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			    const char *base_path, const char *new_path)
{
	char a[32], b[32], c[32], d[32];
	const char *st = at_diff_stat_name(o->stat);
	size_t rows = r->nregressed + r->nimproved + r->nmore + r->nfewer;

	(void)base_path;
	(void)new_path;
	fprintf(f, "### adaptrace diff: %s\n\n",
		at_diff_failed(r) ? ":x: performance regression"
				  : ":white_check_mark: no regression");
	fprintf(f,
		"%zu regression%s, %zu function%s called more often, %zu improvement%s; %zu "
		"functions compared (%s, threshold %g %%, alpha %g, Holm-corrected; common "
		"factor %.3f).\n\n",
		r->nregressed, r->nregressed == 1 ? "" : "s", r->nmore, r->nmore == 1 ? "" : "s",
		r->nimproved, r->nimproved == 1 ? "" : "s", r->compared, st, o->threshold_pct,
		o->alpha, r->speed);
	if (!rows)
		goto names;
	if (r->speed != 1)
		fprintf(f,
			"NEW ran %.3fx the time of BASE over all functions (a slower or busier "
			"machine): latency changes are relative to that common factor.\n\n",
			r->speed);
	fprintf(f, "| Verdict | Function | Binary | Metric | Base | New | Change | p (Holm) |\n");
	fprintf(f, "|---|---|---|---|---:|---:|---:|---:|\n");
	for (int pass = 0; pass < 4; pass++)
		for (size_t k = 0; k < r->nrows; k++) {
			const struct at_diff_row *x = &r->rows[k];
			bool lat = pass == 0 || pass == 3;
			int want = pass == 0 || pass == 1 ? AT_DV_WORSE : AT_DV_BETTER;
			static const char *what[] = {"regression", "called more often",
						     "called less often", "improvement"};

			if ((lat ? x->verdict : x->calls_verdict) != want)
				continue;
			fprintf(f, "| %s | ", what[pass]);
			at_esc_md(f, x->name);
			fputs(" | ", f);
			at_esc_md(f, x->binary);
			fputs(" | ", f);
			if (lat)
				fprintf(f, "%s | %s | %s | %s | %s |\n", st,
					at_fmt_ns(a, sizeof(a), x->base),
					at_fmt_ns(b, sizeof(b), x->new),
					fmt_pct(c, sizeof(c), x->change_pct),
					fmt_p(d, sizeof(d), x->p_adj));
			else
				fprintf(
				    f, "calls per %s | %s | %s | %s | %s |\n",
				    r->per_run ? "run" : "second",
				    fmt_calls(a, sizeof(a), x->base_norm, r->per_run, x->base_est),
				    fmt_calls(b, sizeof(b), x->new_norm, r->per_run, x->new_est),
				    fmt_pct(c, sizeof(c), x->calls_change_pct),
				    fmt_p(d, sizeof(d), x->calls_p_adj));
		}
names:
	if (r->nappeared || r->nvanished)
		fprintf(f, "\n%zu function%s appeared, %zu vanished.\n", r->nappeared,
			r->nappeared == 1 ? "" : "s", r->nvanished);
}

int at_diff_write_junit(const char *path, const struct at_diff_result *r,
			const struct at_diff_opts *o)
{
	FILE *f = fopen(path, "w");
	size_t tests = 0, failures = 0;
	char a[32], b[32], c[32], d[32];
	int err = 0;

	if (!f)
		return -errno;
	for (size_t k = 0; k < r->nrows; k++)
		if (r->rows[k].base_id >= 0 && r->rows[k].new_id >= 0) {
			tests++;
			if (r->rows[k].verdict == AT_DV_WORSE ||
			    r->rows[k].calls_verdict == AT_DV_WORSE)
				failures++;
		}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f,
		"<testsuites name=\"adaptrace diff\" tests=\"%zu\" failures=\"%zu\" "
		"errors=\"0\" time=\"0\">\n",
		tests, failures);
	fprintf(f,
		"  <testsuite name=\"adaptrace.diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"skipped=\"0\" time=\"0\">\n",
		tests, failures);
	fprintf(f,
		"    <properties>\n"
		"      <property name=\"stat\" value=\"%s\"/>\n"
		"      <property name=\"threshold_pct\" value=\"%g\"/>\n"
		"      <property name=\"alpha\" value=\"%g\"/>\n"
		"    </properties>\n",
		at_diff_stat_name(o->stat), o->threshold_pct, o->alpha);
	for (size_t k = 0; k < r->nrows; k++) {
		const struct at_diff_row *x = &r->rows[k];

		if (x->base_id < 0 || x->new_id < 0)
			continue;
		fputs("    <testcase classname=\"adaptrace.", f);
		at_esc_xml(f, x->binary);
		fputs("\" name=\"", f);
		at_esc_xml(f, x->name);
		fputs("\" time=\"0\"", f);
		if (x->verdict != AT_DV_WORSE && x->calls_verdict != AT_DV_WORSE) {
			fputs("/>\n", f);
			continue;
		}
		/* JUnit allows one failure per test case: both findings go in it. */
		fputs(">\n      <failure type=\"", f);
		if (x->verdict == AT_DV_WORSE)
			fputs(x->calls_verdict == AT_DV_WORSE
				  ? "latency regression; called more often"
				  : "latency regression",
			      f);
		else
			fputs("called more often", f);
		fputs("\" message=\"", f);
		if (x->verdict == AT_DV_WORSE) {
			char sf[64] = "";

			/* Raw figures and a change relative to the common factor differ. */
			if (fabs(r->speed - 1) > 1e-9)
				snprintf(sf, sizeof(sf), " against the common speed factor %.3f",
					 r->speed);
			fprintf(f, "%s %s -> %s (%s%s, p=%s, %s)%s", at_diff_stat_name(o->stat),
				at_fmt_ns(a, sizeof(a), x->base), at_fmt_ns(b, sizeof(b), x->new),
				fmt_pct(c, sizeof(c), x->change_pct), sf,
				fmt_p(d, sizeof(d), x->p_adj), x->test,
				x->calls_verdict == AT_DV_WORSE ? "; " : "");
		}
		if (x->calls_verdict == AT_DV_WORSE)
			fprintf(f, "calls per %s %s -> %s (%s)", r->per_run ? "run" : "second",
				fmt_calls(a, sizeof(a), x->base_norm, r->per_run, x->base_est),
				fmt_calls(b, sizeof(b), x->new_norm, r->per_run, x->new_est),
				fmt_pct(c, sizeof(c), x->calls_change_pct));
		fputs("\"/>\n", f);
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static int read_trace(const char *path, struct at_trace *t)
{
	char err[AT_ERRLEN];
	int rc = at_trace_read(path, t, true, err, sizeof(err));

	if (rc < 0) {
		at_err("%s", err);
		return -1;
	}
	if (rc > 0)
		at_warn("%s", err);
	return 0;
}

struct diff_out {
	bool json, markdown;
	const char *junit;
};

static int diff_files_out(const char *base_path, const char *new_path, const struct at_diff_opts *o,
			  FILE *out, const struct diff_out *d)
{
	struct at_trace tb, tn;
	struct at_profile_set pb, pn;
	struct at_diff_result res;
	char err[AT_ERRLEN];
	int rc;

	if (read_trace(base_path, &tb))
		return AT_EXIT_USAGE;
	if (read_trace(new_path, &tn)) {
		at_trace_free(&tb);
		return AT_EXIT_USAGE;
	}
	at_profile_set_init(&pb, &tb);
	at_profile_set_init(&pn, &tn);
	if (at_diff_compute(&tb, pb.p, &tn, pn.p, o, &res, err, sizeof(err))) {
		at_err("%s", err);
		rc = AT_EXIT_USAGE;
		goto out;
	}
	rc = at_diff_failed(&res) ? AT_EXIT_REGRESSION : AT_EXIT_OK;
	if (out && d && d->json)
		at_diff_print_json(out, &res, o, base_path, new_path);
	else if (out && d && d->markdown)
		at_diff_print_markdown(out, &res, o, base_path, new_path);
	else if (out)
		at_diff_print_table(out, &res, o, base_path, new_path);
	if (d && d->junit) {
		int e = at_diff_write_junit(d->junit, &res, o);

		if (e) {
			at_err("cannot write %s: %s", d->junit, strerror(-e));
			rc = AT_EXIT_USAGE;
		}
	}
	at_diff_free(&res);
out:
	at_profile_set_free(&pb);
	at_profile_set_free(&pn);
	at_trace_free(&tb);
	at_trace_free(&tn);
	return rc;
}

int at_diff_files(const char *base_path, const char *new_path, const struct at_diff_opts *o,
		  FILE *out)
{
	return diff_files_out(base_path, new_path, o, out, NULL);
}

static void diff_usage(FILE *f)
{
	fputs("Usage: adaptrace diff BASE NEW [--threshold PCT] [--alpha A]\n"
	      "                      [--stat mean|p50|p90|p99] [--json | --markdown]\n"
	      "                      [--junit FILE] [--force] [--absolute] [--all]\n"
	      "\n"
	      "Compare two recordings, typically of a benchmark run on the base commit (BASE)\n"
	      "and on a change (NEW), and say which functions got slower, faster, or are\n"
	      "called more or less often. Functions are matched by binary file name and\n"
	      "symbol name (build-ids differ between builds); USDT probes by name.\n"
	      "\n"
	      "  --stat S        latency statistic compared: p50 (default), mean, p90, p99\n"
	      "  --threshold PCT smallest change that counts, in percent (default 10)\n"
	      "  --alpha A       family-wise significance level (default 0.01)\n"
	      "  --json          one JSON object: regressions[], improvements[],\n"
	      "                  calls_changed[] (name, binary, stat, base, new, change_pct,\n"
	      "                  p_value), appeared[], vanished[], compared\n"
	      "  --markdown      a Markdown table, for a pull-request comment\n"
	      "  --junit FILE    also write JUnit XML: one test case per function compared,\n"
	      "                  failed when it regressed or is called more often\n"
	      "  --force         compare recordings of different programs\n"
	      "  --absolute      no common-factor normalisation (see below)\n"
	      "  --all           also list every function compared (table; JSON key\n"
	      "                  functions[]), with its change and p-value\n"
	      "\n"
	      "Statistics. A latency regression needs both: a significant difference and an\n"
	      "effect larger than the threshold on the chosen statistic (whole-run values).\n"
	      "The test treats each recording interval, not each call, as one observation:\n"
	      "with millions of calls, any test on the pooled calls finds every tiny shift\n"
	      "significant, and calls within a run are not independent. Welch's t-test\n"
	      "compares the two series of per-interval values of the statistic (unequal\n"
	      "variances allowed). When a side has fewer than 3 intervals with timed calls,\n"
	      "a Mann-Whitney U test computed from the two latency histograms (ties within a\n"
	      "bucket corrected) is used instead. The p-values of all functions compared\n"
	      "are adjusted by Holm-Bonferroni, which keeps the chance of any false alarm\n"
	      "at alpha without assuming the tests independent.\n"
	      "\n"
	      "Between runs, the machine itself varies more than anything inside a run (a\n"
	      "busy CI runner or a shared CPU core makes every function slower alike). So,\n"
	      "by default, NEW's values are first divided by the common factor: the median\n"
	      "over all functions compared of the NEW/BASE ratio of the statistic (with 5\n"
	      "functions or more). A change that slows down every function alike then goes\n"
	      "unreported, but is shown as the factor; --absolute compares as measured, for\n"
	      "quiet, dedicated machines. Record with --interval\n"
	      "small enough to give each run several intervals (e.g. --interval 0.1).\n"
	      "\n"
	      "Calls. When both recordings ran a command to its end (record -- CMD), calls\n"
	      "are compared per run, exactly, and only the threshold decides. Otherwise\n"
	      "calls per second of recording are compared with a z-test on the two Poisson\n"
	      "rates (Holm-corrected). Called more often beyond the threshold fails the diff;\n"
	      "less often is reported.\n"
	      "\n"
	      "Recordings of different programs (different main binary names and fewer than\n"
	      "half of the functions in common) are refused unless --force.\n"
	      "\n"
	      "Exit status: 0 no regression, 1 a regression or a function called more often,\n"
	      "2 bad usage, unreadable file or different programs.\n",
	      f);
}

int cmd_diff(int argc, char **argv)
{
	enum {
		OPT_THRESHOLD = 256,
		OPT_ALPHA,
		OPT_STAT,
		OPT_JUNIT,
		OPT_FORCE,
		OPT_ABSOLUTE,
		OPT_ALL
	};
	static const struct option opts[] = {
	    {"threshold", required_argument, NULL, OPT_THRESHOLD},
	    {"alpha", required_argument, NULL, OPT_ALPHA},
	    {"stat", required_argument, NULL, OPT_STAT},
	    {"json", no_argument, NULL, 'j'},
	    {"markdown", no_argument, NULL, 'm'},
	    {"junit", required_argument, NULL, OPT_JUNIT},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"absolute", no_argument, NULL, OPT_ABSOLUTE},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct at_diff_opts o;
	struct diff_out d = {0};
	char *end;
	int c;

	at_diff_opts_default(&o);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_THRESHOLD:
			o.threshold_pct = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "%")) ||
			    !(o.threshold_pct >= 0) || o.threshold_pct > 1e6)
				at_die(AT_EXIT_USAGE,
				       "--threshold takes a percentage like 10, not '%s'", optarg);
			break;
		case OPT_ALPHA:
			o.alpha = strtod(optarg, &end);
			if (end == optarg || *end || !(o.alpha > 0 && o.alpha < 1))
				at_die(AT_EXIT_USAGE,
				       "--alpha takes a probability between 0 and 1, like 0.01, "
				       "not '%s'",
				       optarg);
			break;
		case OPT_STAT:
			if (!at_diff_parse_stat(optarg, &o.stat))
				at_die(AT_EXIT_USAGE,
				       "unknown --stat '%s': use p50, mean, p90 or p99", optarg);
			break;
		case 'j':
			d.json = true;
			break;
		case 'm':
			d.markdown = true;
			break;
		case OPT_JUNIT:
			d.junit = optarg;
			break;
		case OPT_FORCE:
			o.force = true;
			break;
		case OPT_ABSOLUTE:
			o.absolute = true;
			break;
		case OPT_ALL:
			o.all = true;
			break;
		case 'h':
			diff_usage(stdout);
			return AT_EXIT_OK;
		default:
			fputs("Run 'adaptrace diff --help' for the options.\n", stderr);
			return AT_EXIT_USAGE;
		}
	}
	if (d.json && d.markdown)
		at_die(AT_EXIT_USAGE, "--json and --markdown exclude each other: pick one");
	if (argc - optind != 2)
		at_die(AT_EXIT_USAGE, "diff takes two trace files: adaptrace diff BASE NEW");
	return diff_files_out(argv[optind], argv[optind + 1], &o, stdout, &d);
}
