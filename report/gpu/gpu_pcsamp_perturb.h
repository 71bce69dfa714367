/* SPDX-License-Identifier: MIT */
/*
 * What GPU PC sampling did to the kernels it sampled. With duty-cycled
 * sampling (format: XPU_REC_GPU_PC_RANGE, the intervals in which sampling
 * was on in a process's device), a kernel launch whose GPU interval
 * overlaps a range of its process and device was sampled, one outside
 * every range was not. Per kernel (pid, name id) the mean duration of its
 * sampled launches over that of its unsampled ones is the inflation that
 * sampling caused. Where it is clear (at least GPU_PCS_PERTURB_MIN_LAUNCHES
 * launches each way and a factor of GPU_PCS_PERTURB_FACTOR or more) the
 * sampled launches' GPU time is taken from the unsampled ones (divided by
 * the factor) in every view built on the profile, and said: the kernels'
 * true time is what they take when nobody samples them. The timeline keeps
 * the recorded intervals (what happened in that run).
 *
 * A trace without ranges (continuous sampling, 1.8/1.9 traces) has no
 * unsampled launches to compare: every kernel is taken as recorded, and
 * --header says that the perturbation could not be measured.
 */
#ifndef XPU_REPORT_GPU_PCSAMP_PERTURB_H
#define XPU_REPORT_GPU_PCSAMP_PERTURB_H

#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"

#define GPU_PCS_PERTURB_MIN_LAUNCHES	3
#define GPU_PCS_PERTURB_FACTOR		1.2

struct xpu_record;

struct gpu_pcs_range {
	uint64_t start, end;
	uint32_t pid, device;
};

struct gpu_pcs_kstat {
	uint32_t pid, name_id;
	uint64_t n_sampled, n_unsampled;
	double ns_sampled, ns_unsampled;
	double factor;			/* > 1: the sampled launches' time divided by it */
};

struct gpu_pcs_perturb {
	struct gpu_pcs_range *r;	/* sorted by (pid, device, start) after prepare */
	size_t nr, cap;
	uint64_t max_len;		/* the longest range, ns */
	uint64_t malformed;
	struct u64map kidx;		/* pid << 32 | name_id -> kstat index + 1 */
	struct gpu_pcs_kstat *k;
	size_t nk, kcap;
	uint64_t corrected;		/* launches whose time was divided */
	double corrected_ns;		/* the time taken off them */
};

void gpu_pcs_perturb__init(struct gpu_pcs_perturb *pp);
void gpu_pcs_perturb__exit(struct gpu_pcs_perturb *pp);
/* Pass 1: a GPU_PC_RANGE record. */
void gpu_pcs_perturb__range(struct gpu_pcs_perturb *pp, const struct xpu_record *rec);
/* After pass 1: sorts the ranges. */
void gpu_pcs_perturb__prepare(struct gpu_pcs_perturb *pp);
/* After prepare: one kernel launch, counted sampled or not. */
void gpu_pcs_perturb__kernel(struct gpu_pcs_perturb *pp, uint32_t pid, uint32_t device,
			     uint32_t name_id, uint64_t start, uint64_t end);
/* After the last kernel: each kernel's factor. */
void gpu_pcs_perturb__finish(struct gpu_pcs_perturb *pp);
/* A launch's GPU time for the views: its duration, divided by its
 * kernel's factor where it was sampled and the factor is clear. */
double gpu_pcs_perturb__ns(struct gpu_pcs_perturb *pp, uint32_t pid, uint32_t device,
			   uint32_t name_id, uint64_t start, uint64_t end);
/* The number of kernels with a clear factor, and the largest (*worst). */
size_t gpu_pcs_perturb__inflated(const struct gpu_pcs_perturb *pp, const struct gpu_pcs_kstat **worst);
/* --header lines. names(pid, name_id) gives a kernel's display name. */
void gpu_pcs_perturb__header(const struct gpu_pcs_perturb *pp, FILE *fp,
			     const char *(*names)(const void *ctx, uint32_t pid, uint32_t name_id),
			     const void *ctx);

#endif
