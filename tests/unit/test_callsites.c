// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The call-site scan on the callsites test target (built next to this test). */
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsites.h"
#include "check.h"
#include "symbols.h"

static const struct at_elf_func *func(const struct at_elf *e, const char *name)
{
	for (size_t i = 0; i < e->nfuncs; i++)
		if (!strcmp(e->funcs[i].name, name))
			return &e->funcs[i];
	return NULL;
}

/* Does the instruction at file offset off call (e8) or jump (e9, eb) to f? */
static bool reaches(int fd, uint64_t off, const struct at_elf_func *f, bool tail)
{
	uint8_t b[5];
	int32_t rel;

	if (pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b))
		return false;
	/* .text's offsets and addresses differ by one constant. */
	if (tail && b[0] == 0xeb)
		return off + 2 + (uint64_t)(int64_t)(int8_t)b[1] == f->start;
	if (b[0] != (tail ? 0xe9 : 0xe8))
		return false;
	memcpy(&rel, b + 1, sizeof(rel));
	return off + 5 + (uint64_t)(int64_t)rel == f->start;
}

int main(void)
{
	char exe[4096], path[4200], err[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *names[] = {"leaf_direct", "leaf_taken", "not_leaf", "leaf_other"};
	uint64_t addr[4], size[4];
	struct at_callsites cs[4];
	struct at_elf e;
	bool found = true;
	uint32_t tails = 0;
	int fd;

	if (n <= 0)
		return 1;
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/../targets/callsites", dirname(exe));
	if (at_elf_load(path, &e, err, sizeof(err))) {
		check(false, err);
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		const struct at_elf_func *f = func(&e, names[i]);

		found = found && f;
		addr[i] = f ? f->addr : 0;
		size[i] = f ? f->size : 0;
	}
	check(found, "the target's functions are there");
	check(func(&e, "leaf_direct")->entry == AT_ENTRY_SSTEP,
	      "leaf_direct's entry is single-stepped");
	check(at_callsites_find(path, addr, size, 4, cs, err, sizeof(err)) == 0,
	      "the scan succeeds");
	check(cs[0].n == 4, "leaf_direct: 4 sites (first, second, main, and tail's jump)");
	fd = open(path, O_RDONLY);
	for (uint32_t k = 0; k < cs[0].n; k++) {
		tails += cs[0].tail[k];
		check(reaches(fd, cs[0].offs[k], func(&e, "leaf_direct"), cs[0].tail[k]),
		      "each site is a call or jmp to leaf_direct");
	}
	close(fd);
	check(tails == 1, "one of them is a jump (tail's sibling call)");
	check(cs[1].n == 0, "leaf_taken: a pointer to it is stored, so not at its call sites");
	check(cs[2].n == 0, "not_leaf: it calls leaf_other, so not at its call sites");
	check(cs[3].n == 1, "leaf_other: its one call site, in not_leaf");
	at_callsites_free(cs, 4);
	check(at_callsites_find("/nonexistent", addr, size, 4, cs, err, sizeof(err)) == -1 &&
		  strstr(err, "/nonexistent") && !cs[0].n,
	      "a missing file is an error that names it");
	at_elf_free(&e);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
