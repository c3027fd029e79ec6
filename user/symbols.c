// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Function symbols of an ELF file, with the file offset and the kind of
 * entry instruction of each. The whole file is read into memory and handed
 * to libelf, so that every byte we look at is bounds-checked against the
 * real file size (crafted or truncated files must not crash us).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"
#include "util.h"

#define DEBUG_DIR     "/usr/lib/debug/.build-id"
#define ENTRY_BYTES   16	   /* longest x86 instruction is 15 */
#define MAX_FILE_SIZE (4ULL << 30) /* refuse absurd inputs */

/* A file in memory and its libelf handle. */
struct image {
	uint8_t *buf;
	size_t len;
	Elf *elf;
	GElf_Ehdr eh;
};

/* A symbol before the alias merge. */
struct cand {
	struct at_elf_func f;
	uint8_t rank; /* alias preference: global 0, weak 1, local 2 */
};

/* What the symbol reader needs from the file being probed. */
struct ctx {
	const char *path;
	struct image *img; /* code bytes and program headers */
	GElf_Phdr *load;   /* executable PT_LOAD segments */
	size_t nload;
	struct cand *cands;
	size_t ncands, cap;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- Entry instruction ---------------------------------------------- */

static bool is_rex(uint8_t b)
{
	return b >= 0x40 && b <= 0x4f;
}

/* 0f 1f /0: the multi-byte NOP; its ModRM reg field must be 0. */
static bool is_nopl(const uint8_t *c, size_t len)
{
	if (len < 2 || c[0] != 0x0f || c[1] != 0x1f)
		return false;
	return len < 3 || ((c[2] >> 3) & 7) == 0;
}

/*
 * Mirrors arch/x86/kernel/uprobes.c: push_setup_xol_ops() emulates
 * "push reg" alone or with REX.B (41); branch_setup_xol_ops() emulates
 * NOPs, call rel32, jmp rel8/rel32 and jcc rel8/rel32, but refuses a 66
 * prefix on branches; anything else is single-stepped out of line. We
 * accept only REX and BND (f2) prefixes on branches: the kernel refuses
 * CS/DS/ES/SS/LOCK prefixes outright, and the rest never start a function.
 */
enum at_entry_kind at_classify_entry(const uint8_t *code, size_t len)
{
	size_t i = 0;

	if (!code || !len)
		return AT_ENTRY_UNKNOWN;
	/* uprobe_init_insn() refuses lock and cs/ds-prefixed instructions. */
	for (i = 0; i < len && i < 15; i++) {
		if (code[i] == 0xf0 || code[i] == 0x2e || code[i] == 0x3e)
			return AT_ENTRY_REFUSED;
		if (code[i] != 0x66 && code[i] != 0x67 && code[i] != 0xf2 && code[i] != 0xf3 &&
		    code[i] != 0x26 && code[i] != 0x36 && code[i] != 0x64 && code[i] != 0x65 &&
		    !is_rex(code[i]))
			break;
	}
	i = 0;
	if (code[0] >= 0x50 && code[0] <= 0x57)
		return AT_ENTRY_EMULATED;
	if (len >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57)
		return AT_ENTRY_EMULATED;
	if (code[0] == 0x90)
		return AT_ENTRY_EMULATED;
	/* 66 90 (xchg %ax,%ax) and 66* 0f 1f: the usual padding NOPs. */
	while (i < len && code[i] == 0x66)
		i++;
	if (i > 0 && i < len && code[i] == 0x90)
		return AT_ENTRY_EMULATED;
	if (is_nopl(code + i, len - i))
		return AT_ENTRY_EMULATED;

	for (i = 0; i < len && (code[i] == 0xf2 || is_rex(code[i])); i++)
		;
	if (i >= len)
		return AT_ENTRY_SSTEP;
	switch (code[i]) {
	case 0xe8: /* call rel32 */
	case 0xe9: /* jmp rel32 */
	case 0xeb: /* jmp rel8 */
		return AT_ENTRY_EMULATED;
	case 0x0f: /* jcc rel32 */
		if (i + 1 < len && code[i + 1] >= 0x80 && code[i + 1] <= 0x8f)
			return AT_ENTRY_EMULATED;
		return AT_ENTRY_SSTEP;
	default:
		if (code[i] >= 0x70 && code[i] <= 0x7f) /* jcc rel8 */
			return AT_ENTRY_EMULATED;
		return AT_ENTRY_SSTEP;
	}
}

const char *at_entry_kind_str(enum at_entry_kind k)
{
	switch (k) {
	case AT_ENTRY_EMULATED:
		return "emulated";
	case AT_ENTRY_SSTEP:
		return "single-step";
	case AT_ENTRY_REFUSED:
		return "refused";
	default:
		return "unknown";
	}
}

/* ---- Start-up noise ------------------------------------------------- */

/*
 * Code that the C/C++ runtime, the linker or a statically linked sanitizer
 * runtime puts in every binary: it runs once (or never) and says nothing
 * about the program, so the default selection leaves it out. An explicit
 * -f still selects it.
 */
static const char *const noise_exact[] = {
    "_start",
    "_init",
    "_fini",
    "frame_dummy",
    "register_tm_clones",
    "deregister_tm_clones",
    "__do_global_dtors_aux",
    "__do_global_ctors_aux",
    "__libc_csu_init",
    "__libc_csu_fini",
    "_dl_relocate_static_pie",
    "__stack_chk_fail_local",
    "_GLOBAL__I_a",
    "_GLOBAL__D_a",
};

static const char *const noise_prefix[] = {
    "__x86.get_pc_thunk.", /* i386 PIC helpers */
    "_GLOBAL__sub_I_",	   /* C++ static constructors of a unit */
    "_GLOBAL__sub_D_",	   /* ... and destructors */
    "__static_initialization_and_destruction_",
    "__cxx_global_var_init", /* clang's static initializers */
    "__asan_",
    "__ubsan_",
    "__lsan_",
    "__tsan_",
    "__msan_",
    "__sanitizer_",
    "__interceptor_",
    "__sancov_",
    "_ZN6__asan",
    "_ZN7__ubsan",
    "_ZN6__lsan",
    "_ZN11__sanitizer",
    "__llvm_profile_",
    "__gcov_",
};

bool at_is_startup_noise(const char *name)
{
	size_t i;

	if (!name)
		return false;
	for (i = 0; i < sizeof(noise_exact) / sizeof(noise_exact[0]); i++)
		if (!strcmp(name, noise_exact[i]))
			return true;
	for (i = 0; i < sizeof(noise_prefix) / sizeof(noise_prefix[0]); i++)
		if (!strncmp(name, noise_prefix[i], strlen(noise_prefix[i])))
			return true;
	return false;
}

/* ---- Reading the file ----------------------------------------------- */

/*
 * Read the whole file: lseek gives a size hint, EOF the real size (the
 * file may change under us), and a directory fails read() with EISDIR.
 */
static int read_all(const char *path, struct image *img, char *err, size_t errlen)
{
	off_t hint;
	size_t cap;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		set_err(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	hint = lseek(fd, 0, SEEK_END);
	cap = hint > 0 && (uint64_t)hint < MAX_FILE_SIZE ? (size_t)hint + 1 : 65536;
	if (hint > 0)
		lseek(fd, 0, SEEK_SET);
	img->buf = at_xcalloc(cap, 1);
	for (;;) {
		ssize_t n;

		if (img->len == cap) {
			if (cap >= MAX_FILE_SIZE) {
				set_err(err, errlen, "%s: file too large", path);
				break;
			}
			cap *= 2;
			img->buf = at_xrealloc(img->buf, cap, 1);
		}
		n = read(fd, img->buf + img->len, cap - img->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_err(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0) {
			close(fd);
			return 0;
		}
		img->len += (size_t)n;
	}
	close(fd);
	return -1;
}

static void image_close(struct image *img)
{
	if (img->elf)
		elf_end(img->elf);
	free(img->buf);
	memset(img, 0, sizeof(*img));
}

/* Read path and check that it is an executable or a shared object. */
static int image_open(const char *path, struct image *img, char *err, size_t errlen)
{
	static const uint8_t magic[4] = {0x7f, 'E', 'L', 'F'};

	memset(img, 0, sizeof(*img));
	if (read_all(path, img, err, errlen))
		goto fail;
	if (img->len < sizeof(magic) || memcmp(img->buf, magic, sizeof(magic))) {
		set_err(err, errlen, "%s: not an ELF file", path);
		goto fail;
	}
	elf_version(EV_CURRENT);
	img->elf = elf_memory((char *)img->buf, img->len);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &img->eh)) {
		set_err(err, errlen, "%s: corrupt ELF file (%s)", path, elf_errmsg(-1));
		goto fail;
	}
	if (img->eh.e_type != ET_EXEC && img->eh.e_type != ET_DYN) {
		set_err(err, errlen, "%s: not an executable or shared library (ELF type %u)", path,
			(unsigned)img->eh.e_type);
		goto fail;
	}
	return 0;
fail:
	image_close(img);
	return -1;
}

/* Executable PT_LOAD segments, which give file offsets of code addresses. */
static int load_segments(struct ctx *c, char *err, size_t errlen)
{
	size_t n, i;

	if (elf_getphdrnum(c->img->elf, &n)) {
		set_err(err, errlen, "%s: corrupt program headers (%s)", c->path, elf_errmsg(-1));
		return -1;
	}
	if (n > c->img->len / sizeof(Elf32_Phdr)) /* more than the file can hold */
		n = c->img->len / sizeof(Elf32_Phdr);
	c->load = at_xcalloc(n ? n : 1, sizeof(*c->load));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(c->img->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			c->load[c->nload++] = ph;
	}
	return 0;
}

/* File offset of a code address, or -1 if no executable segment holds it. */
static int64_t addr_to_offset(const struct ctx *c, uint64_t addr)
{
	size_t i;

	for (i = 0; i < c->nload; i++) {
		const GElf_Phdr *p = &c->load[i];
		uint64_t off;

		if (addr < p->p_vaddr || addr - p->p_vaddr >= p->p_filesz)
			continue;
		off = addr - p->p_vaddr + p->p_offset;
		if (off < p->p_offset || off >= c->img->len)
			return -1;
		return (int64_t)off;
	}
	return -1;
}

/* ---- Build-id ------------------------------------------------------- */

static bool note_build_id(Elf_Data *d, char *out)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *p = (const uint8_t *)d->d_buf;
		size_t i, n = nh.n_descsz;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(p + name_off, "GNU", 4) || n == 0)
			continue;
		if (n > 32)
			n = 32;
		for (i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", p[desc_off + i]);
		return true;
	}
	return false;
}

/* From the note sections, or the PT_NOTE segments of a section-less file. */
static void read_build_id(struct image *img, char *out)
{
	Elf_Scn *scn = NULL;
	size_t n, i;

	out[0] = '\0';
	while ((scn = elf_nextscn(img->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && note_build_id(d, out))
			return;
	}
	if (elf_getphdrnum(img->elf, &n))
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(img->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && d->d_buf && note_build_id(d, out))
			return;
	}
}

/* ---- Symbols -------------------------------------------------------- */

static Elf_Scn *find_section(Elf *elf, uint32_t type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

/*
 * Whether the section holding a symbol is code we may probe: executable,
 * and not a PLT (.plt, .plt.got, .plt.sec: stubs, not functions).
 */
static bool code_section(Elf *elf, size_t shstrndx, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	const char *name;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
		return false;
	name = elf_strptr(elf, shstrndx, sh.sh_name);
	return !name || strncmp(name, ".plt", 4);
}

/*
 * Whether a symbol is a function entry we can probe. GNU_IFUNC symbols are
 * skipped: their value is the resolver, which runs once at relocation time;
 * the implementations it picks have symbols of their own (in .symtab).
 * "foo.cold" fragments are the unlikely half of a split function, entered
 * by a jump, not a call: a return probe there would corrupt the stack.
 */
static bool wanted(const GElf_Sym *s, const char *name)
{
	size_t len;

	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_size == 0)
		return false;
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return false;
	if (!name || !*name || strstr(name, ".cold"))
		return false;
	len = strlen(name);
	return !(len >= 4 && !strcmp(name + len - 4, "@plt"));
}

static uint8_t bind_rank(uint8_t bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static void add_func(struct ctx *c, const GElf_Sym *s, const char *name, uint64_t off)
{
	struct cand *k;
	size_t n = ENTRY_BYTES;

	if (c->ncands == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->cands = at_xrealloc(c->cands, c->cap, sizeof(*c->cands));
	}
	k = &c->cands[c->ncands++];
	k->rank = bind_rank(GELF_ST_BIND(s->st_info));
	k->f.name = at_xstrdup(name);
	k->f.addr = s->st_value;
	k->f.size = s->st_size;
	k->f.offset = off;
	k->f.start = off;
	k->f.args_offset = off;
	k->f.global = k->rank < 2;
	if (n > c->img->len - off)
		n = c->img->len - off;
	if (n > s->st_size)
		n = (size_t)s->st_size;
	k->f.entry = c->img->eh.e_machine == EM_X86_64 ? at_classify_entry(c->img->buf + off, n)
						       : AT_ENTRY_UNKNOWN;
	k->f.args_entry = k->f.entry;
}

/* Collect the probe-able functions of one symbol table of symelf. */
static void read_symtab(struct ctx *c, Elf *symelf, Elf_Scn *scn)
{
	size_t shstrndx = 0, n, i, entsz = gelf_fsize(symelf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Shdr sh;

	if (!d || !entsz || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(symelf, &shstrndx))
		return;
	n = d->d_size / entsz;
	for (i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		const char *name;
		int64_t off;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		name = elf_strptr(symelf, sh.sh_link, s.st_name);
		if (!wanted(&s, name) || !code_section(symelf, shstrndx, s.st_shndx))
			continue;
		off = addr_to_offset(c, s.st_value);
		if (off >= 0)
			add_func(c, &s, name, (uint64_t)off);
	}
}

/*
 * The .symtab of the separate debug file of a stripped binary, found by
 * build-id as Debian's -dbgsym packages install it. Its section headers
 * mirror the original's, so section checks work on it unchanged; addresses
 * still map through the original file's segments. Debug files can be huge
 * (DWARF), so this one is mapped, not read: only its symbols are touched.
 */
static void read_debug_symtab(struct ctx *c, const char *build_id)
{
	char path[sizeof(DEBUG_DIR) + 80], id[65];
	struct image dbg = {0};
	Elf_Scn *scn;
	int fd;

	if (strlen(build_id) < 4)
		return;
	snprintf(path, sizeof(path), DEBUG_DIR "/%.2s/%s.debug", build_id, build_id + 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	dbg.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (dbg.elf && elf_kind(dbg.elf) == ELF_K_ELF && gelf_getehdr(dbg.elf, &dbg.eh) &&
	    dbg.eh.e_machine == c->img->eh.e_machine) {
		read_build_id(&dbg, id);
		scn = find_section(dbg.elf, SHT_SYMTAB);
		if (scn && !strcmp(id, build_id))
			read_symtab(c, dbg.elf, scn);
	}
	image_close(&dbg);
	close(fd);
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	bool va = strchr(a->f.name, '@'), vb = strchr(b->f.name, '@');
	size_t la = strlen(a->f.name), lb = strlen(b->f.name);

	if (a->f.addr != b->f.addr)
		return a->f.addr < b->f.addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (va != vb) /* "foo@VERSION" names lose to a plain alias */
		return va - vb;
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->f.name, b->f.name);
}

/* Sort by address and keep the preferred name of each address. */
static void merge_aliases(struct ctx *c, struct at_elf *out)
{
	size_t i;

	if (c->ncands)
		qsort(c->cands, c->ncands, sizeof(*c->cands), cand_cmp);
	out->funcs = at_xcalloc(c->ncands ? c->ncands : 1, sizeof(*out->funcs));
	for (i = 0; i < c->ncands; i++) {
		if (out->nfuncs && out->funcs[out->nfuncs - 1].addr == c->cands[i].f.addr) {
			free(c->cands[i].f.name);
			continue;
		}
		out->funcs[out->nfuncs++] = c->cands[i].f;
	}
	free(c->cands);
	c->cands = NULL;
	c->ncands = 0;
}

int at_elf_load(const char *path, struct at_elf *out, char *err, size_t errlen)
{
	struct image img;
	struct ctx c = {.path = path, .img = &img};
	Elf_Scn *scn;

	memset(out, 0, sizeof(*out));
	if (image_open(path, &img, err, errlen))
		return -1;
	if (load_segments(&c, err, errlen)) {
		image_close(&img);
		return -1;
	}
	read_build_id(&img, out->build_id);
	out->pie = img.eh.e_type == ET_DYN;
	scn = find_section(img.elf, SHT_SYMTAB);
	if (scn)
		read_symtab(&c, img.elf, scn);
	if (!c.ncands)
		read_debug_symtab(&c, out->build_id);
	if (!c.ncands) {
		scn = find_section(img.elf, SHT_DYNSYM);
		if (scn)
			read_symtab(&c, img.elf, scn);
		out->from_dynsym = true;
	}
	merge_aliases(&c, out);
	out->path = at_xstrdup(path);
	free(c.load);
	image_close(&img);
	return 0;
}

void at_elf_free(struct at_elf *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->nfuncs; i++)
		free(e->funcs[i].name);
	free(e->funcs);
	free(e->path);
	memset(e, 0, sizeof(*e));
}
