// SPDX-License-Identifier: MIT
/* GPU_MEM_STATE and GPU_OOM records of --gpu-memory; see mem_send.h. */
#include <errno.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/memory/mem_send.h"

int xpu_mem__state(struct xpu_client *c, uint32_t pid, uint32_t device, uint64_t free,
		   uint64_t total, bool attach, uint64_t time)
{
	struct xpu_gpu_mem_state s = {
		.time = time, .free = free, .total = total, .used_before = total - free,
		.pid = pid, .device = device, .flags = attach ? XPU_MEM_STATE_ATTACH : 0,
	};

	if (free > total)
		return -EINVAL;
	return xpu_client__add(c, XPU_REC_GPU_MEM_STATE, &s, sizeof(s));
}

int xpu_mem__oom(struct xpu_client *c, const struct xpu_mem_oom *o)
{
	struct xpu_gpu_oom r = {
		.time = o->time, .bytes = o->bytes, .correlation_id = o->correlation_id,
		.pid = o->pid, .tid = o->tid, .device = o->device, .source = XPU_OOM_CUDA,
		.domain = o->domain, .cbid = o->cbid, .ret = o->ret,
	};

	return xpu_client__add(c, XPU_REC_GPU_OOM, &r, sizeof(r));
}
