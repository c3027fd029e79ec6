/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes in a recording (-u): match the specs against the target's
 * probes, add their rows to the symbol table, attach bpf/usdt.bpf.c, and
 * turn the keys the BPF side discovers into new rows while recording.
 *
 * Row ids: functions first (0..nfuncs-1), then one row per counted probe
 * (per binary), then AT_UKEY_SLOTS ids for keyed rows, added when a key is
 * first seen (ids follow the slot order).
 */
#ifndef AT_USDT_REC_H
#define AT_USDT_REC_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "report.h"
#include "target.h"
#include "tracefile.h"

struct at_usdt_rec;
struct bpf_map;

/* Parse the -u specs; AT_EXIT_USAGE with err set on bad syntax. */
int at_usdtrec_new(const struct at_strv *specs, struct at_usdt_rec **out, char *err, size_t errlen);
void at_usdtrec_free(struct at_usdt_rec *u);

/*
 * Find the probes of every spec in the target's binaries. Errors (exit 2):
 * no binary has USDT notes, a spec matches no probe, a key names an
 * argument the probe does not have, a pair's return probe is missing.
 */
int at_usdtrec_plan(struct at_usdt_rec *u, const struct at_target *tgt, char *err, size_t errlen);
/* Ids the rows need beyond the functions' (counted rows + key slots). */
uint32_t at_usdtrec_nids(const struct at_usdt_rec *u);
/* Append the counted rows to t->syms (ids from t->nsyms). */
void at_usdtrec_describe(struct at_usdt_rec *u, struct at_trace *t);

/*
 * Load the USDT programs, sharing the coarse counter maps. empty: the
 * benchmark floor (counted probes run an empty program).
 */
struct at_usdt_maps {
	struct bpf_map *fstats, *hists, *conc, *diag;
};
int at_usdtrec_load(struct at_usdt_rec *u, const struct at_usdt_maps *m, uint64_t ino, uint32_t dev,
		    bool empty, char *err, size_t errlen);
/* pid > 0: that process; -1: every process (-b). */
int at_usdtrec_attach(struct at_usdt_rec *u, pid_t pid, char *err, size_t errlen);
void at_usdtrec_detach(struct at_usdt_rec *u);
size_t at_usdtrec_nprobes(const struct at_usdt_rec *u);

/*
 * Before a window is written: add the keys seen so far as rows (to t, the
 * file and ps), and drop entries of rows not yet described.
 */
int at_usdtrec_sync(struct at_usdt_rec *u, struct at_trace *t, struct at_writer *w,
		    struct at_profile_set *ps, struct at_window *win);
/* Warn about keys refused because the key table was full. */
void at_usdtrec_finish(struct at_usdt_rec *u);

/* report --json: the "usdt" array (USDT rows with calls). */
void at_usdt_report_json(FILE *f, const struct at_profile_set *ps);

#endif
