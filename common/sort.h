/* SPDX-License-Identifier: MIT */
/*
 * qsort that accepts an empty array: qsort(NULL, 0, ...) is undefined
 * behaviour (glibc declares base nonnull), and empty arrays (a process with
 * no mappings yet, a DSO without symbols) are normal here.
 */
#ifndef XPU_COMMON_SORT_H
#define XPU_COMMON_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void xpu_qsort(void *base, size_t n, size_t size,
			     int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/*
 * Sorts pairs by key, stably (pairs with equal keys keep their order), in
 * linear time: a pass per key byte that is not the same in every key. For
 * large arrays ordered by an integer (symbol tables of 100k+ entries, where
 * qsort's comparisons and glibc's indirect sort of big elements cost more
 * than the table's reading). val is the caller's: an index, usually.
 */
struct xpu_sort_pair {
	uint64_t key;
	uint64_t val;
};

void xpu_radix_sort(struct xpu_sort_pair *a, size_t n);

#endif
