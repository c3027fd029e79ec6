/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes of our own (<sys/sdt.h>, provider "attest"), with known
 * counts and argument values, printed as name=value lines at exit:
 *  - attest:tick(s32 i, u64 u, ptr p, str s), 1000 hits, guarded by a
 *    semaphore: fires only while a tracer raised it (ticks_seen=);
 *  - attest:val(s64 v, u64 u): v = -2..2 fired 1..5 times, u = 2^63 + v + 2;
 *  - attest:inl(int k): one inlined probe, 3 locations, 10 + 20 + 30 hits;
 *  - attest:long(str): a 100-character string, once (key truncation);
 *  - attest:enter/leave(int depth): nested pairs, 5 outer calls of depth 3;
 *  - attest:mem(int): a memory operand, values -300, -200, ... 300;
 *  - attest:open/close(int): a pair with key -1 around 1100 pairs with keys
 *    0..1099, more than the 1024 keys adaptrace keeps;
 *  - attest:idx(str): an argument with an index register (8@(%r8,%rax,8)),
 *    which libbpf 1.1 cannot decode.
 * "wait" as first argument: block on stdin before and after (for -p tests).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "common.h"

/* With _SDT_HAS_SEMAPHORES every probe has one; only tick's is tested in code. */
#define SEMA(n) unsigned short attest_##n##_semaphore __attribute__((section(".probes"), used))
SEMA(tick);
SEMA(val);
SEMA(inl);
SEMA(long);
SEMA(enter);
SEMA(leave);
SEMA(mem);
SEMA(open);
SEMA(close);
SEMA(idx);

static const char *names[3] = {"alpha", "beta", "gamma"};
static int bufs[4];

static inline __attribute__((always_inline)) void inl(int k)
{
	DTRACE_PROBE1(attest, inl, k);
}

TRACED static void inl_a(int k)
{
	inl(k);
	OPAQUE();
}

TRACED static void inl_b(int k)
{
	inl(k * 2);
	OPAQUE();
}

TRACED static void inl_c(int k)
{
	inl(k * 3);
	OPAQUE();
}

TRACED static void nest(int depth)
{
	DTRACE_PROBE1(attest, enter, depth);
	if (depth > 1)
		nest(depth - 1);
	sleep_ns(100000);
	DTRACE_PROBE1(attest, leave, depth);
}

static void wait_stdin(void)
{
	char c;

	if (fread(&c, 1, 1, stdin) != 1)
		return;
}

int main(int argc, char **argv)
{
	char longs[101];
	int seen = 0;
	size_t seen_len = 0;

	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("ready=1\n");
		fflush(stdout);
		wait_stdin();
	}
	for (int i = -500; i < 500; i++) {
		if (attest_tick_semaphore) {
			uint64_t u = (uint64_t)(i + 500) * 3 + (1ULL << 40);
			const char *nm = names[(i + 500) % 3];

			/*
			 * Touch the string: a BPF probe cannot fault in a page the
			 * process never used. In a register: libbpf decodes no
			 * index-register operands.
			 */
			seen_len += strlen(nm);
			__asm__ volatile("" : "+r"(nm));
			DTRACE_PROBE4(attest, tick, i, u, &bufs[(i + 500) % 4], nm);
			seen++;
		}
	}
	for (int64_t v = -2; v <= 2; v++)
		for (int n = 0; n < v + 3; n++) {
			uint64_t u = (1ULL << 63) + (uint64_t)(v + 2);

			DTRACE_PROBE2(attest, val, v, u);
		}
	for (int i = 0; i < 10; i++)
		inl_a(i);
	for (int i = 0; i < 20; i++)
		inl_b(i);
	for (int i = 0; i < 30; i++)
		inl_c(i);
	/* A volatile local: the argument is a memory operand (-4@-N(%rbp)). */
	for (int i = 0; i < 7; i++) {
		volatile int onstack = i * 100 - 300;

		DTRACE_PROBE1(attest, mem, onstack);
	}
	for (volatile int i = 0; i < 3; i++) {
		int j = (i + 500) % 3;

		DTRACE_PROBE1(attest, idx, names[j]);
	}
	DTRACE_PROBE1(attest, open, -1);
	for (int i = 0; i < 1100; i++) {
		DTRACE_PROBE1(attest, open, i);
		DTRACE_PROBE1(attest, close, i);
	}
	DTRACE_PROBE1(attest, close, -1);
	memset(longs, 'x', 100);
	longs[100] = 0;
	DTRACE_PROBE1(attest, long, longs);
	for (int i = 0; i < 5; i++)
		nest(3);
	printf("ticks_seen=%d\n", seen);
	printf("ticks_len=%zu\n", seen_len);
	printf("bufs=%p\n", (void *)bufs);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "wait"))
		wait_stdin();
	return 0;
}
