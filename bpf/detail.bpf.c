// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Detail phase: argument-capturing probes on the functions the loader
 * selected, on links of their own beside the coarse ones. The entry draws
 * against the function's sampling threshold; a sampled call's arguments
 * (and strings) are kept in a per-thread frame until its return, which
 * emits one ring-buffer event.
 *
 * With the uprobe session link (6.13+) one program sees both ends and an
 * unsampled call returns 1 from the entry, so its return is never
 * trapped for us. Elsewhere detail_entry/detail_return run on a uprobe and
 * a uretprobe link and the return finds its frame by stack pointer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "adaptrace.h"
#include "exe_filter.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern bool bpf_session_is_return(void) __ksym __weak;
extern __u64 *bpf_session_cookie(void) __ksym __weak;

/* Wake the consumer only when this much data waits (bytes). */
const volatile __u64 wakeup_bytes = 0;
/* Benchmark floor: every program returns at once (entry takes the return). */
const volatile bool empty = false;
/* Set while the coarse budget releases links: sessions skip their returns. */
bool quiesce = false;

struct dframe {
	__u64 sp; /* stack pointer at entry: identifies the activation */
	struct at_devent ev;
};

struct dstack {
	__u32 depth;
	__u32 pad;
	struct dframe f[AT_DETAIL_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dstack);
} dstacks SEC(".maps");

/* max_entries set by the loader to the number of functions. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_dconf);
} dconf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_dcount);
} dcount SEC(".maps");

/* Size set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

static __always_inline struct dframe *frame_at(struct dstack *s, __u32 i)
{
	__u64 k = i;

	/* Keep the mask: the compiler drops it where it knows i is in range. */
	barrier_var(k);
	k &= AT_DETAIL_DEPTH - 1;
	return &s->f[k];
}

static __always_inline void read_str(struct at_devent *ev, int k, __u64 ptr, __u32 max)
{
	char last = 0;
	long n;

	if (max < 2 || max > AT_DETAIL_STRLEN)
		max = AT_DETAIL_STRLEN;
	barrier_var(max);
	max &= 2 * AT_DETAIL_STRLEN - 1;
	if (max > AT_DETAIL_STRLEN)
		return;
	n = bpf_probe_read_user_str(ev->str[k & 1], max, (void *)ptr);
	if (n < 0) {
		ev->str[k & 1][0] = 0;
		ev->unreadable |= 1 << k;
		return;
	}
	/* A full buffer: cut unless the last byte read was the terminator. */
	if (n == max && (bpf_probe_read_user(&last, 1, (void *)(ptr + max - 1)) || last))
		ev->truncated |= 1 << k;
}

/*
 * Sampling decision and frame push. Returns the frame index + 1, or 0
 * when the call is not sampled (or has no room).
 */
static __always_inline __u32 enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 id = cookie & AT_COOKIE_ID_MASK;
	__u64 sp = PT_REGS_SP(ctx);
	struct at_dconf *c = bpf_map_lookup_elem(&dconf, &id);
	struct at_dcount *cnt;
	struct dstack *s;
	struct dframe *f;
	struct at_devent *ev;
	__u64 pid_tgid;
	__u32 depth;

	if (!c || !c->threshold)
		return 0;
	if (c->threshold != AT_DETAIL_RATE_ALL && bpf_get_prandom_u32() >= c->threshold)
		return 0;
	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	cnt = bpf_map_lookup_elem(&dcount, &id);
	if (!cnt)
		return 0;
	cnt->sampled++;
	s = bpf_task_storage_get(&dstacks, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		cnt->no_frame++;
		return 0;
	}
	/* Frames below this sp were left by longjmp or an exception. */
	depth = s->depth;
	for (int i = 0; i < AT_DETAIL_DEPTH && depth > 0; i++) {
		if (frame_at(s, depth - 1)->sp >= sp)
			break;
		depth--;
	}
	if (depth >= AT_DETAIL_DEPTH) {
		s->depth = depth;
		cnt->no_frame++;
		return 0;
	}
	f = frame_at(s, depth);
	s->depth = depth + 1;
	f->sp = sp;
	ev = &f->ev;
	pid_tgid = bpf_get_current_pid_tgid();
	ev->pid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->cpu = bpf_get_smp_processor_id();
	ev->id = id;
	ev->args[0] = PT_REGS_PARM1(ctx);
	ev->args[1] = PT_REGS_PARM2(ctx);
	ev->args[2] = PT_REGS_PARM3(ctx);
	ev->args[3] = PT_REGS_PARM4(ctx);
	ev->args[4] = PT_REGS_PARM5(ctx);
	ev->args[5] = ctx->r9;
	ev->truncated = 0;
	ev->unreadable = 0;
	for (int k = 0; k < AT_DETAIL_NSTR; k++) {
		__u8 a = c->str_arg[k];

		ev->str_arg[k] = a;
		ev->str[k][0] = 0;
		if (a < AT_DETAIL_NARGS)
			read_str(ev, k, ev->args[a], c->str_max[k]);
	}
	ev->ts_ns = bpf_ktime_get_ns();
	return depth + 1;
}

/* Emit the event of the frame at idx (1-based; 0 = find it by sp). */
static __always_inline void leave(struct pt_regs *ctx, __u32 idx)
{
	__u64 now = bpf_ktime_get_ns();
	/* After ret the return address has been popped. */
	__u64 sp = PT_REGS_SP(ctx) - 8;
	struct dstack *s;
	struct dframe *f;
	struct at_devent *e;
	struct at_dcount *cnt;
	__u32 depth, flags = BPF_RB_NO_WAKEUP;

	s = bpf_task_storage_get(&dstacks, bpf_get_current_task_btf(), NULL, 0);
	if (!s)
		return;
	depth = s->depth;
	if (idx) {
		depth = idx;
	} else {
		/* Unsampled calls have no frame: only a frame with this sp is ours. */
		for (int i = 0; i < AT_DETAIL_DEPTH && depth > 0; i++) {
			if (frame_at(s, depth - 1)->sp >= sp)
				break;
			depth--;
		}
	}
	if (depth == 0 || depth > AT_DETAIL_DEPTH)
		return;
	f = frame_at(s, depth - 1);
	if (f->sp != sp)
		return;
	s->depth = depth - 1;
	cnt = bpf_map_lookup_elem(&dcount, &f->ev.id);
	/* Without strings the record stops before str[]: less to copy and to drain. */
	if (f->ev.str_arg[0] == AT_DETAIL_NO_STR) {
		e = bpf_ringbuf_reserve(&events, offsetof(struct at_devent, str), 0);
		if (e)
			__builtin_memcpy(e, &f->ev, offsetof(struct at_devent, str));
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e)
			__builtin_memcpy(e, &f->ev, sizeof(*e));
	}
	if (!e) {
		if (cnt)
			cnt->dropped++;
		return;
	}
	e->duration_ns = now - f->ev.ts_ns;
	e->ret = PT_REGS_RC(ctx);
	if (wakeup_bytes && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

SEC("uprobe")
int detail_session(struct pt_regs *ctx)
{
	__u64 *cookie;
	__u32 idx;

	if (empty)
		return 0;
	cookie = bpf_session_cookie();
	if (bpf_session_is_return()) {
		leave(ctx, *cookie ? (__u32)*cookie : 0);
		return 0;
	}
	/* The coarse budget is releasing links (user/duty.h): no return probes. */
	if (quiesce)
		return 1;
	idx = enter(ctx);
	*cookie = idx;
	/* 1 skips this call's return: unsampled calls cost no return trap. */
	return idx ? 0 : 1;
}

SEC("uprobe")
int detail_entry(struct pt_regs *ctx)
{
	if (empty)
		return 0;
	enter(ctx);
	return 0;
}

SEC("uprobe")
int detail_return(struct pt_regs *ctx)
{
	if (empty)
		return 0;
	leave(ctx, 0);
	return 0;
}

/* exec replaces the stack: the old image's frames can never return. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(detail_exec, struct task_struct *p)
{
	bpf_task_storage_delete(&dstacks, p);
	return 0;
}
