// SPDX-License-Identifier: MIT
/*
 * xpu-record --buildid-cache: after the trace is closed, every file named by
 * its MMAP records is copied into the local build-id cache,
 * $XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest (default ~/.cache), when the
 * file still has the recorded build-id. xpu-report looks there
 * (report/finders/find_buildid_cache.c builds the same path: keep both in step), so a
 * later rebuild or upgrade of a binary does not spoil old traces.
 * Files are written to a temporary name and renamed, so a reader never sees
 * half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/file.h"
#include "common/hashmap.h"
#include "common/buildid.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/reader.h"
#include "record/record.h"

static int buildid_cache__copy(const char *src, const char *dst)
{
	struct stat st;
	int in, err;

	/* replaced since it was mapped: a regular file of a library's size only */
	in = file__open_regular(src, 0, FILE_ELF_MAX, &st);
	if (in < 0)
		return in;
	err = buildid_cache__store(in, st.st_size, dst, NULL, NULL);
	close(in);
	return err;
}

static bool buildid_cache__pseudo(const char *path)
{
	return path[0] != '/' || !strncmp(path, "/memfd:", 7) || !strncmp(path, "/dev/", 5) ||
	       strstr(path, " (deleted)");
}

int buildid_cache__fill(const char *trace)
{
	char dir[4000], dst[4200];
	unsigned copied = 0, present = 0, changed = 0, failed = 0;
	struct xpu_reader *r;
	struct xpu_record rec;
	struct bmap seen;
	int err = 0;

	if (buildid_cache__dir(dir, sizeof(dir)))
		return -ENOENT;
	r = xpu_reader__open(trace, &err);
	if (!r)
		return err ? err : -EIO;
	bmap__init(&seen);
	while (xpu_reader__next(r, &rec) == 1) {
		const struct xpu_mmap *mm = rec.body;
		const char *path;
		uint8_t id[XPU_MMAP_BUILD_ID_MAX], size;
		struct stat st;
		bool found;

		if (rec.type != XPU_REC_MMAP || !mm->build_id_size ||
		    mm->build_id_size > XPU_MMAP_BUILD_ID_MAX)
			continue;
		path = xpu_record__string(&rec, sizeof(*mm));
		if (!path || buildid_cache__pseudo(path))
			continue;
		bmap__slot(&seen, mm->build_id, mm->build_id_size, &found);
		if (found)
			continue;
		if (buildid__dir_path(dst, sizeof(dst), dir, mm->build_id, mm->build_id_size))
			continue;
		if (!stat(dst, &st)) {
			present++;
			continue;
		}
		if (buildid__read_file(path, id, &size) || size != mm->build_id_size ||
		    memcmp(id, mm->build_id, size)) {
			debug(1, "build-id cache: %s changed since it was mapped: not copied", path);
			changed++;
			continue;
		}
		err = buildid_cache__mkdirs(dst);
		if (!err)
			err = buildid_cache__copy(path, dst);
		if (err) {
			warn("build-id cache: cannot copy %s to %s: %s", path, dst, strerror(-err));
			failed++;
			err = 0;
			continue;
		}
		debug(1, "build-id cache: %s -> %s", path, dst);
		copied++;
	}
	bmap__exit(&seen, NULL);
	xpu_reader__close(r);
	if (!xpu_quiet)
		fprintf(stderr, "xpu-record: build-id cache %s: %u files copied, %u already "
			"there, %u changed since they were mapped\n", dir, copied, present, changed);
	return failed ? -EIO : 0;
}
