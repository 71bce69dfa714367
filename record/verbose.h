/* SPDX-License-Identifier: MIT */
/*
 * xpu-record -v's accounting (verbose.c): the time of each step of the end
 * of the recording, and at the end what the stack pruning, the launch
 * rules, the writer and the recorder itself cost.
 */
#ifndef XPU_RECORD_VERBOSE_H
#define XPU_RECORD_VERBOSE_H

#include <stddef.h>
#include <stdint.h>

struct launch_rules;
struct record_bpf;
struct unwind_reads;
struct xpu_prune;
struct xpu_writer_stats;

/* The end of the recording, step by step (Documentation/xpu-record.md,
 * "How it works"): so a slow end says which step it was. */
struct fin_times {
	uint64_t start_ns, step_ns;
	char line[400];
	size_t len;
};

void verbose__fin_start(struct fin_times *f);
/* The step DONE just ended: its time since the previous one. */
void verbose__fin_done(struct fin_times *f, const char *done);
/* More about the step just ended, appended to its time. */
void verbose__fin_detail(struct fin_times *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -v lines: what the stack pruning and the unwind check did (reads and
 * prune may be NULL), the launch rule tables (rules may be NULL). */
void verbose__unwind(struct unwind_reads *reads, struct xpu_prune *prune);
void verbose__rules(struct launch_rules *rules);
/* -v lines: peak RSS and CPU time (the reader thread's reader_cpu_s), the
 * writer's background compression. */
void verbose__process(struct record_bpf *b, double reader_cpu_s,
		      const struct xpu_writer_stats *st);

#endif
