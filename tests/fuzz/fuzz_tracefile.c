// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target for the trace file reader, strict and salvaging. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracefile.h"

/* The sanitizers catch memory errors; these catch broken contracts. */
static void check(int rc, const struct at_trace *t, const char *err, bool salvage)
{
	if (rc != -1 && rc != 0 && rc != 1)
		abort();
	if (rc == 1 && !salvage)
		abort();
	if (rc == -1 && (t->nkv || t->nbins || t->nsyms || t->nwins || t->has_end))
		abort();
	if (rc != 0 && (!err[0] || strchr(err, '\n')))
		abort();
	for (size_t i = 0; i < t->nwins; i++) {
		const struct at_window *w = &t->wins[i];

		for (uint32_t j = 0; j < w->n; j++) {
			const struct at_window_entry *e = &w->e[j];

			if (e->id >= t->nsyms)
				abort();
			for (uint32_t k = 0; k < e->nhist; k++)
				if (e->hist[k].bucket >= AT_HIST_BUCKETS ||
				    (k && e->hist[k].bucket <= e->hist[k - 1].bucket))
					abort();
		}
	}
	for (size_t i = 0; i < t->nsyms; i++)
		if (t->syms[i].binary >= t->nbins || t->syms[i].id != i)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_trace t;
	char err[512];
	int rc;

	for (int salvage = 0; salvage < 2; salvage++) {
		rc = at_trace_parse(data, size, &t, salvage, err, sizeof(err));
		check(rc, &t, err, salvage);
		at_trace_free(&t);
	}
	return 0;
}
