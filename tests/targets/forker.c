/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * forker: the parent forks a child that execs this binary again ("child"),
 * then both call fk_work(): the parent PARENT_CALLS times, the child
 * CHILD_CALLS times. Usage: forker [--wait-signal] | forker child
 * With --wait-signal the parent waits for SIGUSR1 before forking.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define PARENT_CALLS 100
#define CHILD_CALLS  30

static unsigned long n_work;
volatile unsigned long forker_sink;

TRACED void fk_work(void)
{
	n_work++;
	forker_sink++;
	OPAQUE();
}

int main(int argc, char **argv)
{
	int status = 0;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		for (int i = 0; i < CHILD_CALLS; i++)
			fk_work();
		printf("child fk_work=%lu\n", n_work);
		return 0;
	}
	if (has_arg(argc, argv, "--wait-signal"))
		gate_wait();

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		perror("exec");
		_exit(127);
	}
	for (int i = 0; i < PARENT_CALLS; i++)
		fk_work();
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "forker: child failed (status %d)\n", status);
		return 1;
	}
	printf("parent fk_work=%lu\n", n_work);
	return 0;
}
