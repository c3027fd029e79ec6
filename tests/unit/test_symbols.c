// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF symbol reader unit tests: entry instruction classes, our own
 * executable (main and a static function, offsets checked against the
 * code in memory), a shared library, broken inputs, start-up noise.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"
#include "util.h"
#include "check.h"

int main(void);

/* A static function that must keep its own symbol and body. */
static __attribute__((noinline, used)) int local_helper(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 3;
}

static const struct at_elf_func *find(const struct at_elf *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nfuncs; i++)
		if (!strcmp(e->funcs[i].name, name))
			return &e->funcs[i];
	return NULL;
}

#define CLASSIFY(kind, ...)                                                                        \
	do {                                                                                       \
		static const uint8_t c_[] = {__VA_ARGS__};                                         \
		check(at_classify_entry(c_, sizeof(c_)) == (kind), "classify " #__VA_ARGS__);      \
	} while (0)

static void test_classify(void)
{
	/* Emulated by the kernel: push, call, jmp, jcc, nop. */
	CLASSIFY(AT_ENTRY_EMULATED, 0x55);			   /* push %rbp */
	CLASSIFY(AT_ENTRY_EMULATED, 0x53);			   /* push %rbx */
	CLASSIFY(AT_ENTRY_EMULATED, 0x41, 0x57);		   /* push %r15 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x41, 0x54);		   /* push %r12 */
	CLASSIFY(AT_ENTRY_EMULATED, 0xe8, 0, 0, 0, 0);		   /* call */
	CLASSIFY(AT_ENTRY_EMULATED, 0xe9, 0, 0, 0, 0);		   /* jmp rel32 */
	CLASSIFY(AT_ENTRY_EMULATED, 0xeb, 0x10);		   /* jmp rel8 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x74, 0x05);		   /* je rel8 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x7f, 0x05);		   /* jg rel8 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x0f, 0x84, 1, 0, 0, 0);	   /* je rel32 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x0f, 0x8f, 1, 0, 0, 0);	   /* jg rel32 */
	CLASSIFY(AT_ENTRY_EMULATED, 0x90);			   /* nop */
	CLASSIFY(AT_ENTRY_EMULATED, 0x66, 0x90);		   /* xchg %ax,%ax */
	CLASSIFY(AT_ENTRY_EMULATED, 0x0f, 0x1f, 0x44, 0, 0);	   /* 5-byte nop */
	CLASSIFY(AT_ENTRY_EMULATED, 0x0f, 0x1f, 0x00);		   /* nopl (%rax) */
	CLASSIFY(AT_ENTRY_EMULATED, 0x66, 0x0f, 0x1f, 0x44, 0, 0); /* 6-byte nop */
	CLASSIFY(AT_ENTRY_EMULATED, 0xf2, 0xe9, 0, 0, 0, 0);	   /* bnd jmp */
	/* Single-stepped: everything else. */
	CLASSIFY(AT_ENTRY_SSTEP, 0xf3, 0x0f, 0x1e, 0xfa);	/* endbr64 */
	CLASSIFY(AT_ENTRY_SSTEP, 0x48, 0x89, 0xe5);		/* mov %rsp,%rbp */
	CLASSIFY(AT_ENTRY_SSTEP, 0x48, 0x83, 0xec, 0x18);	/* sub $0x18,%rsp */
	CLASSIFY(AT_ENTRY_SSTEP, 0x48, 0x8d, 0x05, 0, 0, 0, 0); /* lea */
	CLASSIFY(AT_ENTRY_SSTEP, 0xc3);				/* ret */
	CLASSIFY(AT_ENTRY_SSTEP, 0x31, 0xc0);			/* xor %eax,%eax */
	CLASSIFY(AT_ENTRY_SSTEP, 0xf3, 0x90);			/* pause */
	CLASSIFY(AT_ENTRY_SSTEP, 0x41, 0x90);			/* xchg %eax,%r8d */
	CLASSIFY(AT_ENTRY_SSTEP, 0x66, 0x55);			/* push %bp: 16-bit */
	CLASSIFY(AT_ENTRY_SSTEP, 0x66, 0xe8, 0, 0);		/* callw: refused */
	CLASSIFY(AT_ENTRY_SSTEP, 0x0f, 0x1f, 0x48, 0);		/* 0f 1f /1: not a nop */
	CLASSIFY(AT_ENTRY_SSTEP, 0xff, 0x25, 0, 0, 0, 0);	/* jmp *mem */
	CLASSIFY(AT_ENTRY_SSTEP, 0x0f);				/* truncated */
	CLASSIFY(AT_ENTRY_SSTEP, 0x41);				/* truncated */
	check(at_classify_entry(NULL, 0) == AT_ENTRY_UNKNOWN, "classify nothing");
	check(!strcmp(at_entry_kind_str(AT_ENTRY_EMULATED), "emulated") &&
		  !strcmp(at_entry_kind_str(AT_ENTRY_SSTEP), "single-step") &&
		  !strcmp(at_entry_kind_str(AT_ENTRY_UNKNOWN), "unknown"),
	      "entry kind names");
}

/* The file bytes at f's offset are the code at its address in memory. */
static bool bytes_match(const char *path, const struct at_elf_func *f, const void *code)
{
	uint8_t buf[16];
	size_t n = f->size < sizeof(buf) ? (size_t)f->size : sizeof(buf);
	int fd = open(path, O_RDONLY);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, buf, n, (off_t)f->offset) == (ssize_t)n && !memcmp(buf, code, n);
	close(fd);
	return ok;
}

static bool sorted_unique(const struct at_elf *e)
{
	size_t i;

	for (i = 1; i < e->nfuncs; i++)
		if (e->funcs[i].addr <= e->funcs[i - 1].addr)
			return false;
	for (i = 0; i < e->nfuncs; i++)
		if (!e->funcs[i].size || !e->funcs[i].name[0])
			return false;
	return true;
}

static void test_self(void)
{
	const struct at_elf_func *m, *h;
	struct at_elf e;
	char err[AT_ERRLEN] = "";
	int rc;

	rc = at_elf_load("/proc/self/exe", &e, err, sizeof(err));
	check(rc == 0, "load /proc/self/exe");
	if (rc) {
		fprintf(stderr, "# %s\n", err);
		return;
	}
	m = find(&e, "main");
	h = find(&e, "local_helper");
	check(!e.from_dynsym, "own binary: symbols from .symtab");
	check(strlen(e.build_id) == 40, "own binary: 20-byte build-id");
	check(m && m->global, "own binary: main found, global");
	check(h && !h->global, "own binary: static function found, local");
	check(sorted_unique(&e), "own binary: sorted, no aliases, no size 0");
	if (!m || !h)
		return;
	/* One load bias for both: symbol addresses are link-time addresses. */
	check((uintptr_t)(void *)main - m->addr == (uintptr_t)(void *)local_helper - h->addr,
	      "own binary: addresses share the load bias");
	check(bytes_match("/proc/self/exe", m, (const void *)main), "own binary: main offset");
	check(bytes_match("/proc/self/exe", h, (const void *)local_helper),
	      "own binary: static function offset");
	check(m->entry != AT_ENTRY_UNKNOWN, "own binary: main entry classified");
	check(local_helper(1) == 10, "static function works");
	at_elf_free(&e);
}

static void test_shared_lib(void)
{
	static const char *const libs[] = {
	    "/lib/x86_64-linux-gnu/libz.so.1",
	    "/usr/lib/x86_64-linux-gnu/libz.so.1",
	    "/lib64/libz.so.1",
	};
	const struct at_elf_func *f;
	const char *path = NULL;
	struct at_elf e;
	char err[AT_ERRLEN];
	size_t i;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]) && !path; i++)
		if (!access(libs[i], R_OK))
			path = libs[i];
	if (!path) {
		check(true, "shared library: # SKIP no libz.so.1");
		return;
	}
	check(at_elf_load(path, &e, err, sizeof(err)) == 0, "shared library: loads");
	check(e.pie, "shared library: ET_DYN");
	check(e.nfuncs > 20, "shared library: has functions");
	check(sorted_unique(&e), "shared library: sorted, unique");
	f = find(&e, "inflate");
	check(f && f->global, "shared library: exports inflate");
	check(f && f->offset < 16 << 20, "shared library: offset inside the file");
	at_elf_free(&e);
}

static void test_bad_files(void)
{
	char dir[] = "/tmp/at-test-symbols-XXXXXX", path[64], err[AT_ERRLEN];
	static const char text[] = "#!/bin/sh\necho not an ELF\n";
	struct at_elf e;
	FILE *f;

	if (!mkdtemp(dir)) {
		check(false, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/script", dir);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	err[0] = '\0';
	check(at_elf_load(path, &e, err, sizeof(err)) == -1, "non-ELF file fails");
	check(strstr(err, "not an ELF file") && !strchr(err, '\n'),
	      "non-ELF file: one-line reason");
	check(!e.funcs && !e.nfuncs && !e.path, "non-ELF file: output left empty");
	unlink(path);

	/* A truncated ELF header. */
	f = fopen(path, "w");
	if (f) {
		fwrite("\177ELF\002\001\001", 1, 7, f);
		fclose(f);
	}
	err[0] = '\0';
	check(at_elf_load(path, &e, err, sizeof(err)) == -1 && err[0], "truncated ELF fails");
	unlink(path);

	snprintf(path, sizeof(path), "%s/missing", dir);
	err[0] = '\0';
	check(at_elf_load(path, &e, err, sizeof(err)) == -1, "missing file fails");
	check(strstr(err, "No such file") != NULL, "missing file: says so");
	check(at_elf_load(dir, &e, err, sizeof(err)) == -1, "directory fails");
	rmdir(dir);
	at_elf_free(&e); /* harmless on an empty result */
}

static void test_noise(void)
{
	static const char *const noise[] = {
	    "_start",
	    "_init",
	    "_fini",
	    "frame_dummy",
	    "register_tm_clones",
	    "deregister_tm_clones",
	    "__do_global_dtors_aux",
	    "__libc_csu_init",
	    "__libc_csu_fini",
	    "_dl_relocate_static_pie",
	    "__x86.get_pc_thunk.bx",
	    "_GLOBAL__sub_I_main.cpp",
	    "__asan_init",
	};
	static const char *const real[] = {
	    "main",    "start", "_start_server",     "init", "frame_dummy2", "my_init",
	    "_fini_x", "parse", "__libc_start_main",
	};
	size_t i;
	bool ok = true;

	for (i = 0; i < sizeof(noise) / sizeof(noise[0]); i++)
		ok &= at_is_startup_noise(noise[i]);
	check(ok, "start-up noise recognised");
	ok = true;
	for (i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		ok &= !at_is_startup_noise(real[i]);
	check(ok, "real functions are not noise");
	check(!at_is_startup_noise(NULL), "NULL is not noise");
}

int main(void)
{
	test_classify();
	test_self();
	test_shared_lib();
	test_bad_files();
	test_noise();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
