// SPDX-License-Identifier: MIT
/*
 * --symfs DIR, perf's meaning: the files of the recording machine copied
 * under DIR with their paths (DIR/usr/lib/libc.so.6), or stored by build-id
 * (DIR/.build-id/xx/rest, a file, or a directory holding "elf" as perf's
 * ~/.debug keeps them). The build-id form wins when both exist.
 *
 * Everything is resolved beneath DIR (report/files/path.h): a recorded path with
 * "..", or a symbolic link in DIR pointing out of it, finds nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "report/finders/find_chain.h"

struct symfs {
	const char *dir;
	int dirfd;
};

static int find_symfs__open(const struct symfs *sfs, const char *rel, unsigned int flags,
			    char *buf, size_t len, enum path_refusal *why)
{
	if (snprintf(buf, len, "%s%s%s", sfs->dir, rel[0] == '/' ? "" : "/", rel) >= (int)len)
		return -ENAMETOOLONG;
	return path__open_beneath(sfs->dirfd, rel, flags, why);
}

static int find_symfs__find(const struct dso *dso, char *buf, size_t len,
			    enum path_refusal *why, void *ctx)
{
	const struct symfs *sfs = ctx;
	char rel[128];
	int fd;

	if (!buildid__dir_path(rel, sizeof(rel) - 4, "", dso->build_id, dso->build_id_size)) {
		fd = find_symfs__open(sfs, rel, 0, buf, len, why);
		if (fd == -EPERM && *why == PATH_NOT_REGULAR) {	/* perf's ~/.debug: a directory */
			strcat(rel, "/elf");
			fd = find_symfs__open(sfs, rel, 0, buf, len, why);
		}
		if (fd >= 0)
			return fd;
		if (fd != -ENOENT)
			debug(1, "%s: %s (symfs): %s", dso->path, buf, fd == -EPERM && *why ?
			      path__refusal_str(*why) : strerror(-fd));
	}
	return find_symfs__open(sfs, dso->path, PATH_FROM_TRACE, buf, len, why);
}

static void find_symfs__release(void *ctx)
{
	struct symfs *sfs = ctx;

	close(sfs->dirfd);
	free(sfs);
}

void find_symfs__install(struct dsos *d, const char *dir)
{
	struct symfs *sfs = xzalloc(sizeof(*sfs));

	sfs->dir = dir;
	sfs->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sfs->dirfd < 0) {
		warn("--symfs %s: %s: not used", dir, strerror(errno));
		free(sfs);
		return;
	}
	dsos__set_finder_owned(d, DSO_FIND_SYMFS, "symfs", find_symfs__find, sfs,
			       find_symfs__release);
}
