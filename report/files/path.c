// SPDX-License-Identifier: MIT
/* Opening files named by a trace: regular files only, no hangs, no escapes
 * (see path.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif
#include "report/files/path.h"

#define PATH_OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

int path__no_openat2;

const char *path__refusal_str(enum path_refusal why)
{
	switch (why) {
	case PATH_OK:		return "ok";
	case PATH_NOT_REGULAR:	return "not a regular file";
	case PATH_SPECIAL:	return "in /proc, /sys or /dev";
	case PATH_PRIVATE:	return "private, neither executable nor world-readable";
	case PATH_ESCAPES:	return "outside the --symfs directory";
	case PATH_REFUSAL_NR:	break;
	}
	return "?";
}

/* The first component of path after "." and ".." are applied as the kernel
 * would without symbolic links ("/usr/../proc/x" -> "proc"): is it proc, sys
 * or dev? Symbolic links into them are caught by path__check(). */
static bool path__is_special(const char *path)
{
	static const char *const special[] = { "proc", "sys", "dev" };
	const char *first = NULL, *p = path;
	size_t first_len = 0;
	int depth = 0;

	if (path[0] != '/')
		return false;
	while (*p) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - c);
		if (!n || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (depth)
				depth--;
			continue;
		}
		if (!depth++) {
			first = c;
			first_len = n;
		}
	}
	for (size_t i = 0; first && i < sizeof(special) / sizeof(special[0]); i++)
		if (first_len == strlen(special[i]) && !memcmp(first, special[i], first_len))
			return true;
	return false;
}

static bool path__pseudo_fs(const struct statfs *sfs)
{
	switch ((unsigned long)sfs->f_type) {
	case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case DEBUGFS_MAGIC: case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC: case CGROUP_SUPER_MAGIC: case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC: case EFIVARFS_MAGIC: case PSTOREFS_MAGIC: case DEVPTS_SUPER_MAGIC:
	case 0x62656570:	/* configfs */
		return true;
	}
	return false;
}

static int path__check(const struct stat *st, const struct statfs *sfs, unsigned int flags,
		       enum path_refusal *why)
{
	if (!S_ISREG(st->st_mode))
		*why = PATH_NOT_REGULAR;
	else if (path__pseudo_fs(sfs))
		*why = PATH_SPECIAL;
	else if ((flags & PATH_FROM_TRACE) && !(st->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) &&
		 !(st->st_mode & S_IROTH))
		*why = PATH_PRIVATE;
	else
		return 0;
	return -EPERM;
}

/* After the open: still a regular file, and the one path__check() saw. */
static int path__opened(int fd, const struct stat *before, unsigned int flags,
			enum path_refusal *why)
{
	struct statfs sfs;
	struct stat st;
	int fl, err;

	if (fstat(fd, &st) || fstatfs(fd, &sfs))
		return -errno;
	err = path__check(&st, &sfs, flags, why);
	if (err)
		return err;
	if (st.st_dev != before->st_dev || st.st_ino != before->st_ino) {
		*why = PATH_NOT_REGULAR;	/* replaced between the check and the open */
		return -EPERM;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
		return -errno;
	return 0;
}

int path__open(const char *path, unsigned int flags, enum path_refusal *why)
{
	enum path_refusal dummy;
	struct statfs sfs;
	struct stat st;
	int fd, err;

	why = why ? why : &dummy;
	*why = PATH_OK;
	if ((flags & PATH_FROM_TRACE) && path__is_special(path)) {
		*why = PATH_SPECIAL;
		return -EPERM;
	}
	/* look before opening: a device's open() has side effects */
	if (stat(path, &st) || statfs(path, &sfs))
		return -errno;
	err = path__check(&st, &sfs, flags, why);
	if (err)
		return err;
	fd = open(path, PATH_OPEN_FLAGS);
	if (fd < 0)
		return -errno;
	err = path__opened(fd, &st, flags, why);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Without openat2: ".." is the only way out of dirfd a trace controls (the
 * directory's own symbolic links are the user's). */
static bool path__has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

static int path__openat_beneath(int dirfd, const char *path, int oflags, enum path_refusal *why)
{
	int fd;

#ifdef SYS_openat2
	if (!path__no_openat2) {
		struct open_how how = {
			.flags = (uint64_t)oflags,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == EXDEV) {
			*why = PATH_ESCAPES;
			return -EPERM;
		}
		if (errno != ENOSYS)
			return -errno;
		path__no_openat2 = 1;	/* kernel older than 5.6 */
	}
#endif
	if (path__has_dotdot(path)) {
		*why = PATH_ESCAPES;
		return -EPERM;
	}
	fd = openat(dirfd, path, oflags);
	return fd < 0 ? -errno : fd;
}

int path__open_beneath(int dirfd, const char *path, unsigned int flags,
		       enum path_refusal *why)
{
	enum path_refusal dummy;
	struct statfs sfs;
	struct stat st;
	int pfd, fd, err;

	why = why ? why : &dummy;
	*why = PATH_OK;
	while (*path == '/')
		path++;
	if (!*path)
		return -ENOENT;
	/* an O_PATH descriptor opens nothing: look at what it names first */
	pfd = path__openat_beneath(dirfd, path, O_PATH | O_CLOEXEC, why);
	if (pfd < 0)
		return pfd;
	err = fstat(pfd, &st) || fstatfs(pfd, &sfs) ? -errno : 0;
	close(pfd);
	if (!err)
		err = path__check(&st, &sfs, flags, why);
	if (err)
		return err;
	fd = path__openat_beneath(dirfd, path, PATH_OPEN_FLAGS, why);
	if (fd < 0)
		return fd;
	err = path__opened(fd, &st, flags, why);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

FILE *path__fopen(const char *path, unsigned int flags, enum path_refusal *why)
{
	int fd = path__open(path, flags, why);
	FILE *fp;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	fp = fdopen(fd, "r");
	if (!fp)
		close(fd);
	return fp;
}
