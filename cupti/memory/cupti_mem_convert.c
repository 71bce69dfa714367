// SPDX-License-Identifier: MIT
/* CUPTI's memory records and allocation parameters -> --gpu-memory's
 * records; see cupti_mem_convert.h. Header types only. */
#include <errno.h>
#include <stddef.h>

/* generated_cuda_meta.h declares the params of every driver call, the old
 * _v1 ones too, whose types cuda.h gives only to its own internal build:
 * this file calls nothing, it only reads the structs */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>
#include <generated_cuda_runtime_api_meta.h>
#include <generated_cuda_meta.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/memory/cupti_mem_convert.h"

static int mem_convert__memory(struct xpu_client *c, uint32_t pid, const CUpti_ActivityMemory4 *m)
{
	struct xpu_gpu_memory r = {
		.time = m->timestamp,
		.correlation_id = m->correlationId,
		.address = m->address, .bytes = m->bytes,
		.pool_address = m->memoryPoolConfig.address,
		.pid = pid,
		.device = m->deviceId, .context = m->contextId, .stream = m->streamId,
		.op = (uint8_t)m->memoryOperationType,
		.memory_kind = (uint32_t)m->memoryKind < XPU_MEMKIND_MAX ? (uint8_t)m->memoryKind :
			       XPU_MEMKIND_UNKNOWN,
		.pool_type = (uint8_t)m->memoryPoolConfig.memoryPoolType,
		.flags = m->isAsync ? XPU_GPU_MEMORY_ASYNC : 0,
	};

	if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
	    m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		return -EINVAL;
	if (m->memoryPoolConfig.memoryPoolType > CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED)
		r.pool_type = 0;
	if (!r.pool_type)	/* not from a pool: the config says nothing */
		r.pool_address = 0;
	return xpu_client__add(c, XPU_REC_GPU_MEMORY, &r, sizeof(r));
}

static int mem_convert__pool(struct xpu_client *c, uint32_t pid, const CUpti_ActivityMemoryPool3 *p)
{
	struct xpu_gpu_mempool r = {
		.time = p->timestamp,
		.correlation_id = p->correlationId,
		.address = p->address, .size = p->size, .utilized = p->utilizedSize,
		.release_threshold = p->releaseThreshold,
		.pid = pid, .device = p->deviceId,
		.op = (uint8_t)p->memoryPoolOperationType,
		.pool_type = (uint8_t)p->memoryPoolType,
	};

	if (p->memoryPoolOperationType < CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED ||
	    p->memoryPoolOperationType > CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED)
		return -EINVAL;
	if (p->memoryPoolType > CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED)
		r.pool_type = 0;
	return xpu_client__add(c, XPU_REC_GPU_MEMPOOL, &r, sizeof(r));
}

int xpu_mem_convert__activity(struct xpu_client *c, uint32_t pid, const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return mem_convert__memory(c, pid, (const CUpti_ActivityMemory4 *)rec);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return mem_convert__pool(c, pid, (const CUpti_ActivityMemoryPool3 *)rec);
	default:
		return 1;
	}
}

/* The runtime's allocation calls: the size is the second argument of
 * each, but cudaMallocPitch's width x height. */
static uint64_t mem_convert__rt_bytes(uint32_t cbid, const void *params)
{
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
		return ((const cudaMalloc_v3020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
		return ((const cudaMallocHost_v3020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
		return ((const cudaHostAlloc_v3020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
		return ((const cudaMallocManaged_v6000_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
		return ((const cudaMallocAsync_v11020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
		return ((const cudaMallocAsync_ptsz_v11020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
		return ((const cudaMallocFromPoolAsync_v11020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020:
		return ((const cudaMallocFromPoolAsync_ptsz_v11020_params *)params)->size;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
		const cudaMallocPitch_v3020_params *p = params;

		return (uint64_t)p->width * p->height;
	}
	}
	return 0;
}

static uint64_t mem_convert__drv_bytes(uint32_t cbid, const void *params)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
		return ((const cuMemAlloc_v2_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
		return ((const cuMemAllocAsync_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
		return ((const cuMemAllocAsync_ptsz_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
		return ((const cuMemAllocFromPoolAsync_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
		return ((const cuMemAllocFromPoolAsync_ptsz_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
		return ((const cuMemAllocManaged_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
		return ((const cuMemAllocHost_v2_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
	case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc_v2:
		return ((const cuMemHostAlloc_params *)params)->bytesize;
	case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
		return ((const cuMemCreate_params *)params)->size;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
		const cuMemAllocPitch_v2_params *p = params;

		return (uint64_t)p->WidthInBytes * p->Height;
	}
	}
	return 0;
}

uint64_t xpu_mem_convert__bytes(uint32_t domain, uint32_t cbid, const void *params)
{
	if (!params)
		return 0;
	return domain == XPU_API_RUNTIME ? mem_convert__rt_bytes(cbid, params) :
	       domain == XPU_API_DRIVER ? mem_convert__drv_bytes(cbid, params) : 0;
}
