/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * reqmix: a server and its client over a socket pair, like redis under
 * redis-benchmark. The client thread sends runs of 2000 SETs (45-byte
 * messages) then 2000 GETs (36 bytes) for SECONDS (default 6); the main
 * thread reads each and serves it. A SET calls set_key() 4 times, a GET
 * calls get_key() once. Prints "sets=N" and "gets=M", the exact numbers of
 * requests served. Traced with --budget, the per-request functions cost
 * more than the budget allows: the test target for estimates by socket
 * reads and their size classes. With "stale", the main thread serves the
 * first 70 % of the run in serve_first(), across the budget's move to new
 * links, which takes its return probe away, and the rest through an
 * untraced serve(): serve_first()'s frame, left above the handlers' stack
 * pointer, must not pass for their caller. Five last serve_first() calls
 * at the end, at the same stack pointer, 50 ms apart, return at once: a
 * call entered while a window's release has the probes quiesced is counted
 * but not timed, and one such call failed the check of its return.
 * With "rw", both ends use read() and write() instead of recv() and
 * send(): /proc/PID/io counts only the first, and the budget's sampled
 * yardsticks stand on it.
 * Usage: reqmix [SECONDS [stale|rw]]
 */
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

#define SET_LEN 45
#define GET_LEN 36
#define RUN	2000

static int fds[2];
static double secs = 6;
static int rw;
static unsigned long n_set, n_get, n_keys;

TRACED void set_key(void)
{
	n_keys++;
	OPAQUE();
}

TRACED void get_key(void)
{
	n_keys++;
	OPAQUE();
}

TRACED void handle_set(void)
{
	n_set++;
	for (int i = 0; i < 4; i++)
		set_key();
}

TRACED void handle_get(void)
{
	n_get++;
	get_key();
}

/* Serve one request; 0 at the end of the stream. */
static int serve_one(void)
{
	char buf[64];
	ssize_t n = rw ? read(fds[0], buf, sizeof(buf)) : recv(fds[0], buf, sizeof(buf), 0);

	if (n <= 0)
		return 0;
	if (n == SET_LEN)
		handle_set();
	else
		handle_get();
	return 1;
}

TRACED int serve_first(uint64_t until)
{
	while (now_ns() < until)
		if (!serve_one())
			return 0;
	return 1;
}

static __attribute__((noinline)) void serve(void)
{
	while (serve_one())
		;
	OPAQUE();
}

static void *client(void *arg)
{
	char msg[SET_LEN] = {0};
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	(void)arg;
	for (int run = 0; now_ns() < end; run++)
		for (int i = 0; i < RUN; i++)
			if ((rw ? write(fds[1], msg, run % 2 ? GET_LEN : SET_LEN)
				: send(fds[1], msg, run % 2 ? GET_LEN : SET_LEN, 0)) < 0)
				return NULL;
	shutdown(fds[1], SHUT_WR);
	return NULL;
}

int main(int argc, char **argv)
{
	int stale = argc > 2 && !strcmp(argv[2], "stale");
	pthread_t th;

	if (argc > 1)
		secs = atof(argv[1]);
	rw = argc > 2 && !strcmp(argv[2], "rw");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds) < 0)
		return 1;
	pthread_create(&th, NULL, client, NULL);
	if (!stale || serve_first(now_ns() + (uint64_t)(secs * 0.7e9)))
		serve();
	for (int i = 0; stale && i < 5; i++) {
		serve_first(0);
		sleep_ns(50000000);
	}
	pthread_join(th, NULL);
	printf("sets=%lu\ngets=%lu\n", n_set, n_get);
	return 0;
}
