// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* USDT notes and -u specifications; see usdt.h for the formats. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usdt.h"
#include "util.h"

#define NT_STAPSDT 3

static bool setf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool setf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* ---- Argument specs ------------------------------------------------- */

static bool parse_reg(const char **pp, char *reg)
{
	const char *p = *pp;
	size_t n = 0;

	if (*p != '%')
		return false;
	p++;
	while (isalnum((unsigned char)p[n]) && n < 7)
		n++;
	if (!n || isalnum((unsigned char)p[n]))
		return false;
	memcpy(reg, p, n);
	reg[n] = 0;
	*pp = p + n;
	return true;
}

static bool parse_int(const char **pp, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(*pp, &end, 0);
	if (end == *pp || errno)
		return false;
	*v = x;
	*pp = end;
	return true;
}

/* One SIZE@OPERAND; *pp moves past it. */
static bool parse_one(const char **pp, struct at_usdt_arg *a)
{
	const char *p = *pp;
	int64_t size;

	memset(a, 0, sizeof(*a));
	if (!parse_int(&p, &size) || *p != '@')
		return false;
	a->is_signed = size < 0;
	a->size = (int)(size < 0 ? -size : size);
	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
		return false;
	p++;
	if (*p == '%') {
		a->op = AT_USDT_OP_REG;
		if (!parse_reg(&p, a->base))
			return false;
	} else if (*p == '$') {
		p++;
		a->op = AT_USDT_OP_IMM;
		if (!parse_int(&p, &a->disp))
			return false;
	} else {
		a->op = AT_USDT_OP_MEM;
		if (*p == '-' || *p == '+' || isdigit((unsigned char)*p)) {
			if (!parse_int(&p, &a->disp))
				return false;
		} else if (isalpha((unsigned char)*p) || *p == '_' || *p == '.') {
			/* sym, sym+off or sym-off: resolved at run time, keep the offset */
			a->symbolic = true;
			while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '@')
				p++;
			if ((*p == '+' || *p == '-') && !parse_int(&p, &a->disp))
				return false;
		}
		if (*p != '(')
			return false;
		p++;
		if (!parse_reg(&p, a->base))
			return false;
		if (*p == ',') {
			int64_t scale = 1;

			p++;
			if (!parse_reg(&p, a->index))
				return false;
			if (*p == ',') {
				p++;
				if (!parse_int(&p, &scale))
					return false;
			}
			if (scale != 1 && scale != 2 && scale != 4 && scale != 8)
				return false;
			a->scale = (int)scale;
		}
		if (*p != ')')
			return false;
		p++;
		if (a->symbolic && strcmp(a->base, "rip"))
			return false;
	}
	if (*p && *p != ' ')
		return false;
	*pp = p;
	return true;
}

bool at_usdt_parse_args(const char *s, struct at_usdt_arg *args, uint32_t *n, char *err,
			size_t errlen)
{
	const char *p = s;

	*n = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return true;
		if (*n >= AT_USDT_MAX_ARGS)
			return setf(err, errlen, "more than %d arguments", AT_USDT_MAX_ARGS);
		if (!parse_one(&p, &args[*n]))
			return setf(err, errlen, "bad argument %u at '%.40s'", *n + 1, p);
		(*n)++;
	}
}

bool at_usdt_arg_decodable(const struct at_usdt_arg *a)
{
	return !a->index[0] && !a->symbolic;
}

const char *at_usdt_arg_type(const struct at_usdt_arg *a)
{
	static const char *names[2][4] = {{"u8", "u16", "u32", "u64"}, {"s8", "s16", "s32", "s64"}};
	int i = a->size == 1 ? 0 : a->size == 2 ? 1 : a->size == 4 ? 2 : 3;

	return names[a->is_signed][i];
}

/* ---- Notes ---------------------------------------------------------- */

/* File offset of a link-time address, through the PT_LOAD segments. */
static bool addr_to_offset(Elf *elf, uint64_t addr, bool need_exec, uint64_t *off)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (need_exec && !(ph.p_flags & PF_X))
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* Without program headers (relocatable objects): through the sections. */
static bool addr_to_offset_scn(Elf *elf, uint64_t addr, uint64_t *off)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (addr >= sh.sh_addr && addr - sh.sh_addr < sh.sh_size) {
			*off = addr - sh.sh_addr + sh.sh_offset;
			return true;
		}
	}
	return false;
}

static bool to_offset(Elf *elf, uint64_t addr, bool exec, uint64_t *off)
{
	size_t phnum = 0;

	if (elf_getphdrnum(elf, &phnum) == 0 && phnum > 0)
		return addr_to_offset(elf, addr, exec, off);
	return addr_to_offset_scn(elf, addr, off);
}

static char *dup_bounded(const char *p, const char *end)
{
	const char *z = memchr(p, 0, (size_t)(end - p));

	if (!z)
		return NULL;
	return at_xstrdup(p);
}

static void add_note(struct at_usdt_set *s, Elf *elf, const char *desc, size_t len, size_t asz,
		     bool have_base, uint64_t base_addr)
{
	const char *p = desc + 3 * asz, *end = desc + len;
	struct at_usdt_probe pr = {0};
	uint64_t v[3] = {0, 0, 0};

	if (len < 3 * asz + 3)
		return;
	for (int i = 0; i < 3; i++) {
		if (asz == 8) {
			memcpy(&v[i], desc + 8 * i, 8);
		} else {
			uint32_t x;

			memcpy(&x, desc + 4 * i, 4);
			v[i] = x;
		}
	}
	pr.pc = v[0];
	pr.sema = v[2];
	/* Prelinked: the file moved from where the note was written. */
	if (have_base && v[1]) {
		pr.pc += base_addr - v[1];
		if (pr.sema)
			pr.sema += base_addr - v[1];
	}
	pr.provider = dup_bounded(p, end);
	if (!pr.provider)
		goto bad;
	p += strlen(pr.provider) + 1;
	if (p >= end || !(pr.name = dup_bounded(p, end)))
		goto bad;
	p += strlen(pr.name) + 1;
	pr.args_text = p < end ? dup_bounded(p, end) : NULL;
	if (!pr.args_text)
		pr.args_text = at_xstrdup("");
	if (!pr.provider[0] || !pr.name[0])
		goto bad;
	if (!to_offset(elf, pr.pc, true, &pr.offset))
		goto bad;
	if (pr.sema && !to_offset(elf, pr.sema, false, &pr.sema_offset))
		goto bad;
	pr.args_ok = at_usdt_parse_args(pr.args_text, pr.args, &pr.nargs, NULL, 0);
	if (!pr.args_ok)
		pr.nargs = 0;
	s->p = at_xrealloc(s->p, s->n + 1, sizeof(*s->p));
	s->p[s->n++] = pr;
	return;
bad:
	free(pr.provider);
	free(pr.name);
	free(pr.args_text);
}

static int cmp_probe(const void *a, const void *b)
{
	const struct at_usdt_probe *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = x->pc < y->pc ? -1 : x->pc > y->pc;
	return c;
}

static int load_elf(Elf *elf, struct at_usdt_set *out, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, asz;
	uint64_t base_addr = 0;
	bool have_base = false;
	int cls;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		setf(err, errlen, "not an ELF file");
		return -1;
	}
	cls = gelf_getclass(elf);
	if (cls == ELFCLASSNONE || elf_getshdrstrndx(elf, &shstrndx)) {
		setf(err, errlen, "bad ELF header");
		return -1;
	}
	asz = cls == ELFCLASS32 ? 4 : 8;
	{
		GElf_Ehdr eh;
		uint64_t off;

		if (gelf_getehdr(elf, &eh) && eh.e_entry && to_offset(elf, eh.e_entry, true, &off))
			out->entry_offset = off;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".stapsdt.base")) {
			have_base = true;
			base_addr = sh.sh_addr;
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		const char *name;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		out->has_notes = true;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const char *buf = d->d_buf;

			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp(buf + noff, "stapsdt", 8))
				continue;
			add_note(out, elf, buf + doff, nh.n_descsz, asz, have_base, base_addr);
		}
	}
	if (out->n > 1)
		qsort(out->p, out->n, sizeof(*out->p), cmp_probe);
	return 0;
}

int at_usdt_load_mem(const void *data, size_t len, struct at_usdt_set *out, char *err,
		     size_t errlen)
{
	Elf *elf;
	int rc;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, len);
	rc = load_elf(elf, out, err, errlen);
	if (elf)
		elf_end(elf);
	if (rc)
		at_usdt_free(out);
	return rc;
}

int at_usdt_load(const char *path, struct at_usdt_set *out, char *err, size_t errlen)
{
	char why[AT_ERRLEN];
	Elf *elf;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		setf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = load_elf(elf, out, why, sizeof(why));
	if (rc)
		setf(err, errlen, "%s: %s", path, why);
	if (elf)
		elf_end(elf);
	close(fd);
	if (rc)
		at_usdt_free(out);
	return rc;
}

void at_usdt_free(struct at_usdt_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].provider);
		free(s->p[i].name);
		free(s->p[i].args_text);
	}
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* ---- -u specifications ---------------------------------------------- */

static bool valid_name(const char *s, bool glob)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-' &&
		    !(glob && strchr("*?[]!", *s)))
			return false;
	return true;
}

const char *at_usdt_key_type_str(uint32_t t)
{
	switch (t) {
	case AT_USDT_KEY_INT:
		return "int";
	case AT_USDT_KEY_UINT:
		return "uint";
	case AT_USDT_KEY_PTR:
		return "ptr";
	case AT_USDT_KEY_STR:
		return "str";
	}
	return "?";
}

static bool parse_keys(char *p, struct at_usdt_spec *o, char *err, size_t errlen)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon, *end;
		long n;
		uint8_t type = 0;

		while (*tok == ' ')
			tok++;
		colon = strchr(tok, ':');
		if (strncmp(tok, "arg", 3) || !colon)
			return setf(err, errlen, "key '%s' is not argN:TYPE (e.g. arg1:str)", tok);
		n = strtol(tok + 3, &end, 10);
		if (end != colon || n < 1 || n > AT_USDT_MAX_ARGS)
			return setf(err, errlen, "key '%s': N in argN is 1 to %d", tok,
				    AT_USDT_MAX_ARGS);
		for (uint32_t t = AT_USDT_KEY_INT; t <= AT_USDT_KEY_STR; t++) {
			size_t l = strlen(at_usdt_key_type_str(t));

			if (!strncmp(colon + 1, at_usdt_key_type_str(t), l) &&
			    (colon[1 + l] == 0 || colon[1 + l] == ' '))
				type = (uint8_t)t;
		}
		if (!type)
			return setf(err, errlen, "key '%s': TYPE is str, int, uint or ptr", tok);
		if (o->nkeys >= AT_USDT_MAX_KEYS)
			return setf(err, errlen, "at most %d keys", AT_USDT_MAX_KEYS);
		o->key_arg[o->nkeys] = (uint8_t)(n - 1);
		o->key_type[o->nkeys++] = type;
	}
	if (!o->nkeys)
		return setf(err, errlen, "empty key list '()': give argN:TYPE, or leave out '()'");
	return true;
}

bool at_usdt_spec_parse(const char *s, struct at_usdt_spec *o, char *err, size_t errlen)
{
	char *buf = at_xstrdup(s), *colon, *paren, *plus;
	bool ok = false;

	memset(o, 0, sizeof(*o));
	colon = strchr(buf, ':');
	if (!colon) {
		setf(err, errlen, "'%s' is not PROVIDER:NAME", s);
		goto out;
	}
	*colon = 0;
	paren = strchr(colon + 1, '(');
	if (paren) {
		size_t l = strlen(paren);

		if (paren[l - 1] != ')') {
			setf(err, errlen, "'%s': the key list must end with ')'", s);
			goto out;
		}
		paren[l - 1] = 0;
		*paren = 0;
		o->keyed = true;
		if (!parse_keys(paren + 1, o, err, errlen))
			goto out;
	}
	plus = strchr(colon + 1, '+');
	if (plus) {
		*plus = 0;
		o->keyed = true;
		if (!valid_name(plus + 1, false)) {
			setf(err, errlen, "'%s': bad return probe name '%s' (no globs in pairs)", s,
			     plus + 1);
			goto out;
		}
		o->ret_name = at_xstrdup(plus + 1);
	}
	if (!valid_name(buf, !o->keyed) || !valid_name(colon + 1, !o->keyed)) {
		setf(err, errlen,
		     o->keyed ? "'%s': bad provider or probe name (keyed and paired probes take "
				"no globs)"
			      : "'%s': bad provider or probe name",
		     s);
		goto out;
	}
	o->provider = at_xstrdup(buf);
	o->name = at_xstrdup(colon + 1);
	ok = true;
out:
	free(buf);
	if (!ok)
		at_usdt_spec_free(o);
	return ok;
}

void at_usdt_spec_free(struct at_usdt_spec *s)
{
	free(s->provider);
	free(s->name);
	free(s->ret_name);
	memset(s, 0, sizeof(*s));
}
