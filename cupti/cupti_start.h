/* SPDX-License-Identifier: MIT */
/*
 * The start of a recording in this process: at cuInit (launched under
 * xpu-record) or in the attach thread (xpu-record -p). Connects to the
 * recorder, reads its settings (the environment or the attach's
 * configuration: inject__cfg), subscribes to CUPTI and enables what was
 * asked for: the selected API callbacks, activity kinds, graph nodes,
 * NVTX, PC sampling.
 */
#ifndef XPU_CUPTI_START_H
#define XPU_CUPTI_START_H
#include <stdbool.h>

/* Returns 0 when recording; otherwise the library is off (and, at start,
 * finished). */
int inject__start(bool attach);
/* CUPTI 13.0.0 crashes inside its NVTX handlers: true for that version. */
bool inject__nvtx_broken(void);
#endif
