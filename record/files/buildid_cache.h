/* SPDX-License-Identifier: MIT */
/* --buildid-cache (buildid_cache.c). */
#ifndef XPU_RECORD_FILES_BUILDID_CACHE_H
#define XPU_RECORD_FILES_BUILDID_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* copies the trace's mapped files into the build-id cache */
int buildid_cache__fill(const char *trace);

#endif
