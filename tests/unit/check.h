/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The unit tests' TAP-like output: "ok - NAME" / "not ok - NAME". */
#ifndef AT_TEST_CHECK_H
#define AT_TEST_CHECK_H

#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

static void check(bool ok, const char *name)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", name);
	if (ok)
		passed++;
	else
		failed++;
}

#endif
