/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hostile: strings meant to break every output format, as a traced
 * program could pass them. visit(s, i) is called SCALE * (i + 1) times for
 * string i, and fires the USDT probe hostile:visit(str s, int i) each time,
 * so a keyed -u gives one row per string, named after it.
 * Usage: hostile [SCALE]   (default 1; prints "strings=N calls=M")
 */
#include <sys/sdt.h>

#include "common.h"

static const char *const hostile[] = {
    "plain",
    "quote\"back\\slash'apos",
    "new\nline\rcr\ttab",
    "\x1b[2J\x1b]0;pwned\x07"
    "esc",
    "bad\xff\xfeutf8",
    "overlong\xc0\xaf",
    "surrogate\xed\xa0\x80",
    "=cmd|' /C calc'!A0",
    "</failure><x a='1'>&amp;]]>",
    "|a|b|`c`*d*[e](f)<script>x</script>",
    "sep\xe2\x80\xa8"
    "bidi\xe2\x80\xae"
    "c1\xc2\x9b"
    "del\x7f",
    "+SUM(1,2),\"x\"",
    "# HELP fake\n} 1",
};

#define NSTR (int)(sizeof(hostile) / sizeof(hostile[0]))

static volatile long sink;

TRACED int visit(const char *s, int i)
{
	DTRACE_PROBE2(hostile, visit, s, i);
	sink += (long)strlen(s);
	return i;
}

int main(int argc, char **argv)
{
	long scale = argc > 1 ? atol(argv[1]) : 1, calls = 0;

	/* A uprobe cannot fault a page in: touch every string first. */
	for (int i = 0; i < NSTR; i++)
		sink += (long)strlen(hostile[i]);
	for (int i = 0; i < NSTR; i++)
		for (long k = 0; k < scale * (i + 1); k++, calls++)
			visit(hostile[i], i);
	printf("strings=%d calls=%ld\n", NSTR, calls);
	return 0;
}
