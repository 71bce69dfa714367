// SPDX-License-Identifier: MIT
/* The record-type table (see record_types.h): data only. Its accessors are
 * inline in the header, the printers in record_print.c. */
#include <stddef.h>
#include "record_types.h"

/* Rows for the three shapes of body: a fixed struct, one followed by a
 * string, one ending in a stack part. */
#define REC_FIXED(n, s, f) \
	{ .name = n, .min_size = sizeof(struct s), .flags = (f) }
#define REC_STRING(n, s, f) \
	{ .name = n, .min_size = sizeof(struct s) + 1, .flags = (f) | XPU_RECF_STRING, \
	  .fixed = sizeof(struct s) }
#define REC_STACK(n, s, f) \
	{ .name = n, .min_size = sizeof(struct s), .flags = (f) | XPU_RECF_STACK, \
	  .stack_off = offsetof(struct s, stack) }

#define T XPU_RECF_TIME
#define G XPU_RECF_GPU
const struct xpu_rectype xpu_rectypes[XPU_REC_MAX] = {
	[XPU_REC_META]		= { .name = "META", .min_size = 2 },
	[XPU_REC_COMM]		= REC_FIXED("COMM", xpu_comm, T),
	[XPU_REC_FORK]		= REC_FIXED("FORK", xpu_fork, T),
	[XPU_REC_EXIT]		= REC_FIXED("EXIT", xpu_exit, T),
	[XPU_REC_MMAP]		= REC_STRING("MMAP", xpu_mmap, T),
	[XPU_REC_SAMPLE]	= REC_STACK("SAMPLE", xpu_sample, T),
	[XPU_REC_LOST]		= REC_FIXED("LOST", xpu_lost, T),
	[XPU_REC_KSYM]		= REC_STRING("KSYM", xpu_ksym, 0),
	[XPU_REC_PERF_MAP]	= REC_STRING("PERF_MAP", xpu_perf_map, 0),
	[XPU_REC_STRING]	= REC_STRING("STRING", xpu_string, 0),
	[XPU_REC_FINISH]	= REC_FIXED("FINISH", xpu_finish, 0),
	[XPU_REC_OFFCPU]	= REC_STACK("OFFCPU", xpu_offcpu, T),
	[XPU_REC_PY_STACK]	= REC_FIXED("PY_STACK", xpu_py_stack, T),
	[XPU_REC_PY_CODE]	= REC_FIXED("PY_CODE", xpu_py_code, 0),
	[XPU_REC_PROC_ENV]	= REC_FIXED("PROC_ENV", xpu_proc_env, T),
	[XPU_REC_AUTOGRAD]	= REC_FIXED("AUTOGRAD", xpu_autograd, T),
	[XPU_REC_GPU_KERNEL]	= REC_FIXED("GPU_KERNEL", xpu_gpu_kernel, T | G),
	[XPU_REC_GPU_MEMCPY]	= REC_FIXED("GPU_MEMCPY", xpu_gpu_memcpy, T | G),
	[XPU_REC_GPU_MEMSET]	= REC_FIXED("GPU_MEMSET", xpu_gpu_memset, T | G),
	[XPU_REC_GPU_SYNC]	= REC_FIXED("GPU_SYNC", xpu_gpu_sync, T | G),
	[XPU_REC_GPU_API]	= REC_FIXED("GPU_API", xpu_gpu_api, T | G),
	[XPU_REC_GPU_CORR]	= REC_STACK("GPU_CORR", xpu_gpu_corr, T | G),
	[XPU_REC_GPU_DEVICE]	= REC_STRING("GPU_DEVICE", xpu_gpu_device, G),
	[XPU_REC_GPU_NVTX]	= REC_FIXED("GPU_NVTX", xpu_gpu_nvtx, T | G),
	[XPU_REC_GPU_GRAPH_NODE] = REC_FIXED("GPU_GRAPH_NODE", xpu_gpu_graph_node, T | G),
	[XPU_REC_GPU_PC_SAMPLE]	= REC_FIXED("GPU_PC_SAMPLE", xpu_gpu_pc_sample, T | G),
	[XPU_REC_GPU_STALL_REASON] = REC_STRING("GPU_STALL_REASON", xpu_gpu_stall_reason, G),
	[XPU_REC_GPU_CUBIN]	= REC_FIXED("GPU_CUBIN", xpu_gpu_cubin, G),
	[XPU_REC_GPU_PC_RANGE]	= REC_FIXED("GPU_PC_RANGE", xpu_gpu_pc_range, T | G),
	[XPU_REC_GPU_MEMORY]	= REC_FIXED("GPU_MEMORY", xpu_gpu_memory, T | G),
	[XPU_REC_GPU_MEMPOOL]	= REC_FIXED("GPU_MEMPOOL", xpu_gpu_mempool, T | G),
	[XPU_REC_GPU_BLOCK]	= REC_FIXED("GPU_BLOCK", xpu_gpu_block, T | G),
	[XPU_REC_GPU_MEM_STATE]	= REC_FIXED("GPU_MEM_STATE", xpu_gpu_mem_state, T | G),
	[XPU_REC_GPU_OOM]	= REC_FIXED("GPU_OOM", xpu_gpu_oom, T | G),
};
#undef T
#undef G
