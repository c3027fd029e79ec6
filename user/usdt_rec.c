// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* USDT probes in a recording; see usdt_rec.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "escape.h"
#include "adaptrace.h"
#include "usdt.h"
#include "usdt.skel.h"
#include "usdt_rec.h"
#include "util.h"

/* A probe counted as a whole, in one binary. */
struct counted {
	size_t bin;
	const struct at_usdt_probe *p; /* first location */
	uint32_t id;
};

/* A keyed (or paired) spec in one binary; its index is the BPF spec index. */
struct keyed {
	size_t bin;
	const struct at_usdt_spec *spec;
	const struct at_usdt_probe *entry, *ret;
};

struct at_usdt_rec {
	struct at_usdt_spec *specs;
	size_t nspecs;
	const struct at_target *tgt;
	struct at_usdt_set *sets; /* per binary */
	struct counted *counted;
	size_t ncounted;
	struct keyed *keyed;
	size_t nkeyed;
	uint32_t row_base, key_base;
	uint32_t nslots; /* slots turned into rows */
	struct usdt_bpf *skel;
	bool empty;
	struct bpf_link **links;
	size_t nlinks;
	size_t nprobes;
};

int at_usdtrec_new(const struct at_strv *specs, struct at_usdt_rec **out, char *err, size_t errlen)
{
	struct at_usdt_rec *u = at_xcalloc(1, sizeof(*u));
	char why[AT_ERRLEN];

	u->specs = at_xcalloc(specs->n, sizeof(*u->specs));
	for (size_t i = 0; i < specs->n; i++) {
		if (!at_usdt_spec_parse(specs->v[i], &u->specs[i], why, sizeof(why))) {
			snprintf(err, errlen,
				 "-u %s; the forms are PROVIDER:NAME, PROVIDER:NAME(argN:TYPE,...) "
				 "and PROVIDER:ENTRY+RETURN[(argN:TYPE,...)] (see record --help)",
				 why);
			u->nspecs = i;
			at_usdtrec_free(u);
			return AT_EXIT_USAGE;
		}
	}
	u->nspecs = specs->n;
	*out = u;
	return AT_EXIT_OK;
}

void at_usdtrec_free(struct at_usdt_rec *u)
{
	if (!u)
		return;
	at_usdtrec_detach(u);
	usdt_bpf__destroy(u->skel);
	for (size_t i = 0; i < u->nspecs; i++)
		at_usdt_spec_free(&u->specs[i]);
	free(u->specs);
	if (u->tgt)
		for (size_t b = 0; b < u->tgt->nbins; b++)
			at_usdt_free(&u->sets[b]);
	free(u->sets);
	free(u->counted);
	free(u->keyed);
	free(u);
}

static bool same_probe(const struct at_usdt_probe *a, const struct at_usdt_probe *b)
{
	return !strcmp(a->provider, b->provider) && !strcmp(a->name, b->name);
}

static const struct at_usdt_probe *find_probe(const struct at_usdt_set *s, const char *provider,
					      const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->p[i].provider, provider) && !strcmp(s->p[i].name, name))
			return &s->p[i];
	return NULL;
}

static void hint(const struct at_target *t, char *buf, size_t len)
{
	if (t->pid)
		snprintf(buf, len, "adaptrace list --usdt -p %d", (int)t->pid);
	else
		snprintf(buf, len, "adaptrace list --usdt -b %s", t->bins[0].display_path);
}

/*
 * libbpf 1.1 decodes registers, constants and base+offset memory operands,
 * and refuses to attach a probe with any other argument (an index register,
 * a symbol): say which, before attaching.
 */
static bool libbpf_can_attach(const struct at_usdt_set *s, const struct at_usdt_probe *p, char *err,
			      size_t errlen)
{
	for (const struct at_usdt_probe *q = p; q < s->p + s->n && same_probe(q, p); q++) {
		for (uint32_t a = 0; a < q->nargs; a++) {
			if (at_usdt_arg_decodable(&q->args[a]))
				continue;
			snprintf(err, errlen,
				 "USDT probe %s:%s: argument %u ('%s') uses %s, which libbpf %d.%d "
				 "cannot decode, so adaptrace cannot attach the probe",
				 q->provider, q->name, a + 1, q->args_text,
				 q->args[a].index[0] ? "an index register" : "a symbol",
				 LIBBPF_MAJOR_VERSION, LIBBPF_MINOR_VERSION);
			return false;
		}
	}
	return true;
}

static int plan_counted(struct at_usdt_rec *u, const struct at_usdt_spec *sp, size_t *hits,
			char *err, size_t errlen)
{
	for (size_t b = 0; b < u->tgt->nbins; b++) {
		const struct at_usdt_set *s = &u->sets[b];

		for (size_t i = 0; i < s->n; i++) {
			bool dup = false;

			if (i && same_probe(&s->p[i], &s->p[i - 1]))
				continue;
			if (!at_glob_match(sp->provider, s->p[i].provider) ||
			    !at_glob_match(sp->name, s->p[i].name))
				continue;
			(*hits)++;
			if (!libbpf_can_attach(s, &s->p[i], err, errlen)) {
				/* Named: an error; matched by a glob: left out. */
				if (!strpbrk(sp->provider, "*?[") && !strpbrk(sp->name, "*?["))
					return AT_EXIT_USAGE;
				at_warn("%s; left out", err);
				continue;
			}
			for (size_t c = 0; c < u->ncounted && !dup; c++)
				dup =
				    u->counted[c].bin == b && same_probe(u->counted[c].p, &s->p[i]);
			if (dup)
				continue;
			u->counted = at_xrealloc(u->counted, u->ncounted + 1, sizeof(*u->counted));
			u->counted[u->ncounted++] = (struct counted){.bin = b, .p = &s->p[i]};
		}
	}
	return AT_EXIT_OK;
}

/* Every location of a probe must have the key arguments. */
static bool check_args(const struct at_usdt_set *s, const struct at_usdt_probe *p,
		       const struct at_usdt_spec *sp, char *err, size_t errlen)
{
	for (const struct at_usdt_probe *q = p; q < s->p + s->n && same_probe(q, p); q++) {
		if (!q->args_ok) {
			snprintf(err, errlen,
				 "-u %s:%s: the probe's argument specs ('%s') cannot be "
				 "decoded",
				 sp->provider, sp->name, q->args_text);
			return false;
		}
		for (uint32_t k = 0; k < sp->nkeys; k++)
			if (sp->key_arg[k] >= q->nargs) {
				snprintf(
				    err, errlen,
				    "-u %s:%s: key arg%u, but the probe has %u argument%s; see "
				    "them with 'adaptrace list --usdt'",
				    sp->provider, sp->name, sp->key_arg[k] + 1, q->nargs,
				    q->nargs == 1 ? "" : "s");
				return false;
			}
	}
	return true;
}

static int plan_keyed(struct at_usdt_rec *u, const struct at_usdt_spec *sp, size_t *hits, char *err,
		      size_t errlen)
{
	for (size_t b = 0; b < u->tgt->nbins; b++) {
		const struct at_usdt_set *s = &u->sets[b];
		const struct at_usdt_probe *e = find_probe(s, sp->provider, sp->name), *r = NULL;

		if (!e)
			continue;
		if (sp->ret_name && !(r = find_probe(s, sp->provider, sp->ret_name))) {
			snprintf(err, errlen, "-u %s:%s+%s: %s has no probe %s:%s to pair with",
				 sp->provider, sp->name, sp->ret_name, u->tgt->bins[b].display_path,
				 sp->provider, sp->ret_name);
			return AT_EXIT_USAGE;
		}
		if (!check_args(s, e, sp, err, errlen) || !libbpf_can_attach(s, e, err, errlen) ||
		    (r && !libbpf_can_attach(s, r, err, errlen)))
			return AT_EXIT_USAGE;
		if (u->nkeyed >= AT_UKEY_SPECS) {
			snprintf(err, errlen, "more than %d keyed or paired -u probes",
				 AT_UKEY_SPECS);
			return AT_EXIT_USAGE;
		}
		(*hits)++;
		u->keyed = at_xrealloc(u->keyed, u->nkeyed + 1, sizeof(*u->keyed));
		u->keyed[u->nkeyed++] = (struct keyed){.bin = b, .spec = sp, .entry = e, .ret = r};
	}
	return AT_EXIT_OK;
}

int at_usdtrec_plan(struct at_usdt_rec *u, const struct at_target *tgt, char *err, size_t errlen)
{
	bool any_notes = false;
	char h[PATH_MAX + 64];

	u->tgt = tgt;
	u->sets = at_xcalloc(tgt->nbins, sizeof(*u->sets));
	for (size_t b = 0; b < tgt->nbins; b++) {
		if (at_usdt_load(tgt->bins[b].attach_path, &u->sets[b], err, errlen))
			return AT_EXIT_USAGE;
		any_notes |= u->sets[b].n > 0;
	}
	if (!any_notes) {
		snprintf(err, errlen,
			 "%s%s has no USDT probes (no .note.stapsdt section), so -u has nothing "
			 "to trace; add the library that has them with -l (e.g. -l "
			 "libstdc++.so.6)",
			 tgt->bins[0].display_path, tgt->nbins > 1 ? " and its -l libraries" : "");
		return AT_EXIT_USAGE;
	}
	hint(tgt, h, sizeof(h));
	for (size_t i = 0; i < u->nspecs; i++) {
		const struct at_usdt_spec *sp = &u->specs[i];
		size_t hits = 0;
		int rc = sp->keyed ? plan_keyed(u, sp, &hits, err, errlen)
				   : plan_counted(u, sp, &hits, err, errlen);

		if (rc)
			return rc;
		if (!hits) {
			snprintf(err, errlen,
				 "-u %s:%s matches no USDT probe in %s%s; see them with "
				 "'%s'",
				 sp->provider, sp->name, tgt->bins[0].display_path,
				 tgt->nbins > 1 ? " or its -l libraries" : "", h);
			return AT_EXIT_USAGE;
		}
	}
	/* Rows follow the functions; the BPF side needs key_base at load. */
	u->row_base = (uint32_t)tgt->nsel;
	u->key_base = u->row_base + (uint32_t)u->ncounted;
	return AT_EXIT_OK;
}

uint32_t at_usdtrec_nids(const struct at_usdt_rec *u)
{
	if (!u)
		return 0;
	return (uint32_t)u->ncounted + (u->nkeyed ? AT_UKEY_SLOTS : 0);
}

static void set_row(struct at_symbol *s, uint32_t id, uint32_t kind, uint32_t bin,
		    const struct at_usdt_probe *p)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->kind = kind;
	s->binary = bin;
	s->addr = p->pc;
	s->offset = p->offset;
	s->provider = at_xstrdup(p->provider);
	s->probe = at_xstrdup(p->name);
}

void at_usdtrec_describe(struct at_usdt_rec *u, struct at_trace *t)
{
	if (!u->ncounted)
		return;
	t->syms = at_xrealloc(t->syms, t->nsyms + u->ncounted, sizeof(*t->syms));
	for (size_t c = 0; c < u->ncounted; c++) {
		struct at_symbol *s = &t->syms[t->nsyms];
		char name[512];

		u->counted[c].id = (uint32_t)t->nsyms;
		set_row(s, (uint32_t)t->nsyms, AT_SYM_USDT, (uint32_t)u->counted[c].bin,
			u->counted[c].p);
		snprintf(name, sizeof(name), "%s:%s", s->provider, s->probe);
		s->name = at_xstrdup(name);
		t->nsyms++;
	}
}

int at_usdtrec_load(struct at_usdt_rec *u, const struct at_usdt_maps *m, uint64_t ino, uint32_t dev,
		    bool empty, char *err, size_t errlen)
{
	struct usdt_bpf *s = usdt_bpf__open();
	int e;

	if (!s) {
		snprintf(err, errlen, "cannot open the USDT programs: %s", strerror(errno));
		return AT_EXIT_ENV;
	}
	u->skel = s;
	u->empty = empty;
	s->rodata->target_ino = ino;
	s->rodata->target_dev = dev;
	s->rodata->key_base = u->key_base;
	for (size_t k = 0; k < u->nkeyed; k++) {
		const struct at_usdt_spec *sp = u->keyed[k].spec;
		struct at_ukey_spec *d = (struct at_ukey_spec *)&s->rodata->specs[k];

		d->nkeys = sp->nkeys;
		d->paired = sp->ret_name != NULL;
		for (uint32_t i = 0; i < sp->nkeys; i++) {
			d->arg[i] = sp->key_arg[i];
			d->type[i] = sp->key_type[i];
		}
	}
	if (bpf_map__reuse_fd(s->maps.fstats, bpf_map__fd(m->fstats)) ||
	    bpf_map__reuse_fd(s->maps.hists, bpf_map__fd(m->hists)) ||
	    bpf_map__reuse_fd(s->maps.conc, bpf_map__fd(m->conc)) ||
	    bpf_map__reuse_fd(s->maps.diag, bpf_map__fd(m->diag))) {
		snprintf(err, errlen, "cannot share the counter maps with the USDT programs: %s",
			 strerror(errno));
		return AT_EXIT_ENV;
	}
	e = usdt_bpf__load(s);
	if (e) {
		snprintf(err, errlen, "cannot load the USDT programs (%s)", strerror(-e));
		return AT_EXIT_ENV;
	}
	return AT_EXIT_OK;
}

static int add_link(struct at_usdt_rec *u, struct bpf_link *l)
{
	if (!l)
		return -errno;
	u->links = at_xrealloc(u->links, u->nlinks + 1, sizeof(*u->links));
	u->links[u->nlinks++] = l;
	return 0;
}

static int attach_usdt(struct at_usdt_rec *u, struct bpf_program *prog, pid_t pid, size_t bin,
		       const struct at_usdt_probe *p, uint64_t cookie, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = cookie);
	const char *path = u->tgt->bins[bin].attach_path;
	int e = add_link(u, bpf_program__attach_usdt(prog, pid, path, p->provider, p->name, &o));

	if (e)
		snprintf(err, errlen, "cannot attach to USDT probe %s:%s in %s: %s", p->provider,
			 p->name, u->tgt->bins[bin].display_path, strerror(-e));
	else
		u->nprobes++;
	return e;
}

/*
 * CPython 3.11 fires function__entry/return for Python-to-Python calls only
 * while the semaphore of its 'line' probe is raised too. A uprobe registered
 * with ref_ctr_offset raises a semaphore in every process mapping the file
 * (later ones too) until it is detached; put one on the ELF entry point,
 * which each process runs once, so no probe fires per line.
 */
static int raise_python_line(struct at_usdt_rec *u, pid_t pid, size_t bin, char *err, size_t errlen)
{
	const struct at_usdt_set *s = &u->sets[bin];
	const struct at_usdt_probe *line = find_probe(s, "python", "line");
	LIBBPF_OPTS(bpf_uprobe_opts, o);
	int e;

	uint64_t site = s->entry_offset;

	if (!line || !line->sema_offset)
		return 0;
	/* A shared libpython has no entry point: _init and _fini run once too. */
	for (size_t i = 0; !site && i < u->tgt->bins[bin].elf.nfuncs; i++) {
		const struct at_elf_func *f = &u->tgt->bins[bin].elf.funcs[i];

		if (!strcmp(f->name, "_init") || !strcmp(f->name, "_fini"))
			site = f->offset;
	}
	if (!site) {
		at_warn("%s: no place to raise the python:line semaphore from; Python 3.11 then "
			"reports only the calls that enter the interpreter from C",
			u->tgt->bins[bin].display_path);
		return 0;
	}
	o.ref_ctr_offset = line->sema_offset;
	e = add_link(u, bpf_program__attach_uprobe_opts(u->skel->progs.usdt_empty, pid,
							u->tgt->bins[bin].attach_path, site, &o));
	if (e)
		snprintf(err, errlen, "cannot raise the python:line semaphore of %s: %s",
			 u->tgt->bins[bin].display_path, strerror(-e));
	return e;
}

static bool needs_line(const struct keyed *k)
{
	return !strcmp(k->spec->provider, "python") && (!strcmp(k->spec->name, "function__entry") ||
							!strcmp(k->spec->name, "function__return"));
}

int at_usdtrec_attach(struct at_usdt_rec *u, pid_t pid, char *err, size_t errlen)
{
	struct usdt_bpf *s = u->skel;
	/* Per binary: python:line raised already. */
	bool *raised = at_xcalloc(u->tgt->nbins, sizeof(*raised));
	int e = 0;

	for (size_t c = 0; c < u->ncounted && !e; c++) {
		const struct counted *ct = &u->counted[c];
		uint64_t cookie = ct->id;

		if (pid < 0 && !u->tgt->bins[ct->bin].is_main)
			cookie |= AT_COOKIE_EXE_FILTER;
		e = attach_usdt(u, u->empty ? s->progs.usdt_empty : s->progs.usdt_count, pid,
				ct->bin, ct->p, cookie, err, errlen);
		if (!e && !strcmp(ct->p->provider, "python") &&
		    !strncmp(ct->p->name, "function__", 10) && !raised[ct->bin]) {
			e = raise_python_line(u, pid, ct->bin, err, errlen);
			raised[ct->bin] = true;
		}
	}
	for (size_t k = 0; k < u->nkeyed && !e; k++) {
		const struct keyed *kd = &u->keyed[k];
		uint64_t cookie = k | AT_COOKIE_USDT_KEYED;

		if (pid < 0 && !u->tgt->bins[kd->bin].is_main)
			cookie |= AT_COOKIE_EXE_FILTER;
		/* Return first: an entry never lacks its return probe. */
		if (kd->ret)
			e = attach_usdt(u, s->progs.usdt_key_return, pid, kd->bin, kd->ret,
					cookie | AT_COOKIE_USDT_RET, err, errlen);
		if (!e)
			e = attach_usdt(u, s->progs.usdt_key_entry, pid, kd->bin, kd->entry, cookie,
					err, errlen);
		if (!e && needs_line(kd) && !raised[kd->bin]) {
			e = raise_python_line(u, pid, kd->bin, err, errlen);
			raised[kd->bin] = true;
		}
	}
	free(raised);
	return e;
}

void at_usdtrec_detach(struct at_usdt_rec *u)
{
	if (!u)
		return;
	/* Entries before returns: a call entered is then always left. */
	for (size_t i = u->nlinks; i > 0; i--)
		bpf_link__destroy(u->links[i - 1]);
	free(u->links);
	u->links = NULL;
	u->nlinks = 0;
}

size_t at_usdtrec_nprobes(const struct at_usdt_rec *u)
{
	return u ? u->nprobes : 0;
}

/* "provider:probe[key,key]" and the key values of a new keyed row. */
static void key_row(struct at_symbol *s, const struct at_usdt_spec *sp,
		    const struct at_ukey_info *ki)
{
	char name[1024];
	size_t n;

	if (!sp->nkeys) {
		/* A pair without keys: one row for the pair. */
		snprintf(name, sizeof(name), "%s:%s+%s", s->provider, s->probe,
			 sp->ret_name ? sp->ret_name : "");
		s->name = at_xstrdup(name);
		return;
	}
	n = (size_t)snprintf(name, sizeof(name), "%s:%s[", s->provider, s->probe);

	s->nkeys = sp->nkeys;
	s->keys = at_xcalloc(sp->nkeys ? sp->nkeys : 1, sizeof(*s->keys));
	for (uint32_t k = 0; k < sp->nkeys && n < sizeof(name); k++) {
		struct at_arg *a = &s->keys[k];
		const char *sep = k ? "," : "";

		/* enum at_usdt_key_type has the values of enum at_arg_type */
		a->type = sp->key_type[k];
		a->v = ki->v[k];
		if (a->type == AT_ARG_STR) {
			a->truncated = ki->truncated & (1u << k);
			if (!(ki->unreadable & (1u << k)))
				a->str = strndup(ki->s[k], AT_UKEY_STR);
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s%s", sep,
					      a->str ? a->str : "?", a->truncated ? "..." : "");
		} else if (a->type == AT_ARG_INT) {
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%" PRId64, sep,
					      (int64_t)a->v);
		} else if (a->type == AT_ARG_UINT) {
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%" PRIu64, sep, a->v);
		} else {
			n +=
			    (size_t)snprintf(name + n, sizeof(name) - n, "%s0x%" PRIx64, sep, a->v);
		}
	}
	if (n < sizeof(name) - 1)
		snprintf(name + n, sizeof(name) - n, "]");
	s->name = at_xstrdup(name);
}

int at_usdtrec_sync(struct at_usdt_rec *u, struct at_trace *t, struct at_writer *w,
		    struct at_profile_set *ps, struct at_window *win)
{
	uint32_t zero = 0, keep = 0;
	uint64_t next = 0;
	size_t first = t->nsyms;

	if (u && u->nkeyed && u->skel &&
	    !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.ukcount), &zero, &next)) {
		if (next > AT_UKEY_SLOTS)
			next = AT_UKEY_SLOTS;
		while (u->nslots < next && t->nsyms == u->key_base + u->nslots) {
			struct at_ukey_info ki;
			uint32_t slot = u->nslots;
			struct at_symbol *s;
			const struct keyed *kd;

			if (bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.ukinfo), &slot, &ki) ||
			    ki.state == AT_UKEY_EMPTY || ki.spec >= u->nkeyed)
				break; /* still being written: next time */
			kd = &u->keyed[ki.spec];
			t->syms = at_xrealloc(t->syms, t->nsyms + 1, sizeof(*t->syms));
			s = &t->syms[t->nsyms];
			set_row(s, (uint32_t)t->nsyms, AT_SYM_USDT_KEY, (uint32_t)kd->bin,
				kd->entry);
			if (ki.state == AT_UKEY_DUP) {
				char name[512];

				snprintf(name, sizeof(name), "%s:%s[(unused slot)]", s->provider,
					 s->probe);
				s->name = at_xstrdup(name);
			} else {
				key_row(s, kd->spec, &ki);
			}
			t->nsyms++;
			u->nslots++;
		}
	}
	if (t->nsyms > first) {
		ps->p = at_xrealloc(ps->p, t->nsyms, sizeof(*ps->p));
		memset(ps->p + first, 0, (t->nsyms - first) * sizeof(*ps->p));
		ps->n = t->nsyms;
		if (at_writer_symbols(w, t->syms + first, t->nsyms - first))
			return -1;
	}
	/* A key made between the snapshot and now is counted next window. */
	for (uint32_t i = 0; i < win->n; i++) {
		if (win->e[i].id < t->nsyms)
			win->e[keep++] = win->e[i];
		else
			free(win->e[i].hist);
	}
	win->n = keep;
	return 0;
}

void at_usdtrec_finish(struct at_usdt_rec *u)
{
	uint32_t one = 1;
	uint64_t full = 0;

	if (!u || !u->skel || !u->nkeyed)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.ukcount), &one, &full) && full)
		at_warn("%" PRIu64 " keyed USDT hits were not counted: more than %d distinct keys; "
			"key on fewer arguments",
			full, AT_UKEY_SLOTS);
}

static const char *kind_str(uint32_t k)
{
	return k == AT_SYM_USDT ? "usdt" : k == AT_SYM_USDT_KEY ? "usdt_key" : "function";
}

void at_usdt_report_json(FILE *f, const struct at_profile_set *ps)
{
	const struct at_trace *t = ps->t;
	bool first = true;

	for (size_t i = 0; i < t->nsyms; i++) {
		const struct at_symbol *s = &t->syms[i];
		const struct at_counts *c = &ps->p[i].c;

		if (s->kind == AT_SYM_FUNC || !c->calls)
			continue;
		fputs(first ? "{\"provider\":" : ",{\"provider\":", f);
		first = false;
		at_esc_json(f, s->provider ? s->provider : "");
		fputs(",\"name\":", f);
		at_esc_json(f, s->probe ? s->probe : s->name);
		fputs(",\"row\":", f);
		at_esc_json(f, s->name);
		fprintf(f, ",\"kind\":\"%s\",\"calls\":%" PRIu64 ",\"returns\":%" PRIu64,
			kind_str(s->kind), c->calls, c->returns);
		if (s->kind == AT_SYM_USDT_KEY) {
			fputs(",\"key\":[", f);
			for (uint32_t k = 0; k < s->nkeys; k++) {
				const struct at_arg *a = &s->keys[k];

				if (k)
					fputc(',', f);
				if (a->type == AT_ARG_STR && a->str)
					at_esc_json(f, a->str);
				else if (a->type == AT_ARG_STR)
					fputs("null", f);
				else if (a->type == AT_ARG_INT)
					fprintf(f, "%" PRId64, (int64_t)a->v);
				else
					fprintf(f, "%" PRIu64, a->v);
			}
			fputs("],\"truncated\":", f);
			{
				bool tr = false;

				for (uint32_t k = 0; k < s->nkeys; k++)
					tr |= s->keys[k].truncated;
				fputs(tr ? "true" : "false", f);
			}
		}
		fputc('}', f);
	}
}
