/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Comparing two recordings: which functions got slower or faster, which are
 * called more or less often, which appeared or vanished. Used by
 * 'adaptrace diff', 'record --baseline' and the relevance criterion
 * 'regressed'.
 */
#ifndef AT_DIFF_H
#define AT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "tracefile.h"

enum at_diff_stat {
	AT_DSTAT_P50 = 0,
	AT_DSTAT_MEAN = 1,
	AT_DSTAT_P90 = 2,
	AT_DSTAT_P99 = 3,
};

struct at_diff_opts {
	double threshold_pct; /* minimum relative effect, default 10 */
	double alpha;	      /* family-wise error rate, default 0.01 */
	int stat;	      /* enum at_diff_stat, default p50 */
	bool force;	      /* compare even different programs */
	bool absolute;	      /* no common-factor normalisation */
	bool all;	      /* outputs list every function compared */
};

void at_diff_opts_default(struct at_diff_opts *o);
/* "p50", "mean", "p90", "p99"; false if s is none of them. */
bool at_diff_parse_stat(const char *s, int *stat);
const char *at_diff_stat_name(int stat);

enum at_diff_verdict {
	AT_DV_SAME = 0,
	AT_DV_WORSE = 1,  /* latency regression, or called more often */
	AT_DV_BETTER = 2, /* latency improvement, or called less often */
};

/* One function, matched by binary basename, kind and symbol name. */
struct at_diff_row {
	const char *name;
	const char *binary; /* basename */
	uint32_t kind;	    /* enum at_symbol_kind */
	int64_t base_id;    /* symbol id in BASE, -1 if absent (appeared) */
	int64_t new_id;	    /* symbol id in NEW, -1 if absent (vanished) */
	/* Latency */
	bool tested;	       /* both sides have timed calls */
	const char *test;      /* "welch" (per-interval series) or "mann-whitney" (histograms) */
	double base, new;      /* the --stat over the whole recording, ns */
	double change_pct;     /* relative to the common factor (see speed) */
	double change_raw_pct; /* new against base as measured */
	double p_raw, p_adj;   /* p_adj: Holm-adjusted */
	int verdict;	       /* enum at_diff_verdict */
	/* Calls, normalised (per run, or per second) */
	uint64_t base_calls, new_calls;
	double base_norm, new_norm, calls_change_pct; /* change is INFINITY from 0 */
	double calls_p_adj;			      /* NAN when counts are exact */
	int calls_verdict;
	/* A side's calls estimated from probing windows (--budget), and their sd. */
	bool base_est, new_est;
	double base_sd, new_sd;
};

struct at_diff_result {
	struct at_diff_row *rows;
	size_t nrows;
	size_t compared; /* functions with a latency test */
	size_t nregressed, nimproved, nmore, nfewer, nappeared, nvanished;
	bool per_run; /* calls compared per run (both recorded -- CMD), else per second */
	char base_prog[256], new_prog[256];
	double overlap; /* matched symbols / the smaller table */
	/*
	 * Median new/base ratio of the statistic over the functions compared
	 * (1 with --absolute or fewer than 5 functions): how much slower the
	 * machine ran NEW overall. Effects are measured against it.
	 */
	double speed;
};

/*
 * Compare. The per-function profiles are the whole-run aggregates of each
 * trace (at_profile_set); the traces' windows give the per-interval series
 * (none: the histogram test is used). Returns 0, or -1 with err set when the
 * two recordings are of different programs and o->force is not set.
 */
int at_diff_compute(const struct at_trace *base, const struct at_func_profile *bp,
		    const struct at_trace *cur, const struct at_func_profile *cp,
		    const struct at_diff_opts *o, struct at_diff_result *res, char *err,
		    size_t errlen);
void at_diff_free(struct at_diff_result *res);
/* A latency regression or a function called more often: exit status 1. */
bool at_diff_failed(const struct at_diff_result *res);

/*
 * For the relevance criterion 'regressed': regressed[id] for every symbol of
 * cur (cur->nsyms entries) whose latency got significantly worse than in
 * base, or which is called significantly more often. Profiles cp are cur's
 * aggregates so far; cur's windows may be empty (histogram test then).
 */
void at_diff_regressed(const struct at_trace *base, const struct at_trace *cur,
		       const struct at_func_profile *cp, const struct at_diff_opts *o,
		       bool *regressed);
/* The same with BASE's aggregates computed once by the caller (bp: at_profile_set). */
void at_diff_regressed_with(const struct at_trace *base, const struct at_func_profile *bp,
			    const struct at_trace *cur, const struct at_func_profile *cp,
			    const struct at_diff_opts *o, bool *regressed);

void at_diff_print_table(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			 const char *base_path, const char *new_path);
void at_diff_print_json(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			const char *base_path, const char *new_path);
void at_diff_print_markdown(FILE *f, const struct at_diff_result *r, const struct at_diff_opts *o,
			    const char *base_path, const char *new_path);
/* JUnit XML, one testcase per matched function; 0 or -errno. */
int at_diff_write_junit(const char *path, const struct at_diff_result *r,
			const struct at_diff_opts *o);

/*
 * Read BASE and NEW and compare: the whole 'adaptrace diff' minus option
 * parsing. Prints the table to out (NULL: nothing). Returns the exit status
 * (0, 1, or 2 with a message on stderr).
 */
int at_diff_files(const char *base_path, const char *new_path, const struct at_diff_opts *o,
		  FILE *out);

/* Statistics, exposed for the unit tests. */
/* Two-sided p-value of Student's t with df degrees of freedom. */
double at_stat_t_p2(double t, double df);
/* Regularized incomplete beta I_x(a, b). */
double at_stat_ibeta(double x, double a, double b);
/* Welch's unequal-variance t-test; two-sided p. Needs na, nb >= 2. */
double at_stat_welch(const double *a, size_t na, const double *b, size_t nb, double *t, double *df);
/* Mann-Whitney U from two histograms over the same buckets, normal approximation
 * with tie correction; two-sided p. *z > 0 when b is stochastically larger. */
double at_stat_mwu_hist(const uint64_t *a, const uint64_t *b, size_t nbuckets, double *z);
/* Holm-Bonferroni adjusted p-values. */
void at_stat_holm(const double *p, size_t n, double *adj);

int cmd_diff(int argc, char **argv);

#endif
