/* SPDX-License-Identifier: MIT */
/*
 * Sync waits (issue 9, --sync-wait): the time a CPU thread spends inside a
 * synchronizing CUDA call (cudaStreamSynchronize, cudaDeviceSynchronize,
 * cudaEventSynchronize, a synchronous cudaMemcpy, the driver equivalents),
 * charged to the stack of that call (the join's correlation stack + API
 * frame) with what the GPU ran meanwhile as leaves:
 *
 *   ...;train_step;cudaStreamSynchronize;[waits on] ampere_sgemm_128x64
 *   ...;train_step;cudaStreamSynchronize;[waits on] nothing (GPU idle)
 *
 * Profile entries of origin ORIGIN_SYNC_WAIT; the weights of one call sum to
 * its duration in samples. How the time is split:
 * Documentation/design-gpu-idle.md.
 *
 *  pass 1   API records of synchronizing calls (the intervals), GPU_SYNC
 *           records (stream and context of the wait), the device of each
 *           context and of each copy
 *  finish   after the join's: its kernels, copies and memsets (filtered
 *           ones too) are what a call may wait on; its sync events give the
 *           calls that have no API record
 */
#ifndef XPU_REPORT_GPU_SYNC_WAIT_H
#define XPU_REPORT_GPU_SYNC_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/session/session.h"

#define GPU_SYNC_WAIT_TOOL "gpu-sync-wait"
#define GPU_SYNC_WAIT_MODULE "[sync-wait]"
#define GPU_SYNC_WAIT_NOTHING "[waits on] nothing (GPU idle)"

/* What a synchronizing call waits for, by its name (runtime or driver,
 * without version suffixes): SW_NONE for calls that do not block the CPU
 * (cudaStreamWaitEvent, queries, async copies). */
enum sw_scope {
	SW_NONE,
	SW_STREAM,			/* one stream: cudaStreamSynchronize */
	SW_DEVICE,			/* one device: cudaDeviceSynchronize, cuCtxSynchronize */
	SW_EVENT,			/* an event (stream unknown): all the process's work */
	SW_COPY,			/* a synchronous copy: its device */
};
enum sw_scope gpu_sync_wait__scope(const char *api_name);

struct gpu_sync_api_stat {
	uint32_t domain, cbid;
	uint64_t calls;
	uint64_t ns;
};

struct gpu_sync_frame_count {
	uint32_t frame;			/* profile frame id of an API frame */
	uint64_t count;
};

struct gpu_sync_wait_stats {
	uint64_t calls;			/* charged, after the filters */
	uint64_t ns;			/* their total duration */
	double work_ns;			/* of which some GPU work in scope ran */
	double idle_ns;			/* of which none did */
	uint64_t filtered;		/* calls left out by the filters */
	uint64_t nested;		/* calls inside another one of the same thread */
	uint64_t from_sync_records;	/* calls known only from a GPU_SYNC record */
	struct gpu_sync_api_stat *apis;	/* per API, most time first */
	size_t nr_apis;
	/* GPU_SYNC records the join could not give a CPU stack (issue 9) */
	uint64_t sync_records, sync_unmatched;
	uint64_t unmatched_type[5];	/* by CUPTI sync type 0..4 */
	uint64_t unmatched_corr0;	/* correlation id 0 */
	uint64_t unmatched_no_api;	/* not even an API record names the call */
	struct gpu_sync_frame_count *unmatched_apis;	/* the others, by API, most first */
	size_t nr_unmatched_apis;
};

struct gpu_sync_wait;

/* Registers the tool (GPU_SYNC_WAIT_TOOL) in s, after gpu_join__attach()
 * and before session__pass1(); the session frees it. Idempotent. */
struct gpu_sync_wait *gpu_sync_wait__attach(struct session *s);
struct gpu_sync_wait *gpu_sync_wait__find(const struct session *s);
const struct gpu_sync_wait_stats *gpu_sync_wait__stats(const struct gpu_sync_wait *sw);

/* The --header section: attaches the tool (prepare); prints the calls, their
 * time on GPU work and GPU idle, per API, and why sync records stayed
 * without a CPU stack (nothing when the trace has neither). */
int gpu_sync_wait__header_prepare(struct session *s);
int gpu_sync_wait__header(const struct session *s, FILE *fp);

#endif
