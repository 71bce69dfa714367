/* SPDX-License-Identifier: MIT */
/*
 * Which words of a stack record's copy the report's CFI unwinding reads
 * (record/unwind/unwind_reads.c), for pruning the others (format/stack_prune.h).
 */
#ifndef XPU_RECORD_UNWIND_READS_H
#define XPU_RECORD_UNWIND_READS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/stack_prune.h"

struct unwind_reads;

struct unwind_reads_stats {
	uint64_t exact;		/* records whose reads are known */
	uint64_t frames;	/* their frames */
	uint64_t not_known;	/* records kept by the address rule alone */
	uint64_t files;		/* files whose rules were read */
	uint64_t files_failed;	/* files that could not be (gone, replaced, no ELF) */
	/* XPU_UNWIND_SIMPLE_CHECK=1: the known records walked again with
	 * simple rules (common/unwind_simple.h) */
	uint64_t simple_same;	/* the same frames */
	uint64_t simple_none;	/* a pc without a simple rule */
	uint64_t simple_differ;	/* other frames: a bug */
	uint64_t simple_frames;	/* frames of the simple_same ones */
};

struct unwind_reads *unwind_reads__new(void);
void unwind_reads__free(struct unwind_reads *u);
/* XPU_UNWIND_SIMPLE_CHECK=1 (record_opts): each known stack is walked again
 * with simple rules and compared (unwind_reads__stats) */
void unwind_reads__set_simple_check(struct unwind_reads *u, bool on);

/* The hook for xpu_prune__set_reads(): told the trace's records in the
 * order written (MMAP, COMM, FORK and EXIT make the processes' mapping
 * timelines), it gives, for a stack record, the stack words and registers
 * its unwinding reads, where that is known exactly, and then the frames it
 * gives (r->frames; set it to NULL to keep the words, as format 1.5 did). */
void unwind_reads__hook(struct unwind_reads *u, struct xpu_prune_reads *r);

void unwind_reads__stats(const struct unwind_reads *u, struct unwind_reads_stats *s);
/* -v: where adding the marker stacks' rules stopped (launch walk); with
 * XPU_UNWIND_SIMPLE_CHECK=1 also the launch stacks' share and where walks
 * met a pc without a simple rule. */
void unwind_reads__simple_debug(struct unwind_reads *u);
/* Add the rules of marker stacks to the processes' tables (launch_rules.c). */
struct launch_rules;
void unwind_reads__set_rules(struct unwind_reads *u, struct launch_rules *rules);
/* The CUPTI library whose marker's stacks those are (its real path). */
void unwind_reads__set_marker_lib(struct unwind_reads *u, const char *path);

#endif
