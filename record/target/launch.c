// SPDX-License-Identifier: MIT
/*
 * Starting the command perf-style: fork, let the child block on a pipe
 * until the BPF programs and events are ready and its pid is tracked, then
 * exec. If setup fails in between, the child is killed before it ever runs
 * the program. The command starts with the signal dispositions and mask
 * xpu-record was started with, not with the ones xpu-record set for itself.
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
#include "cupti/channel/wire.h"
#include "record/target/launch.h"

/* Every disposition and the mask as they were when xpu-record started. A
 * started program has no handlers (exec resets them), only SIG_DFL/SIG_IGN. */
static struct {
	sigset_t mask;
	struct sigaction act[NSIG];
	bool saved[NSIG];
} launch__start;

void launch__save_signals(void)
{
	sigprocmask(SIG_SETMASK, NULL, &launch__start.mask);
	for (int sig = 1; sig < NSIG; sig++)	/* glibc's internal ones fail: skipped */
		launch__start.saved[sig] = !sigaction(sig, NULL, &launch__start.act[sig]);
}

/* In the child, with every signal blocked: sigaction and sigprocmask are
 * async-signal-safe. SIGKILL and SIGSTOP cannot be set and need not be. */
static void launch__restore_signals(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (launch__start.saved[sig] && sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &launch__start.act[sig], NULL);
	sigprocmask(SIG_SETMASK, &launch__start.mask, NULL);
}

int launch__fork(struct launch *l, const char *path, char **argv, const char *cupti_lib,
		 const char *socket_path, bool nvtx, bool walk)
{
	sigset_t all, old;
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	/* No handler of ours may run in the child between fork and restore. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		close(go[0]);
		close(go[1]);
		return e;
	}
	if (pid == 0) {
		char c;
		ssize_t n;

		close(go[1]);
		launch__restore_signals();
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)	/* recorder gave up: never run unprofiled */
			_exit(127);
		if (cupti_lib) {
			setenv("CUDA_INJECTION64_PATH", cupti_lib, 1);
			setenv(XPU_CUPTI_SOCKET_ENV, socket_path, 1);
			/* the user's own injection stays (META nvtx says so) */
			if (nvtx)
				setenv(XPU_NVTX_INJECTION_ENV, cupti_lib, 0);
			else
				setenv(XPU_CUPTI_NVTX_ENV, "off", 1);
			/* a benchmark's own XPU_CUPTI_MARKER stays */
			if (walk)
				setenv(XPU_CUPTI_MARKER_ENV, "walk", 0);
			if (xpu_verbose)
				setenv(XPU_CUPTI_VERBOSE_ENV, "1", 1);
		}
		execv(path, argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", xpu_progname, path, strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
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
