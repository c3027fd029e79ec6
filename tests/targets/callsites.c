/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * callsites: leaves whose entry the kernel single-steps (a load, then ret),
 * for the call-site scan (unit/test_callsites). Built with -O2.
 * leaf_direct() is called from three places and reached by one tail call;
 * a pointer to leaf_taken() is stored, so some of its calls cannot be
 * seen; not_leaf() calls another function. Prints the sum of the calls.
 * Usage: callsites [N]
 */
#include "common.h"

volatile int counter = 1;

TRACED int leaf_direct(void)
{
	return counter;
}

TRACED int leaf_taken(void)
{
	return counter + 1;
}

TRACED int leaf_other(void)
{
	return counter + 2;
}

TRACED int not_leaf(void)
{
	return leaf_other() * 3;
}

int (*volatile pointer)(void) = leaf_taken;

TRACED int first(void)
{
	return leaf_direct() + 1;
}

TRACED int second(void)
{
	return leaf_direct() * 2 + leaf_taken();
}

/* A sibling call at -O2: jmp leaf_direct. */
TRACED int tail(void)
{
	return leaf_direct();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1, sum = 0;

	for (long i = 0; i < n; i++)
		sum += first() + second() + tail() + leaf_direct() + not_leaf() + pointer();
	printf("sum=%ld\n", sum);
	return 0;
}
