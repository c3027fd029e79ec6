// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util.h"
#include "yardstick.h"

/* While sampled, the system calls are read this often. */
#define POLL_NS 10000000ULL
/* A sample lasts this long at least, and until it saw SAMPLE_CALLS calls, */
#define SAMPLE_NS    20000000ULL
#define SAMPLE_CALLS 200
/*
 * ... twice as long, to SAMPLE_MAX_NS, when the last ended under BUSY_NS
 * before: a mix that keeps changing. Putting both programs in and out took
 * 2-6 ms of CPU on the slow host, mostly the text writes that turn the
 * tracepoints on and off.
 */
#define SAMPLE_MAX_NS 1000000000ULL
#define BUSY_NS	      300000000ULL
/* A sample a second at least while the target makes calls: its load moves the counts per call. */
#define REFRESH_NS 1000000000ULL
/* -b: look for new processes of the executable this often. */
#define SCAN_NS 1000000000ULL
/* A sample stands for others from this many calls. */
#define RATE_MIN_CALLS 20
/*
 * A poll's calls tell a new kind of request from SHIFT_CALLS on, when
 * their mean size or their writes per read moved by SHIFT_SHARE: at once
 * from SURE_CALLS calls and three times that, else in two polls in a row.
 * redis's SET reads 45 bytes, its GET 36; its serverCron reads
 * /proc/self/stat, some 350 bytes, ten times a second.
 */
#define SHIFT_CALLS 40
#define SURE_CALLS  100
#define SHIFT_SHARE 0.05
/* libc's functions that accept a connection: duty_accepts goes on each one's return. */
#define ACCEPT_FUNCS 2
/*
 * The writes per read move by this much more: a turn's reads and its
 * writes fall in different polls, and redis's went from 0.87 to 1.13 and
 * back from one 10 ms poll to the next.
 */
#define WPR_SLACK 0.25

bool at_yard_write_slot(uint32_t k)
{
	return k == AT_BY_TIME || (k >= AT_WR_CLASS(0) && k < AT_WR_CLASS(AT_READ_CLASSES)) ||
	       k == AT_TURNS;
}

bool at_yard_imputed_slot(uint32_t k)
{
	return k < AT_RP_TURNS;
}

bool at_yard_rates_of(const uint64_t *counted, const struct at_io *io, struct at_yard_rates *r)
{
	*r = (struct at_yard_rates){0};
	if (io->reads + io->writes < RATE_MIN_CALLS)
		return false;
	r->reads = io->reads > 0;
	r->writes = io->writes > 0;
	for (uint32_t k = 0; at_yard_imputed_slot(k); k++) {
		uint64_t den = at_yard_write_slot(k) ? io->writes : io->reads;

		r->per_call[k] = den ? (double)counted[k] / (double)den : 0;
	}
	if (io->reads) {
		r->read_size = (double)io->read_bytes / (double)io->reads;
		r->writes_per_read = (double)io->writes / (double)io->reads;
	}
	if (io->writes)
		r->write_size = (double)io->write_bytes / (double)io->writes;
	return true;
}

/* How far now is from was, in shares of SHIFT_SHARE * was (plus a little slack). */
static double moved(double was, double now, double slack)
{
	return fabs(now - was) / (SHIFT_SHARE * was + slack);
}

/* How far the calls io moved from sample r: 1 is a shift. */
static double shift_of(const struct at_yard_rates *r, const struct at_io *io)
{
	double m = 0;

	if ((io->reads && !r->reads) || (io->writes && !r->writes))
		return INFINITY;
	if (io->reads >= SHIFT_CALLS)
		m = fmax(m, moved(r->read_size, (double)io->read_bytes / (double)io->reads, 0.5));
	if (io->writes >= SHIFT_CALLS)
		m = fmax(m,
			 moved(r->write_size, (double)io->write_bytes / (double)io->writes, 0.5));
	if (io->reads >= SHIFT_CALLS && io->writes >= SHIFT_CALLS)
		m = fmax(m, moved(r->writes_per_read, (double)io->writes / (double)io->reads,
				  WPR_SLACK));
	return m;
}

bool at_yard_shifted(const struct at_yard_rates *r, const struct at_io *io)
{
	return io->reads + io->writes >= SHIFT_CALLS && shift_of(r, io) > 1;
}

void at_yard_impute(const struct at_yard_rates *r, const struct at_io *io, const uint64_t *counted,
		    double *imputed)
{
	for (uint32_t k = 0; at_yard_imputed_slot(k); k++) {
		double want =
		    r->per_call[k] * (double)(at_yard_write_slot(k) ? io->writes : io->reads);
		double got = counted ? (double)counted[k] : 0;

		if (want > got)
			imputed[k] += want - got;
	}
}

bool at_io_parse(const char *text, struct at_io *io)
{
	static const char *const keys[] = {"syscr:", "syscw:", "rchar:", "wchar:"};
	uint64_t *out[] = {&io->reads, &io->writes, &io->read_bytes, &io->write_bytes};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *p = strstr(text, keys[i]);
		char *end;

		if (!p || (p != text && p[-1] != '\n'))
			return false;
		p += strlen(keys[i]);
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		errno = 0;
		*out[i] = strtoull(p, &end, 10);
		if (errno || (*end && *end != '\n'))
			return false;
	}
	return true;
}

static void io_add(struct at_io *a, const struct at_io *b)
{
	a->reads += b->reads;
	a->writes += b->writes;
	a->read_bytes += b->read_bytes;
	a->write_bytes += b->write_bytes;
}

/* A target process's /proc/PID/io, kept open. */
struct proc_io {
	pid_t pid;
	int fd;
	struct at_io last;
};

struct at_yard {
	struct at_yard_opts o;
	struct bpf_link *in, *out, *acc[ACCEPT_FUNCS];
	bool has_in, has_out;
	bool sampled;	    /* in only when needed and for samples */
	bool need;	    /* a window needs them */
	bool sampling;	    /* in for a sample, since sample_from */
	bool margin;	    /* ... because a window is about to open */
	bool have_rates;    /* rates holds a sample */
	bool shift_pending; /* the last poll moved: one more tells */
	uint64_t sample_from, sample_len, sample_end, rates_at;
	struct at_yard_rates rates;
	uint64_t acc_counted[AT_REFCALLS]; /* the counts and calls rates comes from */
	struct at_io acc_io;
	uint64_t base[AT_REFCALLS]; /* refcalls' all as the sample began */
	struct at_io sample_io;	    /* its calls since */
	/* Calls waiting for the next sample's rates (a shift), and what was counted of them. */
	struct at_io pending;
	uint64_t pending_counted[AT_REFCALLS];
	bool has_pending;
	double imputed[AT_REFCALLS];
	struct at_reads *percpu;
	int ncpus;
	struct proc_io *procs;
	size_t nprocs, cap;
	dev_t dev;
	ino_t ino;
	bool have_exe;
	bool broken; /* they would not go back in: no counts from here */
	bool blind;  /* the system calls miss the socket calls: never sampled */
	uint64_t scanned_at, polled_at;
	uint64_t in_since, in_ns; /* in since (0: out), and ns in before that */
	uint64_t nsamples, ntoggles;
};

static bool open_proc(struct at_yard *y, pid_t pid)
{
	char path[64], buf[512];
	struct proc_io p = {.pid = pid};
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	p.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p.fd < 0)
		return false;
	n = pread(p.fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	if (n <= 0 || !at_io_parse(buf, &p.last)) {
		close(p.fd);
		return false;
	}
	if (y->nprocs == y->cap) {
		y->cap = y->cap ? 2 * y->cap : 4;
		y->procs = at_xrealloc(y->procs, y->cap, sizeof(*y->procs));
	}
	y->procs[y->nprocs++] = p;
	return true;
}

/* -b: the processes running the executable that are not followed yet. */
static void scan(struct at_yard *y, uint64_t now)
{
	DIR *dir;
	struct dirent *e;

	y->scanned_at = now;
	if (!y->have_exe || !(dir = opendir("/proc")))
		return;
	while ((e = readdir(dir))) {
		char path[64];
		struct stat st;
		pid_t pid;
		bool known = false;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		for (size_t i = 0; i < y->nprocs && !known; i++)
			known = y->procs[i].pid == pid;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if (known || stat(path, &st) || st.st_dev != y->dev || st.st_ino != y->ino)
			continue;
		open_proc(y, pid);
	}
	closedir(dir);
}

/* The target's system calls since the last read; a process gone takes its last ones along. */
static struct at_io io_delta(struct at_yard *y)
{
	struct at_io d = {0};
	size_t keep = 0;

	for (size_t i = 0; i < y->nprocs; i++) {
		struct proc_io *p = &y->procs[i];
		char buf[512];
		struct at_io now;
		ssize_t n = pread(p->fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = 0;
		if (n <= 0 || !at_io_parse(buf, &now)) {
			close(p->fd);
			continue;
		}
		if (now.reads >= p->last.reads && now.writes >= p->last.writes &&
		    now.read_bytes >= p->last.read_bytes && now.write_bytes >= p->last.write_bytes)
			io_add(&d, &(struct at_io){now.reads - p->last.reads,
						   now.writes - p->last.writes,
						   now.read_bytes - p->last.read_bytes,
						   now.write_bytes - p->last.write_bytes});
		p->last = now;
		y->procs[keep++] = *p;
	}
	y->nprocs = keep;
	return d;
}

/* refcalls' slot k, all CPUs, as the programs counted it. */
static bool read_slot(struct at_yard *y, uint32_t k, struct at_reads *out)
{
	if (bpf_map_lookup_elem(y->o.refcalls_fd, &k, y->percpu))
		return false;
	*out = (struct at_reads){0, 0, 0};
	for (int i = 0; i < y->ncpus; i++) {
		out->all += y->percpu[i].all;
		out->on += y->percpu[i].on;
		out->turn += y->percpu[i].turn;
	}
	return true;
}

/* refcalls' all per slot, all CPUs. */
static bool read_counts(struct at_yard *y, uint64_t *out)
{
	struct at_reads r;

	for (uint32_t k = 0; k < AT_REFCALLS; k++) {
		if (!read_slot(y, k, &r))
			return false;
		out[k] = r.all;
	}
	return true;
}

static void counts_since(const uint64_t *now, const uint64_t *then, uint64_t *out)
{
	for (uint32_t k = 0; k < AT_REFCALLS; k++)
		out[k] = now[k] > then[k] ? now[k] - then[k] : 0;
}

/* Impute io (counted: what the programs counted of it, NULL: none), now or after a sample. */
static void impute(struct at_yard *y, const struct at_io *io, const uint64_t *counted)
{
	if (y->has_pending) {
		io_add(&y->pending, io);
		for (uint32_t k = 0; counted && k < AT_REFCALLS; k++)
			y->pending_counted[k] += counted[k];
	} else if (y->have_rates) {
		at_yard_impute(&y->rates, io, counted, y->imputed);
	}
}

static void flush_pending(struct at_yard *y)
{
	if (!y->has_pending)
		return;
	y->has_pending = false;
	if (y->have_rates)
		at_yard_impute(&y->rates, &y->pending, y->pending_counted, y->imputed);
	y->pending = (struct at_io){0};
	memset(y->pending_counted, 0, sizeof(y->pending_counted));
}

/*
 * The calls while the links went in or out, since the programs' counts
 * before[] (ok: read): what the programs counted of them, and the rest
 * imputed. after[] gets the counts now; false when not read.
 */
static bool impute_switch(struct at_yard *y, bool ok, const uint64_t *before, uint64_t *after)
{
	uint64_t counted[AT_REFCALLS];
	struct at_io d = io_delta(y);

	if (ok && read_counts(y, after)) {
		counts_since(after, before, counted);
		impute(y, &d, counted);
		return true;
	}
	impute(y, &d, NULL);
	return false;
}

/*
 * duty_accepts on the return of libc's accept and accept4 (libbpf finds
 * libc.so.6 on the library path). Without them, a static target or a
 * libc of its own, the accepts' calls go with the thread's latest read.
 */
static void attach_accepts(struct at_yard *y)
{
	static const char *const funcs[ACCEPT_FUNCS] = {"accept", "accept4"};

	for (size_t i = 0; i < ACCEPT_FUNCS && y->o.accepts; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = funcs[i], .retprobe = true);

		if (!y->acc[i])
			y->acc[i] = bpf_program__attach_uprobe_opts(
			    y->o.accepts, y->o.pid ? y->o.pid : -1, "libc.so.6", 0, &uo);
	}
}

static bool attach(struct at_yard *y)
{
	if (y->has_in && !y->in)
		y->in = bpf_program__attach(y->o.inputs);
	if (y->has_out && !y->out)
		y->out = bpf_program__attach(y->o.outputs);
	if (y->in)
		attach_accepts(y);
	return (!y->has_in || y->in) && (!y->has_out || y->out);
}

static void detach(struct at_yard *y)
{
	bpf_link__destroy(y->in);
	bpf_link__destroy(y->out);
	for (size_t i = 0; i < ACCEPT_FUNCS; i++) {
		bpf_link__destroy(y->acc[i]);
		y->acc[i] = NULL;
	}
	y->in = y->out = NULL;
}

/* In, for a sample (pending: its rates take the calls waiting). */
static void go_in(struct at_yard *y, uint64_t now)
{
	uint64_t before[AT_REFCALLS], after[AT_REFCALLS];
	struct at_io d = io_delta(y);
	bool ok = read_counts(y, before);

	impute(y, &d, NULL);
	if (!attach(y)) {
		/* Out for good: the intervals go by time from here (at_yard_read() fails). */
		at_warn("coarse budget: cannot put the socket yardsticks back in (%s): the "
			"estimates go by time from here",
			strerror(errno));
		detach(y);
		y->broken = true;
		y->sampled = y->sampling = y->has_pending = false;
		return;
	}
	/* The calls while they went in: counted from when each was in. */
	if (impute_switch(y, ok, before, after))
		memcpy(y->base, after, sizeof(after));
	y->in_since = now;
	y->sampling = true;
	y->margin = false;
	y->sample_from = now;
	y->sample_io = (struct at_io){0};
	y->ntoggles++;
}

/*
 * Whether the system calls miss the reads and writes the programs counted:
 * recv(), send() and their kin are not in /proc/PID/io (reqmix's are).
 */
static bool blind(const uint64_t *counted, const struct at_io *io, bool writes)
{
	uint64_t reads = 0;

	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		reads += counted[k];
	return reads > io->reads + io->reads / 10 + 10 ||
	       (writes && counted[AT_BY_TIME] > io->writes + io->writes / 10 + 10);
}

/*
 * The sample ends: its rates from here on, and for the calls waiting.
 * False when the system calls cannot stand for the programs: they stay in.
 */
static bool end_sample(struct at_yard *y, uint64_t now)
{
	uint64_t cur[AT_REFCALLS], counted[AT_REFCALLS];
	struct at_yard_rates r;
	struct at_io d = io_delta(y);

	io_add(&y->sample_io, &d);
	if (read_counts(y, cur)) {
		counts_since(cur, y->base, counted);
		if (blind(counted, &y->sample_io, y->has_out)) {
			if (at_env_flag("ADAPTRACE_DEBUG"))
				at_err("yardsticks: the target's read and write system calls miss "
				       "its socket reads and writes (recv, send...): in all along");
			y->blind = true;
			y->sampled = y->sampling = y->has_pending = false;
			return false;
		}
		/*
		 * Of the calls the rates came from: with them, halved, while the
		 * calls are of the same kind. A 10 ms sample before a window
		 * holds some 45 of redis's turns.
		 */
		if (y->have_rates && !at_yard_shifted(&y->rates, &y->sample_io)) {
			for (uint32_t k = 0; k < AT_REFCALLS; k++)
				counted[k] += y->acc_counted[k] / 2;
			y->sample_io.reads += y->acc_io.reads / 2;
			y->sample_io.writes += y->acc_io.writes / 2;
			y->sample_io.read_bytes += y->acc_io.read_bytes / 2;
			y->sample_io.write_bytes += y->acc_io.write_bytes / 2;
		}
		if (at_yard_rates_of(counted, &y->sample_io, &r)) {
			y->rates = r;
			y->have_rates = true;
			y->rates_at = now;
			y->nsamples++;
			memcpy(y->acc_counted, counted, sizeof(counted));
			y->acc_io = y->sample_io;
		}
	}
	flush_pending(y);
	y->sampling = false;
	y->sample_end = now;
	return true;
}

static void go_out(struct at_yard *y, uint64_t now)
{
	uint64_t before[AT_REFCALLS], after[AT_REFCALLS];
	bool ok;

	if (y->sampling) {
		if (!end_sample(y, now))
			return;
	} else {
		(void)io_delta(y); /* a window's: counted */
	}
	ok = read_counts(y, before);
	detach(y);
	impute_switch(y, ok, before, after);
	y->in_ns += now - y->in_since;
	y->in_since = 0;
	y->ntoggles++;
}

struct at_yard *at_yard_new(const struct at_yard_opts *o)
{
	struct at_yard *y = at_xcalloc(1, sizeof(*y));
	struct stat st;

	y->o = *o;
	y->ncpus = libbpf_num_possible_cpus();
	if (y->ncpus < 1)
		y->ncpus = 1;
	y->percpu = at_xcalloc((size_t)y->ncpus, sizeof(*y->percpu));
	/* They count from the start: which functions run once a turn is known from exact counts. */
	y->has_in = o->inputs && (y->in = bpf_program__attach(o->inputs));
	y->has_out = y->has_in && o->outputs && (y->out = bpf_program__attach(o->outputs));
	if (y->has_in)
		attach_accepts(y);
	y->in_since = at_now_ns();
	y->sample_len = SAMPLE_NS;
	if (!o->pid && o->exe && !stat(o->exe, &st)) {
		y->dev = st.st_dev;
		y->ino = st.st_ino;
		y->have_exe = true;
	}
	return y;
}

void at_yard_free(struct at_yard *y)
{
	if (!y)
		return;
	if (at_env_flag("ADAPTRACE_DEBUG") && y->sampled)
		at_err("yardsticks: %" PRIu64 " samples, %" PRIu64 " times in or out", y->nsamples,
		       y->ntoggles);
	detach(y);
	for (size_t i = 0; i < y->nprocs; i++)
		close(y->procs[i].fd);
	free(y->procs);
	free(y->percpu);
	free(y);
}

bool at_yard_has_inputs(const struct at_yard *y)
{
	return y && y->has_in;
}

bool at_yard_has_outputs(const struct at_yard *y)
{
	return y && y->has_out;
}

bool at_yard_sampled(const struct at_yard *y)
{
	return y && y->sampled;
}

void at_yard_set_sampled(struct at_yard *y, bool sampled, uint64_t now)
{
	if (!y || !y->has_in || sampled == y->sampled || (sampled && (y->blind || y->broken)))
		return;
	if (sampled) {
		if (y->o.pid && !y->nprocs)
			open_proc(y, y->o.pid);
		else
			scan(y, now);
		if (!y->nprocs)
			return; /* nothing to impute from */
		y->sampled = true;
		/* In now: the first sample begins. */
		y->sampling = true;
		y->sample_from = now;
		y->sample_io = (struct at_io){0};
		(void)io_delta(y);
		if (!read_counts(y, y->base))
			y->sampled = false;
		return;
	}
	if (!y->in_since)
		go_in(y, now);
	if (y->sampling)
		end_sample(y, now);
	y->sampled = false;
}

void at_yard_need(struct at_yard *y, bool need, uint64_t now)
{
	if (!y || !y->sampled)
		return;
	y->need = need;
	if (need && !y->in_since) {
		go_in(y, now);
		y->margin = true;
		y->sample_len = SAMPLE_NS;
	}
}

uint64_t at_yard_in_since(const struct at_yard *y)
{
	return y ? y->in_since : 0;
}

void at_yard_window_arms(struct at_yard *y, uint64_t now)
{
	if (!y || !y->sampled || !y->in_since || !y->sampling)
		return;
	/*
	 * The time a window waits in gives no rates: with them (and its probes
	 * going in), redis's turns came out 24-52 % low, without 0-12 %. A
	 * sample begun before that ends here.
	 */
	if (y->margin && y->have_rates) {
		/* Calls held for a shift wait on for the next sample. */
		(void)io_delta(y);
		y->sampling = false;
		return;
	}
	end_sample(y, now);
}

int at_yard_poll(struct at_yard *y, uint64_t now)
{
	if (!y || !y->sampled)
		return -1;
	if (!y->o.pid && now - y->scanned_at >= SCAN_NS)
		scan(y, now);
	if (y->in_since) {
		struct at_io d = io_delta(y);

		if (!y->sampling) {
			if (!y->need)
				go_out(y, now);
			return (int)(POLL_NS / 1000000);
		}
		io_add(&y->sample_io, &d);
		if (!y->need && ((now - y->sample_from >= y->sample_len &&
				  y->sample_io.reads + y->sample_io.writes >= SAMPLE_CALLS) ||
				 now - y->sample_from >= SAMPLE_MAX_NS))
			go_out(y, now);
	} else {
		struct at_io d = io_delta(y);
		double m = y->have_rates ? shift_of(&y->rates, &d) : INFINITY;
		bool calls = d.reads + d.writes > 0, due;

		if (d.reads + d.writes < SHIFT_CALLS && y->have_rates)
			m = 0;
		due = calls && (!y->have_rates || (m > 1 && (y->shift_pending || m > 3)) ||
				now - y->rates_at >= REFRESH_NS);
		if (m > 1 && !y->has_pending) {
			/* Held for the next sample's rates, which come after the shift. */
			y->has_pending = true;
		} else if (!(m > 1) && y->has_pending && !due) {
			y->shift_pending = false;
			flush_pending(y);
		}
		impute(y, &d, NULL);
		y->shift_pending = m > 1;
		if (due) {
			y->sample_len =
			    now - y->sample_end < BUSY_NS
				? (uint64_t)fmin(2.0 * (double)y->sample_len, SAMPLE_MAX_NS)
				: SAMPLE_NS;
			if (at_env_flag("ADAPTRACE_DEBUG"))
				at_err("yardsticks: a %.0f ms sample: %s (%" PRIu64
				       " reads, %" PRIu64 " writes in %.1f ms)",
				       (double)y->sample_len / 1e6,
				       !y->have_rates ? "none yet"
				       : m > 1	      ? "the calls moved"
						      : "a second since the last",
				       d.reads, d.writes, (double)(now - y->polled_at) / 1e6);
			if (at_env_flag("ADAPTRACE_DEBUG") && y->have_rates && d.reads && d.writes)
				at_err("yardsticks: read size %.1f (was %.1f), write size %.1f "
				       "(%.1f), writes a read %.3f (%.3f)",
				       (double)d.read_bytes / (double)d.reads, y->rates.read_size,
				       (double)d.write_bytes / (double)d.writes,
				       y->rates.write_size, (double)d.writes / (double)d.reads,
				       y->rates.writes_per_read);
			y->shift_pending = false;
			go_in(y, now);
		}
	}
	y->polled_at = now;
	return (int)(POLL_NS / 1000000);
}

bool at_yard_read(struct at_yard *y, struct at_reads *out, uint32_t n)
{
	if (!y || !y->has_in || y->broken)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		if (!read_slot(y, k, &out[k]))
			return false;
		out[k].all += (uint64_t)llround(y->imputed[k]);
	}
	return true;
}

void at_yard_totals(const struct at_yard *y, uint64_t now, uint64_t *imputed, uint64_t *in_ns)
{
	double imp = 0;

	*imputed = *in_ns = 0;
	if (!y)
		return;
	*in_ns = y->in_ns + (y->in_since && now > y->in_since ? now - y->in_since : 0);
	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		imp += y->imputed[k];
	if (y->has_out)
		imp += y->imputed[AT_BY_TIME];
	*imputed = (uint64_t)llround(imp);
}

/* at_yard_cost_ns(): batches of one-byte round trips, about 15 ms in all here. */
#define YARD_BATCHES 4
#define YARD_TRIPS   150

/* A connected loopback TCP pair, Nagle off so that each byte goes at once. */
static int loopback_pair(int fd[2])
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	fd[0] = fd[1] = -1;
	if (l < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!bind(l, (struct sockaddr *)&a, sizeof(a)) && !listen(l, 1) &&
	    !getsockname(l, (struct sockaddr *)&a, &alen) &&
	    (fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
	    !connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		fd[1] = accept(l, NULL, NULL);
	close(l);
	if (fd[1] < 0) {
		if (fd[0] >= 0)
			close(fd[0]);
		return -1;
	}
	setsockopt(fd[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* The fastest of a few batches of one-byte round trips (ns each): the least disturbed. */
static double round_trip_ns(const int fd[2])
{
	double best = 0;

	for (int b = 0; b < YARD_BATCHES; b++) {
		uint64_t t = at_now_ns();
		double ns;
		char c = 0;

		for (int i = 0; i < YARD_TRIPS; i++)
			if (write(fd[0], &c, 1) != 1 || read(fd[1], &c, 1) != 1)
				return 0;
		ns = (double)(at_now_ns() - t) / YARD_TRIPS;
		if (!b || ns < best)
			best = ns;
	}
	return best;
}

double at_yard_cost_ns(struct bpf_program *inputs, struct bpf_program *outputs)
{
	struct bpf_link *in = NULL, *out = NULL;
	double before, after = 0, again;
	int fd[2];

	if (!inputs || loopback_pair(fd))
		return -1;
	/* A warm-up, then without, with and without again: a drift of the host cancels. */
	round_trip_ns(fd);
	before = round_trip_ns(fd);
	in = bpf_program__attach(inputs);
	out = outputs ? bpf_program__attach(outputs) : NULL;
	if (in && (out || !outputs))
		after = round_trip_ns(fd);
	bpf_link__destroy(in);
	bpf_link__destroy(out);
	again = round_trip_ns(fd);
	close(fd[0]);
	close(fd[1]);
	if (!(before > 0) || !(after > 0) || !(again > 0))
		return -1;
	/* A round trip is one read and one write, each seen by a program when there is one. */
	return fmax(after - (before + again) / 2, 0) / (outputs ? 2 : 1);
}
