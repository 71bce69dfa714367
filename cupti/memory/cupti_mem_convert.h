/* SPDX-License-Identifier: MIT */
/*
 * --gpu-memory's conversions from CUPTI's layouts (CUPTI 13): the
 * CUpti_ActivityMemory4 records of CUPTI_ACTIVITY_KIND_MEMORY2 into
 * GPU_MEMORY, the CUpti_ActivityMemoryPool3 records of
 * CUPTI_ACTIVITY_KIND_MEMORY_POOL into GPU_MEMPOOL, and the size a failed
 * allocation asked for, from its callback's parameters. Their times are
 * CUPTI's timestamps, which the library's timestamp callback makes
 * CLOCK_MONOTONIC as for kernels (cupti_inject.c). Uses only header types,
 * so unit tests build synthetic records and run it without libcupti or a
 * GPU (tests/unit/test_cupti_memory.c).
 */
#ifndef XPU_CUPTI_MEMORY_CUPTI_MEM_CONVERT_H
#define XPU_CUPTI_MEMORY_CUPTI_MEM_CONVERT_H

#include <stdint.h>
#include <cupti_activity.h>

struct xpu_client;

/* One MEMORY2 or MEMORY_POOL record of process pid, queued. Returns 0, 1
 * when rec is of another kind, -EINVAL when its operation is not one the
 * format knows (not sent), or the client's -ENOSPC. */
int xpu_mem_convert__activity(struct xpu_client *c, uint32_t pid, const CUpti_Activity *rec);

/* The bytes an allocation call asked for, from the params of its
 * CUpti_CallbackData (runtime: domain XPU_API_RUNTIME, driver:
 * XPU_API_DRIVER); 0 when the call is not one that takes a size. */
uint64_t xpu_mem_convert__bytes(uint32_t domain, uint32_t cbid, const void *params);

#endif
