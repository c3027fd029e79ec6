/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Trace file, version 1: a fixed file header, then chunks. Each chunk has a
 * type, its raw and compressed lengths and a CRC32, and a zlib payload.
 * The writer appends one chunk per write() so that a killed recorder leaves
 * every complete interval readable.
 */
#ifndef AT_TRACEFILE_H
#define AT_TRACEFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#define AT_TRACE_MAGIC	 "ADAPTRC\0"
#define AT_TRACE_VERSION 1

enum at_chunk_type {
	AT_CHUNK_HEADER = 1,   /* key/values and binaries */
	AT_CHUNK_SYMBOLS = 2,  /* function symbol table */
	AT_CHUNK_WINDOW = 3,   /* one interval snapshot */
	AT_CHUNK_END = 4,      /* clean end of recording */
	AT_CHUNK_EVENTS = 10,  /* detail events, a batch */
	AT_CHUNK_SELECT = 11,  /* selection and rate changes, with reasons */
	AT_CHUNK_DSTATS = 12,  /* per-function detail totals so far (latest wins) */
	AT_CHUNK_USDT = 5,     /* kind, provider, probe and key of USDT rows */
	AT_CHUNK_DUTY = 30,    /* the window before it: functions probed part of it */
	AT_CHUNK_READS = 31,   /* the window before it: its socket reads' bytes */
	AT_CHUNK_WRITES = 32,  /* the window before it: its socket writes by read class */
	AT_CHUNK_CALLERS = 33, /* the window before it: window calls per innermost caller */
	AT_CHUNK_TURNS = 34,   /* the window before it: its turns of the event loop */
	AT_CHUNK_TURNWIN = 35, /* the window before it: its turn windows */
	AT_CHUNK_TWCALLS = 36, /* the window before it: calls in its turn windows alone */
	AT_CHUNK_RPATH = 37,   /* the window before it: its windows' read path */
	AT_CHUNK_YARD = 38,    /* the window before it: how its yardsticks counted */
	AT_CHUNK_CALLCLS = 39, /* the window before it: window calls per caller and read class */
			       /*
				* Readers skip types they do not know. Reserved ranges, one per
				* concern: 5-9 USDT, 10-19 detail phase (events, selection log,
				* detail stats), 20-29 diff/export, 30-39 coarse budget. Types
				* from AT_CHUNK_RESERVED on are for extensions.
				*/
};

enum { AT_CHUNK_RESERVED = 40 };

struct at_writer;

/*
 * Create path with mode 0600 (an existing file becomes path.old), refusing
 * to follow a symlink. Returns NULL with err filled on failure.
 */
struct at_writer *at_writer_open(const char *path, char *err, size_t errlen);
int at_writer_header(struct at_writer *w, const struct at_kv *kv, size_t nkv,
		     const struct at_binary *bins, size_t nbins);
/* Appends to the table; each id must be the symbol's index in the whole table. */
int at_writer_symbols(struct at_writer *w, const struct at_symbol *syms, size_t n);
/*
 * Ids must name written symbols, once each; histograms in ascending order.
 * A window with duty entries is followed by a duty chunk.
 */
int at_writer_window(struct at_writer *w, const struct at_window *win);
int at_writer_end(struct at_writer *w, const struct at_end *end);
/* Detail phase: a batch of events, selection changes, detail totals. */
int at_writer_events(struct at_writer *w, const struct at_event *ev, size_t n);
int at_writer_selection(struct at_writer *w, const struct at_sel_change *c, size_t n);
int at_writer_dstats(struct at_writer *w, const struct at_detail_stats *d, size_t n);
/*
 * Append a chunk of an extension's type (AT_CHUNK_RESERVED or above; the
 * types below are the format's); its raw payload is compressed and framed
 * like the others.
 */
int at_writer_chunk(struct at_writer *w, uint32_t type, const void *raw, size_t len);
/* Last error text of a failed write call. */
const char *at_writer_error(const struct at_writer *w);
int at_writer_close(struct at_writer *w);

struct at_trace {
	struct at_kv *kv;
	size_t nkv;
	struct at_binary *bins;
	size_t nbins;
	struct at_symbol *syms;
	size_t nsyms;
	struct at_window *wins;
	size_t nwins;
	struct at_event *events; /* detail phase, in file order */
	size_t nevents;
	struct at_sel_change *sel; /* selection and rate log */
	size_t nsel;
	struct at_detail_stats *dstats; /* per function, last seen */
	size_t ndstats;
	bool has_end; /* false: the recorder did not finish (killed) */
	struct at_end end;
	size_t nunknown; /* chunks of unknown type, skipped */
};

/*
 * Read a whole trace file. On corruption or truncation returns -1 and
 * writes to err one line ("PATH: ...") naming the byte offset, what was
 * wrong and what was recovered; with salvage set it instead keeps what was
 * read before the damage and returns 1 (still -1 when not even the header
 * chunk was read). Returns 0 on a clean read. t is always initialised, and
 * left empty on -1.
 */
int at_trace_read(const char *path, struct at_trace *t, bool salvage, char *err, size_t errlen);
/* Same, from memory (used by the fuzzer and tests). */
int at_trace_parse(const void *data, size_t len, struct at_trace *t, bool salvage, char *err,
		   size_t errlen);
void at_trace_free(struct at_trace *t);
/* Header value for key, or NULL. */
const char *at_trace_get(const struct at_trace *t, const char *key);

#endif
