/* SPDX-License-Identifier: MIT */
/*
 * Allocation helpers that die on exhaustion: a profiler report that runs out of
 * memory cannot do anything useful, so callers need not check.
 */
#ifndef XPU_COMMON_XALLOC_H
#define XPU_COMMON_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xzalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grow *arr (of elements of esize) so that index n-1 fits; doubles capacity. */
void *xgrow(void *arr, size_t *cap, size_t n, size_t esize);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__attribute__((format(printf, 1, 2)))
char *xasprintf(const char *fmt, ...);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
