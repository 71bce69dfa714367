// SPDX-License-Identifier: MIT
/* CUpti_Activity* -> xpu_format.h GPU records. Header types only. */
#include <errno.h>
#include <string.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti_convert.h"
#include "cupti/memory/cupti_mem_convert.h"

void xpu_convert__init(struct xpu_convert *cv, struct xpu_client *c,
		       struct xpu_names *names, uint32_t pid)
{
	memset(cv, 0, sizeof(*cv));
	cv->client = c;
	cv->names = names;
	cv->pid = pid;
}

static int convert__kernel(struct xpu_convert *cv, const CUpti_ActivityKernel10 *k)
{
	struct xpu_gpu_kernel r = {
		.start = k->start, .end = k->end,
		.correlation_id = k->correlationId,
		.graph_node_id = k->graphNodeId,
		.pid = cv->pid,
		.device = k->deviceId, .context = k->contextId, .stream = k->streamId,
		.graph_id = k->graphId,
		.grid = { k->gridX, k->gridY, k->gridZ },
		.block = { k->blockX, k->blockY, k->blockZ },
		.static_smem = k->staticSharedMemory,
		.dynamic_smem = k->dynamicSharedMemory,
		.registers = k->registersPerThread,
		.launch_type = k->launchType,
	};

	/* id 0 (out of memory) reads as an unknown name, never a wrong one. */
	r.name_id = xpu_names__intern(cv->names, cv->client, k->name ? k->name : "[unknown kernel]");
	return xpu_client__add(cv->client, XPU_REC_GPU_KERNEL, &r, sizeof(r));
}

static int convert__memcpy(struct xpu_convert *cv, const CUpti_ActivityMemcpy6 *m)
{
	struct xpu_gpu_memcpy r = {
		.start = m->start, .end = m->end,
		.correlation_id = m->correlationId,
		.bytes = m->bytes,
		.graph_node_id = m->graphNodeId,
		.pid = cv->pid,
		.device = m->deviceId, .context = m->contextId, .stream = m->streamId,
		.graph_id = m->graphId,
		.copy_kind = m->copyKind,
		.src_kind = m->srcKind, .dst_kind = m->dstKind,
		.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0,
	};

	return xpu_client__add(cv->client, XPU_REC_GPU_MEMCPY, &r, sizeof(r));
}

static int convert__memset(struct xpu_convert *cv, const CUpti_ActivityMemset4 *m)
{
	struct xpu_gpu_memset r = {
		.start = m->start, .end = m->end,
		.correlation_id = m->correlationId,
		.bytes = m->bytes,
		.graph_node_id = m->graphNodeId,
		.pid = cv->pid,
		.device = m->deviceId, .context = m->contextId, .stream = m->streamId,
		.graph_id = m->graphId,
		.value = m->value,
	};

	return xpu_client__add(cv->client, XPU_REC_GPU_MEMSET, &r, sizeof(r));
}

static int convert__api(struct xpu_convert *cv, const CUpti_ActivityAPI *a)
{
	struct xpu_gpu_api r = {
		.start = a->start, .end = a->end,
		.correlation_id = a->correlationId,
		.pid = cv->pid, .tid = a->threadId,
		.domain = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? XPU_API_RUNTIME : XPU_API_DRIVER,
		.cbid = a->cbid,
		.ret = (int32_t)a->returnValue,
	};

	return xpu_client__add(cv->client, XPU_REC_GPU_API, &r, sizeof(r));
}

static int convert__sync(struct xpu_convert *cv, const CUpti_ActivitySynchronization2 *s)
{
	/* CUPTI_SYNCHRONIZATION_INVALID_VALUE is ~0u, our "not applicable". */
	struct xpu_gpu_sync r = {
		.start = s->start, .end = s->end,
		.correlation_id = s->correlationId,
		.pid = cv->pid,
		.type = s->type,
		.context = s->contextId, .stream = s->streamId,
		.event = s->cudaEventId,
	};

	return xpu_client__add(cv->client, XPU_REC_GPU_SYNC, &r, sizeof(r));
}

int xpu_convert__activity(struct xpu_convert *cv, const CUpti_Activity *rec)
{
	int err;

	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		err = convert__kernel(cv, (const CUpti_ActivityKernel10 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		err = convert__memcpy(cv, (const CUpti_ActivityMemcpy6 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		err = convert__memset(cv, (const CUpti_ActivityMemset4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		err = convert__api(cv, (const CUpti_ActivityAPI *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		err = convert__sync(cv, (const CUpti_ActivitySynchronization2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY2:	/* --gpu-memory */
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		err = xpu_mem_convert__activity(cv->client, cv->pid, rec);
		break;
	default:
		cv->nr_ignored++;
		return 1;
	}
	cv->nr_converted++;
	return err;
}

uint64_t xpu_convert__buffer(struct xpu_convert *cv, uint8_t *buf, size_t valid,
			     xpu_activity_next_fn next)
{
	CUpti_Activity *rec = NULL;
	uint64_t n = 0;

	if (!buf || !valid)
		return 0;
	while (!next(buf, valid, &rec)) {
		xpu_convert__activity(cv, rec);
		n++;
	}
	return n;
}
