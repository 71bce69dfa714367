// SPDX-License-Identifier: MIT
/*
 * xpu-record: runs a command (or attaches to processes) and writes CPU stack
 * samples, sideband and GPU records to a trace file. main() runs the phases
 * of struct record in order (Documentation/design-record.md): options and
 * checks, the trace, the sources (BPF, GPU channel, sideband, Python), the
 * command held on its pipe (or -p's processes), start, run, finish; one
 * teardown path, and record__fail() for a setup that failed.
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
#include "cupti/channel/wire.h"
#include "record/options.h"
#include "record/output.h"
#include "record/checks.h"
#include "record/kernel/bpf.h"
#include "record/kernel/sideband.h"
#include "record/python/python.h"
#include "record/target/synth.h"
#include "record/files/buildid.h"
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
#include "record/verbose.h"

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
 * bit and says so; CUDA processes whose library never connected
 * (nr_unconnected) are said, and keep the bit (GPU data was due and is
 * missing); the nvtx bit is set when NVTX ranges arrived;
 * Python frames asked for (PYTHONPERFSUPPORT=1 set by us) with no perf map
 * written means an interpreter older than CPython 3.12; the python bit is
 * set when the interpreter walk found Python frames. Later META records
 * override the ones written at start.
 */
static void main__say_what_happened(struct xpu_writer *w, const struct record_opts *o,
				    struct channel *ch, uint64_t nr_corr, uint64_t features,
				    int perfmap_files, uint64_t py_stacks, int nr_unconnected)
{
	uint64_t f = features;

	if (py_stacks)		/* set only when the walk found Python frames */
		f |= XPU_FEAT_PYTHON;
	if (ch && nr_unconnected) {
		char val[160];

		snprintf(val, sizeof(val), "%s; %d CUDA process%s could not send GPU records "
			 "(lost: gpu-unconnected)", channel__accepted(ch) ? "on" : "requested",
			 nr_unconnected, nr_unconnected == 1 ? "" : "es");
		xpu_writer__meta(w, XPU_META_GPU, val);
	} else if (ch && !channel__accepted(ch) && !nr_corr) {
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

/* The CUDA processes whose library never connected (channel.c): a LOST
 * record each, with its pid (none: one that says so). */
static void main__lost_unconnected(struct xpu_writer *w, const uint32_t *pids, int n,
				   uint64_t *total)
{
	if (!n)
		main__lost(w, XPU_LOST_GPU_UNCONNECTED, 0, total);
	for (int i = 0; i < n; i++) {
		struct xpu_lost l = { .time = record__now_ns(), .source = XPU_LOST_GPU_UNCONNECTED,
				      .pid = pids[i], .count = 1 };

		xpu_writer__add(w, XPU_REC_LOST, &l, sizeof(l));
		(*total)++;
	}
}

/* Said at the end, after the summary: their GPU work is missing. */
static void main__warn_unconnected(const uint32_t *pids, int n)
{
	char list[160] = "";
	size_t len = 0;

	for (int i = 0; i < n && len < sizeof(list) - 16; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%u", i ? " " : "", pids[i]);
	if (n && len >= sizeof(list) - 16)
		snprintf(list + len, sizeof(list) - len, " ...");
	warn("%d CUDA process%s could not send GPU records (pid %s): the library loaded but "
	     "never connected to xpu-record's socket (the process's stderr says why), so %s "
	     "GPU work is missing (lost: gpu-unconnected); fix: let %s reach xpu-record's /tmp "
	     "(no private /tmp, other mount namespace or sandbox denying Unix sockets) and keep "
	     "XPU_CUPTI_SOCKET in %s environment", n, n == 1 ? "" : "es", list,
	     n == 1 ? "its" : "their", n == 1 ? "it" : "them", n == 1 ? "its" : "their");
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

/* The library as the side band's MMAP records name it, and its build-id
 * (a copy elsewhere has the same): its loads without a connection are the
 * CUDA processes that could not connect (channel.c). */
static void main__channel_library(struct channel *ch, const char *lib)
{
	uint8_t bid[XPU_MMAP_BUILD_ID_MAX], bid_size = 0;
	char *real = realpath(lib, NULL);

	if (!real) {
		debug(1, "%s: %s: a CUDA process that cannot connect is not counted", lib,
		      strerror(errno));
		return;
	}
	if (buildid__read_file(real, bid, &bid_size))
		bid_size = 0;	/* by the path alone */
	channel__set_library(ch, real, bid, bid_size);
	free(real);
}

/* The side band's mappings, for the channel's count of the library's loads. */
static void main__channel_mapped(void *ctx, pid_t pid, const char *path, const uint8_t *bid,
				 size_t bid_size)
{
	channel__mapped(ctx, pid, path, bid, bid_size);
}

/* channel.c's peer check: a process of the recorded tree */
static bool main__peer_tracked(void *ctx, pid_t pid)
{
	return record_bpf__is_tracked(ctx, pid);
}

/*
 * The recorder, as perf's struct record: everything the phases below share.
 * main() runs them in order; record__fail() and record__teardown() are the
 * only ways out once anything is set up.
 */
struct record {
	struct record_opts o;
	int argc;
	char **argv;
	char *path;			/* the command's resolved path */
	const char *cupti_lib;		/* NULL: no GPU recording */
	bool gpu;
	time_t start_wall;		/* perf maps older than this are stale */
	/* the trace */
	struct xpu_writer_opts wo;
	struct xpu_writer *w;
	struct output out;
	struct rotate *rot;		/* bounded capture (capture/rotate.c) */
	struct xpu_prune *prune;
	struct unwind_reads *reads;
	struct launch_rules *rules;
	/* the sources */
	struct record_bpf *b;
	struct sideband *sb;
	struct channel *ch;
	struct drain *d;
	struct python *py;
	/* the processes */
	struct launch l;
	struct waitset ws;
	int64_t *cpu0;			/* -p: each process's CPU time at the start */
	int nr_attached;
	int status;
	bool have_status, ended;
	/* the end */
	struct xpu_writer_stats st;
	struct record_bpf_lost bl;
	struct drain_final df;
	struct progress fin;
	struct fin_times ft;
	int64_t cpu_ns;
	uint64_t lost_total;
	uint32_t *unconnected;		/* pids whose library never connected */
	int nr_unconnected;
	char err[512];			/* why setup failed: record__fail()'s line */
	char no_samples[512];
	int code;
};

/* Setup failed (rec->err, rec->code): undo what was done, one line, exit. */
static void __attribute__((noreturn)) record__fail(struct record *rec);

/* Options and the checks before any setup; --activate's wait for -p.
 * Returns -1 to go on, else the exit code. */
static int record__options(struct record *rec, int argc, char **argv)
{
	struct record_opts *o = &rec->o;

	rec->argc = argc;
	rec->argv = argv;
	record_opts__parse(o, argc, argv);
	if (o->argv)
		rec->path = record__find_program(o->argv[0]);
	for (int i = 0; i < o->nr_pids; i++)
		if (kill(o->pids[i], 0) && errno == ESRCH)
			die(XPU_EXIT_NOTFOUND, "-p %d: no such process", o->pids[i]);
	record__check_privileges();
	record__check_btf();
	record__check_pid_namespace();
	/* --activate with -p: nothing is set up before the instant */
	if (o->nr_pids && !activate__wait(&o->rot, &sig_count))
		return 128 + sig_last;
	if (!o->no_gpu) {
		rec->cupti_lib = o->cupti_lib ? o->cupti_lib : record__default_cupti_lib();
		if (o->cupti_lib && access(o->cupti_lib, R_OK))
			die(XPU_EXIT_NOTFOUND, "--cupti-lib %s: %s", o->cupti_lib, strerror(errno));
		if (!rec->cupti_lib)
			debug(1, "no libxpu-cupti.so beside xpu-record or in ../lib/xpu-perf: GPU "
			      "recording off");
	}
	rec->gpu = rec->cupti_lib != NULL;
	return -1;
}

/*
 * Where the report's CFI unwinding of a stack is known
 * (record/unwind/unwind_reads.c), its frames are written instead of the
 * registers and the stack copy (XPU_STACK_UNWOUND, format 1.6); the other
 * stacks keep the words an unwinder may read (format/stack_prune.h).
 * XPU_STACK_PRUNE=0 keeps whole copies, =address the address rule alone
 * (1.4), =cfi the words the CFI unwinding reads rather than its frames (1.5).
 */
static void record__setup_prune(struct record *rec)
{
	int mode = rec->o.stack_prune;
	struct xpu_prune_reads r;

	if (!rec->o.dwarf || mode == RECORD_PRUNE_NONE)
		return;
	rec->prune = rec->wo.prune = xpu_prune__new();
	if (!rec->prune)
		die(XPU_EXIT_FAILURE, "out of memory");
	if (mode == RECORD_PRUNE_ADDRESS)
		return;
	rec->reads = unwind_reads__new();
	unwind_reads__set_simple_check(rec->reads, rec->o.unwind_simple_check);
	unwind_reads__hook(rec->reads, &r);
	if (mode == RECORD_PRUNE_CFI)
		r.frames = NULL;
	xpu_prune__set_reads(rec->prune, &r);
}

/* The trace: its writer's options, the file (or bounded capture's sink),
 * META. Nothing is set up before: a failure dies at once. */
static void record__setup_trace(struct record *rec)
{
	struct xpu_writer_opts *wo = &rec->wo;
	struct record_opts *o = &rec->o;
	int ret;

	wo->features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_KERNEL_STACKS |
		       (o->dwarf ? XPU_FEAT_DWARF_STACKS : XPU_FEAT_FP_STACKS) |
		       (rec->gpu ? XPU_FEAT_GPU : 0) | (o->offcpu_min_us ? XPU_FEAT_OFF_CPU : 0) |
		       (o->gpu_memory ? XPU_FEAT_GPU_MEMORY : 0);
	/* Stacks coded against the thread's previous one (STACK_DELTA, format
	 * 1.4); XPU_STACK_DELTA=0 writes each in full, for comparisons. */
	wo->stack_delta = o->stack_delta;
	/* Coded, a chunk is 10-30x smaller before compression: zstd level 9
	 * then costs less than level 3 on whole copies and saves 10-15% more
	 * (Documentation/design-trace-size.md). */
	if (wo->stack_delta)
		wo->zstd_level = 9;
	/* Full chunks are compressed by the writer's thread: the reader of
	 * the rings only copies records, and a launch burst is not met while
	 * it compresses (format/writer.h). */
	wo->background = true;
	record__setup_prune(rec);
	if (rotate_opts__active(&o->rot))
		rec->rot = rotate__new(&o->rot, o->output, wo);
	if (rotate_opts__files(&o->rot)) {
		/* FILE.<timestamp> files, written by rotate.c */
		memset(&rec->out, 0, sizeof(rec->out));
		rec->out.fd = -1;
		rec->w = xpu_writer__sink_open(wo);
		if (!rec->w)
			die(XPU_EXIT_FAILURE, "out of memory");
	} else if (output__create(&rec->out, o->output, rec->err, sizeof(rec->err))) {
		die(XPU_EXIT_OUTPUT, "%s", rec->err);
	} else {
		rec->w = xpu_writer__fdopen(rec->out.fd, wo);
	}
	if (!rec->w) {
		ret = errno;
		close(rec->out.fd);
		output__abort(&rec->out);
		die(XPU_EXIT_OUTPUT, "cannot write %s: %s: choose a writable path with -o", o->output,
		    strerror(ret));
	}
	meta__write_start(rec->w, o, rec->argc, rec->argv, rec->gpu, rec->cupti_lib);
}

/* The GPU side: the socket, the marker's uprobe, the launch walk's rules. */
static int record__setup_gpu(struct record *rec)
{
	struct record_opts *o = &rec->o;
	int ret = channel__open(&rec->ch, rec->w);

	if (ret) {
		snprintf(rec->err, sizeof(rec->err), "cannot create the GPU records socket: %s",
			 strerror(-ret));
		rec->code = XPU_EXIT_FAILURE;
		return -1;
	}
	channel__set_peer_check(rec->ch, main__peer_tracked, rec->b);
	main__channel_library(rec->ch, rec->cupti_lib);
	/* windows and rotated files: GPU records in time for them */
	if (rotate_opts__files(&o->rot))
		channel__set_flush_ms(rec->ch, ROTATE_GPU_FLUSH_MS);
	/* the CUDA-level allocations (cupti/memory/): told each library, launched
	 * or attached, with its ready byte */
	if (o->gpu_memory)
		channel__set_config_flags(rec->ch, XPU_CHANNEL_GPU_MEMORY);
	if (record_bpf__attach_marker(rec->b, rec->cupti_lib, rec->err, sizeof(rec->err))) {
		warn("%s: CUDA calls will have no CPU stacks", rec->err);
		rec->err[0] = 0;
	}
	if (rec->reads)
		unwind_reads__set_marker_lib(rec->reads, rec->cupti_lib);
	/* the launch walk's rule tables (--launch-stacks=walk) */
	if (rec->reads && o->launch_stacks == RECORD_LAUNCH_WALK &&
	    (rec->rules = launch_rules__new())) {
		channel__set_rules(rec->ch, rec->rules);
		unwind_reads__set_rules(rec->reads, rec->rules);
	}
	xpu_writer__meta(rec->w, XPU_META_LAUNCH_STACKS, rec->rules ? "walk" :
			 o->launch_stacks == RECORD_LAUNCH_MARKER ? "marker (--launch-stacks=marker)" :
			 !o->dwarf ? "marker (--call-graph fp: the walk needs DWARF unwinding)" :
			 "marker (XPU_STACK_PRUNE: the recorder unwinds no stack to learn "
			 "the walk's rules from)");
	return 0;
}

/* PC sampling's settings, for the library of each CUDA process (launched:
 * inherited; attached: inject.c passes them on), and their META. */
static void record__setup_pc_sampling(struct record *rec)
{
	struct record_opts *o = &rec->o;
	char period[16], meta[64];

	snprintf(period, sizeof(period), o->pc_sampling > 0 ? "%d" : "on", o->pc_sampling);
	setenv(XPU_CUPTI_PC_SAMPLING_ENV, period, 1);
	/* attached, every PC sampling call is the application's threads', and
	 * a Stop costs tens of ms: continuous unless asked */
	if (!o->pc_duty && !o->argv)
		o->pc_duty = "off";
	if (o->pc_duty)
		setenv(XPU_CUPTI_PC_DUTY_ENV, o->pc_duty, 1);
	snprintf(meta, sizeof(meta), o->pc_sampling > 0 ? "period=2^%d" : "on", o->pc_sampling);
	if (o->pc_duty)
		snprintf(meta + strlen(meta), sizeof(meta) - strlen(meta), " duty=%s", o->pc_duty);
	xpu_writer__meta(rec->w, XPU_META_GPU_PC_SAMPLING, meta);
}

/* The sources: the BPF programs, the GPU socket, the perf sideband, the
 * Python walk. 0, or -1 with rec->err and rec->code. */
static int record__setup_sources(struct record *rec)
{
	struct record_opts *o = &rec->o;
	int ret = record_bpf__open(&rec->b, o, rec->err, sizeof(rec->err));

	if (ret) {
		rec->code = ret == -EPERM ? XPU_EXIT_NOPERM : XPU_EXIT_NOKERNEL;
		return -1;
	}
	record_bpf__set_writer(rec->b, rec->w);
	record_bpf__set_prune(rec->b, rec->prune);
	if (rec->gpu && record__setup_gpu(rec))
		return -1;
	ret = sideband__open(&rec->sb, rec->w, rec->b);
	if (ret) {
		snprintf(rec->err, sizeof(rec->err), "cannot open the perf sideband events: %s",
			 strerror(-ret));
		rec->code = ret == -EACCES || ret == -EPERM ? XPU_EXIT_NOPERM : XPU_EXIT_NOKERNEL;
		return -1;
	}
	if (rec->ch)
		sideband__set_on_mapping(rec->sb, main__channel_mapped, rec->ch);
	if (o->python_frames == RECORD_PY_WALK) {
		rec->py = python__new(record_bpf__py_procs_fd(rec->b), rec->w);
		launch_rules__set_python(rec->rules, main__py_layout, rec->py);
		if (rec->ch && rec->rules)
			channel__set_python(rec->ch, main__py_stack, rec->py);
		record_bpf__set_python(rec->b, rec->py);
		sideband__set_python(rec->sb, rec->py);
	}
	xpu_writer__meta(rec->w, XPU_META_PYTHON_FRAMES, o->python_frames == RECORD_PY_WALK ?
			 "walk" : o->python_frames == RECORD_PY_OFF ? "off" : "perf-map");
	if (rec->gpu && o->pc_sampling)
		record__setup_pc_sampling(rec);
	return 0;
}

/* The command, forked and held on its pipe until released, its pid tracked. */
static int record__setup_command(struct record *rec)
{
	struct record_opts *o = &rec->o;
	int ret;

	/* Python 3.12+ then runs each Python function through a small
	 * frame-pointer trampoline named in /tmp/perf-PID.map, so stacks show
	 * py::function:file frames. Only the command's environment changes;
	 * maps we caused are removed once copied (perfmap.c). */
	if (o->python_frames == RECORD_PY_PERF_MAP && !getenv("PYTHONPERFSUPPORT")) {
		setenv("PYTHONPERFSUPPORT", "1", 1);
		o->perfmap_cleanup = true;
	}
	if (o->python_frames == RECORD_PY_PERF_MAP)
		xpu_writer__meta(rec->w, XPU_META_PYTHON_FRAMES, o->perfmap_cleanup ?
				 "perf-map (PYTHONPERFSUPPORT=1 set by xpu-record)" :
				 "perf-map (as set by the user's PYTHONPERFSUPPORT)");
	if (o->kill_on_exit && (ret = tree__watchdog(rec->b))) {
		snprintf(rec->err, sizeof(rec->err), "cannot start the --kill-on-exit watchdog: %s",
			 strerror(-ret));
		rec->code = XPU_EXIT_FAILURE;
		return -1;
	}
	ret = launch__fork(&rec->l, rec->path, o->argv, rec->cupti_lib,
			   rec->ch ? channel__path(rec->ch) : NULL, !o->no_nvtx, rec->rules != NULL);
	if (!ret)
		ret = record_bpf__track(rec->b, rec->l.pid);
	if (ret) {
		snprintf(rec->err, sizeof(rec->err), "cannot start %s: %s", o->argv[0],
			 strerror(-ret));
		rec->code = XPU_EXIT_FAILURE;
		return -1;
	}
	sideband__track(rec->sb, rec->l.pid);
	return 0;
}

/* -p: each process tracked, what it had before written (synth.c), its
 * pidfd watched. */
static void record__setup_pids(struct record *rec)
{
	struct record_opts *o = &rec->o;
	struct waitset *ws = &rec->ws;
	char *real = rec->gpu ? realpath(rec->cupti_lib, NULL) : NULL;
	int ret;

	/* a memfd copy of the library (a container, inject.c) is written as
	 * the library, in maps read now and mapped later */
	synth__set_alias("/memfd:" INJECT_MEMFD_NAME " (deleted)", real);
	sideband__set_alias(rec->sb, "/memfd:" INJECT_MEMFD_NAME " (deleted)", real);
	free(real);
	ws->fds = xcalloc(o->nr_pids, sizeof(*ws->fds));
	rec->cpu0 = xcalloc(o->nr_pids, sizeof(*rec->cpu0));
	for (int i = 0; i < o->nr_pids; i++) {
		record_bpf__track(rec->b, o->pids[i]);
		rec->cpu0[i] = cpu_time__proc(o->pids[i]);
		sideband__track(rec->sb, o->pids[i]);
		ret = synth__process(rec->w, o->pids[i]);
		if (ret == -ESRCH)
			warn("-p %d has no live thread (it has exited; a zombie until its parent "
			     "reaps it): nothing of it to record", o->pids[i]);
		else if (ret)
			warn("-p %d: cannot read /proc/%d: its threads and maps are unknown",
			     o->pids[i], o->pids[i]);
		python__scan_maps(rec->py, o->pids[i]);
		record_bpf__scan_maps(rec->b, o->pids[i]);	/* autograd probes */
		ws->fds[ws->nr].fd = pidfd_open(o->pids[i]);
		ws->fds[ws->nr].events = POLLIN;
		if (ws->fds[ws->nr].fd >= 0) {
			ws->nr++;
			ws->alive++;
		}
	}
}

/* The reader thread, -p's injections, the trace's name, bounded capture's
 * thread, the command released. 0, or -1 with rec->err and rec->code. */
static int record__start(struct record *rec)
{
	struct record_opts *o = &rec->o;
	int ret = drain__start(&rec->d, rec->w, rec->b, rec->sb, rec->ch, !rec->o.gpu_plain);

	if (ret) {
		snprintf(rec->err, sizeof(rec->err), "cannot start the reader thread: %s",
			 strerror(-ret));
		rec->code = XPU_EXIT_FAILURE;
		return -1;
	}
	/* -p: the GPU recording into each CUDA process (inject.c) */
	if (o->nr_pids && rec->ch) {
		rec->code = inject__pids(o, rec->cupti_lib, rec->ch, rec->rules != NULL,
					 main__marker_copy, rec->b, &rec->nr_attached, rec->err,
					 sizeof(rec->err));
		if (rec->code)
			return -1;
	}
	/* Setup worked: the new trace takes the name (an old one becomes .old). */
	if (output__commit(&rec->out, rec->err, sizeof(rec->err))) {
		rec->code = XPU_EXIT_OUTPUT;
		return -1;
	}
	if (rec->rot && rotate__start(rec->rot, rec->w, rec->b, rec->sb, rec->ch)) {
		snprintf(rec->err, sizeof(rec->err), "cannot write %s: choose a writable path with -o",
			 o->output);
		rec->code = XPU_EXIT_OUTPUT;
		return -1;
	}
	if (o->argv) {
		if (launch__go(&rec->l)) {
			snprintf(rec->err, sizeof(rec->err), "cannot release %s: %s", o->argv[0],
				 strerror(errno));
			rec->code = XPU_EXIT_FAILURE;
			return -1;
		}
		rec->ws.fds = xcalloc(1, sizeof(*rec->ws.fds));
		rec->ws.fds[0].fd = pidfd_open(rec->l.pid);
		rec->ws.fds[0].events = POLLIN;
		rec->ws.nr = rec->ws.fds[0].fd >= 0;
	}
	debug(1, "recording %s%s", o->argv ? o->argv[0] : "-p", rec->gpu ? " with GPU" : "");
	return 0;
}

/* Until the command ends, -d, a signal; then -p's detaches. */
static void record__run(struct record *rec)
{
	int ret;

	main__wait(&rec->o, &rec->l, &rec->ws, rec->b, &rec->status, &rec->have_status,
		   &rec->ended);
	/* -p: the libraries send the rest, detach and close (cupti/attach.h) */
	if (rec->nr_attached && (ret = drain__end_attaches(rec->d, 5.0)))
		warn("%d attached processes did not end their GPU recording within 5 s: what "
		     "they did not send is missing", ret);
	rotate__stop(rec->rot);	/* no switch or window written while ending */
	rec->cpu_ns = main__cpu_time(&rec->o, &rec->l, rec->have_status, rec->cpu0);
	if (rec->o.argv)
		main__leftovers(&rec->o, rec->b);
}

/* The sampler stopped, everything drained, the end-of-recording records. */
static void record__finish_drain(struct record *rec)
{
	struct fin_times *ft = &rec->ft;

	progress__start(&rec->fin);
	verbose__fin_start(ft);
	progress__step(&rec->fin, "stopping the sampler");
	record_bpf__detach(rec->b);
	verbose__fin_done(ft, "sampler stop");
	progress__step(&rec->fin, "draining the ring buffers");
	drain__stop(rec->d, &rec->df);
	rec->d = NULL;
	verbose__fin_done(ft, "final drain");
	verbose__fin_detail(ft, " (BPF rings %.3f, sideband and build-ids %.3f, GPU clients %.3f)",
			    rec->df.rings_s, rec->df.sideband_s, rec->df.gpu_s);
	progress__step(&rec->fin, "compressing the last records");
	xpu_writer__flush(rec->w);
	verbose__fin_done(ft, "compression flush");
	progress__step(&rec->fin, "writing kernel symbols");
	ksyms__write(rec->w, record_bpf__kernel_ips(rec->b));
	verbose__fin_done(ft, "kernel symbols");
	xpu_writer__stats(rec->w, &rec->st);
	progress__step(&rec->fin, "copying perf maps");
	if (rec->gpu)	/* the drain thread is done with the channel */
		rec->nr_unconnected = channel__unconnected(rec->ch, &rec->unconnected);
	main__say_what_happened(rec->w, &rec->o, rec->gpu ? rec->ch : NULL,
				rec->st.per_type[XPU_REC_GPU_CORR], rec->wo.features,
				perfmap__copy(rec->w, rec->sb, &rec->o, rec->start_wall),
				python__finish(rec->py), rec->nr_unconnected);
	record_bpf__lost(rec->b, &rec->bl);
	main__no_samples(rec->w, &rec->o, rec->b, rec->cpu_ns, rec->st.per_type[XPU_REC_SAMPLE],
			 rec->bl.samples, rec->no_samples, sizeof(rec->no_samples));
	xpu_writer__flush(rec->w);
	verbose__fin_done(ft, "perf maps and metadata");
}

/* The LOST records, each source its own, and the command's exit status. */
static void record__finish_lost(struct record *rec)
{
	struct record_bpf_lost *bl = &rec->bl;
	uint64_t *total = &rec->lost_total;

	main__lost(rec->w, XPU_LOST_SAMPLES, bl->samples, total);
	main__lost(rec->w, XPU_LOST_STACK_READ, bl->stack_read, total);
	if (rec->o.offcpu_min_us)
		main__lost(rec->w, XPU_LOST_OFFCPU, bl->offcpu, total);
	if (rec->o.gpu_memory)
		main__lost(rec->w, XPU_LOST_GPU_BLOCK, bl->gpu_block, total);
	if (rec->py)
		main__lost(rec->w, XPU_LOST_PYTHON, bl->python, total);
	main__lost(rec->w, XPU_LOST_SIDEBAND, sideband__lost(rec->sb), total);
	if (rec->gpu) {
		main__lost(rec->w, XPU_LOST_CORR, bl->corr, total);
		main__lost(rec->w, XPU_LOST_GPU_CHANNEL, channel__lost(rec->ch), total);
		main__lost_unconnected(rec->w, rec->unconnected, rec->nr_unconnected, total);
	}
	xpu_writer__stats(rec->w, &rec->st);
	if (rec->st.dropped)	/* records the output could not take (disk full) */
		main__lost(rec->w, XPU_LOST_OUTPUT, rec->st.dropped, total);
	if (rec->have_status && rec->l.pid > 0) {
		struct xpu_exit x = { .time = record__now_ns(), .pid = rec->l.pid, .tid = rec->l.pid,
				      .flags = XPU_EXIT_HAS_STATUS, .status = rec->status };

		xpu_writer__add(rec->w, XPU_REC_EXIT, &x, sizeof(x));
	}
}

/* FINISH, the trace closed, the summary line. Returns the close's 0 or
 * -errno. */
static int record__finish_close(struct record *rec)
{
	struct xpu_finish f = { .time = record__now_ns(),
				.nr_samples = rec->st.per_type[XPU_REC_SAMPLE],
				.nr_corr = rec->st.per_type[XPU_REC_GPU_CORR],
				.nr_lost = rec->lost_total };
	struct record_opts *o = &rec->o;
	uint64_t gpu_recs = 0;
	int ret;

	for (int t = 0; t < XPU_REC_MAX; t++)
		if (xpu_rectype__is(t, XPU_RECF_GPU) && t != XPU_REC_GPU_CORR)
			gpu_recs += rec->st.per_type[t];
	f.nr_gpu = gpu_recs;
	xpu_writer__add(rec->w, XPU_REC_FINISH, &f, sizeof(f));
	verbose__fin_done(&rec->ft, "lost counts");
	progress__step(&rec->fin, "closing the trace");
	verbose__unwind(rec->reads, rec->prune);
	verbose__rules(rec->rules);
	ret = xpu_writer__close_stats(rec->w, &rec->st);
	rec->w = NULL;
	rotate__end(rec->rot, xpu_quiet);	/* the last file, or the last window */
	verbose__fin_done(&rec->ft, "close (fsync)");
	progress__end(&rec->fin);
	/* No rename here: the trace got its name before the command started
	 * (output__commit) and is written in place. */
	debug(1, "end of recording: %.3f s from the command's exit to the trace closed (%s)",
	      (record__now_ns() - rec->ft.start_ns) / 1e9, rec->ft.line);
	if (ret) {
		main__write_error(o->output, -ret, &rec->st);
		/* The command ran: its status is still ours (record__exit_code). */
		if (!rec->have_status)
			rec->code = XPU_EXIT_OUTPUT;
	} else if (!xpu_quiet && !rotate_opts__files(&o->rot)) {
		/* KB below 1 MB: a small trace is not "0.0 MB" */
		bool mb = rec->st.file_bytes >= 1048576;

		fprintf(stderr, "xpu-record: %llu samples, %llu GPU records, %llu lost, %.1f %s "
			"written to %s\n", (unsigned long long)f.nr_samples,
			(unsigned long long)(f.nr_corr + gpu_recs),
			(unsigned long long)rec->lost_total,
			rec->st.file_bytes / (mb ? 1048576.0 : 1024.0), mb ? "MB" : "KB", o->output);
	}
	return ret;
}

/* --buildid-cache, once the trace is closed: a copy stuck in a file
 * (common/bounded.h does not bound copies) ends with the first SIGINT or
 * SIGTERM; copies go to a temporary name, so none is left half written. */
static void record__buildid_cache(struct record *rec)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	progress__start(&rec->fin);
	progress__step(&rec->fin, "--buildid-cache: copying the mapped files");
	if (buildid_cache__fill(rec->o.output)) {
		progress__end(&rec->fin);
		warn("--buildid-cache: not every file could be copied (see above)");
	}
	progress__end(&rec->fin);
}

/* The end: drained, lost counts, closed, -v's accounting, the cache, the
 * warnings every recording of this kind gets. */
static void record__finish(struct record *rec)
{
	int ret;

	record__finish_drain(rec);
	record__finish_lost(rec);
	ret = record__finish_close(rec);
	verbose__process(rec->b, rec->df.cpu_s, &rec->st);
	main__stuck_reads();
	if (rec->o.buildid_cache && !ret && rec->code == XPU_EXIT_OK &&
	    !rotate_opts__files(&rec->o.rot))
		record__buildid_cache(rec);
	if (rec->no_samples[0])
		warn("CPU samples: %s: the profile lacks that time (xpu-report --header says so "
		     "too)", rec->no_samples);
	if (rec->bl.samples && !xpu_quiet)
		warn("%llu samples lost: the ring buffer was full; lower -F or the --call-graph size",
		     (unsigned long long)rec->bl.samples);
	if (rec->bl.offcpu && !xpu_quiet)
		warn("%llu off-CPU records lost: their ring buffer was full; raise --off-cpu=MIN_US "
		     "or use --call-graph fp", (unsigned long long)rec->bl.offcpu);
	if (rec->nr_unconnected)
		main__warn_unconnected(rec->unconnected, rec->nr_unconnected);
	if (rec->ch && channel__refused(rec->ch))
		warn("%llu connections to the GPU records socket came from processes outside the "
		     "recorded command and were refused: nothing they sent is in the trace "
		     "(-v names them)", (unsigned long long)channel__refused(rec->ch));
}

/* Ours, or the command's: a launched command's status is xpu-record's. */
static int record__exit_code(const struct record *rec)
{
	const int status = rec->status;

	if (!rec->have_status && rec->l.pid > 0 && sig_count && rec->code == XPU_EXIT_OK)
		return 128 + sig_last;	/* second signal: we left the command running */
	if (!rec->have_status || rec->code != XPU_EXIT_OK)
		return rec->code;
	/* -d ended it with our SIGTERM (or SIGKILL): that is a normal end. */
	if (rec->ended && WIFSIGNALED(status) &&
	    (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL))
		return XPU_EXIT_OK;
	return main__exit_code(status);
}

/* The one teardown path: what any phase set up, freed. */
static void record__teardown(struct record *rec)
{
	drain__stop(rec->d, NULL);
	rec->d = NULL;
	sideband__close(rec->sb);
	channel__close(rec->ch);
	record_bpf__close(rec->b);
	python__free(rec->py);
	rotate__stop(rec->rot);
	if (rec->w)
		xpu_writer__close(rec->w);
	rotate__free(rec->rot);
	xpu_prune__free(rec->prune);	/* the writer is closed */
	unwind_reads__free(rec->reads);
	launch_rules__free(rec->rules);
	for (int i = 0; i < rec->ws.nr; i++)
		if (rec->ws.fds[i].fd >= 0)
			close(rec->ws.fds[i].fd);
	free(rec->ws.fds);
	free(rec->cpu0);
	free(rec->path);
	free(rec->unconnected);
}

static void record__fail(struct record *rec)
{
	launch__abort(&rec->l);
	drain__stop(rec->d, NULL);	/* before the writer it feeds */
	rec->d = NULL;
	record__teardown(rec);
	output__abort(&rec->out);
	die(rec->code, "%s", rec->err);
}

int main(int argc, char **argv)
{
	struct record rec = { .l = { .pid = 0, .go_fd = -1 }, .code = XPU_EXIT_OK,
			      .start_wall = time(NULL) - 1 };
	int code;

	xpu_log_init(argv[0]);
	launch__save_signals();	/* the command starts with these, not with ours */
	main__signals();	/* first change: a SIGINT during setup must not be lost */
	if ((code = record__options(&rec, argc, argv)) >= 0)
		return code;
	record__setup_trace(&rec);
	if (record__setup_sources(&rec))
		record__fail(&rec);
	if (rec.o.argv ? record__setup_command(&rec) : (record__setup_pids(&rec), 0))
		record__fail(&rec);
	if (record__start(&rec))
		record__fail(&rec);
	record__run(&rec);
	record__finish(&rec);
	code = record__exit_code(&rec);
	record__teardown(&rec);
	return code;
}
