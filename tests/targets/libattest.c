/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libattest.so: a shared library whose functions libuser calls. */
#include "common.h"

unsigned long attest_add_calls, attest_mul_calls;

TRACED long attest_add(long a, long b)
{
	attest_add_calls++;
	OPAQUE();
	return a + b;
}

TRACED long attest_mul(long a, long b)
{
	attest_mul_calls++;
	OPAQUE();
	return a * b;
}
