/* SPDX-License-Identifier: MIT */
/*
 * The GPU memory tool (--gpu-memory, the memory section of --header, the
 * memory tracks of --timeline): a session tool that reads the trace's
 * memory records, gives each allocation its stack, hands them to the
 * live-set computation (gpu_memory.h) and adds its rows to the profile as
 * ORIGIN_GPU_MEM entries, weight in bytes, under "[GPU memory devN]".
 *
 *  pass 1   GPU_BLOCK (PyTorch's blocks), GPU_MEMORY (CUDA-level), the
 *           GPU_MEM_STATE baselines, GPU_OOM; records with values out of
 *           range are skipped and counted
 *  pass1_done  the GPU join is asked for the API stacks of the CUDA-level
 *           allocations and CUDA OOMs (gpu_join__want_corr)
 *  pass 2   the GPU_CORR records of domain XPU_API_ALLOC that a block or
 *           allocator OOM names: their stacks resolved here (the join
 *           leaves that domain alone: its ids are not CUPTI's)
 *  finish   after the join's: stacks filled in, the computation run for
 *           the options, the profile entries added
 */
#ifndef XPU_REPORT_GPU_MEMORY_TOOL_H
#define XPU_REPORT_GPU_MEMORY_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/gpu/gpu_memory.h"
#include "report/session/session.h"

#define GPU_MEMORY_TOOL "gpu-memory"
#define GPU_MEMORY_MODULE "[gpu-memory]"

/* What --gpu-memory asked. */
struct gpu_memory_opts {
	enum gpu_mem_mode mode;
	bool mode_given;		/* --gpu-memory=MODE: no opening at an OOM */
	bool at_given;			/* --time T */
	double at;			/* seconds after the first record */
};

struct gpu_memory;

/* Registers the tool in s after gpu_join__attach() and before pass 1; a
 * second call returns the first (o is then ignored). o NULL: the peak. */
struct gpu_memory *gpu_memory__attach(struct session *s, const struct gpu_memory_opts *o);
struct gpu_memory *gpu_memory__find(const struct session *s);
/* Whether the trace holds memory records (after pass 1). */
bool gpu_memory__active(const struct gpu_memory *gm);
/* After pass 2: the computation (spaces, rows), or NULL before. */
const struct gpu_mem *gpu_memory__result(const struct gpu_memory *gm);
/* "[GPU memory devN]": the root frame of a device's memory. */
uint32_t gpu_memory__device_frame(struct session *s, uint32_t device);
/* Records skipped for values out of range (an op, a kind, a size). */
uint64_t gpu_memory__bad_records(const struct gpu_memory *gm);
const struct gpu_memory_opts *gpu_memory__opts(const struct gpu_memory *gm);

/* The --header section: attaches the tool (prepare); per device the peak
 * allocated and reserved, the top holders, fragmentation, unknown and
 * double frees, the attach baseline, the OOM. Nothing without records. */
int gpu_memory__header_prepare(struct session *s);
int gpu_memory__header(const struct session *s, FILE *fp);

#endif
