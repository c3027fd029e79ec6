// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "adaptrace.h"
#include "duty.h"
#include "privilege.h"
#include "util.h"
#include "yardstick.h"

#define MAX_RELEASES   8
#define MIN_WINDOW_NS  2000000ULL /* 2 ms: shorter windows are mostly attach time */
#define CLOSE_SLACK_NS 500000ULL  /* poll() counts ms: close a window this much early at most */
/* A turn window, or a window's run to the end of its turns, lasts this many lengths at most. */
#define RUN_ON_LENGTHS 3
/*
 * A turn window in which no thread has woken by its end waits this many
 * lengths from its opening for one: the target pauses for milliseconds on
 * a shared host, and 115 of 497 turn windows in 16 redis rounds counted no
 * turn; 63 of 461 with the wait (turn_window_waits()).
 */
#define TURN_WAIT_LENGTHS 2
/* ... or this many while fewer than half the intervals with window reads saw a turn end, */
#define SCARCE_LENGTHS 6
/* ... or this many while none of 2 or more did (UNSEEN_AFTER). */
#define UNSEEN_LENGTHS 15
#define UNSEEN_AFTER   2
/* ... and this many more while a turn whose end it counted is in its tail (rp_tails). */
#define TAIL_LENGTHS 3
/* A release still waiting after this long needs the probes quiesced. */
#define QUIESCE_AFTER_NS 20000000ULL
/*
 * Windows that close more than LATE_CLOSE_NS late, for LATE_MAX_NS in all
 * within LATE_EPOCH_NS (a tenth of the windows' own 1 % share), mean the
 * idle class starves the loader (every CPU busy): it then runs as a normal
 * task for 10 s, twice as long after each such epoch, up to 320 s.
 */
#define LATE_CLOSE_NS	  2000000ULL
#define LATE_EPOCH_NS	  10000000000ULL
#define LATE_MAX_NS	  100000000ULL
#define NORMAL_FOR_NS	  10000000000ULL
#define NORMAL_FOR_MAX_NS 320000000000ULL
/* While a slot's window is due, the loader looks for a shift (at_duty_shifted()) this often, */
#define SHIFT_CHECK_NS 100000000ULL
/* ... and opens it early when this many looks in a row found one. */
#define SHIFT_LOOKS 2
/* A turn window gives its slot to an early normal window once in this many slots at most. */
#define SWAP_SLOTS 4
/* A turn window that counted under this share of the reads its length should see saw too few. */
#define TURN_READS_SHARE 0.25

struct release {
	struct at_links sets[4];
	size_t nsets;
	uint64_t started;
	pthread_t th;
	bool running;
	bool window; /* a window's links */
	atomic_bool done;
	uint64_t ended;
	uint64_t cpu_ns; /* the CPU time it took */
	struct at_duty *d;
	bool threaded;	    /* it runs in a thread of its own */
	bool idle;	    /* it runs in the idle class (idle_release()) */
	bool idle_due;	    /* ... once normal_ns have passed since it started */
	uint64_t normal_ns; /* a window's: as long as its costliest probes take to go */
	pid_t tid;	    /* ... this thread, */
	int policy;	    /* ... which had this class before */
	struct sched_param param;
};

/* Probed time of the demoted functions: one span per window (turn: the turnwise only). */
struct span {
	uint64_t a, b;
	bool turn;
};

struct at_duty {
	struct at_duty_opts o;
	bool *demoted;
	bool *turnwise;		/* demoted, and probed in the turn windows too */
	double *cost;		/* probe cost when always probed, as last planned */
	bool *at_calls;		/* demoted, and its windows count it at its call sites */
	uint32_t *order;	/* every id, the order a window's link lists them in */
	bool cost_order;	/* windows arm and release the costliest first */
	uint32_t nhot;		/* the costliest demoted: AT_HOT_SHARE of their cost */
	uint32_t window_probes; /* the window's */
	uint64_t window_arm_ns; /* how long the window's probes took to go in */
	/* ADAPTRACE_RELEASE_NORMAL_US: a window's release stays normal this long. */
	int64_t release_normal_ns;
	uint64_t *since; /* when each demoted function left the always-on links */
	uint32_t ndemoted, nturnwise;
	bool turn_next;	 /* the next window is a turn window */
	bool turn_open;	 /* the open window is one */
	bool turn_woke;	 /* ... and a thread has woken in it (a count opened) */
	bool turn_retry; /* the next turn window stands in for one that saw too few turns */
	bool retry_open; /* the open turn window is such a one */
	bool tw_base;	 /* tw_reads0, tw_eofs0 and tw_ends0 were read */
	/* The turn windows' reads, hang-ups and turns' ends when the open one opened. */
	uint64_t tw_reads0, tw_eofs0, tw_ends0;
	uint32_t ntw, ntw_few; /* for ADAPTRACE_DEBUG: turn windows, those that saw too few turns */
	uint32_t gen;
	double frac;
	struct at_links exact, window;
	bool open;
	bool lingering; /* closed, its links still in until the target reads again */
	uint64_t closed_at;
	/* Intervals whose windows read as the target turned; those whose read path saw an end. */
	uint32_t nread_intervals, nturned_intervals;
	uint64_t opened, next_open, period_ns, win_ns;
	uint64_t min_period_ns; /* at_duty_opts.period_s */
	uint64_t slot, rng;	/* the current period's start; xorshift state */
	uint64_t moved_at;	/* the last move's generation flip */
	struct span *spans;
	size_t nspans, cap;
	struct release rel[MAX_RELEASES];
	bool quiesced;
	bool may_idle;		    /* it can leave SCHED_IDLE again */
	bool idle_releases;	    /* window releases run in the idle class */
	pthread_mutex_t class_lock; /* a release thread's class against at_duty_join() */
	bool idle_class;	    /* the loader runs in SCHED_IDLE */
	uint64_t normal_until;	    /* ... not before this, after late windows */
	/* For ADAPTRACE_DEBUG: window releases (idle ones), their ns, quiesced ns. */
	uint64_t nrel, nrel_idle, rel_ns, quiesce_ns, quiesced_at;
	uint64_t narm, arm_ns; /* ... window attaches, their ns */
	/* The CPU time of the windows' attaches and releases, and their probes. */
	uint64_t arm_cpu_ns, rel_cpu_ns, arm_probes;
	uint64_t nwinrel, normal_ns_sum; /* ... window releases begun, ns they stay normal */
	uint64_t normal_for;
	uint64_t late_epoch, late_sum; /* how late windows closed since late_epoch */
	struct ring_buffer *wake;      /* duty_wake, when a lingering window can go */
	struct at_yard *yard;	       /* the socket yardsticks (yardstick.h) */
	bool outputs;		       /* they count the writes too */
	bool inputs_off;	       /* no yardstick: estimates go by time */
	bool yard_sampled;	       /* wanted out between windows (ADAPTRACE_YARDSTICKS) */
	bool yard_ever;		       /* ... at some time: the intervals say how they counted */
	uint64_t yard_last[2];	       /* at_yard_totals() at the last interval */
	/* refcalls at the last interval (reads per class, then writes and turns). */
	struct at_reads ref_last[AT_REFCALLS];
	/*
	 * ref_last holds this interval's reads and turns, for at_duty_loop():
	 * reading the windows' calls after them takes tens of ms.
	 */
	bool loop_fresh;
	uint64_t *wlast; /* wcalls at the last interval, per function and class */
	/* refcalls' read classes at the last look for a shift (shift_due()), and when. */
	struct at_reads shift_last[AT_READ_CLASSES];
	uint64_t seen_from[AT_READ_CLASSES]; /* each class's window reads at the latest move */
	uint64_t shift_checked;
	uint32_t shift_looks; /* looks in a row that found a shift */
	double read_rate;     /* the target's reads a ns in the latest interval */
	bool force_normal;    /* the next window opens early, a normal one in a turn's slot */
	uint64_t swapped_at;  /* ... when it last did */
	uint32_t nshifted;    /* windows opened early for a shift */
	/* The latest look's classes the windows hardly saw (bit k: class k). */
	uint32_t shift_mask;
	bool opening_early;			   /* the next window to open is an early one */
	bool early_check;			   /* one has run: see at_duty_early_missed() */
	uint32_t early_mask;			   /* ... opened for these classes, */
	struct at_reads early_at[AT_READ_CLASSES]; /* ... with refcalls' reads then */
	bool early_blocked; /* it missed them: the next normal window opens at its random point */
	uint32_t nearly_missed;
	uint64_t *wpercpu;
	int ncpus;
	uint32_t *bkeys; /* batch lookup buffers, AT_WCALL_SLOTS entries */
	uint64_t *bvals;
};

/* refcalls' first n slots so far (reads per class, writes, turns), all CPUs; false on error. */
static bool read_ref(struct at_duty *d, struct at_reads *out, uint32_t n)
{
	return at_yard_read(d->yard, out, n);
}

/*
 * Function id's window calls per read class (and by time) so far, all
 * CPUs, into out: one system call where the kernel looks up batches (it
 * begins after the key it is given), else one per slot; false on error.
 */
static bool read_wcalls(struct at_duty *d, uint32_t id, uint64_t *out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t first = id * AT_WCALL_SLOTS, prev = first - 1, next, n = AT_WCALL_SLOTS;
	int err = bpf_map_lookup_batch(d->o.wcalls_fd, first ? &prev : NULL, &next, d->bkeys,
				       d->bvals, &n, &opts);

	if ((err && errno != ENOENT) || n != AT_WCALL_SLOTS || d->bkeys[0] != first) {
		for (uint32_t k = 0; k < AT_WCALL_SLOTS; k++) {
			uint32_t key = first + k;

			if (bpf_map_lookup_elem(d->o.wcalls_fd, &key, d->wpercpu))
				return false;
			out[k] = 0;
			for (int i = 0; i < d->ncpus; i++)
				out[k] += d->wpercpu[i];
		}
		return true;
	}
	for (uint32_t k = 0; k < AT_WCALL_SLOTS; k++) {
		out[k] = 0;
		for (int i = 0; i < d->ncpus; i++)
			out[k] += d->bvals[(size_t)k * d->ncpus + i];
	}
	return true;
}

/* The wake-up is the news: read_after_window carries it. */
static int ignore_wake(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

struct at_duty *at_duty_new(const struct at_duty_opts *o)
{
	struct at_duty *d = at_xcalloc(1, sizeof(*d));

	d->o = *o;
	/*
	 * Off unless asked for: with it, redis's --budget 5 estimates missed
	 * their per-turn part (87-104 of 109 functions within 10 %, against
	 * 105-109 without), for about 3 points of throughput.
	 */
	d->may_idle = at_env_flag("ADAPTRACE_IDLE_LOADER") && at_may_leave_idle_class();
	d->idle_releases = at_may_leave_idle_class() && !(getenv("ADAPTRACE_IDLE_RELEASE") &&
							  !at_env_flag("ADAPTRACE_IDLE_RELEASE"));
	pthread_mutex_init(&d->class_lock, NULL);
	d->demoted = at_xcalloc(o->n + 1, sizeof(*d->demoted));
	d->turnwise = at_xcalloc(o->n + 1, sizeof(*d->turnwise));
	d->cost = at_xcalloc(o->n + 1, sizeof(*d->cost));
	d->at_calls = at_xcalloc(o->n + 1, sizeof(*d->at_calls));
	d->order = at_xcalloc(o->n + 1, sizeof(*d->order));
	for (uint32_t id = 0; id < o->n; id++)
		d->order[id] = id;
	d->cost_order = !(getenv("ADAPTRACE_COST_ORDER") && !at_env_flag("ADAPTRACE_COST_ORDER"));
	d->release_normal_ns = -1;
	if (getenv("ADAPTRACE_RELEASE_NORMAL_US"))
		d->release_normal_ns =
		    strtoll(getenv("ADAPTRACE_RELEASE_NORMAL_US"), NULL, 10) * 1000;
	d->since = at_xcalloc(o->n + 1, sizeof(*d->since));
	d->period_ns = (uint64_t)((o->period_s > 0 ? o->period_s : 2) * 1e9);
	d->min_period_ns = d->period_ns;
	d->rng = at_now_ns() | 1;
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus < 1)
		d->ncpus = 1;
	d->wpercpu = at_xcalloc((size_t)d->ncpus, sizeof(*d->wpercpu));
	d->wlast = at_xcalloc(((size_t)o->n + 1) * AT_WCALL_SLOTS, sizeof(*d->wlast));
	d->bkeys = at_xcalloc(AT_WCALL_SLOTS, sizeof(*d->bkeys));
	d->bvals = at_xcalloc((size_t)AT_WCALL_SLOTS * d->ncpus, sizeof(*d->bvals));
	d->yard = at_yard_new(&(struct at_yard_opts){
	    .inputs = o->inputs,
	    .outputs = o->outputs,
	    .accepts = o->accepts,
	    .refcalls_fd = o->refcalls_fd,
	    .pid = o->pid,
	    .exe = o->exe,
	});
	d->yard_sampled =
	    getenv("ADAPTRACE_YARDSTICKS") && !strcmp(getenv("ADAPTRACE_YARDSTICKS"), "sampled");
	d->outputs = at_yard_has_outputs(d->yard);
	d->inputs_off = !at_yard_has_inputs(d->yard);
	if (o->wake_fd >= 0 && o->linger_woken)
		d->wake = ring_buffer__new(o->wake_fd, ignore_wake, NULL, NULL);
	return d;
}

int at_duty_wake_fd(const struct at_duty *d)
{
	return d && d->wake ? ring_buffer__epoll_fd(d->wake) : -1;
}

bool at_duty_counting(const struct at_duty *d)
{
	return d && (d->open || d->lingering);
}

void at_duty_wake_drain(struct at_duty *d)
{
	if (d && d->wake)
		ring_buffer__consume(d->wake);
}

bool at_duty_is_demoted(const struct at_duty *d, uint32_t id)
{
	return d && id < d->o.n && d->demoted[id];
}

/* The socket reads of every class in refcalls' first slots r. */
static uint64_t reads_of(const struct at_reads *r)
{
	uint64_t n = 0;

	for (int k = 0; k < AT_READ_CLASSES; k++)
		n += r[k].all;
	return n;
}

void at_duty_loop(struct at_duty *d, uint64_t *reads, uint64_t *turns)
{
	struct at_reads r[AT_WAKES + 1];

	*reads = *turns = 0;
	if (d && d->loop_fresh) {
		d->loop_fresh = false;
		*reads = reads_of(d->ref_last);
		*turns = d->ref_last[AT_TURNS].all;
		return;
	}
	if (!d || d->inputs_off || !d->outputs || !read_ref(d, r, AT_WAKES + 1))
		return;
	*reads = reads_of(r);
	*turns = r[AT_TURNS].all;
}

double at_duty_probe_cpu_ns(const struct at_duty *d)
{
	double per_window;

	if (!d || !d->narm || !d->nrel || !d->arm_probes)
		return AT_WINDOW_PROBE_NS;
	per_window =
	    (double)d->arm_cpu_ns / (double)d->narm + (double)d->rel_cpu_ns / (double)d->nrel;
	return per_window / ((double)d->arm_probes / (double)d->narm);
}

double at_duty_windows_per_s(const struct at_duty *d, bool turnwise)
{
	return d ? (turnwise ? 2e9 : 1e9) / (double)d->period_ns : 0;
}

double at_duty_frac(const struct at_duty *d)
{
	return d ? d->frac : 1;
}

uint64_t at_duty_moved_at(const struct at_duty *d)
{
	return d ? d->moved_at : 0;
}

uint32_t at_duty_ndemoted(const struct at_duty *d)
{
	return d ? d->ndemoted : 0;
}

uint32_t at_duty_nturnwise(const struct at_duty *d)
{
	return d ? d->nturnwise : 0;
}

uint32_t at_duty_nfuncs(const struct at_duty *d)
{
	return d ? d->o.n : 0;
}

double at_duty_min_period_s(const struct at_duty *d)
{
	return d ? (double)d->min_period_ns / 1e9 : 0;
}

double at_duty_max_period_s(const struct at_duty *d)
{
	return d ? fmax(d->o.step_s, (double)d->min_period_ns / 1e9) : 0;
}

void at_duty_set_windows(struct at_duty *d, double frac, double period_s)
{
	period_s = fmin(fmax(period_s, at_duty_min_period_s(d)), at_duty_max_period_s(d));
	d->period_ns = (uint64_t)(period_s * 1e9);
	d->win_ns = (uint64_t)(frac * (double)d->period_ns);
	if (d->win_ns < MIN_WINDOW_NS)
		d->win_ns = MIN_WINDOW_NS;
	/* What the windows really probe: the plan scales window hits by it. */
	d->frac = (double)d->win_ns / (double)d->period_ns;
}

static const double *cmp_cost_of;

/* Costliest first, then by id. */
static int cmp_cost(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double cx = cmp_cost_of[x], cy = cmp_cost_of[y];

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return x < y ? -1 : x > y;
}

/*
 * Order the ids for the windows' links (costliest first, unless
 * ADAPTRACE_COST_ORDER=0) and count the costliest demoted functions that
 * make up AT_HOT_SHARE of their cost, after a move.
 */
static void order_by_cost(struct at_duty *d)
{
	double total = 0, acc = 0;
	uint32_t k = 0;

	if (d->cost_order) {
		cmp_cost_of = d->cost;
		qsort(d->order, d->o.n, sizeof(*d->order), cmp_cost);
	}
	for (uint32_t id = 0; id < d->o.n; id++)
		if (d->demoted[id] && d->cost[id] > 0)
			total += d->cost[id];
	for (uint32_t i = 0; i < d->o.n && acc < AT_HOT_SHARE * total; i++) {
		uint32_t id = d->order[i];

		if (d->demoted[id] && d->cost[id] > 0) {
			acc += d->cost[id];
			k++;
		}
	}
	d->nhot = k;
}

/*
 * Whether the windows count function id at its call sites: they each cost
 * the loader a probe write in and out per window (about 20 us of CPU
 * here), and save what single-stepping its calls in the windows costs
 * over an emulated call, about 0.9 of its probe cost (cost[id] per step of
 * step_s when always probed) times the windows' share of the time.
 * redis: LRU_CLOCK (6 sites, 3.5 calls a request) and siphash (1) are
 * worth it; zmalloc_used_memory (26 sites, 1 a request) is not.
 */
static bool worth_calls(const struct at_duty *d, uint32_t id)
{
	const struct at_callsites *c = d->o.sites[id].calls;
	double saved, extra;

	if (!c || !c->n || !(d->o.step_s > 0))
		return false;
	saved = d->cost[id] / d->o.step_s * 0.9 * d->frac;
	extra = (double)(c->n - 1) * at_duty_probe_cpu_ns(d) *
		at_duty_windows_per_s(d, d->turnwise[id]);
	return saved > extra;
}

/*
 * Session links on the functions whose demoted[id] == want (turn: those
 * turnwise too), per binary; *nprobes gets their number. A window's go in
 * d->order, costliest first: the kernel arms and releases a link's probes
 * in its order, and until a probe is out the target pays a trap for each
 * call that no window counts.
 */
static int attach_set(struct at_duty *d, bool want, bool turn, uint32_t gen, struct at_links *out,
		      uint32_t *nprobes, char *err, size_t errlen)
{
	size_t max = d->o.n + 1;
	uint64_t *offs, *cookies;
	bool *refused;
	uint32_t nbins = 0;
	int rc = 0;

	*nprobes = 0;
	for (uint32_t id = 0; id < d->o.n; id++) {
		if (d->o.sites[id].bin + 1 > nbins)
			nbins = d->o.sites[id].bin + 1;
		if (d->o.sites[id].calls)
			max += d->o.sites[id].calls->n;
	}
	offs = at_xcalloc(max, sizeof(*offs));
	cookies = at_xcalloc(max, sizeof(*cookies));
	refused = at_xcalloc(max, sizeof(*refused));
	for (uint32_t b = 0; b < nbins && !rc; b++) {
		size_t k = 0;

		for (uint32_t i = 0; i < d->o.n; i++) {
			uint32_t id = want ? d->order[i] : i;
			const struct at_duty_site *s = &d->o.sites[id];

			uint64_t cookie = id | s->flags | ((uint64_t)gen << AT_COOKIE_GEN_SHIFT) |
					  (want ? AT_COOKIE_WINDOW : 0);

			if (s->bin != b || s->refused || d->demoted[id] != want ||
			    (turn && !d->turnwise[id]))
				continue;
			if (want && d->at_calls[id]) {
				for (uint32_t c = 0; c < s->calls->n; c++) {
					offs[k] = s->calls->offs[c];
					cookies[k] = cookie | AT_COOKIE_CALLSITE |
						     (s->calls->tail[c] ? AT_COOKIE_TAILSITE : 0);
					refused[k++] = false;
				}
				continue;
			}
			offs[k] = s->off;
			cookies[k] = cookie;
			refused[k++] = false;
		}
		*nprobes += k;
		if (k)
			rc = at_attach_session(out, d->o.session, d->o.paths[b], offs, cookies, k,
					       d->o.pid, refused, err, errlen);
	}
	at_links_move_up(out);
	free(offs);
	free(cookies);
	free(refused);
	if (rc)
		at_links_destroy(out);
	return rc;
}

/*
 * A window's release moves to the idle class, unless the duty cycle stops
 * (at_duty_join() then brings it back): it takes the target's mmap_lock
 * once per function, and each time it wakes, a normal thread takes the CPU
 * from the target or its clients at once. Only a release of one link, in a
 * thread of its own: the threads that close several in parallel would
 * inherit the class. It stays normal while its costliest probes come out
 * (they go first, attach_set()), and the loader moves it then
 * (idle_release_due()): in the idle class from the start they stayed in
 * while redis ran, and cost 4 times more traps than the window counted.
 */
static void idle_release(struct release *r)
{
	struct sched_param idle = {0};
	struct at_duty *d = r->d;

	pthread_mutex_lock(&d->class_lock);
	r->policy = sched_getscheduler(0);
	if (d->idle_releases && r->policy == SCHED_OTHER && !sched_getparam(0, &r->param)) {
		r->tid = gettid();
		if (r->normal_ns)
			r->idle_due = true;
		else if (!sched_setscheduler(0, SCHED_IDLE, &idle))
			r->idle = true;
	}
	pthread_mutex_unlock(&d->class_lock);
}

/* The loader moves a window's release to the idle class when it is due. */
static void idle_release_due(struct at_duty *d, struct release *r, uint64_t now)
{
	struct sched_param idle = {0};

	pthread_mutex_lock(&d->class_lock);
	if (r->idle_due && !r->idle && d->idle_releases && now - r->started >= r->normal_ns &&
	    !atomic_load(&r->done) && !sched_setscheduler(r->tid, SCHED_IDLE, &idle))
		r->idle = true;
	pthread_mutex_unlock(&d->class_lock);
}

static void *release_main(void *p)
{
	struct release *r = p;
	struct at_links *sets[4];
	uint64_t cpu0 = at_thread_cpu_ns();
	size_t nfds = 0;

	for (size_t i = 0; i < r->nsets; i++) {
		sets[i] = &r->sets[i];
		nfds += r->sets[i].nfds + r->sets[i].nlinks;
	}
	if (r->window && r->threaded && nfds == 1)
		idle_release(r);
	at_links_destroy_together(sets, r->nsets);
	r->cpu_ns = at_thread_cpu_ns() - cpu0;
	r->ended = at_now_ns();
	atomic_store(&r->done, true);
	return NULL;
}

/*
 * How long a window's release stays in the normal class: its arming's
 * share that its costliest probes took (ADAPTRACE_RELEASE_NORMAL_US sets it).
 */
static uint64_t window_normal_ns(const struct at_duty *d)
{
	uint32_t n = d->nhot < d->window_probes ? d->nhot : d->window_probes;

	if (d->release_normal_ns >= 0)
		return (uint64_t)d->release_normal_ns;
	if (!d->cost_order || !d->window_probes)
		return 0;
	return (uint64_t)((double)d->window_arm_ns * n / d->window_probes);
}

/* Release links in the background; false when every slot is busy. */
static bool release(struct at_duty *d, struct at_links *const *sets, size_t n, bool window,
		    uint64_t now)
{
	struct release *r = NULL;

	for (int i = 0; i < MAX_RELEASES && !r; i++)
		if (!d->rel[i].running)
			r = &d->rel[i];
	if (!r)
		return false;
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < n && i < 4; i++) {
		r->sets[r->nsets++] = *sets[i];
		memset(sets[i], 0, sizeof(*sets[i]));
	}
	r->started = now;
	r->window = window;
	if (window) {
		r->normal_ns = window_normal_ns(d);
		d->nwinrel++;
		d->normal_ns_sum += r->normal_ns;
	}
	r->d = d;
	r->running = true;
	r->threaded = true;
	if (pthread_create(&r->th, NULL, release_main, r)) {
		r->threaded = false;
		release_main(r);
		r->running = false;
	}
	return true;
}

/* Tell the programs where the window is, for the entries paid outside it. */
static void set_phase(struct at_duty *d, enum at_window_phase ph)
{
	if (d->o.window_phase)
		*d->o.window_phase = ph;
}

static void set_quiesce(struct at_duty *d, bool on)
{
	uint64_t now;

	if (d->quiesced == on)
		return;
	now = at_now_ns();
	if (on)
		d->quiesced_at = now;
	else
		d->quiesce_ns += now - d->quiesced_at;
	d->quiesced = on;
	*d->o.quiesce = on;
	if (d->o.quiesce_detail)
		d->o.quiesce_detail(d->o.ctx, on);
}

/*
 * Whether a window's links are still being released. Until they are out,
 * they count as the next window's do (the same generation): a window
 * opened then counted its calls twice, and reqmix's GETs came out 3-22 %
 * high, more calls than the window's reads.
 */
static bool window_releasing(const struct at_duty *d)
{
	for (int i = 0; i < MAX_RELEASES; i++)
		if (d->rel[i].running && d->rel[i].window)
			return true;
	return false;
}

/*
 * With ADAPTRACE_IDLE_LOADER=1, while windows cycle, the loader's thread
 * (and the release threads it starts, which inherit it) runs in the idle
 * class: it wakes about 100 times a second, and a normal thread waking on
 * a busy machine takes a CPU from the target or its clients at once. An
 * idle-class thread takes only idle time, and the scheduler still counts
 * its CPU as idle when they wake.
 */
static void set_idle_class(struct at_duty *d, bool idle)
{
	struct sched_param sp = {0};

	if (idle == d->idle_class || (idle && !d->may_idle))
		return;
	if (!sched_setscheduler(0, idle ? SCHED_IDLE : SCHED_OTHER, &sp))
		d->idle_class = idle;
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("duty: loader runs in the %s class", d->idle_class ? "idle" : "normal");
}

/* The open window closes late (it closes in this poll). */
static void note_late(struct at_duty *d, uint64_t now, uint64_t late)
{
	if (now - d->late_epoch >= LATE_EPOCH_NS) {
		d->late_epoch = now;
		d->late_sum = 0;
	}
	d->late_sum += late;
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("duty: window closes %.2f ms late", (double)late / 1e6);
	if (!d->idle_class || d->late_sum <= LATE_MAX_NS)
		return;
	d->normal_for = d->normal_for ? 2 * d->normal_for : NORMAL_FOR_NS;
	if (d->normal_for > NORMAL_FOR_MAX_NS)
		d->normal_for = NORMAL_FOR_MAX_NS;
	d->normal_until = now + d->normal_for;
	set_idle_class(d, false);
}

/* Join finished releases; quiesce while one has been waiting a while. */
static int reap(struct at_duty *d, uint64_t now)
{
	bool waiting = false, slow = false, soon = false;

	for (int i = 0; i < MAX_RELEASES; i++) {
		struct release *r = &d->rel[i];

		if (!r->running)
			continue;
		if (atomic_load(&r->done)) {
			pthread_join(r->th, NULL);
			r->running = false;
			if (r->window) {
				set_phase(d, AT_WPHASE_NONE);
				d->nrel++;
				d->nrel_idle += r->idle;
				d->rel_ns += r->ended - r->started;
				d->rel_cpu_ns += r->cpu_ns;
			}
			continue;
		}
		waiting = true;
		if (now - r->started >= QUIESCE_AFTER_NS)
			slow = true;
		if (r->idle_due && !r->idle) {
			idle_release_due(d, r, now);
			if (!r->idle)
				soon = true;
		}
	}
	/*
	 * Not while a window counts: a quiesced entry pushes no frame, so its
	 * window call went into no callers pair, nor its callees' under it. A
	 * window opened early on new connections while a move's release
	 * waited lost 50 of writeToClient's 51 pairs, and the split by callers
	 * took listNext 10-29 % low.
	 */
	set_quiesce(d, slow && !at_duty_counting(d));
	return soon ? 1 : waiting ? 5 : -1;
}

/*
 * Out between windows, the yardsticks go in this long before one opens: a
 * thread's state (its last read, whether it wrote since) must be fresh
 * when the window counts its turns.
 */
#define YARD_MARGIN_NS 10000000ULL

static bool yard_ready(const struct at_duty *d, uint64_t now)
{
	uint64_t since = at_yard_in_since(d->yard);

	return !at_yard_sampled(d->yard) || (since && now >= since + YARD_MARGIN_NS / 2);
}

/* Each window's slot: the period, or half of it with turn windows between the others. */
static uint64_t slot_ns(const struct at_duty *d)
{
	return d->nturnwise ? d->period_ns / 2 : d->period_ns;
}

/*
 * Open the next window at a random point of its slot: windows at a fixed
 * phase would alias with a workload that alternates at a similar period
 * (redis-benchmark's runs of SETs then GETs), and see one phase only.
 */
static void plan_open(struct at_duty *d)
{
	uint64_t slot = slot_ns(d), span = slot > d->win_ns ? slot - d->win_ns : 1;

	d->rng ^= d->rng << 13;
	d->rng ^= d->rng >> 7;
	d->rng ^= d->rng << 17;
	d->next_open = d->slot + d->rng % span;
}

/* Windows have run, none is on, and the yardsticks are in all along. */
static bool shift_between_windows(const struct at_duty *d)
{
	return d->narm && !d->open && !d->lingering && !d->inputs_off && !at_yard_sampled(d->yard);
}

bool at_duty_swap_ok(bool retry, uint64_t swapped_at, uint64_t now, uint64_t slot)
{
	return retry || !swapped_at || now >= swapped_at + SWAP_SLOTS * slot;
}

bool at_duty_turn_waits_look(uint32_t looks, bool retry, uint64_t swapped_at, uint64_t now,
			     uint64_t slot)
{
	return looks > 0 && at_duty_swap_ok(retry, swapped_at, now, slot);
}

/* The next window is a turn window, unless a swap makes it a normal one (force_normal). */
static bool turn_due(const struct at_duty *d)
{
	return d->turn_next && d->nturnwise;
}

/* A due turn window waits for the next look (at_duty_turn_waits_look()); looks go on. */
static bool turn_waits_look(const struct at_duty *d, uint64_t now)
{
	return turn_due(d) && shift_between_windows(d) && !d->early_blocked &&
	       at_duty_turn_waits_look(d->shift_looks, d->turn_retry, d->swapped_at, now,
				       slot_ns(d));
}

/*
 * Whether the loader looks for a shift now: no window is on, and the next
 * one's slot begins within a slot. It opens a window early only once that
 * slot has begun: taking later slots' windows, redis-benchmark's warm-up
 * (runs of 2,000 SETs and GETs, 18 ms each) drew 7 of 11 windows and left
 * the measured run few. A due turn window gives its slot to a normal one
 * and takes the next (at_duty_swap_ok()); one due now waits while a look
 * may make it (turn_waits_look()).
 */
static bool shift_watch(const struct at_duty *d, uint64_t now)
{
	return shift_between_windows(d) && d->slot <= now + slot_ns(d) &&
	       (now < d->next_open || turn_waits_look(d, now));
}

_Static_assert(AT_READ_CLASSES <= 32, "a class mask keeps a bit per read class");

/*
 * The reads since the last look (*all), and those of classes the windows
 * hardly saw (*unseen; their classes in *mask, bit k for class k).
 */
static void shift_counts(const struct at_reads *cur, const struct at_reads *last,
			 const uint64_t *seen_from, uint32_t n, uint64_t *all, uint64_t *unseen,
			 uint32_t *mask)
{
	*all = *unseen = 0;
	*mask = 0;
	for (uint32_t k = 0; k < n; k++) {
		/* A counter behind its last look (an imputed count redone) adds nothing. */
		uint64_t d = cur[k].all > last[k].all ? cur[k].all - last[k].all : 0;
		uint64_t from = seen_from ? seen_from[k] : 0;
		uint64_t seen = cur[k].on > from ? cur[k].on - from : 0;

		*all += d;
		if (seen < AT_DUTY_MIN_STRATUM && k != AT_CLASS_EOF && k != AT_CLASS_FIRST &&
		    k != AT_CLASS_ACCEPT) {
			*unseen += d;
			if (d)
				*mask |= 1u << k;
		}
	}
}

/* Whether a look's counts (shift_counts()) are a shift: see at_duty_shifted(). */
static bool shift_in(uint64_t all, uint64_t unseen, double min_all)
{
	return unseen >= AT_DUTY_SHIFT_MIN_READS &&
	       (double)unseen >= AT_DUTY_SHIFT_SHARE * (double)all && (double)all >= min_all;
}

bool at_duty_shifted(const struct at_reads *cur, const struct at_reads *last,
		     const uint64_t *seen_from, uint32_t n, double min_all)
{
	uint64_t all, unseen;
	uint32_t mask;

	shift_counts(cur, last, seen_from, n, &all, &unseen, &mask);
	return shift_in(all, unseen, min_all);
}

bool at_duty_early_missed(const struct at_reads *at_open, const struct at_reads *cur, uint32_t mask)
{
	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		if ((mask >> k & 1) && cur[k].on >= at_open[k].on + AT_DUTY_MIN_STRATUM)
			return false;
	return mask != 0;
}

/*
 * Whether the reads shifted to new sizes over the last SHIFT_LOOKS looks.
 * Windows at random points of their slots can miss a phase shorter than a
 * slot: a redis-benchmark run of 100,000 GETs took 0.9 s here, the windows
 * saw 7 GETs, and the GET reads went by the SETs' calls (setCommand +89 %).
 * Opening the next window early keeps one window a slot. Not at the first
 * look: a phase begins with its clients connecting all at once, and a
 * window there would see that more often than the rest of the run. Not
 * in a lull either (half the latest interval's rate of reads): between
 * redis-benchmark's runs a few odd reads opened windows that saw nothing.
 */
static bool shift_due(struct at_duty *d, uint64_t now)
{
	struct at_reads cur[AT_READ_CLASSES];
	double lull = d->read_rate * (double)(now - d->shift_checked) / 2;
	uint64_t all, unseen;
	uint32_t mask;

	d->shift_checked = now;
	if (!read_ref(d, cur, AT_READ_CLASSES))
		return false;
	/* Looks run between windows only: an early one has closed. */
	if (d->early_check) {
		d->early_check = false;
		d->early_blocked = at_duty_early_missed(d->early_at, cur, d->early_mask);
		d->nearly_missed += d->early_blocked;
		if (d->early_blocked && at_env_flag("ADAPTRACE_DEBUG"))
			at_err("duty: the early window saw too few reads of the sizes it opened "
			       "for: the next opens at its random point");
	}
	shift_counts(cur, d->shift_last, d->seen_from, AT_READ_CLASSES, &all, &unseen, &mask);
	if (shift_in(all, unseen, lull)) {
		d->shift_looks++;
		d->shift_mask = mask;
	} else {
		d->shift_looks = 0;
	}
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err(
		    "duty: look: %" PRIu64 " reads (lull under %.0f), %" PRIu64
		    " of sizes the windows hardly saw, %u in a row; slot %+.0f ms, window %+.0f ms",
		    all, lull, unseen, d->shift_looks, ((double)d->slot - (double)now) / 1e6,
		    ((double)d->next_open - (double)now) / 1e6);
	memcpy(d->shift_last, cur, sizeof(cur));
	return d->shift_looks >= SHIFT_LOOKS;
}

/*
 * The reads, hang-ups (reads of end of file) and turns' ends the turn
 * windows counted so far (refcalls' turn fields, which nothing imputes).
 */
static bool turn_window_counts(struct at_duty *d, uint64_t *reads, uint64_t *eofs, uint64_t *ends)
{
	struct at_reads r[AT_TURNS + 1];

	if (!read_ref(d, r, AT_TURNS + 1))
		return false;
	*reads = 0;
	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		*reads += r[k].turn;
	*eofs = r[AT_CLASS_EOF].turn;
	*ends = r[AT_TURNS].turn;
	return true;
}

bool at_duty_turns_too_few(uint64_t reads, uint64_t ends, double expected)
{
	return !ends || (double)reads < TURN_READS_SHARE * expected;
}

/*
 * After a turn window that saw too few turns (at_duty_turns_too_few()),
 * the next window is a turn window again, once: a retry is not retried,
 * so the normal windows keep a slot in three at least.
 */
static void retry_turns(struct at_duty *d, uint64_t now)
{
	uint64_t reads, eofs, ends;
	double expect;
	bool few;

	if (!d->tw_base || !turn_window_counts(d, &reads, &eofs, &ends))
		return;
	reads -= d->tw_reads0;
	eofs -= d->tw_eofs0;
	ends -= d->tw_ends0;
	expect = d->read_rate * (double)(now - d->opened);
	few = at_duty_turns_too_few(reads, ends, expect);
	d->ntw++;
	d->ntw_few += few;
	if (few && !d->retry_open) {
		d->turn_next = true;
		d->turn_retry = true;
	}
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("duty: the turn window of %.2f ms counted %" PRIu64 " reads (%.0f at the "
		       "latest rate), %" PRIu64 " hang-ups and %" PRIu64 " turns' ends%s",
		       (double)(now - d->opened) / 1e6, reads, expect, eofs, ends,
		       !few	       ? ""
		       : d->turn_retry ? "; the next window is a turn window too"
				       : "; too few, after a retry");
}

/*
 * Stop counting the window's calls, then read the yardstick: both end here,
 * or at window_until, where the programs stopped if the loader woke late.
 */
static void end_window(struct at_duty *d, uint64_t now)
{
	struct span *s = &d->spans[d->nspans - 1];

	*d->o.window_on = false;
	if (now < s->b || d->turn_open)
		s->b = now;
	d->open = false;
	if (d->turn_open)
		retry_turns(d, now);
}

/* Release a closed window's links; false when no release slot is free. */
static bool release_window(struct at_duty *d, uint64_t now)
{
	struct at_links *w[1] = {&d->window};

	set_phase(d, AT_WPHASE_RELEASING);
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("duty: %s window released %.2f ms after it opened, %.2f after it closed, "
		       "%d threads in a turn's tail, %s",
		       d->turn_open ? "turn" : "normal", (double)(now - d->opened) / 1e6,
		       (double)(now - d->closed_at) / 1e6, *d->o.rp_tails,
		       *d->o.read_after_window ? "the target read since" : "no read since");
	if (!release(d, w, 1, true, now)) {
		set_phase(d, AT_WPHASE_LINGERING);
		return false;
	}
	d->lingering = false;
	return true;
}

/*
 * End the window. Its links stay in until the target reads outside it, at
 * most as long as linger_cap() allows: the turn a thread read in the window
 * counts to its end (turn_goes_on() in the programs; a turn cut short would
 * undercount the functions at its end), and calls after a read outside the
 * window do not count.
 */
static void close_window(struct at_duty *d, uint64_t now)
{
	end_window(d, now);
	if (d->o.linger_woken)
		*d->o.linger_woken = false;
	set_phase(d, AT_WPHASE_LINGERING);
	d->lingering = true;
	d->closed_at = now;
}

uint32_t at_duty_linger_lengths(uint32_t nread_intervals, uint32_t nturned_intervals, bool tail)
{
	uint32_t lengths =
	    2 * (uint64_t)nturned_intervals < nread_intervals ? SCARCE_LENGTHS : RUN_ON_LENGTHS;

	if (!nturned_intervals && nread_intervals >= UNSEEN_AFTER)
		lengths = UNSEEN_LENGTHS;

	return lengths + (tail ? TAIL_LENGTHS : 0);
}

static uint64_t linger_cap(const struct at_duty *d)
{
	return at_duty_linger_lengths(d->nread_intervals, d->nturned_intervals,
				      *d->o.rp_tails > 0) *
	       d->win_ns;
}

/* A window, open or lingering, ends now; false when its links cannot be released. */
static bool finish_window(struct at_duty *d, uint64_t now)
{
	if (d->open)
		close_window(d, now);
	return !d->lingering || release_window(d, now);
}

/* The yardsticks go out between windows when wanted and windows there are. */
static void set_yard(struct at_duty *d, uint64_t now)
{
	bool sampled = d->yard_sampled && d->ndemoted && !d->inputs_off;

	at_yard_set_sampled(d->yard, sampled, now);
	if (!d->yard_ever && at_yard_sampled(d->yard)) {
		/* The intervals' counts run from here. */
		at_yard_totals(d->yard, now, &d->yard_last[0], &d->yard_last[1]);
		d->yard_ever = true;
	}
}

int at_duty_demote(struct at_duty *d, const bool *demote, const bool *turnwise, const double *cost,
		   double frac, double period_s, struct at_links *entry, struct at_links *ret,
		   struct at_links *detail, uint64_t now, char *err, size_t errlen)
{
	struct at_links fresh = {0};
	bool *was = at_xcalloc(d->o.n + 1, sizeof(*was));
	uint32_t gen = (d->gen + 1) & AT_COOKIE_GEN_MASK, nprobes;
	int rc;

	/* The window's links carry the old generation: close it first. */
	if (!finish_window(d, now)) {
		snprintf(err, errlen, "too many links still being released");
		free(was);
		return -EBUSY;
	}
	memcpy(was, d->demoted, d->o.n * sizeof(*was));
	for (uint32_t id = 0; id < d->o.n; id++)
		if (demote[id])
			d->demoted[id] = true;
	rc = attach_set(d, false, false, gen, &fresh, &nprobes, err, errlen);
	if (rc) {
		memcpy(d->demoted, was, d->o.n * sizeof(*was));
		free(was);
		return rc;
	}
	/* From here the new links count and the old ones only finish their calls. */
	*d->o.gen = gen;
	d->gen = gen;
	now = at_now_ns();
	d->moved_at = now;
	/* Without the yardstick (no socket reads), report goes by time. */
	if (!d->ndemoted && !d->inputs_off && !read_ref(d, d->ref_last, AT_REFCALLS))
		d->inputs_off = true;
	{
		struct at_links *old[4] = {&d->exact, entry, ret, detail};

		release(d, old, 4, false, now);
	}
	d->exact = fresh;
	d->ndemoted = d->nturnwise = 0;
	for (uint32_t id = 0; id < d->o.n; id++) {
		if (d->demoted[id] && !was[id]) {
			d->since[id] = now;
			/* Turns are counted with the writes. */
			d->turnwise[id] = turnwise && turnwise[id] && d->outputs;
		}
		d->ndemoted += d->demoted[id];
		d->nturnwise += d->turnwise[id];
	}
	if (cost)
		memcpy(d->cost, cost, d->o.n * sizeof(*d->cost));
	order_by_cost(d);
	at_duty_set_windows(d, frac, period_s);
	{
		uint32_t nfuncs = 0, nsites = 0;

		for (uint32_t id = 0; id < d->o.n; id++) {
			d->at_calls[id] = d->demoted[id] && worth_calls(d, id);
			nfuncs += d->at_calls[id];
			nsites += d->at_calls[id] ? d->o.sites[id].calls->n : 0;
		}
		if (nfuncs && at_env_flag("ADAPTRACE_DEBUG"))
			at_err("duty: the windows count %u functions at %u call sites", nfuncs,
			       nsites);
	}
	d->slot = now;
	plan_open(d);
	/*
	 * A function moved now has only the windows from here: redis's getCommand,
	 * moved in a run of SETs after windows had seen GETs, saw none in the
	 * next run of GETs and came out 80 % low.
	 */
	if (!d->inputs_off && read_ref(d, d->shift_last, AT_READ_CLASSES)) {
		d->shift_checked = now;
		for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
			d->seen_from[k] = d->shift_last[k].on;
	}
	free(was);
	set_yard(d, now);
	return 0;
}

/*
 * Whether the open turn window, past its planned end, still waits for a
 * thread to wake in it: none has yet (turn_woke, at_duty_poll()), and it
 * is not TURN_WAIT_LENGTHS old. Its yardsticks count only the turns it
 * counts, so the wait adds turns, not time: the turns' estimate is calls
 * per end.
 */
static bool turn_window_waits(const struct at_duty *d, uint64_t now)
{
	return !d->turn_woke && now < d->opened + TURN_WAIT_LENGTHS * d->win_ns;
}

int at_duty_poll(struct at_duty *d, uint64_t now)
{
	char err[AT_ERRLEN];
	int wait;

	if (!d)
		return -1;
	wait = reap(d, now);
	if (!d->ndemoted)
		return wait;
	if (d->open) {
		/* A turn window may run to RUN_ON_LENGTHS times its length (below). */
		uint64_t due = d->opened + (d->turn_open ? RUN_ON_LENGTHS : 1) * d->win_ns;

		if (now > due + LATE_CLOSE_NS)
			note_late(d, now, now - due);
	}
	if (now >= d->normal_until)
		set_idle_class(d, true);
	/* Half a poll tick early rather than most of one late: windows cost. */
	if (d->open && now + CLOSE_SLACK_NS >= d->opened + d->win_ns) {
		/* Counts only close after window_until: one open now means one opened. */
		if (d->turn_open && *d->o.turn_gates > 0)
			d->turn_woke = true;
		if (!d->turn_open) {
			close_window(d, now);
		} else if (turn_window_waits(d, now)) {
			/* Counts may open till then (the BPF side's wakeups). */
			*d->o.window_until = d->opened + TURN_WAIT_LENGTHS * d->win_ns;
		} else {
			/*
			 * A turn window stops counting a thread at its wakeup, so no
			 * request is cut short: its links go once no thread is counted.
			 * From now on no count opens. A turn longer than twice the
			 * window is cut.
			 */
			if (*d->o.window_until > now)
				*d->o.window_until = now;
			if (*d->o.turn_gates <= 0 ||
			    now >= d->opened + RUN_ON_LENGTHS * d->win_ns) {
				if (at_env_flag("ADAPTRACE_DEBUG"))
					at_err("duty: turn window of %.2f ms ends, %d threads "
					       "counting",
					       (double)(now - d->opened) / 1e6, *d->o.turn_gates);
				close_window(d, now);
				release_window(d, now);
			}
		}
	}
	/* duty_inputs flags the target's first read while the window lingers. */
	if (d->lingering &&
	    (d->inputs_off || *d->o.read_after_window || now - d->closed_at >= linger_cap(d)))
		release_window(d, now);
	if (at_yard_sampled(d->yard)) {
		bool soon = !d->open && !d->lingering && !window_releasing(d) &&
			    now + YARD_MARGIN_NS >= d->next_open;

		at_yard_need(d->yard, d->open || d->lingering || soon, now);
	}
	/* Looks go on while a window's links are released: here that took up to 0.5 s. */
	if (shift_watch(d, now) && now >= d->shift_checked + SHIFT_CHECK_NS && shift_due(d, now) &&
	    d->slot <= now && !d->early_blocked &&
	    (!turn_due(d) || at_duty_swap_ok(d->turn_retry, d->swapped_at, now, slot_ns(d)))) {
		if (at_env_flag("ADAPTRACE_DEBUG"))
			at_err("duty: reads of sizes the windows have not seen: a window %.0f ms "
			       "early",
			       (double)(d->next_open - now) / 1e6);
		d->next_open = now;
		if (turn_due(d)) {
			/* A normal one: a turn window's reads leave a class unseen. */
			d->force_normal = true;
			/* A retry is a turn window more: it waits and the swaps stay. */
			if (!d->turn_retry)
				d->swapped_at = now;
		}
		d->nshifted++;
		d->shift_looks = 0;
		d->opening_early = true;
		d->early_mask = d->shift_mask;
	}
	if (!d->open && !d->lingering && now >= d->next_open && !window_releasing(d) &&
	    yard_ready(d, now) && !turn_waits_look(d, now)) {
		bool turn = turn_due(d) && !d->force_normal;
		uint64_t armed_from, cpu0 = at_thread_cpu_ns();

		d->slot += slot_ns(d);
		if (d->slot + slot_ns(d) <= now)
			d->slot = now;
		plan_open(d);
		/* After a swap the turn window is still due. */
		if (!d->force_normal)
			d->turn_next = !turn;
		d->force_normal = false;
		/* Turn windows count nothing between them: their counts hold till it opens. */
		d->tw_base =
		    turn && turn_window_counts(d, &d->tw_reads0, &d->tw_eofs0, &d->tw_ends0);
		d->retry_open = turn && d->turn_retry;
		if (turn)
			d->turn_retry = false;
		if (d->opening_early)
			d->early_check = read_ref(d, d->early_at, AT_READ_CLASSES);
		else if (!turn)
			d->early_blocked = false;
		d->opening_early = false;
		armed_from = at_now_ns();
		at_yard_window_arms(d->yard, armed_from);
		set_phase(d, AT_WPHASE_ARMING);
		if (attach_set(d, true, turn, d->gen, &d->window, &d->window_probes, err,
			       sizeof(err)) == 0) {
			/* Every probe is in: count from here, with the yardstick. */
			uint64_t mid = at_now_ns();

			d->narm++;
			d->arm_ns += mid - armed_from;
			d->window_arm_ns = mid - armed_from;
			d->arm_cpu_ns += at_thread_cpu_ns() - cpu0;
			d->arm_probes += d->window_probes;

			if (d->nspans == d->cap) {
				d->cap = d->cap ? 2 * d->cap : 16;
				d->spans = at_xrealloc(d->spans, d->cap, sizeof(*d->spans));
			}
			/* It ends at window_until at the latest (end_window()). */
			d->spans[d->nspans++] = (struct span){mid, mid + d->win_ns, turn};
			d->open = true;
			d->shift_looks = 0;
			d->turn_open = turn;
			d->turn_woke = false;
			d->opened = mid;
			*d->o.read_after_window = false;
			*d->o.window_until = mid + d->win_ns;
			*d->o.turn_gates = 0;
			/*
			 * Numbered first: a tail of the last window that ends
			 * after the reset below would take rp_tails below 0.
			 * 0 stands for no window in a thread's state.
			 */
			if (!++*d->o.window_seq)
				*d->o.window_seq = 1;
			*d->o.rp_tails = 0;
			*d->o.window_turns = turn;
			set_quiesce(d, false); /* reap() holds it off till the window is done */
			*d->o.window_on = true;
			set_phase(d, AT_WPHASE_OPEN);
			if (at_env_flag("ADAPTRACE_DEBUG"))
				at_err(
				    "duty: %s window opens %.0f ms into its slot, the next slot in "
				    "%.0f ms",
				    turn ? "turn" : "normal",
				    ((double)mid - (double)(d->slot - slot_ns(d))) / 1e6,
				    ((double)d->slot - (double)mid) / 1e6);
		} else {
			set_phase(d, AT_WPHASE_NONE);
			at_warn("coarse budget: cannot open a probing window: %s", err);
		}
	}
	{
		/* From the clock again: an attach above may have taken a while. */
		uint64_t t = at_now_ns();
		/* A turn window that waits for a look wakes for the look (below). */
		uint64_t next = d->open			? d->opened + d->win_ns
				: turn_waits_look(d, t) ? UINT64_MAX
							: d->next_open;
		int ms;

		if (shift_between_windows(d)) {
			/* The next look for a shift: once the next window's slot is a slot away. */
			uint64_t look = d->shift_checked + SHIFT_CHECK_NS;
			uint64_t from = d->slot > slot_ns(d) ? d->slot - slot_ns(d) : 0;

			look = look > from ? look : from;
			next = look < next ? look : next;
		}
		ms = next > t ? (int)((next - t + CLOSE_SLACK_NS) / 1000000) : 0;

		int yard = at_yard_poll(d->yard, now);

		if (d->lingering || (d->open && !ms))
			ms = 1;
		else if (!d->open && !ms && window_releasing(d))
			ms = wait; /* reap() polls the release */
		else if (!d->open && !ms && !yard_ready(d, t))
			ms = 1;
		if (yard >= 0 && (ms < 0 || yard < ms))
			ms = yard;
		return wait >= 0 && wait < ms ? wait : ms;
	}
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t e)
{
	uint64_t lo = a > c ? a : c, hi = b < e ? b : e;

	return hi > lo ? hi - lo : 0;
}

/*
 * Slot k's counts since the last interval: all, in the windows (on) and in
 * the turn windows (turn). Both kinds see disjoint parts.
 */
static void since_last(struct at_duty *d, const struct at_reads *now, uint32_t k, uint64_t *all,
		       uint64_t *on, uint64_t *turn)
{
	uint64_t tw = now[k].turn - d->ref_last[k].turn;

	*all = now[k].all - d->ref_last[k].all;
	*on = now[k].on - d->ref_last[k].on;
	if (*on > *all)
		*on = *all;
	*turn = tw > *all - *on ? *all - *on : tw;
	d->ref_last[k] = now[k];
}

static void cls_append(struct at_cls_calls **v, uint32_t *n, size_t *cap, struct at_cls_calls c)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = at_xrealloc(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = c;
}

static int caller_cmp(const void *a, const void *b)
{
	const struct at_caller_calls *x = a, *y = b;
	uint32_t cx = at_caller_rank(x->caller), cy = at_caller_rank(y->caller);

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

/*
 * Fold the sorted pairs v (n, a class each) into *sum, summed over the
 * classes, and *by_cls, those made after a read (n room in each).
 */
static void split_by_class(const struct at_caller_calls *v, uint32_t n, struct at_caller_calls *sum,
			   uint32_t *nsum, struct at_caller_calls *by_cls, uint32_t *nby_cls)
{
	for (uint32_t i = 0; i < n; i++) {
		struct at_caller_calls *last = *nsum ? &sum[*nsum - 1] : NULL;

		if (last && last->k == v[i].k && last->caller == v[i].caller)
			last->calls += v[i].calls;
		else
			sum[(*nsum)++] = (struct at_caller_calls){v[i].k, v[i].caller, v[i].calls};
		if (v[i].cls)
			by_cls[(*nby_cls)++] = v[i];
	}
}

/*
 * Take the window calls per innermost caller and read class out of
 * wcallers: each pair is looked up and deleted at once, so a call counted
 * meanwhile lands in the next interval. Pairs of functions no longer
 * demoted are dropped, and ids that are not ours, which the writer would
 * refuse.
 */
static void fill_callers(struct at_duty *d, struct at_window *win)
{
	size_t nkeys = 0, cap = 0;
	uint64_t *keys = NULL, key, next;
	struct at_caller_calls *v[2];
	uint32_t nv[2] = {0, 0};
	bool first = true;

	while (!bpf_map_get_next_key(d->o.wcallers_fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (nkeys == cap) {
			cap = cap ? 2 * cap : 256;
			keys = at_xrealloc(keys, cap, sizeof(*keys));
		}
		keys[nkeys++] = key;
		if (nkeys >= AT_CALLERS_MAX)
			break;
	}
	/* v[0] by time, v[1] on the read path. */
	for (int j = 0; j < 2; j++)
		v[j] = nkeys ? at_xcalloc(nkeys, sizeof(*v[j])) : NULL;
	for (size_t i = 0; i < nkeys; i++) {
		bool rp = keys[i] & AT_CALLER_RP;
		uint32_t k =
		    at_window_duty_index(win, (uint32_t)(keys[i] >> 32) & (AT_CALLER_IDS - 1));
		uint32_t cls = (uint32_t)(keys[i] >> AT_CALLER_CLS_SHIFT & AT_CALLER_CLS_MASK);
		uint32_t caller = (uint32_t)keys[i];
		uint64_t sum = 0;

		if (bpf_map_lookup_and_delete_elem(d->o.wcallers_fd, &keys[i], d->wpercpu))
			continue;
		for (int c = 0; c < d->ncpus; c++)
			sum += d->wpercpu[c];
		if (!sum || k >= win->nduty || (caller >= d->o.n && caller != AT_NO_CALLER) ||
		    cls > AT_READ_CLASSES)
			continue;
		v[rp][nv[rp]++] = (struct at_caller_calls){k, caller, sum, cls};
	}
	free(keys);
	for (int j = 0; j < 2; j++)
		if (nv[j])
			qsort(v[j], nv[j], sizeof(*v[j]), caller_cmp);
	win->callers = nv[0] ? at_xcalloc(nv[0], sizeof(*win->callers)) : NULL;
	win->cls_callers = nv[0] ? at_xcalloc(nv[0], sizeof(*win->cls_callers)) : NULL;
	win->rp_callers = nv[1] ? at_xcalloc(nv[1], sizeof(*win->rp_callers)) : NULL;
	win->rp_cls_callers = nv[1] ? at_xcalloc(nv[1], sizeof(*win->rp_cls_callers)) : NULL;
	split_by_class(v[0], nv[0], win->callers, &win->ncallers, win->cls_callers,
		       &win->ncls_callers);
	split_by_class(v[1], nv[1], win->rp_callers, &win->nrp_callers, win->rp_cls_callers,
		       &win->nrp_cls_callers);
	free(v[0]);
	free(v[1]);
	win->has_callers = win->has_cls_callers = true;
	win->has_rpath = win->has_turns;
}

void at_duty_fill(struct at_duty *d, uint64_t a, uint64_t b, struct at_window *win)
{
	struct at_reads now[AT_REFCALLS];
	size_t keep = 0, cap = 0, wcap = 0;

	if (!d || !d->ndemoted || b <= a)
		return;
	if (!d->inputs_off && read_ref(d, now, d->outputs ? AT_REFCALLS : AT_READ_CLASSES)) {
		d->loop_fresh = d->outputs; /* since_last() below keeps them in ref_last */
		for (uint32_t k = 0; k < AT_READ_CLASSES; k++) {
			since_last(d, now, k, &win->cls_all[k], &win->cls_on[k],
				   &win->tw_cls_on[k]);
			win->ref_all += win->cls_all[k];
			win->ref_on += win->cls_on[k];
		}
		if (d->outputs) {
			win->has_writes = true;
			since_last(d, now, AT_BY_TIME, &win->wr_all, &win->wr_on, &win->tw_wr_on);
			win->has_wr_cls = true;
			for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
				since_last(d, now, AT_WR_CLASS(k), &win->wr_cls_all[k],
					   &win->wr_cls_on[k], &win->tw_wr_cls_on[k]);
			win->has_turns = true;
			since_last(d, now, AT_TURNS, &win->turn_all, &win->turn_on,
				   &win->tw_turn_on);
			since_last(d, now, AT_WAKES, &win->wake_all, &win->wake_on,
				   &win->tw_wake_on);
			{
				uint64_t all, tw;

				since_last(d, now, AT_RP_TURNS, &all, &win->rp_turns, &tw);
				since_last(d, now, AT_RP_WRITES, &all, &win->rp_writes, &tw);
				/* The slots are read one by one: a write may fall between. */
				if (win->rp_writes > win->wr_all)
					win->rp_writes = win->wr_all;
				if (win->rp_turns > win->turn_all)
					win->rp_turns = win->turn_all;
				if (win->rp_turns > win->rp_writes)
					win->rp_turns = win->rp_writes;
			}
		}
		win->has_cls = true;
		if (d->yard_ever) {
			/* Of the interval's reads and writes, the rest were counted. */
			uint64_t t[2], all = win->ref_all + win->wr_all;

			at_yard_totals(d->yard, b, &t[0], &t[1]);
			win->has_yard = true;
			win->yard_imputed = t[0] > d->yard_last[0] ? t[0] - d->yard_last[0] : 0;
			win->yard_imputed = win->yard_imputed < all ? win->yard_imputed : all;
			win->yard_counted = all - win->yard_imputed;
			win->yard_in_ns = t[1] > d->yard_last[1] ? t[1] - d->yard_last[1] : 0;
			if (win->yard_in_ns > b - a)
				win->yard_in_ns = b - a;
			memcpy(d->yard_last, t, sizeof(t));
		}
		if (win->ref_all)
			d->read_rate = (double)win->ref_all / (double)(b - a);
		if (at_env_flag("ADAPTRACE_DEBUG"))
			at_err("duty: interval: %" PRIu64 " socket reads, %" PRIu64 " in windows",
			       win->ref_all, win->ref_on);
	}
	win->duty = at_xcalloc(d->ndemoted, sizeof(*win->duty));
	win->nduty = 0;
	if (win->has_turns && d->nturnwise) {
		win->turnwin = at_xcalloc(d->nturnwise, sizeof(*win->turnwin));
		win->tw_calls = at_xcalloc(d->nturnwise, sizeof(*win->tw_calls));
	}
	for (uint32_t id = 0; id < d->o.n; id++) {
		uint64_t on, from, v[AT_WCALL_SLOTS], by_time = 0;
		bool tw;

		if (!d->demoted[id])
			continue;
		/* Probed all along until it was demoted, then in windows only. */
		from = d->since[id] > a ? d->since[id] : a;
		if (from >= b)
			continue;
		on = from - a;
		for (size_t i = 0; i < d->nspans; i++)
			if (!d->spans[i].turn || d->turnwise[id])
				on += overlap(from, b, d->spans[i].a, d->spans[i].b);
		win->duty[win->nduty++] = (struct at_duty_on){id, on > b - a ? b - a : on};
		tw = win->turnwin && d->turnwise[id];
		if (tw)
			win->turnwin[win->nturnwin++] = win->nduty - 1;
		if (!win->has_cls || !read_wcalls(d, id, v))
			continue;
		for (uint32_t k = 0; k < AT_WCALL_SLOTS; k++) {
			uint64_t *last = &d->wlast[(size_t)id * AT_WCALL_SLOTS + k];
			uint64_t calls = v[k] > *last ? v[k] - *last : 0;

			*last = v[k];
			if (k == AT_BY_TIME)
				by_time = calls;
			/*
			 * At most its calls by time: a probe that counts both
			 * between the reads of the two slots puts its turn
			 * window call in this interval and its call by time in
			 * the next, and the file refuses more of the first
			 * (a recording of redis stopped at 7 s of some 13).
			 */
			if (k == AT_TW_TIME && tw)
				win->tw_calls[win->nturnwin - 1] =
				    calls < by_time ? calls : by_time;
			if (!calls || k == AT_TW_TIME)
				continue;
			if (k >= AT_REF_SLOTS)
				cls_append(
				    &win->wr_cls, &win->nwr_cls, &wcap,
				    (struct at_cls_calls){win->nduty - 1, k - AT_REF_SLOTS, calls});
			else
				cls_append(&win->cls, &win->ncls, &cap,
					   (struct at_cls_calls){win->nduty - 1, k, calls});
		}
	}
	if (win->has_cls && d->o.wcallers_fd >= 0)
		fill_callers(d, win);
	/*
	 * Only where the target turned (without writes no turn ends to wait
	 * for), and as the report sees it: a read path that lost its calls
	 * saw no end.
	 */
	if (win->ref_on > 0 && win->has_turns && win->turn_all > 0) {
		d->nread_intervals++;
		d->nturned_intervals += win->rp_turns > 0 && !at_window_rp_lost(win);
	}
	win->has_turnwin = win->nturnwin > 0;
	win->has_twcalls = win->has_turnwin;
	/* Spans that ended before b cannot overlap a later interval; the open one stays. */
	for (size_t i = 0; i < d->nspans; i++)
		if (d->spans[i].b > b || (d->open && i == d->nspans - 1))
			d->spans[keep++] = d->spans[i];
	d->nspans = keep;
}

void at_duty_take_links(struct at_duty *d, struct at_links *ret)
{
	if (!d)
		return;
	if (d->open)
		end_window(d, at_now_ns());
	d->lingering = false;
	at_links_append(ret, &d->exact);
	at_links_append(ret, &d->window);
}

void at_duty_join(struct at_duty *d)
{
	if (!d)
		return;
	/* The last detach must not wait for idle CPU time. */
	set_idle_class(d, false);
	pthread_mutex_lock(&d->class_lock);
	d->idle_releases = false;
	for (int i = 0; i < MAX_RELEASES; i++) {
		struct release *r = &d->rel[i];

		if (r->running && r->idle && !atomic_load(&r->done))
			sched_setscheduler(r->tid, r->policy, &r->param);
	}
	pthread_mutex_unlock(&d->class_lock);
	for (int i = 0; i < MAX_RELEASES; i++)
		if (d->rel[i].running) {
			pthread_join(d->rel[i].th, NULL);
			d->rel[i].running = false;
		}
	set_quiesce(d, false);
}

void at_duty_free(struct at_duty *d)
{
	uint64_t outside = 0;

	if (!d)
		return;
	at_duty_join(d);
	for (int ph = 0; d->o.hits_phase && ph < AT_WINDOW_PHASES; ph++)
		outside += d->o.hits_phase[ph];
	if (at_env_flag("ADAPTRACE_DEBUG") && d->nrel)
		at_err("duty: %" PRIu64 " window releases, %" PRIu64
		       " in the idle class, %.1f ms on average; probes quiesced %.0f ms; "
		       "window entries: %" PRIu64 " counted, %" PRIu64 " outside windows",
		       d->nrel, d->nrel_idle, (double)d->rel_ns / 1e6 / (double)d->nrel,
		       (double)d->quiesce_ns / 1e6, d->o.hits_counted ? *d->o.hits_counted : 0,
		       outside);
	if (at_env_flag("ADAPTRACE_DEBUG") && d->narm)
		at_err("duty: %u of %" PRIu64 " windows opened early for reads of a new size, "
		       "%u of them saw too few",
		       d->nshifted, d->narm, d->nearly_missed);
	if (at_env_flag("ADAPTRACE_DEBUG") && d->ntw)
		at_err("duty: %u of %u turn windows saw too few turns", d->ntw_few, d->ntw);
	if (at_env_flag("ADAPTRACE_DEBUG") && d->o.uncalled)
		at_err("duty: window calls in no callers pair: %" PRIu64 " quiesced, %" PRIu64
		       " without frames storage, %" PRIu64 " too deep, %" PRIu64
		       " with the map full",
		       d->o.uncalled[AT_UNCALLED_QUIESCED], d->o.uncalled[AT_UNCALLED_NO_STACK],
		       d->o.uncalled[AT_UNCALLED_DEEP], d->o.uncalled[AT_UNCALLED_FULL]);
	if (at_env_flag("ADAPTRACE_DEBUG") && d->nrel && d->o.hits_phase)
		at_err(
		    "duty: %" PRIu64 " window attaches, %.1f ms on average; entries outside "
		    "windows: %" PRIu64 " arming, %" PRIu64 " open, %" PRIu64 " lingering, %" PRIu64
		    " releasing; releases stay normal for %.2f ms on average (%u costliest); "
		    "CPU per window: attach %.2f ms, release %.2f ms, %.1f us a probe",
		    d->narm, d->narm ? (double)d->arm_ns / 1e6 / (double)d->narm : 0.0,
		    d->o.hits_phase[AT_WPHASE_ARMING], d->o.hits_phase[AT_WPHASE_OPEN],
		    d->o.hits_phase[AT_WPHASE_LINGERING], d->o.hits_phase[AT_WPHASE_RELEASING],
		    d->nwinrel ? (double)d->normal_ns_sum / 1e6 / (double)d->nwinrel : 0.0, d->nhot,
		    d->narm ? (double)d->arm_cpu_ns / 1e6 / (double)d->narm : 0.0,
		    (double)d->rel_cpu_ns / 1e6 / (double)d->nrel, at_duty_probe_cpu_ns(d) / 1e3);
	at_links_destroy(&d->exact);
	at_links_destroy(&d->window);
	free(d->demoted);
	free(d->turnwise);
	free(d->cost);
	free(d->at_calls);
	free(d->order);
	free(d->since);
	at_yard_free(d->yard);
	ring_buffer__free(d->wake);
	free(d->spans);
	free(d->wpercpu);
	free(d->wlast);
	free(d->bkeys);
	free(d->bvals);
	pthread_mutex_destroy(&d->class_lock);
	free(d);
}
