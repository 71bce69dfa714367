// SPDX-License-Identifier: MIT
/*
 * xpu-record --buildid-cache: after the trace is closed, every file named by
 * its MMAP records is copied into the local build-id cache,
 * $XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest (default ~/.cache), when the
 * file still has the recorded build-id. xpu-report looks there
 * (report/finders/find_buildid_cache.c builds the same path: keep both in step), so a
 * later rebuild or upgrade of a binary does not spoil old traces.
 *
 * The recorder is root and the files are the traced program's to name and
 * to swap: a path checked then opened again for the copy can name a link
 * to /etc/shadow by then. So a file is opened once (the mapped inode
 * through /proc/PID/map_files while the process lives, else its path with
 * no link followed: buildid__open_mapped()), its build-id read and the
 * copy made through that one descriptor; the copy is never readable by
 * more than the source (buildid_cache__copy_mode()), and a file the
 * cache's owner could not read is not copied into their cache. Writing the
 * cache (no link followed, as its owner, a temporary name renamed into
 * place) is common/buildid_cache.h's part.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/buildid.h"
#include "common/buildid_cache.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/reader.h"
#include "record/files/buildid_cache.h"
#include "record/files/buildid.h"

static bool buildid_cache__pseudo(const char *path)
{
	return path[0] != '/' || !strncmp(path, "/memfd:", 7) || !strncmp(path, "/dev/", 5) ||
	       strstr(path, " (deleted)");
}

int buildid_cache__fill(const char *trace)
{
	unsigned copied = 0, present = 0, changed = 0, unreadable = 0, failed = 0;
	struct buildid_cache c;
	struct xpu_reader *r;
	struct xpu_record rec;
	struct bmap seen;
	char msg[4400];
	int err = 0;

	if ((err = buildid_cache__open(&c, msg, sizeof(msg)))) {
		warn("build-id cache: %s: nothing copied", msg);
		return err;
	}
	r = xpu_reader__open(trace, &err);
	if (!r) {
		buildid_cache__close(&c);
		return err ? err : -EIO;
	}
	bmap__init(&seen);
	while (xpu_reader__next(r, &rec) == 1) {
		const struct xpu_mmap *mm = rec.body;
		const char *path;
		uint8_t id[XPU_MMAP_BUILD_ID_MAX], size;
		struct stat st;
		bool found, mapped;
		int fd;

		if (rec.type != XPU_REC_MMAP || !mm->build_id_size ||
		    mm->build_id_size > XPU_MMAP_BUILD_ID_MAX)
			continue;
		path = xpu_record__string(&rec, sizeof(*mm));
		if (!path || buildid_cache__pseudo(path))
			continue;
		bmap__slot(&seen, mm->build_id, mm->build_id_size, &found);
		if (found)
			continue;
		if (buildid_cache__has(&c, mm->build_id, mm->build_id_size, "")) {
			present++;
			continue;
		}
		fd = buildid__open_mapped((pid_t)mm->pid, mm->start, mm->start + mm->len, path, id,
					  &size, &st, &mapped);
		if (fd >= 0 && (size != mm->build_id_size || memcmp(id, mm->build_id, size))) {
			close(fd);
			fd = -ESTALE;
		}
		if (fd < 0) {
			/* a link (-ELOOP) or another file in its place */
			debug(1, "build-id cache: %s changed since it was mapped: not copied (%s)",
			      path, strerror(-fd));
			changed++;
			continue;
		}
		if (!buildid_cache__owner_may_read(&c, &st)) {
			debug(1, "build-id cache: %s: uid %u, the cache's owner, cannot read it "
			      "(mode %03o): not copied", path, (unsigned)c.uid,
			      (unsigned)(st.st_mode & 0777));
			close(fd);
			unreadable++;
			continue;
		}
		err = buildid_cache__store(&c, id, size, "", fd, st.st_size,
					   buildid_cache__copy_mode(st.st_mode), NULL, NULL);
		close(fd);
		if (err) {
			if (err == -ELOOP)
				warn("build-id cache: %s/.build-id/%02x is a symbolic link, which is "
				     "never followed: remove it (%s not copied)", c.dir, id[0], path);
			else
				warn("build-id cache: cannot copy %s into %s: %s", path, c.dir,
				     strerror(-err));
			failed++;
			err = 0;
			continue;
		}
		debug(1, "build-id cache: %s (%s) copied", path, mapped ? "the mapped file" : "by path");
		copied++;
	}
	bmap__exit(&seen, NULL);
	xpu_reader__close(r);
	if (!xpu_quiet) {
		char more[96] = "";

		if (unreadable)
			snprintf(more, sizeof(more), ", %u not readable by uid %u (the cache's owner)",
				 unreadable, (unsigned)c.uid);
		fprintf(stderr, "xpu-record: build-id cache %s: %u files copied, %u already "
			"there, %u changed since they were mapped%s\n", c.dir, copied, present,
			changed, more);
	}
	buildid_cache__close(&c);
	return failed ? -EIO : 0;
}
