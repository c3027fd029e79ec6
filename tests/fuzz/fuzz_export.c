// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for what 'export' and 'diff' do with whatever a trace
 * file holds (names with any bytes, odd windows, huge counts): parse with
 * salvage, run every exporter, and diff the recording against itself and
 * against its first half.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "export.h"
#include "report.h"
#include "tracefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_trace t, half;
	struct at_profile_set ps, ph;
	struct at_diff_opts o;
	struct at_diff_result r;
	char err[512];
	FILE *f;

	if (at_trace_parse(data, size, &t, true, err, sizeof(err)) < 0)
		return 0;
	f = fopen("/dev/null", "w");
	at_profile_set_init(&ps, &t);
	at_export_chrome(f, &t);
	at_export_csv(f, &t);
	at_export_openmetrics(f, &t, ps.p);
	at_diff_opts_default(&o);
	if (at_diff_compute(&t, ps.p, &t, ps.p, &o, &r, err, sizeof(err)) == 0) {
		/* A recording against itself never changes. */
		if (at_diff_failed(&r) || r.nimproved)
			abort();
		at_diff_print_table(f, &r, &o, "a", "b");
		at_diff_print_json(f, &r, &o, "a", "b");
		at_diff_print_markdown(f, &r, &o, "a", "b");
		at_diff_free(&r);
	}
	half = t;
	half.nwins = t.nwins / 2;
	at_profile_set_init(&ph, &half);
	o.force = true;
	if (at_diff_compute(&half, ph.p, &t, ps.p, &o, &r, err, sizeof(err)) == 0) {
		at_diff_print_json(f, &r, &o, "a", "b");
		at_diff_free(&r);
	}
	at_profile_set_free(&ph);
	at_profile_set_free(&ps);
	fclose(f);
	at_trace_free(&t);
	return 0;
}
