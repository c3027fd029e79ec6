/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe placement: where in a function's entry sequence to put its uprobe.
 *
 * The kernel emulates a few instructions (push, call, jmp, jcc, nop) and
 * single-steps every other one out of line, which costs ~20x more here
 * (design.md). Functions built with -fcf-protection start with endbr64,
 * which is single-stepped, usually followed by an emulated push %rbp. The
 * site may move forward onto the first emulated instruction when all of
 * these hold, so that counts, latencies and captured arguments stay the
 * same as with the probe on the first instruction:
 *  - no instruction before it moves the stack pointer (the return probe
 *    reads the return address at the stack pointer when the entry fires),
 *    or transfers control;
 *  - for the detail phase's site only (it reads the arguments there), no
 *    instruction before it writes an argument register. The coarse site
 *    may move past such writes, so a function can have two sites;
 *  - no direct branch or call in the function lands after its start and at
 *    or before the site (that would count a call that did not happen); the
 *    whole function is decoded to check this. One landing on the start is
 *    a call like any other: it runs the prefix and reaches the site.
 */
#ifndef AT_PLACEMENT_H
#define AT_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Why the site is where it is (shown by list). */
enum at_site_why {
	AT_SITE_NOT_PLACED = 0, /* placement was not run (--no-site-opt) */
	AT_SITE_FIRST_CHEAP,	/* the first instruction is already emulated */
	AT_SITE_MOVED,		/* moved onto the first emulated instruction */
	AT_SITE_SP_MOVES,	/* the stack pointer moves first */
	AT_SITE_ARG_WRITTEN,	/* an argument register is written first */
	AT_SITE_CONTROL,	/* control leaves the entry sequence first */
	AT_SITE_NO_CHEAP,	/* no emulated instruction in the entry sequence */
	AT_SITE_BRANCH_IN,	/* a branch targets the site or before it */
	AT_SITE_UNDECODABLE,	/* the function could not be decoded */
	AT_SITE_FIRST_REFUSED,	/* the kernel refuses the first instruction */
};

struct at_site {
	uint32_t off;		 /* bytes from the function's start */
	enum at_entry_kind kind; /* of the instruction at the site */
	enum at_site_why why;
	uint32_t at; /* offset of the instruction that decided (SP, arg, branch) */
};

/*
 * Choose the site in code[0..size), the bytes of one x86-64 function; with
 * args, one where the argument registers still hold the arguments. Never
 * fails: when in doubt the site is the first instruction.
 */
void at_place_site(const uint8_t *code, size_t size, bool args, struct at_site *out);

struct at_elf;

/*
 * Place the probe sites of the functions idx[0..n) of e, reading their code
 * from e->path: sets offset and entry (the coarse site), args_offset and
 * args_entry (the detail site), site_why and site_at. Non-x86-64 files
 * and unreadable code keep the first instruction. Returns 0, or -1 when
 * the file cannot be read (sites unchanged).
 */
int at_elf_place(struct at_elf *e, const size_t *idx, size_t n);

/* Short text for list ("moved", "sp moves", "branch in"...). */
const char *at_site_why_str(enum at_site_why why);
/* Whether site_at names the deciding instruction for this reason. */
bool at_site_why_has_at(enum at_site_why why);

#endif
