/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-row counter maps and their updates, shared by the coarse and the
 * USDT programs (the loader makes them share the maps themselves too, with
 * bpf_map__reuse_fd).
 */
#ifndef AT_COUNTERS_BPF_H
#define AT_COUNTERS_BPF_H

#include "adaptrace.h"
#include "exe_filter.bpf.h"

/* max_entries is set by the loader to the number of rows. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_fstats);
} fstats SEC(".maps");

struct hist {
	__u64 b[AT_HIST_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_fconc);
} conc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_DIAG_NR);
	__type(key, __u32);
	__type(value, __u64);
} diag SEC(".maps");

static __always_inline void diag_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&diag, &which);

	if (v)
		*v += 1;
}

static __always_inline void conc_enter(__u32 id)
{
	struct at_fconc *c = bpf_map_lookup_elem(&conc, &id);
	__s64 now, old;

	if (!c)
		return;
	now = __sync_add_and_fetch(&c->inflight, 1);
	old = c->max;
	/* Lost races only under-report by one transiently; retry a little. */
	for (int i = 0; i < 4 && now > old; i++)
		old = __sync_val_compare_and_swap(&c->max, old, now) == old ? now : c->max;
}

static __always_inline void conc_leave(__u32 id)
{
	struct at_fconc *c = bpf_map_lookup_elem(&conc, &id);

	if (c)
		__sync_fetch_and_sub(&c->inflight, 1);
}

static __always_inline void add_sumsq(struct at_fstats *st, __u64 d)
{
	/* d^2 as 128 bits: d = a * 2^32 + b. */
	__u64 a = d >> 32, b = d & 0xffffffff;
	__u64 lo = b * b, mid = 2 * a * b, hi = a * a + (mid >> 32);
	__u64 mid_lo = mid << 32;

	lo += mid_lo;
	if (lo < mid_lo)
		hi++;
	st->sumsq_lo += lo;
	if (st->sumsq_lo < lo)
		hi++;
	st->sumsq_hi += hi;
}

/* A timed call of row id: durations, extremes and histogram. */
static __always_inline struct at_fstats *count_return(__u32 id, __u64 dur, __u64 self, bool outer)
{
	struct at_fstats *st = bpf_map_lookup_elem(&fstats, &id);
	struct hist *h;
	__u32 bucket;

	if (!st)
		return NULL;
	st->returns++;
	st->sum_ns += dur;
	if (outer)
		st->total_ns += dur;
	st->self_ns += self;
	if (!st->min_ns || dur < st->min_ns)
		st->min_ns = dur;
	if (dur > st->max_ns)
		st->max_ns = dur;
	add_sumsq(st, dur);
	h = bpf_map_lookup_elem(&hists, &id);
	bucket = at_hist_bucket(dur);
	if (h && bucket < AT_HIST_BUCKETS)
		h->b[bucket]++;
	return st;
}

#endif
