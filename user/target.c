// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Target resolution shared by list and record: which files to probe (a
 * process's executable and libraries, or a binary on disk and the
 * libraries it needs) and which of their functions the globs select.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "placement.h"
#include "target.h"
#include "util.h"

/* Where ld.so looks by default on Debian/Ubuntu x86-64 and elsewhere. */
static const char *const std_lib_dirs[] = {
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/usr/lib",
    "/lib",
    "/usr/local/lib",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fill err and return code, so that callers can write "return fail(...)". */
static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* asprintf that cannot fail (out of memory exits, like at_xcalloc). */
static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		at_die(AT_EXIT_ENV, "out of memory");
	return s;
}

void at_strv_push(struct at_strv *sv, const char *s)
{
	sv->v = at_xrealloc(sv->v, sv->n + 1, sizeof(*sv->v));
	sv->v[sv->n++] = s;
}

void at_strv_free(struct at_strv *sv)
{
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

bool at_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

static bool is_executable_file(const char *path)
{
	int fd;

	if (access(path, X_OK))
		return false;
	/* access() says yes to directories; opening one O_RDONLY|O_NONBLOCK
	 * works too, so read a byte to tell them apart. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		char c;
		bool dir = read(fd, &c, 1) < 0 && errno == EISDIR;

		close(fd);
		return !dir;
	}
	return true; /* executable but unreadable (mode 0711): still a command */
}

int at_resolve_command(const char *cmd, char **out, char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, *full = NULL;

	*out = NULL;
	if (!cmd || !*cmd)
		return fail(AT_EXIT_USAGE, err, errlen, "no command given after --");
	if (strchr(cmd, '/')) {
		if (!is_executable_file(cmd))
			return fail(AT_EXIT_USAGE, err, errlen, "%s: %s; give an executable file",
				    cmd, errno ? strerror(errno) : "not executable");
		*out = realpath(cmd, NULL);
		if (!*out)
			return fail(AT_EXIT_USAGE, err, errlen, "%s: %s", cmd, strerror(errno));
		return AT_EXIT_OK;
	}
	dirs = at_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&full, "%s/%s", *dir ? dir : ".", cmd) < 0)
			break;
		if (is_executable_file(full)) {
			*out = realpath(full, NULL);
			free(full);
			if (*out)
				break;
			continue;
		}
		free(full);
	}
	free(dirs);
	if (!*out)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "%s: command not found in $PATH; give its path (./%s or /full/path)",
			    cmd, cmd);
	return AT_EXIT_OK;
}

/* ---- Loading one binary --------------------------------------------- */

static bool is_perm_error(int e)
{
	return e == EACCES || e == EPERM;
}

/*
 * Check that path opens, to tell "no such file" (bad input) from
 * "permission denied" (environment) before parsing it.
 */
static int check_readable(const char *path, const char *shown, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0) {
		close(fd);
		return AT_EXIT_OK;
	}
	if (is_perm_error(errno))
		return fail(AT_EXIT_ENV, err, errlen,
			    "%s: permission denied; run adaptrace as root", shown);
	if (errno == ENOENT)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "%s: no such file; give the path of an executable or a shared library",
			    shown);
	return fail(AT_EXIT_USAGE, err, errlen, "%s: %s", shown, strerror(errno));
}

/* Why path, which realpath() just failed on with errno, cannot be used. */
static int path_error(const char *path, char *err, size_t errlen)
{
	int saved = errno;
	int rc = check_readable(path, path, err, errlen);

	if (rc)
		return rc;
	return fail(AT_EXIT_USAGE, err, errlen, "%s: %s", path, strerror(saved));
}

static struct at_target_bin *add_bin(struct at_target *t)
{
	struct at_target_bin *b;

	t->bins = at_xrealloc(t->bins, t->nbins + 1, sizeof(*t->bins));
	b = &t->bins[t->nbins++];
	memset(b, 0, sizeof(*b));
	return b;
}

static void free_bin(struct at_target_bin *b)
{
	free(b->attach_path);
	free(b->display_path);
	at_elf_free(&b->elf);
	free(b->sel);
	free(b->refused);
	memset(b, 0, sizeof(*b));
}

/* Same file? Compared by canonical path, which sees through /proc/PID/root. */
static bool same_file(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	bool same = ra && rb ? !strcmp(ra, rb) : !strcmp(a, b);

	free(ra);
	free(rb);
	return same;
}

/*
 * Add a binary (takes ownership of attach and display) and load its
 * symbols. A binary already in t is skipped.
 */
static int load_bin(struct at_target *t, char *attach, char *display, bool is_main, char *err,
		    size_t errlen)
{
	char why[AT_ERRLEN];
	struct at_target_bin *b;
	size_t i;
	int rc;

	for (i = 0; i < t->nbins; i++) {
		if (same_file(t->bins[i].attach_path, attach)) {
			free(attach);
			free(display);
			return AT_EXIT_OK;
		}
	}
	b = add_bin(t);
	b->attach_path = attach;
	b->display_path = display;
	b->is_main = is_main;
	rc = check_readable(attach, display, err, errlen);
	if (rc)
		return rc;
	if (at_elf_load(attach, &b->elf, why, sizeof(why))) {
		/* at_elf_load names the attach path; name what the user gave. */
		const char *reason = strstr(why, ": ") ? strstr(why, ": ") + 2 : why;

		return fail(AT_EXIT_USAGE, err, errlen,
			    "%s: %s; give an executable or a shared library", display, reason);
	}
	return AT_EXIT_OK;
}

/* ---- Processes ------------------------------------------------------ */

/* The process (thread group) of pid: "no such process" if there is none. */
static int find_process(pid_t pid, pid_t *tgid, char *err, size_t errlen)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "no such process: %d; check the PID (ps -e)", (int)pid);
	*tgid = pid;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "Tgid:", 5)) {
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	}
	free(line);
	fclose(f);
	if (*tgid <= 0)
		*tgid = pid;
	return AT_EXIT_OK;
}

static int load_process_exe(struct at_target *t, char *err, size_t errlen)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)t->pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0 && is_perm_error(errno))
		return fail(AT_EXIT_ENV, err, errlen,
			    "cannot read %s: permission denied; run adaptrace as root (tracing "
			    "another user's process needs CAP_SYS_PTRACE)",
			    link);
	if (n < 0)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "process %d has no executable (a kernel thread, or it is exiting); "
			    "give the PID of a user-space process",
			    (int)t->pid);
	target[n] = '\0';
	/* The link, not its text, reaches the file in any mount namespace. */
	return load_bin(t, at_xstrdup(link), at_xstrdup(target), true, err, errlen);
}

/* A file mapped by the process, once per path. */
struct mapping {
	char *path; /* as in the maps, " (deleted)" cut off */
	unsigned long start, end;
	bool deleted;
};

struct maps {
	struct mapping *m;
	size_t n;
};

static void maps_free(struct maps *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++)
		free(ms->m[i].path);
	free(ms->m);
	memset(ms, 0, sizeof(*ms));
}

static void maps_add(struct maps *ms, const char *path, unsigned long start, unsigned long end)
{
	static const char del[] = " (deleted)";
	size_t len = strlen(path), i;
	bool deleted = len > sizeof(del) - 1 && !strcmp(path + len - (sizeof(del) - 1), del);
	char *p = strndup(path, deleted ? len - (sizeof(del) - 1) : len);

	if (!p)
		return;
	for (i = 0; i < ms->n; i++) {
		if (!strcmp(ms->m[i].path, p)) {
			free(p);
			return;
		}
	}
	ms->m = at_xrealloc(ms->m, ms->n + 1, sizeof(*ms->m));
	ms->m[ms->n++] =
	    (struct mapping){.path = p, .start = start, .end = end, .deleted = deleted};
}

static int read_maps(pid_t pid, struct maps *ms, char *err, size_t errlen)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f && is_perm_error(errno))
		return fail(AT_EXIT_ENV, err, errlen,
			    "cannot read %s: permission denied; run adaptrace as root (needs "
			    "CAP_SYS_PTRACE)",
			    path);
	if (!f)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "no such process: %d; check the PID (ps -e)", (int)pid);
	while ((len = getline(&line, &cap, f)) > 0) {
		unsigned long start, end, ino;
		int off = 0;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu %n", &start, &end, &ino, &off) < 3 ||
		    !off || !ino || line[off] != '/')
			continue;
		maps_add(ms, line + off, start, end);
	}
	free(line);
	fclose(f);
	return AT_EXIT_OK;
}

/*
 * Does a file name match a -l name? "libc" matches "libc.so.6" and
 * "libc-2.31.so": equal, or LIB followed by '.' or '-'. "c" works too,
 * as with the linker's -lc.
 */
/* 0: base is lib; 1: lib then ".so"; 2: lib then '.' or '-'; -1: no match. */
static int prefix_rank(const char *lib, const char *base)
{
	size_t n = strlen(lib);

	if (strncmp(base, lib, n))
		return -1;
	if (!base[n])
		return 0;
	if (!strncmp(base + n, ".so", 3))
		return 1;
	return base[n] == '.' || base[n] == '-' ? 2 : -1;
}

/*
 * How well a file name matches a -l name, -1 for not at all. "libc"
 * matches "libc.so.6" and "libc-2.31.so": equal, or LIB followed by '.'
 * or '-'. "c" works too, as with the linker's -lc.
 */
static int lib_match_rank(const char *lib, const char *file)
{
	const char *base = at_base_name(file);
	int r;

	r = prefix_rank(lib, base);
	if (r < 0 && strncmp(lib, "lib", 3) && !strncmp(base, "lib", 3))
		r = prefix_rank(lib, base + 3);
	return r;
}

static bool lib_name_matches(const char *lib, const char *file)
{
	return lib_match_rank(lib, file) >= 0;
}

/* Path to reach a mapped file from here: through the process's root. */
static char *mapping_attach_path(pid_t pid, const struct mapping *m)
{
	if (m->deleted) /* the mapped inode itself, since the path is gone */
		return xasprintf("/proc/%d/map_files/%lx-%lx", (int)pid, m->start, m->end);
	return xasprintf("/proc/%d/root%s", (int)pid, m->path);
}

/* "-l libpython": suggest a loaded "libpython3.11.so.1.0" if there is one. */
static int no_such_lib(pid_t pid, const struct maps *ms, const char *lib, char *err, size_t errlen)
{
	const char *guess = NULL, *base;
	size_t i;

	for (i = 0; i < ms->n && !guess; i++) {
		base = strrchr(ms->m[i].path, '/') + 1;
		if (strstr(base, lib))
			guess = base;
	}
	if (guess)
		return fail(AT_EXIT_USAGE, err, errlen,
			    "no library matching '%s' is loaded in process %d; did you mean -l %s?",
			    lib, (int)pid, guess);
	return fail(AT_EXIT_USAGE, err, errlen,
		    "no library matching '%s' is loaded in process %d; give a name as in "
		    "/proc/%d/maps (e.g. libc) or a path",
		    lib, (int)pid, (int)pid);
}

static int add_process_lib(struct at_target *t, const struct maps *ms, const char *lib, char *err,
			   size_t errlen)
{
	char *real = strchr(lib, '/') ? realpath(lib, NULL) : NULL;
	size_t i, found = 0;
	int rc;

	for (i = 0; i < ms->n; i++) {
		const struct mapping *m = &ms->m[i];
		bool hit = strchr(lib, '/')
			       ? !strcmp(m->path, lib) || (real && !strcmp(m->path, real))
			       : lib_name_matches(lib, m->path);

		if (!hit)
			continue;
		found++;
		rc = load_bin(t, mapping_attach_path(t->pid, m), at_xstrdup(m->path), false, err,
			      errlen);
		if (rc) {
			free(real);
			return rc;
		}
	}
	if (found) {
		free(real);
		return AT_EXIT_OK;
	}
	if (!strchr(lib, '/'))
		return no_such_lib(t->pid, ms, lib, err, errlen);
	if (!real)
		return path_error(lib, err, errlen);
	/* Probes by path also fire when the process loads it later (dlopen). */
	at_warn("%s is not loaded in process %d yet; its probes fire once it is", lib, (int)t->pid);
	return load_bin(t, real, at_xstrdup(real), false, err, errlen);
}

static int resolve_process(const struct at_target_opts *o, struct at_target *t, char *err,
			   size_t errlen)
{
	struct maps ms = {0};
	size_t i;
	int rc;

	rc = find_process(o->pid, &t->pid, err, errlen);
	if (!rc)
		rc = load_process_exe(t, err, errlen);
	if (!rc && o->libs.n)
		rc = read_maps(t->pid, &ms, err, errlen);
	for (i = 0; !rc && i < o->libs.n; i++)
		rc = add_process_lib(t, &ms, o->libs.v[i], err, errlen);
	maps_free(&ms);
	return rc;
}

/* ---- Binaries on disk ----------------------------------------------- */

/* What the dynamic section says about where the libraries come from. */
struct dyninfo {
	struct at_strv needed; /* DT_NEEDED names (owned) */
	struct at_strv dirs;   /* DT_RPATH/DT_RUNPATH dirs, $ORIGIN expanded (owned) */
};

static void dyninfo_free(struct dyninfo *di)
{
	size_t i;

	for (i = 0; i < di->needed.n; i++)
		free((char *)di->needed.v[i]);
	for (i = 0; i < di->dirs.n; i++)
		free((char *)di->dirs.v[i]);
	at_strv_free(&di->needed);
	at_strv_free(&di->dirs);
}

static void add_search_dirs(struct dyninfo *di, const char *list, const char *origin)
{
	char *copy = at_xstrdup(list), *save = NULL, *d;

	for (d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (!strncmp(d, "$ORIGIN", 7))
			at_strv_push(&di->dirs, xasprintf("%s%s", origin, d + 7));
		else if (!strncmp(d, "${ORIGIN}", 9))
			at_strv_push(&di->dirs, xasprintf("%s%s", origin, d + 9));
		else
			at_strv_push(&di->dirs, at_xstrdup(d));
	}
	free(copy);
}

static void scan_dynamic(Elf *elf, Elf_Scn *scn, struct dyninfo *di, const char *origin)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n, entsz = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
	GElf_Shdr sh;

	if (!d || !entsz || !gelf_getshdr(scn, &sh))
		return;
	n = d->d_size / entsz;
	for (i = 0; i < n && i <= INT32_MAX; i++) {
		const char *s;
		GElf_Dyn dyn;

		if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
			continue;
		s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
		if (!s)
			continue;
		if (dyn.d_tag == DT_NEEDED)
			at_strv_push(&di->needed, at_xstrdup(s));
		else
			add_search_dirs(di, s, origin);
	}
}

static void read_dynamic(const char *path, struct dyninfo *di)
{
	char *origin = at_xstrdup(path), *slash = strrchr(origin, '/');
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	if (slash)
		*slash = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			scan_dynamic(elf, scn, di, origin);
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(origin);
}

static bool is_elf_file(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, m, 4) == 4 && !memcmp(m, "\177ELF", 4);
	close(fd);
	return ok;
}

/* Canonical path of name in the rpath dirs, then the standard ones. */
static char *find_in_dirs(const struct dyninfo *di, const char *name)
{
	size_t i, n = di->dirs.n + NELEM(std_lib_dirs);

	for (i = 0; i < n; i++) {
		const char *dir = i < di->dirs.n ? di->dirs.v[i] : std_lib_dirs[i - di->dirs.n];
		char *p = xasprintf("%s/%s", dir, name), *real;

		real = is_elf_file(p) ? realpath(p, NULL) : NULL;
		free(p);
		if (real)
			return real;
	}
	return NULL;
}

/* Keep the canonical path of a candidate of the given rank, best rank only. */
static void add_candidate(struct at_strv *found, int *best, const char *path, int rank)
{
	char *real = is_elf_file(path) ? realpath(path, NULL) : NULL;
	size_t i;

	if (!real)
		return;
	if (rank < *best) {
		for (i = 0; i < found->n; i++)
			free((char *)found->v[i]);
		found->n = 0;
		*best = rank;
	}
	for (i = 0; i < found->n; i++) {
		if (!strcmp(found->v[i], real)) {
			free(real);
			return;
		}
	}
	at_strv_push(found, real);
}

/*
 * Candidates for a -l name that the binary does not need directly (it
 * may dlopen it): ELF files whose name matches, in the standard dirs.
 * Exact names rank first, then "LIB.so*", then the rest ("LIB-2.31.so").
 */
static void scan_lib_dirs(const char *lib, struct at_strv *found, int *best)
{
	size_t d;

	*best = 3;
	for (d = 0; d < NELEM(std_lib_dirs); d++) {
		DIR *dir = opendir(std_lib_dirs[d]);
		struct dirent *de;

		while (dir && (de = readdir(dir))) {
			int rank = lib_match_rank(lib, de->d_name);
			char *p;

			if (rank < 0 || rank > *best)
				continue;
			p = xasprintf("%s/%s", std_lib_dirs[d], de->d_name);
			add_candidate(found, best, p, rank);
			free(p);
		}
		if (dir)
			closedir(dir);
	}
}

static int add_scanned_lib(struct at_target *t, const char *lib, const char *main_path, char *err,
			   size_t errlen)
{
	struct at_strv found = {0};
	int best, rc;
	size_t i;

	scan_lib_dirs(lib, &found, &best);
	if (found.n == 1) {
		rc = load_bin(t, (char *)found.v[0], at_xstrdup(found.v[0]), false, err, errlen);
		at_strv_free(&found);
		return rc;
	}
	if (!found.n)
		rc = fail(AT_EXIT_USAGE, err, errlen,
			  "no library '%s' among the dependencies of %s or in the standard library "
			  "directories; give its path",
			  lib, main_path);
	else
		rc = fail(AT_EXIT_USAGE, err, errlen,
			  "-l %s is ambiguous (%s, %s%s); give the library's path", lib, found.v[0],
			  found.v[1], found.n > 2 ? ", ..." : "");
	for (i = 0; i < found.n; i++)
		free((char *)found.v[i]);
	at_strv_free(&found);
	return rc;
}

static int add_binary_lib(struct at_target *t, const struct dyninfo *di, const char *lib, char *err,
			  size_t errlen)
{
	size_t i, found = 0;
	int rc;

	if (strchr(lib, '/')) {
		char *real = realpath(lib, NULL);

		if (!real)
			return path_error(lib, err, errlen);
		return load_bin(t, real, at_xstrdup(real), false, err, errlen);
	}
	for (i = 0; i < di->needed.n; i++) {
		char *path;

		if (!lib_name_matches(lib, di->needed.v[i]))
			continue;
		path = find_in_dirs(di, di->needed.v[i]);
		if (!path)
			continue;
		found++;
		rc = load_bin(t, path, at_xstrdup(path), false, err, errlen);
		if (rc)
			return rc;
	}
	if (found)
		return AT_EXIT_OK;
	return add_scanned_lib(t, lib, t->bins[0].display_path, err, errlen);
}

static int resolve_binary(const struct at_target_opts *o, struct at_target *t, char *err,
			  size_t errlen)
{
	struct dyninfo di = {0};
	char *real = realpath(o->binary, NULL);
	size_t i;
	int rc;

	if (!real)
		return path_error(o->binary, err, errlen);
	rc = load_bin(t, real, at_xstrdup(real), true, err, errlen);
	if (!rc && o->libs.n)
		read_dynamic(t->bins[0].attach_path, &di);
	for (i = 0; !rc && i < o->libs.n; i++)
		rc = add_binary_lib(t, &di, o->libs.v[i], err, errlen);
	dyninfo_free(&di);
	return rc;
}

/* ---- Selection ------------------------------------------------------ */

static bool only_noise(const struct at_elf *e)
{
	size_t i;

	for (i = 0; i < e->nfuncs; i++)
		if (!at_is_startup_noise(e->funcs[i].name))
			return false;
	return true;
}

/* No symbols, or (main binary, default selection) nothing but start-up code. */
static bool nothing_to_probe(const struct at_target_opts *o, const struct at_target_bin *b)
{
	if (!b->elf.nfuncs)
		return true;
	return b->is_main && !o->include.n && only_noise(&b->elf);
}

/*
 * A binary with nothing to probe. The main binary may lack symbols when
 * libraries are traced (-b /bin/ls -l libc); a library asked for may not.
 */
static int check_symbols(const struct at_target_opts *o, struct at_target *t, char *err,
			 size_t errlen)
{
	size_t i;

	for (i = 0; i < t->nbins; i++) {
		const struct at_target_bin *b = &t->bins[i];

		if (!nothing_to_probe(o, b))
			continue;
		if (b->is_main && t->nbins > 1) {
			at_warn("%s has no function symbols (stripped); tracing its libraries only",
				b->display_path);
			continue;
		}
		return fail(
		    AT_EXIT_USAGE, err, errlen,
		    "%s has no function symbols (stripped%s); rebuild it with symbols (do not "
		    "strip it, or link with -rdynamic) or install its debug symbols "
		    "(/usr/lib/debug/.build-id/%.2s/%s.debug)",
		    b->display_path, b->elf.from_dynsym ? ", no exported functions" : "",
		    b->elf.build_id[0] ? b->elf.build_id : "xx",
		    b->elf.build_id[0] ? b->elf.build_id + 2 : "...");
	}
	return AT_EXIT_OK;
}

static bool matches_any(const struct at_strv *globs, const char *name, size_t *hits)
{
	bool hit = false;
	size_t g;

	for (g = 0; g < globs->n; g++) {
		if (at_glob_match(globs->v[g], name)) {
			hit = true;
			if (!hits)
				break;
			hits[g]++;
		}
	}
	return hit;
}

static void select_bin(const struct at_target_opts *o, struct at_target_bin *b, size_t *hits)
{
	size_t i;

	b->sel = at_xcalloc(b->elf.nfuncs ? b->elf.nfuncs : 1, sizeof(*b->sel));
	for (i = 0; i < b->elf.nfuncs; i++) {
		const char *name = b->elf.funcs[i].name;
		bool in = o->include.n ? matches_any(&o->include, name, hits)
				       : !at_is_startup_noise(name);

		if (in && !matches_any(&o->exclude, name, NULL))
			b->sel[b->nsel++] = i;
	}
}

/* The list command that shows the names a -f glob could have matched. */
static void make_hint(const struct at_target_opts *o, const struct at_target *t, char *buf,
		      size_t len)
{
	size_t i, n;

	if (t->pid)
		n = (size_t)snprintf(buf, len, "adaptrace list -p %d", (int)t->pid);
	else
		n = (size_t)snprintf(buf, len, "adaptrace list -b %s", t->bins[0].display_path);
	for (i = 0; i < o->libs.n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " -l %s", o->libs.v[i]);
}

static int select_funcs(const struct at_target_opts *o, struct at_target *t, char *err,
			size_t errlen)
{
	size_t *hits = at_xcalloc(o->include.n + 1, sizeof(*hits)), i;
	int rc = AT_EXIT_OK;
	char hint[512];

	make_hint(o, t, hint, sizeof(hint));
	for (i = 0; i < t->nbins; i++) {
		select_bin(o, &t->bins[i], hits);
		t->nsel += t->bins[i].nsel;
	}
	for (i = 0; i < o->include.n && !rc; i++) {
		if (hits[i])
			continue;
		rc = fail(AT_EXIT_USAGE, err, errlen,
			  "-f '%s' matches no function in %s%s; see the names with '%s'",
			  o->include.v[i], t->bins[0].display_path,
			  t->nbins > 1 ? " or its -l libraries" : "", hint);
	}
	if (!rc && !t->nsel)
		rc =
		    fail(AT_EXIT_USAGE, err, errlen,
			 "no function left to trace: the -x globs exclude every selected function");
	free(hits);
	return rc;
}

int at_target_resolve(const struct at_target_opts *o, struct at_target *t, char *err, size_t errlen)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if ((o->pid > 0) == (o->binary != NULL))
		return fail(AT_EXIT_USAGE, err, errlen, "give exactly one of -p PID and -b PATH");
	rc = o->pid > 0 ? resolve_process(o, t, err, errlen) : resolve_binary(o, t, err, errlen);
	if (!rc && !o->no_funcs)
		rc = check_symbols(o, t, err, errlen);
	if (!rc && !o->no_funcs)
		rc = select_funcs(o, t, err, errlen);
	for (size_t i = 0; !rc && !o->no_site_opt && i < t->nbins; i++)
		at_elf_place(&t->bins[i].elf, t->bins[i].sel, t->bins[i].nsel);
	if (rc)
		at_target_free(t);
	return rc;
}

void at_target_free(struct at_target *t)
{
	size_t i;

	for (i = 0; i < t->nbins; i++)
		free_bin(&t->bins[i]);
	free(t->bins);
	memset(t, 0, sizeof(*t));
}
