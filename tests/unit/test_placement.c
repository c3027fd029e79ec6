// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probe placement on hand-assembled x86-64 functions. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "placement.h"

#define ENDBR	    0xf3, 0x0f, 0x1e, 0xfa
#define PUSH_RBP    0x55
#define MOV_RBP_RSP 0x48, 0x89, 0xe5
#define POP_RBP	    0x5d
#define RET	    0xc3

struct tcase {
	const char *name;
	uint8_t code[64];
	size_t len;
	uint32_t off;
	enum at_entry_kind kind;
	enum at_site_why why;
	uint32_t at;
};

static const struct tcase cases[] = {
    {"endbr64; push %rbp moves onto the push",
     {ENDBR, PUSH_RBP, MOV_RBP_RSP, POP_RBP, RET},
     10,
     4,
     AT_ENTRY_EMULATED,
     AT_SITE_MOVED,
     0},
    {"push %rbp first stays",
     {PUSH_RBP, MOV_RBP_RSP, POP_RBP, RET},
     6,
     0,
     AT_ENTRY_EMULATED,
     AT_SITE_FIRST_CHEAP,
     0},
    {"endbr64; sub $0x18,%rsp: the stack pointer moves first",
     {ENDBR, 0x48, 0x83, 0xec, 0x18, 0x48, 0x83, 0xc4, 0x18, RET},
     13,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_SP_MOVES,
     4},
    {"endbr64; mov $1,%esi; push: an argument register is written first",
     {ENDBR, 0xbe, 0x01, 0x00, 0x00, 0x00, PUSH_RBP, POP_RBP, RET},
     12,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_ARG_WRITTEN,
     4},
    {"endbr64; mov %rdi,%rbx; push: a non-argument write is fine",
     {ENDBR, 0x48, 0x89, 0xfb, PUSH_RBP, POP_RBP, RET},
     10,
     7,
     AT_ENTRY_EMULATED,
     AT_SITE_MOVED,
     0},
    {"endbr64; xor %eax,%eax; ret: control leaves first",
     {ENDBR, 0x31, 0xc0, RET},
     7,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_CONTROL,
     6},
    {"a loop back onto the push forbids the move",
     /* endbr64; push; pop; jmp -3 (to +4) */
     {ENDBR, PUSH_RBP, POP_RBP, 0xeb, 0xfc, RET},
     9,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_BRANCH_IN,
     6},
    {"a recursive call to the start is allowed",
     /* endbr64; push; call 0 (rel32 = -10); pop; ret */
     {ENDBR, PUSH_RBP, 0xe8, 0xf6, 0xff, 0xff, 0xff, POP_RBP, RET},
     12,
     4,
     AT_ENTRY_EMULATED,
     AT_SITE_MOVED,
     0},
    {"undecodable bytes after the site keep the first instruction",
     {ENDBR, PUSH_RBP, 0x0f, 0x0b, 0xff, 0xff, 0xff},
     11,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_UNDECODABLE,
     7},
    {"lea then nopl: moved onto the nop",
     /* lea 0x8(%rax),%rax; nopl (%rax); ret */
     {0x48, 0x8d, 0x40, 0x08, 0x0f, 0x1f, 0x00, RET},
     8,
     4,
     AT_ENTRY_EMULATED,
     AT_SITE_MOVED,
     0},
    {"a lock-prefixed first instruction stays refused",
     {0xf0, 0x48, 0x0f, 0xb1, 0x17, RET},
     6,
     0,
     AT_ENTRY_REFUSED,
     AT_SITE_FIRST_REFUSED,
     0},
    {"a truncated function keeps the first instruction",
     {ENDBR},
     3,
     0,
     AT_ENTRY_SSTEP,
     AT_SITE_NO_CHEAP,
     0},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *t = &cases[i];
		struct at_site s;
		char name[160];

		at_place_site(t->code, t->len, true, &s);
		snprintf(name, sizeof(name), "%s (site +%u %s, why %s at +%u)", t->name, s.off,
			 s.kind == AT_ENTRY_EMULATED ? "emulated" : "not emulated",
			 at_site_why_str(s.why), s.at);
		check(s.off == t->off && s.kind == t->kind && s.why == t->why &&
			  (!at_site_why_has_at(s.why) || s.at == t->at),
		      name);
	}
	/* The coarse site may move past an argument write; the detail one not. */
	{
		const uint8_t code[] = {ENDBR, 0xbe,	 0x01,	  0x00, 0x00,
					0x00,  PUSH_RBP, POP_RBP, RET};
		struct at_site s;

		at_place_site(code, sizeof(code), false, &s);
		check(s.off == 9 && s.why == AT_SITE_MOVED,
		      "coarse site moves past mov $1,%esi onto the push");
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
