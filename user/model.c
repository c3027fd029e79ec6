// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>

#include "model.h"

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

void at_profile_add(struct at_func_profile *p, const struct at_window_entry *e)
{
	at_counts_merge(&p->c, &e->c);
	for (uint32_t i = 0; i < e->nhist; i++)
		if (e->hist[i].bucket < AT_HIST_BUCKETS)
			p->hist[e->hist[i].bucket] += e->hist[i].count;
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
