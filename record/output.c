// SPDX-License-Identifier: MIT
/*
 * The trace file (-o), created so that a recorder running as root never
 * writes through a path someone else controls (Documentation/xpu-record.md,
 * "Output file"):
 *
 *   - the path must be missing or a regular file: a symbolic link, a device,
 *     a FIFO, a directory are refused, and nothing is opened through them;
 *   - the trace is a new file, created with O_EXCL (never follows a link,
 *     never reuses an inode) under a hidden name in the target directory,
 *     mode 0600 (it holds stack memory), given to the sudo user if any;
 *   - once setup succeeded (just before the command starts) an existing
 *     file is renamed to PATH.old, like perf's perf.data.old, and the new
 *     one renamed to PATH. A failed start removes the new file and leaves
 *     PATH and PATH.old as they were. From then on the trace is written in
 *     place, so a killed recorder leaves a readable PATH.
 *
 * No existing file is ever opened, truncated, chmod'ed or chown'ed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "record/output.h"

static const char *output__kind(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* PATH must be missing or a regular file; anything else is refused. */
static int output__check(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot write %s: %s: choose a writable path with -o", path,
			 strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISLNK(st.st_mode))
		snprintf(err, errlen, "cannot write %s: it is a symbolic link, which xpu-record never "
			 "writes through: give the file's own path or a new one with -o", path);
	else
		snprintf(err, errlen, "cannot write %s: it is %s, not a regular file: give a file "
			 "path with -o", path, output__kind(st.st_mode));
	return -EINVAL;
}

/* Under sudo the trace belongs to the user who ran sudo, not to root. */
static void output__give_to_sudo_user(int fd)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid = (unsigned long)-1;
	char *end;

	if (geteuid() != 0 || !su || !*su)
		return;
	errno = 0;
	uid = strtoul(su, &end, 10);
	if (errno || *end || uid >= UINT_MAX)
		return;
	if (sg && *sg) {
		gid = strtoul(sg, &end, 10);
		if (errno || *end || gid >= UINT_MAX)
			gid = (unsigned long)-1;
	}
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		debug(1, "cannot give the trace to SUDO_UID %lu: %s", uid, strerror(errno));
}

int output__create(struct output *out, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	struct stat st;
	int ret;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->path = path;
	ret = output__check(path, err, errlen);
	if (ret)
		return ret;
	/* A hidden name beside PATH, so the final rename stays in one file system. */
	if (asprintf(&out->tmp, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) < 0)
		die(XPU_EXIT_FAILURE, "out of memory");
	out->fd = mkostemp(out->tmp, O_CLOEXEC);	/* O_CREAT | O_EXCL, 0600 */
	if (out->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot write %s: %s: choose a writable path with -o", path,
			 strerror(-ret));
		free(out->tmp);
		out->tmp = NULL;
		return ret;
	}
	fchmod(out->fd, 0600);	/* our own new file: 0600 whatever the umask */
	output__give_to_sudo_user(out->fd);
	if (!fstat(out->fd, &st)) {
		out->dev = st.st_dev;
		out->ino = st.st_ino;
	}
	return 0;
}

/* Whether name is the file (dev, ino). */
static bool output__is(dev_t dev, ino_t ino, const char *name)
{
	struct stat st;

	return !lstat(name, &st) && S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

/* Whether name is still our file. */
static bool output__ours(const struct output *out, const char *name)
{
	return output__is(out->dev, out->ino, name);
}

int output__move(dev_t dev, ino_t ino, const char *from, const char *to)
{
	if (!output__is(dev, ino, from))
		return -ESTALE;
	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* a file system without RENAME_NOREPLACE: link() does not replace */
	if (link(from, to))
		return -errno;
	if (unlink(from)) {
		int err = -errno;

		unlink(to);
		return err;
	}
	return 0;
}

int output__remove(dev_t dev, ino_t ino, const char *name)
{
	if (!output__is(dev, ino, name))
		return -ESTALE;
	return unlink(name) ? -errno : 0;
}

int output__commit(struct output *out, char *err, size_t errlen)
{
	struct stat st;
	char *old;
	int ret = 0;

	if (!out->tmp)
		return 0;
	if (asprintf(&old, "%s.old", out->path) < 0)
		die(XPU_EXIT_FAILURE, "out of memory");
	/* Checked again: setup took a while. A link or a device put there
	 * meanwhile is refused like at the start (rename would not follow
	 * it, but the user asked for a file). */
	ret = output__check(out->path, err, errlen);
	if (ret)
		goto out;
	if (!lstat(out->path, &st)) {
		if (!rename(out->path, old)) {
			out->moved_old = true;
			debug(1, "the existing %s is now %s", out->path, old);
		} else if (errno != ENOENT) {	/* ENOENT: gone meanwhile */
			ret = -errno;
			snprintf(err, errlen, "cannot move the existing %s to %s: %s: remove it or "
				 "choose another -o", out->path, old, strerror(-ret));
			goto out;
		}
	}
	if (rename(out->tmp, out->path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot write %s: %s: choose a writable path with -o", out->path,
			 strerror(-ret));
		goto out;
	}
	free(out->tmp);
	out->tmp = NULL;
	out->committed = true;
out:
	free(old);
	return ret;
}

void output__abort(struct output *out)
{
	struct stat st;
	char *old;

	if (out->tmp) {
		if (output__ours(out, out->tmp))
			unlink(out->tmp);
		free(out->tmp);
		out->tmp = NULL;
	}
	if (out->committed && output__ours(out, out->path))
		unlink(out->path);
	/* Put the previous trace back where it was. */
	if (out->moved_old && lstat(out->path, &st) && errno == ENOENT &&
	    asprintf(&old, "%s.old", out->path) >= 0) {
		rename(old, out->path);
		free(old);
	}
	out->committed = false;
	out->moved_old = false;
}
