/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Telling a user without the needed capabilities what is missing. */
#ifndef AT_PRIVILEGE_H
#define AT_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Loading tracing programs needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN).
 * Returns 0, or AT_EXIT_ENV with a one-line message naming what is missing.
 */
int at_check_privilege(char *err, size_t errlen);

/*
 * Whether a thread put in SCHED_IDLE may return to SCHED_OTHER: that needs
 * CAP_SYS_NICE or an RLIMIT_NICE that allows nice 0.
 */
bool at_may_leave_idle_class(void);

#endif
