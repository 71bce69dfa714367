// SPDX-License-Identifier: MIT
/*
 * xpu-report: reads an xpu.data trace and prints one of the outputs of the
 * table in outputs.c (folded stacks, a perf-style table, the TUI, the raw
 * records, the header). This file only parses options; report__run() does
 * the rest. See Documentation/xpu-report.md.
 */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/knobs.h"
#include "common/log.h"
#include "common/opt_table.h"
#include "common/xalloc.h"
#include "report/output/output.h"
#include "report/gpu/gpu_graph.h"

/* What the command line builds: the options, and the -i inputs until the
 * end, when report__set_inputs() takes them. */
struct report_cmdline {
	struct report_opts o;
	char **inputs;
	size_t nr_inputs;
};

#define RC struct report_cmdline
#define CL(v) ((struct report_cmdline *)(v))
_Static_assert(sizeof(enum profile_view) == sizeof(int), "OPT_INT sets --cpu-only's view");

static void report__opt_input(void *v, const struct opt_row *row, const char *arg,
			      struct opt_ctx *ctx)
{
	struct report_cmdline *cl = v;

	(void)row, (void)ctx;
	cl->inputs = xrealloc(cl->inputs, (cl->nr_inputs + 1) * sizeof(*cl->inputs));
	cl->inputs[cl->nr_inputs++] = (char *)arg;
}

/* --folded, --svg FILE, ...: row->data is the output. */
static void report__output_list(char *buf, size_t size, const char *sep);

static void report__opt_output(void *v, const struct opt_row *row, const char *arg,
			       struct opt_ctx *ctx)
{
	const struct report_output *out = row->data;
	const char *why = out->unavailable ? out->unavailable() : NULL;
	struct report_opts *o = &CL(v)->o;
	char list[256];

	(void)ctx;
	if (o->output && o->output != out) {
		report__output_list(list, sizeof(list), ", ");
		die(XPU_EXIT_USAGE, "give only one of %s", list);
	}
	if (why)
		die(XPU_EXIT_USAGE, "%s", why);
	/* "--svg --cpu-only" took the next option as FILE */
	if (out->takes_file && arg[0] == '-' && arg[1])
		die(XPU_EXIT_USAGE, "--%s %s: FILE looks like an option: give the file "
		    "to write (- for standard output; ./%s for a file of that name)",
		    out->name, arg, arg);
	o->output = out;
	o->output_file = out->takes_file ? arg : NULL;
	o->output_arg = out->arg ? arg : NULL;
}

/* --pid, --tid, --rank, --device: a list of numbers */
static void report__opt_ids(void *v, const struct opt_row *row, const char *arg,
			    struct opt_ctx *ctx)
{
	struct filter *f = &CL(v)->o.filter;
	const char *name = row->name;
	int err;

	(void)ctx;
	err = !strcmp(name, "pid") ? filter__parse_ids(&f->pids, &f->nr_pids, arg) :
	      !strcmp(name, "tid") ? filter__parse_ids(&f->tids, &f->nr_tids, arg) :
	      !strcmp(name, "rank") ? filter__parse_ids(&f->ranks, &f->nr_ranks, arg) :
	      filter__parse_ids(&f->devices, &f->nr_devices, arg);
	if (err)
		die(XPU_EXIT_USAGE, "bad --%s '%s': expected %s[,%s...]%s", name, arg, row->arg,
		    row->arg, !strcmp(name, "device") ? " (CUDA device ordinals)" : "");
}

static void report__opt_comm(void *v, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	if (filter__parse_comms(&CL(v)->o.filter, arg))
		die(XPU_EXIT_USAGE, "bad --comm '%s': expected NAME[,NAME...]", arg);
}

static void report__opt_time(void *v, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	struct gpu_memory_opts *gm = &CL(v)->o.gpu_mem;
	char *end;

	(void)row, (void)ctx;
	/* --gpu-memory --time T: one moment, the same seconds */
	if (!strchr(arg, ',') && arg[0]) {
		gm->at = strtod(arg, &end);
		if (*end || !(gm->at >= 0))
			die(XPU_EXIT_USAGE, "bad --time '%s': expected T (with --gpu-memory) or "
			    "START,END in seconds", arg);
		gm->at_given = true;
		return;
	}
	if (filter__parse_time(&CL(v)->o.filter, arg))
		die(XPU_EXIT_USAGE, "bad --time '%s': expected START,END in seconds "
		    "(either may be empty, END >= START)", arg);
}

/* --gpu-memory[=peak|alloc|leak]: the view of GPU memory in bytes */
static void report__opt_gpu_memory(void *v, const struct opt_row *row, const char *arg,
				   struct opt_ctx *ctx)
{
	struct report_opts *o = &CL(v)->o;
	int mode = arg ? gpu_mem_mode__parse(arg) : GPU_MEM_PEAK;

	(void)row, (void)ctx;
	if (mode < 0)
		die(XPU_EXIT_USAGE, "--gpu-memory=%s: use peak, alloc or leak", arg);
	o->view = VIEW_GPU_MEM;
	o->gpu_mem.mode = (enum gpu_mem_mode)mode;
	o->gpu_mem.mode_given = arg != NULL;
}

static void report__opt_svg_by(void *v, const struct opt_row *row, const char *arg,
			       struct opt_ctx *ctx)
{
	struct report_opts *o = &CL(v)->o;

	(void)row, (void)ctx;
	if (!strcmp(arg, "none"))
		o->svg_by = SVG_BY_NONE;
	else if (!strcmp(arg, "process"))
		o->svg_by = SVG_BY_PROCESS;
	else if (!strcmp(arg, "thread"))
		o->svg_by = SVG_BY_THREAD;
	else
		die(XPU_EXIT_USAGE, "--svg-by=%s: use none, process or thread", arg);
}

/* An option's directory argument; a usage error when it is not one. */
static const char *report__dir_arg(const char *opt, const char *arg)
{
	struct stat st;

	if (stat(arg, &st) || !S_ISDIR(st.st_mode))
		die(XPU_EXIT_USAGE, "--%s %s: not a directory", opt, arg);
	return arg;
}

static void report__opt_dir(void *v, const struct opt_row *row, const char *arg,
			    struct opt_ctx *ctx)
{
	struct report_opts *o = &CL(v)->o;

	(void)ctx;
	*(!strcmp(row->name, "symfs") ? &o->symfs : &o->cubins_dir) =
		report__dir_arg(row->name, arg);
}

static void report__opt_graph_attr(void *v, const struct opt_row *row, const char *arg,
				   struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	if ((CL(v)->o.graph_attr = gpu_graph_attr__parse(arg)) < 0)
		die(XPU_EXIT_USAGE, "bad --graph-attribution '%s': expected both, capture "
		    "or launch", arg);
}

static void report__opt_diff(void *v, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	CL(v)->o.diff_old = arg;
}

static void report__opt_diff_norm(void *v, const struct opt_row *row, const char *arg,
				  struct opt_ctx *ctx)
{
	struct report_opts *o = &CL(v)->o;

	(void)row, (void)ctx;
	if (!arg[0])
		die(XPU_EXIT_USAGE, "--diff-norm needs total, none or a frame name");
	o->diff_norm = !strcmp(arg, "total") ? DIFF_NORM_TOTAL :
		       !strcmp(arg, "none") ? DIFF_NORM_NONE : DIFF_NORM_FRAME;
	o->diff_norm_frame = arg;
}

static void report__opt_sort(void *v, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	if (table_opts__parse_sort(&CL(v)->o.table, arg))
		die(XPU_EXIT_USAGE, "bad --sort '%s': expected KEY[,KEY...] of comm, pid, "
		    "dso, sym, or for the GPU table comm, pid, device, stream, kernel", arg);
}

static void report__opt_percent_limit(void *v, const struct opt_row *row, const char *arg,
				      struct opt_ctx *ctx)
{
	struct table_opts *t = &CL(v)->o.table;
	char *end;

	(void)row, (void)ctx;
	t->percent_limit = strtod(arg, &end);
	if (end == arg || *end || !(t->percent_limit >= 0) || t->percent_limit > 100)
		die(XPU_EXIT_USAGE, "bad --percent-limit '%s': expected a percentage, 0 to 100",
		    arg);
}

static bool report__is_callgraph(const char *word)
{
	struct table_opts probe = { 0 };

	return !table_opts__parse_callgraph(&probe, word);
}

static void report__opt_callgraph(void *v, const struct opt_row *row, const char *arg,
				  struct opt_ctx *ctx)
{
	(void)row;
	/* perf's "-g caller": the mode as the next word */
	if (!arg)
		arg = opt_ctx__take_next(ctx, report__is_callgraph);
	if (table_opts__parse_callgraph(&CL(v)->o.table, arg ? arg : ""))
		die(XPU_EXIT_USAGE, "bad -g '%s': expected caller, callee or none, "
		    "optionally ,PCT (the smallest branch shown)", arg);
}

static void report__opt_max_stack(void *v, const struct opt_row *row, const char *arg,
				  struct opt_ctx *ctx)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);

	(void)row, (void)ctx;
	if (end == arg || *end || !n || n > PROFILE_MAX_DEPTH)
		die(XPU_EXIT_USAGE, "bad --max-stack '%s': expected 1 to %d frames",
		    arg, PROFILE_MAX_DEPTH);
	CL(v)->o.max_stack = (unsigned)n;
}

/* NAME[,NAME...] appended to a list (--symbols, --dsos). */
static void report__opt_names(void *v, const struct opt_row *row, const char *arg,
			      struct opt_ctx *ctx)
{
	struct table_opts *t = &CL(v)->o.table;
	bool syms = !strcmp(row->name, "symbols");
	char ***list = syms ? &t->symbols : &t->dsos;
	size_t *nr = syms ? &t->nr_symbols : &t->nr_dsos;
	char *copy = xstrdup(arg), *save = NULL, *tok;

	(void)ctx;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		*list = xrealloc(*list, (*nr + 1) * sizeof(**list));
		(*list)[(*nr)++] = xstrdup(tok);
	}
	free(copy);
}

static void report__opt_nothing(void *v, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
}

static void report__opt_verbose(void *v, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	xpu_verbose++;
}

static void report__usage(FILE *fp);

static void report__opt_help(void *v, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	report__usage(stdout);
	exit(XPU_EXIT_OK);
}

static void report__opt_version(void *v, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	printf("xpu-report %s\n", XPU_VERSION);
	exit(XPU_EXIT_OK);
}

/* The options before the outputs' rows (report__rows() puts those here). */
static const struct opt_row report__rows_inputs[] = {
	OPT_FN_ARG("input", 'i', "FILE", report__opt_input,
	       "trace to read (default xpu.data); several -i, or a\n"
	       "directory of *.data files: merged into one report"),
	OPT_TRUE("input-frame", 0, RC, o.input_frame,
		 "merged: each stack's root names its input ([HOST rank R])"),
};

/* The options after the outputs' rows. */
static const struct opt_row report__rows_rest[] = {
	OPT_HEADING("      (an output that writes FILE writes standard output for FILE -)"),
	OPT_TRUE("no-comm", 0, RC, o.no_comm, "folded: do not start stacks with the command name"),
	OPT_FN_ARG("svg-by", 0, "none|process|thread", report__opt_svg_by,
	       "svg: a root frame per process or thread"),
	OPT_TRUE("no-kernel", 0, RC, o.no_kernel, "leave kernel frames out"),
	OPT_TRUE("no-nvtx", 0, RC, o.no_nvtx, "no [nvtx] frames for the NVTX ranges code ran in"),
	OPT_TRUE("no-autograd", 0, RC, o.no_autograd,
		 "PyTorch backward work and CPU time under the autograd\n"
		 "thread's own stack, not under the forward op's Python code"),
	OPT_TRUE("no-pc-sampling", 0, RC, o.no_pc_sampling,
		 "kernels as one [GPU_Kernel] leaf, not split by their GPU PC\n"
		 "samples into [sass] line and [stall] reason frames"),
	OPT_FN_ARG("cubins", 0, "DIR", report__opt_dir,
	       "the *.cubin files under DIR (Triton's cache) give PC samples\n"
	       "their lines where the trace has no cubin (an attach)"),
	OPT_TRUE("no-inline", 0, RC, o.no_inline,
		 "no frames for inlined functions (\"foo (inlined)\", from DWARF)"),
	OPT_TRUE("no-srcline", 0, RC, o.no_srcline, "no file:line in the table, the TUI and annotate"),
	OPT_TRUE("no-py-lines", 0, RC, o.no_py_lines,
		 "Python frames without their line (py::func:file.py): one per\nfunction"),
	OPT_TRUE("unknown-addresses", 0, RC, o.unknown_addrs,
		 "an address no symbol covers is its own frame (mod+0xOFF),\n"
		 "not one [mod] frame per module"),
	OPT_FN_ARG("max-stack", 0, "N", report__opt_max_stack,
	       "keep the N frames nearest the leaf of each stack"),
	OPT_FN_ARG("graph-attribution", 0, "both|capture|launch", report__opt_graph_attr,
	       "CUDA graph replays: launch stack, [graph replay], then the\n"
	       "stack that captured the node (both, default); under the\n"
	       "capture stack only; or the launch only"),
	OPT_FN_ARG("symfs", 0, "DIR", report__opt_dir,
	       "find the recorded files under DIR (DIR/PATH or\nDIR/.build-id/xx/rest)"),
	OPT_HEADING("table (--stdio), with perf report's names:"),
	OPT_FN_ARG("sort", 0, "KEYS", report__opt_sort,
	       "rows by comm,pid,dso,sym (default comm,dso,sym); GPU work by\n"
	       "device,stream,kernel (with comm, pid): a table of GPU time"),
	OPT_FALSE("children", 0, RC, o.table.no_children, "children % and self % (default)"),
	OPT_TRUE("no-children", 0, RC, o.table.no_children, "self % only"),
	OPT_FN_ARG("percent-limit", 0, "PCT", report__opt_percent_limit, "hide rows under PCT %"),
	OPT_FN_OPT("call-graph", 'g', "caller|callee|none[,PCT]", report__opt_callgraph,
	       "call chains under each row: from the roots (caller) or\n"
	       "inverted, nearest caller first (callee)"),
	OPT_FN_ARG("symbols", 0, "NAME[,NAME]", report__opt_names, "only rows of these functions"),
	OPT_FN_ARG("dsos", 0, "MODULE[,MODULE]", report__opt_names, "only rows of these modules"),
	OPT_FN("show-nr-samples", 'n', report__opt_nothing,
	       "accepted: the Samples column is always shown"),
	OPT_HEADING("views (default: CPU samples and GPU work under the code that launched it):"),
	OPT_INT("cpu-only", 0, RC, o.view, VIEW_CPU, "on-CPU samples only"),
	OPT_INT("gpu-only", 0, RC, o.view, VIEW_GPU, "GPU work only"),
	OPT_INT("off-cpu", 0, RC, o.view, VIEW_OFFCPU,
		"time blocked off CPU, under where each thread blocked"),
	OPT_INT("wall", 0, RC, o.view, VIEW_WALL,
		"on-CPU + off-CPU: each thread sums to its wall time"),
	OPT_INT("gpu-idle", 0, RC, o.view, VIEW_GPU_IDLE,
		"each GPU's idle time, under what its launching threads did\nthen"),
	OPT_TRUE("idle-from-start", 0, RC, o.idle_from_start,
		 "GPU idle also before a process's first GPU work (from its\nstart)"),
	OPT_INT("sync-wait", 0, RC, o.view, VIEW_SYNC_WAIT,
		"time in synchronizing CUDA calls, under what they waited on"),
	OPT_FN_OPT("gpu-memory", 0, "peak|alloc|leak", report__opt_gpu_memory,
	       "GPU memory in bytes under the stacks that allocated it, per\n"
	       "device: live at the peak (default; at the OOM when there is\n"
	       "one), allocated over the recording, or live at the end; with\n"
	       "--time T, live at T"),
	OPT_HEADING("comparing two runs (views and filters apply to both):"),
	OPT_FN_ARG("diff", 0, "OLD NEW", report__opt_diff,
	       "what changed from trace OLD to NEW: a perf diff table\n"
	       "(--stdio), \"stack OLD NEW\" lines (--folded), a red/blue flame\n"
	       "graph (--svg)"),
	OPT_FN_ARG("diff-norm", 0, "total|none|FRAME", report__opt_diff_norm,
	       "total: compare shares of each run's total (default); FRAME:\n"
	       "scale OLD so FRAME weighs the same in both; none: as recorded"),
	OPT_HEADING("filters (comma-separated lists):"),
	OPT_FN_ARG("pid", 0, "PID", report__opt_ids, "processes"),
	OPT_FN_ARG("tid", 0, "TID", report__opt_ids, "threads"),
	OPT_FN_ARG("comm", 0, "NAME[,NAME]", report__opt_comm, "commands"),
	OPT_FN_ARG("time", 0, "START,END", report__opt_time,
	       "seconds after the first record; either side may be empty;\n"
	       "with --gpu-memory also T, one moment"),
	OPT_FN_ARG("rank", 0, "RANK", report__opt_ids,
	       "processes of these ranks (RANK, OMPI_COMM_WORLD_RANK, ...)"),
	OPT_FN_ARG("device", 0, "N", report__opt_ids,
	       "GPU work on these CUDA devices (CPU samples unaffected)"),
	OPT_HEADING("general:"),
	OPT_FN("verbose", 'v', report__opt_verbose, "more diagnostics (repeat for more)"),
	OPT_FN("help", 'h', report__opt_help, "this text"),
	OPT_FN("version", 0, report__opt_version, "print the version"),
};

#define MAX_OUTPUTS 32

/* The whole table: the inputs, one row per output of report_outputs[], the
 * rest. Built once; the outputs' rows point at their output. */
static const struct opt_row *report__rows(size_t *nr)
{
	static struct opt_row rows[ARRAY_SIZE(report__rows_inputs) + MAX_OUTPUTS +
				   ARRAY_SIZE(report__rows_rest)];
	static size_t n;

	if (n) {
		*nr = n;
		return rows;
	}
	memcpy(rows, report__rows_inputs, sizeof(report__rows_inputs));
	n = ARRAY_SIZE(report__rows_inputs);
	for (size_t i = 0; report_outputs[i]; i++) {
		const struct report_output *out = report_outputs[i];

		BUG_ON(i >= MAX_OUTPUTS);
		rows[n++] = (struct opt_row){
			.type = OPT_T_FN, .name = out->name,
			.has_arg = out->takes_file || out->arg ? OPT_ARG_REQUIRED : OPT_ARG_NONE,
			.arg = out->takes_file ? "FILE" : out->arg,
			.help = out->help, .fn = report__opt_output, .data = out,
			.missing = out->takes_file ?
				   xasprintf("--%s needs the FILE to write (- for standard "
					     "output): xpu-report --%s FILE", out->name, out->name) :
				   NULL,
		};
	}
	memcpy(rows + n, report__rows_rest, sizeof(report__rows_rest));
	n += ARRAY_SIZE(report__rows_rest);
	*nr = n;
	return rows;
}

/* "--tui | --folded | ...": the outputs, for usage lines and errors. */
static void report__output_list(char *buf, size_t size, const char *sep)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; report_outputs[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s--%s%s%s", i ? sep : "",
					report_outputs[i]->name,
					report_outputs[i]->takes_file || report_outputs[i]->arg ? " " : "",
					report_outputs[i]->takes_file ? "FILE" :
					report_outputs[i]->arg ? report_outputs[i]->arg : "");
}

static void report__usage(FILE *fp)
{
	const struct opt_row *rows;
	char list[256];
	size_t nr;

	report__output_list(list, sizeof(list), " | ");
	fprintf(fp, "usage: xpu-report [-i FILE]... [%s] [filters]\n"
		"       xpu-report --diff OLD NEW [--stdio | --folded | --svg FILE] [--diff-norm=N]\n",
		list);
	rows = report__rows(&nr);
	opt_table__help(fp, rows, nr, 22);
	fprintf(fp,
"examples:\n"
"  xpu-report --stdio | less                 perf-style table of xpu.data\n"
"  xpu-report --folded | flamegraph.pl > flame.svg   folded stacks for flamegraph.pl\n"
"  xpu-report -i train.data --gpu-idle --header      why the GPU waited, summarized\n");
}

/* --diff OLD NEW: NEW is the one argument left; the output one of three. */
static void report__parse_diff(struct report_opts *o, int argc, char **argv, bool input_given)
{
	if (input_given)
		die(XPU_EXIT_USAGE, "--diff OLD NEW names both traces: leave out -i");
	if (optind >= argc)
		die(XPU_EXIT_USAGE, "--diff needs two traces: --diff OLD NEW");
	o->diff_new = argv[optind++];
	if (!o->output)		/* a table, even on a terminal */
		o->output = &output_stdio;
	if (o->output != &output_stdio && o->output != &output_folded && o->output != &output_svg)
		die(XPU_EXIT_USAGE, "--diff writes --stdio (the default), --folded or --svg, "
		    "not --%s", o->output->name);
}

static void report__parse(struct report_opts *o, int argc, char **argv)
{
	struct report_cmdline cl = { 0 };
	const struct opt_row *rows;
	size_t nr;

	cl.o.input = "xpu.data";
	cl.o.view = VIEW_MERGED;
	rows = report__rows(&nr);
	optind = opt_table__parse(rows, nr, &cl, argc, argv, "xpu-report", false);
	*o = cl.o;
	if (o->diff_old)
		report__parse_diff(o, argc, argv, cl.nr_inputs > 0);
	else if (o->diff_norm_frame)
		die(XPU_EXIT_USAGE, "--diff-norm goes with --diff OLD NEW");
	if (o->gpu_mem.at_given && o->view != VIEW_GPU_MEM)
		die(XPU_EXIT_USAGE, "--time %g: one moment goes with --gpu-memory (a window is "
		    "--time START,END)", o->gpu_mem.at);
	if (o->gpu_mem.at_given && o->gpu_mem.mode_given && o->gpu_mem.mode != GPU_MEM_PEAK)
		die(XPU_EXIT_USAGE, "--time T is a moment of its own: leave out --gpu-memory=%s",
		    gpu_mem_mode__name(o->gpu_mem.mode));
	if (optind < argc)
		die(XPU_EXIT_USAGE, "unexpected argument '%s'; the trace is given with -i FILE",
		    argv[optind]);
	report__set_inputs(o, cl.inputs, cl.nr_inputs);
	if (!o->output)		/* like perf report: browse on a terminal */
		o->output = !output_tui.unavailable() && isatty(STDOUT_FILENO) &&
			    isatty(STDIN_FILENO) ? &output_tui : &output_stdio;
}

int main(int argc, char **argv)
{
	struct report_opts o = { 0 };

	xpu_log_init(argv[0]);
	report__parse(&o, argc, argv);
	knobs__parse(KNOB_P_REPORT);
	if (o.diff_old)
		return report__diff(&o, stdout);
	return report__run(o.output, &o, stdout);
}
