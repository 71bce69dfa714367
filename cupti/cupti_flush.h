/* SPDX-License-Identifier: MIT */
/*
 * What CUPTI collected, to the recorder: the activity buffers CUPTI asks
 * for and hands back (converted at once, cupti/activity/), the flush thread
 * that asks for completed buffers every flush period (200 ms, or the
 * period xpu-record's bounded capture asks for, wire.h: then the buffers
 * are sized to fill within it, bufsize.h) and sends the queue, and the
 * forced flush at exit.
 */
#ifndef XPU_CUPTI_FLUSH_H
#define XPU_CUPTI_FLUSH_H
#include <cupti.h>

/* CUPTI's buffer callbacks, registered by the setup. */
void CUPTIAPI inject__buffer_requested(uint8_t **buf, size_t *size, size_t *max_records);
void CUPTIAPI inject__buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
				       size_t size, size_t valid);
/* Records CUPTI dropped (of ctx and stream; NULL, 0: all), as a LOST. */
void inject__report_dropped(CUcontext ctx, uint32_t stream);
/* The flush period: the recorder's (bounded capture), within 10 ms to 1 s. */
int inject__flush_ms(void);
/* Starts the flush thread (every signal blocked on it). 0 or -errno. */
int inject__start_flusher(void);
/* At exit (atexit, or CUPTI's teardown): the thread stopped, a forced
 * flush, the rest sent, the socket closed. Once. */
void inject__finish(void);
/* A forked child: the parent's thread is not there. */
void inject__forget_flusher(void);
#endif
