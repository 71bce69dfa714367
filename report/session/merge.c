// SPDX-License-Identifier: MIT
/* Record rewriting for merged inputs (merge.h). */
#include <stddef.h>
#include <string.h>
#include "common/xalloc.h"
#include "format/xpu_format.h"
#include "report/session/merge.h"

#define MAX_IDS 4
#define MAX_TIMES 2

/* Offsets of the uint32_t pids/tids and uint64_t times of each type's body,
 * plus one: 0 ends a list. */
struct merge_fields {
	bool known;
	uint16_t ids[MAX_IDS];
	uint16_t times[MAX_TIMES];
};

#define IDS(...) .ids = { __VA_ARGS__ }
#define TIMES(...) .times = { __VA_ARGS__ }
#define O(s, f) (offsetof(struct s, f) + 1)
#define ROW(...) { .known = true, __VA_ARGS__ }

static const struct merge_fields merge_fields[XPU_REC_MAX] = {
	[XPU_REC_META]		= ROW(),
	[XPU_REC_COMM]		= ROW(IDS(O(xpu_comm, pid), O(xpu_comm, tid)),
				      TIMES(O(xpu_comm, time))),
	[XPU_REC_FORK]		= ROW(IDS(O(xpu_fork, pid), O(xpu_fork, tid), O(xpu_fork, ppid),
					  O(xpu_fork, ptid)),
				      TIMES(O(xpu_fork, time))),
	[XPU_REC_EXIT]		= ROW(IDS(O(xpu_exit, pid), O(xpu_exit, tid)),
				      TIMES(O(xpu_exit, time))),
	[XPU_REC_MMAP]		= ROW(IDS(O(xpu_mmap, pid), O(xpu_mmap, tid)),
				      TIMES(O(xpu_mmap, time))),
	[XPU_REC_SAMPLE]	= ROW(IDS(O(xpu_sample, pid), O(xpu_sample, tid)),
				      TIMES(O(xpu_sample, time))),
	[XPU_REC_LOST]		= ROW(IDS(O(xpu_lost, pid)),
				      TIMES(O(xpu_lost, time))),
	[XPU_REC_KSYM]		= ROW(),
	[XPU_REC_PERF_MAP]	= ROW(IDS(O(xpu_perf_map, pid))),
	[XPU_REC_STRING]	= ROW(IDS(O(xpu_string, pid))),
	[XPU_REC_FINISH]	= ROW(TIMES(O(xpu_finish, time))),
	[XPU_REC_OFFCPU]	= ROW(IDS(O(xpu_offcpu, pid), O(xpu_offcpu, tid)),
				      TIMES(O(xpu_offcpu, start), O(xpu_offcpu, end))),
	[XPU_REC_PY_STACK]	= ROW(IDS(O(xpu_py_stack, pid), O(xpu_py_stack, tid)),
				      TIMES(O(xpu_py_stack, time))),
	[XPU_REC_PY_CODE]	= ROW(IDS(O(xpu_py_code, pid))),
	[XPU_REC_PROC_ENV]	= ROW(IDS(O(xpu_proc_env, pid)),
				      TIMES(O(xpu_proc_env, time))),
	[XPU_REC_AUTOGRAD]	= ROW(IDS(O(xpu_autograd, pid), O(xpu_autograd, tid)),
				      TIMES(O(xpu_autograd, time))),
	[XPU_REC_GPU_KERNEL]	= ROW(IDS(O(xpu_gpu_kernel, pid)),
				      TIMES(O(xpu_gpu_kernel, start), O(xpu_gpu_kernel, end))),
	[XPU_REC_GPU_MEMCPY]	= ROW(IDS(O(xpu_gpu_memcpy, pid)),
				      TIMES(O(xpu_gpu_memcpy, start), O(xpu_gpu_memcpy, end))),
	[XPU_REC_GPU_MEMSET]	= ROW(IDS(O(xpu_gpu_memset, pid)),
				      TIMES(O(xpu_gpu_memset, start), O(xpu_gpu_memset, end))),
	[XPU_REC_GPU_SYNC]	= ROW(IDS(O(xpu_gpu_sync, pid)),
				      TIMES(O(xpu_gpu_sync, start), O(xpu_gpu_sync, end))),
	[XPU_REC_GPU_API]	= ROW(IDS(O(xpu_gpu_api, pid), O(xpu_gpu_api, tid)),
				      TIMES(O(xpu_gpu_api, start), O(xpu_gpu_api, end))),
	[XPU_REC_GPU_CORR]	= ROW(IDS(O(xpu_gpu_corr, pid), O(xpu_gpu_corr, tid)),
				      TIMES(O(xpu_gpu_corr, time))),
	[XPU_REC_GPU_DEVICE]	= ROW(IDS(O(xpu_gpu_device, pid))),
	[XPU_REC_GPU_NVTX]	= ROW(IDS(O(xpu_gpu_nvtx, pid), O(xpu_gpu_nvtx, tid),
					  O(xpu_gpu_nvtx, end_tid)),
				      TIMES(O(xpu_gpu_nvtx, start), O(xpu_gpu_nvtx, end))),
	[XPU_REC_GPU_GRAPH_NODE] = ROW(IDS(O(xpu_gpu_graph_node, pid), O(xpu_gpu_graph_node, tid)),
				       TIMES(O(xpu_gpu_graph_node, time))),
	[XPU_REC_GPU_PC_SAMPLE]	= ROW(IDS(O(xpu_gpu_pc_sample, pid)),
				      TIMES(O(xpu_gpu_pc_sample, start), O(xpu_gpu_pc_sample, end))),
	[XPU_REC_GPU_STALL_REASON] = ROW(IDS(O(xpu_gpu_stall_reason, pid))),
	[XPU_REC_GPU_CUBIN]	= ROW(IDS(O(xpu_gpu_cubin, pid))),
	[XPU_REC_GPU_PC_RANGE]	= ROW(IDS(O(xpu_gpu_pc_range, pid)),
				      TIMES(O(xpu_gpu_pc_range, start), O(xpu_gpu_pc_range, end))),
	[XPU_REC_GPU_MEMORY]	= ROW(IDS(O(xpu_gpu_memory, pid)),
				      TIMES(O(xpu_gpu_memory, time))),
	[XPU_REC_GPU_MEMPOOL]	= ROW(IDS(O(xpu_gpu_mempool, pid)),
				      TIMES(O(xpu_gpu_mempool, time))),
	[XPU_REC_GPU_BLOCK]	= ROW(IDS(O(xpu_gpu_block, pid), O(xpu_gpu_block, tid)),
				      TIMES(O(xpu_gpu_block, time))),
	[XPU_REC_GPU_MEM_STATE]	= ROW(IDS(O(xpu_gpu_mem_state, pid)),
				      TIMES(O(xpu_gpu_mem_state, time))),
	[XPU_REC_GPU_OOM]	= ROW(IDS(O(xpu_gpu_oom, pid), O(xpu_gpu_oom, tid)),
				      TIMES(O(xpu_gpu_oom, time))),
};

bool merge__covers(uint16_t type)
{
	return type < XPU_REC_MAX && merge_fields[type].known;
}

void merge__rewrite(struct xpu_record *rec, uint32_t pid_base, int64_t shift,
		    uint8_t **scratch, size_t *cap)
{
	const struct merge_fields *mf;
	uint8_t *b;

	if (!merge__covers(rec->type) || (!pid_base && !shift))
		return;
	mf = &merge_fields[rec->type];
	*scratch = xgrow(*scratch, cap, rec->body_size, 1);
	b = *scratch;
	memcpy(b, rec->body, rec->body_size);
	for (int i = 0; i < MAX_IDS && mf->ids[i]; i++) {
		size_t off = mf->ids[i] - 1;
		uint32_t v;

		if (off + sizeof(v) > rec->body_size)
			continue;
		memcpy(&v, b + off, sizeof(v));
		if (v) {
			v += pid_base;
			memcpy(b + off, &v, sizeof(v));
		}
	}
	for (int i = 0; i < MAX_TIMES && mf->times[i]; i++) {
		size_t off = mf->times[i] - 1;
		uint64_t t;

		if (off + sizeof(t) > rec->body_size)
			continue;
		memcpy(&t, b + off, sizeof(t));
		if (t) {
			/* a time before the reference's clock origin: 1, not a wrap */
			t = shift < 0 && (uint64_t)-shift >= t ? 1 : t + (uint64_t)shift;
			memcpy(b + off, &t, sizeof(t));
		}
	}
	rec->body = b;
}
