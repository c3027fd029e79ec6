/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording's data model, shared by the recorder, the trace file and
 * the report: binaries, symbols, per-interval figures, and the end record.
 */
#ifndef AT_MODEL_H
#define AT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adaptrace.h"

/* A key/value pair of the file header (tool version, kernel, target...). */
struct at_kv {
	char *key;
	char *value;
};

struct at_binary {
	char *path;
	char build_id[65]; /* lowercase hex, "" if the binary has none */
};

/* Where the kernel executes the probed instruction (see design.md). */
enum at_entry_kind {
	AT_ENTRY_UNKNOWN = 0,
	AT_ENTRY_EMULATED = 1, /* push, call, jmp, jcc, nop: emulated, cheap */
	AT_ENTRY_SSTEP = 2,    /* single-stepped out of line, ~20x dearer */
	AT_ENTRY_REFUSED = 3,  /* the kernel will not probe it (lock, cs/ds prefix) */
};

struct at_symbol {
	uint32_t id;	 /* index in the symbol table; the BPF cookie */
	uint32_t binary; /* index in the binaries table */
	uint64_t addr;	 /* st_value */
	uint64_t size;
	uint64_t offset; /* file offset of the probe site */
	uint32_t entry;	 /* enum at_entry_kind */
	char *name;
};

/* Scalar figures of one function over a span (a window or a whole run). */
struct at_counts {
	uint64_t calls;
	uint64_t returns;
	uint64_t sum_ns;
	uint64_t total_ns;
	uint64_t self_ns;
	uint64_t min_ns; /* 0 when returns == 0 */
	uint64_t max_ns;
	uint64_t errors;
	uint64_t max_conc;
	double sumsq; /* sum of squared durations, ns^2 */
};

struct at_hist_pair {
	uint32_t bucket;
	uint64_t count;
};

/* One function's figures in one window; the histogram is sparse. */
struct at_window_entry {
	uint32_t id;
	struct at_counts c;
	uint32_t nhist;
	struct at_hist_pair *hist; /* ascending bucket order */
};

/* One interval snapshot; only functions with activity are listed. */
struct at_window {
	uint64_t start_ns; /* relative to the recording's start */
	uint64_t end_ns;
	uint32_t n;
	struct at_window_entry *e;
};

struct at_end {
	uint64_t duration_ns;
	int32_t exit_status; /* target's, -1 when not applicable */
	uint64_t dropped_events;
	uint64_t diag[AT_DIAG_NR];
	char *reason; /* why the recording stopped */
};

/* Aggregate of one function over a whole recording. */
struct at_func_profile {
	struct at_counts c;
	uint64_t hist[AT_HIST_BUCKETS];
};

void at_counts_merge(struct at_counts *dst, const struct at_counts *src);
/* Add a window entry into an aggregate. */
void at_profile_add(struct at_func_profile *p, const struct at_window_entry *e);
/* Value at quantile q (0..1) of a histogram, clamped to [min, max]. */
uint64_t at_hist_quantile(const uint64_t *hist, double q, uint64_t min_ns, uint64_t max_ns);

#endif
