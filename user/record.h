/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The recorder as a library: 'record' runs it plain, 'top' with a hook. */
#ifndef AT_RECORD_H
#define AT_RECORD_H

#include <stdbool.h>

#include "model.h"
#include "report.h"

struct at_record_hook {
	/*
	 * Called after every interval with the window just taken and the
	 * whole-run aggregates so far; returning true stops the recording.
	 */
	bool (*on_window)(void *ctx, const struct at_profile_set *ps, const struct at_window *w);
	void *ctx;
};

/* 'adaptrace record ARGS', with an optional hook; returns the exit status. */
int at_record_run(int argc, char **argv, const struct at_record_hook *hook);

#endif
