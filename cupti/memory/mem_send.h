/* SPDX-License-Identifier: MIT */
/*
 * The records of --gpu-memory that the library makes itself, from what the
 * CUPTI glue (cupti_mem.c) or the fake CUPTI library found: a device's
 * memory when the process connected (GPU_MEM_STATE) and a CUDA call that
 * failed for want of memory (GPU_OOM). CUPTI's own memory records are
 * converted by cupti_mem_convert.c.
 *
 * Does not include cupti.h: unit tests and the fake CUPTI library use it.
 */
#ifndef XPU_CUPTI_MEMORY_MEM_SEND_H
#define XPU_CUPTI_MEMORY_MEM_SEND_H

#include <stdbool.h>
#include <stdint.h>

struct xpu_client;

/* GPU_MEM_STATE of device (cuMemGetInfo's free and total) at time;
 * attach: the library was attached to a running process (-p). Returns 0,
 * -EINVAL (free above total: not sent) or the client's -ENOSPC. */
int xpu_mem__state(struct xpu_client *c, uint32_t pid, uint32_t device, uint64_t free,
		   uint64_t total, bool attach, uint64_t time);

/* A CUDA call that returned out-of-memory, at its exit. */
struct xpu_mem_oom {
	uint64_t time;
	uint64_t bytes;			/* asked for; 0: unknown */
	uint64_t correlation_id;	/* the call's */
	uint32_t pid, tid;
	int32_t device;			/* -1: unknown */
	uint32_t domain, cbid;		/* XPU_API_RUNTIME or XPU_API_DRIVER, CUPTI's cbid */
	int32_t ret;
};
/* Its GPU_OOM record (source XPU_OOM_CUDA). Returns 0 or -ENOSPC. */
int xpu_mem__oom(struct xpu_client *c, const struct xpu_mem_oom *o);

#endif
