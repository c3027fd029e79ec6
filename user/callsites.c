// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Direct call sites with capstone and libelf; the rules are in callsites.h. */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsites.h"
#include "symbols.h"
#include "util.h"

struct target {
	uint64_t addr, size;
	size_t idx; /* into the caller's arrays */
};

struct scan {
	struct target *t; /* sorted by addr */
	size_t n;
	struct at_callsites *out; /* by idx */
	bool *no;		  /* by idx: cannot be counted at its call sites */
	uint32_t *cap;		  /* by idx */
};

static int target_cmp(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The target whose range holds addr (exact: starts at addr), or NULL. */
static const struct target *target_at(const struct scan *s, uint64_t addr, bool exact)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->t[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (exact)
		return s->t[lo - 1].addr == addr ? &s->t[lo - 1] : NULL;
	return addr < s->t[lo - 1].addr + s->t[lo - 1].size ? &s->t[lo - 1] : NULL;
}

/* The target at addr (exact: starting there) cannot be counted at its call sites. */
static void rule_out(struct scan *s, uint64_t addr, bool exact)
{
	const struct target *t = target_at(s, addr, exact);

	if (t)
		s->no[t->idx] = true;
}

/* A pointer to a target may be taken where addr is stored or computed. */
static void taken(struct scan *s, uint64_t addr)
{
	rule_out(s, addr, true);
}

static void add_site(struct scan *s, const struct target *t, uint64_t off, bool tail)
{
	struct at_callsites *c = &s->out[t->idx];

	if (s->no[t->idx])
		return;
	if (c->n == AT_CALLSITES_MAX) {
		s->no[t->idx] = true;
		return;
	}
	if (c->n == s->cap[t->idx]) {
		s->cap[t->idx] = s->cap[t->idx] ? 2 * s->cap[t->idx] : 4;
		c->offs = at_xrealloc(c->offs, s->cap[t->idx], sizeof(*c->offs));
		c->tail = at_xrealloc(c->tail, s->cap[t->idx], sizeof(*c->tail));
	}
	c->offs[c->n] = off;
	c->tail[c->n++] = tail;
}

/*
 * One instruction: a direct call or jump to a target is a site, if the
 * kernel emulates it; any other reference to a target's address (lea
 * f(%rip), mov $f) takes a pointer to it; a call inside a target makes it
 * no leaf.
 */
static void scan_insn(csh h, struct scan *s, const cs_insn *in, uint64_t off)
{
	const cs_x86 *x = &in->detail->x86;
	bool call = cs_insn_group(h, in, CS_GRP_CALL);
	bool branch = call || cs_insn_group(h, in, CS_GRP_JUMP);

	if (call)
		rule_out(s, in->address, false); /* no leaf */
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_IMM && branch && x->op_count == 1) {
			const struct target *t = target_at(s, (uint64_t)op->imm, true);

			if (!t)
				continue;
			if (at_classify_entry(in->bytes, in->size) != AT_ENTRY_EMULATED)
				s->no[t->idx] = true;
			else
				add_site(s, t, off, !call);
		} else if (op->type == X86_OP_IMM) {
			taken(s, (uint64_t)op->imm);
		} else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			taken(s, in->address + in->size + (uint64_t)op->mem.disp);
		}
	}
}

/*
 * Sweep an executable section from its start. gcc and clang put no data in
 * .text; an instruction capstone cannot decode would mean they did, and
 * then no call site found is trusted (returns -1).
 */
static int scan_code(csh h, cs_insn *in, struct scan *s, const GElf_Shdr *sh, const Elf_Data *d)
{
	const uint8_t *p = d->d_buf;
	size_t left = d->d_size;
	uint64_t addr = sh->sh_addr;

	while (left) {
		uint64_t off = sh->sh_offset + (addr - sh->sh_addr);

		if (!cs_disasm_iter(h, &p, &left, &addr, in))
			return -1;
		scan_insn(h, s, in, off);
	}
	return 0;
}

/* Pointers stored in data: every aligned 8-byte word that holds a target's address. */
static void scan_data(struct scan *s, const Elf_Data *d)
{
	const uint8_t *p = d->d_buf;

	for (size_t i = 0; i + 8 <= d->d_size; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, sizeof(v));
		taken(s, v);
	}
}

/* Pointers the dynamic linker writes: RELATIVE addends, symbol values (64, GOT, PLT). */
static void scan_relocs(struct scan *s, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL), *syms = NULL;
	Elf_Scn *symscn = sh->sh_link ? elf_getscn(e, sh->sh_link) : NULL;
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (symscn)
		syms = elf_getdata(symscn, NULL);
	for (size_t i = 0; d && i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		uint32_t type;

		if (!gelf_getrela(d, (int)i, &r))
			break;
		type = GELF_R_TYPE(r.r_info);
		if (type == R_X86_64_RELATIVE)
			taken(s, (uint64_t)r.r_addend);
		else if (syms && GELF_R_SYM(r.r_info) &&
			 gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			taken(s, sym.st_value);
	}
}

static int scan_file(Elf *e, struct scan *s, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	cs_insn *in;
	csh h;
	int rc = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone cannot decode x86-64");
		return -1;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	while (in && !rc && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_RELA) {
			scan_relocs(s, e, scn, &sh);
			continue;
		}
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_INIT_ARRAY &&
		     sh.sh_type != SHT_FINI_ARRAY && sh.sh_type != SHT_PREINIT_ARRAY))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		if (!(sh.sh_flags & SHF_EXECINSTR)) {
			scan_data(s, d);
		} else if (scan_code(h, in, s, &sh, d)) {
			snprintf(err, errlen, "undecodable instruction in section %zu",
				 elf_ndxscn(scn));
			rc = -1;
		}
	}
	if (!in) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	return rc;
}

int at_callsites_find(const char *path, const uint64_t *addr, const uint64_t *size, size_t n,
		      struct at_callsites *out, char *err, size_t errlen)
{
	struct scan s = {.n = n, .out = out};
	GElf_Ehdr eh;
	Elf *e = NULL;
	int fd, rc = -1;

	memset(out, 0, n * sizeof(*out));
	if (!n)
		return 0;
	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/*
	 * Read, not mapped: the kernel puts the breakpoints of the file's
	 * uprobes into every new mapping of it, ours too.
	 */
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "%s: not an x86-64 ELF file", path);
		goto out;
	}
	s.t = at_xcalloc(n, sizeof(*s.t));
	s.no = at_xcalloc(n, sizeof(*s.no));
	s.cap = at_xcalloc(n, sizeof(*s.cap));
	for (size_t i = 0; i < n; i++)
		s.t[i] = (struct target){addr[i], size[i], i};
	qsort(s.t, n, sizeof(*s.t), target_cmp);
	rc = scan_file(e, &s, err, errlen);
	for (size_t i = 0; i < n; i++) {
		if (rc || s.no[i] || !out[i].n) {
			free(out[i].offs);
			free(out[i].tail);
			out[i] = (struct at_callsites){0};
		}
	}
	free(s.t);
	free(s.no);
	free(s.cap);
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

void at_callsites_free(struct at_callsites *cs, size_t n)
{
	for (size_t i = 0; cs && i < n; i++) {
		free(cs[i].offs);
		free(cs[i].tail);
		cs[i] = (struct at_callsites){0};
	}
}
