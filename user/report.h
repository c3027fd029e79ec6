/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Whole-run aggregates and their rendering: table, histograms, JSON. */
#ifndef AT_REPORT_H
#define AT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model.h"
#include "tracefile.h"

/* A recording reduced to one aggregate per function. */
struct at_profile_set {
	const struct at_trace *t;  /* header, binaries, symbols, end */
	struct at_func_profile *p; /* t->nsyms */
	size_t n;		   /* entries of p, for at_profile_set_free() */
	uint64_t duration_ns;
	/*
	 * The target's socket reads and writes the yardsticks counted in the
	 * intervals with windows, and their length; where the yardsticks were
	 * out between windows (sock_sampled), the ns they were in, and the
	 * reads and writes imputed meanwhile.
	 */
	uint64_t sock_events, sock_span_ns;
	bool sock_sampled;
	uint64_t sock_in_ns, sock_imputed;
};

void at_profile_set_init(struct at_profile_set *ps, const struct at_trace *t);
/* at_profile_set_init() without the estimates. */
void at_profile_set_load(struct at_profile_set *ps, const struct at_trace *t);
void at_profile_set_add_window(struct at_profile_set *ps, const struct at_window *w);
/* Scale duty-cycled functions to estimates (at_profile_set_init does it). */
void at_profile_set_estimate(struct at_profile_set *ps);
void at_profile_set_free(struct at_profile_set *ps);

struct at_report_opts {
	const char *sort; /* total (default), calls, self, mean, p50, p90, p99, max, errors, name */
	int top;	  /* 0 = all */
	char **hist_globs;
	int nhist;
	bool json;
};

/* True if key is a valid --sort key. */
bool at_report_sort_valid(const char *key);
void at_report_print(FILE *f, const struct at_profile_set *ps, const struct at_report_opts *o);

int cmd_report(int argc, char **argv);

#endif
