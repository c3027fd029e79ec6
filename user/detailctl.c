// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detailctl.h"
#include "util.h"

/* Rates the controller moves between (design.md: a minimum and a maximum). */
#define RATE_MIN 0.001
#define RATE_MAX 1.0

struct cfunc {
	bool forced; /* --detail */
	bool on;     /* in the detail phase now */
};

struct at_dctl {
	struct at_dctl_opts o;
	const struct at_trace *t;
	struct at_detail *d;
	struct at_detail_costs costs;
	struct cfunc *f;
	uint32_t n;
	uint64_t t0;
	pid_t pid;
	/* Selection and rate changes not yet written. */
	struct at_sel_change *log;
	size_t nlog, logcap;
};

bool at_dctl_off(const struct at_dctl_opts *o)
{
	return o->select && !strcmp(o->select, "none") && o->detail.n == 0;
}

int at_dctl_check(const struct at_dctl_opts *o, char *err, size_t errlen)
{
	(void)o;
	(void)err;
	(void)errlen;
	return AT_EXIT_OK;
}

static void logf_change(struct at_dctl *c, uint64_t now, uint32_t id, uint32_t what, double rate,
			const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void logf_change(struct at_dctl *c, uint64_t now, uint32_t id, uint32_t what, double rate,
			const char *fmt, ...)
{
	struct at_sel_change *s;
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (c->nlog == c->logcap) {
		c->logcap = c->logcap ? c->logcap * 2 : 32;
		c->log = at_xrealloc(c->log, c->logcap, sizeof(*c->log));
	}
	s = &c->log[c->nlog++];
	s->ts_ns = now > c->t0 ? now - c->t0 : 0;
	s->id = id;
	s->what = what;
	s->rate = fmin(fmax(rate, 0), 1);
	s->reason = at_xstrdup(buf);
}

static int flush_log(struct at_dctl *c, struct at_writer *w)
{
	int rc = c->nlog ? at_writer_selection(w, c->log, c->nlog) : 0;

	for (size_t i = 0; i < c->nlog; i++)
		free(c->log[i].reason);
	c->nlog = 0;
	return rc;
}

struct at_dctl *at_dctl_new(const struct at_dctl_opts *o, const struct at_trace *t,
			    const struct at_target *tgt, pid_t pid, uint64_t target_ino,
			    uint32_t target_dev, struct bpf_program *coarse_entry,
			    struct bpf_program *coarse_return, uint32_t spare_id, char *err,
			    size_t errlen)
{
	struct at_dctl *c = at_xcalloc(1, sizeof(*c));
	const char **paths = at_xcalloc(tgt->nbins + 1, sizeof(*paths));
	bool *filter = at_xcalloc(tgt->nbins + 1, sizeof(*filter));
	struct at_detail_opts dopts = {
	    .syms = t->syms,
	    .nsyms = (uint32_t)t->nsyms,
	    .bin_paths = paths,
	    .bin_exe_filter = filter,
	    .nbins = tgt->nbins,
	    .pid = pid,
	    .target_ino = target_ino,
	    .target_dev = target_dev,
	    .ringbuf_bytes = o->ringbuf_bytes,
	};

	c->o = *o;
	c->t = t;
	c->n = (uint32_t)t->nsyms;
	c->f = at_xcalloc(c->n + 1, sizeof(*c->f));
	for (size_t b = 0; b < tgt->nbins; b++) {
		paths[b] = tgt->bins[b].attach_path;
		filter[b] = !pid && !tgt->bins[b].is_main;
	}
	c->d = at_detail_new(&dopts, err, errlen);
	free(paths);
	free(filter);
	if (!c->d) {
		at_dctl_free(c);
		return NULL;
	}
	if (at_detail_calibrate(c->d, coarse_entry, coarse_return, spare_id, &c->costs))
		at_warn("could not measure the probes' costs on adaptrace itself; the overhead "
			"budget uses defaults");
	if (c->costs.coarse <= 0)
		c->costs = (struct at_detail_costs){.coarse = 900, .unsampled = 60, .sampled = 400};
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("detail: %s link; per-call costs: coarse %.0f ns, detail unsampled %.0f "
		       "ns, sampled %.0f ns",
		       at_detail_mode(c->d), c->costs.coarse, c->costs.unsampled, c->costs.sampled);
	for (uint32_t id = 0; id < c->n; id++)
		for (size_t g = 0; g < o->detail.n; g++)
			if (at_glob_match(o->detail.v[g], t->syms[id].name) &&
			    t->syms[id].kind == AT_SYM_FUNC)
				c->f[id].forced = true;
	return c;
}

void at_dctl_free(struct at_dctl *c)
{
	if (!c)
		return;
	at_detail_free(c->d);
	for (size_t i = 0; i < c->nlog; i++)
		free(c->log[i].reason);
	free(c->log);
	free(c->f);
	free(c);
}

const char *at_dctl_mode(const struct at_dctl *c)
{
	return at_detail_mode(c->d);
}

static double initial_rate(const struct at_dctl *c)
{
	return c->o.fixed_rate > 0 ? c->o.fixed_rate : RATE_MAX;
}

static void enter(struct at_dctl *c, uint32_t id, uint64_t now, const char *why)
{
	char err[AT_ERRLEN];
	double rate = initial_rate(c);

	if (c->f[id].on)
		return;
	if (at_detail_enable(c->d, id, rate, err, sizeof(err))) {
		at_warn("no detail for %s: %s", c->t->syms[id].name, err);
		return;
	}
	c->f[id].on = true;
	logf_change(c, now, id, AT_SEL_ENTER, rate, "%s", why);
}

static void leave(struct at_dctl *c, uint32_t id, uint64_t now, const char *why)
{
	if (!c->f[id].on)
		return;
	at_detail_disable(c->d, id);
	c->f[id].on = false;
	logf_change(c, now, id, AT_SEL_LEAVE, 0, "%s", why);
}

int at_dctl_start(struct at_dctl *c, uint64_t t0, pid_t target_pid, struct at_writer *w)
{
	c->t0 = t0;
	c->pid = target_pid;
	at_detail_set_t0(c->d, t0);
	for (uint32_t id = 0; id < c->n; id++)
		if (c->f[id].forced)
			enter(c, id, t0, "forced by --detail");
	return flush_log(c, w);
}

int at_dctl_tick(struct at_dctl *c, const struct at_window *win, uint64_t now, struct at_writer *w)
{
	(void)win;
	(void)now;
	(void)leave;
	if (at_detail_drain(c->d, w) < 0)
		return -1;
	if (flush_log(c, w))
		return -1;
	return at_detail_write_stats(c->d, w);
}

int at_dctl_fd(const struct at_dctl *c)
{
	return at_detail_fd(c->d);
}

int at_dctl_drain(struct at_dctl *c, struct at_writer *w)
{
	return at_detail_drain(c->d, w) < 0 ? -1 : 0;
}

uint64_t at_dctl_finish(struct at_dctl *c, struct at_writer *w, struct at_trace *t)
{
	struct at_detail_stats *s;
	uint64_t dropped = 0;
	size_t n;

	if (w) {
		at_detail_drain(c->d, w);
		flush_log(c, w);
	}
	n = at_detail_all_stats(c->d, &s);
	if (w && n)
		at_writer_dstats(w, s, n);
	for (size_t i = 0; i < n; i++)
		dropped += s[i].dropped;
	at_detail_stats_free(t->dstats, t->ndstats);
	t->dstats = s;
	t->ndstats = n;
	return dropped;
}

void at_dctl_detach_returns(struct at_dctl *c)
{
	if (c)
		at_detail_detach_returns(c->d);
}

void at_dctl_detach(struct at_dctl *c)
{
	if (c)
		at_detail_detach(c->d);
}
