/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hundreds: 200 traced functions. process(id) takes 5 ms when id % 97 == 0
 * and a few microseconds otherwise; u_000 ... u_198 all take the same few
 * microseconds. main calls them in a loop for SECONDS (default 4), then
 * prints "process=N" and "slow=M" (calls with id % 97 == 0).
 * Usage: hundreds [SECONDS]
 */
#include "common.h"

static volatile unsigned long sink;

/* A few hundred ns of work, the same everywhere. */
static inline void spin(void)
{
	for (int i = 0; i < 200; i++) {
		sink += (unsigned long)i;
		OPAQUE();
	}
}

TRACED long process(long id)
{
	if (id % 97 == 0)
		sleep_ns(5000000);
	else
		spin();
	return id * 2;
}

#define U(n)                                                                                       \
	TRACED int u_##n(int x)                                                                    \
	{                                                                                          \
		__asm__ volatile("nop"); /* an emulated entry: cheap to probe */                  \
		spin();                                                                            \
		return x + 1;                                                                      \
	}
#define U10(n) U(n##0) U(n##1) U(n##2) U(n##3) U(n##4) U(n##5) U(n##6) U(n##7) U(n##8) U(n##9)
U10(00) U10(01) U10(02) U10(03) U10(04) U10(05) U10(06) U10(07) U10(08) U10(09)
U10(10) U10(11) U10(12) U10(13) U10(14) U10(15) U10(16) U10(17) U10(18)
U(190) U(191) U(192) U(193) U(194) U(195) U(196) U(197) U(198)

#define C(n) sink += (unsigned long)u_##n((int)i);
#define C10(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 4;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	long i, slow = 0;

	for (i = 0; now_ns() < end; i++) {
		sink += (unsigned long)process(i);
		slow += i % 97 == 0;
		/*
		 * Every uniform function once per 4 calls of process: process
		 * then has about 10 % of the time (its slow calls), and each
		 * uniform one hundreds of calls per second, so that one call
		 * preempted by another load cannot make its p99.
		 */
		if (i % 4 == 0) {
			C10(00) C10(01) C10(02) C10(03) C10(04) C10(05) C10(06) C10(07) C10(08)
			C10(09) C10(10) C10(11) C10(12) C10(13) C10(14) C10(15) C10(16) C10(17)
			C10(18) C(190) C(191) C(192) C(193) C(194) C(195) C(196) C(197) C(198)
		}
	}
	printf("process=%ld\nslow=%ld\n", i, slow);
	return 0;
}
