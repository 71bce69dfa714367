/* SPDX-License-Identifier: MIT */
/*
 * Unwinding a chunk's stacks on several threads before pass 2 reads the
 * chunk's records in order. Unwinding is a third of a DWARF report's time
 * (a GPT-2 recording: 0.2-0.4 s of 0.8-1.2 s) and each stack is unwound
 * alone: when pass 2 meets the first record of a chunk, it hands every
 * stack record of the chunk (SAMPLE, OFFCPU, GPU_CORR with registers) to
 * the workers and takes part itself; then, record by record as before,
 * callchain__resolve() takes the frames found here instead of unwinding.
 *
 * Only the fast path runs on the workers (unwind_worker__stack(): each
 * worker its own pcs per process, a lock for the machine's lookups, each
 * file's rules locked while compiled and never moved after). A stack it
 * leaves (libdwfl's, no registers) is unwound in order as before, so the
 * frames, and every output, are the same bytes with any number of threads.
 *
 * Off with one thread (XPU_UNWIND_THREADS=1, or fewer than 4 CPUs), with
 * several inputs (their records are rewritten before use) and with
 * XPU_UNWIND_CHECK. Threads: XPU_UNWIND_THREADS (at most 4), else 2.
 */
#ifndef XPU_REPORT_UNWIND_AHEAD_H
#define XPU_REPORT_UNWIND_AHEAD_H

#include <stddef.h>
#include <stdint.h>
#include "report/machine/machine.h"
#include "report/unwind/unwind.h"

struct unwind_ahead;

/* NULL when it would not help: one thread, or XPU_UNWIND_CHECK. Frames of
 * at most max per stack (callchain__resolve()'s bound). */
struct unwind_ahead *unwind_ahead__new(struct machine *m, int max);
void unwind_ahead__free(struct unwind_ahead *ua);

/* Unwinds the stacks of the records in [buf, buf + len) (a chunk's, as
 * xpu_reader__chunk_rest() gives them) and forgets the previous chunk's. */
void unwind_ahead__chunk(struct unwind_ahead *ua, const void *buf, size_t len);

/* The frames unwound here for the stack whose registers are at regs, of
 * pid at time: their number, or -1 when it was not (then unwind__stack()). */
int unwind_ahead__get(struct unwind_ahead *ua, const uint64_t *regs, uint32_t pid,
		      uint64_t time, struct unwind_frame *frames, int max);

/* Threads used (1: none besides the caller). */
int unwind_ahead__threads(const struct unwind_ahead *ua);

#endif
