// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the USDT readers: the input as an ELF image (notes
 * with crafted sizes, strings, addresses, prelink bases), and as text for
 * the argument-spec and -u spec parsers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "usdt.h"

static void check_set(const struct at_usdt_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct at_usdt_probe *p = &s->p[i];

		if (!p->provider || !p->name || !p->args_text || !p->provider[0] || !p->name[0])
			abort();
		if (p->nargs > AT_USDT_MAX_ARGS || (!p->args_ok && p->nargs))
			abort();
		if (i && strcmp(s->p[i - 1].provider, p->provider) > 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_usdt_set s;
	struct at_usdt_arg args[AT_USDT_MAX_ARGS];
	struct at_usdt_spec spec;
	char err[256], *text;
	uint32_t n;

	err[0] = 0;
	if (at_usdt_load_mem(data, size, &s, err, sizeof(err)) == 0) {
		check_set(&s);
		at_usdt_free(&s);
	} else if (!err[0] || s.p || s.n) {
		abort();
	}

	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	if (at_usdt_parse_args(text, args, &n, err, sizeof(err))) {
		for (uint32_t i = 0; i < n; i++)
			if (args[i].size != 1 && args[i].size != 2 && args[i].size != 4 &&
			    args[i].size != 8)
				abort();
	} else if (!err[0] || n > AT_USDT_MAX_ARGS) {
		abort();
	}
	if (at_usdt_spec_parse(text, &spec, err, sizeof(err))) {
		if (!spec.provider || !spec.name || spec.nkeys > AT_USDT_MAX_KEYS)
			abort();
		for (uint32_t i = 0; i < spec.nkeys; i++)
			if (spec.key_arg[i] >= AT_USDT_MAX_ARGS || !spec.key_type[i] ||
			    spec.key_type[i] > AT_USDT_KEY_STR)
				abort();
		at_usdt_spec_free(&spec);
	} else if (spec.provider || spec.name || !err[0]) {
		abort();
	}
	free(text);
	return 0;
}
