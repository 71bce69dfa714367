/* SPDX-License-Identifier: MIT */
/*
 * --gpu-memory in the library (xpu-record tells it with the ready byte:
 * cupti/channel/wire.h, XPU_CHANNEL_GPU_MEMORY): CUPTI's MEMORY2 and MEMORY_POOL
 * activity on, the memory calls' callbacks (mem_apis.h) marked like the
 * launches so that each allocation joins its stack, a GPU_OOM at the exit
 * of one that failed for want of memory, and a GPU_MEM_STATE per device
 * (cuMemGetInfo): a launched process's at each device's first context, an
 * attached one's at the attach (XPU_MEM_STATE_ATTACH).
 *
 * The CUPTI glue: cupti_inject.c calls these hooks; the records are
 * cupti_mem_convert.c's and mem_send.c's.
 */
#ifndef XPU_CUPTI_MEMORY_CUPTI_MEM_H
#define XPU_CUPTI_MEMORY_CUPTI_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <cupti.h>

struct xpu_client;

/* The recording's start: on (the recorder asked) for process pid, whose
 * records go to c; time() is the library's clock. Clears what an earlier
 * attach left. */
void xpu_cupti_mem__init(bool on, struct xpu_client *c, uint32_t pid, uint64_t (*time)(void));
bool xpu_cupti_mem__on(void);
/* Enables the two activity kinds; returns 0, or the CUptiResult that failed
 * (*what: the call). */
CUptiResult xpu_cupti_mem__enable(const char **what);
/* Disables them (a failure, a detach): best effort. */
void xpu_cupti_mem__disable(void);
/* Whether the callback of (domain, cbid), named name, is to be enabled
 * for --gpu-memory; noted, so that its exit is looked at. */
bool xpu_cupti_mem__want(CUpti_CallbackDomain domain, uint32_t cbid, const char *name);
/* At the exit of a runtime or driver call that is not nested in a marked
 * runtime call: a GPU_OOM if it is a memory call that ran out of memory. */
void xpu_cupti_mem__api_exit(CUpti_CallbackDomain domain, uint32_t cbid,
			     const CUpti_CallbackData *cb);
/* A context was created (the resource callback): the GPU_MEM_STATE of
 * its device, once per device. */
void xpu_cupti_mem__context(CUcontext ctx);
/* Attached: the GPU_MEM_STATE of each device whose primary context is
 * active, flagged XPU_MEM_STATE_ATTACH. */
void xpu_cupti_mem__attached(void);

#endif
