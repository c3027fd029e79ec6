/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared by the test targets: traced-function attribute, gates, clocks. */
#ifndef AT_TARGET_COMMON_H
#define AT_TARGET_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A function the tests trace: never inlined, cloned or folded into another. */
#define TRACED __attribute__((noinline, noclone))
/* Keeps the compiler from proving a call has no effect. */
#define OPAQUE() __asm__ volatile("" ::: "memory")

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ULL),
			      .tv_nsec = (long)(ns % 1000000000ULL)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Block the given signals in this thread (and threads created later), so
 * that sigwait() can take them. Call before announcing readiness.
 */
static inline void block_signals(sigset_t *set, const int *sigs, int n)
{
	sigemptyset(set);
	for (int i = 0; i < n; i++)
		sigaddset(set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* Wait for one signal of set; returns its number. */
static inline int wait_signal(const sigset_t *set)
{
	int sig = 0;

	while (sigwait(set, &sig) != 0)
		;
	return sig;
}

/*
 * The start gate of --wait-signal: block SIGUSR1, say "ready" on stderr,
 * and wait for SIGUSR1, so that a tracer can attach to a known-idle process.
 */
static inline void gate_wait(void)
{
	static const int sigs[] = {SIGUSR1};
	sigset_t set;

	block_signals(&set, sigs, 1);
	fprintf(stderr, "ready\n");
	fflush(stderr);
	wait_signal(&set);
}

static inline int has_arg(int argc, char **argv, const char *arg)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], arg) == 0)
			return 1;
	return 0;
}

#endif
