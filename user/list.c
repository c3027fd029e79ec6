// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * adaptrace list: the functions that record would probe with the same
 * options, with their address, size and how costly a probe on their first
 * instruction is.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "symbols.h"
#include "target.h"
#include "placement.h"
#include "usdt.h"
#include "util.h"

static const char usage_text[] =
    "Usage: adaptrace list (-p PID | -b PATH) [-f GLOB]... [-x GLOB]... [-l LIB]...\n"
    "                      [--usdt] [--json]\n"
    "\n"
    "List the functions that 'adaptrace record' with the same options would trace:\n"
    "the function symbols of the target's executable (from .symtab, or .dynsym for a\n"
    "stripped binary, or the .symtab of its debug file in /usr/lib/debug/.build-id)\n"
    "and of the libraries given with -l. Aliases of one address are listed once;\n"
    "size-0 symbols, PLT stubs, GNU ifunc resolvers and '.cold' fragments are left out.\n"
    "\n"
    "Target (exactly one):\n"
    "  -p, --pid PID        the executable of process PID (through /proc/PID/exe)\n"
    "  -b, --binary PATH    an executable or shared library on disk\n"
    "\n"
    "Selection:\n"
    "  -f, --func GLOB      only functions whose name matches GLOB (shell glob, e.g.\n"
    "                       'parse_*'); repeatable; a GLOB matching nothing is an error.\n"
    "                       Default: every function, minus start-up and runtime code\n"
    "                       (_start, _init, frame_dummy, C++ static constructors,\n"
    "                       sanitizer runtimes...)\n"
    "  -x, --exclude GLOB   leave out functions matching GLOB; repeatable\n"
    "  -l, --lib LIB        also list shared library LIB: a path, or a name such as\n"
    "                       'libc' or 'c', matched against the libraries mapped by the\n"
    "                       process (-p) or needed by the binary (-b); repeatable\n"
    "  --usdt               list the USDT probes (.note.stapsdt) of the binaries\n"
    "                       instead: PROVIDER:NAME, locations, semaphore and the\n"
    "                       argument specs (SIZE@OPERAND, negative SIZE = signed);\n"
    "                       -f/-x globs then match PROVIDER:NAME. A probe compiled\n"
    "                       into several places is one probe with several locations\n"
    "  --no-site-opt        show first-instruction sites (as record --no-site-opt)\n"
    "\n"
    "Output:\n"
    "  --json               one JSON object: {\"binaries\":[{\"path\", \"main\", \"build_id\",\n"
    "                       \"pie\", \"symbols\":\"symtab\"|\"dynsym\", \"functions\":[{\"name\",\n"
    "                       \"address\", \"offset\", \"size\", \"entry\"}]}]}; with --usdt\n"
    "                       {\"binaries\":[{\"path\", \"main\", \"probes\":[{\"provider\",\n"
    "                       \"name\", \"semaphore\", \"semaphore_offset\", \"args\":[{\"spec\",\n"
    "                       \"type\"}], \"attachable\", \"locations\":[{\"address\",\n"
    "                       \"offset\"}]}]}]}; attachable is false for a probe with an\n"
    "                       argument libbpf 1.1 cannot decode (index register, symbol)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Each line gives the symbol address (as linked; PIE and libraries are relocated\n"
    "at run time), the size in bytes, the probe SITE (bytes from the function's\n"
    "start), how the kernel runs the probed instruction, WHY the site is there, the\n"
    "binary when there are several, and the name. ENTRY is 'emulated' (push, call,\n"
    "jmp, jcc, nop: about 0.5 us per hit) or 'single-step' (mov, sub, lea, endbr64...:\n"
    "about 9 us per hit). A site moves from a single-stepped first instruction to the\n"
    "first emulated one ('moved') only when no instruction before it moves the stack\n"
    "pointer or writes an argument register or branches, and no branch in the function\n"
    "lands on it or before it; otherwise WHY names the obstacle and its offset:\n"
    "'sp moves', 'arg written', 'control flow', 'branch in', 'no emulated insn',\n"
    "'undecodable'. A summary goes to stderr.\n"
    "\n"
    "Exit status: 0 success; 2 bad usage or input (no such process, missing or\n"
    "non-ELF file, stripped binary, a -f GLOB matching nothing); 3 environment\n"
    "(permission denied: run as root).\n"
    "\n"
    "Examples:\n"
    "  adaptrace list -b ./server -f 'http_*'\n"
    "  adaptrace list -p 1234 -l libc -f 'malloc' -f 'free'\n"
    "  adaptrace list -b /usr/bin/python3.11 --json\n"
    "  adaptrace list --usdt -b /usr/bin/python3.11 -f 'python:function__*'\n"
    "  adaptrace list --usdt -p 1234 -l libstdc++.so.6\n";

static void print_json_bin(const struct at_target_bin *b, FILE *out)
{
	size_t i;

	fputs("{\"path\":", out);
	at_esc_json(out, b->display_path);
	fprintf(out, ",\"main\":%s,\"build_id\":", b->is_main ? "true" : "false");
	at_esc_json(out, b->elf.build_id);
	fprintf(out, ",\"pie\":%s,\"symbols\":\"%s\",\"functions\":[",
		b->elf.pie ? "true" : "false", b->elf.from_dynsym ? "dynsym" : "symtab");
	for (i = 0; i < b->nsel; i++) {
		const struct at_elf_func *f = &b->elf.funcs[b->sel[i]];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		at_esc_json(out, f->name);
		fprintf(out,
			",\"address\":%lu,\"offset\":%lu,\"size\":%lu,\"entry\":\"%s\","
			"\"site\":%lu,\"args_site\":%lu,\"site_reason\":\"%s\"",
			(unsigned long)f->addr, (unsigned long)f->offset, (unsigned long)f->size,
			at_entry_kind_str(f->entry), (unsigned long)(f->offset - f->start),
			(unsigned long)(f->args_offset - f->start), at_site_why_str(f->site_why));
		if (at_site_why_has_at(f->site_why))
			fprintf(out, ",\"site_reason_at\":%u", f->site_at);
		fputc('}', out);
	}
	fputs("]}", out);
}

static void print_json(const struct at_target *t, FILE *out)
{
	size_t i;

	fputs("{\"binaries\":[", out);
	for (i = 0; i < t->nbins; i++) {
		if (i)
			fputs(",\n", out);
		print_json_bin(&t->bins[i], out);
	}
	fputs("]}\n", out);
}

static void print_plain(const struct at_target *t, FILE *out)
{
	size_t i, j, width = 6, nsstep = 0, nrefused = 0, nbins = 0, nmoved = 0;
	bool multi = t->nbins > 1;

	for (i = 0; i < t->nbins; i++) {
		if (strlen(at_base_name(t->bins[i].display_path)) > width)
			width = strlen(at_base_name(t->bins[i].display_path));
	}
	fprintf(out, "%-18s %8s  %-5s %-11s  %-25s  ", "ADDRESS", "SIZE", "SITE", "ENTRY", "WHY");
	if (multi)
		fprintf(out, "%-*s  ", (int)width, "BINARY");
	fputs("NAME\n", out);
	for (i = 0; i < t->nbins; i++) {
		const struct at_target_bin *b = &t->bins[i];

		nbins += b->nsel > 0;
		for (j = 0; j < b->nsel; j++) {
			const struct at_elf_func *f = &b->elf.funcs[b->sel[j]];

			nsstep += f->entry == AT_ENTRY_SSTEP;
			nmoved += f->offset != f->start;
			nrefused += f->entry == AT_ENTRY_REFUSED;
			char site[16], why[48];

			snprintf(site, sizeof(site), "+%lu", (unsigned long)(f->offset - f->start));
			if (at_site_why_has_at(f->site_why))
				snprintf(why, sizeof(why), "%s (+0x%x)",
					 at_site_why_str(f->site_why), f->site_at);
			else
				snprintf(why, sizeof(why), "%s", at_site_why_str(f->site_why));
			fprintf(out, "0x%016lx %8lu  %-5s %-11s  %-25s  ", (unsigned long)f->addr,
				(unsigned long)f->size, site, at_entry_kind_str(f->entry), why);
			if (multi) {
				char bin[256];

				fprintf(out, "%-*s  ", (int)width,
					at_esc_text_buf(bin, sizeof(bin),
							at_base_name(b->display_path)));
			}
			at_esc_text(out, f->name, 0);
			fputc('\n', out);
		}
	}
	fflush(out);
	fprintf(stderr,
		"%zu function%s in %zu binar%s; %zu probe site%s moved to avoid single-stepping; "
		"%zu still single-stepped",
		t->nsel, t->nsel == 1 ? "" : "s", nbins, nbins == 1 ? "y" : "ies", nmoved,
		nmoved == 1 ? "" : "s", nsstep);
	if (nrefused)
		fprintf(stderr, "; %zu the kernel cannot probe", nrefused);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	at_err("list: %s; see 'adaptrace list --help'", msg);
	return AT_EXIT_USAGE;
}

enum { OPT_USDT = 256, OPT_JSON, OPT_NO_SITE_OPT };

static const struct option long_opts[] = {
    {"pid", required_argument, NULL, 'p'},  {"binary", required_argument, NULL, 'b'},
    {"func", required_argument, NULL, 'f'}, {"exclude", required_argument, NULL, 'x'},
    {"lib", required_argument, NULL, 'l'},  {"usdt", no_argument, NULL, OPT_USDT},
    {"json", no_argument, NULL, OPT_JSON},  {"no-site-opt", no_argument, NULL, OPT_NO_SITE_OPT},
    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
};

/* Parse argv into o; returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct at_target_opts *o, bool *json, bool *usdt)
{
	int c;

	optind = 0; /* full getopt reset: another command may have parsed before */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:b:f:x:l:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!at_parse_pid(optarg, &o->pid))
				return usage_error("invalid PID '%s' (a positive number)", optarg);
			break;
		case 'b':
			o->binary = optarg;
			break;
		case 'f':
			at_strv_push(&o->include, optarg);
			break;
		case 'x':
			at_strv_push(&o->exclude, optarg);
			break;
		case 'l':
			at_strv_push(&o->libs, optarg);
			break;
		case OPT_USDT:
			*usdt = true;
			break;
		case OPT_JSON:
			*json = true;
			break;
		case OPT_NO_SITE_OPT:
			o->no_site_opt = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return AT_EXIT_OK;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->pid == !o->binary)
		return usage_error("give exactly one of -p PID and -b PATH");
	return -1;
}

static int list_target(const struct at_target_opts *o, bool json)
{
	struct at_target t;
	char err[AT_ERRLEN];
	int rc;

	rc = at_target_resolve(o, &t, err, sizeof(err));
	if (rc) {
		at_err("%s", err);
		return rc;
	}
	if (json)
		print_json(&t, stdout);
	else
		print_plain(&t, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		at_err("list: cannot write the output");
		rc = AT_EXIT_ENV;
	}
	at_target_free(&t);
	return rc;
}

/* A probe (one or more consecutive locations) passes the -f/-x globs. */
static bool usdt_selected(const struct at_target_opts *o, const struct at_usdt_probe *p,
			  size_t *hits)
{
	char full[512];
	bool in = !o->include.n;

	snprintf(full, sizeof(full), "%s:%s", p->provider, p->name);
	for (size_t g = 0; g < o->include.n; g++)
		if (at_glob_match(o->include.v[g], full)) {
			hits[g]++;
			in = true;
		}
	for (size_t g = 0; g < o->exclude.n && in; g++)
		in = !at_glob_match(o->exclude.v[g], full);
	return in;
}

/* Locations [i, *end) belong to one probe. */
static size_t probe_end(const struct at_usdt_set *s, size_t i)
{
	size_t j = i + 1;

	while (j < s->n && !strcmp(s->p[j].provider, s->p[i].provider) &&
	       !strcmp(s->p[j].name, s->p[i].name))
		j++;
	return j;
}

/* libbpf 1.1 attaches no probe with an index-register or symbol operand. */
static bool attachable(const struct at_usdt_set *s, size_t i, size_t end)
{
	for (size_t j = i; j < end; j++)
		for (uint32_t a = 0; a < s->p[j].nargs; a++)
			if (!at_usdt_arg_decodable(&s->p[j].args[a]))
				return false;
	return true;
}

/* The next space-separated argument spec of t into buf; returns the rest. */
static const char *next_spec(const char *t, char *buf, size_t len)
{
	size_t l;

	while (*t == ' ')
		t++;
	l = strcspn(t, " ");
	snprintf(buf, len, "%.*s", (int)l, t);
	return t + l;
}

static void usdt_json_probe(FILE *out, const struct at_usdt_set *s, size_t i, size_t end)
{
	const struct at_usdt_probe *p = &s->p[i];

	fputs("{\"provider\":", out);
	at_esc_json(out, p->provider);
	fputs(",\"name\":", out);
	at_esc_json(out, p->name);
	fprintf(out, ",\"semaphore\":%s,\"semaphore_offset\":%lu,\"args\":[",
		p->sema ? "true" : "false", (unsigned long)p->sema_offset);
	if (p->args_ok) {
		char spec[128];
		const char *t = p->args_text;

		for (uint32_t a = 0; a < p->nargs; a++) {
			t = next_spec(t, spec, sizeof(spec));
			fputs(a ? ",{\"spec\":" : "{\"spec\":", out);
			at_esc_json(out, spec);
			fprintf(out, ",\"type\":\"%s\"}", at_usdt_arg_type(&p->args[a]));
		}
	}
	fprintf(out, "],\"attachable\":%s,\"locations\":[",
		attachable(s, i, end) ? "true" : "false");
	for (size_t j = i; j < end; j++)
		fprintf(out, "%s{\"address\":%lu,\"offset\":%lu}", j > i ? "," : "",
			(unsigned long)s->p[j].pc, (unsigned long)s->p[j].offset);
	fputs("]}", out);
}

static void usdt_plain_probe(FILE *out, const struct at_usdt_set *s, size_t i, size_t end,
			     const char *bin)
{
	const struct at_usdt_probe *p = &s->p[i];
	char full[512], shown[512], sema[32] = "-";

	snprintf(full, sizeof(full), "%s:%s", p->provider, p->name);
	if (p->sema)
		snprintf(sema, sizeof(sema), "0x%lx", (unsigned long)p->sema_offset);
	fprintf(out, "%-36s %4zu  %-10s  ", at_esc_text_buf(shown, sizeof(shown), full), end - i,
		sema);
	if (bin) {
		at_esc_text(out, bin, 0);
		fputs("  ", out);
	}
	if (!p->args_ok) {
		at_esc_text(out, p->args_text, 0);
		fputs(" (unparsed)\n", out);
	} else if (!p->nargs) {
		fputs("(none)\n", out);
	} else {
		const char *t = p->args_text;
		char spec[128];

		for (uint32_t a = 0; a < p->nargs; a++) {
			t = next_spec(t, spec, sizeof(spec));
			fprintf(out, "%sarg%u:%s=", a ? " " : "", a + 1,
				at_usdt_arg_type(&p->args[a]));
			at_esc_text(out, spec, 0);
		}
		fputs(attachable(s, i, end) ? "\n" : "  (libbpf cannot decode: not attachable)\n",
		      out);
	}
}

/* list --usdt: the probes of every binary of the target. */
static int list_usdt(struct at_target_opts *o, bool json)
{
	struct at_target t;
	char err[AT_ERRLEN];
	size_t *hits = at_xcalloc(o->include.n + 1, sizeof(*hits));
	size_t nprobes = 0, nbins_notes = 0;
	int rc;

	o->no_funcs = true;
	rc = at_target_resolve(o, &t, err, sizeof(err));
	if (rc) {
		at_err("%s", err);
		free(hits);
		return rc;
	}
	if (json)
		fputs("{\"binaries\":[", stdout);
	else
		fprintf(stdout, "%-36s %4s  %-10s  %s%s\n", "PROBE", "LOCS", "SEMAPHORE",
			t.nbins > 1 ? "BINARY  " : "", "ARGUMENTS");
	for (size_t b = 0; b < t.nbins && !rc; b++) {
		const struct at_target_bin *tb = &t.bins[b];
		struct at_usdt_set s;
		bool first = true;

		if (at_usdt_load(tb->attach_path, &s, err, sizeof(err))) {
			at_err("%s", err);
			rc = AT_EXIT_USAGE;
			break;
		}
		nbins_notes += s.n > 0;
		if (json) {
			fputs(b ? ",\n{\"path\":" : "{\"path\":", stdout);
			at_esc_json(stdout, tb->display_path);
			fprintf(stdout, ",\"main\":%s,\"probes\":[",
				tb->is_main ? "true" : "false");
		}
		for (size_t i = 0, end; i < s.n; i = end) {
			end = probe_end(&s, i);
			if (!usdt_selected(o, &s.p[i], hits))
				continue;
			nprobes++;
			if (json) {
				fputs(first ? "\n" : ",\n", stdout);
				usdt_json_probe(stdout, &s, i, end);
			} else {
				usdt_plain_probe(stdout, &s, i, end,
						 t.nbins > 1 ? at_base_name(tb->display_path)
							     : NULL);
			}
			first = false;
		}
		if (json)
			fputs("]}", stdout);
		at_usdt_free(&s);
	}
	if (json && !rc)
		fputs("]}\n", stdout);
	fflush(stdout);
	for (size_t g = 0; g < o->include.n && !rc; g++)
		if (!hits[g]) {
			at_err("-f '%s' matches no USDT probe (PROVIDER:NAME) in %s%s",
			       o->include.v[g], t.bins[0].display_path,
			       t.nbins > 1 ? " or its -l libraries" : "");
			rc = AT_EXIT_USAGE;
		}
	if (!rc && !nbins_notes) {
		at_err("%s%s has no USDT probes (no .note.stapsdt section); USDT probes come from "
		       "<sys/sdt.h> (DTRACE_PROBE/STAP_PROBE) in the program's sources",
		       t.bins[0].display_path, t.nbins > 1 ? " and its -l libraries" : "");
		rc = AT_EXIT_USAGE;
	}
	if (!rc && !json)
		fprintf(stderr, "%zu USDT probe%s\n", nprobes, nprobes == 1 ? "" : "s");
	free(hits);
	at_target_free(&t);
	return rc;
}

int cmd_list(int argc, char **argv)
{
	struct at_target_opts o = {0};
	bool json = false, usdt = false;
	int rc;

	rc = parse_args(argc, argv, &o, &json, &usdt);
	if (rc < 0)
		rc = usdt ? list_usdt(&o, json) : list_target(&o, json);
	at_strv_free(&o.include);
	at_strv_free(&o.exclude);
	at_strv_free(&o.libs);
	return rc;
}
