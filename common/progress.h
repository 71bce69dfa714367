/* SPDX-License-Identifier: MIT */
/*
 * A progress line on stderr for work that takes more than a second, as perf
 * prints "processing time ordered events...": only when stderr is a
 * terminal, redrawn in place at most five times a second, erased when the
 * work ends, so logs and pipes never see it. XPU_PROGRESS_DELAY_MS changes
 * the one-second delay (tests use 0); XPU_NO_PROGRESS=1 turns it off.
 */
#ifndef XPU_COMMON_PROGRESS_H
#define XPU_COMMON_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	uint64_t start_ns, next_ns;	/* CLOCK_MONOTONIC: started, next redraw */
	uint32_t calls;			/* progress__update() calls since the last clock read */
	bool tty;			/* stderr is a terminal and progress is on */
	bool shown;			/* a line is on the screen */
};

void progress__start(struct progress *p);
/* what: "pass 2: resolving stacks"; frac: 0..1, or < 0 when unknown
 * (then count, the items done so far, is shown). Cheap: reads the clock
 * once every 1024 calls. */
void progress__update(struct progress *p, const char *what, double frac, uint64_t count);
/* Shows what now, replacing the line (a step of a sequence whose steps
 * may each be slow: "writing kernel symbols", "archiving file 3 of 40"):
 * no delay, since the step that will be slow cannot be known before it
 * runs; a fast sequence flashes by and is erased. */
void progress__step(struct progress *p, const char *what);
/* Erases the line if one was shown. */
void progress__end(struct progress *p);

#endif
