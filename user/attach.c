// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "attach.h"
#include "util.h"

/* The link_create part of union bpf_attr with the uprobe_multi member (6.6). */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

static int uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, size_t n, bool retprobe, pid_t pid,
			     uint32_t attach_type)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = attach_type;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = (uint32_t)n;
	attr.um_flags = retprobe ? AT_BPF_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = pid > 0 ? (uint32_t)pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* The kernel's internal ENOTSUPP, which reaches user space as is. */
#define ENOTSUPP_ERRNO 524

/* A site in our own text for the feature probe. */
__attribute__((noinline)) int at_feature_probe_site(int x)
{
	asm volatile("" ::: "memory");
	return x + 1;
}

int at_self_offset(uint64_t *off)
{
	return at_func_offset((const void *)&at_feature_probe_site, off);
}

/* File offset of one of our own functions, from /proc/self/maps. */
int at_func_offset(const void *fn, uint64_t *off)
{
	uintptr_t addr = (uintptr_t)fn;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (addr >= start && addr < end) {
			*off = addr - start + pgoff;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Does a trivial program of this attach type link to a function of our own? */
static bool link_type_works(uint32_t attach_type, uint64_t off)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	uint64_t cookie = 0;
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "at_feat", "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	link = uprobe_multi_link(prog, "/proc/self/exe", &off, &cookie, 1, false, getpid(),
				 attach_type);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0;
}

/*
 * Whether the kernel's BTF has the socket tracepoints of the coarse
 * budget's yardsticks: one read of the BTF (about 50 ms here) for both.
 */
static void probe_sock_tps(bool *recv, bool *send)
{
	struct btf *btf = btf__load_vmlinux_btf();

	*recv = *send = false;
	if (!btf)
		return;
	*recv = btf__find_by_name_kind(btf, "btf_trace_sock_recv_length", BTF_KIND_TYPEDEF) > 0;
	*send = btf__find_by_name_kind(btf, "btf_trace_sock_send_length", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
}

static bool sock_tp(bool want_send)
{
	static bool probed, recv, send;

	if (!probed) {
		probe_sock_tps(&recv, &send);
		probed = true;
	}
	return want_send ? send : recv;
}

static void probe_features(struct at_features *f)
{
	uint64_t off;

	f->probed = true;
	if (at_env_flag("ADAPTRACE_NO_UPROBE_MULTI") || at_self_offset(&off))
		return;
	f->uprobe_multi = link_type_works(AT_BPF_TRACE_UPROBE_MULTI, off);
	f->uprobe_session = f->uprobe_multi && !at_env_flag("ADAPTRACE_NO_UPROBE_SESSION") &&
			    link_type_works(AT_BPF_TRACE_UPROBE_SESSION, off);
}

bool at_has_sock_recv_tp(void)
{
	return sock_tp(false);
}

bool at_has_sock_send_tp(void)
{
	return sock_tp(true);
}

const struct at_features *at_features(void)
{
	static struct at_features f;

	if (!f.probed)
		probe_features(&f);
	return &f;
}

void at_prepare_program(struct bpf_program *prog)
{
	if (at_features()->uprobe_multi)
		bpf_program__set_expected_attach_type(prog, AT_BPF_TRACE_UPROBE_MULTI);
}

static int attach_each(struct at_links *l, struct bpf_program *prog, bool retprobe,
		       const char *path, const uint64_t *offsets, const uint64_t *cookies, size_t n,
		       pid_t pid, bool *refused, char *err, size_t errlen)
{
	l->links = at_xrealloc(l->links, l->nlinks + n, sizeof(*l->links));
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookies[i]);
		struct bpf_link *link;

		if (refused[i])
			continue;
		link = bpf_program__attach_uprobe_opts(prog, pid > 0 ? pid : -1, path,
						       (size_t)offsets[i], &opts);
		if (!link) {
			int e = errno;

			if (e == ENOTSUPP_ERRNO || e == EINVAL || e == EILSEQ) {
				refused[i] = true;
				continue;
			}

			snprintf(err, errlen,
				 "cannot attach uprobe to %s at offset 0x%" PRIx64 ": %s", path,
				 offsets[i], strerror(e));
			return -e;
		}
		l->links[l->nlinks++] = link;
	}
	return 0;
}

/*
 * One site the kernel cannot probe (a lock-prefixed or otherwise refused
 * first instruction) fails the whole uprobe_multi link. Split the set until
 * the refused sites are isolated, and attach the rest.
 */
static int attach_multi(struct at_links *l, int prog_fd, bool retprobe, const char *path,
			const uint64_t *offsets, const uint64_t *cookies, size_t n, pid_t pid,
			bool *refused, char *err, size_t errlen, uint32_t type)
{
	int fd = uprobe_multi_link(prog_fd, path, offsets, cookies, n, retprobe, pid, type);

	if (fd >= 0) {
		l->fds = at_xrealloc(l->fds, l->nfds + 1, sizeof(*l->fds));
		l->fds[l->nfds++] = fd;
		return 0;
	}
	if (fd != -ENOTSUPP_ERRNO && fd != -EINVAL && fd != -EILSEQ) {
		snprintf(err, errlen, "cannot attach %zu uprobes to %s: %s", n, path,
			 strerror(-fd));
		return fd;
	}
	if (n == 1) {
		refused[0] = true;
		return 0;
	}
	fd = attach_multi(l, prog_fd, retprobe, path, offsets, cookies, n / 2, pid, refused, err,
			  errlen, type);
	if (fd)
		return fd;
	return attach_multi(l, prog_fd, retprobe, path, offsets + n / 2, cookies + n / 2, n - n / 2,
			    pid, refused + n / 2, err, errlen, type);
}

static int attach_sites(struct at_links *l, struct bpf_program *prog, bool retprobe,
			const char *path, const uint64_t *offsets, const uint64_t *cookies,
			size_t n, pid_t pid, bool *refused, char *err, size_t errlen, uint32_t type)
{
	uint64_t *offs, *cks;
	size_t *idx, m = 0;
	bool *sub;
	int ret;

	/* Only the sites not refused already (by the other direction). */
	offs = at_xcalloc(n, sizeof(*offs));
	cks = at_xcalloc(n, sizeof(*cks));
	idx = at_xcalloc(n, sizeof(*idx));
	sub = at_xcalloc(n, sizeof(*sub));
	for (size_t i = 0; i < n; i++) {
		if (refused[i])
			continue;
		offs[m] = offsets[i];
		cks[m] = cookies[i];
		idx[m++] = i;
	}
	ret = m ? attach_multi(l, bpf_program__fd(prog), retprobe, path, offs, cks, m, pid, sub,
			       err, errlen, type)
		: 0;
	for (size_t j = 0; j < m; j++)
		if (sub[j])
			refused[idx[j]] = true;
	free(offs);
	free(cks);
	free(idx);
	free(sub);
	return ret;
}

int at_attach_uprobes(struct at_links *l, struct bpf_program *prog, bool retprobe, const char *path,
		      const uint64_t *offsets, const uint64_t *cookies, size_t n, pid_t pid,
		      bool *refused, char *err, size_t errlen)
{
	if (!at_features()->uprobe_multi)
		return attach_each(l, prog, retprobe, path, offsets, cookies, n, pid, refused, err,
				   errlen);
	return attach_sites(l, prog, retprobe, path, offsets, cookies, n, pid, refused, err, errlen,
			    AT_BPF_TRACE_UPROBE_MULTI);
}

int at_attach_session(struct at_links *l, struct bpf_program *prog, const char *path,
		      const uint64_t *offsets, const uint64_t *cookies, size_t n, pid_t pid,
		      bool *refused, char *err, size_t errlen)
{
	return attach_sites(l, prog, false, path, offsets, cookies, n, pid, refused, err, errlen,
			    AT_BPF_TRACE_UPROBE_SESSION);
}

void at_links_move_up(struct at_links *l)
{
	int top = 0;

	for (size_t i = 0; i < l->nfds; i++) {
		int fd = fcntl(l->fds[i], F_DUPFD_CLOEXEC, 1024);

		if (fd < 0)
			fd = fcntl(l->fds[i], F_DUPFD_CLOEXEC, top + 1);
		if (fd < 0)
			continue;
		close(l->fds[i]);
		l->fds[i] = fd;
		if (fd > top)
			top = fd;
	}
}

struct closer {
	int fd;
	struct bpf_link *link;
	pthread_t th;
	bool started;
};

static void *close_one(void *p)
{
	struct closer *c = p;

	if (c->link)
		bpf_link__destroy(c->link);
	else
		close(c->fd);
	return NULL;
}

void at_links_destroy_together(struct at_links *const *sets, size_t nsets)
{
	struct closer *c;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < nsets; i++)
		n += sets[i]->nfds + sets[i]->nlinks;
	c = at_xcalloc(n ? n : 1, sizeof(*c));
	for (size_t i = 0; i < nsets; i++) {
		for (size_t j = 0; j < sets[i]->nfds; j++)
			c[k++].fd = sets[i]->fds[j];
		for (size_t j = 0; j < sets[i]->nlinks; j++)
			c[k++].link = sets[i]->links[j];
	}
	/* Every release starts (and unregisters its consumers) before any waits. */
	if (n > 1) /* one needs no thread */
		for (k = 0; k < n; k++)
			c[k].started = pthread_create(&c[k].th, NULL, close_one, &c[k]) == 0;
	for (k = 0; k < n; k++) {
		if (c[k].started)
			pthread_join(c[k].th, NULL);
		else
			close_one(&c[k]);
	}
	free(c);
	for (size_t i = 0; i < nsets; i++) {
		free(sets[i]->fds);
		free(sets[i]->links);
		memset(sets[i], 0, sizeof(*sets[i]));
	}
}

void at_links_append(struct at_links *dst, struct at_links *src)
{
	if (src->nfds) {
		dst->fds = at_xrealloc(dst->fds, dst->nfds + src->nfds, sizeof(*dst->fds));
		memcpy(dst->fds + dst->nfds, src->fds, src->nfds * sizeof(*src->fds));
		dst->nfds += src->nfds;
	}
	if (src->nlinks) {
		dst->links =
		    at_xrealloc(dst->links, dst->nlinks + src->nlinks, sizeof(*dst->links));
		memcpy(dst->links + dst->nlinks, src->links, src->nlinks * sizeof(*src->links));
		dst->nlinks += src->nlinks;
	}
	free(src->fds);
	free(src->links);
	memset(src, 0, sizeof(*src));
}

void at_links_destroy(struct at_links *l)
{
	for (size_t i = 0; i < l->nfds; i++)
		close(l->fds[i]);
	for (size_t i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	free(l->fds);
	free(l->links);
	memset(l, 0, sizeof(*l));
}
