// SPDX-License-Identifier: MIT
/* Command line of xpu-record: one table of options (common/opt_table.h),
 * --help and getopt from it. Every mistake is a one-line usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "format/writer.h"
#include "bpf/xpu_events.h"
#include "common/knobs.h"
#include "common/log.h"
#include "common/opt_table.h"
#include "common/xalloc.h"
#include "cupti/channel/wire.h"
#include "record/options.h"
#include "record/target/descendants.h"
#include "record/capture/activate.h"
#include "record/capture/rotate_opts.h"

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

static void opts__call_graph(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	struct record_opts *o = opts;
	char *end;
	long v;

	(void)row, (void)ctx;
	if (!strcmp(arg, "fp")) {
		o->dwarf = false;
		return;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		usage_die("--call-graph %s: expected fp or dwarf[,BYTES]", arg);
	o->dwarf = true;
	if (!arg[5])
		return;
	v = strtol(arg + 6, &end, 0);
	if (*end || v < 64 || v > XPU_BPF_STACK_MAX)
		usage_die("--call-graph %s: BYTES must be a number from 64 to %d", arg, XPU_BPF_STACK_MAX);
	o->stack_bytes = v & ~7L;
}

/* --ring-size: bytes, with a K, M or G suffix; a power of two (the kernel's
 * rule for BPF ring buffers) from 64 KiB to 1 GiB. */
static void opts__ring_size(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	struct record_opts *o = opts;
	unsigned long long v;
	char *end;

	(void)row, (void)ctx;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end != arg && !errno) {
		switch (*end) {
		case 'k': case 'K': v <<= 10; end++; break;
		case 'm': case 'M': v <<= 20; end++; break;
		case 'g': case 'G': v <<= 30; end++; break;
		}
	}
	if (end == arg || *end || errno || v < (64u << 10) || v > (1u << 30) || (v & (v - 1)))
		usage_die("--ring-size %s: expected a power of two from 64K to 1G (e.g. 16M)", arg);
	o->ring_size = v;
}

/* pid, unless -p or --pid-tree named it already */
static void opts__add_pid(struct record_opts *o, pid_t pid)
{
	for (int i = 0; i < o->nr_pids; i++)
		if (o->pids[i] == pid)
			return;
	o->pids = xrealloc(o->pids, (o->nr_pids + 1) * sizeof(*o->pids));
	o->pids[o->nr_pids++] = pid;
}

static void opts__pids(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	struct record_opts *o = opts;
	bool tree = row->short_name != 'p';
	char *s = xstrdup(arg), *tok, *save = NULL, *end;

	(void)ctx;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = strtol(tok, &end, 10);

		pid_t *below;
		int n;

		if (*end || v <= 0 || v > 0x7fffffff)
			usage_die("%s %s: expected process IDs separated by commas",
				  tree ? "--pid-tree" : "-p", arg);
		if (!tree || (n = descendants__of((pid_t)v, &below)) <= 0) {
			opts__add_pid(o, v);
			continue;
		}
		for (int i = 0; i < n; i++)
			opts__add_pid(o, below[i]);
		free(below);
	}
	free(s);
	if (!o->nr_pids)
		usage_die("%s %s: expected process IDs separated by commas", tree ? "--pid-tree" : "-p",
			  arg);
}

#define RO struct record_opts

static void opts__output(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	((struct record_opts *)opts)->output = arg;
}

static void opts__freq(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	char *end;
	long v = strtol(arg, &end, 10);

	(void)row, (void)ctx;
	if (*end || v < 1 || v > 100000)
		usage_die("-F %s: expected a frequency from 1 to 100000 Hz", arg);
	((struct record_opts *)opts)->freq = v;
}

static void opts__duration(void *opts, const struct opt_row *row, const char *arg,
			   struct opt_ctx *ctx)
{
	struct record_opts *o = opts;
	char *end;

	(void)row, (void)ctx;
	o->duration = strtod(arg, &end);
	if (*end || !(o->duration > 0))
		usage_die("-d %s: expected a positive number of seconds", arg);
}

static void opts__off_cpu(void *opts, const struct opt_row *row, const char *arg,
			  struct opt_ctx *ctx)
{
	char *end;
	long v = arg ? strtol(arg, &end, 10) : RECORD_OFFCPU_DEFAULT_US;

	(void)row, (void)ctx;
	if (arg && (*end || v < 1 || v > 60000000))
		usage_die("--off-cpu=%s: expected a minimum block length from 1 to 60000000 us", arg);
	((struct record_opts *)opts)->offcpu_min_us = v;
}

static void opts__no_off_cpu(void *opts, const struct opt_row *row, const char *arg,
			     struct opt_ctx *ctx)
{
	(void)row, (void)arg, (void)ctx;
	((struct record_opts *)opts)->offcpu_min_us = 0;
}

static void opts__pc_sampling(void *opts, const struct opt_row *row, const char *arg,
			      struct opt_ctx *ctx)
{
	char *end;
	long v = arg ? strtol(arg, &end, 10) : -1;

	(void)row, (void)ctx;
	if (arg && (*end || v < XPU_PCSAMP_PERIOD_MIN || v > XPU_PCSAMP_PERIOD_MAX))
		usage_die("--gpu-pc-sampling=%s: expected a period exponent from %d to %d "
			  "(a sample every 2^PERIOD cycles)", arg,
			  XPU_PCSAMP_PERIOD_MIN, XPU_PCSAMP_PERIOD_MAX);
	((struct record_opts *)opts)->pc_sampling = (int)v;
}

static void opts__pc_duty(void *opts, const struct opt_row *row, const char *arg,
			  struct opt_ctx *ctx)
{
	struct xpu_pcsamp_duty d;

	(void)row, (void)ctx;
	if (xpu_pcsamp__parse_duty(arg, &d) || !*arg)
		usage_die("--gpu-pc-duty=%s: expected after:MS, ON_MS:OFF_MS (1 to %d each) or off",
			  arg, XPU_PCSAMP_DUTY_MAX_MS);
	((struct record_opts *)opts)->pc_duty = arg;
}

static void opts__cupti_lib(void *opts, const struct opt_row *row, const char *arg,
			    struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	((struct record_opts *)opts)->cupti_lib = arg;
}

static void opts__python_frames(void *opts, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	struct record_opts *o = opts;

	(void)row, (void)ctx;
	if (!strcmp(arg, "walk"))
		o->python_frames = RECORD_PY_WALK;
	else if (!strcmp(arg, "perf-map"))
		o->python_frames = RECORD_PY_PERF_MAP;
	else if (!strcmp(arg, "off"))
		o->python_frames = RECORD_PY_OFF;
	else
		usage_die("--python-frames=%s: expected walk, perf-map or off", arg);
}

static void opts__launch_stacks(void *opts, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	struct record_opts *o = opts;

	(void)row, (void)ctx;
	if (!strcmp(arg, "walk"))
		o->launch_stacks = RECORD_LAUNCH_WALK;
	else if (!strcmp(arg, "marker"))
		o->launch_stacks = RECORD_LAUNCH_MARKER;
	else
		usage_die("--launch-stacks=%s: expected walk or marker", arg);
}

/* --switch-output, --switch-max-files, --flight-recorder, --trigger,
 * --activate: rotate_opts.h parses each */
static void opts__rotate(void *opts, const struct opt_row *row, const char *arg,
			 struct opt_ctx *ctx)
{
	struct rotate_opts *r = &((struct record_opts *)opts)->rot;

	(void)ctx;
	if (!strcmp(row->name, "switch-output"))
		rotate_opts__switch_output(r, arg);
	else if (!strcmp(row->name, "switch-max-files"))
		rotate_opts__max_files(r, arg);
	else if (!strcmp(row->name, "flight-recorder"))
		rotate_opts__flight(r, arg);
	else if (!strcmp(row->name, "trigger"))
		rotate_opts__trigger(r, arg);
	else
		rotate_opts__activate(r, arg);
}

static void opts__quiet(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	(void)opts, (void)row, (void)arg, (void)ctx;
	xpu_quiet = 1;
}

static void opts__verbose(void *opts, const struct opt_row *row, const char *arg,
			  struct opt_ctx *ctx)
{
	(void)opts, (void)row, (void)arg, (void)ctx;
	xpu_verbose++;
}

static void opts__help(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx);

static void opts__version(void *opts, const struct opt_row *row, const char *arg,
			  struct opt_ctx *ctx)
{
	(void)opts, (void)row, (void)arg, (void)ctx;
	printf("xpu-record %s\n", XPU_VERSION);
	exit(XPU_EXIT_OK);
}

static const struct opt_row record__rows[] = {
	OPT_FN_ARG("output", 'o', "FILE", opts__output, "trace file (default xpu.data)"),
	OPT_FN_ARG("freq", 'F', "HZ", opts__freq,
		   "CPU samples per second per CPU (default 99)"),
	OPT_FN_ARG("call-graph", 0, "MODE", opts__call_graph,
		   "fp, or dwarf[,BYTES] (default dwarf,131064: the maximum;\n"
		   "only the stack in use is copied)"),
	OPT_FN_ARG("ring-size", 0, "SIZE", opts__ring_size,
		   "the sample ring buffer, a power of two from 64K to 1G (K, M, G\n"
		   "suffixes; default: a tenth of a second of samples on every CPU\n"
		   "at -F, 1M-64M): raise it if samples are lost on a big machine"),
	OPT_FN_ARG("duration", 'd', "SECONDS", opts__duration,
		   "stop after SECONDS: a launched command and every process\n"
		   "it started get SIGTERM (SIGKILL 5 s later), -p ones nothing"),
	OPT_FN_ARG("pid", 'p', "PID[,PID...]", opts__pids,
		   "profile running processes (and their new children); a CUDA\n"
		   "process gets the GPU recording too, detached at the end"),
	OPT_FN_ARG("pid-tree", 0, "PID[,PID...]", opts__pids,
		   "-p with every process below PID as well (a launcher's\n"
		   "workers: torchrun, mpirun)"),
	OPT_TRUE("kill-on-exit", 0, RO, kill_on_exit,
		 "end what is left of the command's processes when\n"
		 "xpu-record exits, however it exits (even SIGKILL)"),
	OPT_FN_OPT("off-cpu", 0, "MIN_US", opts__off_cpu,
		   "record time blocked off CPU with its stack (on by default:\n"
		   "blocks of 100 us or more; shorter ones are summed per thread)"),
	OPT_FN("no-off-cpu", 0, opts__no_off_cpu, "do not record off-CPU time"),
	OPT_TRUE("no-gpu", 0, RO, no_gpu, "do not inject the CUPTI library"),
	OPT_TRUE("no-nvtx", 0, RO, no_nvtx,
		 "do not record NVTX ranges (NVTX_INJECTION64_PATH is not set)"),
	OPT_FN_OPT("gpu-pc-sampling", 0, "PERIOD", opts__pc_sampling,
		   "sample GPU warp PCs with their stall reasons (CUPTI PC\n"
		   "sampling, continuous mode): a sample every 2^PERIOD cycles\n"
		   "per SM (5-31; default: CUPTI's), with source lines"),
	OPT_FN_ARG("gpu-pc-duty", 0, "after:MS|ON:OFF|off", opts__pc_duty,
		   "which launches PC sampling leaves alone, so that the report\n"
		   "measures what it did to each kernel: the first MS of each\n"
		   "context (default after:500; attached: off), or OFF ms of\n"
		   "every ON+OFF (each stop costs the application's thread ~55 ns\n"
		   "a sample); off: sample all"),
	OPT_TRUE("gpu-memory", 0, RO, gpu_memory,
		 "record GPU memory: CUDA allocations and pools (CUPTI) and\n"
		 "PyTorch's caching-allocator blocks, each with its stack"),
	OPT_TRUE("no-autograd", 0, RO, no_autograd,
		 "do not probe PyTorch's autograd nodes (by default a backward\n"
		 "op's GPU and CPU time is shown under the forward op's code)"),
	OPT_FN_ARG("launch-stacks", 0, "MODE", opts__launch_stacks,
		   "how each CUDA call's CPU stack is taken: walk (the default):\n"
		   "in the calling thread, with unwind rules xpu-record hands\n"
		   "it, the uprobe where a walk cannot; marker: the uprobe\n"
		   "always (slower per call; what the walk is tested against)"),
	OPT_FN_ARG("python-frames", 0, "MODE", opts__python_frames,
		   "walk: read Python frames from the interpreter (CPython\n"
		   "3.10-3.15, the default); perf-map: set PYTHONPERFSUPPORT=1\n"
		   "(3.12+ trampolines in /tmp/perf-PID.map); off"),
	OPT_INT("no-python-frames", 0, RO, python_frames, RECORD_PY_OFF, "--python-frames=off"),
	OPT_TRUE("buildid-cache", 0, RO, buildid_cache,
		 "copy the mapped files into the build-id cache at the end\n"
		 "($XDG_CACHE_HOME/xpu-perf, default ~/.cache) for later reports"),
	OPT_FN_ARG("cupti-lib", 0, "PATH", opts__cupti_lib,
		   "CUPTI library (default: libxpu-cupti.so beside xpu-record,\n"
		   "or ../lib/xpu-perf/ relative to it)"),
	OPT_FN_OPT("switch-output", 0, "WHEN", opts__rotate,
		   "write FILE.<timestamp> files, perf's way: a new one at each\n"
		   "SIGUSR2 (signal, the default), each SIZE (100M) or each\n"
		   "TIME (30s); each file is readable alone"),
	OPT_FN_ARG("switch-max-files", 0, "N", opts__rotate,
		   "keep the last N of them (the oldest are removed)"),
	OPT_FN_ARG("flight-recorder", 0, "SECONDS", opts__rotate,
		   "keep only the last SECONDS in memory, compressed, and write\n"
		   "them to FILE.<timestamp> at SIGUSR2, at a --trigger and at\n"
		   "the end; memory: the compressed trace of SECONDS (about\n"
		   "0.1-0.5 MB/s per busy CPU at -F 99), 256 MB at most"),
	OPT_FN_ARG("trigger", 0, "EVENT", opts__rotate,
		   "with --flight-recorder, write the window (and 1 s after)\n"
		   "when 'nvtx:RANGE>MS' (an NVTX range named RANGE lasted over\n"
		   "MS ms), 'gpu-idle>PCT' (a device idle over PCT % of a\n"
		   "second between its work) or 'oom' (an allocation failed for\n"
		   "want of memory: --gpu-memory); with --switch-output, switch\n"
		   "the file 1 s after it; may be repeated"),
	OPT_FN_ARG("activate", 0, "WHEN", opts__rotate,
		   "start recording at @YYYY-MM-DDTHH:MM:SS[Z] (local time, or\n"
		   "UTC with Z), @UNIX_SECONDS, or /PERIOD: the next multiple\n"
		   "of PERIOD of the wall clock (/10s): every node of a job\n"
		   "records the same seconds"),
	OPT_FN("quiet", 'q', opts__quiet, "no summary line"),
	OPT_FN("verbose", 'v', opts__verbose, "more messages (-vv: libbpf's too)"),
	OPT_FN("help", 'h', opts__help, "this help"),
	OPT_FN("version", 0, opts__version, "print the version"),
};

static void opts__help(void *opts, const struct opt_row *row, const char *arg, struct opt_ctx *ctx)
{
	(void)opts, (void)row, (void)arg, (void)ctx;
	fputs("usage: xpu-record [options] -- command [args...]\n"
	      "       xpu-record [options] -p PID[,PID...]\n\n", stdout);
	opt_table__help(stdout, record__rows, ARRAY_SIZE(record__rows), 29);
	fputs("examples:\n"
	      "  xpu-record -- ./app --steps 100          record ./app into xpu.data, then xpu-report\n"
	      "  xpu-record -F 999 -o train.data -- python3 train.py   999 Hz, named trace\n"
	      "  xpu-record -p 1234                       attach to a running process until Ctrl-C\n",
	      stdout);
	exit(XPU_EXIT_OK);
}

/* XPU_* knobs of the recorder's (common/knobs.c): read once, a bad value
 * warned about and its default kept. */
static void record_opts__knobs(struct record_opts *o)
{
	knobs__parse(KNOB_P_RECORD);
	/* knob__choice: -1 unset, else the index in "0|address|cfi" */
	o->stack_prune = knob__choice(KNOB_STACK_PRUNE) + 1;
	o->stack_delta = knob__bool(KNOB_STACK_DELTA);
	o->gpu_plain = knob__bool(KNOB_GPU_PLAIN);
	o->unwind_simple_check = knob__bool(KNOB_UNWIND_SIMPLE_CHECK);
	o->inject_memfd = knob__bool(KNOB_INJECT_MEMFD);
	o->inject_die_at = (int)knob__int(KNOB_INJECT_DIE_AT);
	o->inject_hold_ms = (int)knob__int(KNOB_INJECT_HOLD_MS);
}

void record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->output = "xpu.data";
	o->freq = XPU_DEFAULT_SAMPLE_FREQ;
	o->dwarf = true;
	o->stack_bytes = XPU_BPF_STACK_DEFAULT;
	o->offcpu_min_us = RECORD_OFFCPU_DEFAULT_US;
	optind = opt_table__parse(record__rows, ARRAY_SIZE(record__rows), o, argc, argv,
				  "xpu-record", true);
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && o->nr_pids)
		usage_die("give either a command or -p PID, not both");
	if (o->nr_pids && o->kill_on_exit)
		usage_die("--kill-on-exit ends a launched command's processes: not for -p");
	if (!o->argv && !o->nr_pids)
		usage_die("no command given: use xpu-record [options] -- command [args...], or -p PID");
	rotate_opts__check(&o->rot, o->gpu_memory);
	record_opts__knobs(o);
}
