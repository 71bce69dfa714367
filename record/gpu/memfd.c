// SPDX-License-Identifier: MIT
/* The library's memfd copy in a process being attached (memfd.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "record/gpu/memfd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* Whether our descriptor mfd is a memfd named name, empty and writable. */
static int memfd__check(int mfd, const char *name)
{
	char link[64], target[PATH_MAX], want[128];
	struct stat st;
	ssize_t n;
	int fl;

	if (fstat(mfd, &st) || !S_ISREG(st.st_mode))
		return -EPERM;
	if (st.st_size != 0 || st.st_nlink != 0)	/* a memfd is no file's name */
		return -EPERM;
	fl = fcntl(mfd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return -EPERM;
	if (fcntl(mfd, F_GET_SEALS) < 0)		/* only memfds (and shmem) have seals */
		return -EPERM;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", mfd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -EPERM;
	target[n] = 0;
	snprintf(want, sizeof(want), "/memfd:%s (deleted)", name);
	return strcmp(target, want) ? -EPERM : 0;
}

int memfd__take(pid_t pid, int fd, const char *name)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), mfd, err;

	if (pidfd < 0)
		return -errno;
	mfd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = mfd < 0 ? -errno : 0;
	close(pidfd);
	if (err)
		return err;
	err = memfd__check(mfd, name);
	if (err) {
		debug(1, "pid %d: fd %d is not the empty memfd it made: not written", pid, fd);
		close(mfd);
		return err;
	}
	return mfd;
}

int memfd__fill(int mfd, const char *lib, void (*each)(void))
{
	char buf[65536];
	int in = open(lib, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(mfd, buf, n) != n) {
			err = -EIO;
			break;
		}
		if (each)
			each();
	}
	if (n < 0)
		err = -errno;
	close(in);
	return err;
}
