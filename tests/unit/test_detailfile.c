// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Detail-phase chunks of the trace file (events, selection log, detail
 * stats): exact round trip, latest stats win, writer and reader refuse
 * what they must, damage is caught, and report --events renders strings
 * escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detailreport.h"
#include "tracefile.h"
#include "util.h"
#include "check.h"

static struct at_kv kv[] = {{"tool_version", "test"}};
static struct at_binary bins[] = {{"/bin/x", ""}};
static struct at_symbol syms[] = {
    {.id = 0, .binary = 0, .addr = 0x1000, .size = 10, .offset = 0x1000, .name = "greet"},
    {.id = 1, .binary = 0, .addr = 0x2000, .size = 10, .offset = 0x2000, .name = "tick"},
};

static struct at_event evs[3];
static struct at_sel_change sel[] = {
    {1000, 0, AT_SEL_ENTER, 1.0, "forced by --detail"},
    {2000000000ULL, 1, AT_SEL_RATE, 0.125, "budget: 5 %"},
    {3000000000ULL, 1, AT_SEL_LEAVE, 0, "stationary over two cycles"},
};
static uint64_t drops[2] = {3, 4};
static struct at_detail_stats ds1[] = {{.id = 0, .events = 1, .rate = 1}};
static struct at_detail_stats ds2[] = {
    {.id = 0, .events = 2, .dropped = 0, .rate = 1, .sampled = 2},
    {.id = 1,
     .events = 1,
     .dropped = 7,
     .rate = 0.5,
     .sampled = 8,
     .ncpus = 2,
     .dropped_cpu = drops},
};

static void fill_events(void)
{
	evs[0] = (struct at_event){.ts_ns = 5,
				   .pid = 10,
				   .tid = 11,
				   .cpu = 1,
				   .id = 0,
				   .duration_ns = 123,
				   .ret = -6,
				   .nargs = 2};
	evs[0].args[0] = (struct at_arg){.type = AT_ARG_STR, .v = 0x7fff0000, .str = "a\"b\\c\n"};
	evs[0].args[1] = (struct at_arg){.type = AT_ARG_INT, .v = (uint64_t)-3};
	evs[1] = (struct at_event){.ts_ns = 6, .pid = 10, .tid = 12, .id = 0, .nargs = 1};
	evs[1].args[0] =
	    (struct at_arg){.type = AT_ARG_STR, .v = 1, .truncated = true, .str = "xyz"};
	evs[2] =
	    (struct at_event){.ts_ns = 7, .id = 1, .duration_ns = 9, .ret = INT64_MAX, .nargs = 6};
	for (int a = 0; a < 6; a++)
		evs[2].args[a] = (struct at_arg){.type = AT_ARG_RAW, .v = UINT64_MAX - (uint64_t)a};
	/* An unreadable string: no bytes. */
	evs[1].args[0].str = NULL;
}

static bool same_event(const struct at_event *a, const struct at_event *b)
{
	if (a->ts_ns != b->ts_ns || a->pid != b->pid || a->tid != b->tid || a->cpu != b->cpu ||
	    a->id != b->id || a->duration_ns != b->duration_ns || a->ret != b->ret ||
	    a->nargs != b->nargs)
		return false;
	for (uint32_t i = 0; i < a->nargs; i++) {
		const struct at_arg *x = &a->args[i], *y = &b->args[i];

		if (x->type != y->type || x->v != y->v || x->truncated != y->truncated)
			return false;
		if ((x->str == NULL) != (y->str == NULL) || (x->str && strcmp(x->str, y->str)))
			return false;
	}
	return true;
}

static int write_file(const char *path, bool bad_event)
{
	char err[AT_ERRLEN];
	struct at_writer *w = at_writer_open(path, err, sizeof(err));
	int rc = 0;

	if (!w)
		return -1;
	rc |= at_writer_header(w, kv, 1, bins, 1);
	rc |= at_writer_symbols(w, syms, 2);
	rc |= at_writer_selection(w, sel, 1);
	rc |= at_writer_events(w, evs, 2);
	rc |= at_writer_dstats(w, ds1, 1);
	rc |= at_writer_events(w, evs + 2, 1);
	rc |= at_writer_selection(w, sel + 1, 2);
	rc |= at_writer_dstats(w, ds2, 2);
	if (bad_event) {
		struct at_event e = evs[2];

		e.id = 9; /* no such symbol */
		rc |= at_writer_events(w, &e, 1) == 0 ? -1 : 0;
	}
	at_writer_close(w);
	return rc;
}

int main(void)
{
	char path[] = "/tmp/test_detailfile.XXXXXX";
	char err[AT_ERRLEN], *buf = NULL;
	struct at_trace t;
	size_t len = 0;
	FILE *f;
	int fd = mkstemp(path), rc;
	bool ok = true;

	close(fd);
	unlink(path);
	fill_events();
	check(write_file(path, true) == 0, "write events, selection, stats; refuse an unknown id");
	rc = at_trace_read(path, &t, false, err, sizeof(err));
	check(rc == 0 && t.nunknown == 0, "detail chunks are known chunks");
	check(t.nevents == 3, "three events");
	for (size_t i = 0; i < 3 && i < t.nevents; i++)
		ok &= same_event(&t.events[i], &evs[i]);
	check(ok, "events round trip exactly (strings, truncation, unreadable, signs, raw)");
	ok = t.nsel == 3;
	for (size_t i = 0; ok && i < 3; i++)
		ok = t.sel[i].ts_ns == sel[i].ts_ns && t.sel[i].id == sel[i].id &&
		     t.sel[i].what == sel[i].what && t.sel[i].rate == sel[i].rate &&
		     !strcmp(t.sel[i].reason, sel[i].reason);
	check(ok, "selection log round trips in order");
	check(t.ndstats == 2 && t.dstats[1].dropped == 7 && t.dstats[1].sampled == 8 &&
		  t.dstats[1].ncpus == 2 && t.dstats[1].dropped_cpu[1] == 4 &&
		  t.dstats[0].events == 2,
	      "the latest detail stats win, with per-CPU drops");
	check(at_detail_stats_of(&t, 1) == &t.dstats[1] && !at_detail_stats_of(&t, 5),
	      "stats lookup by symbol");

	f = open_memstream(&buf, &len);
	at_report_events(f, &t, "greet", true);
	fclose(f);
	check(buf && strstr(buf, "\"args\":[\"a\\\"b\\\\c\\n\",-3]") &&
		  strstr(buf, "\"args\":[null],\"ret\":0,\"truncated\":[0]"),
	      "events as JSON lines: strings escaped, unreadable null, truncated listed");
	check(buf && !strstr(buf, "\"tick\""), "the glob filters functions");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	at_report_events(f, &t, NULL, false);
	at_report_selection(f, &t, false);
	fclose(f);
	check(buf && strstr(buf, "(\"a\\\"b\\\\c\\n\", -3)") && strstr(buf, "<unreadable 0x1>") &&
		  strstr(buf, "stationary over two cycles") && strstr(buf, "3 captured calls"),
	      "text rendering of events and selection");
	free(buf);
	at_trace_free(&t);

	/* A selection change with a rate above 1 is refused by the writer. */
	{
		struct at_writer *w = at_writer_open(path, err, sizeof(err));
		struct at_sel_change bad = {0, 0, AT_SEL_RATE, 1.5, "x"};

		at_writer_header(w, kv, 1, bins, 1);
		at_writer_symbols(w, syms, 2);
		check(at_writer_selection(w, &bad, 1) != 0, "writer refuses a rate above 1");
		at_writer_close(w);
	}
	unlink(path);
	{
		char old[sizeof(path) + 4];

		snprintf(old, sizeof(old), "%s.old", path);
		unlink(old);
	}
	printf("# %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
