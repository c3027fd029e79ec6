// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Streaming benchmark producer: writes detail events into a running
 * adaptrace's ring buffer (the loader hands us its map), the way
 * bpf/detail.bpf.c's return does, but many per run. A uprobe costs more
 * than a microsecond per detailed call here, so one target core cannot
 * offer the consumer the rates it must keep up with.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "adaptrace.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/* Per test run, from user space. */
struct gen_args {
	__u32 n;      /* events to write */
	__u32 id;     /* symbol id of the events */
	__u64 wakeup; /* as detail.bpf.c: wake the consumer at this many bytes */
	__u64 seq;    /* first sequence number, carried in args[0] */
};

/* [0] written, [1] refused by the full ring buffer. */
__u64 counts[2];

static long emit(__u64 i, void *ctx)
{
	struct gen_args *a = ctx;
	struct at_devent *e;
	__u64 flags = BPF_RB_NO_WAKEUP;

	e = bpf_ringbuf_reserve(&events, offsetof(struct at_devent, str), 0);
	if (!e) {
		__sync_fetch_and_add(&counts[1], 1);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->duration_ns = 1000 + (i & 1023);
	e->ret = i & 7;
	e->args[0] = a->seq + i;
	e->args[1] = 0x7ffd12340000ULL + (i << 4);
	e->args[2] = i & 63;
	e->args[3] = 0;
	e->args[4] = 0;
	e->args[5] = 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->cpu = bpf_get_smp_processor_id();
	e->id = a->id;
	e->str_arg[0] = AT_DETAIL_NO_STR;
	e->str_arg[1] = AT_DETAIL_NO_STR;
	e->truncated = 0;
	e->unreadable = 0;
	if (a->wakeup && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= a->wakeup)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	__sync_fetch_and_add(&counts[0], 1);
	return 0;
}

SEC("syscall")
int gen(struct gen_args *a)
{
	struct gen_args c = *a;

	bpf_loop(c.n, emit, &c, 0);
	return 0;
}
