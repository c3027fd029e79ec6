/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Small helpers shared by all commands: errors, exit codes, JSON, globs, time. */
#ifndef AT_UTIL_H
#define AT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status contract (design.md). */
enum {
	AT_EXIT_OK = 0,
	AT_EXIT_REGRESSION = 1,
	AT_EXIT_USAGE = 2, /* bad usage or bad input */
	AT_EXIT_ENV = 3,   /* missing privilege or kernel feature */
};

#define AT_ERRLEN 512

/* One line on stderr, prefixed "adaptrace: ". */
void at_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, prefixed "adaptrace: warning: ". */
void at_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the message and exit with code. */
void at_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

void *at_xcalloc(size_t n, size_t size);
void *at_xrealloc(void *p, size_t n, size_t size);
char *at_xstrdup(const char *s);

/* The file name in path: what follows its last '/', or path itself. */
const char *at_base_name(const char *path);

/* Shell-style glob (fnmatch). */
bool at_glob_match(const char *pattern, const char *s);

/* CLOCK_MONOTONIC, CLOCK_REALTIME and the calling thread's CPU time in ns. */
uint64_t at_now_ns(void);
uint64_t at_wall_ns(void);
uint64_t at_thread_cpu_ns(void);

/* Human duration like "1.23ms" into buf; returns buf. */
char *at_fmt_ns(char *buf, size_t len, double ns);
/* Human count like "12.3M" into buf; returns buf. */
char *at_fmt_count(char *buf, size_t len, uint64_t n);

/* An environment switch: set, not empty and not "0". */
bool at_env_flag(const char *name);

/* Parse a strictly positive number of seconds ("1", "0.5"); false if bad. */
bool at_parse_seconds(const char *s, double *out);

#endif
