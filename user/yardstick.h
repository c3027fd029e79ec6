/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The coarse budget's socket yardsticks: duty_inputs and duty_outputs
 * count the target's reads and writes (refcalls), and the kernel runs
 * them for every process's. With ADAPTRACE_YARDSTICKS=sampled
 * (experimental) they go in only around the probing windows and for short
 * samples; in between, the target's read and write system calls, which the
 * kernel counts anyway (/proc/PID/io), stand for them at the latest
 * sample's counts per call. A sample comes whenever the calls change kind:
 * their mean size, or the writes per read, moves.
 */
#ifndef AT_YARDSTICK_H
#define AT_YARDSTICK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adaptrace.h"

struct bpf_program;

struct at_yard_opts {
	struct bpf_program *inputs;  /* duty_inputs (NULL: no yardstick) */
	struct bpf_program *outputs; /* duty_outputs (NULL: not on this kernel) */
	struct bpf_program *accepts; /* duty_accepts, on libc's accepts (NULL: none) */
	int refcalls_fd;	     /* their per-CPU counters */
	pid_t pid;		     /* the target; 0: every process running exe */
	const char *exe;	     /* the -b executable */
};

/* The target's system calls, as /proc/PID/io counts them. */
struct at_io {
	uint64_t reads, writes;		  /* syscr, syscw */
	uint64_t read_bytes, write_bytes; /* rchar, wchar */
};

/* A sample: counts per read and per write call, and the calls' mean sizes. */
struct at_yard_rates {
	double per_call[AT_REFCALLS]; /* read slots per read call, write slots per write call */
	double read_size, write_size, writes_per_read;
	bool reads, writes; /* it saw read calls, write calls */
};

/* Whether refcalls' slot k follows the writes (else the reads); the read path's, neither. */
bool at_yard_write_slot(uint32_t k);
bool at_yard_imputed_slot(uint32_t k);

/*
 * The rates of a sample that counted[] in refcalls' slots over the system
 * calls io; false when it saw too few calls to stand for others.
 */
bool at_yard_rates_of(const uint64_t *counted, const struct at_io *io, struct at_yard_rates *r);

/*
 * Whether the system calls io, made while the yardsticks were out, are of
 * another kind than sample r saw: a new sample is due. False when too few
 * to tell.
 */
bool at_yard_shifted(const struct at_yard_rates *r, const struct at_io *io);

/*
 * Add to imputed[] what the yardsticks would have counted of the calls io,
 * at sample r's rates, less what they did count of them (counted[], NULL:
 * nothing, they were out).
 */
void at_yard_impute(const struct at_yard_rates *r, const struct at_io *io, const uint64_t *counted,
		    double *imputed);

/* Parse /proc/PID/io's text; false when a field is missing. */
bool at_io_parse(const char *text, struct at_io *io);

/*
 * What the programs (attached for the measurement only) cost each read and
 * write of a process they do not trace, in ns: every process pays it while
 * a recorder runs, and the target that much and their work. -1 when it
 * cannot be measured.
 */
double at_yard_cost_ns(struct bpf_program *inputs, struct bpf_program *outputs);

struct at_yard;

/* Attach both programs, in for good until at_yard_set_sampled(). */
struct at_yard *at_yard_new(const struct at_yard_opts *o);
void at_yard_free(struct at_yard *y);
bool at_yard_has_inputs(const struct at_yard *y);
bool at_yard_has_outputs(const struct at_yard *y);

/* In only when needed and for samples (true), or in for good (false). */
void at_yard_set_sampled(struct at_yard *y, bool sampled, uint64_t now);
bool at_yard_sampled(const struct at_yard *y);
/*
 * A window is about to need them (need: they go in now), or no longer
 * does (they may go out).
 */
void at_yard_need(struct at_yard *y, bool need, uint64_t now);
/* CLOCK_MONOTONIC ns since they are in, 0 while out. */
uint64_t at_yard_in_since(const struct at_yard *y);
/* A window's probes go in: a sample ends here, and the window's counts are exact. */
void at_yard_window_arms(struct at_yard *y, uint64_t now);
/* Read the system calls, impute, sample; returns ms until the next call is due, or -1. */
int at_yard_poll(struct at_yard *y, uint64_t now);

/*
 * refcalls' first n slots so far, all CPUs, with what was imputed added to
 * each slot's all; false on error.
 */
bool at_yard_read(struct at_yard *y, struct at_reads *out, uint32_t n);

/*
 * Reads and writes imputed so far, and the ns the programs were in (the
 * rest of at_yard_read()'s reads and writes they counted).
 */
void at_yard_totals(const struct at_yard *y, uint64_t now, uint64_t *imputed, uint64_t *in_ns);

#endif
