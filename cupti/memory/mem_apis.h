/* SPDX-License-Identifier: MIT */
/*
 * The CUDA calls that allocate or free memory (xpu-record --gpu-memory):
 * with it on, the library enables their callbacks too, so that each one
 * takes its launch stack at enter (the GPU_CORR that every GPU_MEMORY
 * record of the call joins by correlation ID), and looks at each one's
 * return at exit for an out-of-memory failure (GPU_OOM). Names are matched
 * as cupti/walk/apis.h matches them, after CUPTI's version and per-thread
 * suffixes are removed.
 *
 * Does not include cupti.h: the CUPTI glue feeds it cuptiGetCallbackName().
 */
#ifndef XPU_CUPTI_MEMORY_MEM_APIS_H
#define XPU_CUPTI_MEMORY_MEM_APIS_H

#include <stdbool.h>
#include <stdint.h>

/* Every call CUPTI's MEMORY2 and MEMORY_POOL activity gives records for
 * (checked on an H200 with CUPTI 13.0: cudaMalloc/Free, the async
 * and pool calls, managed and pinned host memory, cuMemAlloc, and for
 * virtual memory cuMemSetAccess and cuMemUnmap), and cuMemCreate, which
 * may fail for want of memory though it gives no record. */
#define XPU_CUPTI_MEMORY_APIS						\
	"cudaMalloc*,cudaFree*,cudaHostAlloc,"				\
	"cudaMemPoolCreate,cudaMemPoolDestroy,cudaMemPoolTrimTo,"		\
	"cuMemAlloc*,cuMemFree*,cuMemHostAlloc,cuMemCreate,cuMemSetAccess,cuMemUnmap," \
	"cuMemPoolCreate,cuMemPoolDestroy,cuMemPoolTrimTo"

/* Is the CUPTI callback name (raw or normalized) one of those calls? */
bool xpu_mem_apis__match(const char *cb_name);

/* Did a memory call fail for want of memory? cudaErrorMemoryAllocation and
 * CUDA_ERROR_OUT_OF_MEMORY are both 2. */
#define XPU_MEM_RET_OOM		2
static inline bool xpu_mem_apis__is_oom(int ret)
{
	return ret == XPU_MEM_RET_OOM;
}

#endif
