/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * strargs: string and integer arguments with known values, for --args.
 *   greet("alice", 7), greet("bob", -3), greet(<300 x 'x'>, 42)
 *   pair("0123456789abcdefXYZ", "", 4000000000u)
 *   burst N: tick(i) for i in 0..N-1, as fast as possible (ring-buffer loss)
 *   deep N: nest(N) recursing to nest(0), N + 1 calls in flight at once
 * Usage: strargs [burst N | deep N]
 */
#include "common.h"

static volatile long sink;

TRACED int greet(const char *name, int n)
{
	sink += (long)strlen(name) + n;
	return n * 2;
}

TRACED unsigned pair(const char *a, const char *b, unsigned u)
{
	sink += (long)strlen(a) + (long)strlen(b);
	return u / 2;
}

TRACED long tick(long i)
{
	OPAQUE();
	return i;
}

TRACED long nest(long d)
{
	OPAQUE();
	return d > 0 ? nest(d - 1) + 1 : 0;
}

int main(int argc, char **argv)
{
	static char longname[301];

	if (argc > 2 && !strcmp(argv[1], "deep")) {
		long n = atol(argv[2]);

		printf("depth=%ld\n", nest(n));
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "burst")) {
		long n = atol(argv[2]);

		for (long i = 0; i < n; i++)
			sink += tick(i);
		printf("ticks=%ld\n", n);
		return 0;
	}
	memset(longname, 'x', 300);
	/*
	 * Touch the literals first: a uprobe cannot fault in a page, so a
	 * string on a page the program never touched reads as unreadable.
	 */
	{
		const char *volatile a = "alice", *volatile b = "0123456789abcdefXYZ";

		sink += (long)strlen(a) + (long)strlen(b);
	}
	greet("alice", 7);
	greet("bob", -3);
	greet(longname, 42);
	pair("0123456789abcdefXYZ", "", 4000000000u);
	printf("done=1\n");
	return 0;
}
