/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_UNW_PROBE_H
#define XPU_CUPTI_UNW_PROBE_H
#include <stdbool.h>
#include <stdint.h>

/* A benchmark probe (unw_probe.c): what an in-process unwinder costs per launch. */
int xpu_unw_probe__init(const char *marker_spec);	/* 1: on, 0: not asked, -1: failed */
bool xpu_unw_probe__hit(uint64_t corr);			/* true: call the marker too */

#endif
