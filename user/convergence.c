// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sample sizes and statistical tests for the adaptive sampler. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convergence.h"
#include "util.h"

#define TINY 1e-300
#define EPS  1e-15

double at_norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Acklam's rational approximation, then one Halley step on erfc. */
double at_norm_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00,  2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	double q, r, x, e, u;

	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -HUGE_VAL;
	if (p == 1)
		return HUGE_VAL;
	if (p < 0.02425 || p > 1 - 0.02425) {
		q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
		if (p > 0.5)
			x = -x;
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	e = at_norm_cdf(x) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

double at_z_for_confidence(double conf)
{
	if (!(conf > 0))
		return 0;
	if (conf >= 1)
		return HUGE_VAL;
	return at_norm_quantile(1 - (1 - conf) / 2);
}

double at_cochran_n0(double z, double p, double e)
{
	return z * z * p * (1 - p) / (e * e);
}

double at_cochran_n(double n0, uint64_t population)
{
	if (!population || isinf(n0))
		return isinf(n0) && population ? (double)population : n0;
	return n0 / (1 + (n0 - 1) / (double)population);
}

double at_decaying_confidence(double t_s, double max_len_s)
{
	if (!(max_len_s > 0) || t_s < 0)
		return 1;
	return exp(-t_s / max_len_s);
}

double at_cycle_need(double t_s, double max_len_s, double e, double p, uint64_t population)
{
	double z = at_z_for_confidence(at_decaying_confidence(t_s, max_len_s));

	if (isinf(z))
		return HUGE_VAL;
	return at_cochran_n(at_cochran_n0(z, p, e), population);
}

bool at_cycle_done(double t_s, double max_len_s, double e, double p, uint64_t population,
		   uint64_t sample)
{
	return sample > 0 &&
	       (double)sample >= ceil(at_cycle_need(t_s, max_len_s, e, p, population));
}

/* Continued fraction of the incomplete beta (modified Lentz). */
static double ibeta_cf(double a, double b, double x)
{
	double f = 1, c = 1, d = 0, num, cd;

	for (int i = 0; i <= 400; i++) {
		int m = i / 2;

		if (i == 0)
			num = 1;
		else if (i % 2 == 0)
			num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		else
			num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		if (fabs(d) < TINY)
			d = TINY;
		d = 1 / d;
		c = 1 + num / c;
		if (fabs(c) < TINY)
			c = TINY;
		cd = c * d;
		f *= cd;
		if (fabs(1 - cd) < 1e-14)
			break;
	}
	return f - 1;
}

double at_ibeta(double a, double b, double x)
{
	double front;

	if (!(a > 0) || !(b > 0) || isnan(x))
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	if (x > (a + 1) / (a + b + 2))
		return 1 - at_ibeta(b, a, 1 - x);
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)) / a;
	return front * ibeta_cf(a, b, x);
}

double at_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	tail = 0.5 * at_ibeta(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double at_igamc(double a, double x)
{
	double sum, term, b, c, d, h, an, del;

	if (!(a > 0) || isnan(x))
		return NAN;
	if (x <= 0)
		return 1;
	if (isinf(x))
		return 0;
	if (x < a + 1) {
		/* Series for P(a, x); Q = 1 - P. */
		sum = term = 1 / a;
		for (int n = 1; n < 1000; n++) {
			term *= x / (a + n);
			sum += term;
			if (fabs(term) < fabs(sum) * EPS)
				break;
		}
		return 1 - sum * exp(-x + a * log(x) - lgamma(a));
	}
	/* Continued fraction for Q(a, x) (modified Lentz). */
	b = x + 1 - a;
	c = 1 / TINY;
	d = 1 / b;
	h = d;
	for (int i = 1; i < 1000; i++) {
		an = -i * (i - a);
		b += 2;
		d = an * d + b;
		if (fabs(d) < TINY)
			d = TINY;
		c = b + an / c;
		if (fabs(c) < TINY)
			c = TINY;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

double at_chi2_sf(double x, double df)
{
	if (!(df > 0))
		return NAN;
	return at_igamc(df / 2, x / 2);
}

/* Q_KS(l) = 2 sum (-1)^(j-1) exp(-2 j^2 l^2); the other series below 1.18. */
double at_ks_q(double l)
{
	double sum = 0, term;

	if (isnan(l))
		return NAN;
	if (l < 0.2)
		return 1;
	if (l < 1.18) {
		double y = exp(-M_PI * M_PI / (8 * l * l));

		for (int j = 1; j < 100; j += 2) {
			term = pow(y, (double)j * j);
			sum += term;
			if (term < 1e-17)
				break;
		}
		return 1 - sqrt(2 * M_PI) / l * sum;
	}
	for (int j = 1; j < 100; j++) {
		term = exp(-2.0 * j * j * l * l);
		sum += (j % 2 ? 1 : -1) * term;
		if (term < 1e-17)
			break;
	}
	sum *= 2;
	return sum < 0 ? 0 : sum > 1 ? 1 : sum;
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;

	/* Welford: stable for latencies around 1e9 ns. */
	for (size_t i = 0; i < n; i++) {
		double d = v[i] - m;

		m += d / (double)(i + 1);
		s += d * (v[i] - m);
	}
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

int at_welch_summary(double mean1, double var1, double n1, double mean2, double var2, double n2,
		     struct at_ttest *r)
{
	double s1, s2, se;

	memset(r, 0, sizeof(*r));
	r->mean1 = mean1;
	r->mean2 = mean2;
	r->p = 1;
	if (n1 < 2 || n2 < 2)
		return -1;
	s1 = var1 / n1;
	s2 = var2 / n2;
	se = sqrt(s1 + s2);
	if (!(se > 0)) {
		r->p = mean1 == mean2 ? 1 : 0;
		r->t = mean1 == mean2 ? 0 : (mean2 > mean1 ? HUGE_VAL : -HUGE_VAL);
		return -1;
	}
	r->t = (mean2 - mean1) / se;
	r->df = (s1 + s2) * (s1 + s2) / (s1 * s1 / (n1 - 1) + s2 * s2 / (n2 - 1));
	r->p = 2 * at_t_cdf(-fabs(r->t), r->df);
	if (r->p > 1)
		r->p = 1;
	return 0;
}

int at_welch(const double *a, size_t na, const double *b, size_t nb, struct at_ttest *r)
{
	double m1, v1, m2, v2;

	mean_var(a, na, &m1, &v1);
	mean_var(b, nb, &m2, &v2);
	return at_welch_summary(m1, v1, (double)na, m2, v2, (double)nb, r);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int at_ks2(const double *a, size_t na, const double *b, size_t nb, double *d, double *p)
{
	double *x, *y, dmax = 0, ne;
	size_t i = 0, j = 0;

	*d = 0;
	*p = 1;
	if (!na || !nb)
		return -1;
	x = at_xcalloc(na, sizeof(*x));
	y = at_xcalloc(nb, sizeof(*y));
	memcpy(x, a, na * sizeof(*x));
	memcpy(y, b, nb * sizeof(*y));
	qsort(x, na, sizeof(*x), cmp_double);
	qsort(y, nb, sizeof(*y), cmp_double);
	/* Step both ECDFs past each distinct value, ties together. */
	while (i < na && j < nb) {
		double v = x[i] < y[j] ? x[i] : y[j], gap;

		while (i < na && x[i] <= v)
			i++;
		while (j < nb && y[j] <= v)
			j++;
		gap = fabs((double)i / (double)na - (double)j / (double)nb);
		if (gap > dmax)
			dmax = gap;
	}
	free(x);
	free(y);
	ne = (double)na * (double)nb / (double)(na + nb);
	*d = dmax;
	*p = at_ks_q((sqrt(ne) + 0.12 + 0.11 / sqrt(ne)) * dmax);
	return 0;
}

int at_chi2_homog(const uint64_t *a, const uint64_t *b, size_t k, struct at_chi2 *r)
{
	double na = 0, nb = 0, n, ca = 0, cb = 0, stat = 0, dmax = 0;
	double ma = 0, mb = 0; /* the open merged cell */
	uint32_t cells = 0;

	memset(r, 0, sizeof(*r));
	r->p = 1;
	for (size_t i = 0; i < k; i++) {
		na += (double)a[i];
		nb += (double)b[i];
	}
	if (!(na > 0) || !(nb > 0))
		return -1;
	n = na + nb;
	for (size_t i = 0; i < k; i++) {
		double gap;

		ca += (double)a[i];
		cb += (double)b[i];
		gap = fabs(ca / na - cb / nb);
		if (gap > dmax)
			dmax = gap;
	}
	/*
	 * Merge adjacent cells until both rows expect >= 5 in the merged cell;
	 * a short remainder joins the last closed cell.
	 */
	double *cell_a = at_xcalloc(k + 1, sizeof(double));
	double *cell_b = at_xcalloc(k + 1, sizeof(double));

	for (size_t i = 0; i < k; i++) {
		ma += (double)a[i];
		mb += (double)b[i];
		if ((ma + mb) * na / n >= 5 && (ma + mb) * nb / n >= 5) {
			cell_a[cells] = ma;
			cell_b[cells] = mb;
			cells++;
			ma = mb = 0;
		}
	}
	if (ma + mb > 0) {
		if (cells) {
			cell_a[cells - 1] += ma;
			cell_b[cells - 1] += mb;
		} else {
			cell_a[0] = ma;
			cell_b[0] = mb;
			cells = 1;
		}
	}
	for (uint32_t c = 0; c < cells; c++) {
		double tot = cell_a[c] + cell_b[c], ea = tot * na / n, eb = tot * nb / n;

		stat += (cell_a[c] - ea) * (cell_a[c] - ea) / ea +
			(cell_b[c] - eb) * (cell_b[c] - eb) / eb;
	}
	free(cell_a);
	free(cell_b);
	r->stat = stat;
	r->cells = cells;
	r->df = cells > 1 ? cells - 1 : 0;
	r->p = cells > 1 ? at_chi2_sf(stat, r->df) : 1;
	r->d = dmax;
	return 0;
}

static void fmt_p(char *buf, size_t len, double p)
{
	if (p < 1e-9)
		snprintf(buf, len, "p < 1e-9");
	else
		snprintf(buf, len, "p %.2g", p);
}

bool at_drift(const uint64_t *ref, const uint64_t *win, double alpha, double min_effect, char *why,
	      size_t whylen)
{
	struct at_chi2 r;
	char ps[24], a[24], b[24], c[24], e[24];
	bool drift;

	if (at_chi2_homog(ref, win, AT_HIST_BUCKETS, &r)) {
		if (why && whylen)
			snprintf(why, whylen, "no drift test: an empty histogram");
		return false;
	}
	drift = r.p < alpha && r.d >= min_effect;
	if (why && whylen) {
		fmt_p(ps, sizeof(ps), r.p);
		at_fmt_ns(a, sizeof(a), (double)at_hist_quantile(ref, 0.5, 0, 0));
		at_fmt_ns(b, sizeof(b), (double)at_hist_quantile(win, 0.5, 0, 0));
		at_fmt_ns(c, sizeof(c), (double)at_hist_quantile(ref, 0.9, 0, 0));
		at_fmt_ns(e, sizeof(e), (double)at_hist_quantile(win, 0.9, 0, 0));
		snprintf(
		    why, whylen,
		    "latency %s: chi2 %.1f, df %.0f, %s, %.0f %% of calls moved (p50 %s -> %s, "
		    "p90 %s -> %s)",
		    drift ? "drifted" : "steady", r.stat, r.df, ps, 100 * r.d, a, b, c, e);
	}
	return drift;
}

/* FNV-1a of a string argument, for the categorical comparison. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return s ? h : 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Compare the string values of two samples as categories: counts per
 * distinct hash in a and b (categories in hash order, merged as cells).
 */
static int str_compare(const struct at_event *a, size_t na, const struct at_event *b, size_t nb,
		       uint32_t arg, struct at_chi2 *r)
{
	uint64_t *all = at_xcalloc(na + nb, sizeof(uint64_t)), *ha, *hb;
	size_t n = 0, k = 0;
	int rc;

	for (size_t i = 0; i < na; i++)
		all[n++] = str_hash(a[i].args[arg].str);
	for (size_t i = 0; i < nb; i++)
		all[n++] = str_hash(b[i].args[arg].str);
	qsort(all, n, sizeof(*all), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!i || all[i] != all[i - 1])
			all[k++] = all[i];
	ha = at_xcalloc(k + 1, sizeof(uint64_t));
	hb = at_xcalloc(k + 1, sizeof(uint64_t));
	for (size_t i = 0; i < na + nb; i++) {
		const struct at_event *e = i < na ? &a[i] : &b[i - na];
		uint64_t h = str_hash(e->args[arg].str);
		uint64_t *pos = bsearch(&h, all, k, sizeof(*all), cmp_u64);

		(i < na ? ha : hb)[pos - all]++;
	}
	rc = at_chi2_homog(ha, hb, k, r);
	/* d is a cumulative gap over hash order: use the largest share change instead. */
	r->d = 0;
	for (size_t c = 0; c < k; c++) {
		double gap = fabs((double)ha[c] / (double)na - (double)hb[c] / (double)nb);

		if (gap > r->d)
			r->d = gap;
	}
	free(all);
	free(ha);
	free(hb);
	return rc;
}

static double event_num(const struct at_event *e, uint32_t arg)
{
	const struct at_arg *x = &e->args[arg];

	return x->type == AT_ARG_INT ? (double)(int64_t)x->v : (double)x->v;
}

/* Argument i's type if every event of both samples declares it the same way, else RAW. */
static uint32_t common_type(const struct at_event *a, size_t na, const struct at_event *b,
			    size_t nb, uint32_t i)
{
	uint32_t t = AT_ARG_RAW;

	for (size_t j = 0; j < na + nb; j++) {
		const struct at_event *e = j < na ? &a[j] : &b[j - na];
		uint32_t et = i < e->nargs && i < AT_MAX_ARGS ? e->args[i].type : AT_ARG_RAW;

		if (!j)
			t = et;
		else if (et != t)
			return AT_ARG_RAW;
	}
	return t;
}

bool at_stationary(const struct at_event *a, size_t na, const struct at_event *b, size_t nb,
		   double alpha, double min_effect, char *why, size_t whylen)
{
	uint32_t types[AT_MAX_ARGS], k = 1;
	double *x, *y, d, p, aa;
	bool ok = true;
	size_t off = 0;
	char buf[48];

	if (!na || !nb) {
		if (why && whylen)
			snprintf(why, whylen, "not stationary: an empty sample");
		return false;
	}
	for (uint32_t i = 0; i < AT_MAX_ARGS; i++) {
		types[i] = common_type(a, na, b, nb, i);
		if (types[i] == AT_ARG_INT || types[i] == AT_ARG_UINT || types[i] == AT_ARG_STR)
			k++;
	}
	aa = alpha / k; /* Bonferroni over the components */
	x = at_xcalloc(na, sizeof(*x));
	y = at_xcalloc(nb, sizeof(*y));
	for (int c = -1; c < AT_MAX_ARGS; c++) {
		bool differs;
		struct at_chi2 r;

		if (c >= 0 && types[c] != AT_ARG_INT && types[c] != AT_ARG_UINT &&
		    types[c] != AT_ARG_STR)
			continue;
		if (c >= 0 && types[c] == AT_ARG_STR) {
			str_compare(a, na, b, nb, (uint32_t)c, &r);
			d = r.d;
			p = r.p;
		} else {
			for (size_t i = 0; i < na; i++)
				x[i] = c < 0 ? (double)a[i].duration_ns
					     : event_num(&a[i], (uint32_t)c);
			for (size_t i = 0; i < nb; i++)
				y[i] = c < 0 ? (double)b[i].duration_ns
					     : event_num(&b[i], (uint32_t)c);
			at_ks2(x, na, y, nb, &d, &p);
		}
		differs = p < aa && d >= min_effect;
		if (differs)
			ok = false;
		if (c < 0)
			snprintf(buf, sizeof(buf), "latency");
		else
			snprintf(buf, sizeof(buf), "arg%d", c + 1);
		if (why && whylen && off < whylen)
			off += (size_t)snprintf(
			    why + off, whylen - off, "%s%s %s d %.2f p %.2g", off ? ", " : "", buf,
			    c >= 0 && types[c] == AT_ARG_STR ? "chi2" : "KS", d, p);
	}
	free(x);
	free(y);
	if (why && whylen) {
		char *tmp = at_xstrdup(why);

		snprintf(why, whylen, "%s: %s (n %zu and %zu)",
			 ok ? "stationary" : "not stationary", tmp, na, nb);
		free(tmp);
	}
	return ok;
}
