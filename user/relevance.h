/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Relevance: the --select expression language (design.md, after Tigris,
 * Mertz 2021 ch. 3-4), the five-level grouping of each metric across the
 * traced rows, the evaluator, and the hysteresis that keeps the detailed
 * set from churning. Pure logic: no BPF, no I/O.
 *
 * Language (keywords are lowercase; blanks are optional around symbols; at
 * most 64 levels of nesting and 1000 terms):
 *
 *   expr      := term (('|' | 'or') term)*          set union
 *   term      := factor (('&' | 'and') factor)*     set intersection
 *   factor    := ('!' | 'not') factor | '(' expr ')' | [modifier] criterion
 *              | metric cmp number[unit] | 'all' | 'none' | 'default'
 *   modifier  := most | more | less | least
 *   criterion := frequent | expensive | latent | changeable | error-prone
 *              | concurrent | regressed
 *   metric    := calls | rate | total | share | self | mean | p50 | p90 | p99
 *              | max | cov | errors | concurrency
 *   cmp       := < | <= | > | >= | == | = | !=
 *
 * Levels: most = very high; more = high or very high; a bare criterion
 * means the same as "more" (Tigris 3.3: "frequent" = above the average);
 * less = low or very low; least = very low. "regressed" is a yes/no flag
 * set by the caller and takes no modifier. "default" stands for
 * AT_REL_DEFAULT, so "default | most error-prone" extends it.
 *
 * Criteria and the metric each one groups:
 *   frequent -> rate, expensive -> share, latent -> p99,
 *   changeable -> cov, error-prone -> error share (errors / calls),
 *   concurrent -> concurrency, regressed -> the caller's flag.
 *
 * Metrics and units (a number without a unit is in the base unit):
 *   calls, errors, concurrency: counts; k = 1e3, M = 1e6, G = 1e9
 *   rate: calls per second; k, M, G
 *   total, self, mean, p50, p90, p99, max: ns; ns, us, ms, s
 *   share: percent of the summed total time of all rows (0..100); "%"
 *          allowed ("share > 5%" = "share > 5")
 *   cov: standard deviation / mean of the latency; "%" divides by 100
 *   errors with "%": the share of calls that returned an error value
 *          ("errors > 1%"), without: the count
 *
 * Grouping (per metric, over the rows active in the interval):
 *   - values are taken on a log scale, log(v + one unit of resolution),
 *     since across functions they spread over decades (the quartile
 *     strategy does not care: it only ranks);
 *   - with at least AT_REL_MIN_NORMAL rows, a Kolmogorov-Smirnov test with
 *     Lilliefors' correction (mean and sd estimated from the data; p-value
 *     by Dallal-Wilkinson's approximation) at alpha 0.05; if normality is
 *     not rejected the cut points are mean - 2K sd, mean - K sd,
 *     mean + K sd, mean + 2K sd with K = AT_REL_K (1): "more" is beyond one
 *     standard deviation, "most" beyond two;
 *   - otherwise (or with fewer rows, where the test has no power) Tigris's
 *     quartile strategy: values <= Q1 (and below the median) form the lower
 *     quarter, values >= Q3 (and above the median) the upper quarter, and
 *     each quarter is split at its own median (values at or beyond it are
 *     the extreme level). Equal values always land in the same level, and
 *     when all values are equal every row is average.
 *
 * Rows with no activity in the interval (calls == 0) take no part in the
 * grouping (their zeros would drag the cut points down) and are never
 * selected; for the hysteresis an idle interval is neutral. A metric a row
 * lacks is NaN (latency of a USDT row, or of a function none of whose calls
 * returned in the interval): the row takes no part in that metric's
 * grouping and matches no condition on it, negated ("!latent") or not.
 */
#ifndef AT_RELEVANCE_H
#define AT_RELEVANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * The default expression, justified in README ("Relevance and detail"):
 * Tigris's levels are relative, so in any program an eighth of the
 * functions are "most latent" even when all are alike; each relative
 * criterion is therefore intersected with an absolute floor, so that a
 * program with nothing unusual gets nothing selected. Latency (p99) is the
 * robust signal; total-time share finds where the time goes. cov and max
 * are left out (one preempted call makes them jump on a busy machine), and
 * error-prone too (the error count is "negative return value", which for a
 * void function is register garbage).
 */
#define AT_REL_DEFAULT "more latent & p99 > 1ms | most expensive & share > 5%"

/* K of the mean +- K sd cut points. */
#define AT_REL_K 1.0
/* Fewer active rows than this: quartile strategy without a normality test. */
#define AT_REL_MIN_NORMAL 20
/* Significance level of the normality test. */
#define AT_REL_ALPHA 0.05
/* Longest reason string, NUL included. */
#define AT_REL_REASON 160

enum at_rel_metric {
	AT_M_CALLS,
	AT_M_RATE,	  /* calls per second */
	AT_M_TOTAL,	  /* ns, inclusive, recursion once */
	AT_M_SHARE,	  /* percent of all rows' total */
	AT_M_SELF,	  /* ns */
	AT_M_MEAN,	  /* ns */
	AT_M_P50,	  /* ns */
	AT_M_P90,	  /* ns */
	AT_M_P99,	  /* ns */
	AT_M_MAX,	  /* ns */
	AT_M_COV,	  /* sd / mean of the latency */
	AT_M_ERRORS,	  /* count */
	AT_M_CONCURRENCY, /* max calls in flight */
	AT_M_ERRSHARE,	  /* percent of calls with an error value (errors with %) */
	AT_M_NR,
};

enum at_rel_criterion {
	AT_C_FREQUENT,
	AT_C_EXPENSIVE,
	AT_C_LATENT,
	AT_C_CHANGEABLE,
	AT_C_ERROR_PRONE,
	AT_C_CONCURRENT,
	AT_C_REGRESSED,
	AT_C_NR,
};

enum at_rel_level {
	AT_LVL_VERY_LOW = 0,
	AT_LVL_LOW = 1,
	AT_LVL_AVERAGE = 2,
	AT_LVL_HIGH = 3,
	AT_LVL_VERY_HIGH = 4,
};

/* One traced symbol (function or USDT row) in one interval. */
struct at_rel_row {
	uint32_t id;	/* the caller's symbol id; copied into results */
	bool active;	/* calls > 0 in the interval */
	bool regressed; /* caller-set: worse than the baseline */
	double m[AT_M_NR];
};

/*
 * Fill a row from one interval's coarse figures. hist is a dense
 * AT_HIST_BUCKETS array (NULL: the quantiles fall back to the mean),
 * interval_ns the interval's length, all_total_ns the sum of total_ns over
 * all rows of the interval (the share's denominator).
 */
void at_rel_row_fill(struct at_rel_row *r, uint32_t id, const struct at_counts *c,
		     const uint64_t *hist, uint64_t interval_ns, uint64_t all_total_ns);
/* Same from a window entry (sparse histogram). */
void at_rel_row_from_entry(struct at_rel_row *r, const struct at_window_entry *e,
			   uint64_t interval_ns, uint64_t all_total_ns);

/*
 * Rows for every entry of a window (the functions active in it), the
 * share's denominator and the interval taken from the window itself.
 * *rows is allocated (free() it); returns the number of rows.
 */
size_t at_rel_rows_from_window(const struct at_window *w, struct at_rel_row **rows);

const char *at_rel_metric_name(enum at_rel_metric m);
const char *at_rel_criterion_name(enum at_rel_criterion c);
const char *at_rel_level_name(enum at_rel_level l); /* "very low" ... "very high" */
/* The metric a criterion groups (AT_C_REGRESSED: AT_M_NR). */
enum at_rel_metric at_rel_criterion_metric(enum at_rel_criterion c);
/* A metric's value for humans: "5.1 ms", "12.3k/s", "4.2 %", "0.83". */
char *at_rel_fmt_metric(char *buf, size_t len, enum at_rel_metric m, double v);

/* The five-level grouping of one metric. */
enum at_rel_strategy {
	AT_REL_NONE = 0,      /* no active row */
	AT_REL_NORMAL = 1,    /* mean +- K sd */
	AT_REL_QUARTILES = 2, /* Tigris quartiles, outer quarters split at medians */
};

struct at_rel_groups {
	uint32_t strategy; /* enum at_rel_strategy */
	uint32_t metric;   /* enum at_rel_metric grouped */
	bool log_scale;	   /* cut points are on log(v + floor) */
	size_t n;	   /* values grouped */
	double ks_d;	   /* Lilliefors statistic (NAN if not tested) */
	double ks_p;	   /* its p-value (NAN if not tested) */
	/* AT_REL_NORMAL: level = number of cuts below v (cut[0..3] ascending) */
	double mean, sd;
	double cut[4];
	/* AT_REL_QUARTILES: v <= q[0] lower quarter (split at lo_med), v >= q[2]
	 * upper quarter (split at hi_med); q[1] is the median */
	double q[3], lo_med, hi_med;
};

/* Group n values of metric m (transformed as that metric is). 0 or -1 (n == 0). */
int at_rel_group(enum at_rel_metric m, const double *v, size_t n, struct at_rel_groups *g);
/* The level of value v (untransformed) in g. */
enum at_rel_level at_rel_level_of(const struct at_rel_groups *g, double v);

/* Lilliefors (KS with estimated mean and sd) normality test. 0, or -1 if n < 5 or sd == 0. */
int at_lilliefors(const double *v, size_t n, double *d, double *p);
/* Its p-value for statistic d with n values (Dallal-Wilkinson, Stephens above 0.1). */
double at_lilliefors_p(double d, size_t n);

/* A parsed expression (opaque). */
struct at_rel_expr;

/*
 * Parse text. 0 on success; -1 with err set to one line such as
 * "column 7: expected a criterion or metric, got 'foo'" (columns count
 * bytes from 1). The expression "none" parses and selects nothing.
 */
int at_rel_parse(const char *text, struct at_rel_expr **out, char *err, size_t errlen);
void at_rel_free(struct at_rel_expr *e);
/* True if the expression is exactly "none" (record the coarse phase only). */
bool at_rel_is_none(const struct at_rel_expr *e);
/* True when the expression names the criterion 'regressed' (needs a baseline). */
bool at_rel_uses_regressed(const struct at_rel_expr *e);
/* The expression printed back, fully parenthesised (for logs and tests). */
char *at_rel_format(const struct at_rel_expr *e, char *buf, size_t len);

struct at_rel_result {
	uint32_t id; /* the row's id */
	bool selected;
	enum at_rel_level level[AT_C_NR]; /* each criterion's level (AVERAGE if inactive) */
	char reason[AT_REL_REASON];	  /* why it was selected, "" otherwise */
};

/*
 * Evaluate e over n rows: groups every criterion's metric across the active
 * rows, then the expression per row. out[i] belongs to rows[i]. The reason
 * names what made the row true, e.g. "latent: very high (p99 5.1 ms), p99
 * 5.1 ms > 1 ms". groups (may be NULL) receives AT_C_NR groupings.
 * Returns the number of selected rows.
 */
size_t at_rel_eval(const struct at_rel_expr *e, const struct at_rel_row *rows, size_t n,
		   struct at_rel_result *out, struct at_rel_groups *groups);

/*
 * Hysteresis: a row enters after `enter` consecutive selections (default
 * 2) and leaves after `leave` consecutive misses (default 3); idle
 * intervals change nothing. Forced rows (--detail GLOB) enter at once and
 * never leave. Ids index a dense table grown on demand.
 */
struct at_rel_track;

struct at_rel_track *at_rel_track_new(uint32_t enter, uint32_t leave);
void at_rel_track_free(struct at_rel_track *t);
/* Force id into the set; the next update reports its ENTER once. */
void at_rel_track_force(struct at_rel_track *t, uint32_t id);
bool at_rel_track_member(const struct at_rel_track *t, uint32_t id);
bool at_rel_track_forced(const struct at_rel_track *t, uint32_t id);

/*
 * Feed one interval's results (rows with their active flags, as passed to
 * at_rel_eval). Appends AT_SEL_ENTER / AT_SEL_LEAVE changes to *changes
 * (grown with realloc, *nchanges updated), each with ts_ns = now_ns,
 * rate = 0 (fill in at_sampler_add()'s initial rate if you like), and a
 * heap reason the caller owns, e.g. "selected 2 intervals
 * in a row: latent: very high (p99 5.1 ms)" or "not selected 3 intervals
 * in a row". Returns the number of changes appended.
 */
size_t at_rel_track_update(struct at_rel_track *t, const struct at_rel_row *rows,
			   const struct at_rel_result *res, size_t n, uint64_t now_ns,
			   struct at_sel_change **changes, size_t *nchanges);

/* The language in a few lines for --help (each line indented two blanks). */
const char *at_rel_help(void);

/*
 * Append one change to a growing array (ts_ns, id, what, rate and a heap
 * copy of reason, which the caller owns and frees).
 */
void at_sel_change_push(struct at_sel_change **changes, size_t *nchanges, uint64_t ts_ns,
			uint32_t id, uint32_t what, double rate, const char *reason);

#endif
