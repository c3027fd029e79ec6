// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the diff engine's statistics (against values computed
 * independently: closed forms and numeric integration of Student's t
 * density), of its verdicts on in-memory recordings, and of the Chrome
 * export of detail events (escaping of captured strings).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "export.h"
#include "report.h"
#include "util.h"
#include "check.h"

static bool near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b) + 1e-15;
}

static void test_stats(void)
{
	double a[] = {1, 2, 3, 4, 5}, b[] = {2, 4, 6, 8, 10}, t, df, z, p;
	double ps[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
	uint64_t ha[3] = {1, 1, 0}, hb[3] = {0, 1, 1}, same[3] = {0, 5, 0};

	check(near(at_stat_t_p2(1, 1), 0.5, 1e-12), "t p-value, df 1 (Cauchy): t=1 gives 0.5");
	check(near(at_stat_t_p2(2, 2), 1 - 2 / sqrt(6), 1e-10), "t p-value, df 2: closed form");
	check(near(at_stat_t_p2(2, 10), 0.0733880347707, 1e-9), "t p-value, t=2 df=10");
	check(near(at_stat_t_p2(3.5, 7.3), 0.00934313852846, 1e-8), "t p-value, fractional df 7.3");
	check(near(at_stat_t_p2(1.959963984540054, 1e7), 0.05, 1e-5),
	      "t p-value tends to the normal one");
	check(at_stat_t_p2(INFINITY, 5) == 0 && at_stat_t_p2(NAN, 5) == 1,
	      "t p-value of infinite and NaN t");
	check(near(at_stat_ibeta(0.5, 2, 2), 0.5, 1e-12) &&
		  near(at_stat_ibeta(0.3, 1, 1), 0.3, 1e-12),
	      "incomplete beta: symmetric and uniform cases");

	p = at_stat_welch(a, 5, b, 5, &t, &df);
	check(near(t, 1.8973665961010275, 1e-12), "Welch t of 1..5 against 2,4..10");
	check(near(df, 5.882352941176471, 1e-12), "Welch-Satterthwaite df");
	check(near(p, 0.107531194931, 1e-8), "Welch two-sided p");
	check(at_stat_welch(a, 1, b, 5, &t, &df) == 1, "Welch needs two values a side");
	{
		double c1[] = {3, 3, 3}, c2[] = {4, 4, 4};

		check(at_stat_welch(c1, 3, c2, 3, &t, &df) == 0 && t > 0,
		      "Welch on two different constant series: p 0");
		check(at_stat_welch(c1, 3, c1, 3, &t, &df) == 1, "Welch on equal constants: p 1");
	}

	p = at_stat_mwu_hist(ha, hb, 3, &z);
	check(near(z, 1.224744871391589, 1e-12), "Mann-Whitney z with a tied bucket");
	check(near(p, 0.22067136191984688, 1e-12), "Mann-Whitney two-sided p");
	p = at_stat_mwu_hist(same, same, 3, &z);
	check(p == 1 && z == 0, "Mann-Whitney with every value in one bucket: p 1");
	p = at_stat_mwu_hist(ha, hb, 0, &z);
	check(p == 1, "Mann-Whitney of empty histograms: p 1");

	at_stat_holm(ps, 4, adj);
	check(near(adj[0], 0.03, 1e-12) && near(adj[1], 0.06, 1e-12) && near(adj[2], 0.06, 1e-12) &&
		  near(adj[3], 0.02, 1e-12),
	      "Holm adjusted p-values (monotone step-down)");
}

/* ---- in-memory recordings ---- */

#define NF 10
#define NW 6

/*
 * A recording of NF functions f0..f9 in binary prog over NW windows; each
 * window has calls[f] calls of about base_ns[f] * scale ns (jittered).
 */
static void make_trace(struct at_trace *t, const char *prog, const double *ns, const int *calls,
		       double scale, unsigned seed)
{
	char name[32];

	memset(t, 0, sizeof(*t));
	t->nbins = 1;
	t->bins = at_xcalloc(1, sizeof(*t->bins));
	snprintf(name, sizeof(name), "/build/%s", prog);
	t->bins[0].path = at_xstrdup(name);
	t->nsyms = NF;
	t->syms = at_xcalloc(NF, sizeof(*t->syms));
	for (int f = 0; f < NF; f++) {
		snprintf(name, sizeof(name), "f%d", f);
		t->syms[f].id = (uint32_t)f;
		t->syms[f].name = at_xstrdup(name);
	}
	t->kv = at_xcalloc(1, sizeof(*t->kv));
	t->nkv = 1;
	t->kv[0].key = at_xstrdup("target_command");
	t->kv[0].value = at_xstrdup(prog);
	t->nwins = NW;
	t->wins = at_xcalloc(NW, sizeof(*t->wins));
	srand(seed);
	for (int w = 0; w < NW; w++) {
		struct at_window *win = &t->wins[w];

		win->start_ns = (uint64_t)w * 100000000;
		win->end_ns = win->start_ns + 100000000;
		win->n = NF;
		win->e = at_xcalloc(NF, sizeof(*win->e));
		for (int f = 0; f < NF; f++) {
			struct at_window_entry *e = &win->e[f];
			/* Two adjacent buckets around the value, 3 % jitter per window. */
			double v = ns[f] * scale * (1 + 0.03 * ((rand() % 1000) / 1000.0 - 0.5));
			uint32_t b = at_hist_bucket((uint64_t)v);

			e->id = (uint32_t)f;
			e->c.calls = e->c.returns = (uint64_t)calls[f];
			e->c.sum_ns = (uint64_t)(v * calls[f]);
			e->c.min_ns = (uint64_t)(v * 0.97);
			e->c.max_ns = (uint64_t)(v * 1.03);
			e->nhist = 2;
			e->hist = at_xcalloc(2, sizeof(*e->hist));
			e->hist[0].bucket = b;
			e->hist[0].count = (uint64_t)calls[f] / 2;
			e->hist[1].bucket = b + 1;
			e->hist[1].count = (uint64_t)calls[f] - (uint64_t)calls[f] / 2;
		}
	}
	t->has_end = true;
	t->end.duration_ns = NW * 100000000ULL;
}

static const struct at_diff_row *row_of(const struct at_diff_result *r, const char *name)
{
	for (size_t k = 0; k < r->nrows; k++)
		if (!strcmp(r->rows[k].name, name))
			return &r->rows[k];
	return NULL;
}

static void test_verdicts(void)
{
	double ns[NF], ns_new[NF];
	int calls[NF], calls_new[NF];
	struct at_trace a, b, c;
	struct at_profile_set pa, pb, pc;
	struct at_diff_opts o;
	struct at_diff_result r;
	char err[256];
	bool reg[NF];
	int rc;

	for (int f = 0; f < NF; f++) {
		ns[f] = ns_new[f] = 20000 + 3000.0 * f;
		calls[f] = calls_new[f] = 100;
	}
	ns_new[3] *= 1.3;  /* f3 30 % slower */
	calls_new[5] *= 2; /* f5 called twice as often */
	make_trace(&a, "prog", ns, calls, 1.0, 1);
	/* NEW ran on a machine twice as slow: every function 2x, f3 2.6x. */
	make_trace(&b, "prog", ns_new, calls_new, 2.0, 2);
	at_profile_set_init(&pa, &a);
	at_profile_set_init(&pb, &b);
	at_diff_opts_default(&o);
	rc = at_diff_compute(&a, pa.p, &b, pb.p, &o, &r, err, sizeof(err));
	check(rc == 0 && r.compared == NF, "diff of two builds of one program: all compared");
	check(near(r.speed, 2.0, 0.05), "common factor of a machine twice as slow is about 2");
	check(r.nregressed == 1 && row_of(&r, "f3")->verdict == AT_DV_WORSE,
	      "only f3 regressed, relative to the common factor");
	check(near(row_of(&r, "f3")->change_pct, 30, 0.15) &&
		  !strcmp(row_of(&r, "f3")->test, "welch"),
	      "f3: change about +30 %, Welch on the interval series");
	check(r.per_run && r.nmore == 1 && row_of(&r, "f5")->calls_verdict == AT_DV_WORSE &&
		  near(row_of(&r, "f5")->calls_change_pct, 100, 1e-9),
	      "f5 called twice as often per run: calls_changed +100 %");
	check(at_diff_failed(&r), "the diff fails");
	at_diff_free(&r);

	/* f5's new count estimated from probing windows: tested against its interval. */
	{
		struct at_func_profile *q = &pb.p[5], keep = *q;
		double n = (double)q->c.calls;

		q->estimated = true;
		q->calls_lo = n * 0.3;
		q->calls_hi = n * 1.7;
		rc = at_diff_compute(&a, pa.p, &b, pb.p, &o, &r, err, sizeof(err));
		check(rc == 0 && row_of(&r, "f5")->new_est && !row_of(&r, "f5")->base_est &&
			  row_of(&r, "f5")->calls_verdict == AT_DV_SAME && r.nmore == 0,
		      "an estimate with a wide interval: +100 % is not a calls change");
		at_diff_free(&r);
		q->calls_lo = n * 0.95;
		q->calls_hi = n * 1.05;
		rc = at_diff_compute(&a, pa.p, &b, pb.p, &o, &r, err, sizeof(err));
		check(
		    rc == 0 && row_of(&r, "f5")->calls_verdict == AT_DV_WORSE &&
			row_of(&r, "f5")->calls_p_adj < 0.01,
		    "an estimate with a narrow interval: +100 % is a calls change, with a p-value");
		at_diff_free(&r);
		*q = keep;
	}

	o.absolute = true;
	rc = at_diff_compute(&a, pa.p, &b, pb.p, &o, &r, err, sizeof(err));
	check(rc == 0 && r.speed == 1 && r.nregressed == NF,
	      "--absolute: every function of the slower run regressed");
	at_diff_free(&r);
	o.absolute = false;

	/* Both findings on one function: one failure element (JUnit allows one). */
	rc = at_diff_compute(&a, pa.p, &b, pb.p, &o, &r, err, sizeof(err));
	if (rc == 0 && row_of(&r, "f3")) {
		char path[] = "/tmp/adaptrace-junit.XXXXXX", buf[16384] = "";
		int fd = mkstemp(path), nfail = 0, nrows = 0;
		FILE *f;
		size_t n = 0;

		struct at_diff_row *x = (struct at_diff_row *)row_of(&r, "f3");

		x->verdict = AT_DV_WORSE;
		x->calls_verdict = AT_DV_WORSE;
		if (fd >= 0 && at_diff_write_junit(path, &r, &o) == 0 && (f = fopen(path, "r"))) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		for (const char *q = buf; (q = strstr(q, "<failure ")); q++)
			nfail++;
		for (size_t k = 0; k < r.nrows; k++)
			nrows += r.rows[k].base_id >= 0 && r.rows[k].new_id >= 0 &&
				 (r.rows[k].verdict == AT_DV_WORSE ||
				  r.rows[k].calls_verdict == AT_DV_WORSE);
		check(nfail == nrows &&
			  strstr(buf, "type=\"latency regression; called more often\""),
		      "JUnit: a latency regression that is also called more often is one failure");
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
	}
	at_diff_free(&r);

	at_diff_regressed(&a, &b, pb.p, &o, reg);
	check(reg[3] && reg[5] && !reg[0] && !reg[4],
	      "at_diff_regressed: f3 (latency) and f5 (calls) flagged, others not");

	free(a.syms[0].name);
	a.syms[0].name = at_xstrdup("op<&\"'\x01\xff>\xc3\xa9");
	rc = at_diff_compute(&a, pa.p, &a, pa.p, &o, &r, err, sizeof(err));
	check(rc == 0 && !at_diff_failed(&r) && r.nimproved == 0 && r.speed == 1,
	      "a recording against itself: no change");
	{
		char path[] = "/tmp/adaptrace-junit.XXXXXX", buf[8192] = "";
		int fd = mkstemp(path);
		FILE *f;
		size_t n = 0;

		if (fd >= 0 && at_diff_write_junit(path, &r, &o) == 0 && (f = fopen(path, "r"))) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		check(strstr(
			  buf,
			  "name=\"op&lt;&amp;&quot;&apos;\xef\xbf\xbd\xef\xbf\xbd&gt;\xc3\xa9\"") &&
			  strstr(buf, "tests=\"10\" failures=\"0\""),
		      "JUnit: names escaped, bad bytes replaced, UTF-8 kept; 10 tests, 0 failures");
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
	}
	at_diff_free(&r);

	/* Another program: no common symbol names, another binary name. */
	make_trace(&c, "other", ns, calls, 1.0, 3);
	for (int f = 0; f < NF; f++) {
		free(c.syms[f].name);
		c.syms[f].name = at_xstrdup(f % 2 ? "g" : "h");
	}
	at_profile_set_init(&pc, &c);
	rc = at_diff_compute(&a, pa.p, &c, pc.p, &o, &r, err, sizeof(err));
	check(rc == -1 && strstr(err, "different programs (prog and other"),
	      "different programs are refused");
	o.force = true;
	rc = at_diff_compute(&a, pa.p, &c, pc.p, &o, &r, err, sizeof(err));
	check(rc == 0 && r.compared == 0 && r.nvanished == NF && r.nappeared == NF,
	      "--force: all vanished and appeared, duplicate names kept apart");
	at_diff_free(&r);

	at_profile_set_free(&pa);
	at_profile_set_free(&pb);
	at_profile_set_free(&pc);
	at_trace_free(&a);
	at_trace_free(&b);
	at_trace_free(&c);
}

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void chrome_fn(FILE *f, void *arg)
{
	at_export_chrome(f, arg);
}

static void test_chrome(void)
{
	/* Events live here, not on the heap: at_trace_free() is not asked to free them. */
	char str[] = "a\"b\\c\nd\x01\xff\xc3\xa9";
	struct at_event ev[1];
	struct at_trace t;
	char *out;

	memset(&t, 0, sizeof(t));
	t.nbins = 1;
	t.bins = at_xcalloc(1, sizeof(*t.bins));
	t.bins[0].path = at_xstrdup("/usr/bin/srv");
	t.nsyms = 1;
	t.syms = at_xcalloc(1, sizeof(*t.syms));
	t.syms[0].name = at_xstrdup("parse");
	t.nkv = 1;
	t.kv = at_xcalloc(1, sizeof(*t.kv));
	t.kv[0].key = at_xstrdup("target");
	t.kv[0].value = at_xstrdup("pid 77 (/usr/bin/srv)");
	t.nevents = 1;
	t.events = ev;
	t.events[0] = (struct at_event){.ts_ns = 1500,
					.pid = 77,
					.tid = 78,
					.cpu = 1,
					.id = 0,
					.duration_ns = 2500,
					.ret = -22,
					.nargs = 4};
	t.events[0].args[0] = (struct at_arg){.type = AT_ARG_STR, .truncated = true, .v = 0x1000};
	t.events[0].args[0].str = str;
	t.events[0].args[1] = (struct at_arg){.type = AT_ARG_INT, .v = (uint64_t)-5};
	t.events[0].args[2] = (struct at_arg){.type = AT_ARG_RAW, .v = 0xffffffffffffffffULL};
	t.events[0].args[3] = (struct at_arg){.type = AT_ARG_STR, .str = NULL};

	out = capture(chrome_fn, &t);
	check(strstr(out, "{\"name\":\"parse\",\"cat\":\"srv\",\"ph\":\"X\",\"ts\":1.500,"
			  "\"dur\":2.500,\"pid\":77,\"tid\":78,") != NULL,
	      "chrome: complete event with name, cat, ph X, ts and dur in us, pid, tid");
	check(
	    strstr(out,
		   "\"arg0\":\"a\\\"b\\\\c\\nd\\u0001\\ufffd\xc3\xa9\",\"arg0_truncated\":true") !=
		NULL,
	    "chrome: string argument escaped, bad UTF-8 replaced, valid UTF-8 kept");
	check(
	    strstr(out, "\"arg1\":-5,\"arg2\":\"0xffffffffffffffff\",\"arg3\":null,\"ret\":-22") !=
		NULL,
	    "chrome: signed int, raw register as hex string, unreadable string null, ret");
	check(strstr(out, "\"ph\":\"M\",\"pid\":77") != NULL, "chrome: process_name metadata");
	free(out);
	t.events = NULL;
	t.nevents = 0;
	at_trace_free(&t);
}

int main(void)
{
	test_stats();
	test_verdicts();
	test_chrome();
	printf("# test_diff: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
