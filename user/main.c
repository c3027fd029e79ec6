// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* adaptrace: subcommand dispatch and the top-level help. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("Usage: adaptrace COMMAND [OPTIONS]\n"
	      "\n"
	      "Trace the functions of user-space programs with eBPF uprobes, spending\n"
	      "overhead only where it pays: exact call counts and latency histograms for\n"
	      "every function (coarse phase), detail only for the relevant ones.\n"
	      "\n"
	      "Commands:\n"
	      "  list     list the functions (and how cheaply each can be probed)\n"
	      "  record   trace a process, a binary or a command into a trace file\n"
	      "  report   print the figures of a trace file\n"
	      "  diff     compare two trace files: regressions, calls changed (CI)\n"
	      "  export   convert a trace file: chrome (Perfetto), csv, openmetrics\n"
	      "  top      live view of the hottest functions of a process or binary\n"
	      "\n"
	      "Targets: -p PID (one process), -b PATH (every process running PATH),\n"
	      "-- CMD [ARG]... (start CMD with the probes attached).\n"
	      "\n"
	      "Run 'adaptrace COMMAND --help' for a command's options.\n"
	      "Exit status: 0 success, 1 diff (or record --baseline) found a regression,\n"
	      "2 bad usage or input, 3 missing privilege or kernel feature; record -- CMD\n"
	      "exits with CMD's status.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
	    // clang-format off
	    {"list", cmd_list},
	    {"record", cmd_record},
	    {"report", cmd_report},
	    {"diff", cmd_diff},
	    {"export", cmd_export},
	    {"top", cmd_top},
	    // clang-format on
	};

	if (argc < 2) {
		usage(stderr);
		return AT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return AT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("adaptrace %s\n", AT_VERSION);
		return AT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	at_err("unknown command '%s': run 'adaptrace --help' for the list", argv[1]);
	return AT_EXIT_USAGE;
}
