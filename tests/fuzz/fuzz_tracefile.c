// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the trace file reader, strict and salvaging.
 *
 * CRCs and zlib would keep most mutations away from the decoders, so each
 * input is also parsed twice more: with every CRC repaired, and, unless it
 * starts with the magic, as "synthetic" records {u8 type, u16le len,
 * len payload bytes}... framed into a valid file (seeds named syn-*).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracefile.h"

/* A window's calls per caller and read class name a duty function, a symbol and a class. */
static bool bad_cls_caller(const struct at_caller_calls *c, const struct at_window *w,
			   const struct at_trace *t)
{
	return c->k >= w->nduty || !c->cls || c->cls > AT_READ_CLASSES ||
	       (c->caller != AT_NO_CALLER && c->caller >= t->nsyms);
}

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

		if (w->wr_on > w->wr_all ||
		    (w->has_turns &&
		     (!w->has_writes || w->turn_on > w->turn_all || w->wake_on > w->wake_all)))
			abort();
		if (w->has_turnwin && (!w->has_turns || w->tw_turn_on > w->turn_all - w->turn_on ||
				       w->tw_wake_on > w->wake_all - w->wake_on ||
				       w->tw_wr_on > w->wr_all - w->wr_on))
			abort();
		for (uint32_t j = 0; j < w->nturnwin; j++)
			if (w->turnwin[j] >= w->nduty || (j && w->turnwin[j] <= w->turnwin[j - 1]))
				abort();
		if (w->has_twcalls && (!w->has_turnwin || !w->tw_calls))
			abort();
		if (w->has_rpath && (!w->has_turns || w->rp_turns > w->turn_all ||
				     w->rp_writes > w->wr_all || w->rp_turns > w->rp_writes))
			abort();
		for (uint32_t j = 0; j < w->nrp_callers; j++)
			if (w->rp_callers[j].k >= w->nduty ||
			    (w->rp_callers[j].caller != AT_NO_CALLER &&
			     w->rp_callers[j].caller >= t->nsyms))
				abort();
		if ((w->has_cls_callers && !w->has_callers) ||
		    (w->nrp_cls_callers && (!w->has_cls_callers || !w->has_rpath)))
			abort();
		for (uint32_t j = 0; j < w->nrp_cls_callers; j++)
			if (bad_cls_caller(&w->rp_cls_callers[j], w, t))
				abort();
		for (uint32_t j = 0; j < w->ncls_callers; j++)
			if (bad_cls_caller(&w->cls_callers[j], w, t))
				abort();
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

static void parse(const uint8_t *data, size_t size)
{
	struct at_trace t;
	char err[512];
	int rc;

	for (int salvage = 0; salvage < 2; salvage++) {
		rc = at_trace_parse(data, size, &t, salvage, err, sizeof(err));
		check(rc, &t, err, salvage);
		at_trace_free(&t);
	}
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void repair_crcs(uint8_t *d, size_t len)
{
	size_t off = 16;

	if (len < 16)
		return;
	le32(d + 12, (uint32_t)crc32(0, d, 12));
	while (len - off >= 16) {
		uint32_t comp = get32(d + off + 8);

		if (comp > len - off - 16)
			break;
		le32(d + off + 12, (uint32_t)crc32(crc32(0, d + off, 12), d + off + 16, comp));
		off += 16 + comp;
	}
}

static void synthetic(const uint8_t *data, size_t size)
{
	size_t cap = 16, len = 16, in = 0;
	uint8_t *d = malloc(cap);

	memcpy(d, AT_TRACE_MAGIC, 8);
	le32(d + 8, AT_TRACE_VERSION); /* u16 major, u16 minor 0 */
	while (size - in >= 3) {
		uint32_t type = data[in];
		size_t n = data[in + 1] | data[in + 2] << 8;
		uLongf clen;

		in += 3;
		if (n > size - in)
			n = size - in;
		clen = compressBound(n);
		if (cap - len < 16 + clen) {
			cap = 2 * cap + 16 + clen;
			d = realloc(d, cap);
		}
		compress2(d + len + 16, &clen, data + in, n, 1);
		le32(d + len, type);
		le32(d + len + 4, (uint32_t)n);
		le32(d + len + 8, (uint32_t)clen);
		len += 16 + clen;
		in += n;
	}
	repair_crcs(d, len);
	parse(d, len);
	free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	parse(data, size);
	if (size >= 8 && !memcmp(data, AT_TRACE_MAGIC, 8)) {
		copy = malloc(size);
		memcpy(copy, data, size);
		repair_crcs(copy, size);
		parse(copy, size);
		free(copy);
	} else {
		synthetic(data, size);
	}
	return 0;
}
