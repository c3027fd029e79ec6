// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the --select expression parser and evaluator: any
 * input either parses (and then evaluates over a few rows, NaN metrics and
 * idle rows included) or fails with one line "column N: ...".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "relevance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_rel_row rows[6];
	struct at_rel_result res[6];
	struct at_rel_expr *e;
	char err[256], buf[1024];
	char *text = malloc(size + 1);
	size_t k;

	memcpy(text, data, size);
	text[size] = 0;
	err[0] = 'x';
	if (at_rel_parse(text, &e, err, sizeof(err))) {
		if (e || strncmp(err, "column ", 7) || strchr(err, '\n'))
			abort();
		free(text);
		return 0;
	}
	at_rel_format(e, buf, sizeof(buf));
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 6; i++) {
		rows[i].id = (uint32_t)i;
		rows[i].active = i != 4;
		rows[i].regressed = i == 2;
		for (int m = 0; m < AT_M_NR; m++)
			rows[i].m[m] = i == 5 && m >= AT_M_TOTAL && m <= AT_M_COV
					   ? NAN
					   : (double)((i * 7919 + m * 104729) % 1000) * (i + 1);
	}
	k = at_rel_eval(e, rows, 6, res, NULL);
	if (k > 5 || res[4].selected)
		abort();
	for (int i = 0; i < 6; i++)
		if (res[i].selected != (res[i].reason[0] != 0) ||
		    strlen(res[i].reason) >= sizeof(res[i].reason))
			abort();
	at_rel_free(e);
	free(text);
	return 0;
}
