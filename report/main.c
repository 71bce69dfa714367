// SPDX-License-Identifier: MIT
/*
 * xpu-report: reads an xpu.data trace and prints folded stacks, a perf-style
 * table, the raw records or the header. See Documentation/xpu-report.md.
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
#include "report/find_chain.h"
#include "report/gpu.h"
#include "report/gpu_stats.h"
#include "report/output.h"
#include "report/session.h"
#include "report/tui/tui.h"

enum report_output { OUT_DEFAULT, OUT_FOLDED, OUT_STDIO, OUT_DUMP, OUT_HEADER, OUT_TUI };

struct report_opts {
	const char *input;
	enum report_output output;
	enum profile_view view;
	bool no_comm;
	bool no_kernel;
	const char *symfs;
	struct filter filter;
};

enum {
	OPT_FOLDED = 256, OPT_STDIO, OPT_DUMP, OPT_HEADER, OPT_PID, OPT_TID, OPT_COMM,
	OPT_TIME, OPT_NO_COMM, OPT_VERSION, OPT_CPU_ONLY, OPT_GPU_ONLY, OPT_NO_KERNEL,
	OPT_SYMFS, OPT_TUI,
};

static const struct option report__options[] = {
	{ "input",	required_argument, NULL, 'i' },
	{ "folded",	no_argument,	   NULL, OPT_FOLDED },
	{ "stdio",	no_argument,	   NULL, OPT_STDIO },
	{ "dump",	no_argument,	   NULL, OPT_DUMP },
	{ "header",	no_argument,	   NULL, OPT_HEADER },
	{ "tui",	no_argument,	   NULL, OPT_TUI },
	{ "pid",	required_argument, NULL, OPT_PID },
	{ "tid",	required_argument, NULL, OPT_TID },
	{ "comm",	required_argument, NULL, OPT_COMM },
	{ "time",	required_argument, NULL, OPT_TIME },
	{ "no-comm",	no_argument,	   NULL, OPT_NO_COMM },
	{ "no-kernel",	no_argument,	   NULL, OPT_NO_KERNEL },
	{ "cpu-only",	no_argument,	   NULL, OPT_CPU_ONLY },
	{ "gpu-only",	no_argument,	   NULL, OPT_GPU_ONLY },
	{ "verbose",	no_argument,	   NULL, 'v' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ "version",	no_argument,	   NULL, OPT_VERSION },
	{ "symfs",	required_argument, NULL, OPT_SYMFS },
	{ NULL, 0, NULL, 0 }
};

static void report__usage(FILE *fp)
{
	fprintf(fp,
"usage: xpu-report [-i FILE] [--tui | --folded | --stdio | --dump | --header] [filters]\n"
"  -i, --input FILE    trace to read (default xpu.data)\n"
"      --folded        folded stacks for flamegraph.pl (comm;root;...;leaf COUNT)\n"
"      --tui           interactive call-tree browser (default when stdout is a terminal)\n"
"      --stdio         table: children %%, self %%, samples, command, module, symbol (default\n"
"                      when stdout is not a terminal)\n"
"      --dump          every record, one line each\n"
"      --header        metadata, record counts, damage and lost-event statistics\n"
"      --no-comm       folded: do not start stacks with the command name\n"
"      --no-kernel     leave kernel frames out\n"
"      --cpu-only, --gpu-only   show only CPU samples / only GPU work\n"
"      --symfs DIR     find the recorded files under DIR (DIR/PATH or DIR/.build-id/xx/rest)\n"
"filters (comma-separated lists):\n"
"      --pid P[,P]     --tid T[,T]     --comm NAME[,NAME]\n"
"      --time START,END  seconds after the first record; either side may be empty\n"
"  -v, --verbose       more diagnostics (repeat for more)\n"
"  -h, --help          this text;  --version  print the version\n");
}

static void report__parse(struct report_opts *o, int argc, char **argv)
{
	int c;

	o->input = "xpu.data";
	o->view = VIEW_MERGED;
	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, ":i:vh", report__options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case OPT_FOLDED: case OPT_STDIO: case OPT_DUMP: case OPT_HEADER: case OPT_TUI: {
			enum report_output out = c == OPT_FOLDED ? OUT_FOLDED : c == OPT_STDIO ?
				OUT_STDIO : c == OPT_DUMP ? OUT_DUMP : c == OPT_TUI ? OUT_TUI : OUT_HEADER;

			if (o->output != OUT_DEFAULT && o->output != out)
				die(XPU_EXIT_USAGE, "give only one of --tui, --folded, --stdio, --dump, "
				    "--header");
			if (out == OUT_TUI && !tui__available())
				die(XPU_EXIT_USAGE, "built without ncurses: install libncurses-dev and "
				    "rebuild (or use --stdio / --folded)");
			o->output = out;
			break;
		}
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
		case OPT_CPU_ONLY:
			o->view = VIEW_CPU;
			break;
		case OPT_GPU_ONLY:
			o->view = VIEW_GPU;
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
	if (o->output == OUT_DEFAULT)	/* like perf report: browse on a terminal */
		o->output = tui__available() && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ?
			    OUT_TUI : OUT_STDIO;
}

int main(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct session s;
	struct gpu_join *gpu;
	struct gpu_stats gstats;
	int err = 0, code = XPU_EXIT_OK;

	xpu_log_init(argv[0]);
	report__parse(&o, argc, argv);
	session__open_or_die(&s, o.input, "report");
	find_chain__install(&s.machine.dsos, o.input, o.symfs);
	s.filter = o.filter;
	s.callchain.no_kernel = o.no_kernel;
	gpu = gpu_join__new();
	session__add_tool(&s, gpu_join__tool(gpu));	/* the CPU->GPU join */

	if (o.output == OUT_TUI)
		tui__prepare(&s);	/* GPU summary, collected in pass 1 */
	else if (o.output == OUT_HEADER)
		gpu_stats__attach(&gstats, &s);
	if (session__pass1(&s))
		die(XPU_EXIT_FAILURE, "reading %s failed", o.input);

	switch (o.output) {
	case OUT_HEADER:
		/* the GPU section reports the join, which runs in pass 2 */
		if (gpu_join__has_activity(gpu) && session__pass2(&s))
			die(XPU_EXIT_FAILURE, "processing %s failed", o.input);
		err = output__header(&s, stdout);
		/* Per-kernel and per-copy totals, exact from the activity records
		 * (Nsight's kernel summary): only when there is GPU work. */
		if (!err && gpu_join__has_activity(gpu)) {
			fputs("#\n", stdout);
			err = gpu_stats__fprint(&gstats, stdout, 20);
		}
		gpu_stats__exit(&gstats);
		break;
	case OUT_DUMP:
		err = output__dump(&s, stdout);
		break;
	case OUT_FOLDED:
	case OUT_STDIO:
	case OUT_TUI:
	case OUT_DEFAULT:
		if (session__pass2(&s))
			die(XPU_EXIT_FAILURE, "processing %s failed", o.input);
		session__warn(&s);
		if (profile__total(&s.profile, o.view) <= 0) {
			bool damaged = session__damaged(&s);

			session__close(&s);
			if (damaged)
				die(XPU_EXIT_CORRUPT, "%s is damaged and no samples could be read "
				    "from what remains", o.input);
			if (!s.nr_samples && !s.nr_records[XPU_REC_SAMPLE])
				die(XPU_EXIT_NODATA, "%s holds no samples%s: nothing to report (was the "
				    "workload too short? try a higher -F)", o.input,
				    s.nr_records[XPU_REC_GPU_KERNEL] ? " for this view" : "");
			die(XPU_EXIT_NODATA, "none of the %llu samples in %s match the filters "
			    "or view", (unsigned long long)s.nr_samples, o.input);
		}
		if (o.output == OUT_FOLDED) {
			struct folded_opts fo = { .view = o.view, .comm = !o.no_comm };

			err = output__folded(&s.profile, stdout, &fo);
		} else if (o.output == OUT_TUI) {
			err = tui__run(&s, o.view);
		} else {
			err = output__stdio(&s, stdout, o.view);
		}
		break;
	}
	if (o.output == OUT_HEADER || o.output == OUT_DUMP) {
		if (session__damaged(&s))
			session__warn(&s);
		else if (!xpu_reader__stats(s.reader)->records) {
			session__close(&s);
			die(XPU_EXIT_NODATA, "%s holds no records: nothing to report", o.input);
		}
	}
	if (fflush(stdout) || err) {
		session__close(&s);
		die(XPU_EXIT_OUTPUT, "writing the report failed: %s", strerror(errno ? errno : EIO));
	}
	if (session__damaged(&s))
		code = XPU_EXIT_CORRUPT;
	session__close(&s);
	gpu_join__delete(gpu);
	return code;
}
