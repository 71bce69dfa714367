// SPDX-License-Identifier: MIT
/*
 * --symfs DIR, perf's meaning: the files of the recording machine copied
 * under DIR with their paths (DIR/usr/lib/libc.so.6), or stored by build-id
 * (DIR/.build-id/xx/rest, a file, or a directory holding "elf" as perf's
 * ~/.debug keeps them). The build-id form wins when both exist.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "report/find_chain.h"

static int find_symfs__find(const struct dso *dso, char *buf, size_t len, void *ctx)
{
	const char *dir = ctx;
	struct stat st;
	size_t n;

	if (!buildid__dir_path(buf, len, dir, dso->build_id, dso->build_id_size) &&
	    !stat(buf, &st)) {
		if (S_ISREG(st.st_mode))
			return 0;
		n = strlen(buf);
		if (S_ISDIR(st.st_mode) && snprintf(buf + n, len - n, "/elf") < (int)(len - n) &&
		    !stat(buf, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	if (snprintf(buf, len, "%s%s%s", dir, dso->path[0] == '/' ? "" : "/",
		     dso->path) >= (int)len)
		return -ENAMETOOLONG;
	return stat(buf, &st) ? -ENOENT : 0;
}

void find_symfs__install(struct dsos *d, const char *dir)
{
	dsos__set_finder(d, DSO_FIND_SYMFS, "symfs", find_symfs__find, (void *)dir);
}
