/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What to trace: the binaries of a -p PID, -b PATH or -- CMD target, and
 * the functions of each selected by -f/-x/-l. Shared by list, record, top.
 *
 * Selection rules:
 *  - no -f: every function of every binary, minus start-up/runtime noise
 *    (at_is_startup_noise); with -f: the functions whose name matches any
 *    -f glob, in any binary (noise included: it was asked for by name);
 *  - then every function matching a -x glob is dropped;
 *  - a -f glob that matches no function anywhere is an error, and so is
 *    an empty selection.
 * Library binaries (-l) follow the main one, in command-line order.
 */
#ifndef AT_TARGET_H
#define AT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "symbols.h"

/* Growable list of borrowed strings (argv entries), for -f, -x, -l. */
struct at_strv {
	const char **v;
	size_t n;
};

void at_strv_push(struct at_strv *sv, const char *s);
void at_strv_free(struct at_strv *sv);

struct at_target_opts {
	pid_t pid;		/* -p PID, or 0 */
	const char *binary;	/* -b PATH or the resolved -- CMD; NULL with pid */
	struct at_strv include; /* -f */
	struct at_strv exclude; /* -x */
	struct at_strv libs;	/* -l */
	bool no_site_opt;	/* --no-site-opt: probe every first instruction */
	bool no_funcs;		/* USDT only: resolve the binaries, select no function */
};

/* One binary to probe. */
struct at_target_bin {
	/*
	 * Path to give the kernel and to read symbols from: "/proc/PID/exe"
	 * for a process's executable, "/proc/PID/root/<path>" for its
	 * libraries (other mount namespaces, replaced files), else an
	 * absolute canonical path.
	 */
	char *attach_path;
	char *display_path; /* path as the target sees it, for output and files */
	bool is_main;	    /* the executable (-p, -b, -- CMD), not a -l library */
	struct at_elf elf;
	size_t *sel; /* selected indexes into elf.funcs, ascending */
	size_t nsel;
	bool *refused; /* per selected function: the kernel would not probe it (record) */
};

struct at_target {
	pid_t pid;		    /* the process (a thread id is mapped to its process), or 0 */
	struct at_target_bin *bins; /* bins[0] is the main binary */
	size_t nbins;
	size_t nsel; /* selected functions over all binaries */
};

/*
 * Resolve the binaries of o (exactly one of pid and binary set), load their
 * symbols and select functions. Returns AT_EXIT_OK, or AT_EXIT_USAGE (no
 * such process or file, not ELF, no symbols, glob matches nothing...) or
 * AT_EXIT_ENV (permission denied: needs root / CAP_SYS_PTRACE), with a
 * one-line message in err that says what to do. t is empty on failure.
 */
int at_target_resolve(const struct at_target_opts *o, struct at_target *t, char *err,
		      size_t errlen);
void at_target_free(struct at_target *t);

/*
 * Find CMD as execvp() would: as is when it contains '/', else through
 * $PATH (default "/usr/local/bin:/usr/bin:/bin"). Sets *out to a malloc'd
 * absolute path and returns AT_EXIT_OK, or AT_EXIT_USAGE with err set.
 */
int at_resolve_command(const char *cmd, char **out, char *err, size_t errlen);

/* Parse a PID argument: a positive decimal integer. */
bool at_parse_pid(const char *s, pid_t *pid);

#endif
