/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Rendering the detail phase of a trace: captured calls and the selection log. */
#ifndef AT_DETAILREPORT_H
#define AT_DETAILREPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "tracefile.h"

/*
 * Captured calls of functions matching glob (NULL: all), in file order:
 * a table, or one JSON object per line with the keys function, pid, tid,
 * cpu, ts_ns, duration_ns, args, ret (and truncated: indexes of cut strings).
 */
void at_report_events(FILE *f, const struct at_trace *t, const char *glob, bool json);
/* How the detailed set and the rates changed, with reasons. */
void at_report_selection(FILE *f, const struct at_trace *t, bool json);
/* Failed ring-buffer reservations per function and CPU, if any. */
void at_report_drops(FILE *f, const struct at_trace *t);
/* Detail figures of a symbol, or NULL when it never had detail. */
const struct at_detail_stats *at_detail_stats_of(const struct at_trace *t, uint32_t id);

#endif
