// SPDX-License-Identifier: MIT
/* Command line of xpu-record. Every mistake is a one-line usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "bpf/xpu_events.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "cupti/wire.h"
#include "record/record.h"
#include "record/rotate.h"

static const char usage_text[] =
"usage: xpu-record [options] -- command [args...]\n"
"       xpu-record [options] -p PID[,PID...]\n"
"\n"
"  -o, --output FILE          trace file (default xpu.data)\n"
"  -F, --freq HZ              CPU samples per second per CPU (default 99)\n"
"      --call-graph MODE      fp, or dwarf[,BYTES] (default dwarf,131064: the maximum; only the stack in use is copied)\n"
"      --ring-size SIZE       the sample ring buffer, a power of two from 64K to 1G (K, M, G\n"
"                             suffixes; default: a tenth of a second of samples on every CPU\n"
"                             at -F, 1M-64M): raise it if samples are lost on a big machine\n"
"  -d, --duration SECONDS     stop after SECONDS: a launched command and every process\n"
"                             it started get SIGTERM (SIGKILL 5 s later), -p ones nothing\n"
"  -p, --pid PID[,PID...]     profile running processes (and their new children); a CUDA\n"
"                             process gets the GPU recording too, detached at the end\n"
"      --pid-tree PID[,PID...] -p with every process below PID as well (a launcher's\n"
"                             workers: torchrun, mpirun)\n"
"      --kill-on-exit         end what is left of the command's processes when\n"
"                             xpu-record exits, however it exits (even SIGKILL)\n"
"      --off-cpu[=MIN_US]     record time blocked off CPU with its stack (on by default:\n"
"                             blocks of 100 us or more; shorter ones are summed per thread)\n"
"      --no-off-cpu           do not record off-CPU time\n"
"      --no-gpu               do not inject the CUPTI library\n"
"      --no-nvtx              do not record NVTX ranges (NVTX_INJECTION64_PATH is not set)\n"
"      --gpu-pc-sampling[=PERIOD] sample GPU warp PCs with their stall reasons (CUPTI PC\n"
"                             sampling, continuous mode): a sample every 2^PERIOD cycles\n"
"                             per SM (5-31; default: CUPTI's), with source lines\n"
"      --gpu-pc-duty=after:MS|ON:OFF|off  which launches PC sampling leaves alone, so\n"
"                             that the report measures what it did to each kernel: the\n"
"                             first MS of each context (default after:500; attached:\n"
"                             off), or OFF ms of every ON+OFF (each stop costs the\n"
"                             application's thread ~55 ns a sample); off: sample all\n"
"      --no-autograd          do not probe PyTorch's autograd nodes (by default a backward\n"
"                             op's GPU and CPU time is shown under the forward op's code)\n"
"      --launch-stacks=MODE   how each CUDA call's CPU stack is taken: walk (the default):\n"
"                             in the calling thread, with unwind rules xpu-record hands\n"
"                             it, the uprobe where a walk cannot; marker: the uprobe\n"
"                             always (slower per call; what the walk is tested against)\n"
"      --python-frames=MODE   walk: read Python frames from the interpreter (CPython\n"
"                             3.10-3.13, the default); perf-map: set PYTHONPERFSUPPORT=1\n"
"                             (3.12+ trampolines in /tmp/perf-PID.map); off\n"
"      --no-python-frames     --python-frames=off\n"
"      --buildid-cache        copy the mapped files into the build-id cache at the end\n"
"                             ($XDG_CACHE_HOME/xpu-perf, default ~/.cache) for later reports\n"
"      --cupti-lib PATH       CUPTI library (default: libxpu-cupti.so beside xpu-record,\n"
"                             or ../lib/xpu-perf/ relative to it)\n"
"      --switch-output[=WHEN] write FILE.<timestamp> files, perf's way: a new one at each\n"
"                             SIGUSR2 (signal, the default), each SIZE (100M) or each\n"
"                             TIME (30s); each file is readable alone\n"
"      --switch-max-files=N   keep the last N of them (the oldest are removed)\n"
"      --flight-recorder=SECONDS\n"
"                             keep only the last SECONDS in memory, compressed, and write\n"
"                             them to FILE.<timestamp> at SIGUSR2, at a --trigger and at\n"
"                             the end; memory: the compressed trace of SECONDS (about\n"
"                             0.1-0.5 MB/s per busy CPU at -F 99), 256 MB at most\n"
"      --trigger EVENT        with --flight-recorder, write the window (and 1 s after)\n"
"                             when 'nvtx:RANGE>MS' (an NVTX range named RANGE lasted over\n"
"                             MS ms) or 'gpu-idle>PCT' (a device idle over PCT % of a\n"
"                             second between its work); may be repeated\n"
"      --activate WHEN        start recording at @YYYY-MM-DDTHH:MM:SS[Z] (local time, or\n"
"                             UTC with Z), @UNIX_SECONDS, or /PERIOD: the next multiple\n"
"                             of PERIOD of the wall clock (/10s): every node of a job\n"
"                             records the same seconds\n"
"  -q, --quiet                no summary line\n"
"  -v, --verbose              more messages (-vv: libbpf's too)\n"
"  -h, --help                 this help\n"
"      --version              print the version\n"
"examples:\n"
"  xpu-record -- ./app --steps 100          record ./app into xpu.data, then xpu-report\n"
"  xpu-record -F 999 -o train.data -- python3 train.py   999 Hz, named trace\n"
"  xpu-record -p 1234                       attach to a running process until Ctrl-C\n";

enum { OPT_CALL_GRAPH = 256, OPT_NO_GPU, OPT_CUPTI_LIB, OPT_VERSION, OPT_BUILDID_CACHE,
       OPT_NO_PYTHON_FRAMES, OPT_PYTHON_FRAMES, OPT_KILL_ON_EXIT, OPT_OFF_CPU, OPT_NO_OFF_CPU, OPT_NO_NVTX, OPT_GPU_PC_SAMPLING, OPT_GPU_PC_DUTY,
       OPT_RING_SIZE, OPT_LAUNCH_STACKS, OPT_NO_AUTOGRAD, OPT_PID_TREE, OPT_SWITCH_OUTPUT,
       OPT_SWITCH_MAX_FILES, OPT_FLIGHT, OPT_TRIGGER, OPT_ACTIVATE };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "ring-size", required_argument, NULL, OPT_RING_SIZE },
	{ "duration", required_argument, NULL, 'd' },
	{ "pid", required_argument, NULL, 'p' },
	{ "pid-tree", required_argument, NULL, OPT_PID_TREE },
	{ "kill-on-exit", no_argument, NULL, OPT_KILL_ON_EXIT },
	{ "no-gpu", no_argument, NULL, OPT_NO_GPU },
	{ "off-cpu", optional_argument, NULL, OPT_OFF_CPU },
	{ "no-off-cpu", no_argument, NULL, OPT_NO_OFF_CPU },
	{ "no-nvtx", no_argument, NULL, OPT_NO_NVTX },
	{ "gpu-pc-sampling", optional_argument, NULL, OPT_GPU_PC_SAMPLING },
	{ "gpu-pc-duty", required_argument, NULL, OPT_GPU_PC_DUTY },
	{ "no-autograd", no_argument, NULL, OPT_NO_AUTOGRAD },
	{ "no-python-frames", no_argument, NULL, OPT_NO_PYTHON_FRAMES },
	{ "python-frames", required_argument, NULL, OPT_PYTHON_FRAMES },
	{ "launch-stacks", required_argument, NULL, OPT_LAUNCH_STACKS },
	{ "cupti-lib", required_argument, NULL, OPT_CUPTI_LIB },
	{ "buildid-cache", no_argument, NULL, OPT_BUILDID_CACHE },
	{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
	{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
	{ "flight-recorder", required_argument, NULL, OPT_FLIGHT },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ "activate", required_argument, NULL, OPT_ACTIVATE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 }
};

static const char short_opts[] = "+:o:F:d:p:qvh";

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

/* getopt_long() returned '?': an unknown short option (optopt is it), an
 * unknown long option (optopt 0), or a long option that takes no value given
 * one, "--quiet=1" (optopt is its val, which may be a short option's). */
static void opts__bad_option(char **argv)
{
	const char *arg = argv[optind - 1];

	if (!optopt)
		usage_die("unknown option %s (see --help)", arg);
	if (optopt < 256 && (optopt == ':' || optopt == '+' || !strchr(short_opts, optopt)))
		usage_die("unknown option -%c (see --help)", optopt);
	usage_die("option %.*s takes no value (see --help)", (int)strcspn(arg, "="), arg);
}

static void opts__call_graph(struct record_opts *o, const char *arg)
{
	char *end;
	long v;

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
static void opts__ring_size(struct record_opts *o, const char *arg)
{
	unsigned long long v;
	char *end;

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

static void opts__pids(struct record_opts *o, const char *arg, bool tree)
{
	char *s = xstrdup(arg), *tok, *save = NULL, *end;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = strtol(tok, &end, 10);

		pid_t *below;
		int n;

		if (*end || v <= 0 || v > 0x7fffffff)
			usage_die("%s %s: expected process IDs separated by commas",
				  tree ? "--pid-tree" : "-p", arg);
		if (!tree || (n = tree__descendants((pid_t)v, &below)) <= 0) {
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

void record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->output = "xpu.data";
	o->freq = XPU_DEFAULT_SAMPLE_FREQ;
	o->dwarf = true;
	o->stack_bytes = XPU_BPF_STACK_DEFAULT;
	o->offcpu_min_us = RECORD_OFFCPU_DEFAULT_US;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'F': {
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 100000)
				usage_die("-F %s: expected a frequency from 1 to 100000 Hz", optarg);
			o->freq = v;
			break;
		}
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0))
				usage_die("-d %s: expected a positive number of seconds", optarg);
			break;
		case 'p':
			opts__pids(o, optarg, false);
			break;
		case OPT_PID_TREE:
			opts__pids(o, optarg, true);
			break;
		case OPT_CALL_GRAPH:
			opts__call_graph(o, optarg);
			break;
		case OPT_RING_SIZE:
			opts__ring_size(o, optarg);
			break;
		case OPT_KILL_ON_EXIT:
			o->kill_on_exit = true;
			break;
		case OPT_NO_GPU:
			o->no_gpu = true;
			break;
		case OPT_NO_AUTOGRAD:
			o->no_autograd = true;
			break;
		case OPT_OFF_CPU: {
			long v = optarg ? strtol(optarg, &end, 10) : RECORD_OFFCPU_DEFAULT_US;

			if (optarg && (*end || v < 1 || v > 60000000))
				usage_die("--off-cpu=%s: expected a minimum block length from 1 to "
					  "60000000 us", optarg);
			o->offcpu_min_us = v;
			break;
		}
		case OPT_NO_OFF_CPU:
			o->offcpu_min_us = 0;
			break;
		case OPT_NO_NVTX:
			o->no_nvtx = true;
			break;
		case OPT_GPU_PC_SAMPLING: {
			long v = optarg ? strtol(optarg, &end, 10) : -1;

			if (optarg && (*end || v < XPU_PCSAMP_PERIOD_MIN || v > XPU_PCSAMP_PERIOD_MAX))
				usage_die("--gpu-pc-sampling=%s: expected a period exponent from %d to %d "
					  "(a sample every 2^PERIOD cycles)", optarg,
					  XPU_PCSAMP_PERIOD_MIN, XPU_PCSAMP_PERIOD_MAX);
			o->pc_sampling = (int)v;
			break;
		}
		case OPT_GPU_PC_DUTY: {
			struct xpu_pcsamp_duty d;

			if (xpu_pcsamp__parse_duty(optarg, &d) || !*optarg)
				usage_die("--gpu-pc-duty=%s: expected after:MS, ON_MS:OFF_MS (1 to %d "
					  "each) or off", optarg, XPU_PCSAMP_DUTY_MAX_MS);
			o->pc_duty = optarg;
			break;
		}
		case OPT_CUPTI_LIB:
			o->cupti_lib = optarg;
			break;
		case OPT_NO_PYTHON_FRAMES:
			o->python_frames = RECORD_PY_OFF;
			break;
		case OPT_PYTHON_FRAMES:
			if (!strcmp(optarg, "walk"))
				o->python_frames = RECORD_PY_WALK;
			else if (!strcmp(optarg, "perf-map"))
				o->python_frames = RECORD_PY_PERF_MAP;
			else if (!strcmp(optarg, "off"))
				o->python_frames = RECORD_PY_OFF;
			else
				usage_die("--python-frames=%s: expected walk, perf-map or off", optarg);
			break;
		case OPT_LAUNCH_STACKS:
			if (!strcmp(optarg, "walk"))
				o->launch_stacks = RECORD_LAUNCH_WALK;
			else if (!strcmp(optarg, "marker"))
				o->launch_stacks = RECORD_LAUNCH_MARKER;
			else
				usage_die("--launch-stacks=%s: expected walk or marker", optarg);
			break;
		case OPT_BUILDID_CACHE:
			o->buildid_cache = true;
			break;
		case OPT_SWITCH_OUTPUT:
			rotate_opts__switch_output(&o->rot, optarg);
			break;
		case OPT_SWITCH_MAX_FILES:
			rotate_opts__max_files(&o->rot, optarg);
			break;
		case OPT_FLIGHT:
			rotate_opts__flight(&o->rot, optarg);
			break;
		case OPT_TRIGGER:
			rotate_opts__trigger(&o->rot, optarg);
			break;
		case OPT_ACTIVATE:
			rotate_opts__activate(&o->rot, optarg);
			break;
		case 'q':
			xpu_quiet = 1;
			break;
		case 'v':
			xpu_verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(XPU_EXIT_OK);
		case OPT_VERSION:
			printf("xpu-record %s\n", XPU_VERSION);
			exit(XPU_EXIT_OK);
		case ':':
			usage_die("option %s needs a value (see --help)", argv[optind - 1]);
		default:
			opts__bad_option(argv);
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && o->nr_pids)
		usage_die("give either a command or -p PID, not both");
	if (o->nr_pids && o->kill_on_exit)
		usage_die("--kill-on-exit ends a launched command's processes: not for -p");
	if (!o->argv && !o->nr_pids)
		usage_die("no command given: use xpu-record [options] -- command [args...], or -p PID");
	rotate_opts__check(&o->rot);
}
