// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sample sizes and tests for the adaptive sampler (stub). */
#include <math.h>
#include <string.h>

#include "convergence.h"

double at_norm_cdf(double x)
{
	return 0.5 * erfc(-x / sqrt(2));
}

double at_norm_quantile(double p)
{
	(void)p;
	return 0;
}

double at_z_for_confidence(double conf)
{
	(void)conf;
	return 1.96;
}

double at_cochran_n0(double z, double p, double e)
{
	return z * z * p * (1 - p) / (e * e);
}

double at_cochran_n(double n0, uint64_t population)
{
	return population ? n0 / (1 + (n0 - 1) / (double)population) : n0;
}

double at_decaying_confidence(double t_s, double max_len_s)
{
	return exp(-t_s / max_len_s);
}

double at_cycle_need(double t_s, double max_len_s, double e, double p, uint64_t population)
{
	(void)t_s;
	(void)max_len_s;
	return at_cochran_n(at_cochran_n0(1.96, p, e), population);
}

bool at_cycle_done(double t_s, double max_len_s, double e, double p, uint64_t population,
		   uint64_t sample)
{
	return sample && (double)sample >= at_cycle_need(t_s, max_len_s, e, p, population);
}

double at_t_cdf(double t, double df)
{
	(void)t;
	(void)df;
	return 0.5;
}

double at_ibeta(double a, double b, double x)
{
	(void)a;
	(void)b;
	return x;
}

double at_igamc(double a, double x)
{
	(void)a;
	(void)x;
	return 1;
}

double at_chi2_sf(double x, double df)
{
	return at_igamc(df / 2, x / 2);
}

double at_ks_q(double lambda)
{
	(void)lambda;
	return 1;
}

int at_welch(const double *a, size_t na, const double *b, size_t nb, struct at_ttest *r)
{
	(void)a;
	(void)na;
	(void)b;
	(void)nb;
	memset(r, 0, sizeof(*r));
	r->p = 1;
	return -1;
}

int at_welch_summary(double mean1, double var1, double n1, double mean2, double var2, double n2,
		     struct at_ttest *r)
{
	(void)var1;
	(void)n1;
	(void)var2;
	(void)n2;
	memset(r, 0, sizeof(*r));
	r->mean1 = mean1;
	r->mean2 = mean2;
	r->p = 1;
	return -1;
}

int at_ks2(const double *a, size_t na, const double *b, size_t nb, double *d, double *p)
{
	(void)a;
	(void)na;
	(void)b;
	(void)nb;
	*d = 0;
	*p = 1;
	return -1;
}

int at_chi2_homog(const uint64_t *a, const uint64_t *b, size_t k, struct at_chi2 *r)
{
	(void)a;
	(void)b;
	(void)k;
	memset(r, 0, sizeof(*r));
	r->p = 1;
	return -1;
}

bool at_drift(const uint64_t *ref, const uint64_t *win, double alpha, double min_effect, char *why,
	      size_t whylen)
{
	(void)ref;
	(void)win;
	(void)alpha;
	(void)min_effect;
	if (why && whylen)
		why[0] = 0;
	return false;
}

bool at_stationary(const struct at_event *a, size_t na, const struct at_event *b, size_t nb,
		   double alpha, double min_effect, char *why, size_t whylen)
{
	(void)a;
	(void)na;
	(void)b;
	(void)nb;
	(void)alpha;
	(void)min_effect;
	if (why && whylen)
		why[0] = 0;
	return false;
}
