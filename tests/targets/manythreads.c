/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * manythreads: THREADS threads alive at once, more than the coarse
 * programs' 1024 thread slots, so by pigeonhole some keep their frames in
 * task storage. Each calls tw_outer() (which calls tw_inner() INNER times)
 * before and after all have started. Then EXITERS threads, one after
 * another, leave the process from inside tw_exit_inside(): their frames
 * never return, and the exit frees them (max_concurrency stays 1).
 * "manythreads exec": a thread other than the leader execs this binary
 * ("manythreads child") from inside tw_exec_inside(); it takes the leader's
 * thread id in exec, and the frames of both old ids are abandoned.
 */
#include <unistd.h>

#include "common.h"

#define THREADS 1100
#define INNER	3
#define EXITERS 3

static pthread_barrier_t all_started;
static volatile unsigned long sink;

TRACED void tw_inner(unsigned long n)
{
	sink += n;
	OPAQUE();
}

TRACED void tw_outer(unsigned long n)
{
	for (int i = 0; i < INNER; i++)
		tw_inner(n + (unsigned long)i);
	OPAQUE();
}

TRACED void tw_exit_inside(void)
{
	sink++;
	pthread_exit(NULL);
}

TRACED void tw_exec_inside(char *self)
{
	char *argv[] = {self, "child", NULL};

	fflush(stdout);
	execv("/proc/self/exe", argv);
	exit(1);
}

static void *execer(void *arg)
{
	tw_exec_inside(arg);
	return NULL;
}

static void *worker(void *arg)
{
	unsigned long n = (unsigned long)(uintptr_t)arg;

	tw_outer(n);
	pthread_barrier_wait(&all_started);
	tw_outer(n);
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	tw_exit_inside();
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t th[THREADS];
	pthread_attr_t attr;
	int started = 0;

	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		pthread_t t;

		printf("tw_exec_inside=1\n");
		if (pthread_create(&t, NULL, execer, argv[0]))
			return 1;
		pthread_join(t, NULL);
		return 1; /* not reached: the exec ends this image */
	}
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		tw_outer(0);
		printf("tw_outer=1\ntw_inner=%d\n", INNER);
		return 0;
	}

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&all_started, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		if (pthread_create(&th[i], &attr, worker, (void *)(uintptr_t)i)) {
			fprintf(stderr,
				"manythreads: cannot create thread %d: raise pids.max or "
				"RLIMIT_NPROC\n",
				i);
			return 1;
		}
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < EXITERS; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, exiter, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	printf("tw_outer=%d\n", 2 * THREADS);
	printf("tw_inner=%d\n", 2 * THREADS * INNER);
	printf("tw_exit_inside=%d\n", EXITERS);
	return 0;
}
