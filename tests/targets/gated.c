/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gated: idles until SIGUSR1, then two threads call tick() in a loop until
 * SIGUSR2 (or SIGTERM); prints "tick=N" (the exact number of calls) and
 * idles until SIGTERM, then exits 0, or until SIGHUP, then execs
 * "/bin/sleep 60" (another program, for the exec-while-traced test). Says "ready" on stderr once the signals are blocked.
 */
#include "common.h"

#define NTHREADS 2

static unsigned long n_tick;
static __thread unsigned long my_ticks;
static int stop;

/* Counts per thread: an atomic add first would be a lock-prefixed entry. */
TRACED void tick(void)
{
	my_ticks++;
	OPAQUE();
}

static void *spin(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		tick();
	__atomic_fetch_add(&n_tick, my_ticks, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	static const int sigs[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGHUP};
	pthread_t tid[NTHREADS];
	sigset_t set;

	block_signals(&set, sigs, 4);
	fprintf(stderr, "ready\n");
	fflush(stderr);

	if (wait_signal(&set) == SIGTERM)
		return 0;
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&tid[i], NULL, spin, NULL);
	while (wait_signal(&set) == SIGUSR1)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(tid[i], NULL);
	printf("tick=%lu\n", n_tick);
	fflush(stdout);

	for (;;) {
		int sig = wait_signal(&set);

		if (sig == SIGTERM)
			return 0;
		if (sig == SIGHUP) {
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			return 1;
		}
	}
}
