/* SPDX-License-Identifier: MIT */
/* perf-map files of the recorded processes (perfmap.c). */
#ifndef XPU_RECORD_KERNEL_PERFMAP_H
#define XPU_RECORD_KERNEL_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts;
struct xpu_writer;
struct sideband;

/* /tmp/perf-PID.map of seen processes as XPU_REC_PERF_MAP; since:
 * files older than this (wall clock) are skipped unless -p named the pid */
int perfmap__copy(struct xpu_writer *w, struct sideband *sb, const struct record_opts *o,
		  time_t since);

#endif
