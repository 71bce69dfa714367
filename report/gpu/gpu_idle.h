/* SPDX-License-Identifier: MIT */
/*
 * GPU starvation (issue 9, --gpu-idle): for each (process, device), the
 * intervals in which none of the process's kernels, memcpys or memsets runs
 * on the device, from its first to its last GPU activity there, charged to
 * what the process's launching threads of that device were doing meanwhile:
 * their on-CPU samples and off-CPU intervals. Profile entries of origin
 * ORIGIN_GPU_IDLE under "[GPU idle devN]" + the CPU stack; --header prints
 * busy % and idle time per device and the top idle causes. How the time is
 * shared: Documentation/design-gpu-idle.md.
 *
 *  pass 1   the threads that call CUDA (GPU_CORR and GPU_API records): only
 *           their CPU events are kept
 *  pass 2   their CPU events, from session__subscribe_cpu()
 *  finish   the GPU join's finish (registered before us, so it runs first)
 *           hands over every kernel, memcpy and memset with its device and
 *           launching thread, the filters' rejects included; then gaps,
 *           charging, profile entries, statistics
 */
#ifndef XPU_REPORT_GPU_IDLE_H
#define XPU_REPORT_GPU_IDLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/session/session.h"

#define GPU_IDLE_TOOL "gpu-idle"
#define GPU_IDLE_MODULE "[gpu-idle]"
#define GPU_IDLE_NO_CPU "[no CPU activity recorded]"

/* One leaf frame and the idle time charged to it (the header's causes). */
struct gpu_idle_cause {
	uint32_t frame;			/* profile frame id: the CPU stack's leaf */
	double ns;
};

/* The result for one (process, device). Times are CLOCK_MONOTONIC ns. */
struct gpu_idle_device {
	uint32_t pid, device;
	uint64_t first, last;		/* first start, last end of its GPU work */
	uint64_t from;			/* where idle time is counted from: first, or
					 * with --idle-from-start the process's first
					 * CPU event when earlier */
	uint64_t busy_ns;		/* union of the work intervals */
	uint64_t idle_ns;		/* (last - from) - busy_ns */
	uint64_t nr_gaps;
	uint32_t *launchers;		/* tids that launched work on it */
	size_t nr_launchers;
	/* what the charging gave out, after the filters (ns) */
	double charged_ns;		/* to CPU events of the launchers */
	double unexplained_ns;		/* to [no CPU activity recorded] */
	struct gpu_idle_cause *causes;	/* by leaf frame, heaviest first */
	size_t nr_causes;
};

struct gpu_idle;

/* Registers the tool (GPU_IDLE_TOOL) in s, after gpu_join__attach() and
 * before session__pass1(); the session frees it. A second call returns the
 * first tool (from_start then only adds: --idle-from-start counts the time
 * from the process's first CPU event to its first GPU work as idle too). */
struct gpu_idle *gpu_idle__attach(struct session *s, bool from_start);
struct gpu_idle *gpu_idle__find(const struct session *s);

/* After session__pass2(): the devices, ordered by (pid, device). */
size_t gpu_idle__nr_devices(const struct gpu_idle *gi);
const struct gpu_idle_device *gpu_idle__device(const struct gpu_idle *gi, size_t i);

/* The --header section: attaches the tool (prepare) and prints per device
 * busy %, idle time and the top idle causes (nothing without GPU work). */
int gpu_idle__header_prepare(struct session *s);
int gpu_idle__header(const struct session *s, FILE *fp);

#endif
