// SPDX-License-Identifier: MIT
/*
 * xpu-record's command line (record/options.c): every default, every option,
 * and every usage error with its exact one-line message and exit code. A
 * parse that dies runs in a forked child whose stderr is captured.
 */
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "format/writer.h"
#include "bpf/xpu_events.h"
#include "common/log.h"
#include "cupti/channel/wire.h"
#include "record/options.h"
#include "record/meta.h"
#include "test.h"

#define MAX_ARGS 32

/* Parses "xpu-record" followed by the NULL-terminated arguments, in this
 * process. argv must outlive the options (o->argv points into it). */
static void parse(struct record_opts *o, char **argv, ...)
{
	va_list ap;
	int argc = 0;

	argv[argc++] = "xpu-record";
	va_start(ap, argv);
	while (argc < MAX_ARGS - 1 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	optind = 0;			/* glibc: full reinitialization */
	xpu_quiet = 0;
	xpu_verbose = 0;
	record_opts__parse(o, argc, argv);
}

struct outcome {
	int status;			/* exit code, or -1: returned, -2: killed */
	char out[16384];		/* stdout + stderr (--help: 4.4 KB) */
};

/* Parses in a child: how it ended and what it printed. */
static void parse_child(struct outcome *r, ...)
{
	char *argv[MAX_ARGS];
	int pfd[2], st;
	size_t have = 0;
	ssize_t n;
	pid_t pid;
	va_list ap;

	memset(r, 0, sizeof(*r));
	if (pipe(pfd)) {
		r->status = -3;
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct record_opts o;
		int argc = 0;

		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		argv[argc++] = "xpu-record";
		va_start(ap, r);
		while (argc < MAX_ARGS - 1 && (argv[argc] = va_arg(ap, char *)))
			argc++;
		va_end(ap);
		argv[argc] = NULL;
		optind = 0;
		record_opts__parse(&o, argc, argv);
		fflush(NULL);
		_exit(100);		/* returned: no error */
	}
	close(pfd[1]);
	while (have < sizeof(r->out) - 1 && (n = read(pfd[0], r->out + have, sizeof(r->out) - 1 - have)) > 0)
		have += n;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	r->status = WIFEXITED(st) ? (WEXITSTATUS(st) == 100 ? -1 : WEXITSTATUS(st)) : -2;
}

/* The child died with a usage error and exactly this message. */
static int usage_error(const struct outcome *r, const char *msg)
{
	char want[1024];

	snprintf(want, sizeof(want), "xpu-record: error: %s\n", msg);
	if (r->status == XPU_EXIT_USAGE && !strcmp(r->out, want))
		return 1;
	fprintf(stderr, "  got exit %d, output \"%s\"\n  want exit %d, \"%s\"\n", r->status, r->out,
		XPU_EXIT_USAGE, want);
	return 0;
}

#define TEST_USAGE_ERROR(msg, ...) do {					\
	struct outcome _r;						\
	parse_child(&_r, __VA_ARGS__, NULL);				\
	TEST_ASSERT(usage_error(&_r, msg));				\
} while (0)

static void test_defaults(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "--", "true", "x", NULL);
	TEST_ASSERT(!strcmp(o.output, "xpu.data"));
	TEST_ASSERT_EQ(o.freq, XPU_DEFAULT_SAMPLE_FREQ);
	TEST_ASSERT_EQ(o.freq, 99);
	TEST_ASSERT(o.dwarf);
	TEST_ASSERT_EQ(o.stack_bytes, XPU_BPF_STACK_DEFAULT);
	TEST_ASSERT_EQ(o.ring_size, 0);		/* sized for -F and the CPUs */
	TEST_ASSERT(o.duration == 0);
	TEST_ASSERT(!o.no_gpu);
	TEST_ASSERT(o.cupti_lib == NULL);
	TEST_ASSERT(!o.buildid_cache);
	TEST_ASSERT_EQ(o.python_frames, RECORD_PY_WALK);
	TEST_ASSERT(!o.perfmap_cleanup);
	TEST_ASSERT(!o.kill_on_exit);
	TEST_ASSERT(o.pids == NULL);
	TEST_ASSERT_EQ(o.nr_pids, 0);
	TEST_ASSERT(o.argv == argv + 2);
	TEST_ASSERT(!strcmp(o.argv[0], "true") && !strcmp(o.argv[1], "x") && !o.argv[2]);
	TEST_ASSERT_EQ(xpu_quiet, 0);
	TEST_ASSERT_EQ(xpu_verbose, 0);
}

static void test_every_option(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "-o", "out.data", "-F", "999", "--call-graph", "fp", "-d", "2.5", "--no-gpu",
	      "--cupti-lib", "/x/lib.so", "--no-python-frames", "--buildid-cache", "--kill-on-exit",
	      "-q", "-v", "-v", "--", "cmd", NULL);
	TEST_ASSERT(!strcmp(o.output, "out.data"));
	TEST_ASSERT_EQ(o.freq, 999);
	TEST_ASSERT(!o.dwarf);
	TEST_ASSERT(o.duration == 2.5);
	TEST_ASSERT(o.no_gpu);
	TEST_ASSERT(!strcmp(o.cupti_lib, "/x/lib.so"));
	TEST_ASSERT_EQ(o.python_frames, RECORD_PY_OFF);
	TEST_ASSERT(o.buildid_cache);
	TEST_ASSERT(o.kill_on_exit);
	TEST_ASSERT_EQ(xpu_quiet, 1);
	TEST_ASSERT_EQ(xpu_verbose, 2);
	TEST_ASSERT(!strcmp(o.argv[0], "cmd"));

	parse(&o, argv, "--output=o2", "--freq=1", "--duration", "1e-3", "--quiet", "--verbose", "c", NULL);
	TEST_ASSERT(!strcmp(o.output, "o2"));
	TEST_ASSERT_EQ(o.freq, 1);
	TEST_ASSERT(o.duration == 1e-3);
	TEST_ASSERT_EQ(xpu_quiet, 1);
	TEST_ASSERT_EQ(xpu_verbose, 1);

	parse(&o, argv, "-F", "100000", "true", NULL);
	TEST_ASSERT_EQ(o.freq, 100000);
}

static void test_call_graph(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "--call-graph", "fp", "--call-graph", "dwarf", "c", NULL);
	TEST_ASSERT(o.dwarf);
	TEST_ASSERT_EQ(o.stack_bytes, XPU_BPF_STACK_DEFAULT);
	parse(&o, argv, "--call-graph", "dwarf,4096", "c", NULL);
	TEST_ASSERT(o.dwarf);
	TEST_ASSERT_EQ(o.stack_bytes, 4096);
	parse(&o, argv, "--call-graph=dwarf,71", "c", NULL);	/* rounded down to 8 */
	TEST_ASSERT_EQ(o.stack_bytes, 64);
	parse(&o, argv, "--call-graph", "dwarf,0x1000", "c", NULL);
	TEST_ASSERT_EQ(o.stack_bytes, 4096);
	parse(&o, argv, "--call-graph", "dwarf,131064", "c", NULL);
	TEST_ASSERT_EQ(o.stack_bytes, XPU_BPF_STACK_MAX);
}

static void test_pids(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "-p", "12", NULL);
	TEST_ASSERT_EQ(o.nr_pids, 1);
	TEST_ASSERT_EQ(o.pids[0], 12);
	TEST_ASSERT(o.argv == NULL);
	free(o.pids);
	parse(&o, argv, "-p", "1,22,,333", "--pid", "4", NULL);	/* empty items skipped */
	TEST_ASSERT_EQ(o.nr_pids, 4);
	TEST_ASSERT_EQ(o.pids[0], 1);
	TEST_ASSERT_EQ(o.pids[1], 22);
	TEST_ASSERT_EQ(o.pids[2], 333);
	TEST_ASSERT_EQ(o.pids[3], 4);
	free(o.pids);
	parse(&o, argv, "-p", "2147483647", NULL);
	TEST_ASSERT_EQ(o.pids[0], 2147483647);
	free(o.pids);
}

/* The first non-option word starts the command ("+" in the option string):
 * its own options are not ours. */
static void test_command_options_left_alone(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "-F", "7", "ls", "-l", "-o", "x", "--no-gpu", NULL);
	TEST_ASSERT_EQ(o.freq, 7);
	TEST_ASSERT(!o.no_gpu);
	TEST_ASSERT(!strcmp(o.output, "xpu.data"));
	TEST_ASSERT(!strcmp(o.argv[0], "ls") && !strcmp(o.argv[1], "-l") && !strcmp(o.argv[4], "--no-gpu"));
}

static void test_help_and_version(void)
{
	struct outcome r;
	char want[64];

	parse_child(&r, "--help", NULL);
	TEST_ASSERT_EQ(r.status, XPU_EXIT_OK);
	TEST_ASSERT(!strncmp(r.out, "usage: xpu-record [options] -- command [args...]\n", 49));
	TEST_ASSERT(strstr(r.out, "--kill-on-exit"));
	parse_child(&r, "-h", "--", "true", NULL);
	TEST_ASSERT_EQ(r.status, XPU_EXIT_OK);
	TEST_ASSERT(!strncmp(r.out, "usage: ", 7));
	parse_child(&r, "--version", NULL);
	TEST_ASSERT_EQ(r.status, XPU_EXIT_OK);
	snprintf(want, sizeof(want), "xpu-record %s\n", XPU_VERSION);
	TEST_ASSERT(!strcmp(r.out, want));
}

/* --switch-output, --switch-max-files, --flight-recorder, --trigger,
 * --activate (record/capture/rotate.c) */
static void test_bounded_capture(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "--switch-output", "c", NULL);
	TEST_ASSERT_EQ(o.rot.switch_mode, ROTATE_SWITCH_SIGNAL);
	parse(&o, argv, "--switch-output=1s", "--switch-max-files=3", "c", NULL);
	TEST_ASSERT_EQ(o.rot.switch_mode, ROTATE_SWITCH_TIME);
	TEST_ASSERT(o.rot.switch_secs == 1.0);
	TEST_ASSERT_EQ(o.rot.max_files, 3);
	parse(&o, argv, "--switch-output=2m", "c", NULL);
	TEST_ASSERT(o.rot.switch_secs == 120.0);
	parse(&o, argv, "--switch-output=100M", "c", NULL);
	TEST_ASSERT_EQ(o.rot.switch_mode, ROTATE_SWITCH_SIZE);
	TEST_ASSERT_EQ(o.rot.switch_bytes, 100ull << 20);
	parse(&o, argv, "--flight-recorder=30", "--trigger", "nvtx:train step>250.5",
	      "--trigger", "gpu-idle>40", "c", NULL);
	TEST_ASSERT(o.rot.flight_secs == 30.0);
	TEST_ASSERT_EQ(o.rot.flight_max_bytes, FLIGHT_MAX_BYTES_DEFAULT);
	TEST_ASSERT_EQ(o.rot.nr_triggers, 2);
	TEST_ASSERT_EQ(o.rot.triggers[0].kind, ROTATE_TRIG_NVTX);
	TEST_ASSERT(!strcmp(o.rot.triggers[0].name, "train step"));
	TEST_ASSERT(o.rot.triggers[0].ms == 250.5);
	TEST_ASSERT_EQ(o.rot.triggers[1].kind, ROTATE_TRIG_GPU_IDLE);
	TEST_ASSERT(o.rot.triggers[1].pct == 40.0);
	parse(&o, argv, "-q", "--activate", "@4102444800", "c", NULL);	/* 2100-01-01 */
	TEST_ASSERT(o.rot.activate && o.rot.activate_ns == 4102444800ull * 1000000000ull);
	parse(&o, argv, "-q", "--activate", "@2100-01-01T00:00:00Z", "c", NULL);
	TEST_ASSERT(o.rot.activate_ns == 4102444800ull * 1000000000ull);
	parse(&o, argv, "-q", "--activate", "/10s", "c", NULL);
	TEST_ASSERT(o.rot.activate_ns % 10000000000ull == 0);

	TEST_USAGE_ERROR("--switch-output=1x: expected signal, a size (100M: B, K, M, G) or a "
			 "time (30s: s, m, h, d)", "--switch-output=1x", "c");
	TEST_USAGE_ERROR("--switch-output=1K: a size of at least 64K", "--switch-output=1K", "c");
	/* 2^64 bytes, 2^64 ns: more than the switch's counters hold (they
	 * wrapped to 0: a switch at every tick) */
	TEST_USAGE_ERROR("--switch-output=17179869184G: too large: a size of at most "
			 "8589934592G (2^63 bytes)", "--switch-output=17179869184G", "c");
	TEST_USAGE_ERROR("--switch-output=1e300G: too large: a size of at most "
			 "8589934592G (2^63 bytes)", "--switch-output=1e300G", "c");
	TEST_USAGE_ERROR("--switch-output=213504d: too long: a time of at most 106751d "
			 "(2^63 ns)", "--switch-output=213504d", "c");
	TEST_USAGE_ERROR("--switch-output=1e300s: too long: a time of at most 106751d "
			 "(2^63 ns)", "--switch-output=1e300s", "c");
	parse(&o, argv, "--switch-output=8589934592G", "c", NULL);	/* the largest */
	TEST_ASSERT_EQ(o.rot.switch_bytes, 1ull << 63);
	parse(&o, argv, "--switch-output=106751d", "c", NULL);
	TEST_ASSERT(o.rot.switch_secs == 106751.0 * 86400);
	TEST_USAGE_ERROR("--switch-max-files needs --switch-output", "--switch-max-files=2", "c");
	TEST_USAGE_ERROR("--switch-max-files=0: expected a number of files from 1",
			 "--switch-max-files=0", "c");
	TEST_USAGE_ERROR("--flight-recorder=0.1: from 0.5 s to a day", "--flight-recorder=0.1", "c");
	TEST_USAGE_ERROR("--trigger writes the flight recorder's window or switches the output "
			 "file: add --flight-recorder=SECONDS or --switch-output", "--trigger",
			 "gpu-idle>5", "c");
	TEST_USAGE_ERROR("--trigger oom needs --gpu-memory (allocations are recorded only with it)",
			 "--flight-recorder=5", "--trigger", "oom", "c");
	parse(&o, argv, "--switch-output=1G", "--gpu-memory", "--trigger", "oom", "c", NULL);
	TEST_ASSERT_EQ(o.rot.nr_triggers, 1);
	TEST_ASSERT_EQ(o.rot.triggers[0].kind, ROTATE_TRIG_OOM);
	TEST_ASSERT(o.gpu_memory);
	TEST_USAGE_ERROR("--trigger gpu-idle>100: the idle share must be below 100 (per cent)",
			 "--flight-recorder=5", "--trigger", "gpu-idle>100", "c");
	TEST_USAGE_ERROR("--trigger nvtx:>5: expected 'nvtx:RANGE>MS' (an NVTX range named RANGE "
			 "longer than MS ms), 'gpu-idle>PCT' (a GPU idle more than PCT % of a "
			 "second) or 'oom' (an allocation that failed for want of memory)",
			 "--flight-recorder=5", "--trigger", "nvtx:>5", "c");
	TEST_USAGE_ERROR("--switch-output and --flight-recorder: choose one (the flight recorder "
			 "writes a new file at each SIGUSR2 already)", "--switch-output",
			 "--flight-recorder=5", "c");
	TEST_USAGE_ERROR("--activate @1000: that instant has passed", "--activate", "@1000", "c");
	TEST_USAGE_ERROR("--activate 3pm: expected @YYYY-MM-DDTHH:MM:SS[Z], @UNIX_SECONDS or "
			 "/PERIOD (e.g. /10s)", "--activate", "3pm", "c");
}

static void test_errors_frequency_duration(void)
{
	TEST_USAGE_ERROR("-F 0: expected a frequency from 1 to 100000 Hz", "-F", "0", "c");
	TEST_USAGE_ERROR("-F 100001: expected a frequency from 1 to 100000 Hz", "-F", "100001", "c");
	TEST_USAGE_ERROR("-F 99x: expected a frequency from 1 to 100000 Hz", "-F", "99x", "c");
	TEST_USAGE_ERROR("-F : expected a frequency from 1 to 100000 Hz", "-F", "", "c");
	TEST_USAGE_ERROR("-F -5: expected a frequency from 1 to 100000 Hz", "--freq", "-5", "c");
	TEST_USAGE_ERROR("-d 0: expected a positive number of seconds", "-d", "0", "c");
	TEST_USAGE_ERROR("-d -1: expected a positive number of seconds", "-d", "-1", "c");
	TEST_USAGE_ERROR("-d 2s: expected a positive number of seconds", "-d", "2s", "c");
	TEST_USAGE_ERROR("-d nan: expected a positive number of seconds", "--duration", "nan", "c");
}

static void test_python_frames(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;

	parse(&o, argv, "--python-frames=perf-map", "c", NULL);
	TEST_ASSERT_EQ(o.python_frames, RECORD_PY_PERF_MAP);
	parse(&o, argv, "--python-frames", "off", "c", NULL);
	TEST_ASSERT_EQ(o.python_frames, RECORD_PY_OFF);
	parse(&o, argv, "--no-python-frames", "--python-frames=walk", "c", NULL);
	TEST_ASSERT_EQ(o.python_frames, RECORD_PY_WALK);
	TEST_USAGE_ERROR("--python-frames=py-spy: expected walk, perf-map or off",
			 "--python-frames=py-spy", "c");
}

static void test_errors_call_graph(void)
{
	TEST_USAGE_ERROR("--call-graph lbr: expected fp or dwarf[,BYTES]", "--call-graph", "lbr", "c");
	TEST_USAGE_ERROR("--call-graph dwarfx: expected fp or dwarf[,BYTES]", "--call-graph", "dwarfx", "c");
	TEST_USAGE_ERROR("--call-graph : expected fp or dwarf[,BYTES]", "--call-graph", "", "c");
	TEST_USAGE_ERROR("--call-graph dwarf,: BYTES must be a number from 64 to 131064",
			 "--call-graph", "dwarf,", "c");
	TEST_USAGE_ERROR("--call-graph dwarf,63: BYTES must be a number from 64 to 131064",
			 "--call-graph", "dwarf,63", "c");
	TEST_USAGE_ERROR("--call-graph dwarf,131065: BYTES must be a number from 64 to 131064",
			 "--call-graph", "dwarf,131065", "c");
	TEST_USAGE_ERROR("--call-graph dwarf,4k: BYTES must be a number from 64 to 131064",
			 "--call-graph", "dwarf,4k", "c");
}

/* --ring-size: a power of two from 64K to 1G, bytes or K/M/G. */
static void test_ring_size(void)
{
	const char *bad[] = { "", "x", "4X", "3M", "32K", "2G", "1000000", "-4M", "16MB", "99999999999999999999M" };
	char *argv[MAX_ARGS];
	struct record_opts o;
	char want[160];

	parse(&o, argv, "--ring-size", "16M", "c", NULL);
	TEST_ASSERT_EQ(o.ring_size, 16u << 20);
	parse(&o, argv, "--ring-size", "64k", "c", NULL);
	TEST_ASSERT_EQ(o.ring_size, 64u << 10);
	parse(&o, argv, "--ring-size", "1G", "c", NULL);
	TEST_ASSERT_EQ(o.ring_size, 1u << 30);
	parse(&o, argv, "--ring-size=1048576", "c", NULL);
	TEST_ASSERT_EQ(o.ring_size, 1u << 20);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "--ring-size %s: expected a power of two from 64K to 1G "
			 "(e.g. 16M)", bad[i]);
		TEST_USAGE_ERROR(want, "--ring-size", bad[i], "c");
	}
}

static void test_errors_pids(void)
{
	const char *msg = "-p %s: expected process IDs separated by commas";
	const char *bad[] = { "0", "-1", "abc", "12x", ",", "", "2147483648", "1,,x" };
	char want[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), msg, bad[i]);
		TEST_USAGE_ERROR(want, "-p", bad[i]);
	}
}

static void test_errors_options(void)
{
	TEST_USAGE_ERROR("option -o needs a value (see --help)", "-o");
	TEST_USAGE_ERROR("option --output needs a value (see --help)", "--output");
	TEST_USAGE_ERROR("option --cupti-lib needs a value (see --help)", "--cupti-lib");
	TEST_USAGE_ERROR("unknown option -Z (see --help)", "-Z", "c");
	TEST_USAGE_ERROR("unknown option -Z (see --help)", "-qZ", "c");
	TEST_USAGE_ERROR("unknown option --bogus (see --help)", "--bogus", "c");
	TEST_USAGE_ERROR("unknown option -: (see --help)", "-:", "c");
	TEST_USAGE_ERROR("unknown option -Z (see --help)", "--no-gpu", "-Zq", "c");
	/* a known option given a value it does not take is not "unknown" */
	TEST_USAGE_ERROR("option --no-gpu takes no value (see --help)", "--no-gpu=1", "c");
	TEST_USAGE_ERROR("option --quiet takes no value (see --help)", "--quiet=1", "c");
	TEST_USAGE_ERROR("option --help takes no value (see --help)", "--help=x", "c");
}

static void test_errors_command(void)
{
	TEST_USAGE_ERROR("no command given: use xpu-record [options] -- command [args...], or -p PID",
			 "-F", "9");
	TEST_USAGE_ERROR("no command given: use xpu-record [options] -- command [args...], or -p PID",
			 "--");
	TEST_USAGE_ERROR("give either a command or -p PID, not both", "-p", "1", "--", "true");
	TEST_USAGE_ERROR("--kill-on-exit ends a launched command's processes: not for -p",
			 "--kill-on-exit", "-p", "1");
}

/* --no-nvtx, and what META nvtx says for each way NVTX is (not) injected. */
static void test_nvtx(void)
{
	char *argv[MAX_ARGS], buf[256];
	struct record_opts o;
	const char *user = getenv(XPU_NVTX_INJECTION_ENV);

	unsetenv(XPU_NVTX_INJECTION_ENV);
	parse(&o, argv, "--", "cmd", NULL);
	TEST_ASSERT(!o.no_nvtx);
	TEST_ASSERT(!strcmp(meta__nvtx(&o, true, buf, sizeof(buf)),
			    "on (NVTX_INJECTION64_PATH set by xpu-record)"));
	TEST_ASSERT(!strcmp(meta__nvtx(&o, false, buf, sizeof(buf)), "off (no GPU recording)"));
	setenv(XPU_NVTX_INJECTION_ENV, "/opt/tool/libinj.so", 1);
	TEST_ASSERT(!strcmp(meta__nvtx(&o, true, buf, sizeof(buf)),
			    "as set by the user's NVTX_INJECTION64_PATH=/opt/tool/libinj.so (kept)"));
	parse(&o, argv, "--no-nvtx", "--", "cmd", NULL);
	TEST_ASSERT(o.no_nvtx);
	TEST_ASSERT(!strcmp(meta__nvtx(&o, true, buf, sizeof(buf)), "off (--no-nvtx)"));
	parse(&o, argv, "-p", "1", NULL);
	TEST_ASSERT(!strncmp(meta__nvtx(&o, true, buf, sizeof(buf)), "off (-p", 7));
	if (user)
		setenv(XPU_NVTX_INJECTION_ENV, user, 1);
	else
		unsetenv(XPU_NVTX_INJECTION_ENV);
}

/* --gpu-pc-duty: kept as given (the library parses it again), checked
 * here; and the parser the library uses, on its edges */
static void test_pc_duty(void)
{
	char *argv[MAX_ARGS];
	struct record_opts o;
	struct xpu_pcsamp_duty d;

	parse(&o, argv, "--gpu-pc-sampling", "--", "true", NULL);
	TEST_ASSERT(o.pc_duty == NULL);
	parse(&o, argv, "--gpu-pc-sampling", "--gpu-pc-duty=20:80", "--", "true", NULL);
	TEST_ASSERT(o.pc_duty && !strcmp(o.pc_duty, "20:80"));
	parse(&o, argv, "--gpu-pc-duty=off", "--", "true", NULL);
	TEST_ASSERT(o.pc_duty && !strcmp(o.pc_duty, "off"));
	TEST_USAGE_ERROR("--gpu-pc-duty=5: expected after:MS, ON_MS:OFF_MS (1 to 3600000 each) or off",
			 "--gpu-pc-duty=5", "--", "true");
	TEST_USAGE_ERROR("--gpu-pc-duty=0:5: expected after:MS, ON_MS:OFF_MS (1 to 3600000 each) or off",
			 "--gpu-pc-duty=0:5", "--", "true");
	TEST_USAGE_ERROR("--gpu-pc-duty=: expected after:MS, ON_MS:OFF_MS (1 to 3600000 each) or off",
			 "--gpu-pc-duty=", "--", "true");

	TEST_ASSERT_EQ(xpu_pcsamp__parse_duty(NULL, &d), 0);
	TEST_ASSERT(!d.on_ns && !d.off_ns);
	TEST_ASSERT_EQ(d.after_ns, XPU_PCSAMP_AFTER_DEFAULT_MS * 1000000ull);
	TEST_ASSERT_EQ(xpu_pcsamp__parse_duty("off", &d), 0);
	TEST_ASSERT(!d.on_ns && !d.off_ns && !d.after_ns);
	TEST_ASSERT_EQ(xpu_pcsamp__parse_duty("after:20", &d), 0);
	TEST_ASSERT(!d.on_ns && !d.off_ns && d.after_ns == 20000000ull);
	TEST_ASSERT_EQ(xpu_pcsamp__parse_duty("7:3600000", &d), 0);
	TEST_ASSERT_EQ(d.on_ns, 7000000ull);
	TEST_ASSERT_EQ(d.off_ns, 3600000000000ull);
	TEST_ASSERT_EQ(d.after_ns, 0);
	static const char *const bad[] = { "3600001:1", "1:3600001", "5:", ":5", "1:2:3", "1x:2",
					   "offf", "-1:5", "99999999999999999999:1", "5", "after:",
					   "after:0", "after:3600001", "after:5x", "0:5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		TEST_ASSERT_EQ(xpu_pcsamp__parse_duty(bad[i], &d), -1);
		TEST_ASSERT_EQ(d.after_ns, XPU_PCSAMP_AFTER_DEFAULT_MS * 1000000ull);	/* the default */
	}
}

/* The recorder's environment knobs (common/knobs.h) become fields of the
 * options: their defaults, good values, and a bad one warned about in one
 * line with the default kept (the parse goes on, no exit). */
static void test_knobs(void)
{
	static const char *const names[] = { "XPU_STACK_PRUNE", "XPU_STACK_DELTA", "XPU_GPU_PLAIN",
					     "XPU_UNWIND_SIMPLE_CHECK", "XPU_INJECT_MEMFD",
					     "XPU_INJECT_DIE_AT", "XPU_INJECT_HOLD_MS" };
	static const char *const prunes[] = { "0", "address", "cfi", "" };
	static const int prune_modes[] = { RECORD_PRUNE_NONE, RECORD_PRUNE_ADDRESS, RECORD_PRUNE_CFI,
					   RECORD_PRUNE_FRAMES };
	char *argv[MAX_ARGS];
	struct record_opts o;
	struct outcome r;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
	parse(&o, argv, "--", "true", NULL);
	TEST_ASSERT_EQ(o.stack_prune, RECORD_PRUNE_FRAMES);
	TEST_ASSERT(o.stack_delta);
	TEST_ASSERT(o.gpu_plain);
	TEST_ASSERT(!o.unwind_simple_check);
	TEST_ASSERT(!o.inject_memfd);
	TEST_ASSERT_EQ(o.inject_die_at, -1);
	TEST_ASSERT_EQ(o.inject_hold_ms, 0);

	for (size_t i = 0; i < sizeof(prunes) / sizeof(prunes[0]); i++) {
		setenv("XPU_STACK_PRUNE", prunes[i], 1);
		parse(&o, argv, "--", "true", NULL);
		TEST_ASSERT_EQ(o.stack_prune, prune_modes[i]);
	}
	setenv("XPU_STACK_DELTA", "0", 1);
	setenv("XPU_GPU_PLAIN", "0", 1);
	setenv("XPU_UNWIND_SIMPLE_CHECK", "1", 1);
	setenv("XPU_INJECT_MEMFD", "1", 1);
	setenv("XPU_INJECT_DIE_AT", "4", 1);
	setenv("XPU_INJECT_HOLD_MS", "200", 1);
	parse(&o, argv, "-p", "1", NULL);
	TEST_ASSERT(!o.stack_delta);
	TEST_ASSERT(!o.gpu_plain);
	TEST_ASSERT(o.unwind_simple_check);
	TEST_ASSERT(o.inject_memfd);
	TEST_ASSERT_EQ(o.inject_die_at, 4);
	TEST_ASSERT_EQ(o.inject_hold_ms, 200);

	/* bad: one warning each, the default kept, the parse not stopped */
	setenv("XPU_STACK_PRUNE", "frames", 1);
	setenv("XPU_INJECT_DIE_AT", "9", 1);
	parse_child(&r, "--", "true", NULL);
	TEST_ASSERT_EQ(r.status, -1);
	TEST_ASSERT(!strcmp(r.out, "xpu-record: warning: XPU_STACK_PRUNE=frames: expected one of: "
			    "0, address, cfi; using the default (frames where the recorder knows "
			    "them, else pruned copies): fix or unset XPU_STACK_PRUNE\n"
			    "xpu-record: warning: XPU_INJECT_DIE_AT=9: expected a number, 1 to 8; "
			    "using the default (none): fix or unset XPU_INJECT_DIE_AT\n"));
	parse(&o, argv, "--", "true", NULL);
	TEST_ASSERT_EQ(o.stack_prune, RECORD_PRUNE_FRAMES);
	TEST_ASSERT_EQ(o.inject_die_at, -1);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
}

int main(void)
{
	xpu_log_init("xpu-record");
	TEST_RUN(test_defaults);
	TEST_RUN(test_every_option);
	TEST_RUN(test_call_graph);
	TEST_RUN(test_python_frames);
	TEST_RUN(test_pids);
	TEST_RUN(test_command_options_left_alone);
	TEST_RUN(test_help_and_version);
	TEST_RUN(test_ring_size);
	TEST_RUN(test_bounded_capture);
	TEST_RUN(test_errors_frequency_duration);
	TEST_RUN(test_errors_call_graph);
	TEST_RUN(test_errors_pids);
	TEST_RUN(test_errors_options);
	TEST_RUN(test_errors_command);
	TEST_RUN(test_nvtx);
	TEST_RUN(test_pc_duty);
	TEST_RUN(test_knobs);
	TEST_EXIT();
}
