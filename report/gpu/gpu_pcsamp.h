/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling in the report (format: XPU_REC_GPU_PC_SAMPLE,
 * GPU_STALL_REASON, GPU_CUBIN; xpu-record --gpu-pc-sampling). Each kernel's
 * GPU time is shared out among the PC samples of its function (pid and
 * name id) whose collection windows overlap the kernel (continuous mode has
 * no correlation id; a kernel in no window takes the function's samples of
 * the whole recording), in proportion to their counts: its leaf becomes
 *   [GPU_Kernel]name;[sass]name+0xOFF (file.cu:LINE);[stall]reason
 * with the weight split exactly (the last share takes what the others
 * leave, so a kernel's total is unchanged). Lines come from the recorded
 * cubins' .debug_line (cubin_lines.h), so the report needs no GPU and no
 * toolkit.
 */
#ifndef XPU_REPORT_GPU_PCSAMP_H
#define XPU_REPORT_GPU_PCSAMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"
#include "report/gpu/gpu_pcsamp_perturb.h"

struct xpu_record;
struct profile;

struct gpu_pcs_entry {
	uint64_t start, end;
	uint64_t crc, pc;
	uint32_t pid, name_id, device, reason;
	uint64_t samples;
	uint32_t sass_frame, stall_frame;	/* + 1; 0: not made yet */
};

struct gpu_pcs_stats {
	uint64_t records;		/* GPU_PC_SAMPLE records */
	uint64_t malformed;		/* stall count past the body */
	uint64_t samples;
	uint64_t cubins, cubins_reduced, cubins_skipped, cubins_bad;	/* reduced: of cubins */
	uint64_t pcs_with_line, pcs_without_line;
	uint64_t kernels_split;		/* kernels whose weight was shared out */
	uint64_t kernels_unsampled;	/* kernels of functions with no samples */
	uint64_t kernels_whole;		/* in no window: the function's totals used */
};

struct gpu_pcsamp {
	bool off;			/* --no-pc-sampling */
	struct gpu_pcs_entry *e;	/* sorted by (pid, name_id, start) after prepare */
	size_t nr, cap;
	uint64_t max_window;		/* the longest collection window, ns */
	struct u64map groups;		/* pid << 32 | name_id -> first entry + 1 */
	struct u64map group_end;	/* same key -> one past its last entry */
	struct u64map reasons;		/* pid << 32 | device << 16 | index -> name + 1 (char *) */
	struct u64map cubins;		/* crc ^ pid hash -> struct gpu_pcs_cubin * */
	struct gpu_pcs_stats stats;
	struct gpu_pcs_perturb perturb;	/* GPU_PC_RANGE: what sampling did to the kernels */
	/* Where the trace has no cubin for a PC's CRC (a module loaded before
	 * an attach): its line from elsewhere (gpu_join: the mapped files'
	 * fat binaries, gpu_fatbin.h), 0 or -ENOENT; NULL: none. */
	int (*find_line)(void *ctx, uint32_t pid, uint32_t device, uint64_t time,
			 const char *mangled, uint64_t pc, const char **file, uint32_t *line);
	void *find_ctx;
};

void gpu_pcsamp__init(struct gpu_pcsamp *ps);
void gpu_pcsamp__exit(struct gpu_pcsamp *ps);
/* Pass 1: the four record types (GPU_PC_RANGE: perturb's); others are ignored. */
void gpu_pcsamp__record(struct gpu_pcsamp *ps, const struct xpu_record *rec);
/* After pass 1. */
void gpu_pcsamp__prepare(struct gpu_pcsamp *ps);

/* One share of a kernel's weight: its stack (the kernel's + [sass] +
 * [stall]), its weight and the fraction of the kernel's it is. */
typedef void (*gpu_pcsamp_share_fn)(void *priv, uint32_t stack, double weight, double frac);

/* Splits a kernel's weight by its PC samples: fn once per share, under
 * stack (its stack with the [GPU_Kernel] leaf). Returns false (no call)
 * when its function has none, or the split is off. */
bool gpu_pcsamp__split(struct gpu_pcsamp *ps, struct profile *p, struct u64map *memo,
		       uint32_t stack, uint32_t pid, uint32_t name_id, const char *mangled,
		       uint64_t start, uint64_t end, double weight, gpu_pcsamp_share_fn fn,
		       void *priv);

/* The profile's share function: priv is a struct gpu_pcsamp_to_profile. */
struct gpu_pcsamp_to_profile {
	struct profile *p;
	uint32_t pid, tid, comm;
};
void gpu_pcsamp__to_profile(void *priv, uint32_t stack, double weight, double frac);

/* The short name of a stall reason: CUPTI's without its
 * smsp__pcsamp_warps_issue_stalled_ prefix. */
const char *gpu_pcsamp__reason_name(const char *cupti_name);

/* For annotate (gpu_annotate.c), after pass 1: the short name of an
 * entry's stall reason (NULL: the trace names none); the bytes of cubin
 * (pid, crc) as the trace holds them, *flags its XPU_CUBIN_* (NULL: none,
 * or skipped); the file and line of pc in mangled (0, or -ENOENT). */
const char *gpu_pcsamp__entry_reason(const struct gpu_pcsamp *ps, const struct gpu_pcs_entry *e);
const void *gpu_pcsamp__cubin_data(const struct gpu_pcsamp *ps, uint32_t pid, uint64_t crc,
				   size_t *size, uint32_t *flags);
int gpu_pcsamp__line(const struct gpu_pcsamp *ps, uint32_t pid, uint64_t crc, const char *mangled,
		     uint64_t pc, const char **file, uint32_t *line);

/* --header lines: the per-kernel stall-reason table. names(pid, name_id)
 * gives a kernel's mangled name. */
void gpu_pcsamp__header(const struct gpu_pcsamp *ps, FILE *fp,
			const char *(*names)(const void *ctx, uint32_t pid, uint32_t name_id),
			const void *ctx);

#endif
