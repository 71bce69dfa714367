// SPDX-License-Identifier: MIT
/* The size of the next CUPTI activity buffer (bufsize.h). */
#include "bufsize.h"

void xpu_bufsize__init(struct xpu_bufsize *b, uint32_t period_ms)
{
	pthread_mutex_init(&b->lock, NULL);
	b->period_ns = (uint64_t)period_ms * 1000000ull;
	b->since = 0;
	b->bytes = 0;
	b->rate = 0;
}

size_t xpu_bufsize__next(struct xpu_bufsize *b)
{
	double want;

	if (!b->period_ns)
		return XPU_BUFSIZE_MAX;
	pthread_mutex_lock(&b->lock);
	want = b->rate * b->period_ns;
	pthread_mutex_unlock(&b->lock);
	if (want < XPU_BUFSIZE_MIN)
		return XPU_BUFSIZE_MIN;
	if (want > XPU_BUFSIZE_MAX)
		return XPU_BUFSIZE_MAX;
	return (size_t)want & ~(size_t)7;
}

/* The rate over the last interval of at least a period, smoothed over
 * about four of them (a burst grows the buffers, a pause does not shrink
 * them at once). */
void xpu_bufsize__done(struct xpu_bufsize *b, size_t bytes, uint64_t now)
{
	if (!b->period_ns)
		return;
	pthread_mutex_lock(&b->lock);
	if (!b->since) {
		b->since = now;
	} else {
		b->bytes += bytes;
		if (now - b->since >= b->period_ns) {
			double r = (double)b->bytes / (double)(now - b->since);

			b->rate = b->rate ? 0.75 * b->rate + 0.25 * r : r;
			b->since = now;
			b->bytes = 0;
		}
	}
	pthread_mutex_unlock(&b->lock);
}
