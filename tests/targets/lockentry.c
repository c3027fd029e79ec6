/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lockentry: locked_inc() starts with a lock-prefixed instruction, which the
 * kernel refuses to put a uprobe on; plain_inc() is an ordinary function.
 * Usage: lockentry [--wait-signal]
 */
#include "common.h"

#define CALLS 50

static unsigned long n_locked, n_plain;

TRACED void locked_inc(void)
{
	__atomic_fetch_add(&n_locked, 1, __ATOMIC_RELAXED);
}

TRACED void plain_inc(void)
{
	n_plain++;
	OPAQUE();
}

int main(int argc, char **argv)
{
	if (has_arg(argc, argv, "--wait-signal"))
		gate_wait();
	for (int i = 0; i < CALLS; i++) {
		locked_inc();
		plain_inc();
	}
	printf("locked_inc=%lu\n", n_locked);
	printf("plain_inc=%lu\n", n_plain);
	return 0;
}
