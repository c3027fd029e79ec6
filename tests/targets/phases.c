/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * phases: step(i) is busy for 200 us for the first SWITCH seconds, then
 * for 2 ms, until END seconds; it prints "switched=1" when it changes.
 * Usage: phases [SWITCH [END]]   (defaults 8 and 14)
 */
#include "common.h"

static uint64_t step_ns = 200000;

/* Busy for step_ns: a sleep's wake-up latency would vary with the machine's load. */
TRACED long step(long i)
{
	uint64_t end = now_ns() + step_ns;

	while (now_ns() < end)
		OPAQUE();
	return i;
}

int main(int argc, char **argv)
{
	double sw = argc > 1 ? atof(argv[1]) : 8, end = argc > 2 ? atof(argv[2]) : 14;
	uint64_t t0 = now_ns();
	int switched = 0;

	for (long i = 0; now_ns() - t0 < (uint64_t)(end * 1e9); i++) {
		if (!switched && now_ns() - t0 >= (uint64_t)(sw * 1e9)) {
			step_ns = 2000000;
			switched = 1;
			printf("switched=1\n");
			fflush(stdout);
		}
		step(i);
	}
	return 0;
}
