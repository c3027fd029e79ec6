/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libuser: calls libattest.so's functions a known number of times.
 * With --then-exec it then execs PROG ARGS in the same process.
 * Usage: libuser [--wait-signal] [--then-exec PROG [ARGS...]]
 */
#include <unistd.h>

#include "common.h"

#define ADD_CALLS 77
#define MUL_CALLS 33

long attest_add(long a, long b);
long attest_mul(long a, long b);
extern unsigned long attest_add_calls, attest_mul_calls;

volatile long libuser_sink;

int main(int argc, char **argv)
{
	if (has_arg(argc, argv, "--wait-signal"))
		gate_wait();
	for (long i = 0; i < ADD_CALLS; i++)
		libuser_sink += attest_add(i, 1);
	for (long i = 0; i < MUL_CALLS; i++)
		libuser_sink += attest_mul(i, 3);
	printf("attest_add=%lu\n", attest_add_calls);
	printf("attest_mul=%lu\n", attest_mul_calls);
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--then-exec"))
			continue;
		fflush(stdout);
		execv(argv[i + 1], argv + i + 1);
		perror("libuser: execv");
		return 1;
	}
	return 0;
}
