// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * streamgen: offer detail events to a running `adaptrace record` at a set
 * rate, from this CPU, through adaptrace's own ring buffer (duplicated
 * from the recorder with pidfd_getfd), and report what was written and
 * what the ring buffer refused. The recorder drains them into its trace
 * file exactly as it drains events from its probes.
 *
 * Usage: streamgen -p ADAPTRACE_PID [-r EVENTS_PER_S] [-s SECONDS] [-i ID]
 *                  [-b BATCH] [-c CPU] [-o streamgen.bpf.o]
 * Output: written=N failed=N seconds=S offered=EVENTS_PER_S
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

struct gen_args {
	uint32_t n, id;
	uint64_t wakeup, seq;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A copy of the recorder's detail ring buffer (the map named "events"),
 * or -1. The coarse phase has a one-page ring buffer of its own (duty_wake,
 * since 2026-11-26); taking the first ring buffer found took that one, and
 * every event after the first 39 was refused.
 */
static int find_ringbuf(int pid, int pidfd, uint32_t *max_entries)
{
	char path[64], line[128];
	struct dirent *de;
	int found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		char p[sizeof(path) + sizeof(de->d_name) + 2];
		struct bpf_map_info info = {0};
		uint32_t len = sizeof(info);
		unsigned type = 0, max = 0;
		FILE *f;
		int fd;

		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "map_type: %u", &type);
			sscanf(line, "max_entries: %u", &max);
		}
		fclose(f);
		if (type != BPF_MAP_TYPE_RINGBUF)
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(de->d_name), 0);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "events")) {
			found = fd;
			*max_entries = max;
		} else {
			close(fd);
		}
	}
	closedir(d);
	return found;
}

int main(int argc, char **argv)
{
	const char *obj_path = NULL;
	double rate = 0, seconds = 5, t0, t;
	int pid = 0, cpu = -1, batch = 256, opt, pidfd, rbfd, prog_fd, bss_fd;
	uint32_t id = 0, max_entries = 0, key = 0;
	uint64_t counts[2] = {0}, sent = 0;
	struct bpf_object *obj;
	struct bpf_map *map;
	struct gen_args a = {0};

	while ((opt = getopt(argc, argv, "p:r:s:i:b:c:o:")) != -1) {
		switch (opt) {
		case 'p':
			pid = atoi(optarg);
			break;
		case 'r':
			rate = atof(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'i':
			id = (uint32_t)atoi(optarg);
			break;
		case 'b':
			batch = atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'o':
			obj_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: streamgen -p ADAPTRACE_PID [-r EVENTS_PER_S] "
					"[-s SECONDS] [-i ID] [-b BATCH] [-c CPU] [-o OBJ]\n");
			return 2;
		}
	}
	if (pid <= 0 || batch < 1) {
		fprintf(stderr, "streamgen: -p ADAPTRACE_PID is required\n");
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (!obj_path) {
		static char p[4096];
		ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 32);

		if (n < 0)
			return 2;
		p[n] = 0;
		snprintf(strrchr(p, '/') ?: p, 32, "/streamgen.bpf.o");
		obj_path = p;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	rbfd = pidfd < 0 ? -1 : find_ringbuf(pid, pidfd, &max_entries);
	if (rbfd < 0) {
		fprintf(stderr, "streamgen: no detail ring buffer (\"events\") in process %d\n",
			pid);
		return 1;
	}
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "streamgen: cannot open %s\n", obj_path);
		return 1;
	}
	map = bpf_object__find_map_by_name(obj, "events");
	if (!map || bpf_map__reuse_fd(map, rbfd) || bpf_object__load(obj)) {
		fprintf(stderr, "streamgen: cannot load %s on the recorder's ring buffer\n",
			obj_path);
		return 1;
	}
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "gen"));
	bss_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, ".bss"));
	/* As bpf/detail.bpf.c with the default ring buffer: wake at a quarter full. */
	a.wakeup = max_entries / 4;
	a.id = id;
	t0 = now_s();
	for (;;) {
		LIBBPF_OPTS(bpf_test_run_opts, ro, .ctx_in = &a, .ctx_size_in = sizeof(a));

		t = now_s() - t0;
		if (t >= seconds)
			break;
		/* Paced: never ahead of rate * elapsed. */
		if (rate > 0 && (double)sent >= rate * t)
			continue;
		a.n = (uint32_t)batch;
		a.seq = sent;
		if (bpf_prog_test_run_opts(prog_fd, &ro)) {
			fprintf(stderr, "streamgen: test run: %s\n", strerror(errno));
			return 1;
		}
		sent += (uint64_t)batch;
	}
	t = now_s() - t0;
	bpf_map_lookup_elem(bss_fd, &key, counts);
	printf("written=%llu failed=%llu seconds=%.3f offered=%.0f\n",
	       (unsigned long long)counts[0], (unsigned long long)counts[1], t, (double)sent / t);
	bpf_object__close(obj);
	return 0;
}
