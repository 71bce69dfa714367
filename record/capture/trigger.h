/* SPDX-License-Identifier: MIT */
/*
 * --trigger (Documentation/xpu-record.md, "--trigger"): the flight
 * recorder writes its window (--switch-output: the file switches) when an
 * NVTX range takes longer than asked (nvtx:NAME>MS), a GPU idles more than
 * asked (gpu-idle>PCT) or an allocation fails for want of memory (oom: a
 * GPU_OOM record, --gpu-memory). The writer's tap (rotate.c) hands the
 * records to trigger__tap(); the thread asks trigger__due() when the
 * window is to be written.
 */
#ifndef XPU_RECORD_TRIGGER_H
#define XPU_RECORD_TRIGGER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "record/capture/rotate_opts.h"

#define GPU_IDLE_DEVICES	64
#define TRIGGER_STRINGS		64	/* (pid, string id) of trigger names seen */

struct gpu_idle_dev {
	uint32_t pid, id;
	bool used;
	uint64_t win_start;		/* the window's start; 0: none yet */
	uint64_t busy, covered;		/* busy ns in the window; busy up to here */
};

struct trigger {
	const struct rotate_opts *o;	/* the triggers asked for, --flight-recorder */
	pthread_mutex_t lock;		/* all below: the tap runs in several threads */
	struct { uint32_t pid, id; int trig; } str[TRIGGER_STRINGS];
	int nr_str;
	struct gpu_idle_dev dev[GPU_IDLE_DEVICES];
	uint64_t due;			/* write the window at (monotonic ns); 0: none */
	char why[200];			/* ... what fired */
	uint64_t nr_fired, nr_merged;	/* fired; fired inside a window already due */
};

/* o: kept, not copied. */
void trigger__init(struct trigger *tr, const struct rotate_opts *o);
void trigger__exit(struct trigger *tr);
/* A record the writer's tap saw, in one piece: STRING, GPU_NVTX,
 * GPU_KERNEL, GPU_MEMCPY and GPU_OOM are looked at, the others not. */
void trigger__tap(struct trigger *tr, uint16_t type, const struct iovec *iov);
/* When a fired trigger's window is to be written (monotonic ns), if now is
 * past it, and what fired in why; else 0. */
uint64_t trigger__due(struct trigger *tr, uint64_t now, char *why, size_t len);
/* Its window was written: the next event fires again. */
void trigger__clear(struct trigger *tr);

#endif
