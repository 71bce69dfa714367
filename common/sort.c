// SPDX-License-Identifier: MIT
/* Stable LSD radix sort of (key, value) pairs by their 64-bit key. */
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"

void xpu_radix_sort(struct xpu_sort_pair *a, size_t n)
{
	struct xpu_sort_pair *tmp, *src = a, *dst, *t;
	size_t count[256];
	uint64_t all_or = 0, all_and = ~(uint64_t)0;

	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		all_or |= a[i].key;
		all_and &= a[i].key;
	}
	tmp = xmalloc(n * sizeof(*tmp));
	dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t pos = 0;

		/* a byte every key has alike orders nothing: skip its pass
		 * (addresses of one file share their top bytes) */
		if ((((all_or ^ all_and) >> shift) & 0xff) == 0)
			continue;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(src[i].key >> shift) & 0xff]++;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
}
