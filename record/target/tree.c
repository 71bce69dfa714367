// SPDX-License-Identifier: MIT
/*
 * The launched command's process tree. The BPF tracked set is the tree: the
 * command and every process forked below it, whatever became of its parent,
 * process group or session since, until it exits. So the tree needs neither
 * a process group of its own (which would take the terminal's job control
 * from the command) nor a subreaper.
 *
 * Ending it: SIGTERM to each process, SIGKILL to what is left TREE_GRACE
 * seconds later. -d does that while still recording, and so does the end of
 * a recording with --kill-on-exit. For the ends xpu-record cannot handle
 * (SIGKILL, a crash), --kill-on-exit forks a watchdog before the command: it
 * keeps only the tracked map and the fork and exit tracepoint links (they
 * stay attached while it holds their fds, so the set stays current), waits
 * for end-of-file on a pipe whose write end only xpu-record holds, and then
 * ends what is left of the tree the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/target/tree.h"
#include "record/kernel/bpf.h"
#include "record/clock.h"

int tree__signal(struct record_bpf *b, int sig)
{
	pid_t *pids;
	int n = record_bpf__tracked(b, &pids), sent = 0;

	for (int i = 0; i < n; i++) {
		int fd = pidfd_open(pids[i], 0);

		if (fd < 0)
			continue;
		/* The pid may have been freed and reused since the map was read:
		 * the process behind the pidfd is ours if it is tracked now. */
		if (record_bpf__is_tracked(b, pids[i]) && !pidfd_send_signal(fd, sig, NULL, 0))
			sent++;
		close(fd);
	}
	free(pids);
	return sent;
}

bool tree__end_step(struct record_bpf *b, struct tree_end *te, double now)
{
	if (te->phase == 0) {
		te->signalled = tree__signal(b, SIGTERM);
		te->phase = 1;
		te->next = now + TREE_GRACE;
	} else if (te->phase == 1 && now >= te->next) {
		te->phase = 2;
		te->next = now + TREE_GRACE;
	}
	if (te->phase == 2)
		tree__signal(b, SIGKILL);	/* each step: also what they forked since */
	te->left = record_bpf__tracked(b, NULL);
	return !te->left || (te->phase == 2 && now >= te->next);
}

/* Closes every fd from 3 up except keep[] (at most 4). */
static void tree__close_except(int *keep, int n)
{
	unsigned int from = 3;

	for (int i = 1; i < n; i++)	/* sort */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if (keep[i] > (int)from)
			close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

static void __attribute__((noreturn)) tree__watch(struct record_bpf *b, int life)
{
	/* Only the end of xpu-record ends the watchdog: not the terminal's
	 * signals to the foreground group, not a kill(0, ...). */
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE,
				       SIGTSTP, SIGTTIN, SIGTTOU };
	struct tree_end te = { 0 };
	int keep[4], nk, null, n;
	sigset_t none;
	char c;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "xpu-watchdog");
	/* Hold nothing of the recording: output, sampler, sockets, pipes. */
	nk = record_bpf__tracking_fds(b, keep);
	keep[nk++] = life;
	tree__close_except(keep, nk);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = STDIN_FILENO; null >= 0 && fd <= STDOUT_FILENO; fd++) {
		bool kept = false;

		for (int i = 0; i < nk; i++)
			kept |= keep[i] == fd;	/* xpu-record started with it closed */
		if (!kept && fd != null)
			dup2(null, fd);
	}
	if (null > STDERR_FILENO)
		close(null);
	if (chdir("/")) {
		/* only so that no mount stays busy: nothing to do */
	}

	while (read(life, &c, 1) < 0 && errno == EINTR)
		;
	n = record_bpf__tracked(b, NULL);
	if (n)
		warn("the recorder is gone: ending the %d processes left of the command "
		     "(--kill-on-exit)", n);
	while (!tree__end_step(b, &te, record__now()))
		usleep(20000);
	if (te.left)
		warn("--kill-on-exit: %d processes of the command survived SIGKILL", te.left);
	_exit(0);
}

int tree__watchdog(struct record_bpf *b)
{
	int life[2];
	pid_t pid;

	if (pipe2(life, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(life[0]);
		close(life[1]);
		return e;
	}
	if (pid == 0) {
		close(life[1]);
		tree__watch(b, life[0]);
	}
	close(life[0]);
	/* life[1] stays open (close-on-exec) until xpu-record exits. */
	return 0;
}
