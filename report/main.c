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
#include "report/output/output.h"

enum {
	OPT_PID = 256, OPT_TID, OPT_COMM, OPT_TIME, OPT_NO_COMM, OPT_VERSION, OPT_CPU_ONLY,
	OPT_GPU_ONLY, OPT_NO_KERNEL, OPT_SYMFS, OPT_OFF_CPU, OPT_WALL, OPT_GPU_IDLE, OPT_SYNC_WAIT,
	OPT_IDLE_FROM_START,
	OPT_NO_NVTX, OPT_NO_INLINE, OPT_NO_SRCLINE, OPT_RANK, OPT_DEVICE,
	OPT_OUTPUT = 512,	/* + index in report_outputs[] */
};

static const struct option report__base_options[] = {
	{ "input",	required_argument, NULL, 'i' },
	{ "pid",	required_argument, NULL, OPT_PID },
	{ "tid",	required_argument, NULL, OPT_TID },
	{ "comm",	required_argument, NULL, OPT_COMM },
	{ "time",	required_argument, NULL, OPT_TIME },
	{ "rank",	required_argument, NULL, OPT_RANK },
	{ "device",	required_argument, NULL, OPT_DEVICE },
	{ "no-comm",	no_argument,	   NULL, OPT_NO_COMM },
	{ "no-kernel",	no_argument,	   NULL, OPT_NO_KERNEL },
	{ "no-nvtx",	no_argument,	   NULL, OPT_NO_NVTX },
	{ "no-inline",	no_argument,	   NULL, OPT_NO_INLINE },
	{ "no-srcline",	no_argument,	   NULL, OPT_NO_SRCLINE },
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
};

#define NR_BASE_OPTIONS (sizeof(report__base_options) / sizeof(report__base_options[0]))
#define MAX_OUTPUTS 32

/* The base options, one --NAME per output of the table, the end marker. */
static struct option report__options[NR_BASE_OPTIONS + MAX_OUTPUTS + 1];

static void report__build_options(void)
{
	size_t n = NR_BASE_OPTIONS;

	memcpy(report__options, report__base_options, sizeof(report__base_options));
	for (size_t i = 0; report_outputs[i]; i++) {
		BUG_ON(i >= MAX_OUTPUTS);
		report__options[n++] = (struct option){ report_outputs[i]->name, no_argument,
							NULL, OPT_OUTPUT + (int)i };
	}
	report__options[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* "--tui | --folded | ...": the outputs, for usage lines and errors. */
static void report__output_list(char *buf, size_t size, const char *sep)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; report_outputs[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s--%s", i ? sep : "",
					report_outputs[i]->name);
}

static void report__usage(FILE *fp)
{
	char list[256];

	report__output_list(list, sizeof(list), " | ");
	fprintf(fp, "usage: xpu-report [-i FILE]... [%s] [filters]\n"
		"  -i, --input FILE    trace to read (default xpu.data); several -i, or a\n"
		"                      directory of *.data files: merged into one report\n", list);
	for (size_t i = 0; report_outputs[i]; i++) {
		const char *h = report_outputs[i]->help, *nl;

		fprintf(fp, "      --%-13s ", report_outputs[i]->name);
		while ((nl = strchr(h, '\n'))) {	/* continuation lines, indented */
			fprintf(fp, "%.*s\n%22s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(fp, "%s\n", h);
	}
	fprintf(fp,
"      --no-comm       folded: do not start stacks with the command name\n"
"      --no-kernel     leave kernel frames out\n"
"      --no-nvtx       no [nvtx] frames for the NVTX ranges code ran in\n"
"      --no-inline     no frames for inlined functions (\"foo (inlined)\", from DWARF)\n"
"      --no-srcline    no file:line in the table, the TUI and annotate\n"
"views (default: CPU samples and GPU work under the code that launched it):\n"
"      --cpu-only      on-CPU samples only      --gpu-only   GPU work only\n"
"      --off-cpu       time blocked off CPU, under where each thread blocked\n"
"      --wall          on-CPU + off-CPU: each thread sums to its wall time\n"
"      --gpu-idle      each GPU's idle time, under what its launching threads did then\n"
"      --idle-from-start  GPU idle also before a process's first GPU work (from its start)\n"
"      --sync-wait     time in synchronizing CUDA calls, under what they waited on\n"
"      --symfs DIR     find the recorded files under DIR (DIR/PATH or DIR/.build-id/xx/rest)\n"
"filters (comma-separated lists):\n"
"      --pid P[,P]     --tid T[,T]     --comm NAME[,NAME]\n"
"      --time START,END  seconds after the first record; either side may be empty\n"
"      --rank R[,R]    processes of these ranks (RANK, OMPI_COMM_WORLD_RANK, ...)\n"
"      --device N[,N]  GPU work on these CUDA devices (CPU samples unaffected)\n"
"  -v, --verbose       more diagnostics (repeat for more)\n"
"  -h, --help          this text;  --version  print the version\n");
}

static void report__parse(struct report_opts *o, int argc, char **argv)
{
	char **inputs = NULL;
	size_t nr_inputs = 0;
	int c;

	o->input = "xpu.data";
	o->view = VIEW_MERGED;
	report__build_options();
	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, ":i:vh", report__options, NULL)) != -1) {
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
			o->output = out;
			continue;
		}
		switch (c) {
		case 'i':
			inputs = realloc(inputs, (nr_inputs + 1) * sizeof(*inputs));
			if (!inputs)
				die(XPU_EXIT_FAILURE, "out of memory");
			inputs[nr_inputs++] = optarg;
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
		case OPT_NO_INLINE:
			o->no_inline = true;
			break;
		case OPT_NO_SRCLINE:
			o->no_srcline = true;
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
		case OPT_SYMFS: {
			struct stat st;

			if (stat(optarg, &st) || !S_ISDIR(st.st_mode))
				die(XPU_EXIT_USAGE, "--symfs %s: not a directory", optarg);
			o->symfs = optarg;
			break;
		}
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
			die(XPU_EXIT_USAGE, "option '%s' needs a value; see xpu-report --help",
			    argv[optind - 1]);
		default:
			die(XPU_EXIT_USAGE, "unknown option '%s'; see xpu-report --help",
			    argv[optind - 1]);
		}
	}
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
	return report__run(o.output, &o, stdout);
}
