// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT unit tests: argument specs, -u specs, notes of a small executable
 * (and a copy whose note says it was prelinked), broken inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracefile.h"
#include "usdt.h"
#include "util.h"
#include "check.h"

/* The seed corpus, found from this program's place: tests/build/unit/. */
static char corpus[4096];
#define CORPUS corpus_path

static const char *corpus_path(const char *name)
{
	static char buf[8][4200];
	static int k;
	char *b = buf[k++ % 8];

	snprintf(b, sizeof(buf[0]), "%s/%s", corpus, name);
	return b;
}

static void find_corpus(void)
{
	ssize_t n = readlink("/proc/self/exe", corpus, sizeof(corpus) - 64);
	char *slash;

	corpus[n > 0 ? n : 0] = 0;
	for (int i = 0; i < 3 && (slash = strrchr(corpus, '/')); i++)
		*slash = 0; /* drop test_usdt, unit, build */
	strcat(corpus, "/fuzz/corpus/usdt");
}

static void test_args(void)
{
	struct at_usdt_arg a[AT_USDT_MAX_ARGS];
	char err[128];
	uint32_t n = 0;
	bool ok;

	ok = at_usdt_parse_args("-4@%eax 8@16(%rbp) -8@$-5 8@sym+8(%rip) 4@-4(%rbp,%rax,4) 1@%r8b",
				a, &n, err, sizeof(err));
	check(ok && n == 6, "args: six specs parse");
	check(a[0].op == AT_USDT_OP_REG && a[0].size == 4 && a[0].is_signed &&
		  !strcmp(a[0].base, "eax"),
	      "args: -4@%eax is a signed 32-bit register");
	check(a[1].op == AT_USDT_OP_MEM && a[1].size == 8 && !a[1].is_signed && a[1].disp == 16 &&
		  !strcmp(a[1].base, "rbp"),
	      "args: 8@16(%rbp) is memory at rbp+16");
	check(a[2].op == AT_USDT_OP_IMM && a[2].disp == -5, "args: -8@$-5 is an immediate");
	check(a[3].op == AT_USDT_OP_MEM && a[3].symbolic && a[3].disp == 8 &&
		  !strcmp(a[3].base, "rip"),
	      "args: 8@sym+8(%rip) is rip-relative with offset 8");
	check(a[4].disp == -4 && !strcmp(a[4].index, "rax") && a[4].scale == 4,
	      "args: index register and scale");
	check(!strcmp(at_usdt_arg_type(&a[0]), "s32") && !strcmp(at_usdt_arg_type(&a[1]), "u64") &&
		  !strcmp(at_usdt_arg_type(&a[5]), "u8"),
	      "args: type names");
	check(at_usdt_arg_decodable(&a[0]) && at_usdt_arg_decodable(&a[1]) &&
		  at_usdt_arg_decodable(&a[2]) && !at_usdt_arg_decodable(&a[3]) &&
		  !at_usdt_arg_decodable(&a[4]),
	      "args: what libbpf 1.1 decodes");
	check(at_usdt_parse_args("", a, &n, err, sizeof(err)) && n == 0, "args: empty string");
	check(!at_usdt_parse_args("3@%eax", a, &n, err, sizeof(err)) && err[0],
	      "args: size 3 rejected");
	check(!at_usdt_parse_args("8@16(%rbp", a, &n, err, sizeof(err)), "args: unclosed paren");
	check(!at_usdt_parse_args("8@sym(%rbp)", a, &n, err, sizeof(err)),
	      "args: symbol needs %rip");
	check(!at_usdt_parse_args("4@%eax 4@%eax 4@%eax 4@%eax 4@%eax 4@%eax 4@%eax 4@%eax 4@%eax "
				  "4@%eax 4@%eax 4@%eax 4@%eax",
				  a, &n, err, sizeof(err)),
	      "args: at most 12");
}

static void test_specs(void)
{
	struct at_usdt_spec s;
	char err[256];

	check(at_usdt_spec_parse("python:*", &s, err, sizeof(err)) && !s.keyed &&
		  !strcmp(s.name, "*"),
	      "spec: counted glob");
	at_usdt_spec_free(&s);
	check(at_usdt_spec_parse("python:function__entry+function__return(arg1:str, arg2:str)", &s,
				 err, sizeof(err)) &&
		  s.keyed && s.nkeys == 2 && !strcmp(s.ret_name, "function__return") &&
		  s.key_arg[0] == 0 && s.key_arg[1] == 1 && s.key_type[1] == AT_USDT_KEY_STR,
	      "spec: pair with two string keys");
	at_usdt_spec_free(&s);
	check(at_usdt_spec_parse("a:b+c", &s, err, sizeof(err)) && s.keyed && s.nkeys == 0,
	      "spec: pair without keys");
	at_usdt_spec_free(&s);
	check(at_usdt_spec_parse("a:b(arg12:uint,arg2:int,arg3:ptr)", &s, err, sizeof(err)) &&
		  s.key_arg[0] == 11 && s.key_type[0] == AT_USDT_KEY_UINT &&
		  s.key_type[2] == AT_USDT_KEY_PTR,
	      "spec: integer keys");
	at_usdt_spec_free(&s);
	check(!at_usdt_spec_parse("nocolon", &s, err, sizeof(err)) && !s.provider,
	      "spec: PROVIDER:NAME needed");
	check(!at_usdt_spec_parse("a:b()", &s, err, sizeof(err)), "spec: empty key list");
	check(!at_usdt_spec_parse("a:b(arg0:int)", &s, err, sizeof(err)), "spec: arg0 rejected");
	check(!at_usdt_spec_parse("a:b(arg13:int)", &s, err, sizeof(err)), "spec: arg13 rejected");
	check(!at_usdt_spec_parse("a:b(arg1:float)", &s, err, sizeof(err)) && strstr(err, "TYPE"),
	      "spec: bad type");
	check(!at_usdt_spec_parse("a:b*(arg1:int)", &s, err, sizeof(err)),
	      "spec: no glob if keyed");
	check(!at_usdt_spec_parse("a:b(arg1:int,arg2:int,arg3:int,arg4:int,arg5:int)", &s, err,
				  sizeof(err)),
	      "spec: at most 4 keys");
	check(!at_usdt_spec_parse("a:b(arg1:int", &s, err, sizeof(err)), "spec: unclosed");
}

static const struct at_usdt_probe *find(const struct at_usdt_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->p[i].name, name))
			return &s->p[i];
	return NULL;
}

static void test_notes(void)
{
	struct at_usdt_set s, pl;
	const struct at_usdt_probe *p, *q;
	char err[256];

	check(at_usdt_load(CORPUS("mini_exec"), &s, err, sizeof(err)) == 0 && s.n == 2 &&
		  s.has_notes,
	      "notes: two probes in mini_exec");
	p = find(&s, "p");
	q = find(&s, "q");
	check(p && !strcmp(p->provider, "mini") && p->nargs == 2 && p->args_ok &&
		  p->args[0].is_signed && p->args[0].size == 4,
	      "notes: mini:p has (s32, u64)");
	check(p && p->offset == p->pc - 0x400000 && !p->sema, "notes: pc to file offset");
	check(q && q->nargs == 0 && q->pc == p->pc + 1, "notes: mini:q follows");
	check(s.entry_offset != 0, "notes: entry point offset");

	check(at_usdt_load(CORPUS("mini_prelinked"), &pl, err, sizeof(err)) == 0 && pl.n == 2,
	      "prelink: notes read");
	q = find(&pl, "q");
	check(q && p && q->pc == p->pc && q->offset == p->offset,
	      "prelink: pc moved by .stapsdt.base minus the note's base");
	at_usdt_free(&pl);
	at_usdt_free(&s);

	check(at_usdt_load(CORPUS("sdt_stripped"), &s, err, sizeof(err)) == 0, "sdt: notes read");
	p = find(&s, "tick");
	check(p && p->sema && p->sema_offset && p->nargs == 4,
	      "sdt: tick has a semaphore and 4 args");
	{
		size_t inl = 0;

		for (size_t i = 0; i < s.n; i++)
			inl += !strcmp(s.p[i].name, "inl");
		check(inl == 3, "sdt: inlined probe has 3 locations");
	}
	at_usdt_free(&s);

	check(at_usdt_load(CORPUS("mini_reloc"), &s, err, sizeof(err)) == 0 && s.has_notes,
	      "relocatable object: read through sections");
	at_usdt_free(&s);
	check(at_usdt_load(CORPUS("args_all"), &s, err, sizeof(err)) == -1 && strstr(err, "ELF"),
	      "not ELF: error");
	check(at_usdt_load("/nonexistent", &s, err, sizeof(err)) == -1, "missing file: error");
	check(at_usdt_load_mem("\177ELF", 4, &s, err, sizeof(err)) == -1, "truncated ELF: error");
}

/* USDT rows survive the trace file: kind, provider, probe and key values. */
static void test_tracefile(void)
{
	char path[] = "/tmp/adaptrace-test-usdt.XXXXXX", err[256];
	struct at_kv kv = {"target", "x"};
	struct at_binary bin = {"/usr/bin/python3.11", ""};
	struct at_arg keys[2] = {{.type = AT_ARG_STR, .truncated = true, .v = 0x1000, .str = "fib"},
				 {.type = AT_ARG_INT, .v = (uint64_t)-7}};
	struct at_symbol syms[3] = {
	    {.id = 0, .kind = AT_SYM_FUNC, .name = "main"},
	    {.id = 1,
	     .kind = AT_SYM_USDT,
	     .name = "python:line",
	     .provider = "python",
	     .probe = "line"},
	};
	struct at_symbol key = {.id = 2,
				.kind = AT_SYM_USDT_KEY,
				.name = "python:f[fib...,-7]",
				.provider = "python",
				.probe = "function__entry",
				.nkeys = 2,
				.keys = keys};
	struct at_writer *w;
	struct at_trace t;
	int fd = mkstemp(path);

	close(fd);
	w = at_writer_open(path, err, sizeof(err));
	check(w && !at_writer_header(w, &kv, 1, &bin, 1) && !at_writer_symbols(w, syms, 2) &&
		  !at_writer_symbols(w, &key, 1) && !at_writer_close(w),
	      "tracefile: USDT rows written, the keyed one appended later");
	check(at_trace_read(path, &t, false, err, sizeof(err)) == 0 && t.nsyms == 3,
	      "tracefile: read back");
	if (t.nsyms == 3) {
		check(t.syms[0].kind == AT_SYM_FUNC && !t.syms[0].provider,
		      "tracefile: function row");
		check(t.syms[1].kind == AT_SYM_USDT && !strcmp(t.syms[1].provider, "python") &&
			  !strcmp(t.syms[1].probe, "line"),
		      "tracefile: counted row");
		check(t.syms[2].kind == AT_SYM_USDT_KEY && t.syms[2].nkeys == 2 &&
			  !strcmp(t.syms[2].keys[0].str, "fib") && t.syms[2].keys[0].truncated &&
			  t.syms[2].keys[0].v == 0x1000 && (int64_t)t.syms[2].keys[1].v == -7 &&
			  !t.syms[2].keys[1].str,
		      "tracefile: keyed row with its keys");
	}
	at_trace_free(&t);
	unlink(path);
	{
		char old[sizeof(path) + 8];

		snprintf(old, sizeof(old), "%s.old", path);
		unlink(old);
	}
}

int main(void)
{
	find_corpus();
	test_args();
	test_specs();
	test_notes();
	test_tracefile();
	printf("# test_usdt: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
