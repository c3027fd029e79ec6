// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "stats.h"
#include "util.h"

struct at_stats_reader {
	int fstats_fd, hists_fd, conc_fd, diag_fd;
	uint32_t n;
	int ncpu;
	struct at_fstats *raw;	/* n * ncpu, one batch read */
	struct at_fstats *prev; /* per function, summed over CPUs */
	uint64_t *hist_raw;	/* ncpu * AT_HIST_BUCKETS */
	uint64_t (*prev_hist)[AT_HIST_BUCKETS];
	struct at_fconc *conc; /* n */
	uint32_t *keys;
};

struct at_stats_reader *at_stats_reader_new(int fstats_fd, int hists_fd, int conc_fd, int diag_fd,
					    uint32_t nfuncs)
{
	struct at_stats_reader *r = at_xcalloc(1, sizeof(*r));

	r->fstats_fd = fstats_fd;
	r->hists_fd = hists_fd;
	r->conc_fd = conc_fd;
	r->diag_fd = diag_fd;
	r->n = nfuncs;
	r->ncpu = libbpf_num_possible_cpus();
	if (r->ncpu < 1)
		r->ncpu = 1;
	r->raw = at_xcalloc((size_t)nfuncs * r->ncpu, sizeof(*r->raw));
	r->prev = at_xcalloc(nfuncs, sizeof(*r->prev));
	r->hist_raw = at_xcalloc((size_t)r->ncpu * AT_HIST_BUCKETS, sizeof(uint64_t));
	r->prev_hist = at_xcalloc(nfuncs, sizeof(*r->prev_hist));
	r->conc = at_xcalloc(nfuncs, sizeof(*r->conc));
	r->keys = at_xcalloc(nfuncs, sizeof(*r->keys));
	for (uint32_t i = 0; i < nfuncs; i++)
		r->keys[i] = i;
	return r;
}

void at_stats_reader_free(struct at_stats_reader *r)
{
	if (!r)
		return;
	free(r->raw);
	free(r->prev);
	free(r->hist_raw);
	free(r->prev_hist);
	free(r->conc);
	free(r->keys);
	free(r);
}

/* Read a whole array map in as few syscalls as the kernel allows. */
static int read_array(int fd, uint32_t n, void *values, size_t value_size, uint32_t *keys)
{
	uint32_t done = 0, out_batch = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	while (done < n) {
		uint32_t count = n - done;
		int err =
		    bpf_map_lookup_batch(fd, done ? &out_batch : NULL, &out_batch, keys + done,
					 (char *)values + done * value_size, &count, &opts);

		done += count;
		if (err) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
	}
	return done == n ? 0 : -EIO;
}

static void sum_cpus(const struct at_fstats *v, int ncpu, struct at_fstats *out)
{
	memset(out, 0, sizeof(*out));
	for (int c = 0; c < ncpu; c++) {
		const struct at_fstats *s = &v[c];
		uint64_t lo = out->sumsq_lo + s->sumsq_lo;

		out->sumsq_hi += s->sumsq_hi + (lo < out->sumsq_lo);
		out->sumsq_lo = lo;
		out->calls += s->calls;
		out->returns += s->returns;
		out->sum_ns += s->sum_ns;
		out->total_ns += s->total_ns;
		out->self_ns += s->self_ns;
		out->errors += s->errors;
		if (s->min_ns && (!out->min_ns || s->min_ns < out->min_ns))
			out->min_ns = s->min_ns;
		if (s->max_ns > out->max_ns)
			out->max_ns = s->max_ns;
	}
}

static double sumsq_delta(const struct at_fstats *now, const struct at_fstats *before)
{
	uint64_t lo = now->sumsq_lo - before->sumsq_lo;
	uint64_t hi = now->sumsq_hi - before->sumsq_hi - (now->sumsq_lo < before->sumsq_lo);

	return (double)hi * 18446744073709551616.0 + (double)lo;
}

/*
 * Build the window entry for function i. The maps keep run-long min and
 * max; a window gets them exactly when they moved in it, and otherwise the
 * bounds of its own histogram, clamped to the run-long values.
 */
static void fill_entry(struct at_stats_reader *r, uint32_t i, const struct at_fstats *now,
		       const uint64_t *hist, struct at_window_entry *e)
{
	const struct at_fstats *p = &r->prev[i];
	uint32_t first = AT_HIST_BUCKETS, last = 0, nh = 0;

	/* Entries come from realloc: min/max stay 0 when nothing returned. */
	memset(e, 0, sizeof(*e));
	e->id = i;
	e->c.calls = now->calls - p->calls;
	e->c.returns = now->returns - p->returns;
	e->c.sum_ns = now->sum_ns - p->sum_ns;
	e->c.total_ns = now->total_ns - p->total_ns;
	e->c.self_ns = now->self_ns - p->self_ns;
	e->c.errors = now->errors - p->errors;
	e->c.sumsq = sumsq_delta(now, p);
	/*
	 * The maximum since the start, not per window: user space never writes
	 * the counters back, because a write-back races the BPF side's atomic
	 * in-flight count and could leave it off by one for good.
	 */
	e->c.max_conc = r->conc[i].max > 0 ? (uint64_t)r->conc[i].max : 0;

	for (uint32_t b = 0; b < AT_HIST_BUCKETS; b++) {
		if (hist[b] == r->prev_hist[i][b])
			continue;
		if (first == AT_HIST_BUCKETS)
			first = b;
		last = b;
		nh++;
	}
	e->nhist = nh;
	e->hist = nh ? at_xcalloc(nh, sizeof(*e->hist)) : NULL;
	nh = 0;
	for (uint32_t b = first; nh < e->nhist && b <= last; b++) {
		if (hist[b] == r->prev_hist[i][b])
			continue;
		e->hist[nh].bucket = b;
		e->hist[nh++].count = hist[b] - r->prev_hist[i][b];
	}
	if (!e->c.returns)
		return;
	if (now->max_ns != p->max_ns)
		e->c.max_ns = now->max_ns;
	else if (first < AT_HIST_BUCKETS)
		e->c.max_ns =
		    last + 1 < AT_HIST_BUCKETS ? at_hist_lower(last + 1) - 1 : now->max_ns;
	if (e->c.max_ns > now->max_ns)
		e->c.max_ns = now->max_ns;
	if (now->min_ns != p->min_ns || !p->returns)
		e->c.min_ns = now->min_ns;
	else if (first < AT_HIST_BUCKETS)
		e->c.min_ns = at_hist_lower(first);
	if (e->c.min_ns < now->min_ns)
		e->c.min_ns = now->min_ns;
}

int at_stats_snapshot(struct at_stats_reader *r, struct at_window *win)
{
	size_t cap = 0;
	int err;

	memset(win, 0, sizeof(*win));
	err = read_array(r->fstats_fd, r->n, r->raw, sizeof(*r->raw) * r->ncpu, r->keys);
	if (!err)
		err = read_array(r->conc_fd, r->n, r->conc, sizeof(*r->conc), r->keys);
	if (err)
		return err;
	for (uint32_t i = 0; i < r->n; i++) {
		struct at_fstats now;
		uint64_t hist[AT_HIST_BUCKETS] = {0};

		sum_cpus(&r->raw[(size_t)i * r->ncpu], r->ncpu, &now);
		if (now.calls == r->prev[i].calls && now.returns == r->prev[i].returns)
			continue;
		if (now.returns != r->prev[i].returns) {
			if (bpf_map_lookup_elem(r->hists_fd, &i, r->hist_raw))
				return -errno;
			for (int c = 0; c < r->ncpu; c++)
				for (uint32_t b = 0; b < AT_HIST_BUCKETS; b++)
					hist[b] += r->hist_raw[(size_t)c * AT_HIST_BUCKETS + b];
		} else {
			memcpy(hist, r->prev_hist[i], sizeof(hist));
		}
		if (win->n == cap) {
			cap = cap ? cap * 2 : 64;
			win->e = at_xrealloc(win->e, cap, sizeof(*win->e));
		}
		fill_entry(r, i, &now, hist, &win->e[win->n++]);
		r->prev[i] = now;
		memcpy(r->prev_hist[i], hist, sizeof(hist));
	}
	return 0;
}

void at_stats_diag(struct at_stats_reader *r, uint64_t diag[AT_DIAG_NR])
{
	uint64_t vals[r->ncpu];

	for (uint32_t k = 0; k < AT_DIAG_NR; k++) {
		diag[k] = 0;
		if (bpf_map_lookup_elem(r->diag_fd, &k, vals))
			continue;
		for (int c = 0; c < r->ncpu; c++)
			diag[k] += vals[c];
	}
}

void at_window_clear(struct at_window *win)
{
	for (uint32_t i = 0; i < win->n; i++)
		free(win->e[i].hist);
	free(win->e);
	free(win->duty);
	free(win->cls);
	free(win->wr_cls);
	free(win->callers);
	free(win->cls_callers);
	free(win->rp_cls_callers);
	free(win->rp_callers);
	free(win->turnwin);
	free(win->tw_calls);
	memset(win, 0, sizeof(*win));
}
