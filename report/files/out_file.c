// SPDX-License-Identifier: MIT
/* An output's file, written under a temporary name and renamed; see out_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "report/files/out_file.h"

/* The open one, for the exit handler: xpu-report writes at most one file. */
static struct out_file *out_file__pending;

static void out_file__atexit(void)
{
	if (out_file__pending)
		out_file__abort(out_file__pending);
}

static const char *out_file__kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int out_file__check(const char *path, const char *alt, char *err, size_t errlen)
{
	struct stat lst, st;
	bool link;
	int ret;

	if (lstat(path, &lst)) {
		if (errno == ENOENT)
			return OUT_FILE_RENAME;
		ret = -errno;
		snprintf(err, errlen, "cannot write %s: %s: choose another FILE", path,
			 strerror(-ret));
		return ret;
	}
	link = S_ISLNK(lst.st_mode);
	if (link && stat(path, &st))
		st = lst;	/* a dangling link: refused below */
	else if (!link)
		st = lst;
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		return OUT_FILE_IN_PLACE;
	if (link) {
		snprintf(err, errlen, "cannot write %s: it is a symbolic link, which %s does not "
			 "replace: give the file's own path", path, xpu_progname);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot write %s: it is %s: give a file path%s", path,
			 out_file__kind(st.st_mode), alt);
		return -EINVAL;
	}
	return OUT_FILE_RENAME;
}

int out_file__open(struct out_file *f, const char *path, char *err, size_t errlen)
{
	static bool registered;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	mode_t mask;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	f->path = path;
	ret = out_file__check(path, " (or - for standard output)", err, errlen);
	if (ret < 0)
		return ret;
	if (ret == OUT_FILE_IN_PLACE) {
		/* /dev/null, a pipe: nothing to rename, written in place */
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || !(f->fp = fdopen(fd, "w"))) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
			snprintf(err, errlen, "cannot write %s: %s: choose another FILE",
				 path, strerror(-ret));
			return ret;
		}
		return 0;
	}
	/* A hidden name beside PATH, so that the rename stays in one file system. */
	f->tmp = xasprintf("%.*s.%s.XXXXXX", dirlen, path, path + dirlen);
	fd = mkostemp(f->tmp, O_CLOEXEC);	/* O_CREAT | O_EXCL, 0600 */
	if (fd < 0 || !(f->fp = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(f->tmp);
		}
		snprintf(err, errlen, "cannot write %s: %s: choose a writable path (or - for "
			 "standard output)", path, strerror(-ret));
		free(f->tmp);
		f->tmp = NULL;
		return ret;
	}
	/* what open(O_CREAT, 0666) would have given: it is not a secret */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask))
		debug(1, "cannot set the mode of %s: %s", f->tmp, strerror(errno));
	out_file__pending = f;
	if (!registered && !atexit(out_file__atexit))
		registered = true;
	return 0;
}

int out_file__commit(struct out_file *f, char *err, size_t errlen)
{
	int ret = 0;

	if (fclose(f->fp))
		ret = -errno;
	f->fp = NULL;
	if (!ret && f->tmp && rename(f->tmp, f->path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot write %s: %s: choose another FILE (or free space)",
			 f->path, strerror(-ret));
		out_file__abort(f);
		return ret;
	}
	free(f->tmp);
	f->tmp = NULL;
	out_file__pending = NULL;
	return 0;
}

void out_file__abort(struct out_file *f)
{
	if (f->fp)
		fclose(f->fp);
	f->fp = NULL;
	if (f->tmp) {
		unlink(f->tmp);
		free(f->tmp);
		f->tmp = NULL;
	}
	if (out_file__pending == f)
		out_file__pending = NULL;
}
