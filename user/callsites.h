/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call sites: where a binary calls or jumps to a function directly. A
 * function whose entry the kernel must single-step (~20 times an emulated
 * instruction here) can be counted at its call sites instead, each a call
 * or jmp that the kernel emulates, when they are all its calls: no pointer
 * to it is taken, in code or data, and no PLT or GOT entry refers to it.
 * Such a probe has no return, so only leaves qualify, whose frames no
 * callee needs as its caller.
 */
#ifndef AT_CALLSITES_H
#define AT_CALLSITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function counted at more call sites than this keeps its entry probe. */
#define AT_CALLSITES_MAX 32

struct at_callsites {
	uint64_t *offs; /* file offsets of the calls and jumps to it */
	bool *tail;	/* offs[i] jumps (a tail call): the return address is the caller's */
	uint32_t n;	/* 0: not countable at call sites */
};

/*
 * For the n functions at virtual addresses addr[] (sizes size[]) of the
 * ELF file path, find the call sites of each that qualifies (out[i].n > 0);
 * the others get n = 0. Returns 0, or -1 with err filled (no function
 * qualifies then). at_callsites_free() frees out's arrays.
 */
int at_callsites_find(const char *path, const uint64_t *addr, const uint64_t *size, size_t n,
		      struct at_callsites *out, char *err, size_t errlen);
void at_callsites_free(struct at_callsites *cs, size_t n);

#endif
