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
	__u32 outer; /* no other activation of id below on this thread */
};

struct shadow_stack {
	__u32 depth;
	__u32 pad;
	struct frame f[AT_MAX_DEPTH];
};

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

/* Drop frames that can no longer return: their stack slot is below sp. */
static __always_inline __u32 pop_dead(struct shadow_stack *s, __u32 depth, __u64 sp)
{
	if (depth > AT_MAX_DEPTH)
		depth = AT_MAX_DEPTH;
	for (int i = 0; i < AT_MAX_DEPTH && depth > 0; i++) {
		struct frame *f = frame_at(s, depth - 1);

		if (f->sp >= sp)
			break;
		if (f->outer)
			conc_leave(f->id);
		diag_inc(AT_DIAG_ABANDONED);
		depth--;
	}
	return depth;
}

/*
 * Set by the loader just before it releases the return links: a call
 * entered after that never sees its return, so it is counted but not timed
 * (as left without returning) instead of filling the thread's frames.
 */
bool returns_off = false;

SEC("uprobe")
int coarse_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 id = cookie & AT_COOKIE_ID_MASK;
	__u64 sp = PT_REGS_SP(ctx);
	struct shadow_stack *s;
	struct at_fstats *st;
	struct frame *f;
	__u32 depth, outer = 1;

	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	st = bpf_map_lookup_elem(&fstats, &id);
	if (!st)
		return 0;
	st->calls++;
	if (returns_off) {
		diag_inc(AT_DIAG_ABANDONED);
		return 0;
	}

	s = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		diag_inc(AT_DIAG_NO_STORAGE);
		return 0;
	}
	/* Frames strictly below this sp were left by longjmp or an exception. */
	depth = pop_dead(s, s->depth, sp);
	if (depth >= AT_MAX_DEPTH) {
		s->depth = depth;
		diag_inc(AT_DIAG_STACK_OVERFLOW);
		return 0;
	}
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
	s->depth = depth + 1;
	f->ts = bpf_ktime_get_ns();
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

SEC("uprobe")
int coarse_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 id = cookie & AT_COOKIE_ID_MASK;
	/* After ret the return address has been popped. */
	__u64 sp = PT_REGS_SP(ctx) - 8;
	struct shadow_stack *s;
	struct at_fstats *st;
	struct frame *f;
	__u64 dur, self;
	__u32 depth, top;

	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	s = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), NULL, 0);
	if (!s) {
		diag_inc(AT_DIAG_UNMATCHED_RET);
		return 0;
	}
	depth = pop_dead(s, s->depth, sp);
	s->depth = depth;
	if (depth == 0) {
		diag_inc(AT_DIAG_UNMATCHED_RET);
		return 0;
	}
	top = depth - 1;
	f = frame_at(s, top);
	/* A deeper untracked frame (stack overflow) or a foreign return. */
	if (f->sp != sp || f->id != id) {
		diag_inc(AT_DIAG_UNMATCHED_RET);
		return 0;
	}
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
	return 0;
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
 * would otherwise sit under the new image's calls.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(coarse_exec, struct task_struct *p)
{
	struct shadow_stack *s = bpf_task_storage_get(&stacks, p, NULL, 0);

	if (!s)
		return 0;
	pop_dead(s, s->depth, ~0ULL);
	bpf_task_storage_delete(&stacks, p);
	return 0;
}
