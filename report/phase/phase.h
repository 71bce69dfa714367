/* SPDX-License-Identifier: MIT */
/*
 * Where a report's time goes (-v): wall time per phase, measured only when
 * asked (phase__on, set by xpu-report -v: two clock reads per measured
 * call, ~50 ns, so never in a normal run) and printed as one table at the
 * end. Phases nest: unwinding, symbolizing and the symbol tables happen
 * inside pass 2, so the table says which are parts of which. At the end of
 * each top-level phase it also notes the process's resident memory
 * (/proc/self/status: anonymous, file-backed, peak), printed after the
 * times: what a phase left resident and where the peak was reached.
 */
#ifndef XPU_REPORT_PHASE_H
#define XPU_REPORT_PHASE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum phase {
	PHASE_OPEN,		/* map the trace, read its header */
	PHASE_PASS1,		/* metadata, mappings, threads, GPU records */
	PHASE_PASS2,		/* samples -> stacks -> profile */
	PHASE_READ,		/*   in pass 2: waiting for decoded chunks */
	PHASE_UNWIND,		/*   in pass 2: DWARF unwinding of stack copies */
	PHASE_SYMBOLIZE,	/*   in pass 2: a pc's first lookup (symbol, inline chain, line) */
	PHASE_SYMTAB,		/*     in symbolize: loading a file's symbol table */
	PHASE_SRCLINE,		/*     in symbolize: DWARF inline chains and lines */
	PHASE_FINISH,		/* after pass 2: the GPU join and the analyses */
	PHASE_OUTPUT,		/* the output itself (folded, table, ...) */
	PHASE_NR
};

struct phase_stats {
	uint64_t ns[PHASE_NR];
	uint64_t calls[PHASE_NR];
	/* at the end of a top-level phase, kB; 0: not read */
	uint64_t rss_anon[PHASE_NR], rss_file[PHASE_NR], rss_peak[PHASE_NR];
};

extern bool phase__on;
extern struct phase_stats phase__stats;

static inline uint64_t phase__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* t0 = phase__begin(); ...; phase__end(PHASE_X, t0); */
static inline uint64_t phase__begin(void)
{
	return phase__on ? phase__now() : 0;
}

/* resident memory now, into phase__stats' row for p */
void phase__note_memory(enum phase p);

static inline void phase__end(enum phase p, uint64_t t0)
{
	if (phase__on) {
		phase__stats.ns[p] += phase__now() - t0;
		phase__stats.calls[p]++;
		if (p == PHASE_OPEN || p == PHASE_PASS1 || p == PHASE_PASS2 ||
		    p == PHASE_FINISH || p == PHASE_OUTPUT)
			phase__note_memory(p);
	}
}

/* The table, to fp: each phase's time, share of the total, calls; per
 * sample costs with samples > 0; then the memory noted at each top-level
 * phase's end. */
void phase__print(FILE *fp, uint64_t total_ns, uint64_t samples);

#endif
