/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fifty: 50 functions of fixed CPU work, for the diff tests. Built several
 * times under the same file name (tests/targets.mk): -DSLOW_FN=N makes
 * function N do 20 % more work, -DTWICE_FN=N calls function N twice as
 * often. Trace it with -f 'f??'. Usage: fifty [ROUNDS] (default 100); every function is called once
 * per round, so every recording interval sees all of them.
 */
#include "common.h"

#ifndef SLOW_FN
#define SLOW_FN -1
#endif
#ifndef TWICE_FN
#define TWICE_FN -1
#endif
#define WORK 40000UL

volatile unsigned long fifty_sink;

/*
 * A call, so that every fNN keeps its frame and starts with a push (a cheap,
 * emulated probe site). Tests trace with -f 'f??', so spin is not traced.
 */
__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = 0;

	/* The asm keeps the compiler from folding the loop into a constant. */
	for (unsigned long i = 0; i < n; i++) {
		x += i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#define F(i)                                                                                       \
	TRACED unsigned long f##i(void)                                                            \
	{                                                                                          \
		unsigned long w = WORK + (unsigned long)(1##i - 100) * 400UL;                      \
		return spin((1##i - 100) == SLOW_FN ? w * 12 / 10 : w);                            \
	}
#define ALL(X)                                                                                     \
	X(00) X(01) X(02) X(03) X(04) X(05) X(06) X(07) X(08) X(09) X(10) X(11) X(12) X(13) X(14) \
	X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) \
	X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) \
	X(45) X(46) X(47) X(48) X(49)

ALL(F)

#define REF(i) f##i,
static unsigned long (*const funcs[50])(void) = {ALL(REF)};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < 50; i++) {
			fifty_sink += funcs[i]();
			if (i == TWICE_FN)
				fifty_sink += funcs[i]();
		}
	printf("rounds=%d\n", rounds);
	return 0;
}
