/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Attaching one BPF program to many uprobes. The kernel's uprobe_multi link
 * (6.6+) attaches thousands of sites in one bpf(BPF_LINK_CREATE) call;
 * Debian's libbpf 1.1 has no API for it, so we call bpf() directly, and fall
 * back to one perf-event link per site where the kernel lacks it.
 */
#ifndef AT_ATTACH_H
#define AT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct bpf_link;

/* Values of the kernel ABI, absent from Debian 12's headers. */
#define AT_BPF_TRACE_UPROBE_MULTI    48
#define AT_BPF_TRACE_UPROBE_SESSION  57
#define AT_BPF_F_UPROBE_MULTI_RETURN 1U

struct at_features {
	bool uprobe_multi;
	bool uprobe_session; /* 6.13+; off with ADAPTRACE_NO_UPROBE_SESSION=1 */
	bool probed;
};

/*
 * Find out once whether uprobe_multi works here, by attaching a trivial
 * program to a function of our own. ADAPTRACE_NO_UPROBE_MULTI=1 forces
 * the fallback (for tests of it).
 */
const struct at_features *at_features(void);

/*
 * Whether the kernel has the sock_recv_length and sock_send_length
 * tracepoints (6.4+), the coarse budget's yardsticks. Asked only when
 * needed: reading the kernel's BTF takes about 50 ms here (once for both).
 */
bool at_has_sock_recv_tp(void);
bool at_has_sock_send_tp(void);

/* Set the programs' expected attach type to match the features; before load. */
void at_prepare_program(struct bpf_program *prog);

struct at_links {
	int *fds; /* uprobe_multi links */
	size_t nfds;
	struct bpf_link **links; /* fallback: one per site */
	size_t nlinks;
};

/*
 * Attach prog at offsets[] of path (entry, or return with retprobe), each
 * site with its cookie. pid > 0 limits it to that process. Sites already
 * marked in refused[] are skipped; sites the kernel refuses to probe are
 * marked there and the rest attached. Returns 0 or -errno with err filled.
 */
int at_attach_uprobes(struct at_links *l, struct bpf_program *prog, bool retprobe, const char *path,
		      const uint64_t *offsets, const uint64_t *cookies, size_t n, pid_t pid,
		      bool *refused, char *err, size_t errlen);
void at_links_destroy(struct at_links *l);
/* Move src's links to the end of dst; src is left empty. */
void at_links_append(struct at_links *dst, struct at_links *src);
/*
 * Release several sets of return (or session) links at once, one thread
 * per link. Each release unregisters its probes and then waits for the
 * uretprobe SRCU grace period, which cannot end while any return probe
 * stays attached to a hot function: released one after another, the
 * first one would wait for the others forever. Together, every probe is
 * unregistered before any release waits.
 */
void at_links_destroy_together(struct at_links *const *sets, size_t nsets);

/*
 * Same with a uprobe session link (6.13+): prog, loaded with expected
 * attach type AT_BPF_TRACE_UPROBE_SESSION, sees entry and return. No
 * per-site fallback: the caller probes for it and uses entry/return links.
 */
int at_attach_session(struct at_links *l, struct bpf_program *prog, const char *path,
		      const uint64_t *offsets, const uint64_t *cookies, size_t n, pid_t pid,
		      bool *refused, char *err, size_t errlen);

/* File offset of a function of adaptrace itself, for feature probes. */
int at_self_offset(uint64_t *off);
/* File offset of any function of adaptrace itself. */
int at_func_offset(const void *fn, uint64_t *off);
/* That function: calling it hits probes placed at at_self_offset(). */
int at_feature_probe_site(int x);

/*
 * Move l's link descriptors above every descriptor now open, so that they
 * are released first when the process dies: the kernel runs the deferred
 * releases of an exiting task last-closed first.
 */
void at_links_move_up(struct at_links *l);

#endif
