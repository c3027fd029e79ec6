/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * phases: step(i) is busy for 150-250 us for the first SWITCH seconds,
 * then for 1.5-2.5 ms, until END seconds; it prints "switched=1" when it
 * changes.
 * Usage: phases [SWITCH [END]]   (defaults 8 and 14)
 *        phases --on-signal [AFTER]   switch at SIGUSR1, end AFTER (6) s later
 */
#include "common.h"

static uint64_t step_ns = 200000;

/*
 * Busy for step_ns +- 25 %, uniformly spread (a sleep's wake-up latency
 * would vary with the machine's load, and a fixed time would make a
 * distribution so narrow that a shift of a few hundred ns looks like a
 * change of profile).
 */
TRACED long step(long i)
{
	static uint64_t lcg = 12345;
	uint64_t end;

	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	end = now_ns() + step_ns * 3 / 4 + (lcg >> 33) % (step_ns / 2);

	while (now_ns() < end)
		OPAQUE();
	return i;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

int main(int argc, char **argv)
{
	int on_signal = argc > 1 && !strcmp(argv[1], "--on-signal");
	double sw = argc > 1 && !on_signal ? atof(argv[1]) : 8;
	double end = argc > 2 ? atof(argv[2]) : on_signal ? 6 : 14;
	uint64_t t0 = now_ns(), t_end = t0 + (uint64_t)(end * 1e9);
	int switched = 0;

	/* --on-signal: switch at SIGUSR1, end END seconds later (or at 120 s). */
	if (on_signal) {
		signal(SIGUSR1, on_usr1);
		t_end = t0 + 120000000000ULL;
	}
	for (long i = 0; now_ns() < t_end; i++) {
		if (!switched && (on_signal ? got_usr1 : now_ns() - t0 >= (uint64_t)(sw * 1e9))) {
			step_ns = 2000000;
			switched = 1;
			if (on_signal)
				t_end = now_ns() + (uint64_t)(end * 1e9);
			printf("switched=1\n");
			fflush(stdout);
		}
		step(i);
	}
	return 0;
}
