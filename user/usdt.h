/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes (SystemTap SDT v3 notes, ".note.stapsdt"), read with libelf,
 * and the -u probe specifications that select and key them.
 *
 * Each note describes one probe location: pc, the link-time address of
 * .stapsdt.base (to detect prelinking), the semaphore's address (0 if none),
 * then "provider\0name\0args\0". The args string holds one spec per
 * argument, separated by spaces: SIZE@OPERAND, SIZE negative for signed
 * (-4@%eax, 8@16(%rbp), -8@$5, 8@sym+8(%rip), 4@-4(%rbp,%rax,4)).
 */
#ifndef AT_USDT_H
#define AT_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AT_USDT_MAX_ARGS 12 /* the SDT headers allow 12 */

enum at_usdt_op {
	AT_USDT_OP_REG = 1, /* %reg */
	AT_USDT_OP_IMM = 2, /* $imm */
	AT_USDT_OP_MEM = 3, /* disp(%base[,%index[,scale]]) or sym[+-off](%rip) */
};

struct at_usdt_arg {
	int size;	/* bytes: 1, 2, 4 or 8 */
	bool is_signed; /* a negative SIZE */
	enum at_usdt_op op;
	char base[8];  /* register, without '%': "rbp"; "" for IMM */
	char index[8]; /* MEM index register, or "" */
	int scale;     /* MEM with index: 1, 2, 4 or 8 */
	int64_t disp;  /* MEM displacement or IMM value */
	bool symbolic; /* MEM: the displacement was a symbol (sym(%rip)) */
};

/* One probe location. */
struct at_usdt_probe {
	char *provider;
	char *name;
	char *args_text;      /* as in the note */
	uint64_t pc;	      /* link-time address, prelink-adjusted */
	uint64_t offset;      /* file offset of pc (the uprobe offset) */
	uint64_t sema;	      /* semaphore's link-time address, or 0 */
	uint64_t sema_offset; /* its file offset, or 0 */
	uint32_t nargs;
	struct at_usdt_arg args[AT_USDT_MAX_ARGS];
	bool args_ok; /* args_text parsed */
};

/* The probes of one ELF file, sorted by provider, name, then pc. */
struct at_usdt_set {
	struct at_usdt_probe *p;
	size_t n;
	bool has_notes;	       /* the file has a .note.stapsdt section (maybe empty) */
	uint64_t entry_offset; /* file offset of e_entry (runs once per process), or 0 */
};

/*
 * Read the USDT notes of an ELF file (path, or an image in memory). Returns
 * 0 (n may be 0 when the file has no notes), or -1 with a one-line reason
 * in err when the file is unreadable or not ELF. Malformed notes are
 * skipped; malformed argument strings leave args_ok false.
 */
int at_usdt_load(const char *path, struct at_usdt_set *out, char *err, size_t errlen);
int at_usdt_load_mem(const void *data, size_t len, struct at_usdt_set *out, char *err,
		     size_t errlen);
void at_usdt_free(struct at_usdt_set *s);

/* Parse an argument string; returns false with err set on bad syntax. */
bool at_usdt_parse_args(const char *s, struct at_usdt_arg *args, uint32_t *n, char *err,
			size_t errlen);
/*
 * libbpf 1.1 decodes register, constant and offset(%reg) operands; it will
 * not attach a probe with an index-register or symbol operand.
 */
bool at_usdt_arg_decodable(const struct at_usdt_arg *a);
/* "s32", "u64"... for an argument. */
const char *at_usdt_arg_type(const struct at_usdt_arg *a);

/* Types a keyed probe's key argument may be read as. */
enum at_usdt_key_type {
	AT_USDT_KEY_INT = 1,  /* signed integer */
	AT_USDT_KEY_UINT = 2, /* unsigned integer */
	AT_USDT_KEY_PTR = 3,  /* pointer, shown in hex */
	AT_USDT_KEY_STR = 4,  /* NUL-terminated string, read bounded */
};

#define AT_USDT_MAX_KEYS 4

/*
 * One -u argument:
 *   PROVIDER:NAME                        count the probe(s); globs allowed
 *   PROVIDER:NAME(argN:TYPE,...)         count per key (argument values)
 *   PROVIDER:ENTRY+RETURN[(argN:TYPE,...)]
 *                                        pair entry and return probes: per-key
 *                                        calls and latency, like a function
 * N counts from 1 (arg1 is the first argument, as in SystemTap's $arg1);
 * TYPE is str, int, uint or ptr. Keyed and paired specs take no globs.
 */
struct at_usdt_spec {
	char *provider;
	char *name;
	char *ret_name; /* paired: the return probe's name, else NULL */
	uint32_t nkeys;
	uint8_t key_arg[AT_USDT_MAX_KEYS];  /* 0-based argument index */
	uint8_t key_type[AT_USDT_MAX_KEYS]; /* enum at_usdt_key_type */
	bool keyed;			    /* keys given, or paired */
};

bool at_usdt_spec_parse(const char *s, struct at_usdt_spec *out, char *err, size_t errlen);
void at_usdt_spec_free(struct at_usdt_spec *s);
const char *at_usdt_key_type_str(uint32_t t);

#endif
