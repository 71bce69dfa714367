/* SPDX-License-Identifier: MIT */
/*
 * Where the GPU memory goes (--gpu-memory): the live-set computation over a
 * process's allocations and frees, per (process, device). It knows nothing
 * of the trace or the session: the memory tool (gpu_memory_tool.c) hands it
 * one struct gpu_mem_ev per allocation and free, with the allocating stack
 * already interned, and reads the spaces and rows back. Design notes:
 * Documentation/design-gpu-memory.md.
 *
 *  layers   PyTorch's caching allocator's blocks (GPU_BLOCK: the tensors)
 *           and CUDA-level allocations (GPU_MEMORY: cudaMalloc, pools,
 *           VMM maps; for PyTorch, its segments). A (process, device) with
 *           any block counts blocks as "allocated" and the CUDA-level
 *           allocations that held a block (its segments) as "reserved",
 *           the others as "other"; one without counts CUDA-level memory
 *           as both. Nothing is counted twice.
 *  live     a block is live from its allocation to its free, in trace order
 *           (events sorted by time, ties in the order given): at moment T
 *           the blocks allocated at or before T and not freed at or before T.
 *  peak     the first moment the allocated total reaches its highest, within
 *           the window (the blocks live at the window's start count).
 *  frees    a free of a pointer not live is a double free when that pointer
 *           was freed before and not allocated again, else unknown (never
 *           seen: allocated before the attach, or its record lost).
 */
#ifndef XPU_REPORT_GPU_MEMORY_H
#define XPU_REPORT_GPU_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/hashmap.h"

/* GPU_MEM_OTHER: a PyTorch space's CUDA-level allocations that never held
 * one of its blocks (cuBLAS's or NCCL's own, the program's cudaMalloc): not
 * its allocator's segments, so not "reserved" (gpu_mem__compute sets it). */
enum gpu_mem_layer { GPU_MEM_BLOCK, GPU_MEM_CUDA, GPU_MEM_OTHER, GPU_MEM_NR_LAYERS };
enum gpu_mem_op { GPU_MEM_ALLOC = 1, GPU_MEM_FREE = 2 };
/* --gpu-memory=peak (the default), alloc, leak; --time T: at */
enum gpu_mem_mode { GPU_MEM_PEAK, GPU_MEM_ALLOCS, GPU_MEM_LEAK, GPU_MEM_AT };

#define GPU_MEM_NR_KINDS 8		/* CUDA memory kinds (XPU_MEMKIND_*) */

/* One allocation or free. */
struct gpu_mem_ev {
	uint64_t time;			/* CLOCK_MONOTONIC ns */
	uint64_t addr;
	uint64_t bytes;			/* alloc: its size; free: ignored (the alloc's) */
	uint32_t pid, tid;
	int32_t device;			/* alloc: its CUDA device; free: ignored */
	uint32_t stack;			/* alloc: the allocating stack (profile id, 0: none) */
	uint8_t layer;			/* enum gpu_mem_layer */
	uint8_t op;			/* enum gpu_mem_op */
	uint8_t kind;			/* CUDA-level: XPU_MEMKIND_*, < GPU_MEM_NR_KINDS */
	uint8_t reserved;
};

/* What to compute. Times are CLOCK_MONOTONIC ns. */
struct gpu_mem_query {
	enum gpu_mem_mode mode;
	uint64_t start, end;		/* the window: [start, end]; end is also the
					 * leak view's "end of the recording" */
	uint64_t at;			/* GPU_MEM_AT: the moment */
	bool oom_first;			/* peak: a space with an OOM is taken at it */
};

/* One (process, device). Bytes are of the counted layer unless said. */
struct gpu_mem_space {
	uint32_t pid, device;
	bool torch;			/* blocks counted, CUDA-level = reserved */
	uint64_t peak, peak_time;	/* allocated: the highest, first reached */
	uint64_t peak_seq;		/* its event position (internal) */
	uint64_t reserved_at_peak;	/* CUDA-level live then */
	uint64_t reserved_peak, reserved_peak_time;	/* CUDA-level: the highest */
	uint64_t other_peak, other_peak_time;	/* PyTorch: GPU_MEM_OTHER's highest */
	uint64_t nr_allocs, alloc_bytes;	/* counted layer, in the window */
	uint64_t live_end, nr_live_end;		/* counted layer at the window's end */
	uint64_t taken;			/* the moment of the rows (peak, T, OOM,
					 * end); 0 for alloc */
	uint64_t live_taken;		/* allocated then */
	bool taken_at_oom;
	/* a GPU_MEM_STATE baseline (gpu_mem__baseline) */
	bool has_baseline, attached;
	uint64_t used_before, baseline_time;
	/* the first OOM of the process on this device (gpu_mem__oom) */
	bool oom;
	uint64_t oom_time, oom_bytes;
	uint32_t oom_stack, oom_tid;
};

/* One stack's share of a space's rows. */
struct gpu_mem_row {
	uint32_t space;			/* index into the spaces */
	uint32_t stack, tid;
	uint64_t bytes, count;
	uint64_t oldest;		/* the earliest allocation's time (leak: age) */
	double age_sum;			/* leak: sum of (end - alloc time), ns */
};

struct gpu_mem_blk {			/* an allocation and its free */
	uint32_t ev;			/* index of its alloc event (sorted) */
	uint32_t space;
	uint64_t alloc_seq, free_seq;	/* positions in the sorted events; UINT64_MAX: never freed */
};

struct gpu_mem {
	struct gpu_mem_ev *evs;
	size_t nr_evs, evs_cap;
	struct gpu_mem_space *spaces;	/* ordered by (pid, device) after compute */
	size_t nr_spaces, spaces_cap;
	struct u64map space_idx;	/* pid << 32 | device -> index + 1 */
	struct gpu_mem_blk *blks;
	size_t nr_blks, blks_cap;
	struct gpu_mem_row *rows;	/* by space, heaviest first */
	size_t nr_rows, rows_cap;
	uint64_t unknown_frees[GPU_MEM_NR_LAYERS];
	uint64_t double_frees[GPU_MEM_NR_LAYERS];
	uint64_t nr_frees[GPU_MEM_NR_LAYERS];
	bool computed;
};

void gpu_mem__init(struct gpu_mem *m);
void gpu_mem__exit(struct gpu_mem *m);
/* An allocation or free (before gpu_mem__compute). */
void gpu_mem__add(struct gpu_mem *m, const struct gpu_mem_ev *ev);
/* A baseline of (pid, device) from GPU_MEM_STATE: the first one is kept. */
void gpu_mem__baseline(struct gpu_mem *m, uint32_t pid, uint32_t device, uint64_t time,
		       uint64_t used_before, bool attached);
/* An allocation that failed: the first of (pid, device) is kept; device -1:
 * the process's first space with memory (or device 0). */
void gpu_mem__oom(struct gpu_mem *m, uint32_t pid, int32_t device, uint64_t time,
		  uint64_t bytes, uint32_t stack, uint32_t tid);
/* Sorts the events, replays them and fills the spaces and rows for q.
 * Once only. */
void gpu_mem__compute(struct gpu_mem *m, const struct gpu_mem_query *q);

/* The replay again, for a timeline: fn after each event is applied, with
 * its space and that space's live bytes per layer and per CUDA kind. A free
 * of an unknown pointer is not handed out. After gpu_mem__compute. */
struct gpu_mem_point {
	const struct gpu_mem_ev *ev;
	const struct gpu_mem_ev *alloc;	/* a free: its allocation */
	uint32_t space;
	uint64_t live[GPU_MEM_NR_LAYERS];
	uint64_t kind[GPU_MEM_NR_KINDS];	/* CUDA-level (segments and other) by memory kind */
};
void gpu_mem__replay(const struct gpu_mem *m,
		     void (*fn)(const struct gpu_mem_point *pt, void *priv), void *priv);

/* The counted layer of a space. */
static inline enum gpu_mem_layer gpu_mem_space__layer(const struct gpu_mem_space *sp)
{
	return sp->torch ? GPU_MEM_BLOCK : GPU_MEM_CUDA;
}

const char *gpu_mem_mode__name(enum gpu_mem_mode mode);
/* "peak", "alloc", "leak" -> mode; -1 otherwise. */
int gpu_mem_mode__parse(const char *s);
/* "1.5 GiB", "512 KiB", "17 B" into buf. Returns buf. */
const char *gpu_mem__bytes_str(uint64_t bytes, char *buf, size_t size);

#endif
