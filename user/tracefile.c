// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trace file, version 1. All fixed-width integers are little-endian.
 *
 *   file header (16 bytes): "ADAPTRC\0", u16 major, u16 minor,
 *                           u32 crc32 of the 12 bytes before it
 *   chunk: u32 type, u32 raw_len, u32 comp_len,
 *          u32 crc32 of the 12 bytes before it and the payload,
 *          comp_len bytes of zlib data inflating to exactly raw_len bytes
 *
 * The file header layout is frozen across versions; a new major version
 * means old readers must refuse, a new minor one only adds chunk types.
 * Payloads use LEB128 varints (uv; sv = zigzag), strings as uv length and
 * bytes without NUL, and f64 as the 8 IEEE-754 bytes:
 *
 *   HEADER  uv nkv {str key, str value}  uv nbins {str path, str build_id}
 *   SYMBOLS uv n {uv binary, uv addr, uv size, uv offset, uv entry, str name}
 *           (appends to the table; a symbol's id is its position)
 *   WINDOW  uv start_ns, uv end_ns, uv n {uv id, uv calls, uv returns,
 *           uv sum_ns, uv total_ns, uv self_ns, uv min_ns, uv max_ns,
 *           uv errors, uv max_conc, f64 sumsq, uv nhist {uv gap, uv count}}
 *           (bucket = gap for the first pair, previous bucket + 1 + gap after)
 *   END     uv duration_ns, sv exit_status, uv dropped_events,
 *           uv ndiag {uv diag}, str reason
 *   EVENTS  uv n {uv id, uv ts_ns, uv pid, uv tid, uv cpu, uv duration_ns,
 *           sv ret, uv nargs {uv type, uv value, STR only: uv flags
 *           (1 truncated, 2 unreadable), str bytes}}
 *   SELECT  uv n {uv ts_ns, uv id, uv what, f64 rate, str reason}
 *   DSTATS  uv n {uv id, uv events, uv dropped, f64 rate, uv sampled,
 *           uv ncpus {uv dropped}} (each chunk replaces the previous)
 *   USDT    uv n {uv id, uv kind, str provider, str probe, uv nkeys {uv type,
 *           uv truncated, uv v, uv has_str, [str s]}}
 *           (follows the SYMBOLS chunk of its rows; rows it does not name
 *           are functions, so files without it read as before)
 *   DUTY    uv start_ns, uv end_ns, uv reads, uv window_reads,
 *           uv n {uv id gap, uv on_ns} (follows the WINDOW of that interval)
 *   READS   uv start_ns, uv end_ns, 16 x {uv reads, uv window_reads} per
 *           size class, uv has_writes [uv writes, uv window_writes],
 *           uv n {uv duty index, uv class, uv window_calls} (class 16:
 *           calls while the window was open) (follows that DUTY, entries
 *           ascending; files without it have no classes)
 *   WRITES  uv start_ns, uv end_ns, 16 x {uv writes, uv window_writes} per
 *           class of the writing thread's latest read, uv n {uv duty index,
 *           uv class, uv window_calls} (calls while the window was open, by
 *           the class of the thread's latest read) (follows that READS,
 *           entries ascending; files without it have writes unclassed)
 *   CALLERS uv start_ns, uv end_ns, uv n {uv duty index, uv caller (0:
 *           none, else symbol id + 1), uv window_calls} (calls while the
 *           window was open, by innermost traced caller; follows that DUTY,
 *           entries ascending)
 *   CALLCLS uv start_ns, uv end_ns, uv n {uv duty index, uv caller (as
 *           CALLERS), uv class + 1, uv window_calls}, uv n {the same for
 *           RPATH} (those of CALLERS's and RPATH's calls made after a
 *           read, by the class of the thread's latest read; follows that
 *           CALLERS, and that RPATH when the second list has entries;
 *           entries ascending, each pair's sum at most its entry there)
 *   TURNS   uv start_ns, uv end_ns, uv turns, uv window_turns, uv wakeups,
 *           uv window_wakeups (the target's event loop: a thread's first
 *           write after it read ends a turn, its first read after it wrote
 *           is a wakeup; follows that READS)
 *   TURNWIN uv start_ns, uv end_ns, uv n {uv duty index gap} (the turn
 *           windows' functions, as DUTY's ids), 16 x {uv window_reads, uv
 *           window_writes} per class, uv window_writes, uv window_turns,
 *           uv window_wakeups (what the turn windows saw; TURNS's are the
 *           other windows'; follows that TURNS)
 *   TWCALLS uv start_ns, uv end_ns, uv n {uv window_calls} (each TURNWIN
 *           function's calls in the turn windows alone, in TURNWIN's
 *           order; follows that TURNWIN)
 *   RPATH   uv start_ns, uv end_ns, uv turns, uv writes, uv n {as CALLERS}
 *           (the windows' read path: turns' ends, writes and calls after a
 *           read in an open window, links all in; follows that TURNS)
 *   YARD    uv start_ns, uv end_ns, uv in_ns, uv counted, uv imputed (how
 *           the socket programs counted: ns they were in, reads and writes
 *           they counted, and those imputed from the target's system calls
 *           while they were out, which READS's and the others' figures
 *           include; follows that READS, or WRITES when there is one)
 *
 * Order: HEADER first, then SYMBOLS and WINDOW chunks, END last; unknown
 * chunk types are skipped wherever they appear.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tracefile.h"
#include "util.h"

#define FILE_HDR_LEN  16
#define CHUNK_HDR_LEN 16
#define TRACE_MINOR   0
#define MAX_RAW	      (256u << 20) /* per chunk, bounds a reader's allocation */
#define MAX_STR	      (1u << 20)
#define MAX_DIAG      256
/* Deflate cannot expand more than 1032:1; a larger claim is a lie. */
#define MAX_RATIO 1040

/* Smallest encodings, to bound counts before allocating. */
#define MIN_KV	  2
#define MIN_BIN	  2
#define MIN_SYM	  6
#define MIN_ENTRY 19
#define MIN_PAIR  2
#define MIN_EVENT 8
#define MIN_SEL	  12
#define MIN_DST	  13
#define MAX_CPUS  4096

static void put_le16(unsigned char *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static uint16_t get_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const char *chunk_name(uint32_t type, char *buf, size_t len)
{
	switch (type) {
	case AT_CHUNK_HEADER:
		return "header";
	case AT_CHUNK_SYMBOLS:
		return "symbols";
	case AT_CHUNK_WINDOW:
		return "window";
	case AT_CHUNK_END:
		return "end";
	case AT_CHUNK_EVENTS:
		return "events";
	case AT_CHUNK_SELECT:
		return "selection";
	case AT_CHUNK_DSTATS:
		return "detail-stats";
	case AT_CHUNK_USDT:
		return "usdt";
	case AT_CHUNK_DUTY:
		return "duty";
	case AT_CHUNK_READS:
		return "reads";
	case AT_CHUNK_WRITES:
		return "writes";
	case AT_CHUNK_CALLERS:
		return "callers";
	case AT_CHUNK_CALLCLS:
		return "callers-by-class";
	case AT_CHUNK_TURNS:
		return "turns";
	case AT_CHUNK_TURNWIN:
		return "turn-windows";
	case AT_CHUNK_TWCALLS:
		return "turn-window-calls";
	case AT_CHUNK_RPATH:
		return "read-path";
	case AT_CHUNK_YARD:
		return "yardsticks";
	}
	snprintf(buf, len, "type-%u", type);
	return buf;
}

static void file_header(unsigned char *p)
{
	memcpy(p, AT_TRACE_MAGIC, 8);
	put_le16(p + 8, AT_TRACE_VERSION);
	put_le16(p + 10, TRACE_MINOR);
	put_le32(p + 12, (uint32_t)crc32(0, p, 12));
}

/* ---- writer ---- */

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;

	if (b->cap - b->len >= n)
		return;
	while (cap - b->len < n)
		cap *= 2;
	b->p = at_xrealloc(b->p, cap, 1);
	b->cap = cap;
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_uv(struct buf *b, uint64_t v)
{
	buf_reserve(b, 10);
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		b->p[b->len++] = c | (v ? 0x80 : 0);
	} while (v);
}

static void put_sv(struct buf *b, int64_t v)
{
	put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_uv(b, n);
	put_bytes(b, s, n);
}

static void put_f64(struct buf *b, double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	buf_reserve(b, 8);
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (u >> (8 * i)) & 0xff;
}

struct at_writer {
	int fd;
	char *path;
	off_t good;   /* end of the last complete chunk */
	bool failed;  /* sticky: never append after a torn chunk */
	bool header;  /* header chunk written */
	bool end;     /* end chunk written */
	size_t nbins; /* for checking what later chunks refer to */
	size_t nsyms;
	uint32_t *stamp; /* per symbol: window generation, to catch duplicate ids */
	uint32_t gen;
	struct buf raw, out;
	char err[AT_ERRLEN];
};

static int werr(struct at_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int werr(struct at_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Usable state for a new chunk: not failed, header written first, none after end. */
static int wcheck(struct at_writer *w, const char *what, bool need_header)
{
	if (w->failed)
		return -1; /* keep the first error */
	if (need_header && !w->header)
		return werr(w, "%s: %s chunk written before the header", w->path, what);
	if (w->end)
		return werr(w, "%s: %s chunk written after the end chunk", w->path, what);
	return 0;
}

/* Compress, frame and append one chunk with a single write(). */
static int write_chunk(struct at_writer *w, uint32_t type, const void *raw, size_t len)
{
	static const unsigned char empty;
	uLongf clen;
	uint32_t crc;
	size_t total;
	int rc;

	if (len > MAX_RAW)
		return werr(w, "%s: chunk of %zu bytes exceeds the format's %u MiB limit", w->path,
			    len, MAX_RAW >> 20);
	clen = compressBound(len);
	w->out.len = 0;
	buf_reserve(&w->out, CHUNK_HDR_LEN + clen);
	/* Events are the bulk, written while the target runs: the fastest level. */
	rc = compress2(w->out.p + CHUNK_HDR_LEN, &clen, len ? raw : &empty, len,
		       type == AT_CHUNK_EVENTS ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION);
	if (rc != Z_OK)
		return werr(w, "%s: zlib compression failed (%d)", w->path, rc);
	put_le32(w->out.p, type);
	put_le32(w->out.p + 4, (uint32_t)len);
	put_le32(w->out.p + 8, (uint32_t)clen);
	crc = (uint32_t)crc32(0, w->out.p, 12);
	crc = (uint32_t)crc32(crc, w->out.p + CHUNK_HDR_LEN, clen);
	put_le32(w->out.p + 12, crc);
	total = CHUNK_HDR_LEN + clen;
	if (write_all(w->fd, w->out.p, total) < 0) {
		int e = errno;

		/* Cut a torn chunk so the file still reads up to the last good one. */
		int tr = ftruncate(w->fd, w->good);

		(void)tr; /* nothing better to do; failed is sticky either way */
		w->failed = true;
		return werr(w, "cannot write %s: %s", w->path, strerror(e));
	}
	w->good += (off_t)total;
	return 0;
}

struct at_writer *at_writer_open(const char *path, char *err, size_t errlen)
{
	unsigned char hdr[FILE_HDR_LEN];
	struct at_writer *w;
	struct stat st;
	char *old;
	int fd;

	if (!err)
		errlen = 0;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			snprintf(err, errlen,
				 "refusing to write %s: it is a symbolic link (remove it or choose "
				 "another output file)",
				 path);
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen,
				 "refusing to write %s: it exists and is not a regular file", path);
			return NULL;
		}
		old = at_xcalloc(strlen(path) + 5, 1);
		strcpy(old, path);
		strcat(old, ".old");
		/* rename() replaces an older .old and never follows symlinks. */
		if (rename(path, old) < 0) {
			snprintf(err, errlen, "cannot rename %s to %s: %s", path, old,
				 strerror(errno));
			free(old);
			return NULL;
		}
		free(old);
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			snprintf(err, errlen,
				 "refusing to write %s: it was created by someone else while being "
				 "replaced",
				 path);
		else
			snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	file_header(hdr);
	/* The mode must not depend on the umask: the trace may hold arguments. */
	if (fchmod(fd, 0600) < 0 || write_all(fd, hdr, sizeof(hdr)) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return NULL;
	}
	w = at_xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->path = at_xstrdup(path);
	w->good = FILE_HDR_LEN;
	return w;
}

int at_writer_header(struct at_writer *w, const struct at_kv *kv, size_t nkv,
		     const struct at_binary *bins, size_t nbins)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "header", false) < 0)
		return -1;
	if (w->header)
		return werr(w, "%s: header chunk written twice", w->path);
	b->len = 0;
	put_uv(b, nkv);
	for (size_t i = 0; i < nkv; i++) {
		if (!kv[i].key)
			return werr(w, "%s: header key %zu is NULL", w->path, i);
		put_str(b, kv[i].key);
		put_str(b, kv[i].value);
	}
	put_uv(b, nbins);
	for (size_t i = 0; i < nbins; i++) {
		if (strnlen(bins[i].build_id, sizeof(bins[i].build_id)) >= sizeof(bins[i].build_id))
			return werr(w, "%s: build-id of binary %zu is not terminated", w->path, i);
		put_str(b, bins[i].path);
		put_str(b, bins[i].build_id);
	}
	if (write_chunk(w, AT_CHUNK_HEADER, b->p, b->len) < 0)
		return -1;
	w->header = true;
	w->nbins = nbins;
	return 0;
}

/* The USDT rows among syms, if any, in a chunk of their own. */
static int write_usdt(struct at_writer *w, const struct at_symbol *syms, size_t n)
{
	struct buf *b = &w->raw;
	size_t nu = 0;

	for (size_t i = 0; i < n; i++)
		nu += syms[i].kind != AT_SYM_FUNC;
	if (!nu)
		return 0;
	b->len = 0;
	put_uv(b, nu);
	for (size_t i = 0; i < n; i++) {
		const struct at_symbol *s = &syms[i];

		if (s->kind == AT_SYM_FUNC)
			continue;
		if (s->kind > AT_SYM_USDT_KEY || s->nkeys > AT_MAX_ARGS)
			return werr(w, "%s: symbol %u has bad kind %u or %u keys", w->path, s->id,
				    s->kind, s->nkeys);
		put_uv(b, s->id);
		put_uv(b, s->kind);
		put_str(b, s->provider ? s->provider : "");
		put_str(b, s->probe ? s->probe : "");
		put_uv(b, s->nkeys);
		for (uint32_t k = 0; k < s->nkeys; k++) {
			put_uv(b, s->keys[k].type);
			put_uv(b, s->keys[k].truncated);
			put_uv(b, s->keys[k].v);
			put_uv(b, s->keys[k].str != NULL);
			if (s->keys[k].str)
				put_str(b, s->keys[k].str);
		}
	}
	return write_chunk(w, AT_CHUNK_USDT, b->p, b->len);
}

int at_writer_symbols(struct at_writer *w, const struct at_symbol *syms, size_t n)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "symbols", true) < 0)
		return -1;
	if (n > UINT32_MAX - w->nsyms)
		return werr(w, "%s: too many symbols", w->path);
	b->len = 0;
	put_uv(b, n);
	for (size_t i = 0; i < n; i++) {
		const struct at_symbol *s = &syms[i];

		/* Ids are implicit (positions); windows refer to them. */
		if (s->id != w->nsyms + i)
			return werr(w, "%s: symbol %zu has id %u, expected %zu", w->path, i, s->id,
				    w->nsyms + i);
		if (s->binary >= w->nbins)
			return werr(w, "%s: symbol %u refers to binary %u of %zu", w->path, s->id,
				    s->binary, w->nbins);
		if (s->entry > AT_ENTRY_REFUSED)
			return werr(w, "%s: symbol %u has bad entry kind %u", w->path, s->id,
				    s->entry);
		put_uv(b, s->binary);
		put_uv(b, s->addr);
		put_uv(b, s->size);
		put_uv(b, s->offset);
		put_uv(b, s->entry);
		put_str(b, s->name);
	}
	if (write_chunk(w, AT_CHUNK_SYMBOLS, b->p, b->len) < 0)
		return -1;
	if (write_usdt(w, syms, n) < 0)
		return -1;
	if (n) {
		w->stamp = at_xrealloc(w->stamp, w->nsyms + n, sizeof(*w->stamp));
		memset(w->stamp + w->nsyms, 0, n * sizeof(*w->stamp));
	}
	w->nsyms += n;
	return 0;
}

/* Per class: the interval's reads (or writes) and those in its windows. */
static int put_class_pairs(struct at_writer *w, const uint64_t *all, const uint64_t *on,
			   const char *what)
{
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		if (on[k] > all[k])
			return werr(w, "%s: more window %s than %s", w->path, what, what);
		put_uv(&w->raw, all[k]);
		put_uv(&w->raw, on[k]);
	}
	return 0;
}

/* Class entries: ascending by duty index, then class; classes up to max_cls. */
static int put_cls_calls(struct at_writer *w, const struct at_cls_calls *cls, uint32_t n,
			 uint32_t max_cls, uint32_t nduty)
{
	struct buf *b = &w->raw;

	put_uv(b, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct at_cls_calls *c = &cls[i];

		if (c->k >= nduty || c->cls > max_cls ||
		    (i &&
		     (c->k < cls[i - 1].k || (c->k == cls[i - 1].k && c->cls <= cls[i - 1].cls))))
			return werr(w, "%s: bad read class entry", w->path);
		put_uv(b, c->k);
		put_uv(b, c->cls);
		put_uv(b, c->calls);
	}
	return 0;
}

/* Start a chunk about one interval in the raw buffer: its start and end. */
static struct buf *interval_chunk(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = &w->raw;

	b->len = 0;
	put_uv(b, win->start_ns);
	put_uv(b, win->end_ns);
	return b;
}

/* Window calls per (duty index, innermost caller), ascending; a caller as at_caller_rank(). */
static int put_callers(struct at_writer *w, struct buf *b, const struct at_window *win,
		       const struct at_caller_calls *v, uint32_t n)
{
	put_uv(b, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct at_caller_calls *c = &v[i];
		uint32_t caller = at_caller_rank(c->caller);

		if (c->k >= win->nduty || caller > w->nsyms ||
		    (i && (c->k < c[-1].k ||
			   (c->k == c[-1].k && caller <= at_caller_rank(c[-1].caller)))))
			return werr(w, "%s: bad caller entry", w->path);
		put_uv(b, c->k);
		put_uv(b, caller);
		put_uv(b, c->calls);
	}
	return 0;
}

static int write_callers(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = interval_chunk(w, win);

	if (put_callers(w, b, win, win->callers, win->ncallers) < 0)
		return -1;
	return write_chunk(w, AT_CHUNK_CALLERS, b->p, b->len);
}

/*
 * Whether the calls per caller and class (v, n; ascending, classes 1 to
 * AT_READ_CLASSES) each name a pair of callers[] and sum to its calls at most.
 */
static bool cls_callers_fit(const struct at_caller_calls *callers, uint32_t ncallers,
			    const struct at_caller_calls *v, uint32_t n)
{
	uint32_t j = 0;
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (v[i].cls < 1 || v[i].cls > AT_READ_CLASSES)
			return false;
		if (i && v[i].k == v[i - 1].k && v[i].caller == v[i - 1].caller) {
			if (v[i].cls <= v[i - 1].cls)
				return false;
		} else {
			sum = 0;
			while (j < ncallers &&
			       (callers[j].k < v[i].k ||
				(callers[j].k == v[i].k &&
				 at_caller_rank(callers[j].caller) < at_caller_rank(v[i].caller))))
				j++;
			if (j == ncallers || callers[j].k != v[i].k ||
			    callers[j].caller != v[i].caller)
				return false;
		}
		sum += v[i].calls;
		if (sum > callers[j].calls)
			return false;
	}
	return true;
}

/* Both lists of w's calls per caller and class fit their callers, the second a read path. */
static bool window_cls_callers_fit(const struct at_window *w)
{
	return cls_callers_fit(w->callers, w->ncallers, w->cls_callers, w->ncls_callers) &&
	       (!w->nrp_cls_callers || w->has_rpath) &&
	       cls_callers_fit(w->rp_callers, w->nrp_callers, w->rp_cls_callers,
			       w->nrp_cls_callers);
}

static void put_cls_callers(struct buf *b, const struct at_caller_calls *v, uint32_t n)
{
	put_uv(b, n);
	for (uint32_t i = 0; i < n; i++) {
		put_uv(b, v[i].k);
		put_uv(b, at_caller_rank(v[i].caller));
		put_uv(b, v[i].cls);
		put_uv(b, v[i].calls);
	}
}

static int write_cls_callers(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = interval_chunk(w, win);

	if (!window_cls_callers_fit(win))
		return werr(w, "%s: bad caller entry by class", w->path);
	put_cls_callers(b, win->cls_callers, win->ncls_callers);
	put_cls_callers(b, win->rp_cls_callers, win->nrp_cls_callers);
	return write_chunk(w, AT_CHUNK_CALLCLS, b->p, b->len);
}

/* The read path's turns' ends and writes are some of the interval's, and each end is a write. */
static bool rpath_fits(const struct at_window *w, uint64_t turns, uint64_t writes)
{
	return turns <= w->turn_all && writes <= w->wr_all && turns <= writes;
}

/* The read path: its turns' ends and writes, then its calls per caller as above. */
static int write_rpath(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = interval_chunk(w, win);

	if (!rpath_fits(win, win->rp_turns, win->rp_writes))
		return werr(w, "%s: more read-path turns or writes than turns or writes", w->path);
	put_uv(b, win->rp_turns);
	put_uv(b, win->rp_writes);
	if (put_callers(w, b, win, win->rp_callers, win->nrp_callers) < 0)
		return -1;
	return write_chunk(w, AT_CHUNK_RPATH, b->p, b->len);
}

/* The yardsticks' counted and imputed reads and writes are some of the interval's. */
static bool yard_fits(const struct at_window *w, uint64_t in_ns, uint64_t counted, uint64_t imputed)
{
	uint64_t all = w->ref_all + (w->has_writes ? w->wr_all : 0);

	return in_ns <= w->end_ns - w->start_ns && counted <= all && imputed <= all - counted;
}

static int write_yard(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = interval_chunk(w, win);

	if (!yard_fits(win, win->yard_in_ns, win->yard_counted, win->yard_imputed))
		return werr(w, "%s: more yardstick reads and writes than reads and writes",
			    w->path);
	put_uv(b, win->yard_in_ns);
	put_uv(b, win->yard_counted);
	put_uv(b, win->yard_imputed);
	return write_chunk(w, AT_CHUNK_YARD, b->p, b->len);
}

/* on and a turn window's tw of all: both kinds of window see a disjoint part. */
static bool tw_fits(uint64_t all, uint64_t on, uint64_t tw)
{
	return on <= all && tw <= all - on;
}

/* Whether every count of the turn windows fits with the other windows' in the interval's. */
static bool turnwin_fits(const struct at_window *w)
{
	bool ok = tw_fits(w->wr_all, w->wr_on, w->tw_wr_on) &&
		  tw_fits(w->turn_all, w->turn_on, w->tw_turn_on) &&
		  tw_fits(w->wake_all, w->wake_on, w->tw_wake_on);

	for (int k = 0; k < AT_READ_CLASSES; k++)
		ok = ok && tw_fits(w->cls_all[k], w->cls_on[k], w->tw_cls_on[k]) &&
		     tw_fits(w->wr_cls_all[k], w->wr_cls_on[k], w->tw_wr_cls_on[k]);
	return ok;
}

/*
 * The turn windows' functions (duty indices, ascending, each as the gap
 * from the one before) and their yardsticks: reads and writes per class,
 * all writes, turns and wakeups.
 */
static int write_turnwin(struct at_writer *w, const struct at_window *win)
{
	struct buf *b;

	if (!win->has_wr_cls || !turnwin_fits(win))
		return werr(w, "%s: more turn window counts than counts", w->path);
	b = interval_chunk(w, win);
	put_uv(b, win->nturnwin);
	for (uint32_t i = 0; i < win->nturnwin; i++) {
		uint32_t k = win->turnwin[i];

		if (k >= win->nduty || (i && k <= win->turnwin[i - 1]))
			return werr(w, "%s: bad turn window entry", w->path);
		put_uv(b, i ? k - win->turnwin[i - 1] - 1 : k);
	}
	for (int k = 0; k < AT_READ_CLASSES; k++) {
		put_uv(b, win->tw_cls_on[k]);
		put_uv(b, win->tw_wr_cls_on[k]);
	}
	put_uv(b, win->tw_wr_on);
	put_uv(b, win->tw_turn_on);
	put_uv(b, win->tw_wake_on);
	return write_chunk(w, AT_CHUNK_TURNWIN, b->p, b->len);
}

/*
 * No turn-window function has more calls in the turn windows than in all
 * windows: one walk, as turnwin[] and cls[] both ascend by duty index.
 */
static bool twcalls_fit(const struct at_window *w)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < w->nturnwin; i++) {
		uint64_t calls = 0;

		for (; c < w->ncls && w->cls[c].k <= w->turnwin[i]; c++)
			if (w->cls[c].k == w->turnwin[i] && w->cls[c].cls == AT_BY_TIME)
				calls = w->cls[c].calls;
		if (w->tw_calls[i] > calls)
			return false;
	}
	return true;
}

static int write_twcalls(struct at_writer *w, const struct at_window *win)
{
	struct buf *b;

	if (!twcalls_fit(win))
		return werr(w, "%s: more turn window calls than window calls", w->path);
	b = interval_chunk(w, win);
	put_uv(b, win->nturnwin);
	for (uint32_t i = 0; i < win->nturnwin; i++)
		put_uv(b, win->tw_calls[i]);
	return write_chunk(w, AT_CHUNK_TWCALLS, b->p, b->len);
}

/* Ids ascend, so each is stored as the gap from the one before. */
static int write_duty(struct at_writer *w, const struct at_window *win)
{
	struct buf *b;
	uint32_t prev = 0;

	if (win->ref_on > win->ref_all)
		return werr(w, "%s: more window calls than calls", w->path);
	b = interval_chunk(w, win);
	put_uv(b, win->ref_all);
	put_uv(b, win->ref_on);
	put_uv(b, win->nduty);
	for (uint32_t i = 0; i < win->nduty; i++) {
		const struct at_duty_on *d = &win->duty[i];

		if (d->id >= w->nsyms || (i && d->id <= prev) ||
		    d->on_ns > win->end_ns - win->start_ns)
			return werr(w, "%s: bad duty entry for symbol %u", w->path, d->id);
		put_uv(b, i ? d->id - prev - 1 : d->id);
		put_uv(b, d->on_ns);
		prev = d->id;
	}
	if (write_chunk(w, AT_CHUNK_DUTY, b->p, b->len) < 0)
		return -1;
	if (win->has_turnwin && !win->has_turns)
		return werr(w, "%s: turn windows without turns", w->path);
	if (!win->has_cls)
		return 0;
	interval_chunk(w, win);
	if (put_class_pairs(w, win->cls_all, win->cls_on, "reads") < 0)
		return -1;
	if (win->wr_on > win->wr_all)
		return werr(w, "%s: more window writes than writes", w->path);
	put_uv(b, win->has_writes);
	if (win->has_writes) {
		put_uv(b, win->wr_all);
		put_uv(b, win->wr_on);
	}
	if (put_cls_calls(w, win->cls, win->ncls, AT_BY_TIME, win->nduty) < 0 ||
	    write_chunk(w, AT_CHUNK_READS, b->p, b->len) < 0)
		return -1;
	if (win->has_wr_cls) {
		if (!win->has_writes)
			return werr(w, "%s: writes by class without writes", w->path);
		interval_chunk(w, win);
		if (put_class_pairs(w, win->wr_cls_all, win->wr_cls_on, "writes") < 0)
			return -1;
		if (put_cls_calls(w, win->wr_cls, win->nwr_cls, AT_READ_CLASSES - 1, win->nduty) <
			0 ||
		    write_chunk(w, AT_CHUNK_WRITES, b->p, b->len) < 0)
			return -1;
	}
	if (win->has_yard && write_yard(w, win) < 0)
		return -1;
	if (win->has_callers && write_callers(w, win) < 0)
		return -1;
	if (win->has_cls_callers && !win->has_callers)
		return werr(w, "%s: callers by class without callers", w->path);
	if (!win->has_turns)
		return win->has_cls_callers ? write_cls_callers(w, win) : 0;
	if (!win->has_writes)
		return werr(w, "%s: turns without writes", w->path);
	if (win->turn_on > win->turn_all || win->wake_on > win->wake_all)
		return werr(w, "%s: more window turns than turns", w->path);
	interval_chunk(w, win);
	put_uv(b, win->turn_all);
	put_uv(b, win->turn_on);
	put_uv(b, win->wake_all);
	put_uv(b, win->wake_on);
	if (write_chunk(w, AT_CHUNK_TURNS, b->p, b->len) < 0)
		return -1;
	if (win->has_rpath && write_rpath(w, win) < 0)
		return -1;
	if (win->has_turnwin && write_turnwin(w, win) < 0)
		return -1;
	if (win->has_turnwin && win->has_twcalls && write_twcalls(w, win) < 0)
		return -1;
	return win->has_cls_callers ? write_cls_callers(w, win) : 0;
}

int at_writer_window(struct at_writer *w, const struct at_window *win)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "window", true) < 0)
		return -1;
	if (win->end_ns < win->start_ns)
		return werr(w, "%s: window ends before it starts", w->path);
	if (++w->gen == 0) {
		if (w->nsyms)
			memset(w->stamp, 0, w->nsyms * sizeof(*w->stamp));
		w->gen = 1;
	}
	interval_chunk(w, win);
	put_uv(b, win->n);
	for (uint32_t i = 0; i < win->n; i++) {
		const struct at_window_entry *e = &win->e[i];
		uint32_t prev = 0;

		if (e->id >= w->nsyms)
			return werr(w, "%s: window entry for unknown symbol %u (%zu symbols)",
				    w->path, e->id, w->nsyms);
		if (w->stamp[e->id] == w->gen)
			return werr(w, "%s: symbol %u listed twice in one window", w->path, e->id);
		w->stamp[e->id] = w->gen;
		if (!isfinite(e->c.sumsq) || e->c.sumsq < 0)
			return werr(w, "%s: symbol %u has a bad sum of squares", w->path, e->id);
		if (e->nhist > AT_HIST_BUCKETS)
			return werr(w, "%s: symbol %u has %u histogram buckets", w->path, e->id,
				    e->nhist);
		put_uv(b, e->id);
		put_uv(b, e->c.calls);
		put_uv(b, e->c.returns);
		put_uv(b, e->c.sum_ns);
		put_uv(b, e->c.total_ns);
		put_uv(b, e->c.self_ns);
		put_uv(b, e->c.min_ns);
		put_uv(b, e->c.max_ns);
		put_uv(b, e->c.errors);
		put_uv(b, e->c.max_conc);
		put_f64(b, e->c.sumsq);
		put_uv(b, e->nhist);
		for (uint32_t j = 0; j < e->nhist; j++) {
			uint32_t bk = e->hist[j].bucket;

			if (bk >= AT_HIST_BUCKETS || (j && bk <= prev))
				return werr(w, "%s: symbol %u: histogram buckets not ascending",
					    w->path, e->id);
			put_uv(b, j ? bk - prev - 1 : bk);
			put_uv(b, e->hist[j].count);
			prev = bk;
		}
	}
	if (write_chunk(w, AT_CHUNK_WINDOW, b->p, b->len))
		return -1;
	return win->nduty ? write_duty(w, win) : 0;
}

int at_writer_end(struct at_writer *w, const struct at_end *end)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "end", true) < 0)
		return -1;
	b->len = 0;
	put_uv(b, end->duration_ns);
	put_sv(b, end->exit_status);
	put_uv(b, end->dropped_events);
	put_uv(b, AT_DIAG_NR);
	for (int i = 0; i < AT_DIAG_NR; i++)
		put_uv(b, end->diag[i]);
	put_str(b, end->reason);
	if (write_chunk(w, AT_CHUNK_END, b->p, b->len) < 0)
		return -1;
	w->end = true;
	return 0;
}

static bool rate_ok(double r)
{
	return isfinite(r) && r >= 0 && r <= 1;
}

int at_writer_events(struct at_writer *w, const struct at_event *ev, size_t n)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "events", true) < 0)
		return -1;
	b->len = 0;
	put_uv(b, n);
	for (size_t i = 0; i < n; i++) {
		const struct at_event *e = &ev[i];

		if (e->id >= w->nsyms)
			return werr(w, "%s: event for unknown symbol %u", w->path, e->id);
		if (e->nargs > AT_MAX_ARGS)
			return werr(w, "%s: event with %u arguments", w->path, e->nargs);
		put_uv(b, e->id);
		put_uv(b, e->ts_ns);
		put_uv(b, e->pid);
		put_uv(b, e->tid);
		put_uv(b, e->cpu);
		put_uv(b, e->duration_ns);
		put_sv(b, e->ret);
		put_uv(b, e->nargs);
		for (uint32_t a = 0; a < e->nargs; a++) {
			const struct at_arg *g = &e->args[a];

			if (g->type > AT_ARG_STR)
				return werr(w, "%s: bad argument type %u", w->path, g->type);
			put_uv(b, g->type);
			put_uv(b, g->v);
			if (g->type == AT_ARG_STR) {
				put_uv(b, (g->truncated ? 1 : 0) | (g->str ? 0 : 2));
				put_str(b, g->str);
			}
		}
	}
	return write_chunk(w, AT_CHUNK_EVENTS, b->p, b->len);
}

int at_writer_selection(struct at_writer *w, const struct at_sel_change *c, size_t n)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "selection", true) < 0)
		return -1;
	b->len = 0;
	put_uv(b, n);
	for (size_t i = 0; i < n; i++) {
		if (c[i].id >= w->nsyms || c[i].what < AT_SEL_ENTER || c[i].what > AT_SEL_RATE ||
		    !rate_ok(c[i].rate))
			return werr(w, "%s: bad selection change for symbol %u", w->path, c[i].id);
		put_uv(b, c[i].ts_ns);
		put_uv(b, c[i].id);
		put_uv(b, c[i].what);
		put_f64(b, c[i].rate);
		put_str(b, c[i].reason);
	}
	return write_chunk(w, AT_CHUNK_SELECT, b->p, b->len);
}

int at_writer_dstats(struct at_writer *w, const struct at_detail_stats *d, size_t n)
{
	struct buf *b = &w->raw;

	if (wcheck(w, "detail-stats", true) < 0)
		return -1;
	b->len = 0;
	put_uv(b, n);
	for (size_t i = 0; i < n; i++) {
		if (d[i].id >= w->nsyms || !rate_ok(d[i].rate) || d[i].ncpus > MAX_CPUS)
			return werr(w, "%s: bad detail stats for symbol %u", w->path, d[i].id);
		put_uv(b, d[i].id);
		put_uv(b, d[i].events);
		put_uv(b, d[i].dropped);
		put_f64(b, d[i].rate);
		put_uv(b, d[i].sampled);
		put_uv(b, d[i].ncpus);
		for (uint32_t c = 0; c < d[i].ncpus; c++)
			put_uv(b, d[i].dropped_cpu[c]);
	}
	return write_chunk(w, AT_CHUNK_DSTATS, b->p, b->len);
}

int at_writer_chunk(struct at_writer *w, uint32_t type, const void *raw, size_t len)
{
	if (wcheck(w, "extension", true) < 0)
		return -1;
	/* Every range tracefile.h reserves, used or not: a reader may know more of them. */
	if (type < AT_CHUNK_RESERVED)
		return werr(w, "%s: chunk type %u is reserved", w->path, type);
	return write_chunk(w, type, raw, len);
}

const char *at_writer_error(const struct at_writer *w)
{
	return w->err[0] ? w->err : "no error";
}

int at_writer_close(struct at_writer *w)
{
	int rc = 0, e = 0;

	if (!w)
		return 0;
	/* A recording is worth an fsync; the report may run after a crash. */
	if (fsync(w->fd) < 0 && errno != EINVAL && errno != EROFS) {
		e = errno;
		rc = -1;
	}
	if (close(w->fd) < 0 && !rc) {
		e = errno;
		rc = -1;
	}
	free(w->path);
	free(w->stamp);
	free(w->raw.p);
	free(w->out.p);
	free(w);
	if (rc)
		errno = e;
	return rc;
}

/* ---- reader ---- */

/* Cursor over one inflated payload; the first failure is kept in why. */
struct cur {
	const unsigned char *p, *end;
	char *why;
	size_t whylen;
	bool bad;
};

static bool cfail(struct cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool cfail(struct cur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad)
		return false;
	c->bad = true;
	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return false;
}

static size_t cleft(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static bool get_uv(struct cur *c, uint64_t *v, const char *what)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (c->p >= c->end)
			return cfail(c, "payload ends inside %s", what);
		b = *c->p++;
		if (shift == 63 && b > 1)
			return cfail(c, "varint overflow in %s", what);
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return cfail(c, "varint overflow in %s", what);
}

static bool get_u32(struct cur *c, uint32_t *v, uint64_t max, const char *what)
{
	uint64_t x;

	if (!get_uv(c, &x, what))
		return false;
	if (x > max)
		return cfail(c, "%s %llu out of range (max %llu)", what, (unsigned long long)x,
			     (unsigned long long)max);
	*v = (uint32_t)x;
	return true;
}

/* A count of records each taking at least min bytes: bounds allocations. */
static bool get_count(struct cur *c, size_t *n, size_t min, const char *what)
{
	uint64_t x;

	if (!get_uv(c, &x, what))
		return false;
	if (x > cleft(c) / min)
		return cfail(c, "%llu %s cannot fit in %zu bytes", (unsigned long long)x, what,
			     cleft(c));
	*n = (size_t)x;
	return true;
}

static bool get_str(struct cur *c, char **out, size_t max, const char *what)
{
	uint64_t n;
	char *s;

	if (!get_uv(c, &n, what))
		return false;
	if (n > max || n > cleft(c))
		return cfail(c, "%s of %llu bytes is too long", what, (unsigned long long)n);
	if (memchr(c->p, 0, (size_t)n))
		return cfail(c, "%s contains a NUL byte", what);
	s = at_xcalloc((size_t)n + 1, 1);
	memcpy(s, c->p, (size_t)n);
	c->p += n;
	*out = s;
	return true;
}

static bool get_f64(struct cur *c, double *d, const char *what)
{
	uint64_t u = 0;

	if (cleft(c) < 8)
		return cfail(c, "payload ends inside %s", what);
	for (int i = 0; i < 8; i++)
		u |= (uint64_t)c->p[i] << (8 * i);
	c->p += 8;
	memcpy(d, &u, 8);
	return true;
}

struct parse {
	struct at_trace *t;
	bool have_header;
	size_t wcap, ecap, scap;
	uint32_t *stamp; /* per symbol: generation, to catch duplicate ids */
	uint32_t gen;
};

static bool dec_header(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	size_t n;

	if (!get_count(c, &n, MIN_KV, "key/value pairs"))
		return false;
	if (n)
		t->kv = at_xcalloc(n, sizeof(*t->kv));
	for (size_t i = 0; i < n; i++) {
		if (!get_str(c, &t->kv[i].key, MAX_STR, "header key"))
			return false;
		t->nkv++; /* counted now so at_trace_free sees the key */
		if (!get_str(c, &t->kv[i].value, MAX_STR, "header value"))
			return false;
	}
	if (!get_count(c, &n, MIN_BIN, "binaries"))
		return false;
	if (n > UINT32_MAX)
		return cfail(c, "too many binaries");
	if (n)
		t->bins = at_xcalloc(n, sizeof(*t->bins));
	for (size_t i = 0; i < n; i++) {
		char *id;

		if (!get_str(c, &t->bins[i].path, MAX_STR, "binary path"))
			return false;
		t->nbins++;
		if (!get_str(c, &id, sizeof(t->bins[i].build_id) - 1, "build-id"))
			return false;
		strcpy(t->bins[i].build_id, id);
		free(id);
	}
	return true;
}

static bool dec_symbols(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	struct at_symbol *s = NULL;
	size_t n, i;

	if (!get_count(c, &n, MIN_SYM, "symbols"))
		return false;
	if (n > UINT32_MAX - t->nsyms)
		return cfail(c, "too many symbols");
	if (n)
		s = at_xcalloc(n, sizeof(*s));
	for (i = 0; i < n; i++) {
		s[i].id = (uint32_t)(t->nsyms + i);
		if (!get_u32(c, &s[i].binary, UINT32_MAX, "binary index"))
			break;
		if (s[i].binary >= t->nbins) {
			cfail(c, "binary index %u out of range (%zu binaries)", s[i].binary,
			      t->nbins);
			break;
		}
		if (!get_uv(c, &s[i].addr, "address") || !get_uv(c, &s[i].size, "size") ||
		    !get_uv(c, &s[i].offset, "offset") ||
		    !get_u32(c, &s[i].entry, AT_ENTRY_REFUSED, "entry kind") ||
		    !get_str(c, &s[i].name, MAX_STR, "symbol name"))
			break;
	}
	if (i < n) {
		for (size_t j = 0; j <= i; j++)
			free(s[j].name);
		free(s);
		return false;
	}
	if (n) {
		t->syms = at_xrealloc(t->syms, t->nsyms + n, sizeof(*t->syms));
		memcpy(t->syms + t->nsyms, s, n * sizeof(*s));
		ps->stamp = at_xrealloc(ps->stamp, t->nsyms + n, sizeof(*ps->stamp));
		memset(ps->stamp + t->nsyms, 0, n * sizeof(*ps->stamp));
		t->nsyms += n;
	}
	free(s);
	return true;
}

static void free_window(struct at_window *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		free(w->e[i].hist);
	free(w->e);
	w->e = NULL;
	w->n = 0;
	free(w->duty);
	w->duty = NULL;
	w->nduty = 0;
	free(w->cls);
	w->cls = NULL;
	w->ncls = 0;
	w->has_cls = false;
	w->has_writes = false;
	free(w->wr_cls);
	w->wr_cls = NULL;
	w->nwr_cls = 0;
	w->has_wr_cls = false;
	free(w->callers);
	w->callers = NULL;
	w->ncallers = 0;
	w->has_callers = false;
	free(w->cls_callers);
	w->cls_callers = NULL;
	w->ncls_callers = 0;
	free(w->rp_cls_callers);
	w->rp_cls_callers = NULL;
	w->nrp_cls_callers = 0;
	w->has_cls_callers = false;
	free(w->rp_callers);
	w->rp_callers = NULL;
	w->nrp_callers = 0;
	w->has_rpath = false;
	w->rp_turns = w->rp_writes = 0;
	w->has_yard = false;
	w->yard_in_ns = w->yard_counted = w->yard_imputed = 0;
	w->has_turns = false;
	w->turn_all = w->turn_on = w->wake_all = w->wake_on = 0;
	free(w->turnwin);
	w->turnwin = NULL;
	w->nturnwin = 0;
	w->has_turnwin = false;
	free(w->tw_calls);
	w->tw_calls = NULL;
	w->has_twcalls = false;
}

static bool dec_entry(struct parse *ps, struct cur *c, struct at_window_entry *e)
{
	struct at_counts *k = &e->c;
	uint64_t gap, b = 0;
	size_t nh;

	if (!get_u32(c, &e->id, UINT32_MAX, "symbol id"))
		return false;
	if (e->id >= ps->t->nsyms)
		return cfail(c, "symbol id %u out of range (%zu symbols)", e->id, ps->t->nsyms);
	if (ps->stamp[e->id] == ps->gen)
		return cfail(c, "symbol id %u listed twice", e->id);
	ps->stamp[e->id] = ps->gen;
	if (!get_uv(c, &k->calls, "calls") || !get_uv(c, &k->returns, "returns") ||
	    !get_uv(c, &k->sum_ns, "sum_ns") || !get_uv(c, &k->total_ns, "total_ns") ||
	    !get_uv(c, &k->self_ns, "self_ns") || !get_uv(c, &k->min_ns, "min_ns") ||
	    !get_uv(c, &k->max_ns, "max_ns") || !get_uv(c, &k->errors, "errors") ||
	    !get_uv(c, &k->max_conc, "max_conc") || !get_f64(c, &k->sumsq, "sumsq"))
		return false;
	if (!isfinite(k->sumsq) || k->sumsq < 0)
		return cfail(c, "bad sum of squares for symbol id %u", e->id);
	if (!get_count(c, &nh, MIN_PAIR, "histogram pairs"))
		return false;
	if (nh > AT_HIST_BUCKETS)
		return cfail(c, "%zu histogram pairs (max %d)", nh, AT_HIST_BUCKETS);
	if (nh)
		e->hist = at_xcalloc(nh, sizeof(*e->hist));
	for (size_t j = 0; j < nh; j++) {
		if (!get_uv(c, &gap, "histogram bucket"))
			return false;
		/* Gaps make buckets strictly ascending by construction. */
		if (gap >= AT_HIST_BUCKETS || (b = (j ? b + 1 : 0) + gap) >= AT_HIST_BUCKETS)
			return cfail(c, "histogram bucket out of range for symbol id %u", e->id);
		e->hist[j].bucket = (uint32_t)b;
		if (!get_uv(c, &e->hist[j].count, "histogram count"))
			return false;
		e->nhist++;
	}
	return true;
}

static bool dec_window(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	struct at_window w = {0};
	size_t n;

	if (!get_uv(c, &w.start_ns, "start time") || !get_uv(c, &w.end_ns, "end time"))
		return false;
	if (w.end_ns < w.start_ns)
		return cfail(c, "window ends before it starts");
	if (!get_count(c, &n, MIN_ENTRY, "window entries"))
		return false;
	if (n > t->nsyms)
		return cfail(c, "%zu window entries for %zu symbols", n, t->nsyms);
	if (++ps->gen == 0) {
		if (t->nsyms)
			memset(ps->stamp, 0, t->nsyms * sizeof(*ps->stamp));
		ps->gen = 1;
	}
	if (n)
		w.e = at_xcalloc(n, sizeof(*w.e));
	for (size_t i = 0; i < n; i++) {
		/* Count first: free_window() then frees a partial entry's histogram. */
		w.n++;
		if (!dec_entry(ps, c, &w.e[i])) {
			free_window(&w);
			return false;
		}
	}
	if (t->nwins == ps->wcap) {
		ps->wcap = ps->wcap ? ps->wcap * 2 : 16;
		t->wins = at_xrealloc(t->wins, ps->wcap, sizeof(*t->wins));
	}
	t->wins[t->nwins++] = w;
	return true;
}

/*
 * The window a coarse-budget chunk describes: its interval, read from c,
 * must be the last window's. *w: that window, or NULL when it is not.
 */
static bool interval_window(struct parse *ps, struct cur *c, struct at_window **w)
{
	struct at_trace *t = ps->t;
	uint64_t start, end;

	if (!get_uv(c, &start, "start time") || !get_uv(c, &end, "end time"))
		return false;
	*w = t->nwins ? &t->wins[t->nwins - 1] : NULL;
	if (*w && ((*w)->start_ns != start || (*w)->end_ns != end))
		*w = NULL;
	return true;
}

/* The duty list of the window just read; it names the same interval. */
static bool dec_duty(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	struct at_window *w;
	uint64_t gap, id = 0;
	size_t n;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w)
		return cfail(c, "no window for this interval");
	if (w->nduty || w->ref_all)
		return cfail(c, "second duty list for one window");
	if (!get_uv(c, &w->ref_all, "reference calls") || !get_uv(c, &w->ref_on, "window calls"))
		return false;
	if (w->ref_on > w->ref_all) {
		w->ref_all = w->ref_on = 0;
		return cfail(c, "more window calls than calls");
	}
	if (!get_count(c, &n, 2, "duty entries"))
		return false;
	if (n > t->nsyms)
		return cfail(c, "%zu duty entries for %zu symbols", n, t->nsyms);
	if (!n)
		return true;
	w->duty = at_xcalloc(n, sizeof(*w->duty));
	for (size_t i = 0; i < n; i++) {
		struct at_duty_on *d = &w->duty[i];

		if (!get_uv(c, &gap, "symbol gap") || !get_uv(c, &d->on_ns, "probed time"))
			goto bad;
		id = i ? id + 1 + gap : gap;
		if (gap >= t->nsyms || id >= t->nsyms) {
			cfail(c, "duty symbol out of range (%zu symbols)", t->nsyms);
			goto bad;
		}
		if (d->on_ns > w->end_ns - w->start_ns) {
			cfail(c, "symbol %llu probed longer than its interval",
			      (unsigned long long)id);
			goto bad;
		}
		d->id = (uint32_t)id;
	}
	w->nduty = (uint32_t)n;
	return true;
bad:
	free(w->duty);
	w->duty = NULL;
	w->ref_all = w->ref_on = 0;
	return false;
}

/* Per class: the interval's reads (or writes) and those in its windows. */
static bool get_class_pairs(struct cur *c, uint64_t *all, uint64_t *on, const char *what)
{
	char a[32], o[32];

	snprintf(a, sizeof(a), "class %s", what);
	snprintf(o, sizeof(o), "class window %s", what);
	for (int i = 0; i < AT_READ_CLASSES; i++) {
		if (!get_uv(c, &all[i], a) || !get_uv(c, &on[i], o))
			return false;
		if (on[i] > all[i])
			return cfail(c, "more window %s than %s in class %d", what, what, i);
	}
	return true;
}

/* Class entries, ascending by duty index, then class (at most max_cls). */
static bool get_cls_calls(struct cur *c, struct at_cls_calls **out, uint32_t *nout,
			  uint32_t max_cls, uint32_t nduty)
{
	struct at_cls_calls *v;
	uint64_t k, cls, calls;
	size_t n;

	if (!get_count(c, &n, 3, "class entries"))
		return false;
	if (n > (size_t)nduty * (max_cls + 1))
		return cfail(c, "%zu class entries for %u duty functions", n, nduty);
	v = n ? at_xcalloc(n, sizeof(*v)) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (!get_uv(c, &k, "duty index") || !get_uv(c, &cls, "read class") ||
		    !get_uv(c, &calls, "class calls"))
			goto bad;
		if (k >= nduty || cls > max_cls ||
		    (i && (k < v[i - 1].k || (k == v[i - 1].k && cls <= v[i - 1].cls)))) {
			cfail(c, "read class entry out of order or range");
			goto bad;
		}
		v[i] = (struct at_cls_calls){(uint32_t)k, (uint32_t)cls, calls};
	}
	*out = v;
	*nout = (uint32_t)n;
	return true;
bad:
	free(v);
	return false;
}

/* Writes per read class of the interval that READS just described. */
static bool dec_writes(struct parse *ps, struct cur *c)
{
	struct at_window *w;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_cls || !w->has_writes)
		return cfail(c, "no reads record with writes for this interval");
	if (w->has_wr_cls)
		return cfail(c, "second writes record for one window");
	if (!get_class_pairs(c, w->wr_cls_all, w->wr_cls_on, "writes") ||
	    !get_cls_calls(c, &w->wr_cls, &w->nwr_cls, AT_READ_CLASSES - 1, w->nduty))
		goto bad;
	w->has_wr_cls = true;
	return true;
bad:
	memset(w->wr_cls_all, 0, sizeof(w->wr_cls_all));
	memset(w->wr_cls_on, 0, sizeof(w->wr_cls_on));
	return false;
}

/*
 * A list of window calls per innermost caller, as put_callers() wrote it,
 * or by_class per caller and read class, as put_cls_callers() did (its
 * order cls_callers_fit() checks).
 */
static bool get_callers(struct at_trace *t, struct cur *c, const struct at_window *w, bool by_class,
			struct at_caller_calls **out, uint32_t *nout)
{
	uint64_t k, caller, cls = 0, calls, prev = 0;
	struct at_caller_calls *v;
	size_t n;

	if (!get_count(c, &n, by_class ? 4 : 3, "caller entries"))
		return false;
	v = n ? at_xcalloc(n, sizeof(*v)) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (!get_uv(c, &k, "duty index") || !get_uv(c, &caller, "caller") ||
		    (by_class && !get_uv(c, &cls, "class")) || !get_uv(c, &calls, "caller calls"))
			goto bad;
		if (k >= w->nduty || caller > t->nsyms ||
		    (by_class && (!cls || cls > AT_READ_CLASSES)) ||
		    (!by_class && i && (k < v[i - 1].k || (k == v[i - 1].k && caller <= prev)))) {
			cfail(c, "caller entry out of order or range");
			goto bad;
		}
		v[i] = (struct at_caller_calls){(uint32_t)k,
						caller ? (uint32_t)(caller - 1) : AT_NO_CALLER,
						calls, (uint32_t)cls};
		prev = caller;
	}
	*out = v;
	*nout = (uint32_t)n;
	return true;
bad:
	free(v);
	return false;
}

/* Window calls per innermost caller of the interval that DUTY just listed. */
static bool dec_callers(struct parse *ps, struct cur *c)
{
	struct at_window *w;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->nduty)
		return cfail(c, "no duty list for this interval");
	if (w->has_callers)
		return cfail(c, "second callers record for one window");
	if (!get_callers(ps->t, c, w, false, &w->callers, &w->ncallers))
		return false;
	w->has_callers = true;
	return true;
}

/* Window calls per innermost caller and read class of the interval that CALLERS just listed. */
static bool dec_cls_callers(struct parse *ps, struct cur *c)
{
	struct at_window *w;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_callers)
		return cfail(c, "no callers record for this interval");
	if (w->has_cls_callers)
		return cfail(c, "second callers-by-class record for one window");
	if (!get_callers(ps->t, c, w, true, &w->cls_callers, &w->ncls_callers))
		return false;
	if (!get_callers(ps->t, c, w, true, &w->rp_cls_callers, &w->nrp_cls_callers))
		goto bad;
	if (!window_cls_callers_fit(w)) {
		cfail(c, "caller entries by class out of order or above their callers'");
		goto bad;
	}
	w->has_cls_callers = true;
	return true;
bad:
	/* A window read before the failure stays whole: without its classes. */
	free(w->cls_callers);
	free(w->rp_cls_callers);
	w->cls_callers = w->rp_cls_callers = NULL;
	w->ncls_callers = w->nrp_cls_callers = 0;
	return false;
}

/* The read path of the interval that TURNS just described. */
static bool dec_rpath(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t turns, writes;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_turns)
		return cfail(c, "no turns record for this interval");
	if (w->has_rpath)
		return cfail(c, "second read-path record for one window");
	if (!get_uv(c, &turns, "read-path turns") || !get_uv(c, &writes, "read-path writes"))
		return false;
	if (!rpath_fits(w, turns, writes))
		return cfail(c, "more read-path turns or writes than turns or writes");
	if (!get_callers(ps->t, c, w, false, &w->rp_callers, &w->nrp_callers))
		return false;
	w->rp_turns = turns;
	w->rp_writes = writes;
	w->has_rpath = true;
	return true;
}

/* How the yardsticks counted the interval that READS just described. */
static bool dec_yard(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t in_ns, counted, imputed;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_cls)
		return cfail(c, "no reads record for this interval");
	if (w->has_yard)
		return cfail(c, "second yardsticks record for one window");
	if (!get_uv(c, &in_ns, "yardstick time") || !get_uv(c, &counted, "counted calls") ||
	    !get_uv(c, &imputed, "imputed calls"))
		return false;
	if (!yard_fits(w, in_ns, counted, imputed))
		return cfail(c, "more yardstick reads and writes than reads and writes");
	w->yard_in_ns = in_ns;
	w->yard_counted = counted;
	w->yard_imputed = imputed;
	w->has_yard = true;
	return true;
}

/* The turns of the interval that READS just described, with its writes. */
static bool dec_turns(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t all, on, wall, won;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_cls || !w->has_writes)
		return cfail(c, "no reads record with writes for this interval");
	if (w->has_turns)
		return cfail(c, "second turns record for one window");
	if (!get_uv(c, &all, "turns") || !get_uv(c, &on, "window turns") ||
	    !get_uv(c, &wall, "wakeups") || !get_uv(c, &won, "window wakeups"))
		return false;
	if (on > all || won > wall)
		return cfail(c, "more window turns than turns");
	w->turn_all = all;
	w->turn_on = on;
	w->wake_all = wall;
	w->wake_on = won;
	w->has_turns = true;
	return true;
}

/* The turn windows of the interval that TURNS just described. */
static bool dec_turnwin(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t n, gap, k = 0;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_turns || !w->has_wr_cls)
		return cfail(c, "no turns record for this interval");
	if (w->has_turnwin)
		return cfail(c, "second turn windows record for one window");
	if (!get_uv(c, &n, "turn window functions"))
		return false;
	if (n > w->nduty)
		return cfail(c, "more turn window functions than duty functions");
	w->turnwin = at_xcalloc(n + 1, sizeof(*w->turnwin));
	for (uint64_t i = 0; i < n; i++) {
		if (!get_uv(c, &gap, "turn window function"))
			return false;
		k = i ? k + gap + 1 : gap;
		if (gap >= w->nduty || k >= w->nduty)
			return cfail(c, "turn window function out of range");
		w->turnwin[w->nturnwin++] = (uint32_t)k;
	}
	for (int j = 0; j < AT_READ_CLASSES; j++)
		if (!get_uv(c, &w->tw_cls_on[j], "turn window reads") ||
		    !get_uv(c, &w->tw_wr_cls_on[j], "turn window writes"))
			return false;
	if (!get_uv(c, &w->tw_wr_on, "turn window writes") ||
	    !get_uv(c, &w->tw_turn_on, "turn window turns") ||
	    !get_uv(c, &w->tw_wake_on, "turn window wakeups"))
		return false;
	if (!turnwin_fits(w))
		return cfail(c, "more turn window counts than counts");
	w->has_turnwin = true;
	return true;
}

/* The calls in the turn windows of the interval that TURNWIN just described. */
static bool dec_twcalls(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t n;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->has_turnwin)
		return cfail(c, "no turn windows record for this interval");
	if (w->has_twcalls)
		return cfail(c, "second turn window calls record for one window");
	if (!get_uv(c, &n, "turn window functions"))
		return false;
	if (n != w->nturnwin)
		return cfail(c, "turn window calls for %" PRIu64 " functions, not %u", n,
			     w->nturnwin);
	w->tw_calls = at_xcalloc(n + 1, sizeof(*w->tw_calls));
	for (uint64_t i = 0; i < n; i++)
		if (!get_uv(c, &w->tw_calls[i], "turn window calls"))
			return false;
	if (!twcalls_fit(w))
		return cfail(c, "more turn window calls than window calls");
	w->has_twcalls = true;
	return true;
}

/* The reads per size class of the window just read, after its duty list. */
static bool dec_reads(struct parse *ps, struct cur *c)
{
	struct at_window *w;
	uint64_t all = 0, on = 0, has;

	if (!interval_window(ps, c, &w))
		return false;
	if (!w || !w->nduty)
		return cfail(c, "no duty list for this interval");
	if (w->has_cls)
		return cfail(c, "second reads record for one window");
	if (!get_class_pairs(c, w->cls_all, w->cls_on, "reads"))
		goto bad;
	for (int i = 0; i < AT_READ_CLASSES; i++) {
		all += w->cls_all[i];
		on += w->cls_on[i];
	}
	if (all != w->ref_all || on != w->ref_on) {
		cfail(c, "class reads do not add up to the interval's");
		goto bad;
	}
	if (!get_uv(c, &has, "writes flag"))
		goto bad;
	if (has > 1) {
		cfail(c, "bad writes flag %llu", (unsigned long long)has);
		goto bad;
	}
	if (has && (!get_uv(c, &w->wr_all, "writes") || !get_uv(c, &w->wr_on, "window writes")))
		goto bad;
	if (w->wr_on > w->wr_all) {
		cfail(c, "more window writes than writes");
		goto bad;
	}
	w->has_writes = has;
	if (!get_cls_calls(c, &w->cls, &w->ncls, AT_BY_TIME, w->nduty))
		goto bad;
	w->has_cls = true;
	return true;
bad:
	free(w->cls);
	w->cls = NULL;
	w->ncls = 0;
	memset(w->cls_all, 0, sizeof(w->cls_all));
	memset(w->cls_on, 0, sizeof(w->cls_on));
	w->has_writes = false;
	w->wr_all = w->wr_on = 0;
	return false;
}

static bool dec_usdt_keys(struct cur *c, struct at_symbol *s)
{
	uint64_t has;

	if (!get_u32(c, &s->nkeys, AT_MAX_ARGS, "key count"))
		return false;
	s->keys = s->nkeys ? at_xcalloc(s->nkeys, sizeof(*s->keys)) : NULL;
	for (uint32_t k = 0; k < s->nkeys; k++) {
		struct at_arg *a = &s->keys[k];
		uint32_t trunc = 0;

		if (!get_u32(c, &a->type, AT_ARG_STR, "key type") ||
		    !get_u32(c, &trunc, 1, "key truncation") || !get_uv(c, &a->v, "key value") ||
		    !get_uv(c, &has, "key string flag"))
			return false;
		a->truncated = trunc;
		if (has > 1)
			return cfail(c, "bad key string flag %lu", (unsigned long)has);
		if (has && !get_str(c, &a->str, MAX_STR, "key string"))
			return false;
	}
	return true;
}

static bool dec_usdt(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	size_t n;

	if (!get_count(c, &n, 6, "USDT rows"))
		return false;
	for (size_t i = 0; i < n; i++) {
		struct at_symbol *s;
		uint32_t id = 0, kind = 0;

		if (!get_u32(c, &id, UINT32_MAX, "USDT row id") ||
		    !get_u32(c, &kind, AT_SYM_USDT_KEY, "USDT row kind"))
			return false;
		if (id >= t->nsyms)
			return cfail(c, "USDT row %u out of range (%zu symbols)", id, t->nsyms);
		s = &t->syms[id];
		if (s->kind != AT_SYM_FUNC || kind == AT_SYM_FUNC)
			return cfail(c, "USDT row %u described twice or as a function", id);
		s->kind = kind;
		if (!get_str(c, &s->provider, MAX_STR, "USDT provider") ||
		    !get_str(c, &s->probe, MAX_STR, "USDT probe") || !dec_usdt_keys(c, s))
			return false;
	}
	return true;
}

static bool dec_end(struct parse *ps, struct cur *c)
{
	struct at_end e = {0};
	uint64_t v;
	size_t nd;

	if (!get_uv(c, &e.duration_ns, "duration") || !get_uv(c, &v, "exit status"))
		return false;
	/* zigzag; the value must fit an int32 */
	if (v > UINT32_MAX)
		return cfail(c, "exit status out of range");
	e.exit_status = (int32_t)((v & 1) ? -(int64_t)(v >> 1) - 1 : (int64_t)(v >> 1));
	if (!get_uv(c, &e.dropped_events, "dropped events") ||
	    !get_count(c, &nd, 1, "diagnostic counters"))
		return false;
	if (nd > MAX_DIAG)
		return cfail(c, "%zu diagnostic counters (max %d)", nd, MAX_DIAG);
	/* Counters a newer writer added are read and ignored. */
	for (size_t i = 0; i < nd; i++) {
		if (!get_uv(c, &v, "diagnostic counter"))
			return false;
		if (i < AT_DIAG_NR)
			e.diag[i] = v;
	}
	if (!get_str(c, &e.reason, MAX_STR, "stop reason"))
		return false;
	ps->t->end = e;
	ps->t->has_end = true;
	return true;
}

static void free_event(struct at_event *e)
{
	for (uint32_t a = 0; a < e->nargs; a++)
		free(e->args[a].str);
}

static bool dec_event(struct parse *ps, struct cur *c, struct at_event *e)
{
	uint64_t v;

	if (!get_u32(c, &e->id, UINT32_MAX, "symbol id"))
		return false;
	if (e->id >= ps->t->nsyms)
		return cfail(c, "event for symbol id %u out of range (%zu symbols)", e->id,
			     ps->t->nsyms);
	if (!get_uv(c, &e->ts_ns, "event time") || !get_u32(c, &e->pid, UINT32_MAX, "pid") ||
	    !get_u32(c, &e->tid, UINT32_MAX, "tid") || !get_u32(c, &e->cpu, UINT32_MAX, "cpu") ||
	    !get_uv(c, &e->duration_ns, "duration") || !get_uv(c, &v, "return value"))
		return false;
	e->ret = (int64_t)((v >> 1) ^ -(v & 1));
	if (!get_u32(c, &e->nargs, AT_MAX_ARGS, "argument count"))
		return false;
	for (uint32_t a = 0; a < e->nargs; a++) {
		struct at_arg *g = &e->args[a];
		uint32_t flags = 0;

		if (!get_u32(c, &g->type, AT_ARG_STR, "argument type") ||
		    !get_uv(c, &g->v, "argument value"))
			return false;
		if (g->type != AT_ARG_STR)
			continue;
		if (!get_u32(c, &flags, 3, "string flags") ||
		    !get_str(c, &g->str, MAX_STR, "string argument"))
			return false;
		g->truncated = flags & 1;
		if (flags & 2) {
			free(g->str);
			g->str = NULL;
		}
	}
	return true;
}

static bool dec_events(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	size_t n;

	if (!get_count(c, &n, MIN_EVENT, "events"))
		return false;
	for (size_t i = 0; i < n; i++) {
		struct at_event e = {0};

		if (!dec_event(ps, c, &e)) {
			free_event(&e);
			return false;
		}
		if (t->nevents == ps->ecap) {
			ps->ecap = ps->ecap ? ps->ecap * 2 : 256;
			t->events = at_xrealloc(t->events, ps->ecap, sizeof(*t->events));
		}
		t->events[t->nevents++] = e;
	}
	return true;
}

static bool dec_select(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	size_t n;

	if (!get_count(c, &n, MIN_SEL, "selection changes"))
		return false;
	for (size_t i = 0; i < n; i++) {
		struct at_sel_change s = {0};

		if (!get_uv(c, &s.ts_ns, "change time") ||
		    !get_u32(c, &s.id, UINT32_MAX, "symbol id") ||
		    !get_u32(c, &s.what, AT_SEL_RATE, "change kind") ||
		    !get_f64(c, &s.rate, "rate"))
			return false;
		if (s.id >= t->nsyms || s.what < AT_SEL_ENTER || !rate_ok(s.rate))
			return cfail(c, "bad selection change for symbol id %u", s.id);
		if (!get_str(c, &s.reason, MAX_STR, "reason"))
			return false;
		if (t->nsel == ps->scap) {
			ps->scap = ps->scap ? ps->scap * 2 : 64;
			t->sel = at_xrealloc(t->sel, ps->scap, sizeof(*t->sel));
		}
		t->sel[t->nsel++] = s;
	}
	return true;
}

static void free_dstats(struct at_trace *t)
{
	for (size_t i = 0; i < t->ndstats; i++)
		free(t->dstats[i].dropped_cpu);
	free(t->dstats);
	t->dstats = NULL;
	t->ndstats = 0;
}

static bool dec_dstats(struct parse *ps, struct cur *c)
{
	struct at_trace *t = ps->t;
	struct at_detail_stats *d = NULL;
	size_t n, i;
	bool ok = true;

	if (!get_count(c, &n, MIN_DST, "detail stats"))
		return false;
	if (n)
		d = at_xcalloc(n, sizeof(*d));
	for (i = 0; i < n && ok; i++) {
		ok = get_u32(c, &d[i].id, UINT32_MAX, "symbol id") &&
		     get_uv(c, &d[i].events, "events") && get_uv(c, &d[i].dropped, "dropped") &&
		     get_f64(c, &d[i].rate, "rate") && get_uv(c, &d[i].sampled, "sampled") &&
		     get_u32(c, &d[i].ncpus, MAX_CPUS, "cpu count");
		if (ok && (d[i].id >= t->nsyms || !rate_ok(d[i].rate)))
			ok = cfail(c, "bad detail stats for symbol id %u", d[i].id);
		if (ok && d[i].ncpus > cleft(c))
			ok = cfail(c, "%u cpus cannot fit", d[i].ncpus);
		if (ok && d[i].ncpus)
			d[i].dropped_cpu = at_xcalloc(d[i].ncpus, sizeof(uint64_t));
		for (uint32_t k = 0; ok && k < d[i].ncpus; k++)
			ok = get_uv(c, &d[i].dropped_cpu[k], "dropped per cpu");
	}
	if (!ok) {
		for (size_t j = 0; j < n; j++)
			free(d[j].dropped_cpu);
		free(d);
		return false;
	}
	free_dstats(t);
	t->dstats = d;
	t->ndstats = n;
	return true;
}

static bool known_chunk(uint32_t type)
{
	return (type >= AT_CHUNK_HEADER && type <= AT_CHUNK_USDT) ||
	       (type >= AT_CHUNK_EVENTS && type <= AT_CHUNK_DSTATS) ||
	       (type >= AT_CHUNK_DUTY && type <= AT_CHUNK_CALLCLS);
}

/* Inflate exactly raw bytes out of comp bytes, no more, no less. */
static unsigned char *inflate_exact(const unsigned char *src, size_t slen, size_t raw, char *why,
				    size_t whylen)
{
	unsigned char *dst = at_xcalloc(raw + 1, 1);
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		snprintf(why, whylen, "zlib cannot start");
		free(dst);
		return NULL;
	}
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)slen;
	zs.next_out = dst;
	zs.avail_out = (uInt)raw + 1; /* one spare byte reveals overlong data */
	rc = inflate(&zs, Z_FINISH);
	if (rc == Z_STREAM_END && zs.total_out == raw && zs.avail_in == 0) {
		inflateEnd(&zs);
		return dst;
	}
	if (rc == Z_STREAM_END && zs.total_out != raw)
		snprintf(why, whylen, "payload inflates to %lu bytes instead of %zu", zs.total_out,
			 raw);
	else if (rc == Z_STREAM_END)
		snprintf(why, whylen, "%u stray bytes after the compressed payload", zs.avail_in);
	else if (zs.total_out > raw)
		snprintf(why, whylen, "payload inflates to more than %zu bytes", raw);
	else
		snprintf(why, whylen, "bad compressed payload (zlib: %s)",
			 zs.msg ? zs.msg : "data ends early");
	inflateEnd(&zs);
	free(dst);
	return NULL;
}

static void recovered(const struct parse *ps, char *buf, size_t len)
{
	const struct at_trace *t = ps->t;

	if (!ps->have_header)
		snprintf(buf, len, "recovered nothing");
	else
		snprintf(buf, len, "recovered header, %zu symbol%s and %zu complete interval%s",
			 t->nsyms, t->nsyms == 1 ? "" : "s", t->nwins, t->nwins == 1 ? "" : "s");
}

/* Report damage at off; salvage keeps what came before if the header did. */
static int damaged(struct parse *ps, bool truncated, size_t off, const char *what, bool salvage,
		   char *err, size_t errlen)
{
	bool keep = salvage && ps->have_header;
	char rec[128];

	recovered(ps, rec, sizeof(rec));
	if (truncated)
		snprintf(err, errlen, "trace file truncated at byte %zu (%s); %s%s", off, what, rec,
			 !salvage && ps->have_header ? " (use --salvage to report them)" : "");
	else
		snprintf(err, errlen, "trace file corrupt at byte %zu: %s; %s%s", off, what, rec,
			 !salvage && ps->have_header ? " (use --salvage to report them)" : "");
	free(ps->stamp);
	ps->stamp = NULL;
	if (keep)
		return 1;
	at_trace_free(ps->t);
	return -1;
}

static int parse_preamble(const unsigned char *d, size_t len, char *err, size_t errlen)
{
	uint16_t major;

	if (len == 0) {
		snprintf(err, errlen, "trace file is empty; recovered nothing");
		return -1;
	}
	if (memcmp(d, AT_TRACE_MAGIC, len < 8 ? len : 8)) {
		snprintf(err, errlen, "not an adaptrace trace file (bad magic)");
		return -1;
	}
	if (len < FILE_HDR_LEN) {
		snprintf(err, errlen,
			 "trace file truncated at byte %zu (inside the file header); recovered "
			 "nothing",
			 len);
		return -1;
	}
	if (get_le32(d + 12) != (uint32_t)crc32(0, d, 12)) {
		snprintf(
		    err, errlen,
		    "trace file corrupt at byte 8: file header CRC mismatch; recovered nothing");
		return -1;
	}
	major = get_le16(d + 8);
	if (major > AT_TRACE_VERSION) {
		snprintf(err, errlen,
			 "trace file format %u.%u was written by a newer adaptrace (this one reads "
			 "format %d); upgrade adaptrace to read it",
			 major, get_le16(d + 10), AT_TRACE_VERSION);
		return -1;
	}
	if (major != AT_TRACE_VERSION) {
		snprintf(err, errlen, "trace file corrupt at byte 8: unknown format version %u",
			 major);
		return -1;
	}
	return 0;
}

int at_trace_parse(const void *data, size_t len, struct at_trace *t, bool salvage, char *err,
		   size_t errlen)
{
	const unsigned char *d = data;
	struct parse ps = {.t = t};
	char why[256], name[32];
	size_t off = FILE_HDR_LEN;
	char dummy[1];

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	memset(t, 0, sizeof(*t));
	if (errlen)
		err[0] = 0;
	if (parse_preamble(d, len, err, errlen) < 0)
		return -1;
	while (off < len) {
		size_t left = len - off;
		uint32_t type, raw, comp;
		const char *tn;
		unsigned char *payload;
		struct cur c;
		bool ok;

		if (t->has_end) {
			snprintf(why, sizeof(why), "%zu bytes of data after the end chunk", left);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		if (left < CHUNK_HDR_LEN)
			return damaged(&ps, true, len, "inside a chunk header", salvage, err,
				       errlen);
		type = get_le32(d + off);
		raw = get_le32(d + off + 4);
		comp = get_le32(d + off + 8);
		tn = chunk_name(type, name, sizeof(name));
		if (raw > MAX_RAW) {
			snprintf(why, sizeof(why), "%s chunk claims %u bytes (limit %u MiB)", tn,
				 raw, MAX_RAW >> 20);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		if (comp > left - CHUNK_HDR_LEN) {
			snprintf(why, sizeof(why), "inside a %s chunk of %llu bytes", tn,
				 (unsigned long long)comp + CHUNK_HDR_LEN);
			return damaged(&ps, true, len, why, salvage, err, errlen);
		}
		if (get_le32(d + off + 12) !=
		    (uint32_t)crc32(crc32(0, d + off, 12), d + off + CHUNK_HDR_LEN, comp)) {
			snprintf(why, sizeof(why), "CRC mismatch in %s chunk", tn);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		if (!known_chunk(type)) {
			t->nunknown++;
			off += CHUNK_HDR_LEN + comp;
			continue;
		}
		if (!ps.have_header && type != AT_CHUNK_HEADER) {
			snprintf(why, sizeof(why), "%s chunk before the header chunk", tn);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		if (ps.have_header && type == AT_CHUNK_HEADER)
			return damaged(&ps, false, off, "second header chunk", salvage, err,
				       errlen);
		if ((uint64_t)raw > (uint64_t)comp * MAX_RATIO + 64) {
			snprintf(why, sizeof(why), "%s chunk: %u compressed bytes cannot hold %u",
				 tn, comp, raw);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		payload = inflate_exact(d + off + CHUNK_HDR_LEN, comp, raw, why, sizeof(why));
		if (!payload) {
			size_t n = strlen(why);

			snprintf(why + n, sizeof(why) - n, " in %s chunk", tn);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		c = (struct cur){
		    .p = payload, .end = payload + raw, .why = why, .whylen = sizeof(why)};
		switch (type) {
		case AT_CHUNK_HEADER:
			ok = dec_header(&ps, &c);
			break;
		case AT_CHUNK_SYMBOLS:
			ok = dec_symbols(&ps, &c);
			break;
		case AT_CHUNK_WINDOW:
			ok = dec_window(&ps, &c);
			break;
		case AT_CHUNK_EVENTS:
			ok = dec_events(&ps, &c);
			break;
		case AT_CHUNK_SELECT:
			ok = dec_select(&ps, &c);
			break;
		case AT_CHUNK_DSTATS:
			ok = dec_dstats(&ps, &c);
			break;
		case AT_CHUNK_USDT:
			ok = dec_usdt(&ps, &c);
			break;
		case AT_CHUNK_DUTY:
			ok = dec_duty(&ps, &c);
			break;
		case AT_CHUNK_READS:
			ok = dec_reads(&ps, &c);
			break;
		case AT_CHUNK_WRITES:
			ok = dec_writes(&ps, &c);
			break;
		case AT_CHUNK_CALLERS:
			ok = dec_callers(&ps, &c);
			break;
		case AT_CHUNK_CALLCLS:
			ok = dec_cls_callers(&ps, &c);
			break;
		case AT_CHUNK_TURNS:
			ok = dec_turns(&ps, &c);
			break;
		case AT_CHUNK_TURNWIN:
			ok = dec_turnwin(&ps, &c);
			break;
		case AT_CHUNK_TWCALLS:
			ok = dec_twcalls(&ps, &c);
			break;
		case AT_CHUNK_RPATH:
			ok = dec_rpath(&ps, &c);
			break;
		case AT_CHUNK_YARD:
			ok = dec_yard(&ps, &c);
			break;
		default:
			ok = dec_end(&ps, &c);
			break;
		}
		if (ok && c.p != c.end)
			ok = cfail(&c, "%zu stray bytes at the end", cleft(&c));
		free(payload);
		if (!ok) {
			size_t n = strlen(why);

			/* A bad end chunk must not leave has_end half set. */
			if (type == AT_CHUNK_END && t->has_end) {
				free(t->end.reason);
				memset(&t->end, 0, sizeof(t->end));
				t->has_end = false;
			}
			snprintf(why + n, sizeof(why) - n, " in %s chunk", tn);
			return damaged(&ps, false, off, why, salvage, err, errlen);
		}
		if (type == AT_CHUNK_HEADER)
			ps.have_header = true;
		off += CHUNK_HDR_LEN + comp;
	}
	if (!ps.have_header)
		return damaged(&ps, true, len, "no header chunk", salvage, err, errlen);
	free(ps.stamp);
	return 0;
}

int at_trace_read(const char *path, struct at_trace *t, bool salvage, char *err, size_t errlen)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	char msg[AT_ERRLEN];
	struct stat st;
	int fd, rc;

	memset(t, 0, sizeof(*t));
	if (!err)
		errlen = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open trace file: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory, not a trace file", path);
		close(fd);
		return -1;
	}
	/* Read to EOF rather than trust st_size: a recorder may still be appending. */
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			cap =
			    cap ? cap * 2 : (S_ISREG(st.st_mode) ? (size_t)st.st_size : 0) + 65536;
			buf = at_xrealloc(buf, cap, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: cannot read trace file: %s", path,
				 strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = at_trace_parse(buf, len, t, salvage, msg, sizeof(msg));
	free(buf);
	if (rc)
		snprintf(err, errlen, "%s: %s", path, msg);
	return rc;
}

/* A row's USDT fields (provider, probe, keys). */
static void free_symbol_usdt(struct at_symbol *s)
{
	for (uint32_t k = 0; k < s->nkeys; k++)
		free(s->keys[k].str);
	free(s->keys);
	free(s->provider);
	free(s->probe);
}

void at_trace_free(struct at_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nkv; i++) {
		free(t->kv[i].key);
		free(t->kv[i].value);
	}
	free(t->kv);
	for (size_t i = 0; i < t->nbins; i++)
		free(t->bins[i].path);
	free(t->bins);
	for (size_t i = 0; i < t->nsyms; i++) {
		free_symbol_usdt(&t->syms[i]);
		free(t->syms[i].name);
	}
	free(t->syms);
	for (size_t i = 0; i < t->nwins; i++)
		free_window(&t->wins[i]);
	free(t->wins);
	for (size_t i = 0; i < t->nevents; i++)
		free_event(&t->events[i]);
	free(t->events);
	for (size_t i = 0; i < t->nsel; i++)
		free(t->sel[i].reason);
	free(t->sel);
	free_dstats(t);
	free(t->end.reason);
	memset(t, 0, sizeof(*t));
}

const char *at_trace_get(const struct at_trace *t, const char *key)
{
	for (size_t i = 0; i < t->nkv; i++)
		if (!strcmp(t->kv[i].key, key))
			return t->kv[i].value;
	return NULL;
}
