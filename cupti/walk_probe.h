/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_WALK_PROBE_H
#define XPU_CUPTI_WALK_PROBE_H
#include <stdbool.h>
#include <stdint.h>

/* A benchmark probe (walk_probe.c): the launch walk with xpu-record's rules.
 * 1: on, 0: not asked, -1: asked but no table (the marker stays). Takes
 * rules_fd's mapping (not the fd). */
int xpu_walk_probe__init(const char *marker_spec, int rules_fd);
/* At a marked call, with rsp and rbp as the callback was entered: true
 * when the marker must be called (a miss, or unw+/walk+). */
bool xpu_walk_probe__hit(uint64_t corr, uint64_t sp, uint64_t bp);

#endif
