/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Watch what is traced while recording: a traced binary replaced on disk
 * (a package upgrade renames a new file over the path: running processes
 * keep the old, probed file, new ones start from the unprobed new one), and
 * a traced process that executes another program (its probes no longer
 * fire). Checked once per interval; cheap (a few stat calls).
 */
#ifndef AT_WATCH_H
#define AT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct at_target;
struct at_watch;

/* pid: the traced process (-p, or the -- CMD child), 0 for -b. */
struct at_watch *at_watch_new(const struct at_target *t, pid_t pid);
void at_watch_free(struct at_watch *w);

/* Warn once about each binary replaced on disk since the start. */
void at_watch_replaced(struct at_watch *w);

/*
 * True when the traced process now runs a program other than the traced
 * executable; exe gets its path. False when it still does, has exited,
 * or there is no single traced process.
 */
bool at_watch_exec(struct at_watch *w, char *exe, size_t len);

#endif
