// SPDX-License-Identifier: MIT
/*
 * Regular files only, opened without blocking (common/file.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/file.h"

/* file__open_regular() of name in the directory open at dfd */
static int file__open_regular_at(int dfd, const char *name, int flags, uint64_t max,
				 struct stat *stp)
{
	struct stat st;
	int fd, err, fl;

	/* O_NONBLOCK: a FIFO opens at once (no writer needed), a device's
	 * open does not wait for a carrier or a tape */
	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out_close;
	}
	if ((uint64_t)st.st_size > max) {
		err = -EFBIG;
		goto out_close;
	}
	/* no effect on a regular file's reads, but whoever gets the fd
	 * (libdwfl, a copy) expects a plain one */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		err = -errno;
		goto out_close;
	}
	if (stp)
		*stp = st;
	return fd;
out_close:
	close(fd);
	return err;
}

int file__open_regular(const char *path, int flags, uint64_t max, struct stat *st)
{
	return file__open_regular_at(AT_FDCWD, path, flags, max, st);
}

int file__open_dir_nofollow(int dfd, const char *name)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	/* O_DIRECTORY says ENOTDIR for a link: name it as one */
	if (errno == ENOTDIR && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		return -ELOOP;
	return -errno;
}

int file__open_nolinks(const char *path, uint64_t max, struct stat *st)
{
	char name[NAME_MAX + 1];
	const char *p = path;
	int dfd, fd;

	if (path[0] != '/')
		return -EINVAL;
	dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (;;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			fd = n > NAME_MAX ? -ENAMETOOLONG : -EINVAL;
			break;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		if (!*p) {	/* the file itself */
			fd = file__open_regular_at(dfd, name, O_NOFOLLOW, max, st);
			break;
		}
		fd = file__open_dir_nofollow(dfd, name);
		if (fd < 0)
			break;
		close(dfd);
		dfd = fd;
	}
	close(dfd);
	return fd;
}

FILE *file__fopen_regular(const char *path, int flags, uint64_t max)
{
	int fd = file__open_regular(path, flags, max, NULL);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "re");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

long file__read_proc(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !size) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

const char *file__proc_stat(int pid, char *buf, size_t size)
{
	char path[64];
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (file__read_proc(path, buf, size) < 0)
		return NULL;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

bool file__proc_task_live(int pid, int tid)
{
	char path[96], buf[512];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (file__read_proc(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return false;
	return p[2] && p[2] != 'Z' && p[2] != 'X';
}

int file__proc_live_tid(int pid)
{
	char path[64];
	struct dirent *de;
	int tid = -ESRCH;
	DIR *d;

	if (file__proc_task_live(pid, pid))
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return -ESRCH;
	while (tid < 0 && (de = readdir(d))) {
		int t = atoi(de->d_name);

		if (t > 0 && t != pid && file__proc_task_live(pid, t))
			tid = t;
	}
	closedir(d);
	return tid;
}
