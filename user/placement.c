// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probe placement with capstone; the rules are in placement.h. */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "placement.h"
#include "symbols.h"
#include "util.h"

#define PROLOGUE_INSNS 16 /* how far the entry sequence is searched */
#define PROLOGUE_BYTES 64
#define MAX_FUNC_BYTES (16u << 20) /* larger "functions" are data or broken */

static bool reg_in(x86_reg r, const x86_reg *set, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (set[i] == r)
			return true;
	}
	return false;
}

static const x86_reg sp_regs[] = {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL};

/* The SysV argument registers, all widths, and the vector ones. */
static const x86_reg arg_regs[] = {
    X86_REG_RDI,  X86_REG_EDI,	X86_REG_DI,   X86_REG_DIL,  X86_REG_RSI,  X86_REG_ESI,
    X86_REG_SI,	  X86_REG_SIL,	X86_REG_RDX,  X86_REG_EDX,  X86_REG_DX,	  X86_REG_DL,
    X86_REG_DH,	  X86_REG_RCX,	X86_REG_ECX,  X86_REG_CX,   X86_REG_CL,	  X86_REG_CH,
    X86_REG_R8,	  X86_REG_R8D,	X86_REG_R8W,  X86_REG_R8B,  X86_REG_R9,	  X86_REG_R9D,
    X86_REG_R9W,  X86_REG_R9B,	X86_REG_XMM0, X86_REG_XMM1, X86_REG_XMM2, X86_REG_XMM3,
    X86_REG_XMM4, X86_REG_XMM5, X86_REG_XMM6, X86_REG_XMM7, X86_REG_YMM0, X86_REG_YMM1,
    X86_REG_YMM2, X86_REG_YMM3, X86_REG_YMM4, X86_REG_YMM5, X86_REG_YMM6, X86_REG_YMM7,
    X86_REG_ZMM0, X86_REG_ZMM1, X86_REG_ZMM2, X86_REG_ZMM3, X86_REG_ZMM4, X86_REG_ZMM5,
    X86_REG_ZMM6, X86_REG_ZMM7,
};

static bool is_control(csh h, const cs_insn *in)
{
	return cs_insn_group(h, in, CS_GRP_JUMP) || cs_insn_group(h, in, CS_GRP_CALL) ||
	       cs_insn_group(h, in, CS_GRP_RET) || cs_insn_group(h, in, CS_GRP_INT) ||
	       cs_insn_group(h, in, CS_GRP_IRET) || in->id == X86_INS_SYSCALL ||
	       in->id == X86_INS_XBEGIN || in->id == X86_INS_UD2 || in->id == X86_INS_HLT;
}

/* What an instruction before the site would spoil, or 0 if nothing. */
static enum at_site_why spoils(csh h, const cs_insn *in, bool args)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (is_control(h, in))
		return AT_SITE_CONTROL;
	if (cs_regs_access(h, in, rd, &nrd, wr, &nwr))
		return AT_SITE_UNDECODABLE;
	for (uint8_t i = 0; i < nwr; i++) {
		if (reg_in(wr[i], sp_regs, sizeof(sp_regs) / sizeof(sp_regs[0])))
			return AT_SITE_SP_MOVES;
		if (args && reg_in(wr[i], arg_regs, sizeof(arg_regs) / sizeof(arg_regs[0])))
			return AT_SITE_ARG_WRITTEN;
	}
	return 0;
}

static size_t span(size_t size, size_t off)
{
	return size - off < 16 ? size - off : 16;
}

/* The first emulated instruction of the entry sequence, or 0 with why. */
static uint32_t find_candidate(csh h, cs_insn *in, const uint8_t *code, size_t size, bool args,
			       struct at_site *out)
{
	const uint8_t *p = code;
	size_t left = size < PROLOGUE_BYTES ? size : PROLOGUE_BYTES;
	uint64_t addr = 0;

	for (int n = 0; n < PROLOGUE_INSNS; n++) {
		uint32_t off = (uint32_t)addr;
		enum at_site_why why;

		if (n > 0 && at_classify_entry(code + off, span(size, off)) == AT_ENTRY_EMULATED)
			return off;
		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			out->why = n && left ? AT_SITE_UNDECODABLE : AT_SITE_NO_CHEAP;
			out->at = off;
			return 0;
		}
		why = spoils(h, in, args);
		if (why) {
			out->why = why;
			out->at = off;
			return 0;
		}
	}
	out->why = AT_SITE_NO_CHEAP;
	return 0;
}

/*
 * Does any direct branch or call of the function land in (0, site]? One to
 * offset 0 (a recursive call, a self tail call) enters like any call: it
 * runs the prefix and reaches the site, as it reached the first instruction.
 */
static bool branch_into(csh h, cs_insn *in, const uint8_t *code, size_t size, uint32_t site,
			struct at_site *out)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;

	while (left) {
		uint32_t off = (uint32_t)addr;
		const cs_x86 *x;

		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			out->why = AT_SITE_UNDECODABLE;
			out->at = off;
			return true;
		}
		if (!cs_insn_group(h, in, CS_GRP_JUMP) && !cs_insn_group(h, in, CS_GRP_CALL) &&
		    in->id != X86_INS_XBEGIN)
			continue;
		x = &in->detail->x86;
		for (uint8_t i = 0; i < x->op_count; i++) {
			if (x->operands[i].type == X86_OP_IMM && x->operands[i].imm > 0 &&
			    (uint64_t)x->operands[i].imm <= site) {
				out->why = AT_SITE_BRANCH_IN;
				out->at = off;
				return true;
			}
		}
	}
	return false;
}

void at_place_site(const uint8_t *code, size_t size, bool args, struct at_site *out)
{
	enum at_entry_kind first = at_classify_entry(code, size < 16 ? size : 16);
	cs_insn *in = NULL;
	uint32_t site;
	csh h;

	*out = (struct at_site){.kind = first, .why = AT_SITE_FIRST_CHEAP};
	if (first == AT_ENTRY_EMULATED)
		return;
	if (first != AT_ENTRY_SSTEP) {
		out->why = first == AT_ENTRY_REFUSED ? AT_SITE_FIRST_REFUSED : AT_SITE_UNDECODABLE;
		return;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		out->why = AT_SITE_UNDECODABLE;
		return;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	site = in ? find_candidate(h, in, code, size, args, out) : 0;
	if (site && !branch_into(h, in, code, size, site, out)) {
		out->off = site;
		out->kind = AT_ENTRY_EMULATED;
		out->why = AT_SITE_MOVED;
		out->at = 0;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&h);
}

const char *at_site_why_str(enum at_site_why why)
{
	switch (why) {
	case AT_SITE_FIRST_CHEAP:
		return "first emulated";
	case AT_SITE_MOVED:
		return "moved";
	case AT_SITE_SP_MOVES:
		return "sp moves";
	case AT_SITE_ARG_WRITTEN:
		return "arg written";
	case AT_SITE_CONTROL:
		return "control flow";
	case AT_SITE_NO_CHEAP:
		return "no emulated insn";
	case AT_SITE_BRANCH_IN:
		return "branch in";
	case AT_SITE_UNDECODABLE:
		return "undecodable";
	case AT_SITE_FIRST_REFUSED:
		return "refused";
	default:
		return "off";
	}
}

bool at_site_why_has_at(enum at_site_why why)
{
	return why == AT_SITE_SP_MOVES || why == AT_SITE_ARG_WRITTEN || why == AT_SITE_CONTROL ||
	       why == AT_SITE_BRANCH_IN || why == AT_SITE_UNDECODABLE;
}

int at_elf_place(struct at_elf *e, const size_t *idx, size_t n)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct at_elf_func *f = &e->funcs[idx[i]];
		struct at_site s;
		ssize_t got;

		f->args_offset = f->offset;
		f->args_entry = f->entry;
		if (f->entry != AT_ENTRY_SSTEP || f->offset != f->start) {
			f->site_why = f->entry == AT_ENTRY_EMULATED  ? AT_SITE_FIRST_CHEAP
				      : f->entry == AT_ENTRY_REFUSED ? AT_SITE_FIRST_REFUSED
								     : AT_SITE_UNDECODABLE;
			continue;
		}
		if (f->size > MAX_FUNC_BYTES) {
			f->site_why = AT_SITE_UNDECODABLE;
			continue;
		}
		if (f->size > cap) {
			cap = f->size;
			free(buf);
			buf = at_xcalloc(cap, 1);
		}
		got = pread(fd, buf, f->size, (off_t)f->start);
		if (got != (ssize_t)f->size) {
			f->site_why = AT_SITE_UNDECODABLE;
			continue;
		}
		/* The strict site serves both phases unless an argument write stopped it. */
		at_place_site(buf, f->size, true, &s);
		f->args_offset = f->start + s.off;
		f->args_entry = s.kind;
		if (s.why == AT_SITE_ARG_WRITTEN)
			at_place_site(buf, f->size, false, &s);
		f->offset = f->start + s.off;
		f->entry = s.kind;
		f->site_why = s.why;
		f->site_at = s.at;
	}
	free(buf);
	close(fd);
	return 0;
}
