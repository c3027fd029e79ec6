// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small request-processing workload to try adaptrace on: a hot cheap
 * parser, a lookup that is slow now and then, a compressor, and a
 * validator that fails on some inputs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

NOINLINE int parse_header(const char *req, size_t len)
{
	int sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += req[i];
	return sum;
}

NOINLINE int validate(int id)
{
	/* Every 10th request is rejected. */
	return id % 10 == 7 ? -22 : 0;
}

NOINLINE long lookup(int id)
{
	/* A cache miss every 50 requests costs 2 ms. */
	if (id % 50 == 0) {
		struct timespec ts = {0, 2000000};

		nanosleep(&ts, NULL);
	}
	return (long)id * 31;
}

NOINLINE size_t compress_body(char *buf, size_t len)
{
	spin_ns(20000);
	return len / 2 + (size_t)buf[0];
}

NOINLINE int handle_request(int id)
{
	char req[256];
	int rc;

	snprintf(req, sizeof(req), "GET /item/%d HTTP/1.1\r\nHost: demo\r\n\r\n", id);
	parse_header(req, strlen(req));
	rc = validate(id);
	if (rc < 0)
		return rc;
	lookup(id);
	return (int)compress_body(req, sizeof(req));
}

static void *worker(void *arg)
{
	int base = (int)(long)arg;

	for (int i = 0; i < 2000; i++)
		handle_request(base + i);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i * 100000));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts("demo: 4000 requests handled");
	return 0;
}
