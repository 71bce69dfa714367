/* SPDX-License-Identifier: MIT */
/*
 * DWARF unwinding of copied user stacks with elfutils libdw, as perf's
 * util/unwind-libdw.c does: the fast path (unwind_cfi.h) steps over CFI
 * rules read once per file and shared by every process; where it gives up,
 * libdwfl unwinds the sample with one Dwfl per process, built on that first
 * need, kept across samples and re-reported only when the set of mappings
 * valid at the sample's time changes (dlopen, exec). Memory reads come from
 * the sample's stack copy, or from the mapped ELF file for addresses inside
 * a module.
 */
#ifndef XPU_REPORT_UNWIND_H
#define XPU_REPORT_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include "format/reader.h"
#include "common/unwind_cfi.h"
#include "report/machine/machine.h"

struct unwind_stats {
	uint64_t stacks;	/* unwinds attempted */
	uint64_t dwfl_rebuilds;	/* per-process Dwfl (re)built */
	uint64_t dwfl_grows;	/* new mappings added to a Dwfl without a rebuild */
	uint64_t failed;	/* unwinds that produced only the first frame */
	uint64_t slow;		/* unwound by libdwfl: the fast path gave up */
	uint64_t checked;	/* XPU_UNWIND_CHECK: both paths agreed */
	uint64_t files;		/* files whose CFI the fast path read */
};

/*
 * Unwinds the user stack of a sample of pid/tid at time. maps_sig identifies
 * the set of mappings valid at that time (see unwind__maps_sig()); when it
 * changes the process's Dwfl is rebuilt. Fills up to max frames, innermost
 * first, and returns their number (0 when the view has no registers).
 */
int unwind__stack(struct machine *m, struct proc *proc, uint32_t tid, uint64_t time,
		  uint64_t maps_sig, const struct xpu_stack_view *v,
		  struct unwind_frame *frames, int max);

/* A hash of the mappings of pid valid at time. */
uint64_t unwind__maps_sig(struct machine *m, uint32_t pid, uint64_t time);

/*
 * The fast path on a thread of its own (report/unwind/unwind_ahead.h): a
 * worker keeps its own pcs per process and takes lock (one per machine)
 * around what it shares with the others: shared to find a pc's file where
 * it is loaded and its rules made, alone to load it, make them or read
 * outside the stack copy. Each file's rules lock themselves. Only
 * workers may run at once: the thread calling unwind__stack() waits.
 */
struct unwind_worker;
struct unwind_worker *unwind_worker__new(struct machine *m, pthread_rwlock_t *lock);
void unwind_worker__free(struct unwind_worker *w);

/* The frames unwind__stack() would give, when the fast path alone gives
 * them (at least one frame, no libdwfl); -1: leave the stack to
 * unwind__stack(). */
int unwind_worker__stack(struct unwind_worker *w, struct proc *proc, uint64_t time,
			 uint64_t maps_sig, const struct xpu_stack_view *v,
			 struct unwind_frame *frames, int max);

/* Counts, in proc's statistics, a stack a worker unwound to nr frames. */
void unwind__count(struct proc *proc, int nr);

/* Whether XPU_UNWIND_CHECK asks for both unwinders on every stack. */
bool unwind__checking(void);

/* Frees the per-process state (call for each proc before machine__exit). */
void unwind__proc_exit(struct proc *proc);
/* Frees the per-file state (after every unwind__proc_exit()). */
void unwind__machine_exit(struct machine *m);

/* The counts of every process of m, summed. */
void unwind__stats(const struct machine *m, struct unwind_stats *sum);

#endif
