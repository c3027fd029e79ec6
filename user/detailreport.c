// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "detailreport.h"
#include "util.h"

const struct at_detail_stats *at_detail_stats_of(const struct at_trace *t, uint32_t id)
{
	for (size_t i = 0; i < t->ndstats; i++)
		if (t->dstats[i].id == id)
			return &t->dstats[i];
	return NULL;
}

/* A string argument for the table: escaped, quoted, "..." when cut. */
static void text_str(FILE *f, const struct at_arg *a)
{
	if (!a->str) {
		fprintf(f, "<unreadable 0x%" PRIx64 ">", a->v);
		return;
	}
	at_esc_text(f, a->str, 1);
	if (a->truncated)
		fputs("...", f);
}

static void text_arg(FILE *f, const struct at_arg *a)
{
	switch (a->type) {
	case AT_ARG_INT:
		fprintf(f, "%" PRId64, (int64_t)a->v);
		break;
	case AT_ARG_UINT:
		fprintf(f, "%" PRIu64, a->v);
		break;
	case AT_ARG_STR:
		text_str(f, a);
		break;
	default: /* raw registers and pointers */
		fprintf(f, "0x%" PRIx64, a->v);
	}
}

static void json_arg(FILE *f, const struct at_arg *a)
{
	char buf[32];

	switch (a->type) {
	case AT_ARG_INT:
		fprintf(f, "%" PRId64, (int64_t)a->v);
		break;
	case AT_ARG_STR:
		if (a->str)
			at_esc_json(f, a->str);
		else
			fputs("null", f);
		break;
	case AT_ARG_PTR:
		snprintf(buf, sizeof(buf), "0x%" PRIx64, a->v);
		at_esc_json(f, buf);
		break;
	default: /* raw registers and unsigned */
		fprintf(f, "%" PRIu64, a->v);
	}
}

void at_report_events(FILE *f, const struct at_trace *t, const char *glob, bool json)
{
	size_t shown = 0;
	char d[32], shown_name[25];

	if (!json)
		fprintf(f, "%-24s %8s %8s %4s %14s %10s %20s  %s\n", "FUNCTION", "PID", "TID",
			"CPU", "TIME", "DURATION", "RET", "ARGS");
	for (size_t i = 0; i < t->nevents; i++) {
		const struct at_event *e = &t->events[i];
		const char *name = e->id < t->nsyms ? t->syms[e->id].name : "?";
		bool first = true;

		if (glob && !at_glob_match(glob, name))
			continue;
		shown++;
		if (json) {
			fputs("{\"function\":", f);
			at_esc_json(f, name);
			fprintf(f,
				",\"pid\":%u,\"tid\":%u,\"cpu\":%u,\"ts_ns\":%" PRIu64
				",\"duration_ns\":%" PRIu64 ",\"args\":[",
				e->pid, e->tid, e->cpu, e->ts_ns, e->duration_ns);
			for (uint32_t a = 0; a < e->nargs; a++) {
				if (a)
					fputc(',', f);
				json_arg(f, &e->args[a]);
			}
			fprintf(f, "],\"ret\":%" PRId64 ",\"truncated\":[", e->ret);
			for (uint32_t a = 0; a < e->nargs; a++)
				if (e->args[a].truncated) {
					fprintf(f, "%s%u", first ? "" : ",", a);
					first = false;
				}
			fputs("]}\n", f);
			continue;
		}
		fprintf(f, "%-24s %8u %8u %4u %13.6fs %10s %20" PRId64 "  (",
			at_esc_text_buf(shown_name, sizeof(shown_name), name), e->pid, e->tid,
			e->cpu, (double)e->ts_ns / 1e9,
			at_fmt_ns(d, sizeof(d), (double)e->duration_ns), e->ret);
		for (uint32_t a = 0; a < e->nargs; a++) {
			if (a)
				fputs(", ", f);
			text_arg(f, &e->args[a]);
		}
		fputs(")\n", f);
	}
	if (!json)
		fprintf(f, "\n%zu captured call%s%s%s.\n", shown, shown == 1 ? "" : "s",
			glob ? " of functions matching " : "", glob ? glob : "");
}

static const char *what_name(uint32_t w)
{
	switch (w) {
	case AT_SEL_ENTER:
		return "enter";
	case AT_SEL_LEAVE:
		return "leave";
	default:
		return "rate";
	}
}

void at_report_selection(FILE *f, const struct at_trace *t, bool json)
{
	char shown_name[25];

	if (!json)
		fprintf(f, "%11s  %-24s %-6s %8s  %s\n", "TIME", "FUNCTION", "CHANGE", "RATE",
			"REASON");
	for (size_t i = 0; i < t->nsel; i++) {
		const struct at_sel_change *s = &t->sel[i];
		const char *name = s->id < t->nsyms ? t->syms[s->id].name : "?";

		if (json) {
			fprintf(f, "{\"ts_ns\":%" PRIu64 ",\"function\":", s->ts_ns);
			at_esc_json(f, name);
			fprintf(f,
				",\"change\":\"%s\",\"rate\":%.6g,\"reason\":", what_name(s->what),
				s->rate);
			at_esc_json(f, s->reason ? s->reason : "");
			fputs("}\n", f);
			continue;
		}
		fprintf(f, "%10.3fs  %-24s %-6s %8.4f  ", (double)s->ts_ns / 1e9,
			at_esc_text_buf(shown_name, sizeof(shown_name), name), what_name(s->what),
			s->rate);
		at_esc_text(f, s->reason, 0);
		fputc('\n', f);
	}
	if (!json) {
		size_t enters = 0, leaves = 0, rates = 0;

		for (size_t i = 0; i < t->nsel; i++) {
			enters += t->sel[i].what == AT_SEL_ENTER;
			leaves += t->sel[i].what == AT_SEL_LEAVE;
			rates += t->sel[i].what == AT_SEL_RATE;
		}
		fprintf(f, "\n%zu entr%s into detail, %zu exit%s, %zu rate change%s.\n", enters,
			enters == 1 ? "y" : "ies", leaves, leaves == 1 ? "" : "s", rates,
			rates == 1 ? "" : "s");
	}
}

void at_report_drops(FILE *f, const struct at_trace *t)
{
	for (size_t i = 0; i < t->ndstats; i++) {
		const struct at_detail_stats *d = &t->dstats[i];

		if (!d->dropped || d->id >= t->nsyms)
			continue;
		fputs("Dropped detail events of ", f);
		at_esc_text(f, t->syms[d->id].name, 0);
		fputs(" per CPU:", f);
		for (uint32_t c = 0; c < d->ncpus; c++)
			if (d->dropped_cpu[c])
				fprintf(f, " cpu%u=%" PRIu64, c, d->dropped_cpu[c]);
		fputc('\n', f);
	}
}
