/* SPDX-License-Identifier: MIT */
/*
 * qsort that accepts an empty array: qsort(NULL, 0, ...) is undefined
 * behaviour (glibc declares base nonnull), and empty arrays (a process with
 * no mappings yet, a DSO without symbols) are normal here.
 */
#ifndef XPU_COMMON_SORT_H
#define XPU_COMMON_SORT_H

#include <stdlib.h>

static inline void xpu_qsort(void *base, size_t n, size_t size,
			     int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
