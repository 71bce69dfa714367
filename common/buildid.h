/* SPDX-License-Identifier: MIT */
/*
 * Build-id naming shared by the recorder (--buildid-cache fills the cache)
 * and the report (--symfs and the cache are searched): one definition of
 * where a build-id's file lives, so the two can never disagree.
 */
#ifndef XPU_COMMON_BUILDID_H
#define XPU_COMMON_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest build-id kept (SHA-1); format/xpu_format.h's
 * XPU_MMAP_BUILD_ID_MAX is the same number, checked there. */
#define BUILD_ID_MAX 20

/* Lower-case hex of a build-id into buf (2 * size + 1 bytes). */
void build_id__hex(const uint8_t *id, size_t size, char *buf);

/* DIR/.build-id/xx/rest for a build-id (perf's layout). Returns 0, -ENOENT
 * for an empty or oversized id, or -ENAMETOOLONG. */
int buildid__dir_path(char *buf, size_t len, const char *dir, const uint8_t *id, size_t size);

/* The build-id cache directory: $XDG_CACHE_HOME/xpu-perf, else
 * ~/.cache/xpu-perf. Returns 0, or -ENOENT when neither variable is set. */
int buildid_cache__dir(char *buf, size_t len);

/* Makes every parent directory of path (mode 0755). 0 or -errno. */
int buildid_cache__mkdirs(char *path);

/* Writes the size bytes of the regular file open at in to dst: to a
 * temporary file of our own beside it (never through a link), then edit
 * (may be NULL) on that file open read-write, then renamed over dst, so a
 * reader never sees half a file. 0, or -errno with nothing left behind. */
int buildid_cache__store(int in, off_t size, const char *dst, int (*edit)(int fd, void *arg),
			 void *arg);

#endif
