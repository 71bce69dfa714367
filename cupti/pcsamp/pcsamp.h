/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling, the part that does not need CUPTI's headers: the records
 * (format: XPU_REC_GPU_PC_SAMPLE, GPU_STALL_REASON, GPU_CUBIN, LOST source
 * XPU_LOST_PC_SAMPLES) made from what CUPTI's PC Sampling API gives. The
 * CUPTI glue (cupti_pcsamp.c) enables the sampling per context and hands
 * its data here; the fake CUPTI library of the tests calls this directly
 * with known PCs, so CI runs the same record making.
 *
 * Continuous mode: CUPTI aggregates samples per PC over every launch
 * between two cuptiPCSamplingGetData calls of a context and gives no
 * correlation id; each PC goes out with its collection window [start, end]
 * and its function's name id (interned with the kernel names, so the same
 * id as the GPU_KERNEL records of that function).
 */
#ifndef XPU_CUPTI_PCSAMP_H
#define XPU_CUPTI_PCSAMP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cupti/channel/wire.h"

struct xpu_client;
struct xpu_names;
struct xpu_gpu_pc_stall;

#define XPU_PCSAMP_CUBIN_MAX		(3u << 20)	/* under the channel's message bound */
/* A larger cubin is reduced to its line mapping (pcsamp_cubin.h), kept when
 * that fits this bound (the channel's too), else skipped */
#define XPU_PCSAMP_REDUCED_MAX		XPU_PCSAMP_CUBIN_MAX
#define XPU_PCSAMP_MAX_CUBINS		4096
#define XPU_PCSAMP_MAX_DEVICES		64

/* One PC as CUPTI gives it (CUpti_PCSamplingPCData). stalls has the
 * layout of CUpti_PCSamplingStallReason. */
struct xpu_pcsamp_pc {
	uint64_t cubin_crc;
	uint64_t pc_offset;
	const char *function;		/* mangled name; NULL: unknown */
	uint32_t correlation_id;
	size_t nr_stalls;
	const struct xpu_gpu_pc_stall *stalls;
};

struct xpu_pcsamp {
	struct xpu_client *client;
	struct xpu_names *names;
	uint32_t pid;
	size_t cubin_max;
	pthread_mutex_t lock;		/* the sets and counts below */
	uint64_t cubin_crcs[XPU_PCSAMP_MAX_CUBINS];
	size_t nr_crcs;
	uint64_t reasons_sent;		/* bit per device (< 64) */
	uint64_t nr_cubins, nr_cubins_skipped, cubin_bytes;
	uint64_t nr_cubins_reduced, reduced_bytes, reduced_from;
	uint64_t nr_pcs, nr_samples, nr_dropped;
	uint64_t nr_ranges;
};

/* Parses XPU_CUPTI_PC_SAMPLING's value: 0 off, -1 on at CUPTI's default
 * period, 5..31 the period's exponent; -EINVAL for anything else. */
int xpu_pcsamp__parse(const char *val);

void xpu_pcsamp__init(struct xpu_pcsamp *s, struct xpu_client *c, struct xpu_names *names,
		      uint32_t pid, const char *cubin_max);

/* Whether the stall reason of this name is collected: not the
 * "_not_issued" ones, which count a subset of another reason's samples. */
bool xpu_pcsamp__want_reason(const char *name);

/* The names of the device's selected stall reasons, once per device.
 * Returns 0, or -errno when queueing failed. */
int xpu_pcsamp__reasons(struct xpu_pcsamp *s, uint32_t device, size_t n,
			const uint32_t *index, const char *const *names);

/* The PCs of one collection window of a context: one GPU_PC_SAMPLE each
 * (stall entries with 0 samples left out). Returns the samples queued. */
uint64_t xpu_pcsamp__pcs(struct xpu_pcsamp *s, uint32_t device, uint32_t context,
			 uint64_t start, uint64_t end, const struct xpu_pcsamp_pc *pcs, size_t n);

/* Sampling was on in a context from start to end: one GPU_PC_RANGE. */
int xpu_pcsamp__range(struct xpu_pcsamp *s, uint32_t device, uint32_t context, uint64_t start,
		      uint64_t end);
/* Samples CUPTI dropped (droppedSamples, a full hardware buffer). */
void xpu_pcsamp__dropped(struct xpu_pcsamp *s, uint64_t n);

/* A module's cubin: a GPU_CUBIN record, once per crc: the cubin whole up
 * to cubin_max bytes; a larger one reduced to its line mapping
 * (XPU_CUBIN_REDUCED), or skipped (XPU_CUBIN_SKIPPED) when it has none or
 * that is larger than XPU_PCSAMP_REDUCED_MAX. Returns 1 when queued, 0
 * when sent before or not queued. */
int xpu_pcsamp__cubin(struct xpu_pcsamp *s, uint64_t crc, const void *data, size_t size);

/* META cupti.cubins, at the end. */
void xpu_pcsamp__finish(struct xpu_pcsamp *s);

/* A 64-bit CRC (ECMA-182, as xz's) of a cubin: the fake library's stand-in
 * for cuptiGetCubinCrc, and the real library's when that call fails. */
uint64_t xpu_pcsamp__crc64(const void *data, size_t size);

#endif
