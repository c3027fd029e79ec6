// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sockfloor: what the socket tracepoints under adaptrace's --budget
 * yardsticks cost on this host, per event. A loopback TCP pair sends one
 * byte back and forth (one write and one read a round trip) with no
 * programs, with empty programs that see another process's events (what
 * every process pays while a recorder runs) and with empty programs that
 * count this process's (the target's floor). Configurations interleave.
 *
 * Usage: sockfloor [-r ROUNDS] [-n ROUND_TRIPS] [-o sockfloor.bpf.o]
 * Output: one line per configuration:
 *   config=NAME ns_per_round_trip=MEDIAN min=… max=… ns_per_event=(MEDIAN-NONE)/2
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#define MAX_ROUNDS 64

enum config { NONE, OTHER, TARGET, NCONFIGS };
static const char *const names[NCONFIGS] = {"none", "other-process", "target"};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A connected loopback TCP pair, Nagle off so each byte goes at once. */
static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	if (fd[1] < 0)
		return -1;
	setsockopt(fd[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static double round_trips(const int fd[2], long n)
{
	char c = 'x';
	double t = now_ns();

	for (long i = 0; i < n; i++) {
		if (write(fd[0], &c, 1) != 1 || read(fd[1], &c, 1) != 1) {
			perror("sockfloor: loopback");
			exit(1);
		}
	}
	return (now_ns() - t) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct bpf_map *find_bss(struct bpf_object *obj)
{
	struct bpf_map *m;

	for (m = bpf_object__next_map(obj, NULL); m; m = bpf_object__next_map(obj, m))
		if (strstr(bpf_map__name(m), ".bss"))
			return m;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = "build/sockfloor.bpf.o";
	int rounds = 7, opt, fd[2];
	long n = 100000;
	double t[NCONFIGS][MAX_ROUNDS], med[NCONFIGS];
	struct bpf_program *recv_prog, *send_prog;
	struct bpf_object *obj;
	struct bpf_map *bss;
	struct {
		__u32 tgid, pad;
		__u64 events;
	} vars = {0};

	while ((opt = getopt(argc, argv, "r:n:o:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			n = atol(optarg);
			break;
		case 'o':
			path = optarg;
			break;
		default:
			fprintf(
			    stderr,
			    "usage: sockfloor [-r ROUNDS] [-n ROUND_TRIPS] [-o sockfloor.bpf.o]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
		fprintf(stderr, "sockfloor: -r takes 1-%d rounds, -n a positive count\n",
			MAX_ROUNDS);
		return 2;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "sockfloor: cannot load %s (needs root and BTF)\n", path);
		return 1;
	}
	recv_prog = bpf_object__find_program_by_name(obj, "floor_recv");
	send_prog = bpf_object__find_program_by_name(obj, "floor_send");
	bss = find_bss(obj);
	if (!recv_prog || !send_prog || !bss || tcp_pair(fd)) {
		fprintf(stderr, "sockfloor: setup failed\n");
		return 1;
	}
	round_trips(fd, n / 10 + 1); /* warm up */
	for (int r = 0; r < rounds; r++) {
		for (int c = 0; c < NCONFIGS; c++) {
			struct bpf_link *a = NULL, *b = NULL;
			__u32 key = 0;

			/* The tgid whose events the programs count; 0 is no process. */
			vars.tgid = c == TARGET ? (__u32)getpid() : 0;
			vars.events = 0;
			if (bpf_map__update_elem(bss, &key, sizeof(key), &vars, sizeof(vars), 0)) {
				fprintf(stderr, "sockfloor: cannot set the target\n");
				return 1;
			}
			if (c != NONE) {
				a = bpf_program__attach(recv_prog);
				b = bpf_program__attach(send_prog);
				if (!a || !b) {
					fprintf(
					    stderr,
					    "sockfloor: cannot attach to the socket tracepoints\n");
					return 1;
				}
			}
			t[c][r] = round_trips(fd, n);
			bpf_link__destroy(a);
			bpf_link__destroy(b);
			/* The target's programs must have seen its every read and write. */
			if (c == TARGET &&
			    (bpf_map__lookup_elem(bss, &key, sizeof(key), &vars, sizeof(vars), 0) ||
			     vars.events != 2 * (__u64)n)) {
				fprintf(stderr, "sockfloor: the programs saw %llu of %ld events\n",
					(unsigned long long)vars.events, 2 * n);
				return 1;
			}
		}
	}
	for (int c = 0; c < NCONFIGS; c++) {
		qsort(t[c], (size_t)rounds, sizeof(double), cmp_double);
		med[c] = t[c][rounds / 2];
	}
	for (int c = 0; c < NCONFIGS; c++)
		printf("config=%s ns_per_round_trip=%.0f min=%.0f max=%.0f ns_per_event=%.0f\n",
		       names[c], med[c], t[c][0], t[c][rounds - 1], (med[c] - med[NONE]) / 2);
	bpf_object__close(obj);
	return 0;
}
