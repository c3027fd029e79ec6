/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Function symbols of an ELF file, ready to probe. */
#ifndef AT_SYMBOLS_H
#define AT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct at_elf_func {
	char *name;
	uint64_t addr; /* st_value */
	uint64_t size;
	uint64_t offset;	  /* file offset of the probe site (uprobe offset) */
	enum at_entry_kind entry; /* of the instruction at the site */
	uint64_t start;		  /* file offset of the first instruction */
	uint64_t args_offset;	  /* the detail phase's site: arguments still in place */
	enum at_entry_kind args_entry;
	uint32_t site_why; /* enum at_site_why; 0 until at_elf_place() */
	uint32_t site_at;  /* offset of the instruction that decided */
	bool global;
};

struct at_elf {
	char *path;
	char build_id[65];	   /* hex, "" if none */
	bool pie;		   /* ET_DYN */
	bool from_dynsym;	   /* no .symtab: exported functions only */
	struct at_elf_func *funcs; /* sorted by address, aliases merged */
	size_t nfuncs;
};

/*
 * Load the function symbols of path: .symtab, or .dynsym when stripped.
 * Skips undefined, size-0, non-function and PLT symbols; merges aliases
 * (one address, one entry, preferring global, then the shortest name).
 * Returns 0, or -1 with a one-line reason in err.
 */
int at_elf_load(const char *path, struct at_elf *out, char *err, size_t errlen);
void at_elf_free(struct at_elf *e);

/* True for start-up and runtime noise that the default selection leaves out. */
bool at_is_startup_noise(const char *name);

/* Classify the instruction at code[0..len) as the kernel would treat it. */
enum at_entry_kind at_classify_entry(const uint8_t *code, size_t len);
const char *at_entry_kind_str(enum at_entry_kind k);

#endif
