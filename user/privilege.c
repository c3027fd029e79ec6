// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privilege.h"
#include "util.h"

/* Not in Debian 12's uapi headers' older copies; values are ABI. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

/* This process's capability sets into d; false when the kernel will not say. */
static bool read_caps(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

	return !syscall(SYS_capget, &h, d);
}

int at_check_privilege(char *err, size_t errlen)
{
	struct __user_cap_data_struct d[2] = {0};
	bool bpf, perfmon;

	if (!read_caps(d))
		return 0; /* let the kernel say no later, with its own error */
	if (has_cap(d, CAP_SYS_ADMIN))
		return 0;
	bpf = has_cap(d, CAP_BPF);
	perfmon = has_cap(d, CAP_PERFMON);
	if (bpf && perfmon)
		return 0;
	snprintf(err, errlen,
		 "tracing needs root: missing %s%s%s (run as root, e.g. with sudo, or grant "
		 "CAP_BPF and CAP_PERFMON)",
		 bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return AT_EXIT_ENV;
}

bool at_may_leave_idle_class(void)
{
	struct __user_cap_data_struct d[2] = {0};
	struct rlimit rl;

	if (read_caps(d) && has_cap(d, CAP_SYS_NICE))
		return true;
	/* Nice 0 is allowed when RLIMIT_NICE reaches 20 (its scale is 20 - nice). */
	return !getrlimit(RLIMIT_NICE, &rl) && rl.rlim_cur >= 20;
}
