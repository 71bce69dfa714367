/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_WALK_PROBE_H
#define XPU_CUPTI_WALK_PROBE_H
#include <stdbool.h>
#include <stdint.h>

/* What a complete walk found, for the caller to queue: the PY_STACK body
 * (NULL: no Python frames) and the GPU_CORR body that follows it, as
 * xpu-record writes the marker's (walk mode; walk+ leaves the records to
 * the marker). Both are the thread's buffers, valid until its next walk. */
typedef void (*xpu_walk_emit_fn)(const void *py_stack, size_t py_len, const void *corr,
				 size_t corr_len);

/* The launch walk with xpu-record's rules (walk_probe.c). 1: on, 0: not
 * asked, -1: asked but no table (the marker stays). Takes rules_fd's
 * mapping (not the fd); pid: the process's, for the records. */
int xpu_walk_probe__init(const char *marker_spec, int rules_fd, uint32_t pid,
			 xpu_walk_emit_fn emit);
/* At a marked call, with rsp and rbp as the callback was entered: true
 * when the marker must be called (a miss, or walk+). */
bool xpu_walk_probe__hit(uint64_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp);

#endif
