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

/* The build-id cache directory: BASE/xpu-perf, where BASE is
 * $XDG_CACHE_HOME, else ~/.cache (buildid_cache__base()). Return 0, or
 * -ENOENT when neither variable is set, -ENAMETOOLONG. Filling it is
 * common/buildid_cache.h's part. */
#define BUILDID_CACHE_NAME "xpu-perf"
int buildid_cache__dir(char *buf, size_t len);
int buildid_cache__base(char *buf, size_t len);

#endif
