// SPDX-License-Identifier: MIT
/*
 * Integer counts for fractional weights, for the outputs that print counts
 * (--folded's lines, --pprof's samples/count): each weight rounded down or
 * up, together the total weight rounded. Rounding each alone loses weight
 * wherever many small ones come together: GPU time at the sampling
 * frequency, a kernel split by its PC samples into [sass];[stall] lines of
 * a fraction of a sample each (a GPU-only pprof of 3 samples over 11 such
 * lines said "Total samples = 0").
 */
#include <stdlib.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

struct apportion_rem {
	double rem;			/* weight - count */
	size_t i;
};

/* largest remainder first; equal ones in their order */
static int apportion_rem__cmp(const void *pa, const void *pb)
{
	const struct apportion_rem *a = pa, *b = pb;

	if (a->rem != b->rem)
		return a->rem > b->rem ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void output__apportion(const double *weight, int64_t *count, size_t n)
{
	double total = 0;
	int64_t sum = 0, left;
	struct apportion_rem *rem;

	for (size_t i = 0; i < n; i++) {
		count[i] = weight[i] > 0 ? (int64_t)weight[i] : 0;
		total += weight[i] > 0 ? weight[i] : 0;
		sum += count[i];
	}
	left = (int64_t)(total + 0.5) - sum;
	if (left <= 0)
		return;
	rem = xcalloc(n, sizeof(*rem));
	for (size_t i = 0; i < n; i++)
		rem[i] = (struct apportion_rem){ weight[i] > 0 ? weight[i] - (double)count[i] : 0, i };
	xpu_qsort(rem, n, sizeof(*rem), apportion_rem__cmp);
	for (size_t i = 0; i < n && left > 0; i++, left--)
		count[rem[i].i]++;
	free(rem);
}
