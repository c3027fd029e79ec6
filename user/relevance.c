// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Relevance expressions: parser, grouping, evaluator, hysteresis. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convergence.h"
#include "relevance.h"
#include "util.h"

/* Deeper nesting is refused: the parser recurses. */
#define MAX_DEPTH 64
/* So are longer expressions: the evaluator recurses along | and & chains. */
#define MAX_FACTORS 1000

static const char *const metric_names[AT_M_NR] = {
    "calls", "rate", "total", "share", "self",	 "mean",	"p50",
    "p90",   "p99",  "max",   "cov",   "errors", "concurrency", "error share",
};

static const char *const crit_names[AT_C_NR] = {
    "frequent", "expensive", "latent", "changeable", "error-prone", "concurrent", "regressed",
};

static const enum at_rel_metric crit_metric[AT_C_NR] = {
    AT_M_RATE, AT_M_SHARE, AT_M_P99, AT_M_COV, AT_M_ERRSHARE, AT_M_CONCURRENCY, AT_M_NR,
};

static const char *const level_names[] = {"very low", "low", "average", "high", "very high"};

enum unit_kind { U_COUNT, U_TIME, U_PCT, U_RATIO };

static enum unit_kind metric_unit(enum at_rel_metric m)
{
	switch (m) {
	case AT_M_TOTAL:
	case AT_M_SELF:
	case AT_M_MEAN:
	case AT_M_P50:
	case AT_M_P90:
	case AT_M_P99:
	case AT_M_MAX:
		return U_TIME;
	case AT_M_SHARE:
	case AT_M_ERRSHARE:
		return U_PCT;
	case AT_M_COV:
		return U_RATIO;
	default:
		return U_COUNT;
	}
}

const char *at_rel_metric_name(enum at_rel_metric m)
{
	return (unsigned)m < AT_M_NR ? metric_names[m] : "?";
}

const char *at_rel_criterion_name(enum at_rel_criterion c)
{
	return (unsigned)c < AT_C_NR ? crit_names[c] : "?";
}

const char *at_rel_level_name(enum at_rel_level l)
{
	return (unsigned)l <= AT_LVL_VERY_HIGH ? level_names[l] : "?";
}

enum at_rel_metric at_rel_criterion_metric(enum at_rel_criterion c)
{
	return (unsigned)c < AT_C_NR ? crit_metric[c] : AT_M_NR;
}

char *at_rel_fmt_metric(char *buf, size_t len, enum at_rel_metric m, double v)
{
	char tmp[32];

	if (isnan(v)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	switch (metric_unit(m)) {
	case U_TIME:
		snprintf(buf, len, "%s", at_fmt_ns(tmp, sizeof(tmp), v));
		break;
	case U_PCT:
		snprintf(buf, len, "%.3g%%", v);
		break;
	case U_RATIO:
		snprintf(buf, len, "%.3g", v);
		break;
	default:
		if (v < 1e4)
			snprintf(buf, len, "%.4g%s", v, m == AT_M_RATE ? "/s" : "");
		else if (v < 1e7)
			snprintf(buf, len, "%.3gk%s", v / 1e3, m == AT_M_RATE ? "/s" : "");
		else
			snprintf(buf, len, "%.3gM%s", v / 1e6, m == AT_M_RATE ? "/s" : "");
	}
	return buf;
}

/* ---- rows ---- */

void at_rel_row_fill(struct at_rel_row *r, uint32_t id, const struct at_counts *c,
		     const uint64_t *hist, uint64_t interval_ns, uint64_t all_total_ns)
{
	double n = (double)c->returns, mean, var;

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->active = c->calls > 0;
	r->m[AT_M_CALLS] = (double)c->calls;
	r->m[AT_M_RATE] =
	    interval_ns ? (double)c->calls * 1e9 / (double)interval_ns : (double)c->calls;
	r->m[AT_M_ERRORS] = (double)c->errors;
	r->m[AT_M_CONCURRENCY] = (double)c->max_conc;
	r->m[AT_M_ERRSHARE] =
	    c->calls ? 100.0 * (double)c->errors / (double)(c->returns ? c->returns : c->calls)
		     : NAN;
	/* Latency metrics exist only for timed calls (not for USDT rows). */
	for (int m = AT_M_TOTAL; m <= AT_M_COV; m++)
		if (m != AT_M_SHARE)
			r->m[m] = NAN;
	r->m[AT_M_SHARE] = NAN;
	if (!c->returns)
		return;
	mean = (double)c->sum_ns / n;
	var = c->sumsq / n - mean * mean;
	r->m[AT_M_TOTAL] = (double)c->total_ns;
	r->m[AT_M_SHARE] = all_total_ns ? 100.0 * (double)c->total_ns / (double)all_total_ns : 0;
	r->m[AT_M_SELF] = (double)c->self_ns;
	r->m[AT_M_MEAN] = mean;
	r->m[AT_M_MAX] = (double)c->max_ns;
	r->m[AT_M_COV] = mean > 0 && n >= 2 ? sqrt(var > 0 ? var : 0) / mean : 0;
	if (hist) {
		r->m[AT_M_P50] = (double)at_hist_quantile(hist, 0.50, c->min_ns, c->max_ns);
		r->m[AT_M_P90] = (double)at_hist_quantile(hist, 0.90, c->min_ns, c->max_ns);
		r->m[AT_M_P99] = (double)at_hist_quantile(hist, 0.99, c->min_ns, c->max_ns);
	} else {
		r->m[AT_M_P50] = r->m[AT_M_P90] = r->m[AT_M_P99] = mean;
	}
}

void at_rel_row_from_entry(struct at_rel_row *r, const struct at_window_entry *e,
			   uint64_t interval_ns, uint64_t all_total_ns)
{
	uint64_t *hist = NULL;

	if (e->nhist) {
		hist = at_xcalloc(AT_HIST_BUCKETS, sizeof(*hist));
		for (uint32_t i = 0; i < e->nhist; i++)
			if (e->hist[i].bucket < AT_HIST_BUCKETS)
				hist[e->hist[i].bucket] += e->hist[i].count;
	}
	at_rel_row_fill(r, e->id, &e->c, hist, interval_ns, all_total_ns);
	free(hist);
}

size_t at_rel_rows_from_window(const struct at_window *w, struct at_rel_row **rows)
{
	uint64_t all = 0;

	*rows = at_xcalloc(w->n ? w->n : 1, sizeof(**rows));
	for (uint32_t i = 0; i < w->n; i++)
		all += w->e[i].c.total_ns;
	for (uint32_t i = 0; i < w->n; i++)
		at_rel_row_from_entry(&(*rows)[i], &w->e[i], w->end_ns - w->start_ns, all);
	return w->n;
}

/* ---- grouping ---- */

/* The log transform's offset: about one unit of the metric's resolution. */
static double log_floor(enum at_rel_metric m)
{
	switch (metric_unit(m)) {
	case U_TIME:
		return 1; /* ns */
	case U_PCT:
		return 0.01;
	case U_RATIO:
		return 0.01;
	default:
		return m == AT_M_RATE ? 0.01 : 1;
	}
}

static double xform(enum at_rel_metric m, double v)
{
	return log((v > 0 ? v : 0) + log_floor(m));
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Quantile of sorted v (R type 7: linear between order statistics). */
static double quantile_sorted(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)h;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

double at_lilliefors_p(double k, size_t n)
{
	double kd, nd, pv, kk;

	/* Dallal and Wilkinson (1986); Stephens' modified statistic above 0.1. */
	kd = n <= 100 ? k : k * pow((double)n / 100, 0.49);
	nd = n <= 100 ? (double)n : 100;
	pv = exp(-7.01256 * kd * kd * (nd + 2.78019) + 2.99587 * kd * sqrt(nd + 2.78019) -
		 0.122119 + 0.974598 / sqrt(nd) + 1.67997 / nd);
	if (pv > 0.1) {
		kk = (sqrt((double)n) - 0.01 + 0.85 / sqrt((double)n)) * k;
		if (kk <= 0.302)
			pv = 1;
		else if (kk <= 0.5)
			pv = 2.76773 - 19.828315 * kk + 80.709644 * kk * kk -
			     138.55152 * pow(kk, 3) + 81.218052 * pow(kk, 4);
		else if (kk <= 0.9)
			pv = -4.901232 + 40.662806 * kk - 97.490286 * kk * kk +
			     94.029866 * pow(kk, 3) - 32.355711 * pow(kk, 4);
		else if (kk <= 1.31)
			pv = 6.198765 - 19.558097 * kk + 23.186922 * kk * kk -
			     12.234627 * pow(kk, 3) + 2.423045 * pow(kk, 4);
		else
			pv = 0;
	}
	return pv < 0 ? 0 : pv > 1 ? 1 : pv;
}

int at_lilliefors(const double *v, size_t n, double *d, double *p)
{
	double mean = 0, ss = 0, sd, k = 0;
	double *x;

	*d = NAN;
	*p = NAN;
	if (n < 5)
		return -1;
	for (size_t i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	sd = sqrt(ss / (double)(n - 1));
	/* equal values leave rounding noise in sd: no distribution to test */
	if (!(sd > 1e-12 * fabs(mean)) || !isfinite(sd))
		return -1;
	x = at_xcalloc(n, sizeof(*x));
	memcpy(x, v, n * sizeof(*x));
	qsort(x, n, sizeof(*x), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double f = at_norm_cdf((x[i] - mean) / sd);
		double dp = (double)(i + 1) / (double)n - f, dm = f - (double)i / (double)n;

		if (dp > k)
			k = dp;
		if (dm > k)
			k = dm;
	}
	free(x);
	*d = k;
	*p = at_lilliefors_p(k, n);
	return 0;
}

int at_rel_group(enum at_rel_metric m, const double *v, size_t n, struct at_rel_groups *g)
{
	double *x, sum = 0, ss = 0;
	size_t nl = 0, nu = 0, k = 0;

	memset(g, 0, sizeof(*g));
	g->ks_d = g->ks_p = NAN;
	g->log_scale = true;
	g->metric = m;
	x = at_xcalloc(n ? n : 1, sizeof(*x));
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			x[k++] = v[i];
	g->n = k;
	if (!k) {
		free(x);
		return -1;
	}
	qsort(x, k, sizeof(*x), cmp_double);
	if (k >= AT_REL_MIN_NORMAL) {
		double *t = at_xcalloc(k, sizeof(*t));

		for (size_t i = 0; i < k; i++) {
			t[i] = xform(m, x[i]);
			sum += t[i];
		}
		g->mean = sum / (double)k;
		for (size_t i = 0; i < k; i++)
			ss += (t[i] - g->mean) * (t[i] - g->mean);
		g->sd = sqrt(ss / (double)(k - 1));
		if (!at_lilliefors(t, k, &g->ks_d, &g->ks_p) && g->ks_p >= AT_REL_ALPHA) {
			g->strategy = AT_REL_NORMAL;
			g->cut[0] = g->mean - 2 * AT_REL_K * g->sd;
			g->cut[1] = g->mean - AT_REL_K * g->sd;
			g->cut[2] = g->mean + AT_REL_K * g->sd;
			g->cut[3] = g->mean + 2 * AT_REL_K * g->sd;
		}
		free(t);
		if (g->strategy == AT_REL_NORMAL) {
			free(x);
			return 0;
		}
	}
	g->strategy = AT_REL_QUARTILES;
	g->q[0] = quantile_sorted(x, k, 0.25);
	g->q[1] = quantile_sorted(x, k, 0.50);
	g->q[2] = quantile_sorted(x, k, 0.75);
	/* The outer quarters, split at their own medians. */
	for (size_t i = 0; i < k; i++)
		if (x[i] <= g->q[0] && x[i] < g->q[1])
			nl++;
	for (size_t i = 0; i < k; i++)
		if (x[i] >= g->q[2] && x[i] > g->q[1])
			nu++;
	g->lo_med = nl ? quantile_sorted(x, nl, 0.5) : g->q[0];
	g->hi_med = nu ? quantile_sorted(x + (k - nu), nu, 0.5) : g->q[2];
	free(x);
	return 0;
}

static enum at_rel_metric group_metric(const struct at_rel_groups *g);

enum at_rel_level at_rel_level_of(const struct at_rel_groups *g, double v)
{
	double t;

	if (isnan(v))
		return AT_LVL_AVERAGE;
	switch (g->strategy) {
	case AT_REL_NORMAL:
		t = xform(group_metric(g), v);
		if (t < g->cut[0])
			return AT_LVL_VERY_LOW;
		if (t < g->cut[1])
			return AT_LVL_LOW;
		if (t <= g->cut[2])
			return AT_LVL_AVERAGE;
		return t <= g->cut[3] ? AT_LVL_HIGH : AT_LVL_VERY_HIGH;
	case AT_REL_QUARTILES:
		if (v <= g->q[0] && v < g->q[1])
			return v <= g->lo_med ? AT_LVL_VERY_LOW : AT_LVL_LOW;
		if (v >= g->q[2] && v > g->q[1])
			return v >= g->hi_med ? AT_LVL_VERY_HIGH : AT_LVL_HIGH;
		return AT_LVL_AVERAGE;
	default:
		return AT_LVL_AVERAGE;
	}
}

static enum at_rel_metric group_metric(const struct at_rel_groups *g)
{
	return (enum at_rel_metric)g->metric;
}

/* ---- parser ---- */

enum node_kind { N_OR, N_AND, N_NOT, N_ALL, N_NONE, N_CRIT, N_CMP };
enum modifier { MOD_NONE, MOD_MOST, MOD_MORE, MOD_LESS, MOD_LEAST };
enum cmp_op { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };

static const char *const mod_names[] = {"", "most", "more", "less", "least"};
static const char *const cmp_names[] = {"<", "<=", ">", ">=", "==", "!="};

struct node {
	enum node_kind kind;
	struct node *l, *r;
	enum modifier mod;
	enum at_rel_criterion crit;
	enum at_rel_metric metric;
	enum cmp_op cmp;
	double num;    /* in the metric's base unit */
	char text[24]; /* the number as written, for reasons */
};

struct at_rel_expr {
	struct node *root;
};

enum tok_kind { T_END, T_WORD, T_NUM, T_OR, T_AND, T_NOT, T_LP, T_RP, T_CMP, T_BAD };

struct tok {
	enum tok_kind kind;
	size_t pos, len; /* byte offset and length in the text */
	enum cmp_op cmp;
};

struct parser {
	const char *s;
	struct tok t;
	int depth, factors;
	char *err;
	size_t errlen;
	bool failed;
};

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static void next(struct parser *p)
{
	const char *s = p->s;
	size_t i = p->t.pos + p->t.len;

	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
		i++;
	p->t.pos = i;
	p->t.len = 1;
	switch (s[i]) {
	case 0:
		p->t.kind = T_END;
		p->t.len = 0;
		return;
	case '|':
		p->t.kind = T_OR;
		p->t.len = s[i + 1] == '|' ? 2 : 1;
		return;
	case '&':
		p->t.kind = T_AND;
		p->t.len = s[i + 1] == '&' ? 2 : 1;
		return;
	case '(':
		p->t.kind = T_LP;
		return;
	case ')':
		p->t.kind = T_RP;
		return;
	case '!':
		if (s[i + 1] == '=') {
			p->t.kind = T_CMP;
			p->t.cmp = CMP_NE;
			p->t.len = 2;
		} else {
			p->t.kind = T_NOT;
		}
		return;
	case '<':
	case '>':
		p->t.kind = T_CMP;
		p->t.cmp = s[i] == '<' ? (s[i + 1] == '=' ? CMP_LE : CMP_LT)
				       : (s[i + 1] == '=' ? CMP_GE : CMP_GT);
		p->t.len = s[i + 1] == '=' ? 2 : 1;
		return;
	case '=':
		p->t.kind = T_CMP;
		p->t.cmp = CMP_EQ;
		p->t.len = s[i + 1] == '=' ? 2 : 1;
		return;
	}
	if (isdigit((unsigned char)s[i]) || (s[i] == '.' && isdigit((unsigned char)s[i + 1]))) {
		size_t j = i;

		while (isdigit((unsigned char)s[j]))
			j++;
		if (s[j] == '.')
			for (j++; isdigit((unsigned char)s[j]);)
				j++;
		p->t.kind = T_NUM;
		p->t.len = j - i;
		return;
	}
	if (word_char(s[i])) {
		size_t j = i;

		while (word_char(s[j]))
			j++;
		p->t.kind = T_WORD;
		p->t.len = j - i;
		return;
	}
	p->t.kind = T_BAD;
}

static bool is_word(const struct parser *p, const char *w)
{
	return p->t.kind == T_WORD && strlen(w) == p->t.len &&
	       !memcmp(p->s + p->t.pos, w, p->t.len);
}

/* The current token for messages: 'text' (printable, shortened) or "end of expression". */
static void tok_desc(const struct parser *p, char *buf, size_t len)
{
	size_t n = p->t.len ? p->t.len : 1, o = 0;

	if (p->t.kind == T_END) {
		snprintf(buf, len, "end of expression");
		return;
	}
	if (p->t.kind == T_WORD || p->t.kind == T_NUM) {
		/* show a word with what sticks to it, up to a blank */
		while (p->s[p->t.pos + n] && !isspace((unsigned char)p->s[p->t.pos + n]) &&
		       strchr("()|&!<>=", p->s[p->t.pos + n]) == NULL)
			n++;
	}
	if (n > 20)
		n = 20;
	buf[o++] = '\'';
	for (size_t i = 0; i < n && o + 6 < len; i++) {
		unsigned char c = (unsigned char)p->s[p->t.pos + i];

		if (isprint(c) && c != '\'')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	snprintf(buf + o, len - o, "'");
}

static struct node *fail(struct parser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static struct node *fail(struct parser *p, size_t pos, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (p->failed)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "column %zu: %s", pos + 1, msg);
	p->failed = true;
	return NULL;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->l);
	node_free(n->r);
	free(n);
}

static struct node *node_new(enum node_kind k, struct node *l, struct node *r)
{
	struct node *n = at_xcalloc(1, sizeof(*n));

	n->kind = k;
	n->l = l;
	n->r = r;
	return n;
}

static struct node *parse_expr(struct parser *p);

static int find_name(const struct parser *p, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (is_word(p, names[i]))
			return i;
	return -1;
}

/* A unit after a number: scale into the metric's base unit, or fail. */
/* attached: the word follows the number without a blank ("2ms", "2kg"). */
static bool parse_unit(struct parser *p, struct node *n, bool attached)
{
	static const struct {
		const char *name;
		enum unit_kind kind;
		double scale;
	} units[] = {
	    {"ns", U_TIME, 1},	 {"us", U_TIME, 1e3}, {"ms", U_TIME, 1e6}, {"s", U_TIME, 1e9},
	    {"k", U_COUNT, 1e3}, {"M", U_COUNT, 1e6}, {"G", U_COUNT, 1e9}, {"%", U_PCT, 1},
	};
	enum unit_kind want = metric_unit(n->metric);
	const char *s = p->s + p->t.pos;
	size_t len;
	char desc[48];
	bool known = false;

	if (*s == '%')
		len = 1;
	else if (p->t.kind == T_WORD)
		len = p->t.len;
	else
		return true;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strlen(units[i].name) != len || memcmp(s, units[i].name, len))
			continue;
		known = true;
		if (units[i].kind == U_PCT) {
			if (n->metric == AT_M_ERRORS)
				n->metric = AT_M_ERRSHARE;
			else if (want == U_RATIO)
				n->num /= 100;
			else if (want != U_PCT)
				break;
		} else if (units[i].kind != want) {
			break;
		} else {
			n->num *= units[i].scale;
		}
		p->t.len = len;
		next(p);
		return true;
	}
	/* A word after a blank that is no unit belongs to what follows. */
	if (!known && !attached)
		return true;
	tok_desc(p, desc, sizeof(desc));
	fail(p, p->t.pos, "unit %s does not apply to %s (%s)", desc, metric_names[n->metric],
	     want == U_TIME		? "times take ns, us, ms or s"
	     : want == U_PCT		? "a share takes %"
	     : want == U_RATIO		? "cov takes %"
	     : n->metric == AT_M_ERRORS ? "counts take k, M, G; % gives the error share"
					: "counts take k, M or G");
	return false;
}

static struct node *parse_cmp(struct parser *p, enum at_rel_metric m)
{
	struct node *n = node_new(N_CMP, NULL, NULL);
	char desc[48];
	size_t pos, numlen;

	n->metric = m;
	next(p);
	if (p->t.kind != T_CMP) {
		tok_desc(p, desc, sizeof(desc));
		node_free(n);
		return fail(p, p->t.pos,
			    "expected a comparison (<, <=, >, >=, ==, !=) after '%s', got %s",
			    metric_names[m], desc);
	}
	n->cmp = p->t.cmp;
	next(p);
	pos = p->t.pos;
	if (p->t.kind != T_NUM) {
		enum cmp_op op = n->cmp;

		tok_desc(p, desc, sizeof(desc));
		node_free(n);
		return fail(p, pos, "expected a number after '%s', got %s", cmp_names[op], desc);
	}
	n->num = strtod(p->s + pos, NULL);
	numlen = p->t.len;
	snprintf(n->text, sizeof(n->text), "%.*s", (int)(p->t.len < 16 ? p->t.len : 16),
		 p->s + pos);
	if (!isfinite(n->num)) {
		node_free(n);
		return fail(p, pos, "number out of range");
	}
	/* The unit may stick to the number ("2ms") or follow a blank ("2 ms"). */
	next(p);
	if (!parse_unit(p, n, p->t.pos == pos + numlen)) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *parse_factor(struct parser *p)
{
	struct node *n;
	char desc[48];
	int i, mod = MOD_NONE;
	size_t pos = p->t.pos;

	if (++p->depth > MAX_DEPTH)
		return fail(p, pos, "expression nested too deeply (over %d levels)", MAX_DEPTH);
	if (++p->factors > MAX_FACTORS)
		return fail(p, pos, "expression too long (over %d terms)", MAX_FACTORS);
	if (p->t.kind == T_NOT || is_word(p, "not")) {
		next(p);
		n = parse_factor(p);
		p->depth--;
		return n ? node_new(N_NOT, n, NULL) : NULL;
	}
	if (p->t.kind == T_LP) {
		next(p);
		n = parse_expr(p);
		if (!n)
			return NULL;
		if (p->t.kind != T_RP) {
			node_free(n);
			tok_desc(p, desc, sizeof(desc));
			return fail(p, p->t.kind == T_END ? pos : p->t.pos,
				    p->t.kind == T_END ? "'(' is not closed%s"
						       : "expected ')' or an operator, got %s",
				    p->t.kind == T_END ? "" : desc);
		}
		next(p);
		p->depth--;
		return n;
	}
	if (is_word(p, "all") || is_word(p, "none")) {
		n = node_new(is_word(p, "all") ? N_ALL : N_NONE, NULL, NULL);
		next(p);
		p->depth--;
		return n;
	}
	if (is_word(p, "default")) {
		struct parser sub = {.s = AT_REL_DEFAULT, .err = p->err, .errlen = p->errlen};

		next(&sub);
		n = parse_expr(&sub);
		next(p);
		p->depth--;
		return n;
	}
	if ((i = find_name(p, mod_names + 1, 4)) >= 0) {
		mod = i + 1;
		next(p);
		pos = p->t.pos;
		if ((i = find_name(p, crit_names, AT_C_NR)) < 0) {
			tok_desc(p, desc, sizeof(desc));
			return fail(p, pos,
				    "expected a criterion after '%s', got %s (criteria: "
				    "frequent, expensive, latent, changeable, error-prone, "
				    "concurrent, regressed)",
				    mod_names[mod], desc);
		}
		if (i == AT_C_REGRESSED)
			return fail(p, pos, "'regressed' is yes or no and takes no modifier");
	}
	if ((i = find_name(p, crit_names, AT_C_NR)) >= 0) {
		n = node_new(N_CRIT, NULL, NULL);
		n->crit = (enum at_rel_criterion)i;
		n->mod = (enum modifier)mod;
		next(p);
		p->depth--;
		return n;
	}
	if ((i = find_name(p, metric_names, AT_M_ERRSHARE)) >= 0) {
		n = parse_cmp(p, (enum at_rel_metric)i);
		p->depth--;
		return n;
	}
	if (find_name(p, (const char *const[]){"concurrency"}, 1) >= 0) {
		n = parse_cmp(p, AT_M_CONCURRENCY);
		p->depth--;
		return n;
	}
	tok_desc(p, desc, sizeof(desc));
	if (p->t.kind == T_END && pos == 0)
		return fail(p, pos, "empty expression (try 'default', 'more latent' or 'none')");
	return fail(p, pos, "expected a criterion or metric, got %s", desc);
}

static struct node *parse_term(struct parser *p)
{
	struct node *l = parse_factor(p), *r;

	while (l && (p->t.kind == T_AND || is_word(p, "and"))) {
		next(p);
		r = parse_factor(p);
		if (!r) {
			node_free(l);
			return NULL;
		}
		l = node_new(N_AND, l, r);
	}
	return l;
}

static struct node *parse_expr(struct parser *p)
{
	struct node *l = parse_term(p), *r;

	while (l && (p->t.kind == T_OR || is_word(p, "or"))) {
		next(p);
		r = parse_term(p);
		if (!r) {
			node_free(l);
			return NULL;
		}
		l = node_new(N_OR, l, r);
	}
	return l;
}

int at_rel_parse(const char *text, struct at_rel_expr **out, char *err, size_t errlen)
{
	struct parser p = {.s = text, .err = err, .errlen = errlen};
	struct node *root;
	char desc[48];

	*out = NULL;
	if (errlen)
		err[0] = 0;
	next(&p);
	root = parse_expr(&p);
	if (root && p.t.kind != T_END) {
		tok_desc(&p, desc, sizeof(desc));
		if (p.t.kind == T_RP)
			fail(&p, p.t.pos, "unexpected ')' (no '(' to close)");
		else
			fail(&p, p.t.pos, "expected '|', '&', 'or', 'and' or the end, got %s",
			     desc);
		node_free(root);
		root = NULL;
	}
	if (!root) {
		if (!p.failed)
			fail(&p, p.t.pos, "bad expression");
		return -1;
	}
	*out = at_xcalloc(1, sizeof(**out));
	(*out)->root = root;
	return 0;
}

void at_rel_free(struct at_rel_expr *e)
{
	if (!e)
		return;
	node_free(e->root);
	free(e);
}

bool at_rel_is_none(const struct at_rel_expr *e)
{
	return e && e->root->kind == N_NONE;
}

static bool node_uses(const struct node *n, enum at_rel_criterion c)
{
	return n &&
	       ((n->kind == N_CRIT && n->crit == c) || node_uses(n->l, c) || node_uses(n->r, c));
}

bool at_rel_uses_regressed(const struct at_rel_expr *e)
{
	return e && node_uses(e->root, AT_C_REGRESSED);
}

struct sbuf {
	char *s;
	size_t len, pos;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->pos >= b->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->pos, b->len - b->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->pos = b->pos + (size_t)n < b->len ? b->pos + (size_t)n : b->len - 1;
}

static void format_node(const struct node *n, struct sbuf *b)
{
	switch (n->kind) {
	case N_OR:
	case N_AND:
		sb_add(b, "(");
		format_node(n->l, b);
		sb_add(b, n->kind == N_OR ? " | " : " & ");
		format_node(n->r, b);
		sb_add(b, ")");
		break;
	case N_NOT:
		sb_add(b, "!");
		format_node(n->l, b);
		break;
	case N_ALL:
		sb_add(b, "all");
		break;
	case N_NONE:
		sb_add(b, "none");
		break;
	case N_CRIT:
		sb_add(b, "%s%s%s", mod_names[n->mod], n->mod ? " " : "", crit_names[n->crit]);
		break;
	case N_CMP:
		sb_add(b, "%s %s %.6g",
		       n->metric == AT_M_ERRSHARE ? "errors" : metric_names[n->metric],
		       cmp_names[n->cmp], n->num);
		if (metric_unit(n->metric) == U_PCT)
			sb_add(b, "%%");
		break;
	}
}

char *at_rel_format(const struct at_rel_expr *e, char *buf, size_t len)
{
	struct sbuf b = {buf, len, 0};

	if (len)
		buf[0] = 0;
	if (e)
		format_node(e->root, &b);
	return buf;
}

/* ---- evaluation ---- */

static bool level_matches(enum modifier mod, enum at_rel_level l)
{
	switch (mod) {
	case MOD_MOST:
		return l == AT_LVL_VERY_HIGH;
	case MOD_LESS:
		return l <= AT_LVL_LOW;
	case MOD_LEAST:
		return l == AT_LVL_VERY_LOW;
	default: /* more, or a bare criterion */
		return l >= AT_LVL_HIGH;
	}
}

static bool cmp_holds(enum cmp_op op, double v, double x)
{
	switch (op) {
	case CMP_LT:
		return v < x;
	case CMP_LE:
		return v <= x;
	case CMP_GT:
		return v > x;
	case CMP_GE:
		return v >= x;
	case CMP_EQ:
		return v == x;
	default:
		return v != x;
	}
}

/*
 * True/false for one row; on true, b gets why (on false, b is restored).
 * NaN metrics match nothing, negated or not: a row lacking a figure is not
 * "not latent" either.
 */
static bool eval_node(const struct node *n, const struct at_rel_row *r, const enum at_rel_level *lv,
		      struct sbuf *b)
{
	size_t mark = b->pos;
	char v[32], x[32];
	bool ok, lo, ro;

	switch (n->kind) {
	case N_OR:
		lo = eval_node(n->l, r, lv, b);
		mark = b->pos;
		if (lo)
			sb_add(b, "; ");
		ro = eval_node(n->r, r, lv, b);
		if (lo && !ro && mark < b->len) {
			b->pos = mark;
			b->s[mark] = 0;
		}
		return lo || ro;
	case N_AND:
		if (!eval_node(n->l, r, lv, b))
			return false;
		sb_add(b, ", ");
		if (!eval_node(n->r, r, lv, b)) {
			b->pos = mark;
			b->s[mark] = 0;
			return false;
		}
		return true;
	case N_NOT: {
		char what[96];
		struct sbuf tmp = {what, sizeof(what), 0};
		char dummy[AT_REL_REASON];
		struct sbuf d = {dummy, sizeof(dummy), 0};

		what[0] = 0;
		if (eval_node(n->l, r, lv, &d))
			return false;
		if (n->l->kind == N_CRIT && n->l->crit != AT_C_REGRESSED &&
		    isnan(r->m[crit_metric[n->l->crit]]))
			return false;
		if (n->l->kind == N_CMP && isnan(r->m[n->l->metric]))
			return false;
		format_node(n->l, &tmp);
		sb_add(b, "not %s", what);
		return true;
	}
	case N_ALL:
		sb_add(b, "all");
		return true;
	case N_NONE:
		return false;
	case N_CRIT:
		if (n->crit == AT_C_REGRESSED) {
			if (r->regressed)
				sb_add(b, "regressed");
			return r->regressed;
		}
		if (isnan(r->m[crit_metric[n->crit]]) || !level_matches(n->mod, lv[n->crit]))
			return false;
		at_rel_fmt_metric(v, sizeof(v), crit_metric[n->crit], r->m[crit_metric[n->crit]]);
		sb_add(b, "%s: %s (%s %s)", crit_names[n->crit], level_names[lv[n->crit]],
		       metric_names[crit_metric[n->crit]], v);
		return true;
	case N_CMP:
		ok = !isnan(r->m[n->metric]) && cmp_holds(n->cmp, r->m[n->metric], n->num);
		if (ok) {
			at_rel_fmt_metric(v, sizeof(v), n->metric, r->m[n->metric]);
			at_rel_fmt_metric(x, sizeof(x), n->metric, n->num);
			sb_add(b, "%s %s %s %s",
			       n->metric == AT_M_ERRSHARE ? "errors" : metric_names[n->metric], v,
			       cmp_names[n->cmp], x);
		}
		return ok;
	}
	return false;
}

size_t at_rel_eval(const struct at_rel_expr *e, const struct at_rel_row *rows, size_t n,
		   struct at_rel_result *out, struct at_rel_groups *groups)
{
	struct at_rel_groups g[AT_C_NR];
	double *v = at_xcalloc(n ? n : 1, sizeof(*v));
	size_t sel = 0;

	for (int c = 0; c < AT_C_NR; c++) {
		size_t k = 0;

		memset(&g[c], 0, sizeof(g[c]));
		if (c == AT_C_REGRESSED)
			continue;
		for (size_t i = 0; i < n; i++)
			if (rows[i].active)
				v[k++] = rows[i].m[crit_metric[c]];
		at_rel_group(crit_metric[c], v, k, &g[c]);
	}
	free(v);
	for (size_t i = 0; i < n; i++) {
		struct sbuf b = {out[i].reason, sizeof(out[i].reason), 0};

		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = rows[i].id;
		for (int c = 0; c < AT_C_NR; c++)
			out[i].level[c] = rows[i].active && c != AT_C_REGRESSED
					      ? at_rel_level_of(&g[c], rows[i].m[crit_metric[c]])
					      : AT_LVL_AVERAGE;
		if (!rows[i].active || !e)
			continue;
		out[i].selected = eval_node(e->root, &rows[i], out[i].level, &b);
		if (!out[i].selected)
			out[i].reason[0] = 0;
		else
			sel++;
	}
	if (groups)
		memcpy(groups, g, sizeof(g));
	return sel;
}

/* ---- hysteresis ---- */

struct track_ent {
	uint32_t hits, misses;
	bool member, forced, announced;
};

struct at_rel_track {
	uint32_t enter, leave;
	struct track_ent *e;
	size_t n;
};

struct at_rel_track *at_rel_track_new(uint32_t enter, uint32_t leave)
{
	struct at_rel_track *t = at_xcalloc(1, sizeof(*t));

	t->enter = enter ? enter : 1;
	t->leave = leave ? leave : 1;
	return t;
}

void at_rel_track_free(struct at_rel_track *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

static struct track_ent *track_get(struct at_rel_track *t, uint32_t id)
{
	if (id >= t->n) {
		size_t n = t->n ? t->n : 64;

		while (n <= id)
			n *= 2;
		t->e = at_xrealloc(t->e, n, sizeof(*t->e));
		memset(t->e + t->n, 0, (n - t->n) * sizeof(*t->e));
		t->n = n;
	}
	return &t->e[id];
}

void at_rel_track_force(struct at_rel_track *t, uint32_t id)
{
	struct track_ent *e = track_get(t, id);

	e->forced = true;
}

bool at_rel_track_member(const struct at_rel_track *t, uint32_t id)
{
	return id < t->n && (t->e[id].member || t->e[id].forced);
}

bool at_rel_track_forced(const struct at_rel_track *t, uint32_t id)
{
	return id < t->n && t->e[id].forced;
}

void at_sel_change_push(struct at_sel_change **changes, size_t *nchanges, uint64_t ts_ns,
			uint32_t id, uint32_t what, double rate, const char *reason)
{
	struct at_sel_change *c;

	*changes = at_xrealloc(*changes, *nchanges + 1, sizeof(**changes));
	c = &(*changes)[(*nchanges)++];
	c->ts_ns = ts_ns;
	c->id = id;
	c->what = what;
	c->rate = rate;
	c->reason = at_xstrdup(reason);
}

size_t at_rel_track_update(struct at_rel_track *t, const struct at_rel_row *rows,
			   const struct at_rel_result *res, size_t n, uint64_t now_ns,
			   struct at_sel_change **changes, size_t *nchanges)
{
	char why[AT_REL_REASON + 64];
	size_t before = *nchanges;

	for (uint32_t id = 0; id < t->n; id++) {
		struct track_ent *e = &t->e[id];

		if (e->forced && !e->announced) {
			e->announced = e->member = true;
			at_sel_change_push(changes, nchanges, now_ns, id, AT_SEL_ENTER, 0,
					   "forced by --detail");
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct track_ent *e;

		/* Idle: no evidence either way. */
		if (!rows[i].active)
			continue;
		e = track_get(t, rows[i].id);
		if (res[i].selected) {
			e->hits++;
			e->misses = 0;
			if (!e->member && e->hits >= t->enter) {
				e->member = true;
				snprintf(why, sizeof(why), "selected %u interval%s in a row: %s",
					 e->hits, e->hits == 1 ? "" : "s", res[i].reason);
				at_sel_change_push(changes, nchanges, now_ns, rows[i].id,
						   AT_SEL_ENTER, 0, why);
			}
		} else {
			e->misses++;
			e->hits = 0;
			if (e->member && !e->forced && e->misses >= t->leave) {
				e->member = false;
				snprintf(why, sizeof(why), "not selected %u interval%s in a row",
					 e->misses, e->misses == 1 ? "" : "s");
				at_sel_change_push(changes, nchanges, now_ns, rows[i].id,
						   AT_SEL_LEAVE, 0, why);
			}
		}
	}
	return *nchanges - before;
}

const char *at_rel_help(void)
{
	return "  EXPR selects the functions that get detail, every interval, from the coarse\n"
	       "  figures of that interval:\n"
	       "    EXPR := TERM (| TERM)...   TERM := FACTOR (& FACTOR)...   (also: or, and)\n"
	       "    FACTOR := !FACTOR | (EXPR) | [most|more|less|least] CRITERION\n"
	       "            | METRIC CMP NUMBER[UNIT] | all | none | default\n"
	       "    CRITERION: frequent (rate), expensive (share), latent (p99),\n"
	       "               changeable (cov), error-prone (error share), concurrent,\n"
	       "               regressed\n"
	       "    METRIC: calls rate total share self mean p50 p90 p99 max cov errors\n"
	       "            concurrency;  CMP: < <= > >= == !=\n"
	       "    UNIT: ns us ms s (times), k M G (counts, rates), % (share, cov,\n"
	       "          errors as a share of calls)\n"
	       "  Levels are relative to all functions active in the interval (five groups\n"
	       "  after Tigris); most = very high, more = high or very high, less = low or\n"
	       "  very low, least = very low. A function enters detail after 2 selected\n"
	       "  intervals in a row and leaves after 3 misses.\n"
	       "  Default: " AT_REL_DEFAULT "\n";
}
