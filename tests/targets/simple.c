/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * simple: two functions called a known number of times, built as PIE,
 * non-PIE and stripped (.dynsym only) variants.
 * Usage: simple [--wait-signal] [--exit N] [--signal N] [--fds]
 *   --exit N    exit with status N after the work
 *   --signal N  die of signal N after the work
 *   --fds     print "bpf_fds=N", the number of inherited BPF/perf descriptors
 */
#include <dirent.h>
#include <unistd.h>

#include "common.h"

#define ALPHA_CALLS 123
#define BETA_CALLS  45

static unsigned long n_alpha, n_beta;
volatile unsigned long simple_sink;

/* Global, so that a -rdynamic build exports them in .dynsym. */
TRACED int s_alpha(int x)
{
	n_alpha++;
	OPAQUE();
	return x + 1;
}

TRACED int s_beta(int x)
{
	n_beta++;
	simple_sink += (unsigned long)s_alpha(x);
	return x * 2;
}

/* Descriptors whose target names bpf or perf_event (leaked from a tracer). */
static int count_bpf_fds(void)
{
	char path[300], target[256];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "bpf") || strstr(target, "perf_event")) {
			fprintf(stderr, "inherited fd %s -> %s\n", de->d_name, target);
			n++;
		}
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int status = 0, sig = 0;

	for (int i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "--exit") == 0)
			status = atoi(argv[i + 1]);
		if (strcmp(argv[i], "--signal") == 0)
			sig = atoi(argv[i + 1]);
	}
	if (has_arg(argc, argv, "--wait-signal"))
		gate_wait();
	if (has_arg(argc, argv, "--fds"))
		printf("bpf_fds=%d\n", count_bpf_fds());

	/* s_beta calls s_alpha once, so call s_alpha directly the rest of the time. */
	for (int i = 0; i < BETA_CALLS; i++)
		s_beta(i);
	for (int i = 0; i < ALPHA_CALLS - BETA_CALLS; i++)
		simple_sink += (unsigned long)s_alpha(i);

	printf("s_alpha=%lu\n", n_alpha);
	printf("s_beta=%lu\n", n_beta);
	fflush(stdout);
	if (sig)
		raise(sig);
	return status;
}
