// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Replaced binaries and exec of the traced process; see watch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target.h"
#include "util.h"
#include "watch.h"

struct watched_bin {
	char *path;    /* the path as the target sees it, from our namespace */
	char *display; /* for messages */
	dev_t dev;     /* the probed file */
	ino_t ino;
	bool warned;
};

struct at_watch {
	pid_t pid;
	bool has_main; /* the executable's identity is known */
	dev_t main_dev;
	ino_t main_ino;
	struct watched_bin *b;
	size_t n;
};

struct at_watch *at_watch_new(const struct at_target *t, pid_t pid)
{
	struct at_watch *w = at_xcalloc(1, sizeof(*w));

	w->pid = pid;
	w->b = at_xcalloc(t->nbins ? t->nbins : 1, sizeof(*w->b));
	for (size_t i = 0; i < t->nbins; i++) {
		const struct at_target_bin *tb = &t->bins[i];
		struct watched_bin *b = &w->b[w->n];
		struct stat st;
		char buf[4200];

		if (stat(tb->attach_path, &st))
			continue;
		/* A process may live in another mount namespace: look through its root. */
		if (pid > 0 && tb->display_path[0] == '/')
			snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, tb->display_path);
		else
			snprintf(buf, sizeof(buf), "%s", tb->display_path);
		b->path = at_xstrdup(buf);
		b->display = at_xstrdup(tb->display_path);
		b->dev = st.st_dev;
		b->ino = st.st_ino;
		w->n++;
		if (tb->is_main) {
			w->has_main = true;
			w->main_dev = st.st_dev;
			w->main_ino = st.st_ino;
		}
	}
	return w;
}

void at_watch_free(struct at_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++) {
		free(w->b[i].path);
		free(w->b[i].display);
	}
	free(w->b);
	free(w);
}

void at_watch_replaced(struct at_watch *w)
{
	for (size_t i = 0; w && i < w->n; i++) {
		struct watched_bin *b = &w->b[i];
		struct stat st;

		if (b->warned || stat(b->path, &st) || (st.st_dev == b->dev && st.st_ino == b->ino))
			continue;
		b->warned = true;
		at_warn("%s was replaced on disk: processes still running the old file stay "
			"traced, processes started from the new file are not; restart adaptrace "
			"to trace them",
			b->display);
	}
}

bool at_watch_exec(struct at_watch *w, char *exe, size_t len)
{
	char path[64];
	struct stat st;
	ssize_t n;

	if (!w || w->pid <= 0 || !w->has_main)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)w->pid);
	if (stat(path, &st) || (st.st_dev == w->main_dev && st.st_ino == w->main_ino))
		return false;
	n = readlink(path, exe, len - 1);
	exe[n > 0 ? n : 0] = '\0';
	return true;
}
