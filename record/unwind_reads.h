/* SPDX-License-Identifier: MIT */
/*
 * Which words of a stack record's copy the report's CFI unwinding reads
 * (record/unwind_reads.c), for pruning the others (format/stack_prune.h).
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
};

struct unwind_reads *unwind_reads__new(void);
void unwind_reads__free(struct unwind_reads *u);

/* A record of the trace, in the order written: MMAP, COMM (exec) and FORK
 * ones make the processes' mapping timelines; a process's EXIT frees its
 * cached lookups. */
void unwind_reads__note(struct unwind_reads *u, uint16_t type, const void *body, size_t len);

/* read[i] = 1 for each word i of stack (size bytes, from regs' stack
 * pointer) and bit r of *reg_read for each register that unwinding this
 * record reads; false when not known exactly. read has size / 8 zeroed
 * bytes, *reg_read is 0. */
bool unwind_reads__reads(struct unwind_reads *u, uint32_t pid, uint64_t time,
			 const uint64_t *regs, unsigned nr_regs, const uint8_t *stack,
			 uint64_t size, uint8_t *read, uint32_t *reg_read);

/* The hook for xpu_prune__set_reads(). */
void unwind_reads__hook(struct unwind_reads *u, struct xpu_prune_reads *r);

void unwind_reads__stats(const struct unwind_reads *u, struct unwind_reads_stats *s);

#endif
