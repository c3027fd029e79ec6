// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "argspec.h"
#include "attach.h"
#include "detail.h"
#include "detail.skel.h"
#include "util.h"

#define DEFAULT_RINGBUF (4u << 20)
/* Events per trace-file chunk. */
#define BATCH 4096

/* What the loader knows of one function. */
struct dfunc {
	bool attached;
	bool enabled;
	bool ever; /* had detail at some point: gets a stats row */
	double rate;
	const struct at_argspec *spec; /* --args; NULL = six raw registers */
	uint64_t events;	       /* events written */
	struct at_links session, entry, ret;
};

struct at_detail {
	struct at_detail_opts o;
	struct detail_bpf *skel;
	bool session;
	struct dfunc *f;
	struct ring_buffer *rb;
	struct bpf_link *exec_link; /* clears a thread's frames when it execs */
	size_t wakeup;
	int ncpus;
	struct at_dcount *cnt; /* per-CPU read buffer */
	/* Events converted and waiting for the next chunk. */
	struct at_event *batch;
	size_t nbatch;
	char **paths;
	bool *filter;
	uint64_t *args_off;
	uint32_t *args_entry;
	at_detail_event_fn on_event;
	void *on_event_ctx;
	struct at_writer *w; /* during a drain */
	int werr;
	long drained;
};

static uint32_t threshold_of(double rate)
{
	if (!(rate > 0))
		return 0;
	if (rate >= 1)
		return AT_DETAIL_RATE_ALL;
	/* At least 1: threshold 0 means off. */
	return (uint32_t)fmax(1, rate * 4294967296.0);
}

static void push_conf(struct at_detail *d, uint32_t id)
{
	struct dfunc *f = &d->f[id];
	struct at_dconf c = {.threshold = f->enabled ? threshold_of(f->rate) : 0};
	int k = 0;

	memset(c.str_arg, AT_DETAIL_NO_STR, sizeof(c.str_arg));
	for (uint32_t a = 0; f->spec && a < f->spec->nargs && k < AT_DETAIL_NSTR; a++)
		if (f->spec->arg[a].type == AT_ARG_STR) {
			c.str_max[k] = (uint16_t)f->spec->arg[a].strmax;
			c.str_arg[k++] = (uint8_t)a;
		}
	bpf_map_update_elem(bpf_map__fd(d->skel->maps.dconf), &id, &c, BPF_ANY);
}

static int open_load(struct at_detail *d, bool session, char *err, size_t errlen)
{
	struct detail_bpf *s = detail_bpf__open();
	size_t rb = d->o.ringbuf_bytes ? d->o.ringbuf_bytes : DEFAULT_RINGBUF;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), sz = page;
	int e;

	if (!s) {
		snprintf(err, errlen, "cannot open the detail BPF programs: %s", strerror(errno));
		return -errno;
	}
	while (sz < rb)
		sz *= 2;
	/* One spare id for the start-up calibration. */
	bpf_map__set_max_entries(s->maps.dconf, d->o.nsyms + 1);
	bpf_map__set_max_entries(s->maps.dcount, d->o.nsyms + 1);
	bpf_map__set_max_entries(s->maps.events, (uint32_t)sz);
	s->rodata->target_ino = d->o.target_ino;
	s->rodata->target_dev = d->o.target_dev;
	/*
	 * Wake the consumer at a quarter full: it drains every interval anyway.
	 * An explicit size (the loss test's knob) drains only every interval,
	 * so that a burst overflows it whatever the scheduler does.
	 */
	d->wakeup = d->o.ringbuf_bytes ? 0 : sz / 4;
	s->rodata->wakeup_bytes = d->wakeup;
	/* Hidden, for the benchmark: the cost of the link with empty programs. */
	s->rodata->empty = at_env_flag("ADAPTRACE_DETAIL_EMPTY");
	bpf_program__set_autoload(s->progs.detail_session, session);
	bpf_program__set_autoload(s->progs.detail_entry, !session);
	bpf_program__set_autoload(s->progs.detail_return, !session);
	if (session)
		bpf_program__set_expected_attach_type(s->progs.detail_session,
						      AT_BPF_TRACE_UPROBE_SESSION);
	else {
		at_prepare_program(s->progs.detail_entry);
		at_prepare_program(s->progs.detail_return);
	}
	e = detail_bpf__load(s);
	if (e) {
		snprintf(err, errlen, "cannot load the detail BPF programs: %s", strerror(-e));
		detail_bpf__destroy(s);
		return e;
	}
	d->skel = s;
	d->session = session;
	return 0;
}

/* A session link on a function of our own: does the kernel take it? */
static bool session_works(struct at_detail *d)
{
	struct at_links l = {0};
	uint64_t off, cookie = d->o.nsyms;
	bool refused = false;
	char err[AT_ERRLEN];
	int rc;

	if (at_self_offset(&off))
		return false;
	rc = at_attach_session(&l, d->skel->progs.detail_session, "/proc/self/exe", &off, &cookie,
			       1, getpid(), &refused, err, sizeof(err));
	rc = rc == 0 && l.nfds == 1 ? 0 : -1;
	at_links_destroy(&l);
	return rc == 0;
}

static int on_event(void *ctx, void *data, size_t len);

struct at_detail *at_detail_new(const struct at_detail_opts *o, char *err, size_t errlen)
{
	struct at_detail *d = at_xcalloc(1, sizeof(*d));
	bool want_session =
	    !at_env_flag("ADAPTRACE_NO_UPROBE_SESSION") && at_features()->uprobe_multi;

	d->o = *o;
	/* Our own copies: the caller's arrays may go. */
	d->paths = at_xcalloc(o->nbins + 1, sizeof(*d->paths));
	d->filter = at_xcalloc(o->nbins + 1, sizeof(*d->filter));
	for (size_t b = 0; b < o->nbins; b++) {
		d->paths[b] = at_xstrdup(o->bin_paths[b]);
		d->filter[b] = o->bin_exe_filter && o->bin_exe_filter[b];
	}
	d->o.bin_paths = (const char *const *)d->paths;
	d->o.bin_exe_filter = d->filter;
	d->args_off = at_xcalloc(o->nsyms + 1, sizeof(*d->args_off));
	d->args_entry = at_xcalloc(o->nsyms + 1, sizeof(*d->args_entry));
	for (uint32_t id = 0; id < o->nsyms; id++) {
		d->args_off[id] = o->args_offsets ? o->args_offsets[id] : o->syms[id].offset;
		d->args_entry[id] = o->args_entries ? o->args_entries[id] : o->syms[id].entry;
	}
	d->o.args_offsets = d->args_off;
	d->o.args_entries = d->args_entry;
	d->f = at_xcalloc(o->nsyms + 1, sizeof(*d->f));
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus < 1)
		d->ncpus = 1;
	d->cnt = at_xcalloc((size_t)d->ncpus, sizeof(*d->cnt));
	d->batch = at_xcalloc(BATCH, sizeof(*d->batch));
	if (want_session && open_load(d, true, err, errlen) == 0 && !session_works(d)) {
		detail_bpf__destroy(d->skel);
		d->skel = NULL;
	}
	if (!d->skel && open_load(d, false, err, errlen)) {
		at_detail_free(d);
		return NULL;
	}
	for (uint32_t id = 0; id <= o->nsyms; id++)
		push_conf(d, id);
	d->exec_link = bpf_program__attach(d->skel->progs.detail_exec);
	if (!d->exec_link) {
		snprintf(err, errlen, "cannot attach to sched_process_exec: %s", strerror(errno));
		at_detail_free(d);
		return NULL;
	}
	d->rb = ring_buffer__new(bpf_map__fd(d->skel->maps.events), on_event, d, NULL);
	if (!d->rb) {
		snprintf(err, errlen, "cannot map the detail ring buffer: %s", strerror(errno));
		at_detail_free(d);
		return NULL;
	}
	return d;
}

const char *at_detail_mode(const struct at_detail *d)
{
	return d->session ? "session" : "uprobe+uretprobe";
}

int at_detail_set_args(struct at_detail *d, uint32_t id, const struct at_argspec *spec, char *err,
		       size_t errlen)
{
	int nstr = 0;

	if (id >= d->o.nsyms)
		return -1;
	for (uint32_t a = 0; spec && a < spec->nargs; a++) {
		if (spec->arg[a].type != AT_ARG_STR)
			continue;
		if (++nstr > AT_DETAIL_NSTR) {
			snprintf(err, errlen,
				 "--args %s: at most %d string arguments per function are read "
				 "(declare the others ptr)",
				 spec->name, AT_DETAIL_NSTR);
			return -1;
		}
		if (spec->arg[a].strmax > AT_DETAIL_STRLEN) {
			snprintf(err, errlen, "--args %s: strings are read up to %d bytes",
				 spec->name, AT_DETAIL_STRLEN);
			return -1;
		}
	}
	d->f[id].spec = spec;
	push_conf(d, id);
	return 0;
}

void at_detail_on_event(struct at_detail *d, at_detail_event_fn fn, void *ctx)
{
	d->on_event = fn;
	d->on_event_ctx = ctx;
}

static int attach_one(struct at_detail *d, uint32_t id, char *err, size_t errlen)
{
	const struct at_symbol *s = &d->o.syms[id];
	struct dfunc *f = &d->f[id];
	uint64_t off = d->args_off[id];
	uint64_t cookie = id;
	const char *path;
	bool refused = false;
	int rc;

	if (s->binary >= d->o.nbins || s->kind != AT_SYM_FUNC ||
	    d->args_entry[id] == AT_ENTRY_REFUSED) {
		snprintf(err, errlen, "%s cannot be probed for detail", s->name);
		return -EINVAL;
	}
	path = d->o.bin_paths[s->binary];
	if (d->o.bin_exe_filter && d->o.bin_exe_filter[s->binary])
		cookie |= AT_COOKIE_EXE_FILTER;
	if (d->session) {
		rc = at_attach_session(&f->session, d->skel->progs.detail_session, path, &off,
				       &cookie, 1, d->o.pid, &refused, err, errlen);
		at_links_move_up(&f->session);
	} else {
		/* The return link first, so that every sampled entry finds it. */
		rc = at_attach_uprobes(&f->ret, d->skel->progs.detail_return, true, path, &off,
				       &cookie, 1, d->o.pid, &refused, err, errlen);
		at_links_move_up(&f->ret);
		if (!rc && !refused)
			rc = at_attach_uprobes(&f->entry, d->skel->progs.detail_entry, false, path,
					       &off, &cookie, 1, d->o.pid, &refused, err, errlen);
	}
	if (!rc && refused) {
		snprintf(err, errlen, "the kernel refused to probe %s", s->name);
		rc = -EINVAL;
	}
	if (rc) {
		at_links_destroy(&f->session);
		at_links_destroy(&f->ret);
		at_links_destroy(&f->entry);
		return rc;
	}
	f->attached = true;
	return 0;
}

int at_detail_enable(struct at_detail *d, uint32_t id, double rate, char *err, size_t errlen)
{
	struct dfunc *f;
	int rc;

	if (id >= d->o.nsyms)
		return -EINVAL;
	f = &d->f[id];
	if (!f->attached && (rc = attach_one(d, id, err, errlen)))
		return rc;
	f->enabled = true;
	f->ever = true;
	f->rate = rate;
	push_conf(d, id);
	return 0;
}

int at_detail_set_rate(struct at_detail *d, uint32_t id, double rate)
{
	if (id >= d->o.nsyms)
		return -EINVAL;
	d->f[id].rate = rate;
	push_conf(d, id);
	return 0;
}

void at_detail_disable(struct at_detail *d, uint32_t id)
{
	if (id >= d->o.nsyms || !d->f[id].enabled)
		return;
	d->f[id].enabled = false;
	push_conf(d, id);
}

void at_detail_take_links(struct at_detail *d, uint32_t id, struct at_links *out)
{
	struct dfunc *f;

	if (!d || id >= d->o.nsyms)
		return;
	f = &d->f[id];
	at_detail_disable(d, id);
	at_links_append(out, &f->session);
	at_links_append(out, &f->ret);
	at_links_append(out, &f->entry);
	f->attached = false;
}

bool at_detail_enabled(const struct at_detail *d, uint32_t id)
{
	return id < d->o.nsyms && d->f[id].enabled;
}

double at_detail_rate(const struct at_detail *d, uint32_t id)
{
	return id < d->o.nsyms && d->f[id].enabled ? d->f[id].rate : 0;
}

bool at_detail_ever(const struct at_detail *d, uint32_t id)
{
	return id < d->o.nsyms && d->f[id].ever;
}

int at_detail_fd(const struct at_detail *d)
{
	return ring_buffer__epoll_fd(d->rb);
}

size_t at_detail_wakeup_bytes(const struct at_detail *d)
{
	return d->wakeup;
}

static int flush(struct at_detail *d)
{
	int rc = 0;

	if (d->nbatch && d->w && !d->werr)
		rc = at_writer_events(d->w, d->batch, d->nbatch);
	for (size_t i = 0; i < d->nbatch; i++)
		for (uint32_t a = 0; a < d->batch[i].nargs; a++)
			free(d->batch[i].args[a].str);
	d->nbatch = 0;
	if (rc)
		d->werr = -1;
	return rc;
}

/* Strings are copied out of the ring buffer: the record is reused at once. */
static void convert(struct at_detail *d, const struct at_devent *r, size_t len, struct at_event *e)
{
	const struct at_argspec *spec = d->f[r->id].spec;
	uint32_t nregs = at_argspec_nregs(spec);

	memset(e, 0, sizeof(*e));
	e->ts_ns = r->ts_ns > d->o.t0 ? r->ts_ns - d->o.t0 : 0;
	e->pid = r->pid;
	e->tid = r->tid;
	e->cpu = r->cpu;
	e->id = r->id;
	e->duration_ns = r->duration_ns;
	e->ret = (int64_t)r->ret;
	if (spec && spec->has_ret && !spec->ret_void)
		e->ret = (int64_t)at_argtype_value(&spec->ret, r->ret);
	e->nargs = nregs > AT_MAX_ARGS ? AT_MAX_ARGS : nregs;
	for (uint32_t a = 0; a < e->nargs; a++) {
		struct at_arg *g = &e->args[a];
		struct at_argtype t = at_argspec_type(spec, a);

		g->type = t.type;
		g->v = at_argtype_value(&t, r->args[a]);
		if (g->type != AT_ARG_STR || len < sizeof(*r))
			continue;
		for (int k = 0; k < AT_DETAIL_NSTR; k++) {
			if (r->str_arg[k] != a)
				continue;
			if (!(r->unreadable & (1 << k)))
				g->str = strndup(r->str[k], AT_DETAIL_STRLEN);
			g->truncated = r->truncated & (1 << k);
		}
	}
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct at_detail *d = ctx;
	const struct at_devent *r = data;

	if (len < offsetof(struct at_devent, str) || r->id >= d->o.nsyms)
		return 0; /* the calibration's spare id, or nothing we sent */
	convert(d, r, len, &d->batch[d->nbatch]);
	if (d->on_event)
		d->on_event(d->on_event_ctx, &d->batch[d->nbatch]);
	d->nbatch++;
	d->f[r->id].events++;
	d->drained++;
	if (d->nbatch == BATCH)
		flush(d);
	return 0;
}

long at_detail_drain(struct at_detail *d, struct at_writer *w)
{
	int rc;

	d->w = w;
	d->werr = 0;
	d->drained = 0;
	rc = ring_buffer__consume(d->rb);
	flush(d);
	d->w = NULL;
	if (rc < 0 && rc != -EINTR)
		return rc;
	return d->werr ? -1 : d->drained;
}

void at_detail_stats(struct at_detail *d, uint32_t id, struct at_detail_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->id = id;
	if (id >= d->o.nsyms)
		return;
	out->events = d->f[id].events;
	out->rate = at_detail_rate(d, id);
	if (bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.dcount), &id, d->cnt))
		return;
	out->ncpus = (uint32_t)d->ncpus;
	out->dropped_cpu = at_xcalloc((size_t)d->ncpus, sizeof(uint64_t));
	/* A call with no free frame is lost like one with a full ring. */
	for (int c = 0; c < d->ncpus; c++) {
		uint64_t lost = d->cnt[c].dropped + d->cnt[c].no_frame;

		out->sampled += d->cnt[c].sampled;
		out->dropped += lost;
		out->dropped_cpu[c] = lost;
	}
}

size_t at_detail_all_stats(struct at_detail *d, struct at_detail_stats **out)
{
	size_t n = 0;

	*out = at_xcalloc(d->o.nsyms + 1, sizeof(**out));
	for (uint32_t id = 0; id < d->o.nsyms; id++)
		if (d->f[id].ever)
			at_detail_stats(d, id, &(*out)[n++]);
	return n;
}

void at_detail_stats_free(struct at_detail_stats *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].dropped_cpu);
	free(s);
}

int at_detail_write_stats(struct at_detail *d, struct at_writer *w)
{
	struct at_detail_stats *s;
	size_t n = at_detail_all_stats(d, &s);
	int rc = n ? at_writer_dstats(w, s, n) : 0;

	at_detail_stats_free(s, n);
	return rc;
}

/*
 * The calibration site starts with push %rbp, an instruction the kernel
 * emulates, like the sites of -fno-omit-frame-pointer code (design.md);
 * written in assembly so that no compiler option moves it.
 */
int at_detail_calib_site(int x);
__asm__(".text\n"
	".globl at_detail_calib_site\n"
	".type at_detail_calib_site, @function\n"
	"at_detail_calib_site:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	lea 1(%rdi), %eax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size at_detail_calib_site, .-at_detail_calib_site\n");

/* The same with a first instruction the kernel single-steps (a leaf's lea). */
int at_detail_calib_sstep(int x);
__asm__(".text\n"
	".globl at_detail_calib_sstep\n"
	".type at_detail_calib_sstep, @function\n"
	"at_detail_calib_sstep:\n"
	"	lea 1(%rdi), %eax\n"
	"	ret\n"
	".size at_detail_calib_sstep, .-at_detail_calib_sstep\n");

/*
 * CPU ns per call of a probe site, over n calls. CPU time, the budget's
 * own measure of the target: a preemption would add wall time to a round,
 * and a cost above the target's whole CPU time left the planner no work to
 * spend the budget on.
 */
static double time_site(int (*site)(int), int n)
{
	volatile int sink = 0;
	uint64_t t = at_thread_cpu_ns();

	for (int i = 0; i < n; i++)
		sink += site(i);
	(void)sink;
	return (double)(at_thread_cpu_ns() - t) / n;
}

static double time_calls(int n)
{
	return time_site(at_detail_calib_site, n);
}

/* Best of five: the cost, not the machine's hiccups. */
static double best_time(int (*site)(int), int n)
{
	double best = time_site(site, n);

	for (int i = 0; i < 4; i++)
		best = fmin(best, time_site(site, n));
	return best;
}

/*
 * The coarse entry and return programs on our own site at off (a site the
 * kernel refuses times as unprobed: its difference floors at the end).
 */
static int attach_coarse(struct bpf_program *coarse_entry, struct bpf_program *coarse_return,
			 uint64_t *off, uint64_t *cookie, struct at_links *ce, struct at_links *cr)
{
	bool refused = false;
	char err[AT_ERRLEN];
	int rc = at_attach_uprobes(cr, coarse_return, true, "/proc/self/exe", off, cookie, 1,
				   getpid(), &refused, err, sizeof(err));

	if (!rc)
		rc = at_attach_uprobes(ce, coarse_entry, false, "/proc/self/exe", off, cookie, 1,
				       getpid(), &refused, err, sizeof(err));
	return rc;
}

/*
 * The coarse probes' cost on the single-stepped site, against the unprobed
 * site's best time; 0 when they cannot attach.
 */
static double calibrate_sstep(struct bpf_program *coarse_entry, struct bpf_program *coarse_return,
			      uint32_t spare_id)
{
	struct at_links ce = {0}, cr = {0};
	uint64_t off, cookie = spare_id;
	double base, cost = 0;
	const int n = 400;

	if (at_func_offset((const void *)&at_detail_calib_sstep, &off))
		return 0;
	base = best_time(at_detail_calib_sstep, n);
	/* The best too: a round the machine interrupted costs more, the probe does not. */
	if (!attach_coarse(coarse_entry, coarse_return, &off, &cookie, &ce, &cr))
		cost = best_time(at_detail_calib_sstep, n) - base;
	at_links_destroy(&cr);
	at_links_destroy(&ce);
	return cost;
}

static int attach_calib(struct at_detail *d, struct at_links *ds, struct at_links *de,
			struct at_links *dr, uint64_t *off, uint64_t *cookie)
{
	pid_t self = getpid();
	bool refused = false;
	char err[AT_ERRLEN];
	int rc;

	if (d->session)
		return at_attach_session(ds, d->skel->progs.detail_session, "/proc/self/exe", off,
					 cookie, 1, self, &refused, err, sizeof(err));
	rc = at_attach_uprobes(dr, d->skel->progs.detail_return, true, "/proc/self/exe", off,
			       cookie, 1, self, &refused, err, sizeof(err));
	if (!rc)
		rc = at_attach_uprobes(de, d->skel->progs.detail_entry, false, "/proc/self/exe",
				       off, cookie, 1, self, &refused, err, sizeof(err));
	return rc;
}

#define CALIB_ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int at_detail_calibrate(struct at_detail *d, struct bpf_program *coarse_entry,
			struct bpf_program *coarse_return, uint32_t spare_id,
			struct at_detail_costs *out)
{
	struct at_links ce = {0}, cr = {0};
	uint64_t off, cookie = spare_id, dcookie = d->o.nsyms;
	struct at_dconf c = {.threshold = 0};
	uint32_t key = d->o.nsyms;
	int fd = bpf_map__fd(d->skel->maps.dconf);
	double dc[CALIB_ROUNDS], du[CALIB_ROUNDS], dsm[CALIB_ROUNDS], base;
	const int n = 2500;
	int rc = 0, r;

	memset(out, 0, sizeof(*out));
	memset(c.str_arg, AT_DETAIL_NO_STR, sizeof(c.str_arg));
	if (at_func_offset((const void *)&at_detail_calib_site, &off))
		return -ENOENT;
	base = best_time(at_detail_calib_site, n);
	rc = attach_coarse(coarse_entry, coarse_return, &off, &cookie, &ce, &cr);
	/*
	 * Rounds of coarse alone, detail unsampled, detail sampled, next to
	 * each other in time; the medians of the per-round differences, so
	 * that a busy machine's drift hits each difference's two sides alike.
	 */
	for (r = 0; !rc && r < CALIB_ROUNDS; r++) {
		struct at_links ds = {0}, de = {0}, dr = {0};
		double tc, tu, tsm;

		tc = time_calls(n);
		c.threshold = 0;
		bpf_map_update_elem(fd, &key, &c, BPF_ANY);
		rc = attach_calib(d, &ds, &de, &dr, &off, &dcookie);
		if (!rc) {
			tu = time_calls(n);
			c.threshold = AT_DETAIL_RATE_ALL;
			bpf_map_update_elem(fd, &key, &c, BPF_ANY);
			tsm = time_calls(n);
			c.threshold = 0;
			bpf_map_update_elem(fd, &key, &c, BPF_ANY);
			dc[r] = tc - base;
			du[r] = tu - tc;
			dsm[r] = tsm - tu;
		}
		/* Our thread is in no probed call: these releases do not wait long. */
		at_links_destroy(&ds);
		at_links_destroy(&dr);
		at_links_destroy(&de);
		ring_buffer__consume(d->rb);
	}
	at_links_destroy(&cr);
	at_links_destroy(&ce);
	ring_buffer__consume(d->rb);
	if (rc)
		return rc;
	out->coarse = median(dc, CALIB_ROUNDS);
	out->unsampled = median(du, CALIB_ROUNDS);
	out->sampled = median(dsm, CALIB_ROUNDS);
	out->coarse_sstep = calibrate_sstep(coarse_entry, coarse_return, spare_id);
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("detail: calibration ns/call (medians of %d rounds): coarse %.0f (%.0f "
		       "single-stepped), detail unsampled %.0f, sampled %.0f more",
		       CALIB_ROUNDS, out->coarse, out->coarse_sstep, out->unsampled, out->sampled);
	/* Floors: on a busy machine a difference can come out at 0 or below. */
	out->coarse = fmax(out->coarse, 100);
	out->coarse_sstep = fmax(out->coarse_sstep, out->coarse);
	out->unsampled = fmax(out->unsampled, 10);
	out->sampled = fmax(out->sampled, 100);
	return 0;
}

void at_detail_detach_returns(struct at_detail *d, struct at_links *also)
{
	struct at_links **sets;
	size_t n = 0;

	if (!d) {
		if (also)
			at_links_destroy(also);
		return;
	}
	sets = at_xcalloc(2 * (size_t)d->o.nsyms + 1, sizeof(*sets));
	if (also)
		sets[n++] = also;
	for (uint32_t id = 0; id < d->o.nsyms; id++) {
		if (d->f[id].session.nfds || d->f[id].session.nlinks)
			sets[n++] = &d->f[id].session;
		if (d->f[id].ret.nfds || d->f[id].ret.nlinks)
			sets[n++] = &d->f[id].ret;
	}
	at_links_destroy_together(sets, n);
	free(sets);
}

void at_detail_detach(struct at_detail *d)
{
	if (!d)
		return;
	at_detail_detach_returns(d, NULL);
	for (uint32_t id = 0; id < d->o.nsyms; id++) {
		at_links_destroy(&d->f[id].entry);
		d->f[id].attached = false;
	}
}

void at_detail_quiesce(struct at_detail *d, bool on)
{
	if (d && d->skel && d->skel->bss)
		d->skel->bss->quiesce = on;
}

void at_detail_set_t0(struct at_detail *d, uint64_t t0)
{
	d->o.t0 = t0;
}

void at_detail_free(struct at_detail *d)
{
	if (!d)
		return;
	at_detail_detach(d);
	d->nbatch = 0;
	bpf_link__destroy(d->exec_link);
	ring_buffer__free(d->rb);
	detail_bpf__destroy(d->skel);
	free(d->batch);
	free(d->cnt);
	free(d->f);
	for (size_t b = 0; b < d->o.nbins; b++)
		free(d->paths[b]);
	free(d->paths);
	free(d->filter);
	free(d->args_off);
	free(d->args_entry);
	free(d);
}
