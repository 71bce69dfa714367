/* SPDX-License-Identifier: MIT */
/*
 * The outputs of xpu-report, as rows of one table (report/outputs.c), the way perf's
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
#include "report/gpu/gpu_memory_tool.h"
#include "report/profile/diff.h"
#include "report/profile/filter.h"
#include "report/profile/profile.h"
#include "report/session/session.h"

struct report_output;

/* --sort keys (perf report's names; the GPU ones make --stdio a table of
 * GPU work, output/stdio_gpu.c). */
enum sort_key { SORT_COMM, SORT_PID, SORT_DSO, SORT_SYM, SORT_DEVICE, SORT_STREAM, SORT_KERNEL,
		SORT_NR_KEYS };

/* -g: call chains under each --stdio row. */
enum callgraph_mode { CALLGRAPH_NONE, CALLGRAPH_CALLER, CALLGRAPH_CALLEE };
enum svg_by { SVG_BY_NONE, SVG_BY_PROCESS, SVG_BY_THREAD };	/* --svg-by */

/* perf report's table options (--stdio; output/stdio.c). */
struct table_opts {
	enum sort_key sort[SORT_NR_KEYS];	/* in the order given */
	size_t nr_sort;				/* 0: comm,dso,sym */
	bool no_children;			/* --no-children: self only */
	double percent_limit;			/* --percent-limit: rows under it hidden */
	enum callgraph_mode callgraph;		/* -g */
	double callgraph_min;			/* -g MODE,PCT: branches under it hidden */
	char **symbols, **dsos;			/* --symbols, --dsos: rows kept */
	size_t nr_symbols, nr_dsos;
};

/* --sort KEY[,KEY...] into t; -EINVAL on an unknown or repeated key, or CPU
 * and GPU keys mixed (comm and pid go with either). */
int table_opts__parse_sort(struct table_opts *t, const char *arg);
/* -g [caller|callee|none][,PCT]; -EINVAL when malformed. */
int table_opts__parse_callgraph(struct table_opts *t, const char *arg);
/* Whether the keys ask for the GPU table. */
bool table_opts__gpu(const struct table_opts *t);

/* What the command line asked for; shared by every output. */
struct report_opts {
	const char *input;		/* the trace (the first, when several are merged) */
	const char **inputs;		/* -i ...: the traces to merge (NULL: input alone) */
	bool *inputs_optional;		/* ... each: found in a directory (a bad one is
					 * left out: session__open_many_or_die) */
	size_t nr_inputs;
	const struct report_output *output;
	const char *output_file;	/* FILE of an output that takes one; "-" or
					 * NULL: the fp report__run() is given */
	const char *output_arg;		/* the argument of an output with arg (--annotate KERNEL) */
	enum profile_view view;
	bool no_comm;			/* folded: no command-name root frame */
	bool no_kernel;			/* leave kernel frames out */
	bool idle_from_start;		/* --gpu-idle: from the first CPU event */
	bool no_nvtx;			/* no [nvtx] frames in stacks */
	bool no_autograd;		/* backward launches keep their own stacks */
	bool no_pc_sampling;		/* kernels not split by their PC samples */
	const char *cubins_dir;		/* --cubins DIR: *.cubin files for PC sample lines */
	bool no_inline;			/* no frames for inlined functions */
	bool input_frame;		/* merged inputs: a [HOST rank R] root frame */
	int svg_by;			/* --svg-by: enum svg_by */
	bool no_py_lines;		/* Python frames without their line */
	int graph_attr;			/* --graph-attribution: enum gpu_graph_attr (0: both) */
	bool no_srcline;		/* no file:line (table, TUI, annotate) */
	bool unknown_addrs;		/* an unsymbolized address is a frame: "mod+0xOFF" */
	const char *symfs;
	unsigned max_stack;		/* --max-stack: leaf-most frames kept; 0: all */
	struct table_opts table;	/* --sort, --children, -g, ... */
	struct gpu_memory_opts gpu_mem;	/* --gpu-memory[=MODE], --time T */
	struct filter filter;		/* handed to the session by report__run() */
	/* --diff OLD NEW (report__diff): compare two traces */
	const char *diff_old, *diff_new;
	enum diff_norm diff_norm;	/* --diff-norm=total (default), none, FRAME */
	const char *diff_norm_frame;
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
	/* It writes a file: --NAME FILE, "-" for standard output. report__run()
	 * opens FILE (a temporary name, renamed once complete: a failed report
	 * leaves no partial file) and hands run() its fp. */
	bool takes_file;
	/* It takes an argument that is not a file: its name in --help
	 * ("KERNEL"), the value in report_opts.output_arg. NULL: none. */
	const char *arg;
	/* It shows source lines (file:line): the session looks them up. Else
	 * they are skipped as with --no-srcline (reading DWARF line tables is
	 * most of what they cost). */
	bool lines;
	/* It keeps addresses (pprof: a server may symbolize them later): an
	 * unsymbolized address stays a frame of its own, as with
	 * --unknown-addresses, instead of one [module] frame. */
	bool addresses;
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
 * the session, opens o->output_file for an output that takes a file (else
 * writes to fp), attaches the GPU join and, for stack outputs, the NVTX
 * frames (unless o->no_nvtx), out->prepare(), the passes out needs,
 * out->run() into the file, the warnings. Returns the exit code (XPU_EXIT_OK, or
 * XPU_EXIT_CORRUPT when the trace was damaged); other failures die. */
int report__run(const struct report_output *out, struct report_opts *o, FILE *fp);

/* xpu-report --diff: o->diff_old and o->diff_new through the same passes
 * as report__run() (both sessions open at once), then o->output over the
 * two (output__diff): --stdio (the default), --folded or --svg; filters
 * apply to both. Returns the exit code; failures die. */
int report__diff(struct report_opts *o, FILE *fp);

/* -i arguments: files as given, a directory as the *.data files in it,
 * sorted by name. Dies (XPU_EXIT_INPUT) for a directory without any.
 * Sets o->inputs, o->inputs_optional, o->nr_inputs and o->input
 * (report/inputs.c). */
void report__set_inputs(struct report_opts *o, char **args, size_t n);

/* The rows (one file each). */
extern const struct report_output output_tui, output_folded, output_stdio, output_dump, output_annotate,
	output_header, output_svg, output_pprof, output_speedscope, output_timeline;

/* ---- helpers of the outputs, also used by tests and the TUI ------------------ */

struct folded_opts {
	enum profile_view view;
	bool comm;		/* first frame is the command name */
	double scale;		/* weights multiplied by it before the counts; 0: 1 */
};

/* count[i]: weight[i] rounded down or up, the counts summing to the total
 * weight rounded (the largest remainders get the ones left, ties the
 * earlier); weights <= 0 count 0 (output/apportion.c). */
void output__apportion(const double *weight, int64_t *count, size_t n);

/* flamegraph.pl input: "comm;root;...;leaf COUNT" lines, sorted. Counts are
 * the weights (x scale) as integers, each rounded down or up so that they
 * sum to the total rounded (largest remainders); lines at 0 are left out. */
int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o);

/* An interactive flame graph of the view as a standalone SVG document
 * (output/svg.c); freq, the recording's, turns weights into times. */
/* The same with a root frame per process or thread (roots: pid or tid ->
 * frame id + 1; NULL: none). */
int output__svg_by(const struct profile *p, FILE *fp, enum profile_view view, const char *title,
		   double freq, const struct u64map *roots, bool by_tid);
int output__svg(const struct profile *p, FILE *fp, enum profile_view view, const char *title,
		double freq);

/* What output__svg_graph() draws: a call tree in preorder (a node's
 * children follow it), weights in samples. */
struct svg_graph {
	size_t nr;
	const struct frame *const *frame;
	const uint32_t *parent;		/* UINT32_MAX: a root (drawn on "all") */
	const uint16_t *depth;		/* 0 for roots */
	const double *total_w;		/* box widths */
	const double *old_w;		/* a differential graph: the baseline's weight
					 * per node, normalised; NULL: colours by kind */
	double total;			/* the "all" box */
	double freq;			/* samples per second, for the tooltips' times */
	bool bytes;			/* weights are bytes (--gpu-memory): the tooltips
					 * say bytes, not samples and times */
	const char *title, *subtitle;
};
int output__svg_graph(FILE *fp, const struct svg_graph *g);

/* The colour families of the flame graph (output/svg.c). */
enum svg_family { SVG_CPU, SVG_PYTHON, SVG_KERNEL, SVG_CUDA_API, SVG_GPU, SVG_MARKER };
enum svg_family svg__family(const struct frame *f);
bool svg__is_python(const struct frame *f);
/* "rgb(r,g,b)": the frame's family, the shade a hash of its name. */
void svg__color(const struct frame *f, char *buf, size_t size);
/* What the weights of the view mean, for the subtitle. */
void svg__subtitle(char *buf, size_t size, enum profile_view view, double freq, double total);

/* The profile of the view as gzip'd pprof profile.proto (output/pprof.c);
 * -ENOTSUP when built without libprotobuf-c. */
int output__pprof(struct session *s, FILE *fp, enum profile_view view);

/* The profile of the view in speedscope's JSON format (output/speedscope.c). */
int output__speedscope(struct session *s, FILE *fp, enum profile_view view);

/* One folded frame as text: ';' -> ':', newlines -> ' ', "_[k]" suffix on
 * kernel frames. Returns the length written (truncated to size-1). */
size_t folded__frame(const struct frame *f, char *buf, size_t size);

/* --diff (output/diff.c): the table, the difffolded lines, the differential
 * flame graph of d; output__diff() builds d from two sessions' profiles
 * (o->view, o->diff_norm) and writes the one o->output names. */
int output__diff_table(const struct diff *d, FILE *fp, const char *old_name,
		       const char *new_name, bool children);
int output__diff_folded(const struct diff *d, const struct profile *old,
			const struct profile *new, FILE *fp, bool comm);
int output__diff_svg(const struct diff *d, FILE *fp, const char *old_name, const char *new_name,
		     double freq);
int output__diff(const struct session *old, const struct session *new,
		 const struct report_opts *o, FILE *fp);

/* perf report --stdio --children style table (t NULL: the defaults). */
int output__stdio(const struct session *s, FILE *fp, enum profile_view view,
		  const struct table_opts *t);
/* Call chains of one row's frame under it (-g; output/stdio_callgraph.c). */
int stdio__callgraph(const struct profile *p, FILE *fp, enum profile_view view, uint32_t frame,
		     uint32_t comm, double total, const struct table_opts *t);
/* The GPU table of --sort device,stream,kernel (output/stdio_gpu.c): needs
 * stdio_gpu__prepare() before the passes. */
int stdio_gpu__prepare(struct session *s, const struct table_opts *t);
int stdio_gpu__print(const struct session *s, FILE *fp, const struct table_opts *t);
/* The table's [module] rows of unsymbolized code (output/stdio_unknown.c):
 * per frame id, the sampled (leaf) addresses it holds. */
struct stdio_unknown {
	uint32_t nr_addrs;
	uint64_t hot;			/* the heaviest address (as --unknown-addresses names it) */
	double hot_weight, weight;
};
bool stdio_unknown__is(const struct frame *f);
/* NULL when no [module] frame has a sampled address; else free() it. */
struct stdio_unknown *stdio_unknown__new(const struct profile *p);
/* "230 addrs, hottest zstd+0x4a1c0" into buf, or "" (u may be NULL). */
void stdio_unknown__cell(const struct stdio_unknown *u, const struct profile *p, uint32_t frame,
			 char *buf, size_t size);
/* One "# [zstd]: ..." line under the table: --unknown-addresses and the
 * debug package to install. */
void stdio_unknown__note(const struct stdio_unknown *u, const struct session *s, FILE *fp,
			 uint32_t frame, double self_pct);

/* Every record, one line each. */
int output__dump(struct session *s, FILE *fp);

#endif
