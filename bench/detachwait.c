// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// detach_wait.sh's target: after WAIT seconds, loop() runs for SECONDS,
// calling hot() without pause and other() every 2,000 calls.
// Usage: detachwait WAIT SECONDS
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void hot(unsigned long i)
{
	sink += i;
}

__attribute__((noinline)) void other(void)
{
	sink++;
}

__attribute__((noinline)) void loop(long seconds)
{
	time_t end = time(NULL) + seconds;

	while (time(NULL) < end) {
		for (unsigned long i = 0; i < 2000; i++)
			hot(i);
		other();
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	sleep((unsigned)atoi(argv[1]));
	loop(atol(argv[2]));
	return 0;
}
