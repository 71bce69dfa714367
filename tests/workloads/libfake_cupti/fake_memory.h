/* SPDX-License-Identifier: MIT */
/* The fake CUPTI library's --gpu-memory: see fake_memory.c. */
#ifndef XPU_FAKE_MEMORY_H
#define XPU_FAKE_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

struct xpu_client;

/* A call's correlation ID, marked as the real library marks a memory call
 * at its enter (fake_cupti.c: the walk probe, then the marker). */
uint64_t fake__memory_call(uint32_t cbid);

/* The recording's start: on when the recorder's ready byte said
 * XPU_CHANNEL_GPU_MEMORY; sends the device's GPU_MEM_STATE then. */
void fake_mem__start(struct xpu_client *c, uint32_t pid, uint32_t device, bool on, bool attach,
		     uint64_t now);
/* The recording's end: no more records. */
void fake_mem__finish(void);

#endif
