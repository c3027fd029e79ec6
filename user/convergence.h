/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When has the detail phase learned enough? The statistics behind the
 * adaptive sampler: Cochran's sample size with the decaying confidence of
 * ADP (Mertz 2021, Algorithm 3), Welch's unpaired t-test for the rate
 * controller (Algorithm 2's intent; design.md errata), the stationarity
 * test between two cycles' samples (Garbatov: learn the profile, then stop
 * paying for it) and the drift test that brings a parked function back.
 * Pure logic: no BPF, no I/O, deterministic.
 *
 * Choices (README "Relevance and detail"):
 * - Stationarity: two-sample Kolmogorov-Smirnov on the latencies of the two
 *   cycles' events, and on every declared integer argument; a chi-square
 *   homogeneity test on the hashed values of every declared string
 *   argument. Pointers (declared ptr and undeclared raw registers) are
 *   addresses and say nothing about the profile, so they are not compared.
 *   Bonferroni: each of the k tests runs at alpha / k. A component differs
 *   only if it is both significant and material (KS distance, or the
 *   largest per-category share difference, >= AT_CONV_MIN_EFFECT): a
 *   function is stationary when no component differs.
 * - Drift: a chi-square homogeneity test on the coarse histogram buckets
 *   (window against the reference the function left detail with), adjacent
 *   buckets merged until every merged cell expects >= 5 calls in both
 *   rows. With a million calls a window every histogram "differs"
 *   significantly, so drift also needs the binned CDFs to be at least
 *   AT_CONV_MIN_EFFECT apart (10 % of the calls moved across some latency).
 */
#ifndef AT_CONVERGENCE_H
#define AT_CONVERGENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define AT_CONV_ALPHA	   0.05
#define AT_CONV_MARGIN	   0.05 /* Cochran's e */
#define AT_CONV_P	   0.5	/* Cochran's p: the conservative choice */
#define AT_CONV_MIN_EFFECT 0.10 /* smallest KS distance / share change that counts */

/* Standard normal CDF and its inverse (|error| < 1e-9 after refinement). */
double at_norm_cdf(double x);
double at_norm_quantile(double p);
/* Two-sided z for a confidence level: 0.95 -> 1.959964. */
double at_z_for_confidence(double conf);

/* Cochran's n0 = z^2 p (1 - p) / e^2 (1.96, .5, .05 -> 384.1). */
double at_cochran_n0(double z, double p, double e);
/* Finite population correction n0 / (1 + (n0 - 1) / N); N == 0: infinite. */
double at_cochran_n(double n0, uint64_t population);

/*
 * Algorithm 3's decaying confidence: conf(t) = exp(-t / max_len), 1 at the
 * cycle's start, 1/e after max_len seconds. The thesis writes z = 100 e^(-lt)
 * and then uses z as a normal quantile; the intent is a confidence level.
 */
double at_decaying_confidence(double t_s, double max_len_s);

/*
 * Sample size a cycle needs after t_s seconds: Cochran with the decaying
 * confidence, margin e, variability p and finite correction for the
 * population (calls seen in the cycle). Infinite (HUGE_VAL) at t = 0.
 */
double at_cycle_need(double t_s, double max_len_s, double e, double p, uint64_t population);
/* True if sample >= at_cycle_need(...) (and sample > 0). */
bool at_cycle_done(double t_s, double max_len_s, double e, double p, uint64_t population,
		   uint64_t sample);

/* Student t CDF (df > 0, real), regularized incomplete beta and gamma. */
double at_t_cdf(double t, double df);
double at_ibeta(double a, double b, double x);
double at_igamc(double a, double x); /* upper regularized gamma Q(a, x) */
/* Upper tail of chi-square: P(X > x) with df degrees of freedom. */
double at_chi2_sf(double x, double df);
/* Kolmogorov distribution's upper tail Q_KS(lambda). */
double at_ks_q(double lambda);

struct at_ttest {
	double mean1, mean2;
	double t;  /* (mean2 - mean1) / se: positive when sample 2 is larger */
	double df; /* Welch-Satterthwaite */
	double p;  /* two-sided */
};

/*
 * Welch's unpaired t-test. From raw samples, or from summary statistics
 * (unbiased variances), as coarse windows give them. -1 if either n < 2 or
 * both variances are 0 (then p is 1 if the means are equal, else 0).
 */
int at_welch(const double *a, size_t na, const double *b, size_t nb, struct at_ttest *r);
int at_welch_summary(double mean1, double var1, double n1, double mean2, double var2, double n2,
		     struct at_ttest *r);

/* Two-sample Kolmogorov-Smirnov: distance d and asymptotic p (Stephens' correction). */
int at_ks2(const double *a, size_t na, const double *b, size_t nb, double *d, double *p);

/*
 * Chi-square homogeneity of two count rows over k ordered cells (histogram
 * buckets or categories): adjacent cells are merged until each merged cell
 * expects >= 5 in both rows. d receives the largest gap of the two
 * cumulative shares (the binned KS distance). -1 if a row is empty.
 */
struct at_chi2 {
	double stat, df, p, d;
	uint32_t cells; /* after merging */
};
int at_chi2_homog(const uint64_t *a, const uint64_t *b, size_t k, struct at_chi2 *r);

/*
 * Drift of a coarse histogram (dense AT_HIST_BUCKETS arrays): true when the
 * window differs from the reference at alpha and by d >= min_effect. why
 * (may be NULL) gets one line, e.g. "latency drifted: chi2 812.4, df 9,
 * p < 1e-9, 34 % of calls moved (p50 2.1 us -> 5.0 ms)".
 */
bool at_drift(const uint64_t *ref, const uint64_t *win, double alpha, double min_effect, char *why,
	      size_t whylen);

/*
 * Stationarity of a function's detail profile between two cycles' events
 * (same function). Compares latencies and the declared arguments (arg
 * types as in the events; AT_ARG_RAW and AT_ARG_PTR skipped). True when no
 * component differs (see the header comment); why gets one line either way,
 * e.g. "stationary: latency KS d 0.04 p 0.71, arg1 KS d 0.03 p 0.88" or
 * "not stationary: latency KS d 0.31 p 2e-12".
 */
bool at_stationary(const struct at_event *a, size_t na, const struct at_event *b, size_t nb,
		   double alpha, double min_effect, char *why, size_t whylen);

#endif
