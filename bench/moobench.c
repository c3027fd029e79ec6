// MooBench-style micro-benchmark for adaptrace (after Waller, Fittkau and
// Hasselbring, seeds/waller-kieker-overhead-moobench.txt).
//
// monitored_method(depth, method_time_ns) calls itself until depth reaches 1,
// then busy-waits method_time_ns (default 0: no wait at all). One top-level
// call is therefore `depth` calls of the traced function, nested. The driver
// makes CALLS top-level calls, times each with CLOCK_MONOTONIC, drops the
// first half as warm-up and reports the time per monitored_method call
// (top-level time / depth) as the median and the mean over the second half.
//
// Usage: moobench [-n CALLS] [-d DEPTH] [-t METHOD_TIME_NS] [-c CPU] [-w SECONDS] [-q]
//   -n  top-level calls in total, warm-up included (default 200000, i.e.
//       2,000,000 monitored_method calls at the default depth 10)
//   -d  recursion depth (default 10)
//   -t  busy-wait in the innermost call, ns (default 0)
//   -w  sleep this many seconds first (an idle traced process)
//   -c  pin this process to CPU (sched_setaffinity; default: not pinned)
//   -q  print only the machine-readable line
// Output (last line, machine-readable):
//   ns_per_call=MEDIAN median mean=MEAN p10=.. p90=.. calls=N depth=D method_time_ns=T measured=M
//
// Build: see bench/Makefile (-O2 -g -fno-omit-frame-pointer -fcf-protection=none,
// so that monitored_method starts with `push %rbp`, an instruction the kernel
// emulates for a uprobe instead of single-stepping it).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef MOO_USDT
#include <sys/sdt.h>
#endif

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// The method time, out of line so that monitored_method stays a tiny function.
__attribute__((noipa)) static uint64_t busy_wait(uint64_t method_time_ns)
{
	uint64_t end = now_ns() + method_time_ns, t;
	do
		t = now_ns();
	while (t < end);
	return t;
}

// The traced function. noipa: no inlining, cloning (.constprop/.isra) or
// interprocedural assumptions, so the symbol is the code that runs. The
// Makefile also passes -fno-optimize-sibling-calls so the recursion stays
// real nested calls (each one hits the entry and the return probe).
__attribute__((noipa)) uint64_t monitored_method(int depth, uint64_t method_time_ns)
{
#ifdef MOO_USDT
	/* moobench_usdt: a USDT probe (a nop until traced) on every call. */
	DTRACE_PROBE1(moobench, call, depth);
#endif
	if (depth > 1)
		return monitored_method(depth - 1, method_time_ns) + 1;
	return method_time_ns ? busy_wait(method_time_ns) : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: moobench [-n CALLS] [-d DEPTH] [-t METHOD_TIME_NS] [-c CPU] [-w SECONDS] [-q]\n");
}

static long parse_num(const char *s, const char *what, long min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min) {
		fprintf(stderr, "moobench: bad %s '%s' (want an integer >= %ld)\n", what, s, min);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long calls = 200000, depth = 10, method_time = 0, cpu = -1, wait = 0;
	int quiet = 0, opt;

	while ((opt = getopt(argc, argv, "n:d:t:c:w:qh")) != -1) {
		switch (opt) {
		case 'n': calls = parse_num(optarg, "call count", 2); break;
		case 'd': depth = parse_num(optarg, "depth", 1); break;
		case 't': method_time = parse_num(optarg, "method time", 0); break;
		case 'c': cpu = parse_num(optarg, "cpu", 0); break;
		/* Sleep first: a traced process that stays idle (bench/stream.sh). */
		case 'w': wait = parse_num(optarg, "wait", 0); break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "moobench: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
			return 2;
		}
	}

	if (wait)
		sleep((unsigned)wait);
	long warm = calls / 2, measured = calls - warm;
	uint64_t *t = malloc(sizeof(*t) * (size_t)measured);
	if (!t) {
		fprintf(stderr, "moobench: out of memory for %ld timings\n", measured);
		return 2;
	}
	memset(t, 0, sizeof(*t) * (size_t)measured); // fault the pages in before timing
	volatile uint64_t sink = 0;

	for (long i = 0; i < warm; i++)
		sink += monitored_method((int)depth, (uint64_t)method_time);
	for (long i = 0; i < measured; i++) {
		uint64_t a = now_ns();
		sink += monitored_method((int)depth, (uint64_t)method_time);
		t[i] = now_ns() - a;
	}
	(void)sink;

	double sum = 0;
	for (long i = 0; i < measured; i++)
		sum += (double)t[i];
	qsort(t, (size_t)measured, sizeof(*t), cmp_u64);
	double d = (double)depth;
	double median = (measured % 2 ? (double)t[measured / 2]
				      : ((double)t[measured / 2 - 1] + (double)t[measured / 2]) / 2) / d;
	double mean = sum / (double)measured / d;
	double p10 = (double)t[measured / 10] / d, p90 = (double)t[measured * 9 / 10] / d;

	if (!quiet)
		printf("moobench: %ld top-level calls x depth %ld, method time %ld ns, "
		       "first %ld dropped as warm-up\n",
		       calls, depth, method_time, warm);
	printf("ns_per_call=%.1f median mean=%.1f p10=%.1f p90=%.1f calls=%ld depth=%ld "
	       "method_time_ns=%ld measured=%ld\n",
	       median, mean, p10, p90, calls * depth, depth, method_time, measured);
	free(t);
	return 0;
}
