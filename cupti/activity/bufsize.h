/* SPDX-License-Identifier: MIT */
/*
 * The size of the next CUPTI activity buffer. CUPTI hands a buffer over
 * (cuptiActivityFlushAll(0), every flush period) only when every record
 * in it is complete: with the GPU always busy, the buffer being filled
 * always holds a kernel still running, so its records wait until it is
 * full. With 4 MB buffers that was seconds of kernels, longer than a
 * flight-recorder window waits for them. So under bounded capture
 * (xpu-record told a flush period: wire.h, XPU_CHANNEL_CONFIG_MAGIC) a
 * buffer is sized to fill within about one period at the rate the records
 * came so far (16 KB to 4 MB); otherwise every buffer is 4 MB, as before.
 *
 * Does not include cupti.h: the fake CUPTI library sizes its buffers the
 * same way (tests/workloads/libfake_cupti/fake_cupti.c).
 */
#ifndef XPU_CUPTI_BUFSIZE_H
#define XPU_CUPTI_BUFSIZE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define XPU_BUFSIZE_MAX	(4u << 20)	/* and the size without a period */
#define XPU_BUFSIZE_MIN	(16u << 10)

struct xpu_bufsize {
	pthread_mutex_t lock;
	uint64_t period_ns;		/* 0: every buffer XPU_BUFSIZE_MAX */
	uint64_t since;			/* start of the rate's interval, ns */
	uint64_t bytes;			/* bytes handed over in it */
	double rate;			/* bytes per ns, smoothed */
};

void xpu_bufsize__init(struct xpu_bufsize *b, uint32_t period_ms);
/* The size of the next buffer, a multiple of 8. */
size_t xpu_bufsize__next(struct xpu_bufsize *b);
/* A buffer was handed over with bytes of records, at now (CLOCK_MONOTONIC ns). */
void xpu_bufsize__done(struct xpu_bufsize *b, size_t bytes, uint64_t now);

#endif
