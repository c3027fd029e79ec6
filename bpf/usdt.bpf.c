// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT probes, attached through libbpf's USDT support (which also raises
 * the probes' semaphores while attached). The counter maps are the coarse
 * program's (the loader shares them), so a USDT row is a row like any
 * function's.
 *
 *  usdt_count        a probe counted as a whole: calls of row = cookie id
 *  usdt_key_entry    a keyed probe: hash the key arguments, find or make
 *                    the key's slot, count it; for a pair push a frame
 *  usdt_key_return   the return probe of a pair: pop the frame and time it
 *  usdt_empty        the benchmark floor
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "adaptrace.h"
#include "counters.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Row of slot 0; keyed rows follow the function and counted-probe rows. */
const volatile __u32 key_base = 0;
const volatile struct at_ukey_spec specs[AT_UKEY_SPECS] = {};

/* Keyed rows: key -> slot, slot -> key values, and the slot allocator. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_UKEY_SLOTS);
	__type(key, struct at_ukey);
	__type(value, __u32);
} ukeys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_UKEY_SLOTS);
	__type(key, __u32);
	__type(value, struct at_ukey_info);
} ukinfo SEC(".maps");

/* [0]: slots handed out; [1]: keys refused because the table was full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} ukcount SEC(".maps");

/* Per-CPU scratch to build a key before it is known to be new. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_ukey_info);
} scratch SEC(".maps");

/* The frame of a call whose key found no row (the key table was full). */
#define NO_ROW 0xffffffffU

struct kframe {
	__u64 ts;
	__u64 child_ns;
	__u32 id;
	__u32 outer;
};

/* Keyed calls in flight on this thread (a Python call stack, say). */
struct kstack {
	__u32 depth;
	__u32 over; /* entries beyond AT_MAX_DEPTH: counted, not timed */
	struct kframe f[AT_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kstack);
} kstacks SEC(".maps");

SEC("usdt")
int usdt_count(struct pt_regs *ctx)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 id = cookie & AT_COOKIE_ID_MASK;
	struct at_fstats *st;

	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	st = bpf_map_lookup_elem(&fstats, &id);
	if (st)
		st->calls++;
	return 0;
}

SEC("usdt")
int usdt_empty(struct pt_regs *ctx)
{
	return 0;
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

/* Read the key arguments of spec si into k and hash them. */
static __always_inline __u64 build_key(struct pt_regs *ctx, __u32 si, struct at_ukey_info *k)
{
	/* A masked index: the verifier must see the bound here. */
	const volatile struct at_ukey_spec *sp = &specs[si & (AT_UKEY_SPECS - 1)];
	__u64 h = FNV_OFFSET ^ si;

	k->truncated = 0;
	k->unreadable = 0;
	for (int i = 0; i < AT_UKEY_ARGS; i++) {
		long v = 0;
		__u8 type;

		if (i >= sp->nkeys)
			break;
		type = sp->type[i];
		bpf_usdt_arg(ctx, sp->arg[i], &v);
		k->v[i] = v;
		if (type != AT_UKEY_T_STR) {
			for (int b = 0; b < 8; b++)
				h = (h ^ (((__u64)v >> (8 * b)) & 0xff)) * FNV_PRIME;
			continue;
		}
		long n = bpf_probe_read_user_str(k->s[i], AT_UKEY_STR, (void *)v);

		if (n <= 0) {
			/* Unreadable is a key of its own, apart from "". */
			k->s[i][0] = 0;
			k->unreadable |= 1u << i;
			h = (h ^ 0xfe) * FNV_PRIME;
			n = 1;
		} else if (n == AT_UKEY_STR) {
			char c = 0;

			/* A full buffer: truncated unless the string ends right there. */
			if (bpf_probe_read_user(&c, 1, (void *)(v + AT_UKEY_STR - 1)) == 0 && c)
				k->truncated |= 1u << i;
		}
		for (int b = 0; b < AT_UKEY_STR; b++) {
			if (b >= n)
				break;
			h = (h ^ (__u8)k->s[i][b]) * FNV_PRIME;
		}
		h = (h ^ 0xff) * FNV_PRIME; /* separates "ab","c" from "a","bc" */
	}
	return h;
}

/* The row of the key in k, making a slot for a new key. -1: table full. */
static __always_inline __s64 key_row(__u32 si, __u64 h, struct at_ukey_info *k)
{
	struct at_ukey key = {.spec = si, .hash = h};
	__u32 zero = 0, one = 1, *slotp, slot;
	struct at_ukey_info *dst;
	__u64 *next;

	slotp = bpf_map_lookup_elem(&ukeys, &key);
	if (slotp)
		return key_base + *slotp;
	next = bpf_map_lookup_elem(&ukcount, &zero);
	if (!next)
		return -1;
	slot = (__u32)__sync_fetch_and_add(next, 1);
	if (slot >= AT_UKEY_SLOTS) {
		__u64 *full = bpf_map_lookup_elem(&ukcount, &one);

		if (full)
			__sync_fetch_and_add(full, 1);
		return -1;
	}
	dst = bpf_map_lookup_elem(&ukinfo, &slot);
	if (!dst)
		return -1;
	k->state = AT_UKEY_EMPTY;
	k->spec = si;
	*dst = *k;
	if (bpf_map_update_elem(&ukeys, &key, &slot, BPF_NOEXIST)) {
		/* Another CPU made this key first: use its slot. */
		dst->state = AT_UKEY_DUP;
		slotp = bpf_map_lookup_elem(&ukeys, &key);
		return slotp ? key_base + *slotp : -1;
	}
	dst->state = AT_UKEY_VALID;
	return key_base + slot;
}

static __always_inline struct kframe *kframe_at(struct kstack *s, __u32 i)
{
	return &s->f[i & (AT_MAX_DEPTH - 1)];
}

SEC("usdt")
int usdt_key_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 si = cookie & AT_COOKIE_ID_MASK, zero = 0, id, depth, outer = 1;
	struct at_ukey_info *k;
	struct at_fstats *st;
	struct kstack *s;
	struct kframe *f;
	__s64 row;
	__u64 h;

	if (si >= AT_UKEY_SPECS)
		return 0;
	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	k = bpf_map_lookup_elem(&scratch, &zero);
	if (!k)
		return 0;
	h = build_key(ctx, si, k);
	row = key_row(si, h, k);
	/* A key the full table refused still opens a frame: its return pops it. */
	id = row < 0 ? NO_ROW : (__u32)row;
	st = bpf_map_lookup_elem(&fstats, &id);
	if (st)
		st->calls++;
	if (!specs[si & (AT_UKEY_SPECS - 1)].paired)
		return 0;

	s = bpf_task_storage_get(&kstacks, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		diag_inc(AT_DIAG_NO_STORAGE);
		return 0;
	}
	depth = s->depth;
	if (depth >= AT_MAX_DEPTH) {
		s->over++;
		diag_inc(AT_DIAG_STACK_OVERFLOW);
		return 0;
	}
	for (int i = 0; i < AT_MAX_DEPTH && i < depth; i++) {
		if (kframe_at(s, i)->id == id) {
			outer = 0;
			break;
		}
	}
	if (outer && id != NO_ROW)
		conc_enter(id);
	f = kframe_at(s, depth);
	f->child_ns = 0;
	f->id = id;
	f->outer = outer;
	s->depth = depth + 1;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int usdt_key_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 depth, top, id;
	struct kstack *s;
	struct kframe *f;
	__u64 dur, self;

	if ((cookie & AT_COOKIE_EXE_FILTER) && !exe_matches())
		return 0;
	s = bpf_task_storage_get(&kstacks, bpf_get_current_task_btf(), NULL, 0);
	if (!s) {
		diag_inc(AT_DIAG_UNMATCHED_RET);
		return 0;
	}
	if (s->over) {
		s->over--;
		return 0;
	}
	depth = s->depth;
	if (depth == 0 || depth > AT_MAX_DEPTH) {
		diag_inc(AT_DIAG_UNMATCHED_RET);
		return 0;
	}
	top = depth - 1;
	f = kframe_at(s, top);
	id = f->id;
	dur = now - f->ts;
	self = dur > f->child_ns ? dur - f->child_ns : 0;
	s->depth = top;
	if (top > 0)
		kframe_at(s, top - 1)->child_ns += dur;
	if (id == NO_ROW)
		return 0;
	if (f->outer)
		conc_leave(id);
	count_return(id, dur, self, f->outer);
	return 0;
}
