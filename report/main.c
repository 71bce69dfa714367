// SPDX-License-Identifier: MIT
/*
 * xpu-report: reads an xpu.data trace and prints one of the outputs of the
 * table in output.c (folded stacks, a perf-style table, the TUI, the raw
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
#include "common/log.h"
#include "common/xalloc.h"
#include "report/output/output.h"
#include "report/gpu/gpu_graph.h"

enum {
	OPT_PID = 256, OPT_TID, OPT_COMM, OPT_TIME, OPT_NO_COMM, OPT_VERSION, OPT_CPU_ONLY,
	OPT_GPU_ONLY, OPT_NO_KERNEL, OPT_SYMFS, OPT_OFF_CPU, OPT_WALL, OPT_GPU_IDLE, OPT_SYNC_WAIT,
	OPT_IDLE_FROM_START,
	OPT_NO_NVTX, OPT_NO_INLINE, OPT_NO_SRCLINE, OPT_UNKNOWN_ADDRS, OPT_NO_PY_LINES,
	OPT_SORT, OPT_PERCENT_LIMIT, OPT_CHILDREN, OPT_NO_CHILDREN, OPT_MAX_STACK, OPT_SYMBOLS,
	OPT_DSOS, OPT_DIFF, OPT_DIFF_NORM, OPT_RANK, OPT_DEVICE, OPT_GRAPH_ATTR, OPT_NO_AUTOGRAD, OPT_NO_PC_SAMPLING,
	OPT_CUBINS,
	OPT_INPUT_FRAME, OPT_SVG_BY,
	OPT_OUTPUT = 512,	/* + index in report_outputs[] */
};

static const struct option report__base_options[] = {
	{ "input",	required_argument, NULL, 'i' },
	{ "input-frame", no_argument,	   NULL, OPT_INPUT_FRAME },
	{ "svg-by",	required_argument, NULL, OPT_SVG_BY },
	{ "pid",	required_argument, NULL, OPT_PID },
	{ "tid",	required_argument, NULL, OPT_TID },
	{ "comm",	required_argument, NULL, OPT_COMM },
	{ "time",	required_argument, NULL, OPT_TIME },
	{ "rank",	required_argument, NULL, OPT_RANK },
	{ "device",	required_argument, NULL, OPT_DEVICE },
	{ "no-comm",	no_argument,	   NULL, OPT_NO_COMM },
	{ "no-kernel",	no_argument,	   NULL, OPT_NO_KERNEL },
	{ "no-nvtx",	no_argument,	   NULL, OPT_NO_NVTX },
	{ "no-autograd", no_argument,	   NULL, OPT_NO_AUTOGRAD },
	{ "no-pc-sampling", no_argument,  NULL, OPT_NO_PC_SAMPLING },
	{ "cubins",	required_argument, NULL, OPT_CUBINS },
	{ "no-inline",	no_argument,	   NULL, OPT_NO_INLINE },
	{ "no-py-lines", no_argument,	   NULL, OPT_NO_PY_LINES },
	{ "graph-attribution", required_argument, NULL, OPT_GRAPH_ATTR },
	{ "no-srcline",	no_argument,	   NULL, OPT_NO_SRCLINE },
	{ "unknown-addresses", no_argument, NULL, OPT_UNKNOWN_ADDRS },
	{ "sort",	required_argument, NULL, OPT_SORT },
	{ "show-nr-samples", no_argument,  NULL, 'n' },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "children",	no_argument,	   NULL, OPT_CHILDREN },
	{ "no-children", no_argument,	   NULL, OPT_NO_CHILDREN },
	{ "call-graph",	optional_argument, NULL, 'g' },
	{ "max-stack",	required_argument, NULL, OPT_MAX_STACK },
	{ "symbols",	required_argument, NULL, OPT_SYMBOLS },
	{ "dsos",	required_argument, NULL, OPT_DSOS },
	{ "cpu-only",	no_argument,	   NULL, OPT_CPU_ONLY },
	{ "gpu-only",	no_argument,	   NULL, OPT_GPU_ONLY },
	{ "off-cpu",	no_argument,	   NULL, OPT_OFF_CPU },
	{ "wall",	no_argument,	   NULL, OPT_WALL },
	{ "gpu-idle",	no_argument,	   NULL, OPT_GPU_IDLE },
	{ "sync-wait",	no_argument,	   NULL, OPT_SYNC_WAIT },
	{ "idle-from-start", no_argument,  NULL, OPT_IDLE_FROM_START },
	{ "verbose",	no_argument,	   NULL, 'v' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ "version",	no_argument,	   NULL, OPT_VERSION },
	{ "symfs",	required_argument, NULL, OPT_SYMFS },
	{ "diff",	required_argument, NULL, OPT_DIFF },
	{ "diff-norm",	required_argument, NULL, OPT_DIFF_NORM },
};

#define NR_BASE_OPTIONS (sizeof(report__base_options) / sizeof(report__base_options[0]))
#define MAX_OUTPUTS 32

/* NAME[,NAME...] appended to a list (--symbols, --dsos). */
static void report__add_names(char ***list, size_t *nr, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		*list = xrealloc(*list, (*nr + 1) * sizeof(**list));
		(*list)[(*nr)++] = xstrdup(tok);
	}
	free(copy);
}

/* The base options, one --NAME per output of the table, the end marker. */
static struct option report__options[NR_BASE_OPTIONS + MAX_OUTPUTS + 1];

static void report__build_options(void)
{
	size_t n = NR_BASE_OPTIONS;

	memcpy(report__options, report__base_options, sizeof(report__base_options));
	for (size_t i = 0; report_outputs[i]; i++) {
		BUG_ON(i >= MAX_OUTPUTS);
		report__options[n++] = (struct option){ report_outputs[i]->name,
							report_outputs[i]->takes_file ||
							report_outputs[i]->arg ?
							required_argument : no_argument,
							NULL, OPT_OUTPUT + (int)i };
	}
	report__options[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* What an output's option takes: "FILE", "KERNEL" or "". */
static const char *report__arg_name(const struct report_output *out)
{
	return out->takes_file ? "FILE" : out->arg ? out->arg : "";
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
					report__arg_name(report_outputs[i]));
}

static void report__usage(FILE *fp)
{
	char list[256];

	report__output_list(list, sizeof(list), " | ");
	fprintf(fp, "usage: xpu-report [-i FILE]... [%s] [filters]\n"
		"       xpu-report --diff OLD NEW [--stdio | --folded | --svg FILE] [--diff-norm=N]\n"
		"  -i, --input FILE    trace to read (default xpu.data); several -i, or a\n"
		"                      directory of *.data files: merged into one report\n"
		"      --input-frame   merged: each stack's root names its input ([HOST rank R])\n", list);
	for (size_t i = 0; report_outputs[i]; i++) {
		const char *h = report_outputs[i]->help, *nl;
		char opt[64];

		snprintf(opt, sizeof(opt), "%s%s%s", report_outputs[i]->name,
			 *report__arg_name(report_outputs[i]) ? " " : "",
			 report__arg_name(report_outputs[i]));
		if (strlen(opt) > 13)	/* the help on a line of its own */
			fprintf(fp, "      --%s\n%22s", opt, "");
		else
			fprintf(fp, "      --%-13s ", opt);
		while ((nl = strchr(h, '\n'))) {	/* continuation lines, indented */
			fprintf(fp, "%.*s\n%22s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(fp, "%s\n", h);
	}
	fprintf(fp,
"      (an output that writes FILE writes standard output for FILE -)\n"
"      --no-comm       folded: do not start stacks with the command name\n"
"      --svg-by=none|process|thread  svg: a root frame per process or thread\n"
"      --no-kernel     leave kernel frames out\n"
"      --no-nvtx       no [nvtx] frames for the NVTX ranges code ran in\n"
"      --no-autograd   PyTorch backward work and CPU time under the autograd thread's\n"
"                      own stack,\n"
"                      not under the forward op's Python code\n"
"      --no-pc-sampling  kernels as one [GPU_Kernel] leaf, not split by their GPU PC\n"
"                      samples into [sass] line and [stall] reason frames\n"
"      --cubins DIR    the *.cubin files under DIR (Triton's cache) give PC samples\n"
"                      their lines where the trace has no cubin (an attach)\n"
"      --no-inline     no frames for inlined functions (\"foo (inlined)\", from DWARF)\n"
"      --no-srcline    no file:line in the table, the TUI and annotate\n"
"      --no-py-lines   Python frames without their line (py::func:file.py): one per function\n"
"      --unknown-addresses  an address no symbol covers is its own frame (mod+0xOFF),\n"
"                      not one [mod] frame per module\n"
"      --max-stack N   keep the N frames nearest the leaf of each stack\n"
"      --graph-attribution=both|capture|launch  CUDA graph replays: launch stack,\n"
"                      [graph replay], then the stack that captured the node (both,\n"
"                      default); under the capture stack only; or the launch only\n"
"table (--stdio), with perf report's names:\n"
"      --sort KEYS     rows by comm,pid,dso,sym (default comm,dso,sym); GPU work by\n"
"                      device,stream,kernel (with comm, pid): a table of GPU time\n"
"      --children      children %% and self %% (default)   --no-children  self only\n"
"      --percent-limit PCT  hide rows under PCT %%\n"
"  -g, --call-graph[=caller|callee|none[,PCT]]  call chains under each row: from the\n"
"                      roots (caller) or inverted, nearest caller first (callee)\n"
"      --symbols NAME[,NAME]  --dsos MODULE[,MODULE]  only rows of these\n"
"  -n, --show-nr-samples  accepted: the Samples column is always shown\n"
"views (default: CPU samples and GPU work under the code that launched it):\n"
"      --cpu-only      on-CPU samples only      --gpu-only   GPU work only\n"
"      --off-cpu       time blocked off CPU, under where each thread blocked\n"
"      --wall          on-CPU + off-CPU: each thread sums to its wall time\n"
"      --gpu-idle      each GPU's idle time, under what its launching threads did then\n"
"      --idle-from-start  GPU idle also before a process's first GPU work (from its start)\n"
"      --sync-wait     time in synchronizing CUDA calls, under what they waited on\n"
"      --symfs DIR     find the recorded files under DIR (DIR/PATH or DIR/.build-id/xx/rest)\n""comparing two runs (views and filters apply to both):\n"
"      --diff OLD NEW  what changed from trace OLD to NEW: a perf diff table (--stdio),\n"
"                      \"stack OLD NEW\" lines (--folded), a red/blue flame graph (--svg)\n"
"      --diff-norm=N   total: compare shares of each run's total (default); FRAME:\n"
"                      scale OLD so FRAME weighs the same in both; none: as recorded\n"
"filters (comma-separated lists):\n"
"      --pid P[,P]     --tid T[,T]     --comm NAME[,NAME]\n"
"      --time START,END  seconds after the first record; either side may be empty\n"
"      --rank R[,R]    processes of these ranks (RANK, OMPI_COMM_WORLD_RANK, ...)\n"
"      --device N[,N]  GPU work on these CUDA devices (CPU samples unaffected)\n"
"  -v, --verbose       more diagnostics (repeat for more)\n"
"  -h, --help          this text;  --version  print the version\n"
"examples:\n"
"  xpu-report --stdio | less                 perf-style table of xpu.data\n"
"  xpu-report --folded | flamegraph.pl > flame.svg   folded stacks for flamegraph.pl\n"
"  xpu-report -i train.data --gpu-idle --header      why the GPU waited, summarized\n");
}

/* --diff OLD NEW: NEW is the one argument left; the output one of three. */
/* An option's directory argument; a usage error when it is not one. */
static const char *report__dir_arg(const char *opt, const char *arg)
{
	struct stat st;

	if (stat(arg, &st) || !S_ISDIR(st.st_mode))
		die(XPU_EXIT_USAGE, "--%s %s: not a directory", opt, arg);
	return arg;
}

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
	bool input_given = false;
	char **inputs = NULL;
	size_t nr_inputs = 0;
	int c;

	o->input = "xpu.data";
	o->view = VIEW_MERGED;
	report__build_options();
	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, ":i:vhng::", report__options, NULL)) != -1) {
		if (c >= OPT_OUTPUT) {
			const struct report_output *out = report_outputs[c - OPT_OUTPUT];
			const char *why = out->unavailable ? out->unavailable() : NULL;
			char list[256];

			if (o->output && o->output != out) {
				report__output_list(list, sizeof(list), ", ");
				die(XPU_EXIT_USAGE, "give only one of %s", list);
			}
			if (why)
				die(XPU_EXIT_USAGE, "%s", why);
			/* "--svg --cpu-only" took the next option as FILE */
			if (out->takes_file && optarg[0] == '-' && optarg[1])
				die(XPU_EXIT_USAGE, "--%s %s: FILE looks like an option: give the file "
				    "to write (- for standard output; ./%s for a file of that name)",
				    out->name, optarg, optarg);
			o->output = out;
			o->output_file = out->takes_file ? optarg : NULL;
			o->output_arg = out->arg ? optarg : NULL;
			continue;
		}
		switch (c) {
		case 'i':
			inputs = realloc(inputs, (nr_inputs + 1) * sizeof(*inputs));
			if (!inputs)
				die(XPU_EXIT_FAILURE, "out of memory");
			inputs[nr_inputs++] = optarg;
			input_given = true;
			break;
		case OPT_RANK:
			if (filter__parse_ids(&o->filter.ranks, &o->filter.nr_ranks, optarg))
				die(XPU_EXIT_USAGE, "bad --rank '%s': expected RANK[,RANK...]", optarg);
			break;
		case OPT_DEVICE:
			if (filter__parse_ids(&o->filter.devices, &o->filter.nr_devices, optarg))
				die(XPU_EXIT_USAGE, "bad --device '%s': expected N[,N...] (CUDA device "
				    "ordinals)", optarg);
			break;
		case OPT_PID:
			if (filter__parse_ids(&o->filter.pids, &o->filter.nr_pids, optarg))
				die(XPU_EXIT_USAGE, "bad --pid '%s': expected PID[,PID...]", optarg);
			break;
		case OPT_TID:
			if (filter__parse_ids(&o->filter.tids, &o->filter.nr_tids, optarg))
				die(XPU_EXIT_USAGE, "bad --tid '%s': expected TID[,TID...]", optarg);
			break;
		case OPT_COMM:
			if (filter__parse_comms(&o->filter, optarg))
				die(XPU_EXIT_USAGE, "bad --comm '%s': expected NAME[,NAME...]", optarg);
			break;
		case OPT_TIME:
			if (filter__parse_time(&o->filter, optarg))
				die(XPU_EXIT_USAGE, "bad --time '%s': expected START,END in seconds "
				    "(either may be empty, END >= START)", optarg);
			break;
		case OPT_NO_COMM:
			o->no_comm = true;
			break;
		case OPT_NO_KERNEL:
			o->no_kernel = true;
			break;
		case OPT_NO_NVTX:
			o->no_nvtx = true;
			break;
		case OPT_SVG_BY:
			if (!strcmp(optarg, "none"))
				o->svg_by = SVG_BY_NONE;
			else if (!strcmp(optarg, "process"))
				o->svg_by = SVG_BY_PROCESS;
			else if (!strcmp(optarg, "thread"))
				o->svg_by = SVG_BY_THREAD;
			else
				die(XPU_EXIT_USAGE, "--svg-by=%s: use none, process or thread", optarg);
			break;
		case OPT_INPUT_FRAME:
			o->input_frame = true;
			break;
		case OPT_NO_INLINE:
			o->no_inline = true;
			break;
		case OPT_NO_SRCLINE:
			o->no_srcline = true;
			break;
		case OPT_NO_PY_LINES:
			o->no_py_lines = true;
			break;
		case OPT_NO_AUTOGRAD:
			o->no_autograd = true;
			break;
		case OPT_NO_PC_SAMPLING:
			o->no_pc_sampling = true;
			break;
		case OPT_CUBINS:
			o->cubins_dir = report__dir_arg("cubins", optarg);
			break;
		case OPT_GRAPH_ATTR:
			if ((o->graph_attr = gpu_graph_attr__parse(optarg)) < 0)
				die(XPU_EXIT_USAGE, "bad --graph-attribution '%s': expected both, capture "
				    "or launch", optarg);
			break;
		case OPT_UNKNOWN_ADDRS:
			o->unknown_addrs = true;
			break;
		case OPT_CPU_ONLY:
			o->view = VIEW_CPU;
			break;
		case OPT_GPU_ONLY:
			o->view = VIEW_GPU;
			break;
		case OPT_OFF_CPU:
			o->view = VIEW_OFFCPU;
			break;
		case OPT_WALL:
			o->view = VIEW_WALL;
			break;
		case OPT_GPU_IDLE:
			o->view = VIEW_GPU_IDLE;
			break;
		case OPT_SYNC_WAIT:
			o->view = VIEW_SYNC_WAIT;
			break;
		case OPT_IDLE_FROM_START:
			o->idle_from_start = true;
			break;
		case OPT_DIFF:
			o->diff_old = optarg;
			break;
		case OPT_DIFF_NORM:
			if (!optarg[0])
				die(XPU_EXIT_USAGE, "--diff-norm needs total, none or a frame name");
			o->diff_norm = !strcmp(optarg, "total") ? DIFF_NORM_TOTAL :
				       !strcmp(optarg, "none") ? DIFF_NORM_NONE : DIFF_NORM_FRAME;
			o->diff_norm_frame = optarg;
			break;
		case OPT_SYMFS:
			o->symfs = report__dir_arg("symfs", optarg);
			break;
		case OPT_SORT:
			if (table_opts__parse_sort(&o->table, optarg))
				die(XPU_EXIT_USAGE, "bad --sort '%s': expected KEY[,KEY...] of comm, pid, "
				    "dso, sym, or for the GPU table comm, pid, device, stream, kernel",
				    optarg);
			break;
		case 'n':	/* the Samples column is always shown */
			break;
		case OPT_PERCENT_LIMIT: {
			char *end;

			o->table.percent_limit = strtod(optarg, &end);
			if (end == optarg || *end || !(o->table.percent_limit >= 0) ||
			    o->table.percent_limit > 100)
				die(XPU_EXIT_USAGE, "bad --percent-limit '%s': expected a percentage, "
				    "0 to 100", optarg);
			break;
		}
		case OPT_CHILDREN:
			o->table.no_children = false;
			break;
		case OPT_NO_CHILDREN:
			o->table.no_children = true;
			break;
		case 'g': {
			struct table_opts probe = o->table;

			/* perf's "-g caller": the mode as the next word */
			if (!optarg && optind < argc && argv[optind][0] != '-' &&
			    !table_opts__parse_callgraph(&probe, argv[optind]))
				optarg = argv[optind++];
			if (table_opts__parse_callgraph(&o->table, optarg ? optarg : ""))
				die(XPU_EXIT_USAGE, "bad -g '%s': expected caller, callee or none, "
				    "optionally ,PCT (the smallest branch shown)", optarg);
			break;
		}
		case OPT_MAX_STACK: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || *end || !v || v > PROFILE_MAX_DEPTH)
				die(XPU_EXIT_USAGE, "bad --max-stack '%s': expected 1 to %d frames",
				    optarg, PROFILE_MAX_DEPTH);
			o->max_stack = (unsigned)v;
			break;
		}
		case OPT_SYMBOLS:
		case OPT_DSOS:
			report__add_names(c == OPT_SYMBOLS ? &o->table.symbols : &o->table.dsos,
					  c == OPT_SYMBOLS ? &o->table.nr_symbols : &o->table.nr_dsos,
					  optarg);
			break;
		case 'v':
			xpu_verbose++;
			break;
		case 'h':
			report__usage(stdout);
			exit(XPU_EXIT_OK);
		case OPT_VERSION:
			printf("xpu-report %s\n", XPU_VERSION);
			exit(XPU_EXIT_OK);
		case ':':
			if (optopt >= OPT_OUTPUT)
				die(XPU_EXIT_USAGE, "--%s needs the FILE to write (- for standard "
				    "output): xpu-report --%s FILE", report_outputs[optopt - OPT_OUTPUT]->name,
				    report_outputs[optopt - OPT_OUTPUT]->name);
			die(XPU_EXIT_USAGE, "option '%s' needs a value; see xpu-report --help",
			    argv[optind - 1]);
		default:
			die(XPU_EXIT_USAGE, "unknown option '%s'; see xpu-report --help",
			    argv[optind - 1]);
		}
	}
	if (o->diff_old)
		report__parse_diff(o, argc, argv, input_given);
	else if (o->diff_norm_frame)
		die(XPU_EXIT_USAGE, "--diff-norm goes with --diff OLD NEW");
	if (optind < argc)
		die(XPU_EXIT_USAGE, "unexpected argument '%s'; the trace is given with -i FILE",
		    argv[optind]);
	report__set_inputs(o, inputs, nr_inputs);
	if (!o->output)		/* like perf report: browse on a terminal */
		o->output = !output_tui.unavailable() && isatty(STDOUT_FILENO) &&
			    isatty(STDIN_FILENO) ? &output_tui : &output_stdio;
}

int main(int argc, char **argv)
{
	struct report_opts o = { 0 };

	xpu_log_init(argv[0]);
	report__parse(&o, argc, argv);
	if (o.diff_old)
		return report__diff(&o, stdout);
	return report__run(o.output, &o, stdout);
}
