// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --args SPEC parser (stub). */
#include <stdlib.h>
#include <string.h>

#include "argspec.h"
#include "util.h"

int at_argspec_parse(const char *text, struct at_argspec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	(void)text;
	snprintf(err, errlen, "column 1: --args is not available yet");
	return -1;
}

void at_argspec_free(struct at_argspec *a)
{
	free(a->name);
	a->name = NULL;
}

const struct at_argspec *at_argspec_find(const struct at_argspec *specs, size_t n, const char *fn)
{
	for (size_t i = 0; i < n; i++)
		if (at_glob_match(specs[i].name, fn))
			return &specs[i];
	return NULL;
}

uint32_t at_argspec_nregs(const struct at_argspec *a)
{
	(void)a;
	return AT_MAX_ARGS;
}

struct at_argtype at_argspec_type(const struct at_argspec *a, uint32_t i)
{
	struct at_argtype t = {.type = AT_ARG_RAW, .size = 8};

	(void)a;
	(void)i;
	return t;
}

uint64_t at_argtype_value(const struct at_argtype *t, uint64_t reg)
{
	(void)t;
	return reg;
}

char *at_argspec_format(const struct at_argspec *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s(...)", a->name ? a->name : "?");
	return buf;
}
