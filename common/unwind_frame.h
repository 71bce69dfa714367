/* SPDX-License-Identifier: MIT */
/*
 * What every unwinder here gives (report/unwind/unwind.c through libdwfl,
 * common/unwind_cfi.c, common/unwind_simple_walk.c), and the one rule they share
 * for when to stop. No library needed: libxpu-cupti.so includes it too.
 */
#ifndef XPU_COMMON_UNWIND_FRAME_H
#define XPU_COMMON_UNWIND_FRAME_H

#include <stdbool.h>
#include <stdint.h>

/* A frame an unwinder found. */
struct unwind_frame {
	uint64_t pc;
	bool activation;	/* false: a return address (look up pc - 1) */
};

#define UNWIND_SP_UNKNOWN (~0ull)

/*
 * Whether an unwinder is stuck before appending the frame (pc, sp) to
 * frames[0..nr): the same pc at the same stack pointer as the frame before
 * (the step changed nothing). A recursive function's frames repeat their
 * pc at higher stack pointers and go on. When sp is not known: the same pc
 * three times. *prev_sp holds the last frame's sp; both unwinders (unwind.c
 * through libdwfl, unwind_cfi.c) use this one rule, so they agree.
 */
static inline bool unwind__stuck(const struct unwind_frame *frames, int nr, uint64_t pc,
				 uint64_t *prev_sp, uint64_t sp)
{
	bool stuck;

	if (sp != UNWIND_SP_UNKNOWN && *prev_sp != UNWIND_SP_UNKNOWN)
		stuck = nr >= 1 && pc == frames[nr - 1].pc && sp <= *prev_sp;
	else
		stuck = nr >= 2 && pc == frames[nr - 1].pc && pc == frames[nr - 2].pc;
	*prev_sp = sp;
	return stuck;
}

#endif
