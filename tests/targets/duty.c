/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * duty: one thread calls hot() flat out, another calls cold() every 50 ms,
 * for SECONDS (default 8); then prints "hot=N" and "cold=M", the exact
 * numbers of calls. Traced with --budget, hot()'s probes cost several times
 * its work and cold()'s almost nothing: the duty-cycle test target.
 * Usage: duty [SECONDS]
 */
#include "common.h"

static int stop;
static unsigned long n_hot, n_cold;

/*
 * Some work per call (1-4 µs): the budget measures the probes against
 * the target's own work, and a hot() that did nothing would leave no work
 * to spend the budget on, not even cold()'s few probe hits. 8,000 rounds
 * took 16 µs on stop 68's host, where a hit cost 0.78 µs: under 5 %.
 */
TRACED void hot(void)
{
	volatile unsigned x = 0;

	for (int i = 0; i < 2000; i++)
		x += (unsigned)i;
	n_hot++;
	OPAQUE();
}

/*
 * 20 calls a second: a leaf, so its probe is single-stepped, 20-43 us a
 * call here on slow days. At 100 a second it came near the quarter of the
 * budget that the planner leaves to always-on probes, and once went to
 * windows.
 */
TRACED void cold(void)
{
	n_cold++;
	OPAQUE();
}

static void *spin(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		hot();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 8;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	pthread_t th;

	pthread_create(&th, NULL, spin, NULL);
	while (now_ns() < end) {
		cold();
		sleep_ns(50000000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("hot=%lu\ncold=%lu\n", n_hot, n_cold);
	return 0;
}
