/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * evloop: an event-loop server and its clients, like redis under
 * redis-benchmark. A child process runs CLIENTS threads (4 to 64, default
 * 4), each sending a request and waiting for its reply, for SECONDS
 * (default 6): its socket I/O is not the server's. In turns of a second
 * all, a quarter and half of the clients send, so the requests per turn
 * change and the reads cannot stand in for the turns. The main thread
 * turns an epoll loop: before_sleep() writes the replies pending (one
 * send_reply() each), then epoll_wait, after_sleep(), and a
 * handle_request() per request read. So before_sleep and after_sleep run
 * once a turn, handle_request once a read and send_reply once a write.
 * Prints "turns=N" (before_sleep's calls), "wakes=N" (after_sleep's),
 * "requests=" and "replies=", the exact counts.
 * Usage: evloop [SECONDS [CLIENTS]]
 */
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define MAX_CLIENTS 64
#define REQ_LEN	    32

static int nclients = 4;
static int server_fd[MAX_CLIENTS], client_fd[MAX_CLIENTS];
static bool pending[MAX_CLIENTS];
static double secs = 6;
static uint64_t start_ns;
static unsigned long n_turns, n_wakes, n_requests, n_replies;

TRACED void send_reply(int c)
{
	n_replies++;
	if (send(server_fd[c], "ok", 2, MSG_NOSIGNAL) < 0)
		OPAQUE();
}

TRACED void before_sleep(void)
{
	n_turns++;
	for (int c = 0; c < nclients; c++)
		if (pending[c]) {
			pending[c] = false;
			send_reply(c);
		}
}

TRACED void after_sleep(void)
{
	n_wakes++;
	OPAQUE();
}

TRACED void handle_request(int c)
{
	n_requests++;
	pending[c] = true;
}

static void *client(void *arg)
{
	int fd = client_fd[(intptr_t)arg];
	char msg[REQ_LEN] = {0}, reply[8];
	const int active[3] = {nclients, nclients / 4, nclients / 2};
	uint64_t end = start_ns + (uint64_t)(secs * 1e9), now;

	while ((now = now_ns()) < end) {
		if ((intptr_t)arg >= active[(now - start_ns) / 1000000000 % 3]) {
			sleep_ns(1000000);
			continue;
		}
		if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) < 0 ||
		    recv(fd, reply, sizeof(reply), 0) <= 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	return NULL;
}

/* The clients, in a process of their own. */
static int clients(void)
{
	pthread_t th[MAX_CLIENTS];

	for (intptr_t c = 0; c < nclients; c++) {
		close(server_fd[c]);
		pthread_create(&th[c], NULL, client, (void *)c);
	}
	for (int c = 0; c < nclients; c++)
		pthread_join(th[c], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct epoll_event ev[MAX_CLIENTS];
	int ep, open_fds;
	pid_t child;

	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2)
		nclients = atoi(argv[2]);
	if (nclients < 4 || nclients > MAX_CLIENTS)
		return 2;
	open_fds = nclients;
	ep = epoll_create1(0);
	for (intptr_t c = 0; c < nclients; c++) {
		int sv[2];

		if (ep < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
			return 1;
		server_fd[c] = sv[0];
		client_fd[c] = sv[1];
		ev[0] = (struct epoll_event){.events = EPOLLIN, .data.u32 = (uint32_t)c};
		if (epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev[0]) < 0)
			return 1;
	}
	start_ns = now_ns();
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0)
		_exit(clients());
	for (int c = 0; c < nclients; c++)
		close(client_fd[c]);
	while (open_fds > 0) {
		int n;

		before_sleep();
		n = epoll_wait(ep, ev, nclients, 100);
		after_sleep();
		for (int i = 0; i < n; i++) {
			int c = (int)ev[i].data.u32;
			char buf[64];
			ssize_t len = recv(server_fd[c], buf, sizeof(buf), MSG_DONTWAIT);

			if (len > 0) {
				handle_request(c);
			} else if (len == 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, server_fd[c], NULL);
				open_fds--;
			}
		}
	}
	waitpid(child, NULL, 0);
	printf("turns=%lu\nwakes=%lu\nrequests=%lu\nreplies=%lu\n", n_turns, n_wakes, n_requests,
	       n_replies);
	return 0;
}
