/* SPDX-License-Identifier: MIT */
/*
 * The GPU summary (--header and the TUI's header screen): per kernel name calls, total, min,
 * max (exact, from the GPU activity records, not from the profile's rounded
 * sample weights), and memcpy/memset bytes and time per copy kind. Collected
 * by a session tool in pass 1, so it costs no extra read of the trace.
 */
#ifndef XPU_REPORT_GPU_STATS_H
#define XPU_REPORT_GPU_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"
#include "report/session/session.h"

struct gpu_kstat {
	char *name;			/* demangled when possible */
	uint64_t calls;
	uint64_t total_ns, min_ns, max_ns;
};

struct gpu_xfer {			/* memcpy per copy kind, memset, sync */
	uint64_t count, bytes, ns;
};

/* One GPU: a device ordinal of one input (merged recordings: one per host). */
struct gpu_devstat {
	uint32_t input, device;
	uint64_t kernels, kernel_ns;	/* launches and the sum of their durations */
	uint64_t copies, copy_ns;	/* memcpy and memset */
	uint64_t busy_ns;		/* union of the kernel/copy/set intervals (finish) */
	uint64_t *iv;			/* [start, end) pairs until finish */
	size_t nr_iv, iv_cap;
};

struct gpu_stats {
	struct session_tool tool;
	const struct session *s;	/* for the inputs' labels */
	struct gpu_devstat *devs;	/* by (input, device), sorted at finish */
	size_t nr_devs, devs_cap;
	struct bmap names;		/* (pid, id) -> char * (mangled) */
	struct u64map by_key;		/* (pid << 32 | name_id) -> kernel index + 1 */
	uint64_t *keys;			/* per raw kernel slot: (pid << 32 | name_id) */
	struct gpu_kstat *raw;		/* per (pid, name_id), before merging by name */
	size_t nr_raw, raw_cap;
	struct gpu_kstat *kernels;	/* merged by name, sorted by total time */
	size_t nr_kernels;
	struct gpu_xfer memcpy[11];	/* indexed by enum xpu_memcpy_kind */
	struct gpu_xfer memset, sync;
	uint64_t kernel_ns, nr_kernel_calls;
	bool finished;
};

#define GPU_STATS_TOOL "gpu-stats"

/* Registers the collecting tool (GPU_STATS_TOOL) in s, before
 * session__pass1(); the session frees it. Returns 0. */
int gpu_stats__attach(struct session *s);
/* Merges per-process names into per-name rows; idempotent. */
void gpu_stats__finish(struct gpu_stats *g);
/* Whether the trace had any kernel, memcpy, memset or sync. */
bool gpu_stats__has_activity(const struct gpu_stats *g);

/* The summary as text lines (top nr kernels, then one line per device:
 * busy time, kernels, kernel time, copies), "# " prefixed like --header. */
int gpu_stats__fprint(struct gpu_stats *g, FILE *fp, size_t nr);
/* The --header section: "#" and the summary of the top 20 kernels, when the
 * tool is attached and the trace has GPU activity. 0 or -EIO. */
int gpu_stats__header(const struct session *s, FILE *fp);

/* 227687 ns -> "227.7us": compact durations for the GPU header tables. */
const char *gpu__ns_str(uint64_t ns, char *buf, size_t size);

const char *memcpy_kind__name(unsigned kind);

#endif
