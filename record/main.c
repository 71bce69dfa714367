// SPDX-License-Identifier: MIT
/*
 * xpu-record: runs a command (or attaches to processes) and writes CPU stack
 * samples, sideband and GPU records to a trace file. The life cycle, in
 * order: options and checks, output file, BPF, sideband, GPU channel,
 * launch (child waits on a pipe), drain thread, wait, finish.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/bounded.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "cupti/wire.h"
#include "record/options.h"
#include "record/output.h"
#include "record/checks.h"
#include "record/kernel/bpf.h"
#include "record/kernel/sideband.h"
#include "record/python/python.h"
#include "record/target/synth.h"
#include "record/files/buildid_cache.h"
#include "record/kernel/perfmap.h"
#include "record/gpu/channel.h"
#include "record/gpu/inject.h"
#include "record/drain.h"
#include "record/kernel/ksyms.h"
#include "record/meta.h"
#include "record/target/launch.h"
#include "record/target/tree.h"
#include "record/target/cpu_time.h"
#include "record/clock.h"
#include "record/capture/activate.h"
#include "record/capture/rotate.h"
#include "record/unwind/launch_rules.h"
#include "record/unwind/unwind_reads.h"

static volatile sig_atomic_t sig_count;
static volatile sig_atomic_t sig_last;
static volatile sig_atomic_t sig_from_tty;

static void main__on_signal(int sig, siginfo_t *si, void *uc)
{
	sig_last = sig;
	/* SI_KERNEL: typed at the terminal, so the child got it too. */
	sig_from_tty = si && si->si_code == SI_KERNEL;
	sig_count++;
}

static void main__signals(void)
{
	struct sigaction sa = { .sa_sigaction = main__on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

struct waitset {
	struct pollfd *fds;
	int nr, alive;
};

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/*
 * Waits for the launched child (its wait status in *status) or for every -p
 * process, a signal, or the -d deadline. At the deadline, and when the
 * command exits with --kill-on-exit, the command's whole tree is ended
 * (tree.c) while the recording goes on; *ended says the deadline did it.
 */
static void main__wait(const struct record_opts *o, struct launch *l, struct waitset *ws,
		       struct record_bpf *b, int *status, bool *have_status, bool *ended)
{
	/* -d counts from --activate's instant */
	double deadline = o->duration > 0 ? record__now() + activate__delay(&o->rot) + o->duration : 0;
	struct tree_end te = { 0 };
	bool ending = false;
	int handled = 0;

	for (;;) {
		int timeout = 1000;

		if (l->pid > 0 && !*have_status && waitpid(l->pid, status, WNOHANG) == l->pid) {
			*have_status = true;
			if (!ending && !o->kill_on_exit)
				return;	/* what it left running is warned about */
			ending = true;
		}
		if (!l->pid && !ws->alive)
			return;
		if (sig_count > handled) {
			handled = sig_count;
			if (!l->pid || handled > 1)
				return;	/* -p, or a second signal: stop now */
			if (!sig_from_tty && !*have_status)
				kill(l->pid, sig_last);
			debug(1, "signal %d: waiting for the command to exit (again to stop now)",
			      (int)sig_last);
			deadline = 0;
		}
		if (deadline && record__now() >= deadline) {
			if (!l->pid)
				return;
			debug(1, "-d: ending the command and its processes");
			deadline = 0;
			ending = *ended = true;
		}
		if (ending) {
			if (tree__end_step(b, &te, record__now())) {
				/* Gone from the tracked set means exited: reap it. */
				if (!*have_status && !te.left)
					*have_status = waitpid(l->pid, status, 0) == l->pid;
				return;
			}
			timeout = 20;
		} else if (deadline) {
			double left = deadline - record__now();

			if (left * 1000 < timeout)
				timeout = left * 1000 + 1;
		}
		if (poll(ws->fds, ws->nr, timeout) > 0) {
			for (int i = 0; i < ws->nr; i++) {
				if (ws->fds[i].fd >= 0 && ws->fds[i].revents) {
					if (!l->pid)
						ws->alive--;
					close(ws->fds[i].fd);
					ws->fds[i].fd = -1;
				}
			}
		}
	}
}

/* What the launched command left running after the recording: said, since
 * it is not recorded from now on (or ended by the watchdog). */
static void main__leftovers(const struct record_opts *o, struct record_bpf *b)
{
	char list[256] = "";
	size_t len = 0;
	pid_t *pids;
	int n = record_bpf__tracked(b, &pids);

	for (int i = 0; i < n && len < sizeof(list) - 16; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%d", i ? " " : "", (int)pids[i]);
	if (n && len >= sizeof(list) - 16)
		snprintf(list + len, sizeof(list) - len, " ...");
	free(pids);
	if (!n)
		return;
	if (o->kill_on_exit)
		warn("%d processes of the command still run (pid %s): the watchdog ends them "
		     "(--kill-on-exit)", n, list);
	else
		warn("%d processes of the command still run (pid %s), no longer recorded: "
		     "--kill-on-exit ends them with the recording", n, list);
}

/*
 * The metadata says what happened, not only what was asked: GPU recording
 * with no CUDA process connected and no launch stack clears the gpu feature
 * bit and says so; the nvtx bit is set when NVTX ranges arrived;
 * Python frames asked for (PYTHONPERFSUPPORT=1 set by us) with no perf map
 * written means an interpreter older than CPython 3.12; the python bit is
 * set when the interpreter walk found Python frames. Later META records
 * override the ones written at start.
 */
static void main__say_what_happened(struct xpu_writer *w, const struct record_opts *o,
				    struct channel *ch, uint64_t nr_corr, uint64_t features,
				    int perfmap_files, uint64_t py_stacks)
{
	uint64_t f = features;

	if (py_stacks)		/* set only when the walk found Python frames */
		f |= XPU_FEAT_PYTHON;
	if (ch && !channel__accepted(ch) && !nr_corr) {
		xpu_writer__meta(w, XPU_META_GPU, "requested; no CUDA process seen");
		f &= ~XPU_FEAT_GPU;
	}
	if (ch && channel__nvtx_records(ch))	/* set only when NVTX ranges came */
		f |= XPU_FEAT_NVTX;
	if (f != features)
		xpu_writer__set_features(w, f);
	if (o->perfmap_cleanup && perfmap_files <= 0 && o->argv) {
		const char *base = strrchr(o->argv[0], '/');

		base = base ? base + 1 : o->argv[0];
		xpu_writer__meta(w, XPU_META_PYTHON_FRAMES, "requested (PYTHONPERFSUPPORT=1 set by "
				 "xpu-record); no perf map was written (no CPython 3.12+ process)");
		if (!strncmp(base, "python", 6))
			warn("%s wrote no perf map: Python frames need CPython 3.12 or later "
			     "(PYTHONPERFSUPPORT); the native stacks are recorded", base);
	}
}

/*
 * The CPU time the recorded processes used (cpu_time.c), in ns, or -1: the
 * launched command's, reaped or still running, or what the -p processes
 * alive now used since their start value in cpu0[].
 */
static int64_t main__cpu_time(const struct record_opts *o, const struct launch *l,
			      bool have_status, const int64_t *cpu0)
{
	int64_t sum = -1;

	if (o->argv)
		return have_status ? cpu_time__children() : cpu_time__proc(l->pid);
	for (int i = 0; i < o->nr_pids; i++) {
		int64_t now = cpu0[i] < 0 ? -1 : cpu_time__proc(o->pids[i]);

		if (now >= cpu0[i] && cpu0[i] >= 0)
			sum = (sum < 0 ? 0 : sum) + now - cpu0[i];
	}
	return sum;
}

/* CPU time of this many sampling periods and not one sample: said (below). */
#define MAIN_NO_SAMPLES_PERIODS 10

/*
 * A recording that should hold CPU samples and holds none says so, on
 * stderr (msg, printed at the end) and in META cpu_samples for the reports:
 * the recorded processes used MAIN_NO_SAMPLES_PERIODS sampling periods of
 * CPU time or more and not one sample was written. Sampled at -F, a
 * process on a CPU that long is sampled about that many times; none means
 * the sampler did not see it (a CPU that was offline when the events were
 * opened, samples lost, a BPF program that did not run).
 */
static void main__no_samples(struct xpu_writer *w, const struct record_opts *o,
			     struct record_bpf *b, int64_t cpu_ns, uint64_t samples,
			     uint64_t lost, char *msg, size_t size)
{
	double periods = cpu_ns > 0 ? (double)cpu_ns * o->freq / 1e9 : 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int sampled = record_bpf__sampled_cpus(b);
	size_t len;

	msg[0] = 0;
	if (samples || periods < MAIN_NO_SAMPLES_PERIODS)
		return;
	len = snprintf(msg, size, "none, although the recorded processes used %.3f s of CPU time "
		       "(%.0f sampling periods at %u Hz)", cpu_ns / 1e9, periods, o->freq);
	if (lost && len < size)
		len += snprintf(msg + len, size - len, "; %llu samples lost (ring buffer full)",
				(unsigned long long)lost);
	if (online > sampled && len < size)
		snprintf(msg + len, size - len, "; %ld of the %ld online CPUs had no sampler (offline "
			 "when the recording started)", online - sampled, online);
	xpu_writer__meta(w, XPU_META_CPU_SAMPLES, msg);
}

static int main__exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return XPU_EXIT_FAILURE;
}

static void main__lost(struct xpu_writer *w, uint32_t source, uint64_t count, uint64_t *total)
{
	struct xpu_lost l = { .time = record__now_ns(), .source = source, .count = count };

	xpu_writer__add(w, XPU_REC_LOST, &l, sizeof(l));
	*total += count;
}

/*
 * -v's account of the end of the recording: the time of each step from the
 * command's exit to the trace closed, so a slow end says which step it was
 * (Documentation/xpu-record.md, "How it works").
 */
struct fin_times {
	uint64_t start_ns, step_ns;
	char line[400];
	size_t len;
};

static void main__fin_start(struct fin_times *f)
{
	f->start_ns = f->step_ns = record__now_ns();
	f->len = 0;
	f->line[0] = 0;
}

/* The step DONE just ended: its time since the previous one. */
static void main__fin_done(struct fin_times *f, const char *done)
{
	uint64_t now = record__now_ns();

	if (f->len < sizeof(f->line))
		f->len += snprintf(f->line + f->len, sizeof(f->line) - f->len, "%s%s %.3f",
				   f->len ? ", " : "", done, (now - f->step_ns) / 1e9);
	f->step_ns = now;
}

/* More about the step just ended, appended to its time. */
static void __attribute__((format(printf, 2, 3))) main__fin_detail(struct fin_times *f,
								  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (f->len < sizeof(f->line))
		f->len += vsnprintf(f->line + f->len, sizeof(f->line) - f->len, fmt, ap);
	va_end(ap);
}

/* One line for a trace that lacks records: why, how many, what is left. */
static void main__write_error(const char *path, int err, const struct xpu_writer_stats *st)
{
	uint64_t samples = st->dropped_per_type[XPU_REC_SAMPLE];

	error("writing %s failed: %s: %llu samples and %llu other records were not written "
	      "(lost: output); the trace holds the other %llu samples%s: free space or "
	      "choose another -o", path, strerror(err), (unsigned long long)samples,
	      (unsigned long long)(st->dropped - samples),
	      (unsigned long long)st->per_type[XPU_REC_SAMPLE],
	      st->dropped_per_type[XPU_REC_FINISH] ? " but no FINISH record" : "");
}

/* Reads of the traced programs' files that did not end in time (a FUSE or
 * NFS server that stopped answering), or were not tried because of them:
 * what the trace lacks for it (common/bounded.h). */
static void main__stuck_reads(void)
{
	struct bounded_stats bs;

	bounded__stats(&bs);
	debug(1, "file reads: %llu with a %u ms bound, %llu did not end in time, %llu not tried",
	      (unsigned long long)bs.calls, bounded__timeout_ms(),
	      (unsigned long long)bs.timed_out, (unsigned long long)bs.refused);
	if (bs.timed_out && !xpu_quiet)
		warn("%llu reads of the recorded programs' files did not end within %u ms and "
		     "%llu more were not tried (a file system that does not answer?): those "
		     "files' build-ids, symbol offsets or unwinding rules are missing from the "
		     "trace", (unsigned long long)bs.timed_out, bounded__timeout_ms(),
		     (unsigned long long)bs.refused);
}

/* launch_rules.c's and channel.c's ways to record/python/python.c */
static int main__py_layout(void *arg, uint32_t pid, struct xpu_bpf_py_cfg *cfg)
{
	if (python__layout_of(arg, (pid_t)pid, cfg))
		return LAUNCH_RULES_PY_LAYOUT;
	return python__native(arg, (pid_t)pid) ? LAUNCH_RULES_PY_NATIVE : LAUNCH_RULES_PY_UNKNOWN;
}

static void main__py_stack(void *arg, const void *body, size_t len)
{
	python__stack(arg, body, len);
}

/* inject.c's way to record_bpf__attach_marker_copy() */
static int main__marker_copy(void *ctx, const char *path)
{
	return record_bpf__attach_marker_copy(ctx, path);
}

int main(int argc, char **argv)
{
	struct record_opts o;
	struct launch l = { .pid = 0, .go_fd = -1 };
	struct waitset ws = { 0 };
	struct xpu_writer_opts wo = { 0 };
	struct xpu_prune *prune = NULL;
	struct unwind_reads *reads = NULL;
	struct launch_rules *rules = NULL;
	const char *prune_mode;
	struct xpu_writer_stats st;
	struct xpu_writer *w = NULL;
	struct output out;
	struct record_bpf *b = NULL;
	struct sideband *sb = NULL;
	struct channel *ch = NULL;
	struct drain *d = NULL;
	struct python *py = NULL;
	struct rotate *rot = NULL;	/* bounded capture (rotate.c) */
	const char *cupti_lib = NULL;
	char *path = NULL, err[512] = "", no_samples[512] = "";
	int64_t *cpu0 = NULL, cpu_ns;
	uint64_t lost_total = 0;
	struct record_bpf_lost bl;
	struct progress fin;
	struct fin_times ft;
	struct drain_final df = { 0 };
	int status = 0, code = XPU_EXIT_OK, ret, nr_attached = 0;
	bool have_status = false, ended = false, gpu;
	time_t start_wall = time(NULL) - 1;	/* perf maps older than this are stale */

	xpu_log_init(argv[0]);
	launch__save_signals();	/* the command starts with these, not with ours */
	main__signals();	/* first change: a SIGINT during setup must not be lost */
	record_opts__parse(&o, argc, argv);
	if (o.argv)
		path = record__find_program(o.argv[0]);
	for (int i = 0; i < o.nr_pids; i++)
		if (kill(o.pids[i], 0) && errno == ESRCH)
			die(XPU_EXIT_NOTFOUND, "-p %d: no such process", o.pids[i]);
	record__check_privileges();
	record__check_btf();
	record__check_pid_namespace();
	/* --activate with -p: nothing is set up before the instant */
	if (o.nr_pids && !activate__wait(&o.rot, &sig_count))
		return 128 + sig_last;

	if (!o.no_gpu) {
		cupti_lib = o.cupti_lib ? o.cupti_lib : record__default_cupti_lib();
		if (o.cupti_lib && access(o.cupti_lib, R_OK))
			die(XPU_EXIT_NOTFOUND, "--cupti-lib %s: %s", o.cupti_lib, strerror(errno));
		if (!cupti_lib)
			debug(1, "no libxpu-cupti.so beside xpu-record or in ../lib/xpu-perf: GPU recording off");
	}
	gpu = cupti_lib != NULL;

	wo.features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_KERNEL_STACKS |
		      (o.dwarf ? XPU_FEAT_DWARF_STACKS : XPU_FEAT_FP_STACKS) | (gpu ? XPU_FEAT_GPU : 0) |
		      (o.offcpu_min_us ? XPU_FEAT_OFF_CPU : 0);
	/* Stacks coded against the thread's previous one (STACK_DELTA, format
	 * 1.4); XPU_STACK_DELTA=0 writes each in full, for comparisons. */
	wo.stack_delta = !getenv("XPU_STACK_DELTA") || strcmp(getenv("XPU_STACK_DELTA"), "0");
	/* Coded, a chunk is 10-30x smaller before compression: zstd level 9
	 * then costs less than level 3 on whole copies and saves 10-15% more
	 * (Documentation/design-trace-size.md). */
	if (wo.stack_delta)
		wo.zstd_level = 9;
	/* Full chunks are compressed by the writer's thread: the reader of
	 * the rings only copies records, and a launch burst is not met while
	 * it compresses (format/writer.h). */
	wo.background = true;
	/* Where the report's CFI unwinding of a stack is known
	 * (record/unwind/unwind_reads.c), its frames are written instead of the
	 * registers and the stack copy (XPU_STACK_UNWOUND, format 1.6); the
	 * other stacks keep the words an unwinder may read
	 * (format/stack_prune.h). XPU_STACK_PRUNE=0 keeps whole copies,
	 * =address the address rule alone (1.4), =cfi the words the CFI
	 * unwinding reads rather than its frames (1.5). */
	prune_mode = getenv("XPU_STACK_PRUNE");
	if (prune_mode && !*prune_mode)
		prune_mode = NULL;	/* set but empty: the default */
	if (prune_mode && strcmp(prune_mode, "0") && strcmp(prune_mode, "address") &&
	    strcmp(prune_mode, "cfi"))
		die(XPU_EXIT_USAGE, "XPU_STACK_PRUNE=%s: expected 0 (whole stack copies), address or "
		    "cfi, or unset (the frames where they are known)", prune_mode);
	if (o.dwarf && (!prune_mode || strcmp(prune_mode, "0"))) {
		prune = wo.prune = xpu_prune__new();
		if (!prune)
			die(XPU_EXIT_FAILURE, "out of memory");
		if (!prune_mode || strcmp(prune_mode, "address")) {
			struct xpu_prune_reads r;

			reads = unwind_reads__new();
			unwind_reads__hook(reads, &r);
			if (prune_mode && !strcmp(prune_mode, "cfi"))
				r.frames = NULL;
			xpu_prune__set_reads(prune, &r);
		}
	}
	if (rotate_opts__active(&o.rot))
		rot = rotate__new(&o.rot, o.output, &wo);
	if (rotate_opts__files(&o.rot)) {
		/* FILE.<timestamp> files, written by rotate.c */
		memset(&out, 0, sizeof(out));
		out.fd = -1;
		w = xpu_writer__sink_open(&wo);
		if (!w)
			die(XPU_EXIT_FAILURE, "out of memory");
	} else if (output__create(&out, o.output, err, sizeof(err))) {
		die(XPU_EXIT_OUTPUT, "%s", err);
	} else {
		w = xpu_writer__fdopen(out.fd, &wo);
	}
	if (!w) {
		ret = errno;
		close(out.fd);
		output__abort(&out);
		die(XPU_EXIT_OUTPUT, "cannot write %s: %s: choose a writable path with -o", o.output,
		    strerror(ret));
	}
	meta__write_start(w, &o, argc, argv, gpu, cupti_lib);

	ret = record_bpf__open(&b, &o, err, sizeof(err));
	if (ret) {
		code = ret == -EPERM ? XPU_EXIT_NOPERM : XPU_EXIT_NOKERNEL;
		goto out_setup_failed;
	}
	record_bpf__set_writer(b, w);
	record_bpf__set_prune(b, prune);
	if (gpu) {
		ret = channel__open(&ch, w);
		if (ret) {
			snprintf(err, sizeof(err), "cannot create the GPU records socket: %s", strerror(-ret));
			code = XPU_EXIT_FAILURE;
			goto out_setup_failed;
		}
		/* windows and rotated files: GPU records in time for them */
		if (rotate_opts__files(&o.rot))
			channel__set_flush_ms(ch, ROTATE_GPU_FLUSH_MS);
		if (record_bpf__attach_marker(b, cupti_lib, err, sizeof(err))) {
			warn("%s: CUDA calls will have no CPU stacks", err);
			err[0] = 0;
		}
		if (reads)
			unwind_reads__set_marker_lib(reads, cupti_lib);
		/* the launch walk's rule tables (--launch-stacks=walk) */
		if (reads && o.launch_stacks == RECORD_LAUNCH_WALK && (rules = launch_rules__new())) {
			channel__set_rules(ch, rules);
			unwind_reads__set_rules(reads, rules);
		}
		xpu_writer__meta(w, XPU_META_LAUNCH_STACKS, rules ? "walk" :
				 o.launch_stacks == RECORD_LAUNCH_MARKER ? "marker (--launch-stacks=marker)" :
				 !o.dwarf ? "marker (--call-graph fp: the walk needs DWARF unwinding)" :
				 "marker (XPU_STACK_PRUNE: the recorder unwinds no stack to learn "
				 "the walk's rules from)");
	}
	ret = sideband__open(&sb, w, b);
	if (ret) {
		snprintf(err, sizeof(err), "cannot open the perf sideband events: %s", strerror(-ret));
		code = ret == -EACCES || ret == -EPERM ? XPU_EXIT_NOPERM : XPU_EXIT_NOKERNEL;
		goto out_setup_failed;
	}
	if (o.python_frames == RECORD_PY_WALK) {
		py = python__new(record_bpf__py_procs_fd(b), w);
		launch_rules__set_python(rules, main__py_layout, py);
		if (ch && rules)
			channel__set_python(ch, main__py_stack, py);
		record_bpf__set_python(b, py);
		sideband__set_python(sb, py);
	}
	xpu_writer__meta(w, XPU_META_PYTHON_FRAMES, o.python_frames == RECORD_PY_WALK ? "walk" :
			 o.python_frames == RECORD_PY_OFF ? "off" : "perf-map");

	/* the library of each CUDA process reads it (launched: inherited;
	 * attached: inject.c passes it on) */
	if (gpu && o.pc_sampling) {
		char period[16];

		char meta[64];

		snprintf(period, sizeof(period), o.pc_sampling > 0 ? "%d" : "on", o.pc_sampling);
		setenv(XPU_CUPTI_PC_SAMPLING_ENV, period, 1);
		/* attached, every PC sampling call is the application's
		 * threads', and a Stop costs tens of ms: continuous unless asked */
		if (!o.pc_duty && !o.argv)
			o.pc_duty = "off";
		if (o.pc_duty)
			setenv(XPU_CUPTI_PC_DUTY_ENV, o.pc_duty, 1);
		snprintf(meta, sizeof(meta), o.pc_sampling > 0 ? "period=2^%d" : "on",
			 o.pc_sampling);
		if (o.pc_duty)
			snprintf(meta + strlen(meta), sizeof(meta) - strlen(meta), " duty=%s", o.pc_duty);
		xpu_writer__meta(w, XPU_META_GPU_PC_SAMPLING, meta);
	}
	if (o.argv) {
		/* Python 3.12+ then runs each Python function through a small
		 * frame-pointer trampoline named in /tmp/perf-PID.map, so stacks
		 * show py::function:file frames. Only the command's environment
		 * changes; maps we caused are removed once copied (perfmap.c). */
		if (o.python_frames == RECORD_PY_PERF_MAP && !getenv("PYTHONPERFSUPPORT")) {
			setenv("PYTHONPERFSUPPORT", "1", 1);
			o.perfmap_cleanup = true;
		}
		if (o.python_frames == RECORD_PY_PERF_MAP)
			xpu_writer__meta(w, XPU_META_PYTHON_FRAMES, o.perfmap_cleanup ?
					 "perf-map (PYTHONPERFSUPPORT=1 set by xpu-record)" :
					 "perf-map (as set by the user's PYTHONPERFSUPPORT)");
		if (o.kill_on_exit && (ret = tree__watchdog(b))) {
			snprintf(err, sizeof(err), "cannot start the --kill-on-exit watchdog: %s",
				 strerror(-ret));
			code = XPU_EXIT_FAILURE;
			goto out_setup_failed;
		}
		ret = launch__fork(&l, path, o.argv, cupti_lib, ch ? channel__path(ch) : NULL,
				   !o.no_nvtx, rules != NULL);
		if (!ret)
			ret = record_bpf__track(b, l.pid);
		if (ret) {
			snprintf(err, sizeof(err), "cannot start %s: %s", o.argv[0], strerror(-ret));
			code = XPU_EXIT_FAILURE;
			goto out_setup_failed;
		}
		sideband__track(sb, l.pid);
	} else {
		char *real = gpu ? realpath(cupti_lib, NULL) : NULL;

		/* a memfd copy of the library (a container, inject.c) is
		 * written as the library, in maps read now and mapped later */
		synth__set_alias("/memfd:" INJECT_MEMFD_NAME " (deleted)", real);
		sideband__set_alias(sb, "/memfd:" INJECT_MEMFD_NAME " (deleted)", real);
		free(real);
		ws.fds = xcalloc(o.nr_pids, sizeof(*ws.fds));
		cpu0 = xcalloc(o.nr_pids, sizeof(*cpu0));
		for (int i = 0; i < o.nr_pids; i++) {
			record_bpf__track(b, o.pids[i]);
			cpu0[i] = cpu_time__proc(o.pids[i]);
			sideband__track(sb, o.pids[i]);
			if (synth__process(w, o.pids[i]))
				warn("-p %d: cannot read /proc/%d: its threads and maps are unknown",
				     o.pids[i], o.pids[i]);
			python__scan_maps(py, o.pids[i]);
			record_bpf__scan_maps(b, o.pids[i]);	/* autograd probes */
			ws.fds[ws.nr].fd = pidfd_open(o.pids[i]);
			ws.fds[ws.nr].events = POLLIN;
			if (ws.fds[ws.nr].fd >= 0) {
				ws.nr++;
				ws.alive++;
			}
		}
	}
	ret = drain__start(&d, w, b, sb, ch);
	if (ret) {
		snprintf(err, sizeof(err), "cannot start the reader thread: %s", strerror(-ret));
		code = XPU_EXIT_FAILURE;
		goto out_setup_failed;
	}
	/* -p: the GPU recording into each CUDA process (inject.c) */
	if (o.nr_pids && ch) {
		code = inject__pids(&o, cupti_lib, ch, rules != NULL, main__marker_copy, b,
				    &nr_attached, err, sizeof(err));
		if (code)
			goto out_setup_failed;
	}
	/* Setup worked: the new trace takes the name (an old one becomes .old). */
	if (output__commit(&out, err, sizeof(err))) {
		code = XPU_EXIT_OUTPUT;
		goto out_setup_failed;
	}
	if (rot && rotate__start(rot, w, b, sb, ch)) {
		snprintf(err, sizeof(err), "cannot write %s: choose a writable path with -o", o.output);
		code = XPU_EXIT_OUTPUT;
		goto out_setup_failed;
	}
	if (o.argv) {
		if (launch__go(&l)) {
			snprintf(err, sizeof(err), "cannot release %s: %s", o.argv[0], strerror(errno));
			code = XPU_EXIT_FAILURE;
			goto out_setup_failed;
		}
		ws.fds = xcalloc(1, sizeof(*ws.fds));
		ws.fds[0].fd = pidfd_open(l.pid);
		ws.fds[0].events = POLLIN;
		ws.nr = ws.fds[0].fd >= 0;
	}
	debug(1, "recording %s%s", o.argv ? o.argv[0] : "-p", gpu ? " with GPU" : "");

	main__wait(&o, &l, &ws, b, &status, &have_status, &ended);
	/* -p: the libraries send the rest, detach and close (cupti/attach.h) */
	if (nr_attached && (ret = drain__end_attaches(d, 5.0)))
		warn("%d attached processes did not end their GPU recording within 5 s: what "
		     "they did not send is missing", ret);
	rotate__stop(rot);	/* no switch or window written while ending */
	cpu_ns = main__cpu_time(&o, &l, have_status, cpu0);
	if (o.argv)
		main__leftovers(&o, b);

	/* Finish: stop the sampler, drain everything, then the final records,
	 * each group its own chunk, the lost counts and FINISH last: on a full
	 * disk the writer keeps room for that last small chunk. */
	progress__start(&fin);
	main__fin_start(&ft);
	progress__step(&fin, "stopping the sampler");
	record_bpf__detach(b);
	main__fin_done(&ft, "sampler stop");
	progress__step(&fin, "draining the ring buffers");
	drain__stop(d, &df);
	main__fin_done(&ft, "final drain");
	main__fin_detail(&ft, " (BPF rings %.3f, sideband and build-ids %.3f, GPU clients %.3f)",
			 df.rings_s, df.sideband_s, df.gpu_s);
	progress__step(&fin, "compressing the last records");
	xpu_writer__flush(w);
	main__fin_done(&ft, "compression flush");
	progress__step(&fin, "writing kernel symbols");
	ksyms__write(w, record_bpf__kernel_ips(b));
	main__fin_done(&ft, "kernel symbols");
	xpu_writer__stats(w, &st);
	progress__step(&fin, "copying perf maps");
	main__say_what_happened(w, &o, gpu ? ch : NULL, st.per_type[XPU_REC_GPU_CORR],
				wo.features, perfmap__copy(w, sb, &o, start_wall),
				python__finish(py));
	record_bpf__lost(b, &bl);
	main__no_samples(w, &o, b, cpu_ns, st.per_type[XPU_REC_SAMPLE], bl.samples, no_samples,
			 sizeof(no_samples));
	xpu_writer__flush(w);
	main__fin_done(&ft, "perf maps and metadata");
	main__lost(w, XPU_LOST_SAMPLES, bl.samples, &lost_total);
	main__lost(w, XPU_LOST_STACK_READ, bl.stack_read, &lost_total);
	if (o.offcpu_min_us)
		main__lost(w, XPU_LOST_OFFCPU, bl.offcpu, &lost_total);
	if (py)
		main__lost(w, XPU_LOST_PYTHON, bl.python, &lost_total);
	main__lost(w, XPU_LOST_SIDEBAND, sideband__lost(sb), &lost_total);
	if (gpu) {
		main__lost(w, XPU_LOST_CORR, bl.corr, &lost_total);
		main__lost(w, XPU_LOST_GPU_CHANNEL, channel__lost(ch), &lost_total);
	}
	xpu_writer__stats(w, &st);
	if (st.dropped)		/* records the output could not take (disk full) */
		main__lost(w, XPU_LOST_OUTPUT, st.dropped, &lost_total);
	if (have_status && l.pid > 0) {
		struct xpu_exit x = { .time = record__now_ns(), .pid = l.pid, .tid = l.pid,
				      .flags = XPU_EXIT_HAS_STATUS, .status = status };

		xpu_writer__add(w, XPU_REC_EXIT, &x, sizeof(x));
	}
	{
		uint64_t gpu_recs = 0;
		struct xpu_finish f = { .time = record__now_ns(),
					.nr_samples = st.per_type[XPU_REC_SAMPLE],
					.nr_corr = st.per_type[XPU_REC_GPU_CORR],
					.nr_lost = lost_total };

		for (int t = 0; t < XPU_REC_MAX; t++)
			if (xpu_rectype__is(t, XPU_RECF_GPU) && t != XPU_REC_GPU_CORR)
				gpu_recs += st.per_type[t];
		f.nr_gpu = gpu_recs;
		xpu_writer__add(w, XPU_REC_FINISH, &f, sizeof(f));
		main__fin_done(&ft, "lost counts");
		progress__step(&fin, "closing the trace");
		if (reads) {
			struct unwind_reads_stats us;

			unwind_reads__stats(reads, &us);
			debug(1, "stack pruning: %llu records with the words their CFI unwinding "
			      "reads known (%.1f frames each), %llu of them written as those "
			      "frames; %llu by the address rule alone; rules of %llu files (%llu "
			      "could not be read)", (unsigned long long)us.exact,
			      us.exact ? (double)us.frames / (double)us.exact : 0.0,
			      (unsigned long long)xpu_prune__unwound(prune),
			      (unsigned long long)us.not_known, (unsigned long long)us.files,
			      (unsigned long long)us.files_failed);
			if (us.simple_same + us.simple_none + us.simple_differ)
				debug(1, "unwind check: of the %llu known, %llu walked to the same "
				      "frames with simple rules alone (%.1f frames each), %llu met a "
				      "pc without one, %llu gave other frames",
				      (unsigned long long)us.exact, (unsigned long long)us.simple_same,
				      us.simple_same ? (double)us.simple_frames / us.simple_same : 0.0,
				      (unsigned long long)us.simple_none,
				      (unsigned long long)us.simple_differ);
			unwind_reads__simple_debug(reads);
		}
		if (rules) {
			uint64_t tables, nr_rules, full;

			launch_rules__stats(rules, &tables, &nr_rules, &full);
			debug(1, "launch rules: %llu tables, %llu rules, %llu refused (a full "
			      "neighbourhood)", (unsigned long long)tables,
			      (unsigned long long)nr_rules, (unsigned long long)full);
		}
		ret = xpu_writer__close_stats(w, &st);
		w = NULL;
		rotate__end(rot, xpu_quiet);	/* the last file, or the last window */
		main__fin_done(&ft, "close (fsync)");
		progress__end(&fin);
		/* No rename here: the trace got its name before the command
		 * started (output__commit) and is written in place. */
		debug(1, "end of recording: %.3f s from the command's exit to the trace closed (%s)",
		      (record__now_ns() - ft.start_ns) / 1e9, ft.line);
		if (ret) {
			main__write_error(o.output, -ret, &st);
			/* The command ran: its status is still ours (below). */
			if (!have_status)
				code = XPU_EXIT_OUTPUT;
		} else if (!xpu_quiet && !rotate_opts__files(&o.rot)) {
			/* KB below 1 MB: a small trace is not "0.0 MB" */
			bool mb = st.file_bytes >= 1048576;

			fprintf(stderr, "xpu-record: %llu samples, %llu GPU records, %llu lost, %.1f %s "
				"written to %s\n", (unsigned long long)f.nr_samples,
				(unsigned long long)(f.nr_corr + gpu_recs), (unsigned long long)lost_total,
				st.file_bytes / (mb ? 1048576.0 : 1024.0), mb ? "MB" : "KB", o.output);
		}
	}
	if (xpu_verbose) {
		struct rusage ru;

		/* The rings are mapped twice (record_bpf__ring_bytes()). */
		if (!getrusage(RUSAGE_SELF, &ru))
			debug(1, "peak RSS %.1f MB, of which the ring buffers' %.1f MB (kernel memory "
			      "mapped twice); CPU time %.3f s, of which the reader thread's %.3f s",
			      ru.ru_maxrss / 1024.0, 2.0 * record_bpf__ring_bytes(b) / 1048576,
			      ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			      ru.ru_stime.tv_usec / 1e6, df.cpu_s);
		debug(1, "writer: %llu chunks compressed in its thread; the reader waited for it "
		      "%llu times, %.3f s in all", (unsigned long long)st.bg_chunks,
		      (unsigned long long)st.bg_waits, st.bg_wait_ns / 1e9);
	}
	main__stuck_reads();
	if (o.buildid_cache && !ret && code == XPU_EXIT_OK && !rotate_opts__files(&o.rot)) {
		/* the trace is closed: a copy stuck in a file (common/bounded.h
		 * does not bound copies) ends with the first SIGINT or SIGTERM;
		 * copies go to a temporary name, so none is left half written */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		progress__start(&fin);
		progress__step(&fin, "--buildid-cache: copying the mapped files");
		if (buildid_cache__fill(o.output)) {
			progress__end(&fin);
			warn("--buildid-cache: not every file could be copied (see above)");
		}
		progress__end(&fin);
	}
	if (no_samples[0])
		warn("CPU samples: %s: the profile lacks that time (xpu-report --header says so "
		     "too)", no_samples);
	if (bl.samples && !xpu_quiet)
		warn("%llu samples lost: the ring buffer was full; lower -F or the --call-graph size",
		     (unsigned long long)bl.samples);
	if (bl.offcpu && !xpu_quiet)
		warn("%llu off-CPU records lost: their ring buffer was full; raise --off-cpu=MIN_US "
		     "or use --call-graph fp", (unsigned long long)bl.offcpu);
	if (!have_status && l.pid > 0 && sig_count && code == XPU_EXIT_OK)
		code = 128 + sig_last;	/* second signal: we left the command running */
	if (have_status && code == XPU_EXIT_OK) {
		/* -d ended it with our SIGTERM (or SIGKILL): that is a normal end. */
		if (ended && WIFSIGNALED(status) &&
		    (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL))
			code = XPU_EXIT_OK;
		else
			code = main__exit_code(status);
	}
	sideband__close(sb);
	channel__close(ch);
	record_bpf__close(b);
	python__free(py);
	rotate__free(rot);
	xpu_prune__free(prune);	/* the writer is closed */
	unwind_reads__free(reads);
	launch_rules__free(rules);
	for (int i = 0; i < ws.nr; i++)
		if (ws.fds[i].fd >= 0)
			close(ws.fds[i].fd);
	free(ws.fds);
	free(cpu0);
	free(path);
	return code;

out_setup_failed:
	launch__abort(&l);
	drain__stop(d, NULL);
	sideband__close(sb);
	channel__close(ch);
	record_bpf__close(b);
	python__free(py);
	rotate__stop(rot);
	if (w)
		xpu_writer__close(w);
	rotate__free(rot);
	xpu_prune__free(prune);
	unwind_reads__free(reads);
	launch_rules__free(rules);
	output__abort(&out);
	die(code, "%s", err);
}
