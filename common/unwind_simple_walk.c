// SPDX-License-Identifier: MIT
/* unwind_cfi.c's frame step for simple rules (see unwind_simple.h); the
 * body is common/unwind_simple_walk.h's, shared with callers that inline it. */
#include <stddef.h>
#include "common/unwind_simple_walk.h"

int unwind_simple__frames(const struct unwind_simple_regs *regs, unwind_simple_rule_fn rule,
			  unwind_simple_read_fn read, void *arg, struct unwind_frame *frames,
			  int max)
{
	return unwind_simple__walk(regs, rule, read, arg, frames, max, NULL);
}
