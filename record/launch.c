// SPDX-License-Identifier: MIT
/*
 * Starting the command perf-style: fork, let the child block on a pipe
 * until the BPF programs and events are ready and its pid is tracked, then
 * exec. If setup fails in between, the child is killed before it ever runs
 * the program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/log.h"
#include "cupti/channel.h"
#include "record/record.h"

int launch__fork(struct launch *l, const char *path, char **argv, const char *cupti_lib,
		 const char *socket_path)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		return e;
	}
	if (pid == 0) {
		char c;
		ssize_t n;

		close(go[1]);
		/* The recorder blocks SIGINT/SIGTERM handling only for itself. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)	/* recorder gave up: never run unprofiled */
			_exit(127);
		if (cupti_lib) {
			setenv("CUDA_INJECTION64_PATH", cupti_lib, 1);
			setenv(XPU_CUPTI_SOCKET_ENV, socket_path, 1);
		}
		execv(path, argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", xpu_progname, path, strerror(errno));
		_exit(127);
	}
	close(go[0]);
	l->pid = pid;
	l->go_fd = go[1];
	return 0;
}

int launch__go(struct launch *l)
{
	char c = 1;
	int ret = write(l->go_fd, &c, 1) == 1 ? 0 : -errno;

	close(l->go_fd);
	l->go_fd = -1;
	return ret;
}

void launch__abort(struct launch *l)
{
	if (l->pid <= 0)
		return;
	if (l->go_fd >= 0)
		close(l->go_fd);	/* the child sees EOF and exits 127 */
	l->go_fd = -1;
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
	l->pid = 0;
}
