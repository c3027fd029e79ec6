// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Coarse phase: one entry and one return program serve every traced
 * function. The attach cookie carries the function id; counters are per
 * CPU and nothing leaves the kernel per call.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "adaptrace.h"
#include "counters.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct frame {
	__u64 ts;
	__u64 sp;	/* stack pointer at entry: the return address slot */
	__u64 child_ns; /* inclusive time of traced callees */
	__u32 id;
	__u16 outer; /* no other activation of id below on this thread */
	__u16 gen;   /* link generation that pushed it: its return pops it */
	__u32 seq;   /* window_seq of the window whose link pushed it, 0: an exact link */
};

/*
 * A thread's state: its frames, and its latest socket read for the coarse
 * budget's windows (duty_inputs): the request its calls serve.
 */
struct shadow_stack {
	__u32 depth;
	__u8 has_read;
	__u8 read_cls;	/* the read's size class */
	__u8 wrote;	/* it wrote since its latest read (AT_TURNS, AT_WAKES) */
	__u32 read_seq; /* window_seq of the window it came in, 0: none */
	__u32 gate_seq; /* window_seq of the turn window counting its turns, 0: none */
	__u32 tail_seq; /* window_seq of the read path whose turn's tail it is in, 0: none */
	__u64 owner;	/* in thread_slots: the thread id holding it, 0 when free */
	struct frame f[AT_MAX_DEPTH];
};

/*
 * A thread's state lives in the slot its thread id hashes to, or in task
 * storage when another thread holds that slot. A task storage lookup cost
 * ~45 ns at each end of a call here, an array lookup a few: a third of the
 * coarse programs' work, and half the yardstick's. The exit and exec
 * tracepoints free a slot, so a thread id used again never finds frames it
 * did not push.
 */
#define THREAD_SLOTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct shadow_stack);
} thread_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct shadow_stack);
} stacks SEC(".maps");

/* AT_MAX_DEPTH is a power of two: masking keeps the verifier sure of bounds. */
static __always_inline struct frame *frame_at(struct shadow_stack *s, __u32 i)
{
	return &s->f[i & (AT_MAX_DEPTH - 1)];
}

/* A frame dropped without its return: out of the concurrency count, counted abandoned. */
static __always_inline void abandon(const struct frame *f)
{
	if (f->outer)
		conc_leave(f->id);
	diag_inc(AT_DIAG_ABANDONED);
}

/* Drop frames that can no longer return: their stack slot is below sp. */
static __always_inline __u32 pop_dead(struct shadow_stack *s, __u32 depth, __u64 sp)
{
	if (depth > AT_MAX_DEPTH)
		depth = AT_MAX_DEPTH;
	for (int i = 0; i < AT_MAX_DEPTH && depth > 0; i++) {
		struct frame *f = frame_at(s, depth - 1);

		if (f->sp >= sp)
			break;
		abandon(f);
		depth--;
	}
	return depth;
}

/*
 * The calling thread's state. Only with create (an entry, a read) may it
 * take a free slot, and only with no frames in task storage, which it would
 * otherwise strand: from then on its returns look in the slot first. It
 * takes its latest read along.
 */
static __always_inline struct shadow_stack *thread_stack_of(__u64 pid_tgid, bool create)
{
	__u32 tid = (__u32)pid_tgid;
	__u32 key = tid & (THREAD_SLOTS - 1);
	struct shadow_stack *s = bpf_map_lookup_elem(&thread_slots, &key), *t;

	if (s && s->owner == tid)
		return s;
	t = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), NULL, 0);
	if (!create || (t && t->depth))
		return t;
	if (s && !s->owner && __sync_val_compare_and_swap(&s->owner, 0, tid) == 0) {
		s->depth = 0;
		s->has_read = t ? t->has_read : 0;
		s->read_cls = t ? t->read_cls : 0;
		s->read_seq = t ? t->read_seq : 0;
		s->gate_seq = t ? t->gate_seq : 0;
		s->wrote = t ? t->wrote : 0;
		return s;
	}
	return t ? t
		 : bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), NULL,
					BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * Abandon the frames of thread tid's slot and free it. The owner's store
 * is the last: a thread that takes the slot at once resets depth itself.
 */
static __always_inline void free_slot(__u32 tid)
{
	__u32 key = tid & (THREAD_SLOTS - 1);
	struct shadow_stack *s = bpf_map_lookup_elem(&thread_slots, &key);

	if (!s || !tid || s->owner != tid)
		return;
	pop_dead(s, s->depth, ~0ULL);
	s->owner = 0;
}

/*
 * Set by the loader just before it releases the return links: a call
 * entered after that never sees its return, so it is counted but not timed
 * (as left without returning) instead of filling the thread's frames.
 */
bool returns_off = false;

/*
 * The coarse budget (user/duty.c). Only links of generation gen count.
 * While quiesce is set, session entries skip their return: a link's
 * release waits for an SRCU grace period that return probes still being
 * set up on a thread keep postponing.
 */
__u32 gen = 0;
bool quiesce = false;
/*
 * Window links count only between the loader's reads of refcalls, not
 * while their probes go in or come out, and only until window_until
 * (CLOCK_MONOTONIC ns): the loader may wake late to close the window when
 * the target keeps both CPUs busy, and a counted call costs its return
 * probe too, an uncounted one only its entry. read_after_window tells the
 * loader that the target has read since, so the request the window ended
 * on is over and the links can go.
 */
bool window_on = false;
__u64 window_until = 0;
bool read_after_window = false;
/*
 * Window-link entries the window counted, and those it paid for but did
 * not count, by the window's phase (the links arming, lingering or being
 * released; enum at_window_phase, which the loader sets): ADAPTRACE_DEBUG
 * reports both.
 */
__u64 window_hits_counted = 0;
__u32 window_phase = 0;
__u64 window_hits_phase[AT_WINDOW_PHASES] = {};
/*
 * Window calls counted by time or on the read path that no callers pair
 * holds, by why (enum at_uncalled): the split by callers goes without them.
 */
__u64 window_uncalled[AT_UNCALLED_NR] = {};

/*
 * A lingering window's links go once the target reads again: the first such
 * read sets read_after_window and wakes the loader here (linger_woken
 * until the loader clears it), which otherwise saw it at its next 1 ms
 * poll, the links in all along.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} duty_wake SEC(".maps");
bool linger_woken = false;
/*
 * The open window is a turn window: only the functions run 1-3 times
 * a turn of the event loop are in, so the loop keeps its pace. It counts a
 * thread's whole turns: from its first wakeup in the window to its first
 * wakeup after window_until (shadow_stack.gate_seq), so a turn's calls and
 * its end are both in or both out. turn_gates: the threads counting, for
 * the loader to end the window when none is. Its yardsticks count apart
 * (at_reads.turn). window_seq numbers the windows, so a thread's state
 * from an earlier one never counts in the next.
 */
bool window_turns = false;
__u32 window_seq = 0;
__s32 turn_gates = 0;
/*
 * Threads in the tail of a turn on the read path: from its first write (the
 * turn's end, counted) to the thread's next wakeup. A lingering window
 * stays past its cap while one is, so a turn whose end counted counts the
 * replies and the rest of beforeSleep after it too: cut there, redis's
 * evictClients under beforeSleep came out 34-38 % low.
 */
__s32 rp_tails = 0;

/* Whether the window counts thread s's event now; *turn: a turn window does. */
static __always_inline bool in_window(const struct shadow_stack *s, bool *turn)
{
	bool tw = window_turns;

	*turn = tw;
	if (!window_on)
		return false;
	if (tw)
		return s && s->gate_seq == window_seq;
	return bpf_ktime_get_ns() < window_until;
}

/*
 * Whether thread s's event is on the open window's read path (AT_RP_TURNS):
 * its latest read came in the window, a regular one, and every link of the
 * window is in.
 */
static __always_inline bool read_path(const struct shadow_stack *s)
{
	__u32 ph = window_phase;

	return s && s->read_seq && s->read_seq == window_seq && !window_turns &&
	       (ph == AT_WPHASE_OPEN || ph == AT_WPHASE_LINGERING);
}

/*
 * Whether thread s's call or write counts by time: while the window is
 * open, or on its read path, the rest of a turn it read in, as that turn's
 * reads do (turn_goes_on()). With those reads counted and their calls not,
 * the fits that choose a yardstick held the calls against reads they did
 * not follow: redis's readQueryFromClient went by the wakeups at 7.6 times
 * its count.
 */
static __always_inline bool on_by_time(const struct shadow_stack *s, bool *turn)
{
	return in_window(s, turn) || read_path(s);
}

/*
 * The target's socket reads per size class (duty_inputs counts them): the
 * yardstick that scales what the probing windows saw. Unlike time, it
 * slows down with the target while the probes are in. ref_tgid 0: the -b
 * executable's processes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_REFCALLS);
	__type(key, __u32);
	__type(value, struct at_reads);
} refcalls SEC(".maps");

/* Window calls per function, by read class and by time: key id * AT_WCALL_SLOTS + slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* set by the loader */
	__type(key, __u32);
	__type(value, __u64);
} wcalls SEC(".maps");

/*
 * Window calls by time per (function, innermost traced caller): AT_CALLER_KEY,
 * and those on the read path under the key | AT_CALLER_RP. The loader
 * empties it every interval; redis's windows fill 80-150 pairs of each.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, AT_CALLERS_MAX);
	__type(key, __u64);
	__type(value, __u64);
} wcallers SEC(".maps");

__u32 ref_tgid = 0;

/*
 * exe_matches()'s verdict per process, in the slot its tgid hashes to:
 * tgid | 1 << 32 when it runs the -b executable, tgid | 2 << 32 when not.
 * Its dependent loads through mm, file and inode cost ~25 ns of the ~50 ns
 * the socket programs spend on each read and write of every process. The
 * exec and exit programs clear a process's verdict (exe_verdicts_on: the
 * loader attached them), so a new image or a tgid used again never finds
 * an old one.
 */
#define EXE_VERDICTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EXE_VERDICTS);
	__type(key, __u32);
	__type(value, __u64);
} exe_verdicts SEC(".maps");

bool exe_verdicts_on = false;

static __always_inline bool exe_matches_cached(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32, key = tgid & (EXE_VERDICTS - 1);
	__u64 *v = bpf_map_lookup_elem(&exe_verdicts, &key), seen;
	bool match;

	if (!v || !exe_verdicts_on)
		return exe_matches();
	seen = *v;
	if ((__u32)seen == tgid && (seen >> 32))
		return (seen >> 32) == 1;
	match = exe_matches();
	*v = tgid | (match ? 1ULL : 2ULL) << 32;
	return match;
}

static __always_inline void forget_verdict(__u32 tgid)
{
	__u32 key = tgid & (EXE_VERDICTS - 1);
	__u64 *v = bpf_map_lookup_elem(&exe_verdicts, &key);

	if (v && (__u32)*v == tgid)
		*v = 0;
}

/*
 * Whether the calling process (pid_tgid, from bpf_get_current_pid_tgid())
 * is the target's: the -p process, or one running the -b executable. The
 * programs read it once for this and thread_stack_of(): a helper call
 * cost ~30 ns here, and the socket programs run for every process's reads
 * and writes.
 */
static __always_inline bool target_process_of(__u64 pid_tgid)
{
	return ref_tgid ? (__u32)(pid_tgid >> 32) == ref_tgid : exe_matches_cached(pid_tgid);
}

extern bool bpf_session_is_return(void) __ksym __weak;

static __always_inline __u16 cookie_gen(__u64 cookie)
{
	return (cookie >> AT_COOKIE_GEN_SHIFT) & AT_COOKIE_GEN_MASK;
}

/*
 * Whether a window probe counts this call: after a read in the window, or
 * for a thread that has not read, while the window is open. The thread's
 * latest read (s) is the request its calls serve, so a window holds whole
 * requests: those read before it opened stay out, and the one it closes on
 * keeps the calls its probes see until they come out. *by_time: the
 * call counts by time (on_by_time()); *rp: it counts on the window's read
 * path (read_path()).
 */
static __always_inline bool window_counts(const struct shadow_stack *s, __u32 id, bool *by_time,
					  bool *rp)
{
	bool turn, read = s && s->has_read, on = on_by_time(s, &turn);
	__u32 key = id * AT_WCALL_SLOTS + AT_BY_TIME;
	__u64 *n;

	*by_time = on;
	if (on) {
		n = bpf_map_lookup_elem(&wcalls, &key);
		if (n)
			*n += 1;
		if (turn) {
			key = id * AT_WCALL_SLOTS + AT_TW_TIME;
			n = bpf_map_lookup_elem(&wcalls, &key);
			if (n)
				*n += 1;
		}
		if (read) {
			key =
			    id * AT_WCALL_SLOTS + AT_WR_CLASS(s->read_cls & (AT_READ_CLASSES - 1));
			n = bpf_map_lookup_elem(&wcalls, &key);
			if (n)
				*n += 1;
		}
	}
	if (!read)
		return on;
	/* The next window's links go in: a read of the last one (read_seq) is over. */
	if (!s->read_seq || s->read_seq != window_seq || (!on && window_phase == AT_WPHASE_ARMING))
		return false;
	key = id * AT_WCALL_SLOTS + (s->read_cls & (AT_READ_CLASSES - 1));
	n = bpf_map_lookup_elem(&wcalls, &key);
	if (n)
		*n += 1;
	*rp = read_path(s);
	return true;
}

static __always_inline void bump_caller(__u64 key)
{
	__u64 *n = bpf_map_lookup_elem(&wcallers, &key), one = 1;

	if (!n) {
		if (!bpf_map_update_elem(&wcallers, &key, &one, BPF_NOEXIST))
			return;
		/* Another CPU put it in first; else full: the split goes by the pairs held. */
		n = bpf_map_lookup_elem(&wcallers, &key);
	}
	if (n)
		*n += 1;
	else
		__sync_fetch_and_add(&window_uncalled[AT_UNCALLED_FULL], 1);
}

/*
 * The window a window link's frame belongs to: the open one, and still
 * while its links linger or go (a frame pushed then is a caller on its read
 * path: redis's handleClientsWithPendingWrites, entered in the tail of the
 * turn a window closed in); else the next (the links go in before the
 * loader opens it and numbers it; 0 is skipped).
 */
static __always_inline __u32 frame_seq(void)
{
	__u32 seq = window_seq, ph = window_phase;

	/* OPEN too: the loader clears window_on a moment before it sets LINGERING. */
	if (window_on || ph == AT_WPHASE_OPEN || ph == AT_WPHASE_LINGERING ||
	    ph == AT_WPHASE_RELEASING)
		return seq;
	return seq + 1 ? seq + 1 : 1;
}

/*
 * Whether the return of a frame (its seq and gen) can no longer be seen:
 * its link went. An exact link goes at a move to the next generation, a
 * window's with the window (frame_seq() while it arms). Such a frame
 * stays until a call above it pops it, and redis's event loop, which has
 * no probe, never makes one: a beforeSleep frame left by the second move
 * passed for the caller of every readQueryFromClient after it, which the
 * model then scaled by the turns, 11.7 times too many. A function that
 * runs on across a move is no caller after it either: the two cannot be
 * told apart.
 */
static __always_inline bool frame_lost(__u32 seq, __u32 fgen)
{
	if (!seq)
		return fgen != gen;
	return seq != window_seq && seq != frame_seq();
}

/*
 * A call entered at sp is the sibling of a frame at sp whose return cannot
 * be seen (a tail call's caller's can): that frame returned. Drop it, or
 * each move or window that took a running function's link away leaves a
 * frame for its next call to sit on. One at most: the next call pops it.
 */
static __always_inline __u32 pop_sibling(struct shadow_stack *s, __u32 depth, __u64 sp)
{
	struct frame *f;

	if (!depth)
		return 0;
	f = frame_at(s, depth - 1);
	if (f->sp != sp || !frame_lost(f->seq, f->gen))
		return depth;
	abandon(f);
	return depth - 1;
}

/*
 * A window call of id entered at sp, under the thread's innermost frame
 * above sp whose return can be seen: a caller's entry sp is strictly
 * higher. A frame at sp is a sibling whose return went unseen, or the
 * caller of a tail call. Counted by time, on the read path, or both.
 */
static __always_inline void count_caller(struct shadow_stack *s, __u32 depth, __u32 id, __u64 sp,
					 bool by_time, bool rp)
{
	__u32 caller = AT_NO_CALLER;
	__u64 key;

	for (int i = 0; i < 4 && depth > 0; i++, depth--) {
		__u32 top = depth - 1;
		struct frame *f;

		/* The compiler drops the mask, knowing depth's bound; the verifier needs it. */
		asm volatile("" : "+r"(top));
		f = frame_at(s, top);
		if (f->sp > sp && !frame_lost(f->seq, f->gen)) {
			caller = f->id;
			break;
		}
	}
	key = AT_CALLER_KEY(id, caller) | AT_CALLER_CLS(s->has_read, s->read_cls);
	if (by_time)
		bump_caller(key);
	if (rp)
		bump_caller(key | AT_CALLER_RP);
}

/* Returns 1 when the call's return is of no use (a session then skips it). */
static __always_inline int enter(struct pt_regs *ctx, __u64 cookie)
{
	__u32 id = cookie & AT_COOKIE_ID_MASK;
	/* A call site's call has not pushed its return address yet. */
	__u64 sp =
	    PT_REGS_SP(ctx) -
	    ((cookie & (AT_COOKIE_CALLSITE | AT_COOKIE_TAILSITE)) == AT_COOKIE_CALLSITE ? 8 : 0);
	struct shadow_stack *s;
	struct at_fstats *st;
	struct frame *f;
	__u32 depth, outer = 1;
	bool by_time = false, rp = false;
	__u64 pid_tgid;

	if (cookie_gen(cookie) != gen)
		return 1;
	pid_tgid = bpf_get_current_pid_tgid();
	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches_cached(pid_tgid))
		return 1;
	st = bpf_map_lookup_elem(&fstats, &id);
	if (!st)
		return 1;
	s = thread_stack_of(pid_tgid, true);
	if (cookie & AT_COOKIE_WINDOW) {
		if (!window_counts(s, id, &by_time, &rp)) {
			__u32 ph = window_phase;

			if (ph < AT_WINDOW_PHASES)
				__sync_fetch_and_add(&window_hits_phase[ph], 1);
			return 1;
		}
		__sync_fetch_and_add(&window_hits_counted, 1);
	}
	st->calls++;
	if ((cookie & AT_COOKIE_CALLSITE) && !by_time && !rp)
		return 1;
	if (returns_off || quiesce) {
		diag_inc(AT_DIAG_ABANDONED);
		if (by_time || rp)
			__sync_fetch_and_add(&window_uncalled[AT_UNCALLED_QUIESCED], 1);
		return 1;
	}
	if (!s) {
		diag_inc(AT_DIAG_NO_STORAGE);
		if (by_time || rp)
			__sync_fetch_and_add(&window_uncalled[AT_UNCALLED_NO_STACK], 1);
		return 1;
	}
	/* Frames strictly below this sp were left by longjmp or an exception. */
	s->depth = pop_sibling(s, pop_dead(s, s->depth, sp), sp);
	/*
	 * Read back from the map: the verifier then goes on with one unknown
	 * depth, not one state per number of frames popped (310k instructions
	 * verified instead of 515k before pop_sibling() came).
	 */
	depth = *(volatile __u32 *)&s->depth;
	if (depth >= AT_MAX_DEPTH) {
		diag_inc(AT_DIAG_STACK_OVERFLOW);
		if (by_time || rp)
			__sync_fetch_and_add(&window_uncalled[AT_UNCALLED_DEEP], 1);
		return 1;
	}
	if (by_time || rp)
		count_caller(s, depth, id, sp, by_time, rp);
	/* Counted at its call site: no frame, no return (a leaf: no callee needs it). */
	if (cookie & AT_COOKIE_CALLSITE)
		return 1;
	for (int i = 0; i < AT_MAX_DEPTH && i < depth; i++) {
		if (frame_at(s, i)->id == id) {
			outer = 0;
			break;
		}
	}
	if (outer)
		conc_enter(id);
	f = frame_at(s, depth);
	f->sp = sp;
	f->child_ns = 0;
	f->id = id;
	f->outer = outer;
	f->gen = cookie_gen(cookie);
	f->seq = cookie & AT_COOKIE_WINDOW ? frame_seq() : 0;
	s->depth = depth + 1;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("uprobe")
int coarse_entry(struct pt_regs *ctx)
{
	enter(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

/* int-returning functions leave the upper half of rax undefined. */
static __always_inline bool is_error(__u64 rc)
{
	__u32 hi = rc >> 32;

	if (hi == 0 || hi == 0xffffffff)
		return (__s32)rc < 0;
	return (__s64)rc < 0;
}

/*
 * cookie 0 (the plain return link, always generation 0): the id comes from
 * the frame matched by stack pointer. Reading the cookie cost ~20 ns a call
 * (a sixth of the coarse programs' work); the -b filter is not needed
 * either, since a thread has frames only if its entries passed it. Frames
 * share a stack pointer only in a tail call, whose returns fire newest
 * first, as the frames pop.
 */
static __always_inline void leave(struct pt_regs *ctx, __u64 cookie)
{
	__u64 now = bpf_ktime_get_ns();
	/* After ret the return address has been popped. */
	__u64 sp = PT_REGS_SP(ctx) - 8;
	struct shadow_stack *s;
	struct at_fstats *st;
	struct frame *f;
	__u64 dur, self;
	__u32 depth, top, id;

	/* An old link's return probe fires for calls its entry no longer takes. */
	bool current = cookie_gen(cookie) == gen;
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches_cached(pid_tgid))
		return;
	s = thread_stack_of(pid_tgid, false);
	if (!s) {
		if (current)
			diag_inc(AT_DIAG_UNMATCHED_RET);
		return;
	}
	depth = pop_dead(s, s->depth, sp);
	s->depth = depth;
	if (depth == 0) {
		if (current)
			diag_inc(AT_DIAG_UNMATCHED_RET);
		return;
	}
	top = depth - 1;
	f = frame_at(s, top);
	/* A deeper untracked frame (stack overflow) or a foreign return. */
	if (f->sp != sp || (cookie && f->id != (cookie & AT_COOKIE_ID_MASK))) {
		if (current)
			diag_inc(AT_DIAG_UNMATCHED_RET);
		return;
	}
	/* Entered under the other generation's link: that link's return times it. */
	if (f->gen != cookie_gen(cookie))
		return;
	id = f->id;
	dur = now - f->ts;
	self = dur > f->child_ns ? dur - f->child_ns : 0;
	if (f->outer)
		conc_leave(id);
	s->depth = top;
	if (top > 0)
		frame_at(s, top - 1)->child_ns += dur;

	st = count_return(id, dur, self, f->outer);
	if (st && is_error(PT_REGS_RC(ctx)))
		st->errors++;
}

SEC("uprobe")
int coarse_return(struct pt_regs *ctx)
{
	leave(ctx, 0);
	return 0;
}

/* One program for both ends (uprobe session, 6.13+): entries can skip the return. */
SEC("uprobe")
int coarse_session(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	if (bpf_session_is_return()) {
		leave(ctx, cookie);
		return 0;
	}
	return enter(ctx, cookie);
}

/* The benchmark floor: the same sites with nothing to do. */
SEC("uprobe")
int empty_entry(struct pt_regs *ctx)
{
	return 0;
}

SEC("uprobe")
int empty_return(struct pt_regs *ctx)
{
	return 0;
}

/*
 * exec replaces the stack: frames of the old image can never return, and
 * would otherwise sit under the new image's calls. A thread other than the
 * leader takes the leader's id in exec, which frees old_pid's slot.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(coarse_exec, struct task_struct *p, pid_t old_pid)
{
	struct shadow_stack *s = bpf_task_storage_get(&stacks, p, NULL, 0);

	free_slot(old_pid);
	free_slot(p->pid);
	forget_verdict(p->tgid);
	if (!s)
		return 0;
	pop_dead(s, s->depth, ~0ULL);
	bpf_task_storage_delete(&stacks, p);
	return 0;
}

/* An exiting thread's calls never return; its id may be used again. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(coarse_exit, struct task_struct *p)
{
	struct shadow_stack *s = bpf_task_storage_get(&stacks, p, NULL, 0);

	free_slot(p->pid);
	forget_verdict(p->tgid);
	if (s)
		pop_dead(s, s->depth, ~0ULL);
	return 0;
}

/* Count one of refcalls' yardsticks: all of it, and while a window counts it, by its kind. */
static __always_inline void count_ref(__u32 slot, bool on, bool turn)
{
	struct at_reads *w = bpf_map_lookup_elem(&refcalls, &slot);

	if (w) {
		w->all++;
		if (on && turn)
			w->turn++;
		else if (on)
			w->on++;
	}
}

/* A thread's wakeup opens its count in a turn window, or closes it after window_until. */
static __always_inline void turn_wakeup(struct shadow_stack *s)
{
	bool open, was;

	if (!window_on || !window_turns)
		return;
	open = bpf_ktime_get_ns() < window_until;
	was = s->gate_seq && s->gate_seq == window_seq;
	if (open && !was) {
		s->gate_seq = window_seq;
		__sync_fetch_and_add(&turn_gates, 1);
	} else if (!open && was) {
		s->gate_seq = 0;
		__sync_fetch_and_add(&turn_gates, -1);
	}
}

/*
 * A read after window_until in a turn whose first read came in the window
 * (the thread has not written since): the window goes on to the turn's end
 * for this thread. A window that ended between a turn's reads left out
 * the rest of the turn, its writes at the end included, though it counted
 * the reads they serve: with redis's turns longer than a window under
 * every probe (7 us a trap), the windows saw none of beforeSleep's
 * callees, and listRewind, listNext, evictClients and the like came out
 * 35-70 % low.
 */
static __always_inline bool turn_goes_on(const struct shadow_stack *s)
{
	return read_path(s) && !s->wrote;
}

/* Whether a read (or an accept) of thread s counts in the window, and *turn: a turn window's. */
static __always_inline bool read_counts(const struct shadow_stack *s, bool *turn)
{
	return in_window(s, turn) || turn_goes_on(s);
}

/* Thread s's latest read is of class cls, in the window or not (on): its calls go with it. */
static __always_inline void latest_read(struct shadow_stack *s, __u32 cls, bool on)
{
	s->read_cls = cls;
	s->read_seq = on ? window_seq : 0;
	s->has_read = 1;
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * Whether a read of ret bytes from a TCP socket was its connection's
 * first: all the connection has consumed (up to copied_seq) came with it.
 * Its first byte's number is rcv_nxt less the bytes received in order.
 * Stateless, so a connection open before the recorder never counts as
 * new. Other sockets have no first read. bpf_skc_to_tcp_sock()'s checks
 * without its call: the verifier turns bpf_rdonly_cast() into a move, and
 * the helper call cost ~35 ns here, a fifth of duty_inputs' run. The kfunc
 * came in Linux 6.2, the tracepoints that run this in 6.3 (weak: older
 * kernels load the other programs).
 */
static __always_inline bool first_read(struct sock *sk, int ret)
{
	struct tcp_sock *tp;

	if (sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM ||
	    ((1 << sk->__sk_common.skc_state) & (TCPF_TIME_WAIT | TCPF_NEW_SYN_RECV)))
		return false;
	tp = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
	return tp->copied_seq - (__u32)ret - (tp->rcv_nxt - (__u32)tp->bytes_received) == 0;
}

/*
 * The coarse budget's yardstick: the target's socket reads that returned
 * data or end of file (a class of their own: a client hanging up is work
 * too). A server reads a request and handles it at once, so its calls
 * follow its reads even over a window shorter than one turn of its event
 * loop, while writes are often batched at the end of the turn and waits
 * get fewer per request when the probes slow the loop down. A sys_enter
 * program would put every task's every system call on the slow path,
 * which cost redis 8-15 % of its throughput here. A thread's first read
 * after it wrote is its event loop waking up. A connection's first read
 * is a class of its own (at_read_class()).
 */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(duty_inputs, struct sock *sk, int ret, int flags)
{
	struct shadow_stack *s;
	__u64 id;
	bool on, turn;
	__u32 cls;

	if (ret < 0)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (!target_process_of(id))
		return 0;
	cls = ret > 0 && first_read(sk, ret) ? AT_CLASS_FIRST : at_read_class(ret);
	s = thread_stack_of(id, true);
	if (s && s->wrote)
		turn_wakeup(s);
	on = read_counts(s, &turn);
	if (window_on && !on)
		read_after_window = true;
	if (window_phase == AT_WPHASE_LINGERING && !linger_woken && !on) {
		__u32 one = 1;

		linger_woken = true;
		read_after_window = true;
		bpf_ringbuf_output(&duty_wake, &one, sizeof(one), 0);
	}
	count_ref(cls, on, turn);
	if (s) {
		if (s->wrote)
			count_ref(AT_WAKES, on, turn);
		if (s->tail_seq) {
			if (s->tail_seq == window_seq)
				__sync_fetch_and_add(&rp_tails, -1);
			s->tail_seq = 0;
		}
		s->wrote = 0;
		latest_read(s, cls, on);
	}
	return 0;
}

/*
 * A connection the target accepted (libc's accept and accept4 returned;
 * this kernel allows no kernel-function probe) counts as a read of a
 * class of its own, and its calls until the thread's next read, the new
 * client's setup, go with that class. They went with the thread's latest
 * read: after redis-benchmark's 50 clients hung up between its runs and
 * 50 others connected, a window that saw 3-8 hang-ups and the setup of
 * 50-100 clients scaled some 900 zmalloc calls by the hang-ups and sent
 * zmalloc 17-132 % high. In the first reads' class, which the requests'
 * own calls follow, they spoilt the reads' fit there, and the request
 * path went by the writes. The turn's wakeup and end stay the reads' and
 * writes'.
 */
SEC("uretprobe")
int BPF_KRETPROBE(duty_accepts, long fd)
{
	struct shadow_stack *s;
	bool on, turn;
	__u64 id;

	if (fd < 0)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (!target_process_of(id))
		return 0;
	s = thread_stack_of(id, true);
	on = read_counts(s, &turn);
	count_ref(AT_CLASS_ACCEPT, on, turn);
	if (s)
		latest_read(s, AT_CLASS_ACCEPT, on);
	return 0;
}

/*
 * The target's socket writes that sent data, the yardstick of deferred
 * work: all of them, and per class of the writing thread's latest read.
 * A thread's first write after it read ends a turn of its event loop.
 */
SEC("tp_btf/sock_send_length")
int BPF_PROG(duty_outputs, struct sock *sk, int ret, int flags)
{
	struct shadow_stack *s;
	__u64 id;
	bool on, turn, rp;

	if (ret <= 0)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (!target_process_of(id))
		return 0;
	s = thread_stack_of(id, false);
	on = on_by_time(s, &turn);
	count_ref(AT_BY_TIME, on, turn);
	if (!s || !s->has_read)
		return 0;
	rp = read_path(s);
	if (!s->wrote) {
		count_ref(AT_TURNS, on, turn);
		if (rp) {
			count_ref(AT_RP_TURNS, true, false);
			s->tail_seq = window_seq;
			__sync_fetch_and_add(&rp_tails, 1);
		}
	}
	if (rp)
		count_ref(AT_RP_WRITES, true, false);
	s->wrote = 1;
	count_ref(AT_WR_CLASS(s->read_cls & (AT_READ_CLASSES - 1)), on, turn);
	return 0;
}
