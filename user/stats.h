/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading the coarse counters out of the kernel maps: per-CPU values are
 * summed, and each snapshot is the difference from the previous one, so
 * that every interval gets its own figures.
 */
#ifndef AT_STATS_H
#define AT_STATS_H

#include <stdint.h>

#include "model.h"

struct at_stats_reader;

struct at_stats_reader *at_stats_reader_new(int fstats_fd, int hists_fd, int conc_fd, int diag_fd,
					    uint32_t nfuncs);
void at_stats_reader_free(struct at_stats_reader *r);

/*
 * Fill win with the figures since the previous snapshot (entries only for
 * functions with activity). The caller frees win with at_window_clear().
 * Returns 0 or -errno.
 */
int at_stats_snapshot(struct at_stats_reader *r, struct at_window *win);
/* Cumulative diagnostic counters. */
void at_stats_diag(struct at_stats_reader *r, uint64_t diag[AT_DIAG_NR]);

void at_window_clear(struct at_window *win);

#endif
