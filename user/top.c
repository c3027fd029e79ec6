// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * adaptrace top: the recorder with a per-interval hook that draws the
 * hottest functions of the last interval, like top(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "escape.h"
#include "record.h"
#include "util.h"

enum top_sort { SORT_SHARE, SORT_CALLS, SORT_P50, SORT_P99, SORT_NAME };

static const char *sort_names[] = {"share", "calls", "p50", "p99", "name"};

struct top {
	bool tty;
	int sort;
	int rows; /* 0: fit the terminal */
	unsigned long tick;
	struct termios saved;
	bool raw;
};

struct top_row {
	const char *name;
	double rate, p50, p99, share;
	bool est; /* scaled up from probing windows (--budget) */
};

/*
 * How much to scale entry e's calls and time by: 1, or for a function in
 * probing windows the interval's socket reads over those in its windows
 * (by time without reads), as report does per interval. k walks w->duty.
 */
static double entry_scale(const struct at_window *w, const struct at_window_entry *e, uint32_t *k)
{
	const struct at_duty_on *on = at_window_duty(w, e->id, k);
	uint64_t len = w->end_ns - w->start_ns, ref_on = w->ref_on;

	if (!on || on->on_ns >= len)
		return 1;
	/* A function in the turn windows too: both kinds' reads. */
	if (at_window_turnwise(w, *k))
		for (int c = 0; c < AT_READ_CLASSES; c++)
			ref_on += w->tw_cls_on[c];
	if (ref_on)
		return (double)w->ref_all / (double)ref_on;
	return on->on_ns ? (double)len / (double)on->on_ns : 1;
}

static struct top *the_top; /* for the atexit terminal restore */

static void restore_tty(void)
{
	if (the_top && the_top->raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &the_top->saved);
		the_top->raw = false;
		fputs("\033[?25h", stdout); /* cursor back */
		fflush(stdout);
	}
}

/* Keys arrive without Enter and without echo; reads never block. */
static void raw_tty(struct top *t)
{
	struct termios tio;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved))
		return;
	tio = t->saved;
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &tio))
		return;
	t->raw = true;
	the_top = t;
	atexit(restore_tty);
}

/* Returns true on 'q'. */
static bool read_keys(struct top *t)
{
	char buf[32];
	ssize_t n;

	if (!t->raw)
		return false;
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			switch (buf[i]) {
			case 'q':
			case 'Q':
				return true;
			case 's':
			case 'S':
				t->sort = SORT_SHARE;
				break;
			case 'c':
			case 'C':
				t->sort = SORT_CALLS;
				break;
			case '5':
				t->sort = SORT_P50;
				break;
			case '9':
				t->sort = SORT_P99;
				break;
			case 'n':
			case 'N':
				t->sort = SORT_NAME;
				break;
			}
	return false;
}

static int g_sort;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	double kx, ky;

	switch (g_sort) {
	case SORT_CALLS:
		kx = x->rate, ky = y->rate;
		break;
	case SORT_P50:
		kx = x->p50, ky = y->p50;
		break;
	case SORT_P99:
		kx = x->p99, ky = y->p99;
		break;
	case SORT_NAME:
		kx = ky = 0;
		break;
	default:
		kx = x->share, ky = y->share;
	}
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return strcmp(x->name, y->name);
}

static bool on_window(void *ctx, const struct at_profile_set *ps, const struct at_window *w)
{
	struct top *t = ctx;
	const struct at_trace *tr = ps->t;
	struct top_row *rows = at_xcalloc(w->n ? w->n : 1, sizeof(*rows));
	double secs = (double)(w->end_ns - w->start_ns) / 1e9, self_sum = 0;
	int shown = t->rows, height = 0;
	struct winsize ws = {0};
	size_t n = 0;
	bool quit = read_keys(t);
	char a[32], b[32], line[4096];
	double *scale = at_xcalloc(w->n ? w->n : 1, sizeof(*scale));
	uint32_t k = 0;

	t->tick++;
	for (uint32_t i = 0; i < w->n; i++) {
		scale[i] = entry_scale(w, &w->e[i], &k);
		if (w->e[i].id < tr->nsyms)
			self_sum += (double)w->e[i].c.self_ns * scale[i];
	}
	for (uint32_t i = 0; i < w->n; i++) {
		const struct at_window_entry *e = &w->e[i];
		struct top_row *r;

		if (e->id >= tr->nsyms || !e->c.calls)
			continue;
		r = &rows[n++];
		r->name = tr->syms[e->id].name ? tr->syms[e->id].name : "?";
		r->est = scale[i] != 1;
		r->rate = secs > 0 ? (double)e->c.calls * scale[i] / secs : 0;
		r->p50 = e->c.returns ? at_entry_quantile(e, 0.50) : 0;
		r->p99 = e->c.returns ? at_entry_quantile(e, 0.99) : 0;
		r->share = self_sum > 0 ? (double)e->c.self_ns * scale[i] / self_sum * 100 : 0;
	}
	free(scale);
	g_sort = t->sort;
	qsort(rows, n, sizeof(*rows), cmp_rows);
	if (t->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
		height = ws.ws_row - 5;
	if (!shown)
		shown = height ? height : 20;
	if (t->tty)
		fputs("\033[?25l\033[H\033[2J", stdout);
	else
		putchar('\n');
	printf("adaptrace top - %.*s\n", t->tty && ws.ws_col > 20 ? ws.ws_col - 16 : 4096,
	       at_esc_text_buf(line, sizeof(line), at_trace_get(tr, "target")));
	printf("interval %lu (%.2fs), %zu functions called, sort: %s%s\n", t->tick, secs, n,
	       sort_names[t->sort], t->tty ? "  keys: s c 5 9 n, q quits" : "");
	printf("%-40s %12s %10s %10s %7s\n", "FUNCTION", "CALLS/S", "P50", "P99", "SHARE");
	for (size_t i = 0; i < n && (int)i < shown; i++)
		printf("%-40s %1s%11.1f %10s %10s %6.1f%%\n",
		       at_esc_text_buf(line, 41, rows[i].name), rows[i].est ? "~" : "",
		       rows[i].rate, at_fmt_ns(a, sizeof(a), rows[i].p50),
		       at_fmt_ns(b, sizeof(b), rows[i].p99), rows[i].share);
	fflush(stdout);
	free(rows);
	return quit;
}

static void top_usage(FILE *f)
{
	fputs("Usage: adaptrace top (-p PID | -b PATH) [selection options] [--sort KEY]\n"
	      "                     [--rows N] [--interval SEC] [-d SEC] [-o FILE]\n"
	      "\n"
	      "A live view of the traced functions, refreshed every interval like top(1):\n"
	      "the hottest functions of the last interval with their calls per second,\n"
	      "p50 and p99 latency, and SHARE, their exclusive (self) time as a share of\n"
	      "the self time of all traced functions in the interval. With --budget, a\n"
	      "function moved to probing windows has its rate and share scaled up from\n"
	      "them, marked ~ (see 'adaptrace record --help').\n"
	      "\n"
	      "  -p, --pid PID, -b, --binary PATH, -f GLOB, -x GLOB, -l LIB, --interval SEC,\n"
	      "  -d SEC          as for 'adaptrace record'\n"
	      "  --sort KEY      share (default), calls, p50, p99 or name\n"
	      "  --rows N        rows to show (default: fit the terminal, 20 otherwise)\n"
	      "  -o FILE         also keep the recording in FILE (default: none kept)\n"
	      "\n"
	      "Keys on a terminal: s share, c calls, 5 p50, 9 p99, n name, q quit.\n"
	      "When standard output is not a terminal, each interval is printed as a plain\n"
	      "table after an empty line, without escape sequences.\n"
	      "Exit status as for record: 0, 2 bad usage, 3 missing privilege.\n",
	      f);
}

int cmd_top(int argc, char **argv)
{
	struct top t = {.tty = isatty(STDOUT_FILENO) != 0};
	struct at_record_hook hook = {.on_window = on_window, .ctx = &t};
	char dir[] = "/tmp/adaptrace-top.XXXXXX", path[sizeof(dir) + 16];
	/* rargv[-1] is read for the command line recorded in the file's header. */
	char **rargv0 = at_xcalloc((size_t)argc + 6, sizeof(char *)), **rargv = rargv0 + 1;
	int rargc = 0, rc;
	bool own_output = true;

	rargv0[0] = "adaptrace";
	rargv[rargc++] = "top";
	rargv[rargc++] = "-q";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			top_usage(stdout);
			free(rargv0);
			return AT_EXIT_OK;
		}
		if (!strcmp(a, "--")) {
			free(rargv0);
			at_die(AT_EXIT_USAGE,
			       "top watches a running process or binary: use -p PID or -b PATH");
		}
		if (!strcmp(a, "--sort") && i + 1 < argc) {
			int k;

			for (k = 0; k < 5 && strcmp(argv[i + 1], sort_names[k]); k++)
				;
			if (k == 5)
				at_die(AT_EXIT_USAGE,
				       "unknown --sort '%s': use share, calls, p50, p99 or name",
				       argv[i + 1]);
			t.sort = k;
			i++;
			continue;
		}
		if (!strcmp(a, "--rows") && i + 1 < argc) {
			t.rows = atoi(argv[++i]);
			if (t.rows <= 0)
				at_die(AT_EXIT_USAGE, "--rows takes a positive number, not '%s'",
				       argv[i]);
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9))
			own_output = false;
		rargv[rargc++] = argv[i];
	}
	if (own_output) {
		if (!mkdtemp(dir))
			at_die(AT_EXIT_ENV, "cannot create a temporary directory: %s",
			       strerror(errno));
		snprintf(path, sizeof(path), "%s/top.data", dir);
		rargv[rargc++] = "-o";
		rargv[rargc++] = path;
	}
	if (t.tty)
		raw_tty(&t);
	optind = 1;
	rc = at_record_run(rargc, rargv, &hook);
	restore_tty();
	if (own_output) {
		char old[sizeof(path) + 8];

		snprintf(old, sizeof(old), "%s.old", path);
		unlink(path);
		unlink(old);
		rmdir(dir);
	}
	free(rargv0);
	return rc;
}
