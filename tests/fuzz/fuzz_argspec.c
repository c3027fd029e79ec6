// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the --args SPEC parser: any input either parses
 * (then prints back to a spec that parses the same) or fails with one line
 * "column N: ...".
 */
#include <stdlib.h>
#include <string.h>

#include "argspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_argspec a, b;
	char err[256], buf[512], buf2[512];
	char *text = malloc(size + 1);

	memcpy(text, data, size);
	text[size] = 0;
	if (at_argspec_parse(text, &a, err, sizeof(err))) {
		if (a.name || strncmp(err, "column ", 7) || strchr(err, '\n'))
			abort();
		free(text);
		return 0;
	}
	if (a.nargs > AT_MAX_ARGS || at_argspec_nregs(&a) > AT_MAX_ARGS)
		abort();
	for (uint32_t i = 0; i < a.nargs; i++)
		if (a.arg[i].type == AT_ARG_STR &&
		    (a.arg[i].strmax < 1 || a.arg[i].strmax > AT_ARGSPEC_STR_MAX))
			abort();
	at_argspec_format(&a, buf, sizeof(buf));
	if (at_argspec_parse(buf, &b, err, sizeof(err)))
		abort();
	at_argspec_format(&b, buf2, sizeof(buf2));
	if (strcmp(buf, buf2))
		abort();
	at_argspec_free(&a);
	at_argspec_free(&b);
	free(text);
	return 0;
}
