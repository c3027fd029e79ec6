/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --args SPEC: how to decode a function's arguments in detail events.
 *
 *   spec  := NAME '(' [ type (',' type)* [',' '...'] | '...' ] ')' [':' rtype]
 *   type  := str[:N] | int | i64 | long | i32 | i16 | i8 | uint | u64 | ulong
 *          | u32 | u16 | u8 | ptr | char | bool
 *   rtype := type | void        (str not allowed: the return is decoded as a number)
 *
 * NAME is a function name or a glob (fnmatch) over names. At most
 * AT_MAX_ARGS (6) arguments, the x86-64 argument registers. '...' captures
 * the remaining registers raw (as if undeclared). str reads a NUL-terminated
 * string at the register's address, at most N bytes (1..AT_ARGSPEC_STR_MAX,
 * default AT_ARGSPEC_STR_DEFAULT); a longer string is marked truncated.
 * Blanks around tokens are allowed. Errors are one line with the column:
 * "column 9: unknown type 'strng' (str, int, uint, ptr, char, bool, i8..i64, u8..u64)".
 */
#ifndef AT_ARGSPEC_H
#define AT_ARGSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define AT_ARGSPEC_STR_DEFAULT 64
#define AT_ARGSPEC_STR_MAX     256

/* One declared argument (or return value). */
struct at_argtype {
	uint32_t type;	 /* enum at_arg_type: RAW, INT, UINT, PTR, STR */
	uint32_t size;	 /* bytes of the register that count: 1, 2, 4, 8 (STR/PTR/RAW: 8) */
	uint32_t strmax; /* STR: bytes to read, terminator included */
	bool is_char;	 /* INT of size 1 printed as a character */
	bool is_bool;	 /* UINT of size 1 printed as true/false */
};

struct at_argspec {
	char *name;	/* function name or glob */
	uint32_t nargs; /* declared arguments, 0..AT_MAX_ARGS */
	struct at_argtype arg[AT_MAX_ARGS];
	bool rest_raw; /* '...': registers nargs..5 captured raw */
	bool has_ret;  /* ':' rtype given (void: has_ret and ret.type RAW, ret_void) */
	bool ret_void;
	struct at_argtype ret;
};

/* Parse one --args value. 0, or -1 with a one-line err (column counted from 1). */
int at_argspec_parse(const char *text, struct at_argspec *out, char *err, size_t errlen);
void at_argspec_free(struct at_argspec *a);
/* The first spec whose name (glob) matches fn, or NULL. */
const struct at_argspec *at_argspec_find(const struct at_argspec *specs, size_t n, const char *fn);
/* How many registers to capture (declared + raw rest, at most 6; 6 if a == NULL). */
uint32_t at_argspec_nregs(const struct at_argspec *a);
/* Type of register i (AT_ARG_RAW beyond the declared ones). */
struct at_argtype at_argspec_type(const struct at_argspec *a, uint32_t i);
/* A register's value as the declared type: truncated to size, sign-extended for INT. */
uint64_t at_argtype_value(const struct at_argtype *t, uint64_t reg);
/* Print the spec back in canonical form ("parse(str:64,int,ptr,...):int"). */
char *at_argspec_format(const struct at_argspec *a, char *buf, size_t len);

/* The syntax in a few lines for --help (each line indented two blanks). */
const char *at_argspec_help(void);

#endif
