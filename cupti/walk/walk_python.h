/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_WALK_PYTHON_H
#define XPU_CUPTI_WALK_PYTHON_H
#include <stdbool.h>
#include <stdint.h>
#include "format/xpu_format.h"
#include "cupti/channel/wire.h"

/* The interpreter walk in the launching thread (walk_python.c). */
bool xpu_walk_python__init(void);
/* The thread's Python frames, innermost first, into out
 * (XPU_WALK_PY_FRAMES), as the BPF walk gives them: their number (0: none
 * or not a Python thread), XPU_PY_STACK_* in *flags. */
unsigned xpu_walk_python(const struct xpu_walk_py *lay, struct xpu_py_frame *out,
			 uint32_t *flags);
/* bpf/xpu_events.h's xpu_py_code_key(), the same function (a unit test
 * compares them). */
static inline uint16_t xpu_walk_python__key(uint64_t qualname, uint64_t filename,
					    int32_t firstlineno)
{
	uint64_t h = (qualname ^ (filename << 1) ^ (uint32_t)firstlineno) * 0x9e3779b97f4a7c15ULL;

	return (uint16_t)(h >> 48);
}

#endif
