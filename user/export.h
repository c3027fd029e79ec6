/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Converting a recording for other tools: Chrome/Perfetto trace events, CSV
 * per function per interval, OpenMetrics (Prometheus) text.
 */
#ifndef AT_EXPORT_H
#define AT_EXPORT_H

#include <stdio.h>

#include "model.h"
#include "tracefile.h"

/* Trace-event JSON: complete events per detailed call, call-rate counters. */
int at_export_chrome(FILE *f, const struct at_trace *t);
/* One row per function per interval in which it was active. */
int at_export_csv(FILE *f, const struct at_trace *t);
/*
 * Counters and histograms of the whole recording so far; p holds one
 * aggregate per symbol of t (at_profile_set).
 */
int at_export_openmetrics(FILE *f, const struct at_trace *t, const struct at_func_profile *p);
/* The same into path, atomically (temporary file, then rename). 0 or -errno. */
int at_export_openmetrics_file(const char *path, const struct at_trace *t,
			       const struct at_func_profile *p);

int cmd_export(int argc, char **argv);

#endif
