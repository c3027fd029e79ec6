// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the ELF symbol reader and probe placement: crafted
 * section and segment offsets, string indexes, sizes and code must give an
 * error or a sane result.
 * The input goes through a memfd because at_elf_load takes a path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "placement.h"
#include "symbols.h"

static int memfd = -1;
static char path[64];

/* The sanitizers catch memory errors; these catch broken contracts. */
static void check(int rc, const struct at_elf *e, const char *err, size_t size)
{
	size_t i;

	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && (e->funcs || e->nfuncs || e->path || !err[0] || strchr(err, '\n')))
		abort();
	if (rc == -1)
		return;
	if (!e->path || strlen(e->build_id) > 64 || strlen(e->build_id) % 2)
		abort();
	for (i = 0; i < e->nfuncs; i++) {
		const struct at_elf_func *f = &e->funcs[i];

		if (!f->name || !f->name[0] || !f->size || f->offset >= size)
			abort();
		if (i && f->addr <= e->funcs[i - 1].addr)
			abort();
		if (f->entry > AT_ENTRY_REFUSED)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	struct at_elf e;
	int rc;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_elf", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if (at_classify_entry(data, size < 16 ? size : 16) > AT_ENTRY_REFUSED)
		abort();
	/* Placement decodes whole functions: the crafted bytes themselves... */
	{
		struct at_site site;

		at_place_site(data, size, size & 1, &site);
		if (site.off >= (size ? size : 1) && site.off)
			abort();
	}
	rc = at_elf_load(path, &e, err, sizeof(err));
	check(rc, &e, err, size);
	if (rc == 0) {
		/* ...and every function of a crafted ELF, as list and record do. */
		size_t *idx = calloc(e.nfuncs ? e.nfuncs : 1, sizeof(*idx));

		for (size_t i = 0; i < e.nfuncs; i++)
			idx[i] = i;
		at_elf_place(&e, idx, e.nfuncs);
		for (size_t i = 0; i < e.nfuncs; i++) {
			const struct at_elf_func *f = &e.funcs[i];

			if (f->offset < f->start || f->offset - f->start >= f->size ||
			    f->args_offset < f->start || f->args_offset > f->offset ||
			    f->entry > AT_ENTRY_REFUSED)
				abort();
		}
		free(idx);
	}
	at_elf_free(&e);
	return 0;
}
