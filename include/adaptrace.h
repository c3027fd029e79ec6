/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Structures shared by the BPF programs and the loader. */
#ifndef ADAPTRACE_H
#define ADAPTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Per-thread shadow stack depth; deeper calls are counted but not timed. */
#define AT_MAX_DEPTH 64

/*
 * Latency histogram: values below 16 ns get a bucket each; above, every
 * power of two is split into 8 linear sub-buckets (12.5 % relative width).
 * The last bucket (2^45 ns, about 9.8 hours) absorbs everything larger.
 */
#define AT_HIST_SUB_BITS 3
#define AT_HIST_SUB	 (1 << AT_HIST_SUB_BITS)
#define AT_HIST_MAX_POW	 45
#define AT_HIST_BUCKETS	 ((AT_HIST_MAX_POW - AT_HIST_SUB_BITS + 1) * AT_HIST_SUB)

/* Attach cookie layout: low 32 bits function id, flags above. */
#define AT_COOKIE_ID_MASK 0xffffffffULL
/* Count only processes whose executable is the -b target (libraries under -b). */
#define AT_COOKIE_EXE_FILTER (1ULL << 32)
/*
 * Coarse link generation (bits 40-47): when the coarse budget moves
 * functions to new links, only the links of the current generation count,
 * so a call is never counted by both the old and the new link.
 */
#define AT_COOKIE_GEN_SHIFT 40
#define AT_COOKIE_GEN_MASK  0xffULL
/* A probing window's link: counts only while the loader says the window is open. */
#define AT_COOKIE_WINDOW (1ULL << 35)
/*
 * A window probe at a call site of the function (user/callsites.h): it
 * counts the call, entered at sp - 8, and has no return. TAILSITE: a jump
 * there, entered at sp.
 */
#define AT_COOKIE_CALLSITE (1ULL << 36)
#define AT_COOKIE_TAILSITE (1ULL << 37)
/* Where a probing window is (the loader says), for the entries it pays for and does not count. */
enum at_window_phase {
	AT_WPHASE_NONE,	     /* no window links */
	AT_WPHASE_ARMING,    /* its links go in */
	AT_WPHASE_OPEN,	     /* open, but the call is not the window's */
	AT_WPHASE_LINGERING, /* closed, links in until the target reads */
	AT_WPHASE_RELEASING, /* its links come out */
	AT_WINDOW_PHASES,
};

/* Why a window call went into no callers pair (window_uncalled[]). */
enum at_uncalled {
	AT_UNCALLED_QUIESCED, /* returns quiesced: no frames pushed */
	AT_UNCALLED_NO_STACK, /* the thread has no frames storage */
	AT_UNCALLED_DEEP,     /* deeper than AT_MAX_DEPTH */
	AT_UNCALLED_FULL,     /* wcallers full */
	AT_UNCALLED_NR,
};

/*
 * USDT probes (bpf/usdt.bpf.c). Counted probes use the cookie's id as the
 * row. Keyed probes: the id is a spec index, and each distinct key (the
 * values of up to AT_UKEY_ARGS arguments, strings read up to AT_UKEY_STR
 * bytes) gets a slot, whose row is key_base + slot.
 */
#define AT_COOKIE_USDT_KEYED (1ULL << 33) /* id is a spec index */
#define AT_COOKIE_USDT_RET   (1ULL << 34) /* the return probe of a pair */
#define AT_UKEY_ARGS	     4
#define AT_UKEY_STR	     64
#define AT_UKEY_SLOTS	     1024
#define AT_UKEY_SPECS	     32

/* Key argument types, as enum at_usdt_key_type (user/usdt.h). */
#define AT_UKEY_T_STR 4

struct at_ukey_spec {
	__u32 nkeys;
	__u32 paired;		 /* entry/return pair: time each keyed call */
	__u8 arg[AT_UKEY_ARGS];	 /* 0-based argument index */
	__u8 type[AT_UKEY_ARGS]; /* enum at_usdt_key_type */
};

/* Hash map key of one keyed row. */
struct at_ukey {
	__u32 spec;
	__u32 pad;
	__u64 hash;
};

/* What user space learns about a slot: set before the slot is counted. */
enum at_ukey_state {
	AT_UKEY_EMPTY = 0,
	AT_UKEY_VALID = 1,
	AT_UKEY_DUP = 2, /* lost a race for the same key: never counted */
};

struct at_ukey_info {
	__u32 state;
	__u32 spec;
	__u32 truncated;  /* bit i: string key i was longer than AT_UKEY_STR - 1 */
	__u32 unreadable; /* bit i: string key i could not be read */
	__u64 v[AT_UKEY_ARGS];
	char s[AT_UKEY_ARGS][AT_UKEY_STR];
};

/* Coarse per-function counters, one copy per CPU. */
struct at_fstats {
	__u64 calls;	/* entries seen */
	__u64 returns;	/* entries matched with their return and timed */
	__u64 sum_ns;	/* sum of per-call inclusive durations */
	__u64 total_ns; /* inclusive time, recursion counted once */
	__u64 self_ns;	/* exclusive time */
	__u64 min_ns;	/* 0 = none yet */
	__u64 max_ns;
	__u64 sumsq_lo; /* 128-bit sum of squared durations (ns^2) */
	__u64 sumsq_hi;
	__u64 errors; /* returns with a negative value */
};

/*
 * The coarse budget's yardstick: the target's socket reads that returned
 * data, per CPU and per class of their size. A server's request types
 * often differ in size (redis: a SET reads 45 bytes, a GET 36), so a
 * class stands for a kind of request, and the windows' calls are scaled
 * class by class: how many of each kind the windows caught stops mattering.
 */
#define AT_READ_CLASSES 16
/*
 * One more slot after the classes: in refcalls the target's socket writes
 * (by time: while a window is open), in wcalls a function's window calls
 * by time. A server's deferred work (replies written at the end of a turn
 * of its event loop) follows its writes, not its reads.
 */
#define AT_BY_TIME   AT_READ_CLASSES
#define AT_REF_SLOTS (AT_READ_CLASSES + 1)
/*
 * Then the same by time again, per class of the thread's latest read: in
 * refcalls the writes, in wcalls the window calls. redis-benchmark sends
 * all its SETs, then all its GETs: unclassed, a window that saw only GETs
 * would scale a stretch of SET replies by a GET's calls per write.
 */
#define AT_WR_CLASS(k) (AT_REF_SLOTS + (k))
#define AT_SLOTS       (AT_REF_SLOTS + AT_READ_CLASSES)
/*
 * refcalls' last slots: the target's turns of its event loop, counted at
 * both ends. AT_TURNS: a thread's first write after it read (replies begin:
 * redis's beforeSleep); AT_WAKES: its first read after it wrote (the loop
 * woke up: afterSleep). Work done once a turn follows one of them, not the
 * reads or writes: the probes make a turn longer, so the windows see more
 * requests per turn than the rest of the run (redis: 23-31 wakeups and 4-9
 * turn ends in a recording's windows, of some 230,000 each). Each came to
 * 99.9 % of redis's epoll_wait calls (sys_enter_epoll_wait, bpftrace).
 */
#define AT_TURNS AT_SLOTS
#define AT_WAKES (AT_SLOTS + 1)
/*
 * Then the read path's (on only): turns' ends and writes of a thread whose
 * latest read came in the open window, while its links are all in (open or
 * lingering). A window closes inside a turn, and its links linger to the
 * next read, so the tail of a turn whose last read it saw is seen whole:
 * by time, a 2 ms window saw redis's turns begin 3-5 times as often as it
 * saw their replies begin, and the work after them went 10-95 % low.
 */
#define AT_RP_TURNS  (AT_SLOTS + 2)
#define AT_RP_WRITES (AT_SLOTS + 3)
#define AT_REFCALLS  (AT_SLOTS + 4)
/*
 * wcalls' last slot: a turn-window function's calls in the turn windows
 * alone. The other windows open while the loop sleeps, so they see more
 * wakeups than turn ends: what a function saw there tells which of the two
 * it follows (redis: beforeSleep the ends, afterSleep the wakeups), where
 * the whole turns of the turn windows cannot.
 */
#define AT_TW_TIME     AT_SLOTS
#define AT_WCALL_SLOTS (AT_SLOTS + 1)

/*
 * wcallers' key: a window call of function id under its innermost traced
 * caller (AT_NO_CALLER: none on the thread's frames). A function called
 * per request and per reply (redis's clientHasPendingReplies, under
 * prepareClientToWrite and under writeToClient) splits by caller into
 * parts that each follow one yardstick.
 */
#define AT_NO_CALLER		  0xffffffffu
#define AT_CALLER_KEY(id, caller) ((__u64)(id) << 32 | (caller))
#define AT_CALLERS_MAX		  8192
/* The same pair's read-path calls (as AT_RP_TURNS): ids are below 2^31. */
#define AT_CALLER_RP (1ULL << 63)
/*
 * A key's class: that of the thread's latest read + 1 (0: it had not
 * read), in bits 58-62, so ids stay below 2^26 (AT_CALLER_IDS). A
 * caller's share of a function's calls then weighs each class as the
 * classes' own estimates do: a connection burst that made 58 % of a
 * window's zmalloc calls, counted whole against a writes share from the
 * requests' classes, put zmalloc 26-36 % high.
 */
#define AT_CALLER_CLS_SHIFT 58
#define AT_CALLER_CLS_MASK  0x1fULL
#define AT_CALLER_IDS	    (1u << 26)
#define AT_CALLER_CLS(read, cls)                                                                   \
	((__u64)((read) ? ((cls) & (AT_READ_CLASSES - 1)) + 1 : 0) << AT_CALLER_CLS_SHIFT)

/*
 * A socket read's class: 0 for end of file (a client hanging up), the last
 * for a TCP connection's first read that returned data (the BPF side tells),
 * the one before for a connection accepted (counted as a read: the new
 * client's setup follows it), else a multiplicative hash of its length onto
 * the other 13. A window
 * that caught 50 clients hanging up at once saw 51 freeClient calls
 * against a few requests' reads: by those, freeClient came out at 39,342
 * and readQueryFromClient 13 % high. A new client's first read takes other
 * paths too: redis grows an empty query buffer with
 * sdsMakeRoomForNonGreedy, not sdsMakeRoomFor, and a window that caught 6
 * new clients in its 7 reads sent sdsMakeRoomFor 12 % low.
 */
#define AT_CLASS_EOF	0
#define AT_CLASS_FIRST	(AT_READ_CLASSES - 1)
#define AT_CLASS_ACCEPT (AT_READ_CLASSES - 2)

static inline __u32 at_read_class(__u32 len)
{
	return len ? 1 + ((len * 2654435761u) >> 28) % (AT_READ_CLASSES - 3) : AT_CLASS_EOF;
}

struct at_reads {
	__u64 all;  /* reads of the class */
	__u64 on;   /* those while a probing window was open */
	__u64 turn; /* those while a turn window was open (window_turns) */
};

/* Calls in flight across all threads; shared, updated atomically. */
struct at_fconc {
	__s64 inflight;
	__s64 max;
};

/* Global diagnostic counters (per CPU): nothing is dropped silently. */
enum at_diag {
	AT_DIAG_STACK_OVERFLOW, /* entry deeper than AT_MAX_DEPTH: counted, not timed */
	AT_DIAG_UNMATCHED_RET,	/* return with no matching entry frame */
	AT_DIAG_ABANDONED,	/* frame left without a return (longjmp, exception, exit) */
	AT_DIAG_NO_STORAGE,	/* per-thread stack could not be allocated */
	AT_DIAG_NR,
};

static inline __u32 at_hist_bucket(__u64 v)
{
	__u32 msb = 0;
	__u64 x = v;

	if (v < 2 * AT_HIST_SUB)
		return (__u32)v;
	if (x >> 32) {
		msb += 32;
		x >>= 32;
	}
	if (x >> 16) {
		msb += 16;
		x >>= 16;
	}
	if (x >> 8) {
		msb += 8;
		x >>= 8;
	}
	if (x >> 4) {
		msb += 4;
		x >>= 4;
	}
	if (x >> 2) {
		msb += 2;
		x >>= 2;
	}
	if (x >> 1) {
		msb += 1;
	}
	if (msb >= AT_HIST_MAX_POW)
		return AT_HIST_BUCKETS - 1;
	return (msb - AT_HIST_SUB_BITS + 1) * AT_HIST_SUB +
	       (__u32)((v >> (msb - AT_HIST_SUB_BITS)) & (AT_HIST_SUB - 1));
}

/* Smallest value that falls in bucket b. */
static inline __u64 at_hist_lower(__u32 b)
{
	__u32 pow, sub;

	if (b < 2 * AT_HIST_SUB)
		return b;
	pow = b / AT_HIST_SUB + AT_HIST_SUB_BITS - 1;
	sub = b % AT_HIST_SUB;
	return (1ULL << pow) + ((__u64)sub << (pow - AT_HIST_SUB_BITS));
}

/*
 * Detail phase (bpf/detail.bpf.c): one ring-buffer event per sampled call.
 * Up to AT_DETAIL_NSTR arguments declared as strings are read at entry, at
 * most str_max - 1 bytes each (<= AT_DETAIL_STRLEN); a longer string is cut
 * and flagged. Events of functions without strings stop before str[].
 */
#define AT_DETAIL_NARGS	   6
#define AT_DETAIL_NSTR	   2
#define AT_DETAIL_STRLEN   256 /* the longest str:N of --args */
#define AT_DETAIL_DEPTH	   16  /* sampled calls in flight per thread; power of two */
#define AT_DETAIL_NO_STR   0xff
#define AT_DETAIL_RATE_ALL 0xffffffffU /* threshold: every call */

/* Per-function configuration, set by the loader. */
struct at_dconf {
	__u32 threshold; /* sampled if prandom < threshold; 0 = off, ALL = every call */
	__u8 str_arg[AT_DETAIL_NSTR];  /* argument index read as a string, or NO_STR */
	__u16 str_max[AT_DETAIL_NSTR]; /* bytes to read, NUL included */
};

/* Per-function, per-CPU detail counters: events + dropped + no_frame == sampled. */
struct at_dcount {
	__u64 sampled;	/* calls the Bernoulli draw picked */
	__u64 dropped;	/* picked, but the ring-buffer reservation failed */
	__u64 no_frame; /* picked, but AT_DETAIL_DEPTH calls were already in flight */
};

struct at_devent {
	__u64 ts_ns; /* entry, bpf_ktime_get_ns() */
	__u64 duration_ns;
	__u64 ret;
	__u64 args[AT_DETAIL_NARGS];
	__u32 pid, tid, cpu, id;
	__u8 str_arg[AT_DETAIL_NSTR]; /* as in at_dconf */
	__u8 truncated;		      /* bit i: string slot i was cut */
	__u8 unreadable;	      /* bit i: string slot i could not be read */
	__u8 pad[4];
	char str[AT_DETAIL_NSTR][AT_DETAIL_STRLEN];
};

#endif
