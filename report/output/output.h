/* SPDX-License-Identifier: MIT */
/*
 * The outputs of xpu-report, as rows of one table (output.c), the way perf's
 * converters are struct perf_tools selected by an option. Each output is one
 * file that defines its struct report_output; xpu-report's options, --help
 * and the one-of-these check come from the table, and report__run() (report.c)
 * runs the passes a row says it needs before calling it. Adding an output is
 * one new file plus one row in report_outputs[].
 *
 * What an output may read: the profile (after pass 2), the joined GPU events
 * (subscribe in prepare(): gpu_join__subscribe), the header sections
 * (header.h), or the records themselves (its own reader pass).
 */
#ifndef XPU_REPORT_OUTPUT_H
#define XPU_REPORT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "report/util/filter.h"
#include "report/util/profile.h"
#include "report/util/session.h"

struct report_output;

/* What the command line asked for; shared by every output. */
struct report_opts {
	const char *input;		/* the trace (the first, when several are merged) */
	const char **inputs;		/* -i ...: the traces to merge (NULL: input alone) */
	size_t nr_inputs;
	const struct report_output *output;
	enum profile_view view;
	bool no_comm;			/* folded: no command-name root frame */
	bool no_kernel;			/* leave kernel frames out */
	bool idle_from_start;		/* --gpu-idle: from the first CPU event */
	bool no_nvtx;			/* no [nvtx] frames in stacks */
	bool no_inline;			/* no frames for inlined functions */
	bool no_srcline;		/* no file:line (table, TUI, annotate) */
	const char *symfs;
	struct filter filter;		/* handed to the session by report__run() */
};

/* The passes an output needs before its run(). */
enum output_needs {
	/* pass 1 only (statistics, metadata); the output reads the records
	 * itself (--dump). A trace with no record at all is an error. */
	OUTPUT_NEEDS_RECORDS,
	/* pass 1, plus pass 2 when the trace holds GPU work, so the join's
	 * counts are known (--header). */
	OUTPUT_NEEDS_HEADER,
	/* both passes: the profile and the joined GPU events. A profile
	 * empty in the chosen view is an error (exit 10). */
	OUTPUT_NEEDS_PROFILE,
};

struct report_output {
	const char *name;		/* "folded": selected by --folded */
	const char *help;		/* --help text after the option ("\n" + indent to continue) */
	enum output_needs needs;
	/* It shows source lines (file:line): the session looks them up. Else
	 * they are skipped as with --no-srcline (reading DWARF line tables is
	 * most of what they cost). */
	bool lines;
	/* NULL when the output can run; else why not, one line (built without
	 * ncurses, ...). May be NULL. */
	const char *(*unavailable)(void);
	/* Before pass 1: register session tools, subscribe to the joined GPU
	 * events. 0 or -errno. May be NULL. */
	int (*prepare)(struct session *s, const struct report_opts *o);
	/* The output, after the passes it needs. 0 or -errno (write errors). */
	int (*run)(struct session *s, const struct report_opts *o, FILE *fp);
};

/* The table, NULL-terminated, in --help order. */
extern const struct report_output *const report_outputs[];
/* The row named name, or NULL. */
const struct report_output *report_output__find(const char *name);

/* Runs out over o->input (or the nr_inputs traces of o->inputs, merged) the
 * way xpu-report does: opens the trace (or dies with its one-line error;
 * traces that cannot be merged: XPU_EXIT_MERGE), installs the file finders, moves o->filter into
 * the session, attaches the GPU join and, for stack outputs, the NVTX frames
 * (unless o->no_nvtx), out->prepare(), the passes out needs,
 * out->run() into fp, the warnings. Returns the exit code (XPU_EXIT_OK, or
 * XPU_EXIT_CORRUPT when the trace was damaged); other failures die. */
int report__run(const struct report_output *out, struct report_opts *o, FILE *fp);

/* -i arguments: files as given, a directory as the *.data files in it,
 * sorted by name. Dies (XPU_EXIT_INPUT) for a directory without any.
 * Sets o->inputs, o->nr_inputs and o->input (report/inputs.c). */
void report__set_inputs(struct report_opts *o, char **args, size_t n);

/* The rows (one file each). */
extern const struct report_output output_tui, output_folded, output_stdio, output_dump,
	output_header, output_svg, output_pprof, output_speedscope;

/* ---- helpers of the outputs, also used by tests and the TUI ------------------ */

struct folded_opts {
	enum profile_view view;
	bool comm;		/* first frame is the command name */
};

/* flamegraph.pl input: "comm;root;...;leaf COUNT" lines, sorted. Counts are
 * weights rounded to the nearest integer; lines rounding to 0 are left out. */
int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o);

/* A flame graph of the view as a standalone SVG document (output/svg.c). */
int output__svg(const struct profile *p, FILE *fp, enum profile_view view, const char *title);

/* The profile of the view as gzip'd pprof profile.proto (output/pprof.c);
 * -ENOTSUP when built without libprotobuf-c. */
int output__pprof(const struct session *s, FILE *fp, enum profile_view view);

/* The profile of the view in speedscope's JSON format (output/speedscope.c). */
int output__speedscope(const struct session *s, FILE *fp, enum profile_view view);

/* One folded frame as text: ';' -> ':', newlines -> ' ', "_[k]" suffix on
 * kernel frames. Returns the length written (truncated to size-1). */
size_t folded__frame(const struct frame *f, char *buf, size_t size);

/* perf report --stdio --children style table. */
int output__stdio(const struct session *s, FILE *fp, enum profile_view view);

/* Every record, one line each. */
int output__dump(struct session *s, FILE *fp);

#endif
