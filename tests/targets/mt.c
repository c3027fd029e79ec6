/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mt: four threads and the main thread call functions a known number of
 * times, and the program measures some durations itself, so that a test can
 * compare adaptrace's report with the truth. Usage: mt [--wait-signal]
 *
 * Prints "name=count" for each function (what the program itself counted)
 * and "name:stat=value" for its own measurements.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "common.h"

#define NTHREADS    4
#define A_CALLS	    1000 /* work_a per thread */
#define B_EVERY	    4	 /* work_b on every 4th work_a: 250 per thread */
#define NAP1_CALLS  10	 /* nap_1ms per thread */
#define NAP10_CALLS 2	 /* nap_10ms per thread */
#define FAIL_CALLS  75	 /* maybe_fail per thread, every 3rd fails */
#define REC_DEPTH   50	 /* rec levels per outermost call */
#define REC_OUTER   2	 /* outermost rec calls (main thread) */
#define LJ_CALLS    20	 /* lj_outer calls (main thread) */
#define MS	    1000000ULL

enum {
	F_WORK_A,
	F_WORK_B,
	F_NAP1,
	F_NAP10,
	F_FAIL,
	F_FAIL_ERR,
	F_CONC,
	F_REC,
	F_LEAF,
	F_LJ_OUTER,
	F_LJ_MID,
	F_LJ_INNER,
	F_LJ_AFTER,
	F_NR
};
static const char *const names[F_NR] = {
    "work_a", "work_b", "nap_1ms",  "nap_10ms", "maybe_fail", "maybe_fail:errors", "conc_wait",
    "rec",    "leaf",	"lj_outer", "lj_mid",	"lj_inner",   "lj_after",
};
/*
 * Per-thread counts, summed at the end: an atomic add as the first
 * instruction of a function would carry a lock prefix, which uprobes refuse.
 */
static __thread unsigned long counts[F_NR];
static unsigned long totals[F_NR];
static volatile unsigned long sink;
static pthread_barrier_t start_barrier, inside_barrier;
static jmp_buf lj_env;

static inline __attribute__((always_inline)) void count(int f)
{
	counts[f]++;
}

static void add_counts(void)
{
	for (int f = 0; f < F_NR; f++)
		__atomic_fetch_add(&totals[f], counts[f], __ATOMIC_RELAXED);
}

TRACED void work_a(void)
{
	count(F_WORK_A);
	sink += 1;
	OPAQUE();
}

TRACED void work_b(void)
{
	count(F_WORK_B);
	sink ^= 0x55;
	OPAQUE();
}

TRACED void nap_1ms(void)
{
	count(F_NAP1);
	sleep_ns(1 * MS);
}

TRACED void nap_10ms(void)
{
	count(F_NAP10);
	sleep_ns(10 * MS);
}

/* Fails (returns -1) on every third call: i = 2, 5, 8, ... */
TRACED long maybe_fail(int i)
{
	count(F_FAIL);
	OPAQUE();
	if (i % 3 == 2) {
		count(F_FAIL_ERR);
		return -1;
	}
	return 0;
}

/* All threads are inside this function at once: max_concurrency is NTHREADS. */
TRACED void conc_wait(void)
{
	count(F_CONC);
	pthread_barrier_wait(&inside_barrier);
	sleep_ns(20 * MS);
}

/*
 * What the main thread measures of its own calls, to compare with the
 * tracer: sleeps stretch on a busy machine, so the truth is measured, not
 * assumed from the nominal 1 ms.
 */
static uint64_t leaf_ns[REC_OUTER * REC_DEPTH], lj_after_ns[LJ_CALLS];
static unsigned n_leaf, n_lj_after;
static uint64_t rec_self_sleep_ns, rec_levels_ns;

static inline __attribute__((always_inline)) uint64_t timed_sleep(uint64_t ns)
{
	uint64_t t = now_ns();

	sleep_ns(ns);
	return now_ns() - t;
}

TRACED void leaf(void)
{
	uint64_t d;

	count(F_LEAF);
	d = timed_sleep(1 * MS);
	if (n_leaf < REC_OUTER * REC_DEPTH)
		leaf_ns[n_leaf++] = d;
}

/* Each level calls leaf() (1 ms) and sleeps 1 ms itself: half self, half leaf. */
TRACED void rec(int n)
{
	uint64_t t = now_ns();

	count(F_REC);
	leaf();
	rec_self_sleep_ns += timed_sleep(1 * MS);
	if (n > 1)
		rec(n - 1);
	rec_levels_ns += now_ns() - t; /* also keeps this from being a tail call */
}

/* Leaves lj_inner and lj_mid without returning from them. */
TRACED void lj_inner(void)
{
	count(F_LJ_INNER);
	OPAQUE();
	longjmp(lj_env, 1);
}

TRACED void lj_mid(void)
{
	count(F_LJ_MID);
	lj_inner();
	sink++;
}

TRACED void lj_after(void)
{
	uint64_t d;

	count(F_LJ_AFTER);
	d = timed_sleep(1 * MS);
	if (n_lj_after < LJ_CALLS)
		lj_after_ns[n_lj_after++] = d;
}

TRACED void lj_outer(void)
{
	count(F_LJ_OUTER);
	if (setjmp(lj_env) == 0)
		lj_mid();
	lj_after();
}

struct thread_res {
	uint64_t nap1[NAP1_CALLS];
	uint64_t nap10[NAP10_CALLS];
};

static void *thread_main(void *arg)
{
	struct thread_res *r = arg;
	uint64_t t;

	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < A_CALLS; i++) {
		work_a();
		if (i % B_EVERY == 0)
			work_b();
	}
	for (int i = 0; i < FAIL_CALLS; i++)
		maybe_fail(i);
	for (int i = 0; i < NAP1_CALLS; i++) {
		t = now_ns();
		nap_1ms();
		r->nap1[i] = now_ns() - t;
	}
	for (int i = 0; i < NAP10_CALLS; i++) {
		t = now_ns();
		nap_10ms();
		r->nap10[i] = now_ns() - t;
	}
	pthread_barrier_wait(&start_barrier);
	conc_wait();
	add_counts();
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Lower median, as a histogram quantile would pick an observed value. */
static unsigned long long median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2];
}

static unsigned long long mean(const uint64_t *v, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / n;
}

int main(int argc, char **argv)
{
	static struct thread_res res[NTHREADS];
	uint64_t nap1[NTHREADS * NAP1_CALLS], nap10[NTHREADS * NAP10_CALLS];
	uint64_t t, d, rec_ns = 0, rec_max_ns = 0, lj_ns = 0;
	pthread_t tid[NTHREADS];

	if (has_arg(argc, argv, "--wait-signal"))
		gate_wait();

	pthread_barrier_init(&start_barrier, NULL, NTHREADS);
	pthread_barrier_init(&inside_barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&tid[i], NULL, thread_main, &res[i]);

	/* Longjmp first: a tracer that keeps abandoned frames breaks rec() next. */
	for (int i = 0; i < LJ_CALLS; i++) {
		t = now_ns();
		lj_outer();
		lj_ns += now_ns() - t;
	}
	for (int i = 0; i < REC_OUTER; i++) {
		t = now_ns();
		rec(REC_DEPTH);
		d = now_ns() - t;
		rec_ns += d;
		if (d > rec_max_ns)
			rec_max_ns = d;
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(tid[i], NULL);
	add_counts();

	for (int i = 0; i < NTHREADS; i++) {
		memcpy(&nap1[i * NAP1_CALLS], res[i].nap1, sizeof(res[i].nap1));
		memcpy(&nap10[i * NAP10_CALLS], res[i].nap10, sizeof(res[i].nap10));
	}
	for (int f = 0; f < F_NR; f++)
		printf("%s=%lu\n", names[f], totals[f]);
	printf("nap_1ms:mean_ns=%llu\n", mean(nap1, NTHREADS * NAP1_CALLS));
	printf("nap_1ms:p50_ns=%llu\n", median(nap1, NTHREADS * NAP1_CALLS));
	printf("nap_10ms:mean_ns=%llu\n", mean(nap10, NTHREADS * NAP10_CALLS));
	printf("nap_10ms:p50_ns=%llu\n", median(nap10, NTHREADS * NAP10_CALLS));
	printf("rec:outer_total_ns=%llu\n", (unsigned long long)rec_ns);
	printf("rec:outer_max_ns=%llu\n", (unsigned long long)rec_max_ns);
	printf("rec:self_sleep_ns=%llu\n", (unsigned long long)rec_self_sleep_ns);
	printf("rec:levels_ns=%llu\n", (unsigned long long)rec_levels_ns);
	printf("leaf:total_ns=%llu\n", mean(leaf_ns, n_leaf) * n_leaf);
	printf("leaf:p50_ns=%llu\n", median(leaf_ns, n_leaf));
	printf("lj_after:p50_ns=%llu\n", median(lj_after_ns, n_lj_after));
	printf("lj_outer:total_ns=%llu\n", (unsigned long long)lj_ns);
	return 0;
}
