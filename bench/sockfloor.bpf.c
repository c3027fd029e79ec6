// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of adaptrace's budget yardsticks: programs on the same socket
 * tracepoints as duty_inputs and duty_outputs that do nothing but the
 * target test. Every process's reads and writes pay their dispatch, the
 * target's and everyone else's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* One variable, so that the loader knows the layout of .bss. */
struct floor_vars {
	__u32 tgid; /* the target process; 0: none */
	__u32 pad;
	__u64 events;
} vars = {};

static __always_inline void count(void)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == vars.tgid)
		vars.events++;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(floor_recv, struct sock *sk, int ret, int flags)
{
	count();
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(floor_send, struct sock *sk, int ret, int flags)
{
	count();
	return 0;
}
