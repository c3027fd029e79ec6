// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* adaptrace export: Chrome trace events, CSV, OpenMetrics. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "export.h"
#include "report.h"
#include "util.h"

static const char *sym_name(const struct at_trace *t, uint32_t id)
{
	return id < t->nsyms && t->syms[id].name ? t->syms[id].name : "?";
}

static const char *sym_binary(const struct at_trace *t, uint32_t id)
{
	if (id >= t->nsyms || t->syms[id].binary >= t->nbins)
		return "";
	return at_base_name(t->bins[t->syms[id].binary].path);
}

/* ---- Chrome trace events ---- */

static void chrome_arg(FILE *f, const struct at_arg *a)
{
	switch (a->type) {
	case AT_ARG_INT:
		fprintf(f, "%" PRId64, (int64_t)a->v);
		break;
	case AT_ARG_UINT:
		fprintf(f, "%" PRIu64, a->v);
		break;
	case AT_ARG_STR:
		if (a->str)
			at_esc_json(f, a->str);
		else
			fputs("null", f);
		break;
	default: /* raw registers and pointers: hex, exact beyond 2^53 */
		fprintf(f, "\"0x%" PRIx64 "\"", a->v);
	}
}

static uint32_t trace_pid(const struct at_trace *t)
{
	const char *target = at_trace_get(t, "target");
	unsigned pid = 0;

	if (target && sscanf(target, "pid %u", &pid) == 1)
		return pid;
	return 0;
}

int at_export_chrome(FILE *f, const struct at_trace *t)
{
	/* Counter tracks live in a process of their own, named for the target. */
	uint32_t cpid = trace_pid(t);
	const char *target = at_trace_get(t, "target");
	bool first = true;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"adaptrace\",\"target\":", f);
	at_esc_json(f, target ? target : "");
	fputs("},\"traceEvents\":[\n", f);
	fprintf(f,
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"ts\":0,"
		"\"args\":{\"name\":",
		cpid);
	at_esc_json(f, target ? target : "adaptrace");
	fputs("}}", f);
	first = false;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct at_event *e = &t->events[i];
		uint32_t n = e->nargs < AT_MAX_ARGS ? e->nargs : AT_MAX_ARGS;

		fputs(first ? "" : ",\n", f);
		first = false;
		fputs("{\"name\":", f);
		at_esc_json(f, sym_name(t, e->id));
		fputs(",\"cat\":", f);
		at_esc_json(f, sym_binary(t, e->id));
		fprintf(f,
			",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,\"tid\":%u,\"args\":{",
			(double)e->ts_ns / 1e3, (double)e->duration_ns / 1e3, e->pid, e->tid);
		for (uint32_t k = 0; k < n; k++) {
			fprintf(f, "\"arg%u\":", k);
			chrome_arg(f, &e->args[k]);
			if (e->args[k].type == AT_ARG_STR && e->args[k].truncated)
				fprintf(f, ",\"arg%u_truncated\":true", k);
			fputc(',', f);
		}
		fprintf(f, "\"ret\":%" PRId64 ",\"cpu\":%u}}", e->ret, e->cpu);
	}
	/* One counter track per function: its call rate in each interval. */
	for (size_t w = 0; w < t->nwins; w++) {
		const struct at_window *win = &t->wins[w];
		double secs = (double)(win->end_ns - win->start_ns) / 1e9;

		for (uint32_t i = 0; i < win->n; i++) {
			const struct at_window_entry *e = &win->e[i];
			char name[512];

			if (e->id >= t->nsyms)
				continue;
			snprintf(name, sizeof(name), "calls/s %s", sym_name(t, e->id));
			fputs(",\n{\"name\":", f);
			at_esc_json(f, name);
			fprintf(f,
				",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%u,\"tid\":0,\"args\":{\"calls/"
				"s\":%.3f}}",
				(double)win->start_ns / 1e3, cpid,
				secs > 0 ? (double)e->c.calls / secs : 0);
		}
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- CSV ---- */

int at_export_csv(FILE *f, const struct at_trace *t)
{
	static const char *kinds[] = {"function", "usdt", "usdt_key"};

	fputs("start_ns,end_ns,binary,function,kind,calls,returns,total_ns,self_ns,mean_ns,"
	      "p50_ns,p90_ns,p99_ns,min_ns,max_ns,errors,max_concurrency,probed_ns\n",
	      f);
	for (size_t w = 0; w < t->nwins; w++) {
		const struct at_window *win = &t->wins[w];
		uint32_t k = 0;

		for (uint32_t i = 0; i < win->n; i++) {
			const struct at_window_entry *e = &win->e[i];
			const struct at_counts *c = &e->c;
			/* In probing windows (--budget): the calls are those of probed_ns only. */
			const struct at_duty_on *on = at_window_duty(win, e->id, &k);
			uint64_t probed = on ? on->on_ns : win->end_ns - win->start_ns;
			double q[3] = {0, 0, 0};

			if (e->id >= t->nsyms)
				continue;
			if (c->returns) {
				q[0] = at_entry_quantile(e, 0.50);
				q[1] = at_entry_quantile(e, 0.90);
				q[2] = at_entry_quantile(e, 0.99);
			}
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",", win->start_ns, win->end_ns);
			at_esc_csv(f, sym_binary(t, e->id));
			fputc(',', f);
			at_esc_csv(f, sym_name(t, e->id));
			fprintf(f,
				",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%.0f,%.0f,%.0f,%.0f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 "\n",
				t->syms[e->id].kind < 3 ? kinds[t->syms[e->id].kind] : "other",
				c->calls, c->returns, c->total_ns, c->self_ns,
				c->returns ? (double)c->sum_ns / (double)c->returns : 0, q[0], q[1],
				q[2], c->min_ns, c->max_ns, c->errors, c->max_conc, probed);
		}
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- OpenMetrics ---- */

/* A sample's name and labels, without the closing brace. */
static void om_labels(FILE *f, const char *metric, const struct at_trace *t, uint32_t id)
{
	fputs(metric, f);
	fputs("{binary=", f);
	at_esc_om_label(f, sym_binary(t, id));
	fputs(",function=", f);
	at_esc_om_label(f, sym_name(t, id));
}

/*
 * Bucket bounds at powers of two from 1.024 us (2^10 ns) to about 69 s
 * (2^36 ns): they fall on histogram bucket edges, so the cumulative counts
 * are exact, and every series has the same bounds, so that
 * histogram_quantile() can aggregate across machines.
 */
#define OM_LE_FIRST 10
#define OM_LE_LAST  36

int at_export_openmetrics(FILE *f, const struct at_trace *t, const struct at_func_profile *p)
{
	bool any_est = false;

	fputs("# HELP adaptrace_calls_total Calls of a traced function the probes counted "
	      "(exact; for one in probing windows, the windows' calls: see "
	      "adaptrace_estimated_calls).\n"
	      "# TYPE adaptrace_calls_total counter\n",
	      f);
	for (uint32_t id = 0; id < t->nsyms; id++) {
		om_labels(f, "adaptrace_calls_total", t, id);
		fprintf(f, "} %" PRIu64 "\n", p[id].estimated ? p[id].seen_calls : p[id].c.calls);
		any_est |= p[id].estimated;
	}
	if (any_est) {
		fputs("# HELP adaptrace_estimated_calls Calls of a function probed in windows "
		      "(--budget), estimated from them, with the bounds of its 95 % interval.\n"
		      "# TYPE adaptrace_estimated_calls gauge\n",
		      f);
		for (uint32_t id = 0; id < t->nsyms; id++) {
			static const char *bound[] = {"estimate", "lower95", "upper95"};
			double v[3] = {(double)p[id].c.calls, p[id].calls_lo, p[id].calls_hi};

			for (int b = 0; p[id].estimated && b < 3; b++) {
				om_labels(f, "adaptrace_estimated_calls", t, id);
				fprintf(f, ",bound=\"%s\"} %.0f\n", bound[b], v[b]);
			}
		}
	}
	fputs("# HELP adaptrace_errors_total Calls of a traced function that returned a "
	      "negative value.\n"
	      "# TYPE adaptrace_errors_total counter\n",
	      f);
	for (uint32_t id = 0; id < t->nsyms; id++)
		if (t->syms[id].kind == AT_SYM_FUNC) {
			om_labels(f, "adaptrace_errors_total", t, id);
			fprintf(f, "} %" PRIu64 "\n", p[id].c.errors);
		}
	fputs("# HELP adaptrace_latency_seconds Inclusive duration of the timed calls of a "
	      "traced function (for one in probing windows, scaled from them).\n"
	      "# TYPE adaptrace_latency_seconds histogram\n",
	      f);
	for (uint32_t id = 0; id < t->nsyms; id++) {
		const struct at_func_profile *q = &p[id];
		uint64_t cum = 0;
		uint32_t b = 0;

		if (t->syms[id].kind != AT_SYM_FUNC)
			continue;
		for (int k = OM_LE_FIRST; k <= OM_LE_LAST; k++) {
			uint64_t edge = 1ULL << k;

			while (b < AT_HIST_BUCKETS && at_hist_lower(b) < edge)
				cum += q->hist[b++];
			om_labels(f, "adaptrace_latency_seconds_bucket", t, id);
			fprintf(f, ",le=\"%.9g\"} %" PRIu64 "\n", (double)edge / 1e9, cum);
		}
		om_labels(f, "adaptrace_latency_seconds_bucket", t, id);
		fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", q->c.returns);
		om_labels(f, "adaptrace_latency_seconds_sum", t, id);
		fprintf(f, "} %.9f\n", (double)q->c.sum_ns / 1e9);
		om_labels(f, "adaptrace_latency_seconds_count", t, id);
		fprintf(f, "} %" PRIu64 "\n", q->c.returns);
	}
	fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

int at_export_openmetrics_file(const char *path, const struct at_trace *t,
			       const struct at_func_profile *p)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Readable by the node_exporter user; it holds only figures. */
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	err = at_export_openmetrics(f, t, p);
	if (fflush(f) && !err)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static void export_usage(FILE *f)
{
	fputs("Usage: adaptrace export FILE --format chrome|csv|openmetrics [-o OUT]\n"
	      "\n"
	      "Convert a recording for other tools (to stdout, or to OUT).\n"
	      "\n"
	      "  chrome       Chrome trace-event JSON, for ui.perfetto.dev or chrome://tracing:\n"
	      "               one complete event (ph X) per call captured in the detail phase,\n"
	      "               on its process and thread track, with its arguments and return\n"
	      "               value; plus a counter track (ph C) per function with its calls\n"
	      "               per second in each interval. Timestamps in microseconds from\n"
	      "               the start of the recording.\n"
	      "  csv          one row per function per interval in which it was called:\n"
	      "               start_ns, end_ns, binary, function, kind, calls, returns,\n"
	      "               total_ns, self_ns, mean_ns, p50_ns, p90_ns, p99_ns, min_ns,\n"
	      "               max_ns, errors, max_concurrency, probed_ns (RFC 4180 quoting;\n"
	      "               probed_ns below the interval's length: the function was in\n"
	      "               probing windows (--budget) and the calls are those windows')\n"
	      "  openmetrics  Prometheus text: adaptrace_calls_total and adaptrace_errors_total\n"
	      "               (counters) and adaptrace_latency_seconds (histogram, le bounds\n"
	      "               at powers of two from 1.024us to 68.7s), labelled binary and\n"
	      "               function; adaptrace_estimated_calls (gauge, bound=estimate,\n"
	      "               lower95, upper95) for functions probed in windows; ending in\n"
	      "               '# EOF'. 'record --openmetrics-file PATH'\n"
	      "               keeps such a file current for node_exporter's textfile collector.\n"
	      "\n"
	      "  -o, --output OUT   write to OUT instead of stdout\n"
	      "\n"
	      "Exit status: 0, or 2 for bad usage or an unreadable or corrupt file.\n",
	      f);
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'F'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *format = NULL, *output = NULL;
	struct at_profile_set ps;
	struct at_trace t;
	char err[AT_ERRLEN];
	FILE *f = stdout;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:F:h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			export_usage(stdout);
			return AT_EXIT_OK;
		default:
			fputs("Run 'adaptrace export --help' for the options.\n", stderr);
			return AT_EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		at_die(AT_EXIT_USAGE, "export takes one trace file: adaptrace export FILE "
				      "--format chrome|csv|openmetrics");
	if (!format)
		at_die(AT_EXIT_USAGE, "export needs --format chrome, csv or openmetrics");
	if (strcmp(format, "chrome") && strcmp(format, "csv") && strcmp(format, "openmetrics"))
		at_die(AT_EXIT_USAGE, "unknown --format '%s': use chrome, csv or openmetrics",
		       format);
	rc = at_trace_read(argv[optind], &t, true, err, sizeof(err));
	if (rc < 0)
		at_die(AT_EXIT_USAGE, "%s", err);
	if (rc > 0)
		at_warn("%s", err);
	if (output) {
		f = fopen(output, "w");
		if (!f) {
			at_err("cannot write %s: %s", output, strerror(errno));
			at_trace_free(&t);
			return AT_EXIT_USAGE;
		}
	}
	if (!strcmp(format, "chrome")) {
		rc = at_export_chrome(f, &t);
	} else if (!strcmp(format, "csv")) {
		rc = at_export_csv(f, &t);
	} else {
		at_profile_set_init(&ps, &t);
		rc = at_export_openmetrics(f, &t, ps.p);
		at_profile_set_free(&ps);
	}
	if (fflush(f) && !rc)
		rc = -errno;
	if (output && fclose(f) && !rc)
		rc = -errno;
	at_trace_free(&t);
	if (rc) {
		at_err("cannot write %s: %s", output ? output : "stdout", strerror(-rc));
		return AT_EXIT_USAGE;
	}
	return AT_EXIT_OK;
}
