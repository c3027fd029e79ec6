// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * adaptrace record: attach the coarse programs, snapshot their maps every
 * interval into the trace file, and report at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "argspec.h"
#include "attach.h"
#include "callsites.h"
#include "coarse.skel.h"
#include "commands.h"
#include "detailctl.h"
#include "duty.h"
#include "relevance.h"
#include "diff.h"
#include "export.h"
#include "privilege.h"
#include "record.h"
#include "report.h"
#include "stats.h"
#include "target.h"
#include "tracefile.h"
#include "usdt_rec.h"
#include "util.h"
#include "watch.h"
#include "yardstick.h"

struct rec_opts {
	struct at_target_opts t;
	char **cmd; /* -- CMD ARG... */
	const char *output;
	double duration; /* seconds, 0 = until stopped */
	double interval;
	bool quiet;
	bool empty_probes;	      /* benchmark floor: empty programs, no file figures */
	bool entry_only;	      /* benchmark: empty entry programs and no return probes */
	struct at_strv usdt;	      /* -u */
	const char *baseline;	      /* --baseline: diff against it at exit */
	const char *openmetrics_file; /* rewritten every interval */
	const struct at_record_hook *hook;
	struct at_dctl_opts dopt;
};

/* Why the main loop stopped. */
enum stop_reason {
	STOP_NONE,
	STOP_DURATION,
	STOP_SIGNAL,
	STOP_TARGET_EXIT,
	STOP_WRITE_ERROR,
	STOP_TARGET_EXEC, /* the -p process executed another program */
	STOP_HOOK,	  /* the hook (top) asked to stop */
};

struct recorder {
	struct rec_opts *o;
	struct at_target tgt;
	struct coarse_bpf *skel;
	struct at_links entry_links, return_links;
	struct bpf_link *exec_link;
	struct bpf_link *exit_link;
	struct at_usdt_rec *usdt; /* -u, or NULL */
	size_t nrefused;	  /* selected, but the kernel will not probe them */
	struct at_stats_reader *stats;
	struct at_dctl *dctl; /* detail phase; NULL when off */
	struct at_duty *duty; /* coarse budget's duty cycle; NULL when off */
	struct at_duty_site *sites;
	struct at_callsites *callsites; /* per function id, for the windows */
	const char **paths;
	struct at_watch *watch; /* replaced binaries, exec of the target */
	char exec_path[256];	/* what the target executed */
	struct at_writer *w;
	/* In-memory copy of what the file holds, for the closing report. */
	struct at_trace t;
	struct at_profile_set ps;
	pid_t child; /* -- CMD */
	int child_status;
	bool child_exited;
	int go_fd; /* write end of the child's start pipe */
	uint64_t t0, last_tick;
	uint64_t tick_due;		 /* an interval's end waits for the window (0: none) */
	uint64_t nwaited, waited_max_ns; /* ... how often, and the longest (ADAPTRACE_DEBUG) */
	int stop_signal;
	enum stop_reason stop;
	char err[AT_ERRLEN];
};

static void record_usage(FILE *f)
{
	fputs("Usage: adaptrace record (-p PID | -b PATH | -- CMD [ARG]...) [options]\n"
	      "\n"
	      "Trace functions with uprobes and keep, per function, the exact call count,\n"
	      "inclusive and exclusive time, min/max, errors, calls in flight and a latency\n"
	      "histogram, snapshotted every interval into a trace file. Nothing leaves the\n"
	      "kernel per call.\n"
	      "\n"
	      "Target (exactly one):\n"
	      "  -p, --pid PID        that process, all its threads\n"
	      "  -b, --binary PATH    every process running PATH, including ones started later\n"
	      "  -- CMD [ARG]...      start CMD with the probes attached before its first\n"
	      "                       instruction; stop when it exits and exit with its status\n"
	      "\n"
	      "Selection:\n"
	      "  -f, --func GLOB      trace functions matching GLOB (repeatable; default: every\n"
	      "                       function of the main binary minus start-up noise such\n"
	      "                       as _start, _init, frame_dummy)\n"
	      "  -x, --exclude GLOB   leave out functions matching GLOB (repeatable)\n"
	      "  -l, --lib LIB        add a shared library, by path or by name as in the\n"
	      "                       process's maps (-l libc); all its functions unless -f\n"
	      "  -u, --usdt SPEC      trace USDT probes (.note.stapsdt) of the binaries\n"
	      "                       (repeatable; 'adaptrace list --usdt' shows them). With -u\n"
	      "                       and no -f, only the probes are traced. SPEC is one of:\n"
	      "                         PROVIDER:NAME            count each probe (globs: "
	      "'python:*')\n"
	      "                         PROVIDER:NAME(KEYS)      count per distinct key\n"
	      "                         PROVIDER:ENTRY+RETURN[(KEYS)]\n"
	      "                                                  pair two probes: per-key calls\n"
	      "                                                  and latency, like a function\n"
	      "                       KEYS is argN:TYPE,... (up to 4; arg1 is the probe's first\n"
	      "                       argument; TYPE str, int, uint or ptr). Strings are read up\n"
	      "                       to 63 bytes; a longer one ends in '...' in the row's name.\n"
	      "                       Each key is a row named PROVIDER:NAME[key,...] beside the\n"
	      "                       functions; up to 1024 keys. A pair's return closes the\n"
	      "                       thread's innermost open entry. Semaphores are raised only\n"
	      "                       while traced. For CPython, function__entry/return also\n"
	      "                       raise the 'line' semaphore (without it Python 3.11 reports\n"
	      "                       only calls from C) at no cost per line.\n"
	      "      --no-site-opt    probe every function's first instruction (default: move\n"
	      "                       the probe past a single-stepped endbr64 or similar onto\n"
	      "                       the first emulated instruction when that is provably\n"
	      "                       equivalent; see 'adaptrace list' for each site; and\n"
	      "                       under --budget, count a single-stepped leaf of the\n"
	      "                       executable at its call sites in the probing windows,\n"
	      "                       when those are all its calls and that is cheaper)\n"
	      "\n"
	      "Detail phase (arguments, return values and durations of sampled calls):\n"
	      "      --select EXPR    relevance expression choosing, every interval, which\n"
	      "                       functions get detail probes (see below); 'none' records\n"
	      "                       the coarse phase only\n"
	      "      --detail GLOB    always detail functions matching GLOB (repeatable)\n"
	      "      --args SPEC      decode a function's arguments (see below; at most two\n"
	      "                       strings per function); repeatable\n"
	      "      --budget PCT     slowdown the detail phase may add to the coarse-only run,\n"
	      "                       kept by the adaptive rate controller (default 5). Given\n"
	      "                       explicitly, it bounds the whole tracing, coarse probes\n"
	      "                       included: when they alone cost more for 3 s, the\n"
	      "                       costliest functions move to probing windows (up to\n"
	      "                       five per interval, 2 ms or more, sized to a quarter of\n"
	      "                       the budget; fewer and longer when writing their probes\n"
	      "                       in and out would cost more than another quarter; each\n"
	      "                       runs on to the end of the event loop's turn it read in)\n"
	      "                       and their figures become estimates, marked ~\n"
	      "                       with a 95 % interval (needs uprobe session links);\n"
	      "                       those run 1-3 times a turn of an event loop get\n"
	      "                       turn windows of their own too, between the others.\n"
	      "                       Detail gets what the coarse probes leave. Works with\n"
	      "                       --select none too\n"
	      "      --max-events N   at most N detail events per second in all\n"
	      "  Sampled calls go through a ring buffer; a full buffer drops events and counts\n"
	      "  them per function and CPU (report shows them). A function whose profile stays\n"
	      "  the same over two sampling cycles leaves detail until its latency distribution\n"
	      "  drifts for two intervals in a row. Uses the uprobe session link (Linux 6.13+)\n"
	      "  when the kernel has it (ADAPTRACE_NO_UPROBE_SESSION=1: uprobe + uretprobe).\n"
	      "\n"
	      "Recording:\n"
	      "  -o, --output FILE    trace file (default adaptrace.data, mode 0600; an existing\n"
	      "                       file is kept as FILE.old)\n"
	      "  -d, --duration SEC   stop after SEC seconds (default: Ctrl-C, SIGTERM, or the\n"
	      "                       target's exit)\n"
	      "      --interval SEC   snapshot interval (default 1)\n"
	      "  -q, --quiet          no report at the end\n"
	      "  -v, --verbose        print the detail phase's selection changes as they\n"
	      "                       happen (functions entering and leaving detail, why)\n"
	      "      --baseline FILE  at exit, compare with the recording FILE as 'adaptrace\n"
	      "                       diff FILE OUTPUT' does (p50, 10 %, alpha 0.01), print\n"
	      "                       the verdict and exit 1 on a regression (CMD's own\n"
	      "                       non-zero status takes precedence)\n"
	      "      --openmetrics-file PATH\n"
	      "                       rewrite PATH atomically every interval with the figures\n"
	      "                       so far, in OpenMetrics text (node_exporter textfile\n"
	      "                       collector; see 'adaptrace export --help')\n"
	      "\n"
	      "Figures: CALLS is exact. TOTAL is inclusive time with recursion counted once;\n"
	      "SELF excludes traced callees; MEAN/P50/P90/P99/MAX are per-call inclusive\n"
	      "durations (histogram resolution 12.5 %). ERRORS counts negative return values.\n"
	      "Calls that never return (longjmp, exceptions, thread exit) are counted but not\n"
	      "timed, and the report says how many there were.\n"
	      "\n"
	      "Probes attach through the kernel's uprobe_multi link (Linux 6.6+); without it,\n"
	      "one perf-event link per function (slower to attach). Needs root, or CAP_BPF\n"
	      "and CAP_PERFMON (and CAP_SYS_PTRACE for -p).\n"
	      "\n"
	      "Examples:\n"
	      "  adaptrace record -- ./server --port 8080\n"
	      "  adaptrace record -p 1234 -l libc -f 'malloc*' -d 10\n"
	      "  adaptrace record -b /usr/bin/python3.11 -o py.data\n"
	      "  adaptrace record --select 'most latent' --args 'parse(str,i32)' -- ./server\n"
	      "  adaptrace record -u 'python:function__entry+function__return(arg1:str,arg2:str)' "
	      "\\\n"
	      "      -- python3.11 app.py\n"
	      "  adaptrace record -p 1234 -l libstdc++.so.6 -u 'libstdcxx:throw'\n"
	      "\n"
	      "Exit status: 0, CMD's status with -- CMD, 2 bad usage or input, 3 missing\n"
	      "privilege or kernel feature, or a write error.\n",
	      f);
	fputs("\nRelevance expressions (--select):\n", f);
	fputs(at_rel_help(), f);
	fputs("\nArgument declarations (--args):\n", f);
	fputs(at_argspec_help(), f);
}

/* A finite number in [lo, hi], the whole string. */
static bool parse_number(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

static void parse_opts(int argc, char **argv, struct rec_opts *o)
{
	enum {
		OPT_INTERVAL = 256,
		OPT_EMPTY,
		OPT_SELECT,
		OPT_DETAIL,
		OPT_ARGS,
		OPT_BUDGET,
		OPT_MAXEV,
		OPT_DRATE,
		OPT_RINGBUF,
		OPT_EMPTY_ENTRY,
		OPT_NO_SITE_OPT,
		OPT_BASELINE,
		OPT_OPENMETRICS,
	};
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"binary", required_argument, NULL, 'b'},
	    {"func", required_argument, NULL, 'f'},
	    {"exclude", required_argument, NULL, 'x'},
	    {"lib", required_argument, NULL, 'l'},
	    {"output", required_argument, NULL, 'o'},
	    {"duration", required_argument, NULL, 'd'},
	    {"interval", required_argument, NULL, OPT_INTERVAL},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"empty-probes", no_argument, NULL, OPT_EMPTY},
	    {"empty-entry-probes", no_argument, NULL, OPT_EMPTY_ENTRY},
	    {"no-site-opt", no_argument, NULL, OPT_NO_SITE_OPT},
	    {"baseline", required_argument, NULL, OPT_BASELINE},
	    {"openmetrics-file", required_argument, NULL, OPT_OPENMETRICS},
	    {"usdt", required_argument, NULL, 'u'},
	    {"select", required_argument, NULL, OPT_SELECT},
	    {"detail", required_argument, NULL, OPT_DETAIL},
	    {"args", required_argument, NULL, OPT_ARGS},
	    {"budget", required_argument, NULL, OPT_BUDGET},
	    {"max-events", required_argument, NULL, OPT_MAXEV},
	    {"detail-rate", required_argument, NULL, OPT_DRATE},
	    {"ringbuf-size", required_argument, NULL, OPT_RINGBUF},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, idx, ntargets = 0;

	o->output = "adaptrace.data";
	o->interval = 1.0;
	/* '+': stop at the first non-option so "-- CMD -x" stays CMD's. */
	while ((c = getopt_long(argc, argv, "+p:b:f:x:l:o:d:u:qvh", opts, &idx)) != -1) {
		switch (c) {
		case 'p':
			if (!at_parse_pid(optarg, &o->t.pid))
				at_die(AT_EXIT_USAGE, "-p takes a process id, not '%s'", optarg);
			ntargets++;
			break;
		case 'b':
			o->t.binary = optarg;
			ntargets++;
			break;
		case 'f':
			at_strv_push(&o->t.include, optarg);
			break;
		case 'x':
			at_strv_push(&o->t.exclude, optarg);
			break;
		case 'l':
			at_strv_push(&o->t.libs, optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			if (!at_parse_seconds(optarg, &o->duration))
				at_die(AT_EXIT_USAGE,
				       "-d takes a positive number of seconds, not '%s'", optarg);
			break;
		case OPT_INTERVAL:
			if (!at_parse_seconds(optarg, &o->interval) || o->interval < 0.01)
				at_die(AT_EXIT_USAGE,
				       "--interval takes seconds (at least 0.01), not '%s'",
				       optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->dopt.verbose = true;
			break;
		case OPT_EMPTY:
			o->empty_probes = true;
			break;
		case OPT_EMPTY_ENTRY:
			o->empty_probes = o->entry_only = true;
			break;
		case OPT_NO_SITE_OPT:
			o->t.no_site_opt = true;
			break;
		case OPT_BASELINE:
			o->baseline = o->dopt.baseline = optarg;
			break;
		case OPT_OPENMETRICS:
			o->openmetrics_file = optarg;
			break;
		case 'u':
			at_strv_push(&o->usdt, optarg);
			break;
		case OPT_SELECT:
			o->dopt.select = optarg;
			break;
		case OPT_DETAIL:
			at_strv_push(&o->dopt.detail, optarg);
			break;
		case OPT_ARGS:
			at_strv_push(&o->dopt.args, optarg);
			break;
		case OPT_BUDGET:
			if (!parse_number(optarg, 0.01, 100, &o->dopt.budget_pct))
				at_die(AT_EXIT_USAGE,
				       "--budget takes a percentage between 0.01 and 100, not '%s'",
				       optarg);
			break;
		case OPT_MAXEV: {
			double v;

			if (!parse_number(optarg, 1, 1e12, &v))
				at_die(AT_EXIT_USAGE,
				       "--max-events takes a positive number of events per second, "
				       "not '%s'",
				       optarg);
			o->dopt.max_events = (uint64_t)v;
			break;
		}
		case OPT_DRATE:
			if (!parse_number(optarg, 1e-6, 1, &o->dopt.fixed_rate))
				at_die(AT_EXIT_USAGE,
				       "--detail-rate takes a rate in (0, 1], not '%s'", optarg);
			break;
		case OPT_RINGBUF: {
			double v;

			if (!parse_number(optarg, 4096, 1 << 30, &v))
				at_die(AT_EXIT_USAGE,
				       "--ringbuf-size takes bytes (4096 to 1 GiB), not '%s'",
				       optarg);
			o->dopt.ringbuf_bytes = (size_t)v;
			break;
		}
		case 'h':
			record_usage(stdout);
			exit(AT_EXIT_OK);
		default:
			fputs("Run 'adaptrace record --help' for the options.\n", stderr);
			exit(AT_EXIT_USAGE);
		}
	}
	if (optind < argc) {
		o->cmd = &argv[optind];
		ntargets++;
	}
	if (ntargets != 1)
		at_die(AT_EXIT_USAGE, "record needs exactly one target: -p PID, -b PATH or -- CMD "
				      "(see adaptrace record --help)");
	/* -u alone traces the probes only; -f adds functions. */
	if (o->usdt.n && !o->t.include.n)
		o->t.no_funcs = true;
}

/* Fork CMD, held before exec until the probes are attached. */
static int spawn_held(struct recorder *r)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char go;

		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(127); /* the recorder gave up */
		execvp(r->o->cmd[0], r->o->cmd);
		fprintf(stderr, "adaptrace: cannot run %s: %s\n", r->o->cmd[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[0]);
	r->child = pid;
	r->go_fd = pipefd[1];
	return 0;
}

static void release_child(struct recorder *r)
{
	char go = 1;

	if (r->go_fd >= 0) {
		if (write(r->go_fd, &go, 1) != 1)
			at_warn("could not start %s", r->o->cmd[0]);
		close(r->go_fd);
		r->go_fd = -1;
	}
}

/* kernel's s_dev encoding (MKDEV), from the user-space one. */
static uint32_t kernel_dev(dev_t d)
{
	return (major(d) << 20) | minor(d);
}

static void kv_add(struct at_trace *t, const char *k, const char *v)
{
	t->kv = at_xrealloc(t->kv, t->nkv + 1, sizeof(*t->kv));
	t->kv[t->nkv].key = at_xstrdup(k);
	t->kv[t->nkv].value = at_xstrdup(v);
	t->nkv++;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = at_xcalloc(len, 1);
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* Header key/values, binaries and symbols, mirrored in memory for the report. */
static void describe(struct recorder *r, int argc, char **argv)
{
	struct at_trace *t = &r->t;
	struct utsname u;
	char buf[PATH_MAX + 64];
	char *cmdline = join_args(argc, argv);
	time_t now = time(NULL);
	uint32_t id = 0;

	kv_add(t, "tool_version", AT_VERSION);
	uname(&u);
	kv_add(t, "kernel", u.release);
	kv_add(t, "hostname", u.nodename);
	if (r->o->t.pid)
		snprintf(buf, sizeof(buf), "pid %d (%s)", (int)r->tgt.pid,
			 r->tgt.bins[0].display_path);
	else if (r->o->cmd)
		snprintf(buf, sizeof(buf), "command %s", r->tgt.bins[0].display_path);
	else
		snprintf(buf, sizeof(buf), "binary %s", r->tgt.bins[0].display_path);
	kv_add(t, "target", buf);
	kv_add(t, "command_line", cmdline);
	free(cmdline);
	if (r->o->cmd) {
		int n = 0;
		char *c;

		while (r->o->cmd[n])
			n++;
		c = join_args(n, r->o->cmd);
		kv_add(t, "target_command", c);
		free(c);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, at_wall_ns());
	kv_add(t, "start_time_ns", buf);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	kv_add(t, "start_time", buf);
	snprintf(buf, sizeof(buf), "%.0f", r->o->interval * 1e9);
	kv_add(t, "interval_ns", buf);
	kv_add(t, "attach", at_features()->uprobe_multi ? "uprobe_multi" : "perf_event");
	kv_add(t, "phase", r->o->empty_probes ? "empty" : "coarse");

	t->nbins = r->tgt.nbins;
	t->bins = at_xcalloc(t->nbins, sizeof(*t->bins));
	t->nsyms = r->tgt.nsel;
	t->syms = at_xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*t->syms));
	for (size_t b = 0; b < r->tgt.nbins; b++) {
		const struct at_target_bin *tb = &r->tgt.bins[b];

		t->bins[b].path = at_xstrdup(tb->display_path);
		snprintf(t->bins[b].build_id, sizeof(t->bins[b].build_id), "%s", tb->elf.build_id);
		for (size_t i = 0; i < tb->nsel; i++) {
			const struct at_elf_func *fn = &tb->elf.funcs[tb->sel[i]];
			struct at_symbol *s = &t->syms[id];

			s->id = id++;
			s->binary = (uint32_t)b;
			s->addr = fn->addr;
			s->size = fn->size;
			s->offset = fn->offset;
			s->entry = fn->entry;
			s->name = at_xstrdup(fn->name);
		}
	}
	if (r->usdt)
		at_usdtrec_describe(r->usdt, t);
}

/* --budget bounds the coarse probes too, by a duty cycle on session links. */
static bool want_duty(const struct rec_opts *o)
{
	return o->dopt.budget_pct > 0 && !o->empty_probes && !o->entry_only &&
	       !at_dctl_off(&o->dopt) && at_features()->uprobe_session;
}

static int load_programs(struct recorder *r)
{
	uint32_t n = (uint32_t)r->tgt.nsel + at_usdtrec_nids(r->usdt);
	struct coarse_bpf *s;
	struct stat st;
	int err;

	if (!at_env_flag("ADAPTRACE_DEBUG"))
		libbpf_set_print(NULL);
	s = coarse_bpf__open();
	if (!s) {
		snprintf(r->err, sizeof(r->err), "cannot open the BPF programs: %s",
			 strerror(errno));
		return -errno;
	}
	r->skel = s;
	/* One spare slot (id n) for the detail phase's cost calibration. */
	bpf_map__set_max_entries(s->maps.fstats, n + 1);
	bpf_map__set_max_entries(s->maps.hists, n + 1);
	bpf_map__set_max_entries(s->maps.conc, n + 1);
	if (!r->o->t.pid && !r->o->cmd && stat(r->tgt.bins[0].attach_path, &st) == 0) {
		s->rodata->target_ino = st.st_ino;
		s->rodata->target_dev = kernel_dev(st.st_dev);
	}
	at_prepare_program(s->progs.coarse_entry);
	at_prepare_program(s->progs.coarse_return);
	at_prepare_program(s->progs.empty_entry);
	at_prepare_program(s->progs.empty_return);
	bpf_program__set_autoload(s->progs.coarse_session, want_duty(r->o));
	bpf_program__set_autoload(s->progs.duty_inputs, want_duty(r->o) && at_has_sock_recv_tp());
	bpf_program__set_autoload(s->progs.duty_outputs,
				  bpf_program__autoload(s->progs.duty_inputs) &&
				      at_has_sock_send_tp());
	bpf_program__set_autoload(s->progs.duty_accepts,
				  bpf_program__autoload(s->progs.duty_inputs));
	if (bpf_program__autoload(s->progs.duty_inputs))
		bpf_map__set_max_entries(s->maps.wcalls, (n + 1) * AT_WCALL_SLOTS);
	else /* preallocated per CPU: no windows, no room */
		bpf_map__set_max_entries(s->maps.wcallers, 1);
	if (want_duty(r->o))
		bpf_program__set_expected_attach_type(s->progs.coarse_session,
						      AT_BPF_TRACE_UPROBE_SESSION);
	err = coarse_bpf__load(s);
	if (err) {
		snprintf(r->err, sizeof(r->err),
			 "cannot load the BPF programs (%s): the kernel needs BTF and BPF task "
			 "storage (Linux 5.11+)",
			 strerror(-err));
		return err;
	}
	if (r->usdt) {
		struct at_usdt_maps m = {s->maps.fstats, s->maps.hists, s->maps.conc, s->maps.diag};

		err = at_usdtrec_load(r->usdt, &m, s->rodata->target_ino, s->rodata->target_dev,
				      r->o->empty_probes, r->err, sizeof(r->err));
		if (err)
			return -EINVAL;
	}
	r->stats = at_stats_reader_new(bpf_map__fd(s->maps.fstats), bpf_map__fd(s->maps.hists),
				       bpf_map__fd(s->maps.conc), bpf_map__fd(s->maps.diag), n);
	return 0;
}

/* Name the functions the kernel would not probe; they stay in the table uncalled. */
static size_t warn_refused(const struct at_target_bin *tb, const bool *refused)
{
	char names[256] = "";
	size_t n = 0, len = 0;

	for (size_t i = 0; i < tb->nsel; i++) {
		const char *name = tb->elf.funcs[tb->sel[i]].name;

		if (!refused[i])
			continue;
		if (n++ < 5 && len + strlen(name) + 3 < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "", name);
	}
	if (n)
		at_warn(
		    "the kernel cannot probe the first instruction of %zu function%s in %s (%s%s); "
		    "not traced",
		    n, n == 1 ? "" : "s", tb->display_path, names, n > 5 ? ", ..." : "");
	return n;
}

/* Libraries are shared by every process: under -b keep only the executable's calls. */
static uint64_t site_flags(const struct at_target_bin *tb, pid_t pid)
{
	return (!pid && !tb->is_main) ? AT_COOKIE_EXE_FILTER : 0;
}

/* Attach one direction of one binary's functions; ids continue from *id. */
static int attach_binary(struct recorder *r, struct at_target_bin *tb, bool retprobe, pid_t pid,
			 uint32_t *id)
{
	struct bpf_program *prog =
	    retprobe
		? (r->o->empty_probes ? r->skel->progs.empty_return : r->skel->progs.coarse_return)
		: (r->o->empty_probes ? r->skel->progs.empty_entry : r->skel->progs.coarse_entry);
	struct at_links *links = retprobe ? &r->return_links : &r->entry_links;
	uint64_t *offs = at_xcalloc(tb->nsel, sizeof(*offs));
	uint64_t *cookies = at_xcalloc(tb->nsel, sizeof(*cookies));
	uint64_t flags = site_flags(tb, pid);
	int err;

	if (!tb->refused)
		tb->refused = at_xcalloc(tb->nsel ? tb->nsel : 1, sizeof(*tb->refused));
	for (size_t i = 0; i < tb->nsel; i++) {
		offs[i] = tb->elf.funcs[tb->sel[i]].offset;
		cookies[i] = (*id)++ | flags;
		if (tb->elf.funcs[tb->sel[i]].entry == AT_ENTRY_REFUSED)
			tb->refused[i] = true;
	}
	err = at_attach_uprobes(links, prog, retprobe, tb->attach_path, offs, cookies, tb->nsel,
				pid, tb->refused, r->err, sizeof(r->err));
	if (!err && !retprobe)
		r->nrefused += warn_refused(tb, tb->refused);
	free(offs);
	free(cookies);
	return err;
}

/*
 * Returns first, so that every timed call has its entry frame. The exec
 * and exit tracepoints clear the shadow stacks of threads that exec or
 * exit, before any probe can push a frame.
 */
static int attach_all(struct recorder *r)
{
	pid_t pid = r->o->cmd ? r->child : r->tgt.pid;
	uint32_t id = 0;
	int err = 0;

	if (!r->o->empty_probes) {
		r->exec_link = bpf_program__attach(r->skel->progs.coarse_exec);
		if (r->exec_link)
			r->exit_link = bpf_program__attach(r->skel->progs.coarse_exit);
		if (!r->exec_link || !r->exit_link) {
			err = -errno;
			snprintf(r->err, sizeof(r->err), "cannot attach to sched_process_%s: %s",
				 r->exec_link ? "exit" : "exec", strerror(-err));
			return err;
		}
		/* They clear the verdicts of processes that exec or exit. */
		r->skel->bss->exe_verdicts_on = true;
	}

	/* All return links before all entry links: see detach_all(). */
	for (int pass = r->o->entry_only; pass < 2 && !err; pass++) {
		id = 0;
		for (size_t b = 0; b < r->tgt.nbins && !err; b++)
			if (r->tgt.bins[b].nsel)
				err = attach_binary(r, &r->tgt.bins[b], pass == 0, pid, &id);
	}
	if (!err && r->usdt)
		err = at_usdtrec_attach(r->usdt, pid ? pid : -1, r->err, sizeof(r->err));
	if (!err)
		at_links_move_up(&r->return_links);
	return err;
}

/*
 * Return links go first. Releasing any uprobe link waits for an SRCU grace
 * period that calls in flight under a return probe hold, and the kernel
 * extends that hold on every new return-probe hit on the thread: while a
 * return probe stays attached to a hot function, another link's release
 * can wait forever. at_links_move_up() gives them the highest descriptors
 * so that an exit by SIGKILL releases them first too. The detail phase's
 * return and session links are released together with them, each in its
 * own thread, since any one of them left attached would hold the others.
 */
static void detach_all(struct recorder *r)
{
	if (r->skel && r->skel->bss)
		r->skel->bss->returns_off = true;
	at_duty_take_links(r->duty, &r->return_links);
	at_dctl_detach_returns(r->dctl, &r->return_links);
	at_duty_join(r->duty);
	at_usdtrec_detach(r->usdt);
	at_dctl_detach(r->dctl);
	at_links_destroy(&r->entry_links);
	if (r->skel && r->skel->bss)
		r->skel->bss->exe_verdicts_on = false;
	bpf_link__destroy(r->exec_link);
	r->exec_link = NULL;
	bpf_link__destroy(r->exit_link);
	r->exit_link = NULL;
}

/*
 * The call sites where the windows count the single-stepped functions of
 * the executable, ids first..: an emulated call costs the target a twentieth
 * of a single-stepped entry. Not in libraries, whose exported functions
 * other objects call through their PLTs. ADAPTRACE_NO_CALLSITES=1 and
 * --no-site-opt keep every entry probe.
 */
static void find_callsites(struct recorder *r, const struct at_target_bin *tb, uint32_t first)
{
	uint64_t *addr, *size;
	uint32_t *ids, n = 0, q = 0, nsites = 0;
	struct at_callsites *cs;
	char err[AT_ERRLEN];

	if (!tb->is_main || r->o->t.no_site_opt || at_env_flag("ADAPTRACE_NO_CALLSITES"))
		return;
	addr = at_xcalloc(tb->nsel + 1, sizeof(*addr));
	size = at_xcalloc(tb->nsel + 1, sizeof(*size));
	ids = at_xcalloc(tb->nsel + 1, sizeof(*ids));
	for (size_t i = 0; i < tb->nsel; i++) {
		const struct at_elf_func *f = &tb->elf.funcs[tb->sel[i]];

		if (f->entry != AT_ENTRY_SSTEP || (tb->refused && tb->refused[i]))
			continue;
		addr[n] = f->addr;
		size[n] = f->size;
		ids[n++] = first + (uint32_t)i;
	}
	cs = at_xcalloc(n + 1, sizeof(*cs));
	if (n && at_callsites_find(tb->attach_path, addr, size, n, cs, err, sizeof(err)))
		at_err("duty: no call sites: %s", err);
	for (uint32_t k = 0; k < n; k++) {
		if (!cs[k].n)
			continue;
		r->callsites[ids[k]] = cs[k];
		r->sites[ids[k]].calls = &r->callsites[ids[k]];
		q++;
		nsites += cs[k].n;
	}
	if (at_env_flag("ADAPTRACE_DEBUG"))
		at_err("duty: %u of %u single-stepped functions of %s can be counted at their %u "
		       "call sites in windows",
		       q, n, tb->display_path, nsites);
	free(cs);
	free(addr);
	free(size);
	free(ids);
}

/*
 * What the budget's socket yardsticks cost each read and write, measured
 * before the duty cycle attaches them for good (setup_duty()'s condition).
 * No process is the target meanwhile, so none is counted and every event
 * takes the cheapest way out: the floor every process pays.
 */
static void yardstick_cost(struct recorder *r)
{
	struct bpf_program *in = r->skel->progs.duty_inputs, *out = r->skel->progs.duty_outputs;
	uint32_t tgid = r->skel->bss->ref_tgid;
	char v[32];
	double ns;

	if (!r->dctl || !want_duty(r->o) || !r->tgt.nsel || !bpf_program__autoload(in))
		return;
	r->skel->bss->ref_tgid = UINT32_MAX;
	ns = at_yard_cost_ns(in, bpf_program__autoload(out) ? out : NULL);
	r->skel->bss->ref_tgid = tgid;
	if (ns >= 0) {
		snprintf(v, sizeof(v), "%.0f", ns);
		kv_add(&r->t, "yardstick_event_ns", v);
	}
}

/*
 * The start-up line of -b: given names the path as typed. -b follows links,
 * and Debian's redis-server is redis-check-rdb: name both then.
 */
static void say_binary(const struct recorder *r, const char *given, size_t nprobed)
{
	const char *real = r->tgt.bins[0].display_path;
	bool renamed = strcmp(at_base_name(given), at_base_name(real));

	at_err("tracing %zu functions in %zu binar%s for every process running %s%s%s; "
	       "Ctrl-C to stop",
	       nprobed, r->tgt.nbins, r->tgt.nbins == 1 ? "y" : "ies", renamed ? given : real,
	       renamed ? ", which is " : "", renamed ? real : "");
}

/* The coarse budget's duty cycle: where each function id is probed. */
static void setup_duty(struct recorder *r)
{
	pid_t pid = r->o->cmd ? r->child : r->tgt.pid;
	struct at_duty_opts o = {0};
	uint32_t id = 0;

	if (!r->dctl || !want_duty(r->o) || !r->tgt.nsel)
		return;
	r->sites = at_xcalloc(r->tgt.nsel, sizeof(*r->sites));
	r->callsites = at_xcalloc(r->tgt.nsel, sizeof(*r->callsites));
	r->paths = at_xcalloc(r->tgt.nbins, sizeof(*r->paths));
	for (size_t b = 0; b < r->tgt.nbins; b++) {
		const struct at_target_bin *tb = &r->tgt.bins[b];
		uint32_t first = id;

		r->paths[b] = tb->attach_path;
		for (size_t i = 0; i < tb->nsel; i++, id++)
			r->sites[id] = (struct at_duty_site){
			    .bin = (uint32_t)b,
			    .off = tb->elf.funcs[tb->sel[i]].offset,
			    .flags = site_flags(tb, pid),
			    .refused = tb->refused && tb->refused[i],
			};
		find_callsites(r, tb, first);
	}
	o.session = r->skel->progs.coarse_session;
	o.gen = &r->skel->bss->gen;
	o.quiesce = &r->skel->bss->quiesce;
	o.window_on = &r->skel->bss->window_on;
	o.window_until = (uint64_t *)&r->skel->bss->window_until;
	o.read_after_window = &r->skel->bss->read_after_window;
	o.window_turns = &r->skel->bss->window_turns;
	o.window_seq = &r->skel->bss->window_seq;
	o.hits_counted = (const uint64_t *)&r->skel->bss->window_hits_counted;
	o.hits_phase = (const uint64_t *)r->skel->bss->window_hits_phase;
	o.uncalled = (const uint64_t *)r->skel->bss->window_uncalled;
	o.window_phase = &r->skel->bss->window_phase;
	o.wake_fd = bpf_map__fd(r->skel->maps.duty_wake);
	o.linger_woken = &r->skel->bss->linger_woken;
	o.turn_gates = &r->skel->bss->turn_gates;
	o.rp_tails = &r->skel->bss->rp_tails;
	o.quiesce_detail = at_dctl_quiesce;
	o.ctx = r->dctl;
	if (bpf_program__autoload(r->skel->progs.duty_inputs))
		o.inputs = r->skel->progs.duty_inputs;
	if (bpf_program__autoload(r->skel->progs.duty_outputs))
		o.outputs = r->skel->progs.duty_outputs;
	if (bpf_program__autoload(r->skel->progs.duty_accepts))
		o.accepts = r->skel->progs.duty_accepts;
	o.refcalls_fd = bpf_map__fd(r->skel->maps.refcalls);
	o.wcalls_fd = bpf_map__fd(r->skel->maps.wcalls);
	o.wcallers_fd = bpf_map__fd(r->skel->maps.wcallers);
	r->skel->bss->ref_tgid = (uint32_t)pid;
	o.paths = r->paths;
	o.sites = r->sites;
	o.n = id;
	o.pid = pid;
	o.exe = pid ? NULL : r->tgt.bins[0].attach_path;
	/*
	 * Up to five windows per interval: every interval gets a ratio of its
	 * own, and a workload whose phases alternate faster than that is still
	 * sampled in both (redis-benchmark's SET and GET runs, tenths of a
	 * second). The plan makes the period longer when the windows' writes
	 * cost too much (window_period()).
	 */
	o.period_s = fmin(fmax(r->o->interval / 5, 0.05), 2);
	o.step_s = r->o->interval;
	r->duty = at_duty_new(&o);
	at_dctl_set_duty(r->dctl, r->duty);
}

/*
 * Carry out what the detail controller planned for the coarse budget.
 * Returns when the moved functions' always-on probes stopped counting, or
 * 0 when none moved.
 */
static uint64_t apply_duty(struct recorder *r, uint64_t now)
{
	struct at_links detail = {0};
	const bool *demote, *turnwise;
	const double *cost;
	char err[AT_ERRLEN];
	uint32_t moved = 0;
	double frac, period_s;

	if (!at_dctl_coarse_demand(r->dctl, &demote, &turnwise, &cost, &frac, &period_s))
		return 0;
	for (uint32_t id = 0; id < at_duty_nfuncs(r->duty); id++)
		moved += demote[id] && !at_duty_is_demoted(r->duty, id);
	if (!moved) {
		at_duty_set_windows(r->duty, frac, period_s);
		return 0;
	}
	at_dctl_drop_detail(r->dctl, demote, now, &detail);
	if (at_duty_demote(r->duty, demote, turnwise, cost, frac, period_s, &r->entry_links,
			   &r->return_links, &detail, now, err, sizeof(err))) {
		at_warn("coarse budget: cannot move functions to probing windows: %s", err);
		at_links_destroy(&detail);
		return 0;
	}
	if (!r->o->quiet && moved == at_duty_ndemoted(r->duty))
		at_err("coarse budget: %u function%s cost more than --budget allows; probed "
		       "%.1f %% of the time from now on, their figures become estimates",
		       moved, moved == 1 ? "" : "s", 100 * at_duty_frac(r->duty));
	else if (!r->o->quiet)
		at_err("coarse budget: %u more function%s cost more than --budget allows (%u in "
		       "windows); probed %.1f %% of the time from now on",
		       moved, moved == 1 ? "" : "s", at_duty_ndemoted(r->duty),
		       100 * at_duty_frac(r->duty));
	return at_duty_moved_at(r->duty);
}

/* Per-interval consumers: the OpenMetrics file and the caller's hook (top). */
static void window_hooks(struct recorder *r, const struct at_window *win)
{
	const struct at_record_hook *h = r->o->hook;

	if (r->o->openmetrics_file) {
		int err = at_export_openmetrics_file(r->o->openmetrics_file, &r->t, r->ps.p);

		if (err)
			at_warn("cannot write %s: %s", r->o->openmetrics_file, strerror(-err));
	}
	if (h && h->on_window && h->on_window(h->ctx, &r->ps, win) && r->stop == STOP_NONE)
		r->stop = STOP_HOOK;
}

/* Snapshot the maps into one window, write it and fold it into the report. */
static int tick(struct recorder *r, uint64_t now)
{
	struct at_window win;
	int err = at_stats_snapshot(r->stats, &win);
	uint64_t moved_at = 0;

	if (err) {
		snprintf(r->err, sizeof(r->err), "cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	if (at_usdtrec_sync(r->usdt, &r->t, r->w, &r->ps, &win)) {
		snprintf(r->err, sizeof(r->err), "%s", at_writer_error(r->w));
		at_window_clear(&win);
		return -EIO;
	}
	at_duty_fill(r->duty, r->last_tick, now, &win);
	win.start_ns = r->last_tick - r->t0;
	win.end_ns = now - r->t0;
	r->last_tick = now;
	err = at_writer_window(r->w, &win);
	if (!err && r->dctl)
		err = at_dctl_tick(r->dctl, &win, now, r->w);
	if (!err && r->duty)
		moved_at = apply_duty(r, now);
	at_profile_set_add_window(&r->ps, &win);
	window_hooks(r, &win);
	at_window_clear(&win);
	if (err)
		snprintf(r->err, sizeof(r->err), "%s", at_writer_error(r->w));
	/*
	 * The moved functions' calls from here to the move are exact: a short
	 * interval of their own keeps them out of the windows' ratios.
	 */
	else if (moved_at > r->last_tick)
		err = tick(r, moved_at);
	return err;
}

/*
 * Once per interval: warn about binaries replaced on disk, and stop when a
 * -p process executes another program (none of its probes can fire any
 * more). A -- CMD that does so is only warned about: it ends the recording
 * when it exits, as always.
 */
static void watch_target(struct recorder *r)
{
	at_watch_replaced(r->watch);
	if (r->exec_path[0] || !at_watch_exec(r->watch, r->exec_path, sizeof(r->exec_path)))
		return;
	if (r->o->cmd) {
		at_warn("command %s executed %s, which is not traced; recording until it exits",
			r->o->cmd[0], r->exec_path);
		return;
	}
	at_err("process %d executed %s: the traced program is gone; stopping", (int)r->tgt.pid,
	       r->exec_path);
	r->stop = STOP_TARGET_EXEC;
}

static int pidfd_open_compat(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void reap_child(struct recorder *r)
{
	int status;

	if (r->child > 0 && !r->child_exited && waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_exited = true;
		r->child_status = status;
	}
}

/* The longest an interval's end waits for a window to stop counting: a quarter interval at most. */
#define TICK_WAIT_MAX_NS 250000000ULL

static uint64_t tick_wait_ns(const struct recorder *r)
{
	uint64_t quarter = (uint64_t)(r->o->interval * 1e9) / 4;

	return quarter < TICK_WAIT_MAX_NS ? quarter : TICK_WAIT_MAX_NS;
}

/*
 * End the interval that is due, unless a window still counts: its calls,
 * read at one moment, and the writes they make, read at another, would
 * fall in two intervals. One that ended a redis turn's 50 replies after
 * 11 of their writes left writeToClient's read path 50 calls against 11
 * writes, and 39 writes without a call in the next: 19 % high. True when
 * the recording must stop.
 */
static bool due_tick(struct recorder *r, uint64_t now)
{
	if (at_duty_counting(r->duty) && now - r->tick_due < tick_wait_ns(r))
		return false;
	if (now > r->tick_due + 1000000) {
		r->nwaited++;
		if (now - r->tick_due > r->waited_max_ns)
			r->waited_max_ns = now - r->tick_due;
	}
	r->tick_due = 0;
	if (tick(r, at_now_ns())) {
		r->stop = STOP_WRITE_ERROR;
		return true;
	}
	watch_target(r);
	return r->stop != STOP_NONE;
}

static void run_loop(struct recorder *r, int sfd)
{
	struct itimerspec its = {0};
	uint64_t deadline = r->o->duration ? r->t0 + (uint64_t)(r->o->duration * 1e9) : 0;
	uint64_t ival = (uint64_t)(r->o->interval * 1e9);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int pfd = -1;

	its.it_interval.tv_sec = ival / 1000000000ULL;
	its.it_interval.tv_nsec = ival % 1000000000ULL;
	its.it_value = its.it_interval;
	timerfd_settime(tfd, 0, &its, NULL);
	if (r->tgt.pid && !r->o->cmd)
		pfd = pidfd_open_compat(r->tgt.pid);

	while (r->stop == STOP_NONE) {
		struct pollfd fds[5] = {
		    {.fd = sfd, .events = POLLIN},
		    {.fd = tfd, .events = POLLIN},
		    {.fd = pfd, .events = POLLIN},
		    {.fd = r->dctl ? at_dctl_fd(r->dctl) : -1, .events = POLLIN},
		    {.fd = at_duty_wake_fd(r->duty), .events = POLLIN},
		};
		int timeout = -1, duty;
		uint64_t now = at_now_ns();

		if (deadline) {
			if (now >= deadline) {
				r->stop = STOP_DURATION;
				break;
			}
			timeout = (int)((deadline - now + 999999) / 1000000);
		}
		duty = at_duty_poll(r->duty, now);
		if (duty >= 0 && (timeout < 0 || duty < timeout))
			timeout = duty;
		/* at_duty_poll() ends the window: the interval can end. */
		if (r->tick_due && due_tick(r, now))
			break;
		if (r->tick_due) {
			int left = (int)((r->tick_due + tick_wait_ns(r) - now + 999999) / 1000000);

			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		/* Negative descriptors are ignored by poll(). */
		if (poll(fds, 5, timeout) < 0 && errno != EINTR)
			break;
		/* at_duty_poll() at the top of the loop releases the lingering window. */
		if (fds[4].revents & POLLIN)
			at_duty_wake_drain(r->duty);
		if ((fds[3].revents & POLLIN) && at_dctl_drain(r->dctl, r->w)) {
			snprintf(r->err, sizeof(r->err), "%s", at_writer_error(r->w));
			r->stop = STOP_WRITE_ERROR;
		}
		if (fds[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					reap_child(r);
					if (r->child_exited)
						r->stop = STOP_TARGET_EXIT;
				} else {
					r->stop_signal = (int)si.ssi_signo;
					r->stop = STOP_SIGNAL;
				}
			}
		}
		if (fds[2].revents & POLLIN)
			r->stop = STOP_TARGET_EXIT;
		if (fds[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) > 0 && !r->tick_due)
				r->tick_due = at_now_ns();
			if (r->tick_due && due_tick(r, at_now_ns()))
				break;
		}
	}
	close(tfd);
	if (pfd >= 0)
		close(pfd);
}

static const char *stop_text(const struct recorder *r, char *buf, size_t len)
{
	switch (r->stop) {
	case STOP_DURATION:
		snprintf(buf, len, "duration of %gs reached", r->o->duration);
		break;
	case STOP_SIGNAL:
		snprintf(buf, len, "%s received", strsignal(r->stop_signal));
		break;
	case STOP_TARGET_EXIT:
		if (r->child_exited && WIFEXITED(r->child_status))
			snprintf(buf, len, "command exited with status %d",
				 WEXITSTATUS(r->child_status));
		else if (r->child_exited && WIFSIGNALED(r->child_status))
			snprintf(buf, len, "command killed by %s",
				 strsignal(WTERMSIG(r->child_status)));
		else
			snprintf(buf, len, "target process %d exited", (int)r->tgt.pid);
		break;
	case STOP_WRITE_ERROR:
		snprintf(buf, len, "write error");
		break;
	case STOP_TARGET_EXEC:
		snprintf(buf, len, "process %d executed %s", (int)r->tgt.pid, r->exec_path);
		break;
	case STOP_HOOK:
		snprintf(buf, len, "stopped by the user");
		break;
	default:
		snprintf(buf, len, "stopped");
	}
	return buf;
}

/* Stop the command if it outlived the recording; its status becomes ours. */
static int finish_child(struct recorder *r)
{
	int status;

	if (r->child <= 0)
		return AT_EXIT_OK;
	if (!r->child_exited) {
		kill(r->child, SIGTERM);
		if (waitpid(r->child, &status, 0) == r->child) {
			r->child_exited = true;
			r->child_status = status;
		}
	}
	if (!r->child_exited)
		return AT_EXIT_OK;
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return AT_EXIT_OK;
}

static int finish(struct recorder *r)
{
	uint64_t t = at_now_ns();
	struct at_end *end = &r->t.end;
	char reason[400];
	int rc = AT_EXIT_OK;

	detach_all(r);
	if (at_env_flag("ADAPTRACE_DEBUG") && r->nwaited)
		at_err("duty: %" PRIu64 " interval ends waited for a window, %.1f ms at most",
		       r->nwaited, (double)r->waited_max_ns / 1e6);
	if (at_env_flag("ADAPTRACE_TIMING"))
		at_err("timing: detach in %.1f ms", (at_now_ns() - t) / 1e6);
	if (r->stop != STOP_WRITE_ERROR && tick(r, at_now_ns()))
		r->stop = STOP_WRITE_ERROR;
	end->duration_ns = r->last_tick - r->t0;
	end->exit_status = -1;
	if (r->child_exited && WIFEXITED(r->child_status))
		end->exit_status = WEXITSTATUS(r->child_status);
	at_stats_diag(r->stats, end->diag);
	if (r->dctl)
		end->dropped_events =
		    at_dctl_finish(r->dctl, r->stop == STOP_WRITE_ERROR ? NULL : r->w, &r->t);
	at_usdtrec_finish(r->usdt);
	if (r->stop == STOP_WRITE_ERROR) {
		at_err("%s: recording stopped; %s keeps the intervals written before the error",
		       r->err, r->o->output);
		rc = AT_EXIT_ENV;
	} else {
		end->reason = at_xstrdup(stop_text(r, reason, sizeof(reason)));
		if (at_writer_end(r->w, end)) {
			at_err("%s", at_writer_error(r->w));
			rc = AT_EXIT_ENV;
		}
	}
	if (at_writer_close(r->w) && rc == AT_EXIT_OK) {
		at_err("cannot close %s: %s", r->o->output, strerror(errno));
		rc = AT_EXIT_ENV;
	}
	r->w = NULL;
	r->t.has_end = rc == AT_EXIT_OK;
	if (!r->o->quiet) {
		struct at_report_opts ro = {.sort = "total", .top = 30};

		fputc('\n', stderr);
		at_profile_set_estimate(&r->ps);
		at_report_print(stderr, &r->ps, &ro);
		fprintf(stderr, "Trace written to %s; 'adaptrace report %s' shows it all.\n",
			r->o->output, r->o->output);
	}
	return rc;
}

static void recorder_free(struct recorder *r)
{
	detach_all(r);
	if (r->w)
		at_writer_close(r->w);
	at_stats_reader_free(r->stats);
	at_duty_free(r->duty);
	free(r->sites);
	at_callsites_free(r->callsites, r->tgt.nsel);
	free(r->callsites);
	free(r->paths);
	at_dctl_free(r->dctl);
	at_watch_free(r->watch);
	at_usdtrec_free(r->usdt);
	r->usdt = NULL;
	coarse_bpf__destroy(r->skel);
	at_profile_set_free(&r->ps);
	at_trace_free(&r->t);
	at_target_free(&r->tgt);
}

static int fail(struct recorder *r, int code)
{
	at_err("%s", r->err);
	if (r->child > 0) {
		if (r->go_fd >= 0)
			close(r->go_fd); /* the held child exits on EOF */
		waitpid(r->child, NULL, 0);
	}
	recorder_free(r);
	return code;
}

/* --baseline: the file must be readable before anything is recorded. */
static void check_baseline(const char *path)
{
	struct at_trace t;
	char err[AT_ERRLEN];

	if (at_trace_read(path, &t, true, err, sizeof(err)) < 0)
		at_die(AT_EXIT_USAGE, "--baseline: %s", err);
	at_trace_free(&t);
}

/* After a clean recording: the diff's verdict becomes the exit status. */
static int baseline_verdict(const struct rec_opts *o, int rc)
{
	struct at_diff_opts d;
	int drc;

	if (!o->baseline || rc != AT_EXIT_OK)
		return rc;
	at_diff_opts_default(&d);
	fputc('\n', stderr);
	drc = at_diff_files(o->baseline, o->output, &d, stderr);
	return drc;
}

int cmd_record(int argc, char **argv)
{
	return at_record_run(argc, argv, NULL);
}

int at_record_run(int argc, char **argv, const struct at_record_hook *hook)
{
	struct rec_opts o = {.hook = hook};
	struct recorder r = {.o = &o, .go_fd = -1};
	char *cmd_path = NULL;
	sigset_t mask;
	size_t nprobed;
	int rc, sfd;
	uint64_t t;

	parse_opts(argc, argv, &o);
	rc = at_dctl_check(&o.dopt, r.err, sizeof(r.err));
	if (rc)
		at_die(rc, "%s", r.err);
	if (o.baseline)
		check_baseline(o.baseline);
	rc = at_check_privilege(r.err, sizeof(r.err));
	if (rc)
		at_die(rc, "%s", r.err);
	if (o.cmd) {
		rc = at_resolve_command(o.cmd[0], &cmd_path, r.err, sizeof(r.err));
		if (rc)
			at_die(rc, "%s", r.err);
		o.t.binary = cmd_path;
	}
	if (o.usdt.n) {
		rc = at_usdtrec_new(&o.usdt, &r.usdt, r.err, sizeof(r.err));
		if (rc)
			at_die(rc, "%s", r.err);
	}
	rc = at_target_resolve(&o.t, &r.tgt, r.err, sizeof(r.err));
	if (!rc && r.usdt)
		rc = at_usdtrec_plan(r.usdt, &r.tgt, r.err, sizeof(r.err));
	if (rc) {
		free(cmd_path);
		at_die(rc, "%s", r.err);
	}
	if (at_features()->uprobe_multi == false)
		at_warn("the kernel has no uprobe_multi link (Linux 6.6+): attaching one "
			"perf-event link per probe, which is slower, and detaching them takes "
			"about 0.1 s per probe");
	if (load_programs(&r))
		return fail(&r, AT_EXIT_ENV);

	/* Signals arrive through a descriptor; the child gets a clean mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	if (o.cmd && spawn_held(&r)) {
		snprintf(r.err, sizeof(r.err), "cannot start %s: %s", o.cmd[0], strerror(errno));
		return fail(&r, AT_EXIT_ENV);
	}
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);

	r.w = at_writer_open(o.output, r.err, sizeof(r.err));
	if (!r.w)
		return fail(&r, AT_EXIT_USAGE);
	describe(&r, argc + 1, argv - 1);
	if (!o.empty_probes && !at_dctl_off(&o.dopt)) {
		r.dctl = at_dctl_new(&o.dopt, &r.t, &r.tgt, o.cmd ? r.child : r.tgt.pid,
				     r.skel->rodata->target_ino, r.skel->rodata->target_dev,
				     r.skel->progs.coarse_entry, r.skel->progs.coarse_return,
				     (uint32_t)r.tgt.nsel + at_usdtrec_nids(r.usdt), r.err,
				     sizeof(r.err));
		if (!r.dctl)
			return fail(&r, AT_EXIT_ENV);
		kv_add(&r.t, "detail_link", at_dctl_mode(r.dctl));
		if (at_dctl_coarse_hit_ns(r.dctl) > 0) {
			char hit[32];

			snprintf(hit, sizeof(hit), "%.0f", at_dctl_coarse_hit_ns(r.dctl));
			kv_add(&r.t, "probe_hit_ns", hit);
		}
	}
	yardstick_cost(&r);
	at_profile_set_init(&r.ps, &r.t);
	if (at_writer_header(r.w, r.t.kv, r.t.nkv, r.t.bins, r.t.nbins) ||
	    at_writer_symbols(r.w, r.t.syms, r.t.nsyms)) {
		snprintf(r.err, sizeof(r.err), "%s", at_writer_error(r.w));
		return fail(&r, AT_EXIT_ENV);
	}

	t = at_now_ns();
	rc = attach_all(&r);
	if (rc) {
		if (rc == -EPERM || rc == -EACCES)
			return fail(&r, AT_EXIT_ENV);
		return fail(&r, rc == -ENOENT || rc == -EINVAL ? AT_EXIT_USAGE : AT_EXIT_ENV);
	}
	if (at_env_flag("ADAPTRACE_TIMING"))
		at_err("timing: attach %zu functions in %.1f ms", r.tgt.nsel,
		       (at_now_ns() - t) / 1e6);
	r.t0 = r.last_tick = at_now_ns();
	if (r.dctl && at_dctl_start(r.dctl, r.t0, o.cmd ? r.child : r.tgt.pid, r.w)) {
		snprintf(r.err, sizeof(r.err), "%s", at_writer_error(r.w));
		return fail(&r, AT_EXIT_ENV);
	}
	nprobed = r.tgt.nsel - r.nrefused;
	if (r.tgt.nsel && !nprobed && !r.usdt) {
		/* Seen with -p on a process in the middle of an exec. */
		snprintf(r.err, sizeof(r.err),
			 "the kernel refused a probe on every function of %s; if the process "
			 "was starting or exec'ing, run adaptrace again",
			 r.tgt.bins[0].display_path);
		return fail(&r, AT_EXIT_ENV);
	}
	if (r.usdt)
		at_err("tracing %zu USDT probe%s", at_usdtrec_nprobes(r.usdt),
		       at_usdtrec_nprobes(r.usdt) == 1 ? "" : "s");
	if (r.usdt && !r.tgt.nsel)
		nprobed = 0; /* USDT only: said above */
	else if (o.cmd)
		at_err("tracing %zu functions in %zu binar%s of command %s (pid %d)", nprobed,
		       r.tgt.nbins, r.tgt.nbins == 1 ? "y" : "ies", o.cmd[0], (int)r.child);
	else if (r.tgt.pid)
		at_err("tracing %zu functions in %zu binar%s of process %d; Ctrl-C to stop",
		       nprobed, r.tgt.nbins, r.tgt.nbins == 1 ? "y" : "ies", (int)r.tgt.pid);
	else
		say_binary(&r, o.t.binary, nprobed);
	setup_duty(&r);
	r.watch = at_watch_new(&r.tgt, o.cmd ? r.child : r.tgt.pid);
	release_child(&r);

	run_loop(&r, sfd);
	rc = finish(&r);
	if (o.cmd) {
		int crc = finish_child(&r);

		if (rc == AT_EXIT_OK)
			rc = crc;
	}
	rc = baseline_verdict(&o, rc);
	close(sfd);
	recorder_free(&r);
	free(cmd_path);
	at_strv_free(&o.t.include);
	at_strv_free(&o.t.exclude);
	at_strv_free(&o.t.libs);
	at_strv_free(&o.usdt);
	return rc;
}
