/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_WALK_PROBE_H
#define XPU_CUPTI_WALK_PROBE_H
#include <stdbool.h>
#include <stdint.h>

/* What a complete walk found, for the caller to send as a GPU_CORR record
 * (walk mode; walk+ leaves the records to the marker). */
typedef void (*xpu_walk_emit_fn)(uint64_t corr, uint32_t cbid, uint32_t domain,
				 const uint64_t *pcs, unsigned nr);

/* The launch walk with xpu-record's rules (walk_probe.c). 1: on, 0: not
 * asked, -1: asked but no table (the marker stays). Takes rules_fd's
 * mapping (not the fd). */
int xpu_walk_probe__init(const char *marker_spec, int rules_fd, xpu_walk_emit_fn emit);
/* At a marked call, with rsp and rbp as the callback was entered: true
 * when the marker must be called (a miss, or walk+). */
bool xpu_walk_probe__hit(uint64_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp);
/* The GPU_CORR record of a walk, as xpu-record would write the marker's:
 * pid, tid, the clock of bpf_ktime_get_ns, the frames (XPU_STACK_UNWOUND);
 * in the thread's buffer (valid until its next walk), its size in *len;
 * NULL when there is none. */
#define XPU_WALK_RECORD_MAX (64 + 8 * 512)
const void *xpu_walk_probe__record(size_t *len, uint32_t pid, uint64_t corr, uint32_t cbid,
				   uint32_t domain, const uint64_t *pcs, unsigned nr);

#endif
