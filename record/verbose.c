// SPDX-License-Identifier: MIT
/* xpu-record -v's accounting (verbose.h). */
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include "common/log.h"
#include "format/stack_prune.h"
#include "format/writer.h"
#include "record/clock.h"
#include "record/kernel/bpf.h"
#include "record/unwind/launch_rules.h"
#include "record/unwind/unwind_reads.h"
#include "record/verbose.h"

void verbose__fin_start(struct fin_times *f)
{
	f->start_ns = f->step_ns = record__now_ns();
	f->len = 0;
	f->line[0] = 0;
}

void verbose__fin_done(struct fin_times *f, const char *done)
{
	uint64_t now = record__now_ns();

	if (f->len < sizeof(f->line))
		f->len += snprintf(f->line + f->len, sizeof(f->line) - f->len, "%s%s %.3f",
				   f->len ? ", " : "", done, (now - f->step_ns) / 1e9);
	f->step_ns = now;
}

void verbose__fin_detail(struct fin_times *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (f->len < sizeof(f->line))
		f->len += vsnprintf(f->line + f->len, sizeof(f->line) - f->len, fmt, ap);
	va_end(ap);
}

void verbose__unwind(struct unwind_reads *reads, struct xpu_prune *prune)
{
	struct unwind_reads_stats us;

	if (!reads)
		return;
	unwind_reads__stats(reads, &us);
	debug(1, "stack pruning: %llu records with the words their CFI unwinding reads known "
	      "(%.1f frames each), %llu of them written as those frames; %llu by the address "
	      "rule alone; rules of %llu files (%llu could not be read)",
	      (unsigned long long)us.exact, us.exact ? (double)us.frames / (double)us.exact : 0.0,
	      (unsigned long long)xpu_prune__unwound(prune), (unsigned long long)us.not_known,
	      (unsigned long long)us.files, (unsigned long long)us.files_failed);
	if (us.simple_same + us.simple_none + us.simple_differ)
		debug(1, "unwind check: of the %llu known, %llu walked to the same frames with "
		      "simple rules alone (%.1f frames each), %llu met a pc without one, %llu gave "
		      "other frames", (unsigned long long)us.exact,
		      (unsigned long long)us.simple_same,
		      us.simple_same ? (double)us.simple_frames / us.simple_same : 0.0,
		      (unsigned long long)us.simple_none, (unsigned long long)us.simple_differ);
	unwind_reads__simple_debug(reads);
}

void verbose__rules(struct launch_rules *rules)
{
	uint64_t tables, nr_rules, full;

	if (!rules)
		return;
	launch_rules__stats(rules, &tables, &nr_rules, &full);
	debug(1, "launch rules: %llu tables, %llu rules, %llu refused (a full neighbourhood)",
	      (unsigned long long)tables, (unsigned long long)nr_rules, (unsigned long long)full);
}

void verbose__process(struct record_bpf *b, double reader_cpu_s,
		      const struct xpu_writer_stats *st)
{
	struct rusage ru;

	if (!xpu_verbose)
		return;
	/* The rings are mapped twice (record_bpf__ring_bytes()). */
	if (!getrusage(RUSAGE_SELF, &ru))
		debug(1, "peak RSS %.1f MB, of which the ring buffers' %.1f MB (kernel memory "
		      "mapped twice); CPU time %.3f s, of which the reader thread's %.3f s",
		      ru.ru_maxrss / 1024.0, 2.0 * record_bpf__ring_bytes(b) / 1048576,
		      ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		      ru.ru_stime.tv_usec / 1e6, reader_cpu_s);
	debug(1, "writer: %llu chunks compressed in its thread; the reader waited for it "
	      "%llu times, %.3f s in all", (unsigned long long)st->bg_chunks,
	      (unsigned long long)st->bg_waits, st->bg_wait_ns / 1e9);
}
