/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tailcall: outer() ends in a tail call (a jmp) to inner(), so both traced
 * frames share one return-address slot and their returns fire together,
 * inner's first. Built with -O2 (sibling-call optimization on).
 */
#include "common.h"

#define CALLS 200

static volatile unsigned long sink;

TRACED unsigned long inner(unsigned long n)
{
	for (unsigned long i = 0; i < 1000; i++)
		sink += i ^ n;
	return sink;
}

TRACED unsigned long outer(unsigned long n)
{
	sink += n;
	return inner(n + 1);
}

int main(void)
{
	unsigned long r = 0;

	for (unsigned long i = 0; i < CALLS; i++)
		r += outer(i);
	printf("outer=%d\n", CALLS);
	printf("inner=%d\n", CALLS);
	return r == 1; /* keeps r live */
}
