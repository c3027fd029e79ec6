// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests: distributions, Cochran, Welch, KS, chi-square, drift, stationarity. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convergence.h"

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

static void test_distributions(void)
{
	check(near(at_norm_quantile(0.975), 1.959963985, 1e-8) &&
		  near(at_norm_quantile(0.005), -2.575829304, 1e-8) &&
		  near(at_norm_quantile(1e-10), -6.361340902, 1e-6),
	      "normal quantiles 0.975, 0.005, 1e-10");
	check(near(at_z_for_confidence(0.95), 1.959964, 1e-6) &&
		  near(at_z_for_confidence(0.99), 2.575829, 1e-6) && isinf(at_z_for_confidence(1)),
	      "z for 95 % and 99 % confidence; infinite at 100 %");
	check(near(at_t_cdf(2, 10), 0.963306, 1e-6) && near(at_t_cdf(-2.228139, 10), 0.025, 1e-6) &&
		  near(at_t_cdf(12.706205, 1), 0.975, 1e-6) && near(at_t_cdf(0, 3), 0.5, 1e-12),
	      "Student t CDF against table values");
	check(near(at_chi2_sf(3.841459, 1), 0.05, 1e-6) &&
		  near(at_chi2_sf(18.307038, 10), 0.05, 1e-6) &&
		  near(at_chi2_sf(124.342113, 100), 0.05, 1e-6) && at_chi2_sf(0, 4) == 1,
	      "chi-square upper tail at the 5 % points of 1, 10 and 100 df");
	check(near(at_ks_q(1.358099), 0.05, 1e-5) && near(at_ks_q(1.0), 0.270000, 1e-5) &&
		  near(at_ks_q(0.5), 0.963945, 1e-5) && at_ks_q(0.1) == 1,
	      "Kolmogorov distribution tail at 1.358 (5 %), 1.0 and 0.5");
	printf("#   Q(1.0) %.6f Q(0.5) %.6f\n", at_ks_q(1.0), at_ks_q(0.5));
}

static void test_cochran(void)
{
	double n0 = at_cochran_n0(at_z_for_confidence(0.95), 0.5, 0.05);
	double l = 60;

	check(near(n0, 384.146, 0.001) && ceil(n0) == 385,
	      "Cochran: n0 = 384.1 at 95 %, e 5 %, p .5 (385 calls)");
	check(near(at_cochran_n0(1.96, 0.5, 0.05), 384.16, 1e-9), "Cochran with z 1.96: 384.16");
	check(near(at_cochran_n(n0, 1000), 277.7, 0.1) &&
		  near(at_cochran_n(n0, 10000), 369.9, 0.1) && at_cochran_n(n0, 0) == n0,
	      "finite population correction: 278 of 1000, 370 of 10000");
	check(isinf(at_cycle_need(0, l, 0.05, 0.5, 0)) &&
		  near(at_cycle_need(l * log(1 / 0.95), l, 0.05, 0.5, 0), 384.146, 0.01) &&
		  near(at_cycle_need(l, l, 0.05, 0.5, 0), 22.92, 0.01),
	      "decaying confidence: infinite at t 0, 384 at 95 %, 23 after maxLength (1/e)");
	printf("#   need at t=maxLength: %.3f\n", at_cycle_need(l, l, 0.05, 0.5, 0));
	check(!at_cycle_done(0, l, 0.05, 0.5, 10, 10) &&
		  at_cycle_done(l, l, 0.05, 0.5, 100000, 23) &&
		  !at_cycle_done(l, l, 0.05, 0.5, 100000, 22) &&
		  !at_cycle_done(3, l, 0.05, 0.5, 100000, 0),
	      "cycle done once the sample reaches the decayed size");
}

static void test_welch(void)
{
	/* Thesis eq. 5.2: normalBehavior vs currentPerf. */
	double normal[] = {600, 780, 1050, 1100}, current[] = {500, 720, 950, 1020};
	double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
		       21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
	double a2[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
		       24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
	struct at_ttest t;

	/* Unpaired: equal (p 0.63), as the thesis concludes; a paired test gives t 8.9, p 0.003. */
	check(!at_welch(normal, 4, current, 4, &t) && near(t.t, -0.5103, 1e-3) &&
		  near(t.df, 6.0, 0.01) && t.p > 0.62 && t.p < 0.64,
	      "Welch on the thesis's example: t -0.51, df 6.0, p 0.63 (equal)");
	printf("#   thesis example: t %.4f df %.3f p %.4f\n", t.t, t.df, t.p);
	check(fabs(2 * at_t_cdf(-8.878, 3) - 0.003) < 0.0005,
	      "the same example paired (differences 100, 60, 100, 80): t 8.88, df 3, p 0.003");
	check(!at_welch(a1, 15, a2, 15, &t) && near(t.t, 2.4554, 1e-3) && near(t.df, 24.99, 0.01) &&
		  near(t.p, 0.0214, 0.0005),
	      "Welch, textbook example: t 2.46, df 24.99, p 0.021");
	check(at_welch_summary(10, 0, 5, 10, 0, 5, &t) == -1 && t.p == 1 &&
		  at_welch_summary(10, 0, 5, 11, 0, 5, &t) == -1 && t.p == 0 &&
		  at_welch_summary(10, 1, 1, 11, 1, 5, &t) == -1,
	      "Welch: zero variances and n < 2 are reported, not divided by");
}

static void test_ks_chi2(void)
{
	double a[100], b[100], d, p;
	uint64_t *h1 = calloc(AT_HIST_BUCKETS, sizeof(uint64_t));
	uint64_t *h2 = calloc(AT_HIST_BUCKETS, sizeof(uint64_t));
	struct at_chi2 r;
	char why[256];

	for (int i = 0; i < 100; i++) {
		a[i] = i;
		b[99 - i] = i;
	}
	check(!at_ks2(a, 100, b, 100, &d, &p) && d == 0 && p == 1, "KS2: same sample, d 0, p 1");
	for (int i = 0; i < 100; i++)
		b[i] = i + 20;
	at_ks2(a, 100, b, 100, &d, &p);
	check(near(d, 0.2, 1e-12) &&
		  near(p, at_ks_q((sqrt(50) + 0.12 + 0.11 / sqrt(50)) * 0.2), 1e-12) && p > 0.02 &&
		  p < 0.05,
	      "KS2: shifted by a fifth, d 0.2, p 0.03");
	check(at_ks2(a, 0, b, 10, &d, &p) == -1, "KS2: empty sample refused");

	/* Latency histograms around 2 us */
	h1[at_hist_bucket(1800)] = 3000;
	h1[at_hist_bucket(2000)] = 5000;
	h1[at_hist_bucket(2400)] = 2000;
	for (int i = 0; i < AT_HIST_BUCKETS; i++)
		h2[i] = 2 * h1[i];
	check(!at_chi2_homog(h1, h2, AT_HIST_BUCKETS, &r) && r.stat == 0 && r.p == 1 &&
		  r.cells == 3 && !at_drift(h1, h2, 0.05, 0.1, why, sizeof(why)),
	      "same shape, twice the calls: no drift");
	h2[at_hist_bucket(2000)] -= 6000;
	h2[at_hist_bucket(5000000)] += 6000;
	check(at_drift(h1, h2, 0.05, 0.1, why, sizeof(why)) && strstr(why, "30 % of calls moved"),
	      "30 % of the calls moved to 5 ms: drift");
	printf("#   %s\n", why);
	/* a million calls, 2 % moved: significant, not material */
	memset(h2, 0, AT_HIST_BUCKETS * sizeof(uint64_t));
	for (int i = 0; i < AT_HIST_BUCKETS; i++)
		h1[i] *= 100;
	for (int i = 0; i < AT_HIST_BUCKETS; i++)
		h2[i] = h1[i];
	h2[at_hist_bucket(2000)] -= 20000;
	h2[at_hist_bucket(2400)] += 20000;
	at_chi2_homog(h1, h2, AT_HIST_BUCKETS, &r);
	check(r.p < 1e-9 && near(r.d, 0.02, 1e-9) && !at_drift(h1, h2, 0.05, 0.1, NULL, 0),
	      "a million calls, 2 % moved: significant but under the 10 % effect floor");
	/* sparse buckets are merged */
	memset(h1, 0, AT_HIST_BUCKETS * sizeof(uint64_t));
	memset(h2, 0, AT_HIST_BUCKETS * sizeof(uint64_t));
	for (int i = 100; i < 140; i++)
		h1[i] = h2[i] = 1;
	at_chi2_homog(h1, h2, AT_HIST_BUCKETS, &r);
	check(r.cells == 8 && r.stat == 0, "one call per bucket: merged into cells expecting >= 5");
	memset(h2, 0, AT_HIST_BUCKETS * sizeof(uint64_t));
	check(at_chi2_homog(h1, h2, AT_HIST_BUCKETS, &r) == -1 &&
		  !at_drift(h1, h2, 0.05, 0.1, why, sizeof(why)) &&
		  !strcmp(why, "no drift test: an empty histogram"),
	      "an empty row is refused");
	free(h1);
	free(h2);
}

static struct at_event *events(size_t n, double scale, uint32_t argtype, int argmod,
			       const char *strv)
{
	struct at_event *e = calloc(n, sizeof(*e));

	for (size_t i = 0; i < n; i++) {
		/* a spread of latencies: 1..2 us in a fixed pseudo-random order */
		e[i].duration_ns = (uint64_t)(scale * (1000 + (double)((i * 7919) % 1000)));
		e[i].nargs = 2;
		e[i].args[0].type = argtype;
		e[i].args[0].v = (uint64_t)((i * 31) % (uint64_t)argmod);
		e[i].args[1].type = AT_ARG_STR;
		e[i].args[1].str = (char *)(i % 3 ? strv : "common");
	}
	return e;
}

static void test_stationary(void)
{
	struct at_event *a = events(400, 1, AT_ARG_INT, 10, "x"),
			*b = events(380, 1, AT_ARG_INT, 10, "x");
	struct at_event *slow = events(380, 1.6, AT_ARG_INT, 10, "x");
	struct at_event *args = events(380, 1, AT_ARG_INT, 50, "x");
	struct at_event *ptrs = events(380, 1, AT_ARG_PTR, 50, "x");
	struct at_event *ptra = events(400, 1, AT_ARG_PTR, 10, "x");
	struct at_event *strs = events(380, 1, AT_ARG_INT, 10, "y");
	char why[256];

	check(at_stationary(a, 400, b, 380, 0.05, 0.1, why, sizeof(why)) &&
		  !strncmp(why, "stationary: latency KS d", 24),
	      "same profile over two cycles: stationary");
	printf("#   %s\n", why);
	check(!at_stationary(a, 400, slow, 380, 0.05, 0.1, why, sizeof(why)),
	      "latency 60 % slower: not stationary");
	printf("#   %s\n", why);
	check(!at_stationary(a, 400, args, 380, 0.05, 0.1, why, sizeof(why)),
	      "integer argument spread changed: not stationary");
	check(at_stationary(ptra, 400, ptrs, 380, 0.05, 0.1, why, sizeof(why)),
	      "pointer values changed: ignored, still stationary");
	check(!at_stationary(a, 400, strs, 380, 0.05, 0.1, why, sizeof(why)) &&
		  strstr(why, "arg2 chi2"),
	      "string argument values changed: not stationary");
	check(!at_stationary(a, 0, b, 380, 0.05, 0.1, why, sizeof(why)),
	      "empty cycle: not stationary");
	free(a);
	free(b);
	free(slow);
	free(args);
	free(ptrs);
	free(ptra);
	free(strs);
}

int main(void)
{
	test_distributions();
	test_cochran();
	test_welch();
	test_ks_chi2();
	test_stationary();
	printf("# %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
