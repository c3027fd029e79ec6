/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * connburst: a TCP server on loopback whose clients come and go in bursts,
 * like redis-benchmark's 50 between its runs. A child process runs rounds
 * for SECONDS (default 6): CLIENTS connections (default 32) open at once,
 * each sends REQUESTS requests (default 100), one at a time, then all
 * hang up. The main thread turns an epoll loop: it accepts every waiting
 * connection (setup_client(), SETUP_ALLOCS obj_alloc() calls each), reads
 * (handle_request(), one obj_alloc() a request) and frees a client that
 * hung up (teardown_client(), SETUP_ALLOCS obj_free() calls). A client's
 * setup thus follows a hang-up in the same turn, with none of the
 * requests' reads in between.
 * Prints "accepts=N", "requests=N", "allocs=N" and "frees=N", the exact
 * counts.
 * Usage: connburst [SECONDS [CLIENTS [REQUESTS]]]
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define MAX_CLIENTS  128
#define SETUP_ALLOCS 8
#define REQ_LEN	     32

static unsigned long n_accepts, n_requests, n_allocs, n_frees;

TRACED void obj_alloc(void)
{
	n_allocs++;
	OPAQUE();
}

TRACED void obj_free(void)
{
	n_frees++;
	OPAQUE();
}

TRACED void setup_client(void)
{
	n_accepts++;
	for (int i = 0; i < SETUP_ALLOCS; i++)
		obj_alloc();
}

TRACED void teardown_client(void)
{
	for (int i = 0; i < SETUP_ALLOCS; i++)
		obj_free();
}

TRACED void handle_request(int fd)
{
	n_requests++;
	obj_alloc();
	if (send(fd, "ok", 2, MSG_NOSIGNAL) < 0)
		OPAQUE();
}

/* The clients: rounds of connecting at once, requests, hanging up at once. */
static int clients(uint16_t port, double secs, int n, int requests)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = port,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	char msg[REQ_LEN] = {0}, reply[8];
	int fd[MAX_CLIENTS], one = 1;

	while (now_ns() < end) {
		for (int c = 0; c < n; c++) {
			fd[c] = socket(AF_INET, SOCK_STREAM, 0);
			if (fd[c] < 0 || connect(fd[c], (struct sockaddr *)&a, sizeof(a)) < 0)
				return 1;
			setsockopt(fd[c], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		/* Each client in turn, so the server reads one request a turn. */
		for (int r = 0; r < requests; r++)
			for (int c = 0; c < n; c++)
				if (send(fd[c], msg, sizeof(msg), MSG_NOSIGNAL) < 0 ||
				    recv(fd[c], reply, sizeof(reply), 0) <= 0)
					return 1;
		for (int c = 0; c < n; c++)
			close(fd[c]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct epoll_event ev[MAX_CLIENTS];
	double secs = argc > 1 ? atof(argv[1]) : 6;
	int n = argc > 2 ? atoi(argv[2]) : 32, requests = argc > 3 ? atoi(argv[3]) : 100;
	int lfd, ep, status = 0, one = 1;
	pid_t child;

	if (n < 1 || n > MAX_CLIENTS || requests < 1)
		return 2;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ep = epoll_create1(0);
	if (lfd < 0 || ep < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(lfd, MAX_CLIENTS) < 0 || getsockname(lfd, (struct sockaddr *)&a, &alen) < 0)
		return 1;
	ev[0] = (struct epoll_event){.events = EPOLLIN, .data.fd = lfd};
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev[0]) < 0)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0)
		_exit(clients(a.sin_port, secs, n, requests));
	for (;;) {
		int k = epoll_wait(ep, ev, MAX_CLIENTS, 100);

		if (k == 0 && waitpid(child, &status, WNOHANG) == child)
			break;
		for (int i = 0; i < k; i++) {
			int fd = ev[i].data.fd, c;
			char buf[64];
			ssize_t len;

			if (fd == lfd) {
				while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};

					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					setup_client();
					if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce) < 0)
						return 1;
				}
				continue;
			}
			len = recv(fd, buf, sizeof(buf), 0);
			if (len > 0) {
				handle_request(fd);
			} else if (len == 0) {
				teardown_client();
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
			}
		}
	}
	printf("accepts=%lu\nrequests=%lu\nallocs=%lu\nfrees=%lu\n", n_accepts, n_requests,
	       n_allocs, n_frees);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
