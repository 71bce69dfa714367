/* SPDX-License-Identifier: MIT */
/*
 * xpu-record's internal interfaces. main.c runs the life cycle: options,
 * checks, output, BPF, sideband events, GPU channel, child launch, drain
 * thread, wait, finish. Each other file owns one of those pieces.
 */
#ifndef XPU_RECORD_H
#define XPU_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "common/hashmap.h"
#include "format/writer.h"
#include "record/capture/rotate_opts.h"

struct record_opts {
	const char *output;
	unsigned int freq;
	bool dwarf;
	unsigned int stack_bytes;
	size_t ring_size;		/* --ring-size: sample ring bytes; 0: sized for -F */
	double duration;		/* seconds; 0: until the command ends */
	bool no_gpu;
	const char *cupti_lib;		/* NULL: default location */
	bool buildid_cache;		/* copy mapped files into the build-id cache */
	int python_frames;		/* RECORD_PY_* */
	bool no_nvtx;			/* do not inject NVTX (NVTX_INJECTION64_PATH) */
	int pc_sampling;		/* --gpu-pc-sampling: 0 off, -1 CUPTI's period, else 2^N */
	const char *pc_duty;		/* --gpu-pc-duty: NULL the default */
	bool no_autograd;		/* no uprobes in libtorch_cpu.so (design-autograd.md) */
	int launch_stacks;		/* RECORD_LAUNCH_* */
	bool perfmap_cleanup;		/* remove the perf maps we caused, once copied */
	bool kill_on_exit;		/* end the command's tree when xpu-record exits */
	unsigned int offcpu_min_us;	/* off-CPU blocks kept with a stack; 0: no off-CPU */
	struct rotate_opts rot;		/* --switch-output, --flight-recorder, --trigger,
					 * --activate (rotate.h) */
	pid_t *pids;			/* -p */
	int nr_pids;
	char **argv;			/* command after -- */
};

/* --python-frames: where Python frames come from. */
enum { RECORD_PY_WALK, RECORD_PY_PERF_MAP, RECORD_PY_OFF };

/* --launch-stacks: how a CUDA call's stack is taken (design-gpu.md). */
enum { RECORD_LAUNCH_WALK, RECORD_LAUNCH_MARKER };

/* Off-CPU blocks shorter than this (us) are summed, not recorded one by one. */
#define RECORD_OFFCPU_DEFAULT_US 100

/* options.c */
void record_opts__parse(struct record_opts *o, int argc, char **argv);

/* output.c: the trace file, created new (O_EXCL, 0600, the sudo user's) under
 * a hidden name beside PATH; output__commit() moves an existing PATH to
 * PATH.old and the new file to PATH, output__abort() undoes it all after a
 * failed start. Errors are one line in err; return 0 or -errno. */
struct output {
	const char *path;		/* -o */
	char *tmp;			/* the new file's name until committed */
	int fd;				/* open for writing; the writer takes it */
	dev_t dev;			/* our file, so that only it is removed */
	ino_t ino;
	bool committed;			/* renamed to path */
	bool moved_old;			/* an existing path was renamed to path.old */
};
int output__create(struct output *out, const char *path, char *err, size_t errlen);
int output__commit(struct output *out, char *err, size_t errlen);
void output__abort(struct output *out);
/* The files of bounded capture (record/capture/rotate.c) are made by
 * output__create() too, then named and removed only while they are still
 * the file it made (dev, ino): another recording's file is never touched.
 * output__move: from (our file) to to, which must not exist; -EEXIST if it
 * does, -ESTALE if from is no longer our file. output__remove: unlinks
 * name if it is that file; -ESTALE if not. */
int output__move(dev_t dev, ino_t ino, const char *from, const char *to);
int output__remove(dev_t dev, ino_t ino, const char *name);

/* checks.c: one-line fatal errors for what can be checked before any setup */
void record__check_privileges(void);
void record__check_btf(void);
void record__check_pid_namespace(void);
/* Returns the resolved path of argv[0] (malloc'ed), or dies. */
char *record__find_program(const char *name);
const char *record__default_cupti_lib(void);

/* bpf.c */
struct record_bpf;
int record_bpf__open(struct record_bpf **out, const struct record_opts *o, char *err, size_t errlen);
int record_bpf__attach_marker(struct record_bpf *b, const char *lib, char *err, size_t errlen);
/* The marker's uprobe on a copy of the library (path: a process's memfd
 * through /proc, xpu-record -p into a container). Returns 0 or -errno. */
int record_bpf__attach_marker_copy(struct record_bpf *b, const char *path);
/* A tracked process mapped PATH: if it is libtorch_cpu.so, the autograd
 * uprobes (once per file; not with --no-autograd or --no-gpu). */
void record_bpf__mapping(struct record_bpf *b, pid_t pid, const char *path);
/* elf_funcs.c: the file offsets of the functions names[0..n) of the ELF
 * file path (defined in its dynamic or full symbol table); 0 when all found.
 * Regular files only, read with a time bound (common/bounded.h); names are
 * static strings (at most ELF_FUNCS_MAX). */
#define ELF_FUNCS_MAX	4
#define ELF_FUNCS_KNOWN	8
int elf_funcs__offsets(const char *path, const char *const *names, int n, uint64_t *offs);
struct elf_funcs_file {
	int fd;			/* the file opened: the caller closes it */
	uint64_t key;		/* st_dev << 40 ^ st_ino: the same file by another path */
	bool read;		/* key was not one of known[]: the offsets were read */
	bool ok;		/* read, and every function found */
	uint64_t off[ELF_FUNCS_MAX];
};
/* Opens path (0 and *out, or -errno) and, unless its key is one of
 * known[0..nr_known), reads the offsets of names[0..n) into out->off. */
int elf_funcs__open(const char *path, const char *const *names, int n, const uint64_t *known,
		    int nr_known, struct elf_funcs_file *out);

/* Process pid exited (its leader): forget its autograd probes' places. */
void record_bpf__exit(struct record_bpf *b, pid_t pid);

/* For -p: record_bpf__mapping() for each file pid has mapped executable. */
void record_bpf__scan_maps(struct record_bpf *b, pid_t pid);
void record_bpf__set_writer(struct record_bpf *b, struct xpu_writer *w);
struct u64map *record_bpf__kernel_ips(struct record_bpf *b);
/* The map of Python processes (bpf/xpu_python.bpf.h), and who gets the
 * PY_STACK records the programs send (NULL: they are written as they come). */
struct python;
int record_bpf__py_procs_fd(struct record_bpf *b);
struct python *record_bpf__python(struct record_bpf *b);	/* NULL: no walk */
void record_bpf__set_python(struct record_bpf *b, struct python *py);
/* Stack records are written with the words no unwinder reads zeroed
 * (format/stack_prune.h); sync drains the side-band first when a sample
 * may have run code whose mapping is still in its ring (drain thread). */
struct xpu_prune;
void record_bpf__set_prune(struct record_bpf *b, struct xpu_prune *p);
void record_bpf__set_sync(struct record_bpf *b, void (*sync)(void *ctx), void *ctx);
void record_bpf__detach(struct record_bpf *b);
size_t record_bpf__ring_bytes(struct record_bpf *b);	/* data bytes of the rings */
int record_bpf__sampled_cpus(struct record_bpf *b);	/* CPUs with a sampling event */
/* Makes the GPU correlation ring (the first CUDA process connected). */
int record_bpf__gpu_ring(struct record_bpf *b);
int record_bpf__track(struct record_bpf *b, pid_t pid);
bool record_bpf__is_tracked(struct record_bpf *b, pid_t pid);
/* The tracked processes: their count, and their pids in *pids (malloc'ed)
 * unless pids is NULL. Only current while the programs are attached. */
int record_bpf__tracked(struct record_bpf *b, pid_t **pids);
/* The fds that keep the tracked set current: the map and the fork and exit
 * tracepoint links (a link stays attached while any process holds its fd). */
int record_bpf__tracking_fds(struct record_bpf *b, int fds[3]);
int record_bpf__ring_fd(struct record_bpf *b);
/* Consumes both ring buffers, appending their records to the writer. */
int record_bpf__consume(struct record_bpf *b);
struct record_bpf_lost {
	uint64_t samples, corr, stack_read, offcpu;
	uint64_t python;		/* Python walks cut short or stopped by a check */
	uint64_t offcpu_blocks;		/* switch-outs seen (statistics) */
};
void record_bpf__lost(struct record_bpf *b, struct record_bpf_lost *l);
void record_bpf__close(struct record_bpf *b);

/* sideband.c: perf's mmap/comm/task records, filtered to tracked processes */
struct sideband;
struct perf_event_mmap_page;
int sideband__open(struct sideband **out, struct xpu_writer *w, struct record_bpf *b);
/* The same over nr rings already in memory, laid out as perf's: meta[i] the
 * control page, data[i] its size data bytes (a power of two). For tests,
 * which write perf records there by hand. b may be NULL: then the tracked
 * pids are those given to sideband__track() and their descendants. */
int sideband__open_rings(struct sideband **out, struct xpu_writer *w, struct record_bpf *b,
			 struct perf_event_mmap_page **meta, uint8_t **data, int nr, uint64_t size);
void sideband__track(struct sideband *sb, pid_t pid);
int sideband__nr_fds(struct sideband *sb);
int sideband__fd(struct sideband *sb, int i);
int sideband__drain(struct sideband *sb);
uint64_t sideband__lost(struct sideband *sb);
/* Whether pid was ever tracked during the recording. */
bool sideband__seen(struct sideband *sb, pid_t pid);
void sideband__close(struct sideband *sb);
/* Executable mappings of the file named from are written as mappings of
 * to: a memfd copy of the CUPTI library (its /proc name) as the library it
 * is a byte-for-byte copy of (inject.c), so that it is symbolized and
 * unwound as that file. */
void sideband__set_alias(struct sideband *sb, const char *from, const char *to);

/* sideband__open*(): the Python side learns of mappings, forks and execs. */
void sideband__set_python(struct sideband *sb, struct python *py);

/* python.c: the interpreter walk's user-space half: sets up each Python
 * process's entry in the BPF map, writes PY_CODE records for the code
 * objects PY_STACK records name (before them), checks at the end. map_fd:
 * the map of Python processes (record_bpf__py_procs_fd()): python.c calls
 * nothing of bpf.c, bpf.c hands it the PY_STACK records (python__stack). */
struct python *python__new(int map_fd, struct xpu_writer *w);
/* An executable file mapping of a tracked process (start maps pgoff), made
 * at time (0: unknown, a -p scan). */
void python__mapping(struct python *py, pid_t pid, const char *path, uint64_t start,
		     uint64_t pgoff, uint64_t time);
/* python__mapping() for each executable mapping in /proc/PID/maps (-p). */
void python__scan_maps(struct python *py, pid_t pid);
void python__fork(struct python *py, pid_t ppid, pid_t pid, uint64_t time);
/* An exec at time drops the process's entry, unless a mapping drained
 * before it (another CPU's sideband buffer) set it after the exec. */
void python__exec(struct python *py, pid_t pid, uint64_t time);
/* A launcher linked to libpython was mapped and its library not yet: the
 * reader should read the side-band every millisecond for now. */
bool python__waiting(struct python *py);
/* A PY_STACK body (len bytes) about to be written. */
void python__stack(struct python *py, const void *body, size_t len);
/* The layout registered for pid (its py_procs entry): false when none. */
struct xpu_bpf_py_cfg;
bool python__layout_of(struct python *py, pid_t pid, struct xpu_bpf_py_cfg *cfg);
/* pid runs a CPython the walk cannot read (a version it does not know, a
 * free-threaded build, no PyCode_Type): its stacks stay native. Any thread. */
bool python__native(struct python *py, pid_t pid);
/* The self-checks' warnings; returns the number of PY_STACK records seen. */
uint64_t python__finish(struct python *py);
void python__free(struct python *py);

/* synth.c: records for processes that already run (-p) */
int synth__process(struct xpu_writer *w, pid_t pid);
/* Mappings of the file named from are written as mappings of to (see
 * sideband__set_alias()). */
void synth__set_alias(const char *from, const char *to);

/* buildid.c */
int buildid__read_file(const char *path, uint8_t *id, uint8_t *size);
/* Opens path (from the system: regular files only, never blocking) as an
 * ELF file: 0 with *fd and *e (the caller ends both), or -errno. */
struct Elf;
int buildid__open_elf(const char *path, int *fd, struct Elf **e);

/* The file process pid mapped at [start, end) from path, opened to be
 * copied: through /proc/PID/map_files (the mapped inode itself, whatever
 * the path names now) while the mapping is there, else by path without
 * following any link (file__open_nolinks()). Its build-id, read through
 * that descriptor, goes to id/size, its fstat to st, and mapped says which
 * way it was opened. The descriptor (the caller closes it), or -errno
 * (-ENOENT: no build-id). With the time bound of common/bounded.h. */
struct stat;
int buildid__open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path,
			 uint8_t *id, uint8_t *size, struct stat *st, bool *mapped);

/* buildid_cache.c: copies the trace's mapped files into the build-id cache */
int buildid_cache__fill(const char *trace);

/* procenv.c: the rank variables of a process's environment as one
 * XPU_REC_PROC_ENV record. The keys copied (NULL-terminated list): */
extern const char *const procenv_keys[];
#define PROCENV_READ_MAX	(1u << 20)	/* environ bytes read at most */
#define PROCENV_PAIRS_MAX	8192		/* bytes of pairs at most */
/* The wanted "KEY=VALUE" entries of env (len bytes of NUL-separated
 * entries) as "KEY\0VALUE\0" pairs in out (cap bytes); returns the bytes
 * used. An entry not terminated inside len (cut by the read limit) is left
 * out. */
size_t procenv__pick(const char *env, size_t len, char *out, size_t cap);
/* Reads /proc/PID/environ (at most PROCENV_READ_MAX bytes) and writes the
 * record, with time that of the exec it follows. Returns 0 or -errno (the
 * process is gone, or its environment is not readable yet: no record). */
int procenv__write(struct xpu_writer *w, pid_t pid, uint64_t time);

/* perfmap.c: /tmp/perf-PID.map of seen processes as XPU_REC_PERF_MAP; since:
 * files older than this (wall clock) are skipped unless -p named the pid */
int perfmap__copy(struct xpu_writer *w, struct sideband *sb, const struct record_opts *o,
		  time_t since);

/* channel.c: the GPU records socket (protocol: cupti/wire.h) */
struct channel;
int channel__open(struct channel **out, struct xpu_writer *w);
const char *channel__path(struct channel *ch);
int channel__fd(struct channel *ch);
/* Handles readiness of the listening socket or of a client fd. */
void channel__handle(struct channel *ch, int fd);
/* The complete messages at the start of buf (have bytes received from one
 * client): each one's records are validated and written as a whole
 * (xpu_writer__add_encoded), then counted; *used gets the bytes of the
 * messages written (a partial message at the end waits for more). Returns 0,
 * or -EPROTO (bad message header) or -EBADMSG (a record of the batch is
 * invalid): the client is then dropped and the message counted lost. */
int channel__receive(struct channel *ch, const uint8_t *buf, size_t have, size_t *used);
bool channel__owns(struct channel *ch, int fd);
void channel__set_epoll(struct channel *ch, int epfd);
/* fn(ctx) runs at each accepted client, before the client may go on. */
void channel__set_on_accept(struct channel *ch, void (*fn)(void *ctx), void *ctx);
/* Bounded capture: the period each CUDA process's library hands its GPU
 * records over at, told it with the ready byte (cupti/wire.h); 0: not. */
void channel__set_flush_ms(struct channel *ch, uint32_t ms);
/* Hand each client a rule table of these (launch_rules.c) with its ready
 * byte; NULL: none. */
struct launch_rules;
void channel__set_rules(struct channel *ch, struct launch_rules *rules);
/* The launch walk's PY_STACK records go through fn (python__stack(): their
 * code objects read, PY_CODE records written) before they are written. */
void channel__set_python(struct channel *ch, void (*fn)(void *arg, const void *body, size_t len),
			 void *arg);
void channel__drain_all(struct channel *ch);
uint64_t channel__lost(struct channel *ch);
/* How many CUDA processes connected during the recording. */
uint64_t channel__accepted(struct channel *ch);
uint64_t channel__records(struct channel *ch);
void channel__close(struct channel *ch);
/* NVTX range records received (GPU_NVTX): the feature bit at the end. */
uint64_t channel__nvtx_records(struct channel *ch);
/* Whether a received batch of encoded records (len bytes) holds only what a
 * CUDA process may send: GPU records but correlation ones (NVTX ranges
 * included), interned strings, its own losses (XPU_LOST_CUPTI,
 * XPU_LOST_GPU_CHANNEL, XPU_LOST_NVTX) and META keys under cupti., gpu.
 * and cuda. Samples, sideband, FINISH, correlation records or the
 * recorder's META keys would forge the recorder's part of the trace.
 * Returns 0, -EPERM (a forbidden record) or -EINVAL (records overrun the
 * batch); the structure proper is xpu_writer__add_encoded()'s to check. */
int channel__check_batch(const void *data, size_t len);
/* The same for a client handed a launch-rule table, process walk_pid (0:
 * none): it may also send the GPU_CORR records of its launch walk, its own
 * runtime and driver calls, frames only (cupti/walk_probe.c). */
int channel__check_batch_from(const void *data, size_t len, uint32_t walk_pid);

/* The end of an attach (xpu-record -p): every client's socket shut down for
 * writing, which tells the library to flush, detach and close
 * (cupti/attach.h). Call in the thread that handles the channel. */
void channel__shutdown_clients(struct channel *ch);
/* Clients connected now (any thread: a snapshot). */
int channel__nr_clients(struct channel *ch);
/* A process of uid may connect: the socket's directory becomes its. */
int channel__allow_uid(struct channel *ch, uid_t uid);

/* inject.c: libxpu-cupti.so into a running process (-p), design-attach.md */
struct inject_result {
	pid_t tid;			/* the thread borrowed */
	double stop_ms;			/* from its stop to its run of our code */
	double run_ms;			/* dlopen and the attach entry */
	double total_ms;		/* from its stop to its own code again */
	int step, ret;			/* the trampoline's step reached, the entry's return */
	int syscall_stops;		/* the thread's system calls meanwhile, each a stop */
	bool reloaded;			/* the library was loaded already */
	bool memfd;			/* through a memfd (a container) */
	bool cuda_app;			/* -ENOENT: CUDA libraries mapped, libcuda not yet */
	char dl_error[256];
};
/* Loads lib in pid and calls its attach entry with config (cupti/attach.h);
 * marker(ctx, path) places the marker's uprobe on a memfd copy of lib.
 * Returns 0, or -errno with one line in msg: -ENOENT the process has not
 * loaded libcuda (CPU only), -EPERM/-EACCES no permission, -ENOEXEC not an
 * x86-64 process or the library would not load, -EALREADY recorded
 * already, others. */
typedef int (*inject_marker_fn)(void *ctx, const char *path);
/* The name of the memfd a copy of the library is loaded from, where the
 * process does not see our file (a container): its mappings read
 * "/memfd:xpu-cupti (deleted)"; the recorder writes them as the file. */
#define INJECT_MEMFD_NAME	"xpu-cupti"
int inject__attach(pid_t pid, const char *lib, const char *config, inject_marker_fn marker,
		   void *marker_ctx, struct inject_result *res, char *msg, size_t msglen);
/* Each -p process gets the library (a process without libcuda, or recorded
 * already, is warned about and recorded CPU only). Returns 0 or an exit
 * code with one line in err; *nr_attached: the processes attached. */
int inject__pids(const struct record_opts *o, const char *lib, struct channel *ch, bool walk,
		 inject_marker_fn marker, void *marker_ctx, int *nr_attached, char *err, size_t errlen);

/* drain.c: the reader thread */
struct drain;
int drain__start(struct drain **out, struct xpu_writer *w, struct record_bpf *b,
		 struct sideband *sb, struct channel *ch);
/* What the final drain took, in seconds: the BPF rings, the sideband (with
 * the build-ids of the mappings seen last), the GPU clients; and the reader
 * thread's CPU time over the whole recording. */
struct drain_final {
	double rings_s, sideband_s, gpu_s;
	double cpu_s;
};
void drain__stop(struct drain *d, struct drain_final *fin);	/* final drain, then join */
/* Ends the attaches (channel__shutdown_clients() in the reader thread) and
 * waits up to timeout_s for the libraries to send the rest and close;
 * returns the clients still connected. */
int drain__end_attaches(struct drain *d, double timeout_s);

/* meta.c */
/* The META nvtx value: whether NVTX is injected, and by whom. */
const char *meta__nvtx(const struct record_opts *o, bool gpu, char *buf, size_t size);
int meta__write_start(struct xpu_writer *w, const struct record_opts *o, int argc, char **argv,
		      bool gpu, const char *cupti_lib);
/* Kernel IPs seen in samples, for XPU_REC_KSYM. */
void ksyms__note(struct u64map *seen, const uint64_t *ips, unsigned int n);
int ksyms__write(struct xpu_writer *w, struct u64map *seen);

/* launch.c */
/* Call before changing any signal disposition or the mask: the command is
 * started with the state saved here. */
void launch__save_signals(void);
struct launch {
	pid_t pid;
	int go_fd;			/* write end: closing it releases the child */
};
/* With cupti_lib, the child gets CUDA_INJECTION64_PATH and the GPU channel;
 * nvtx also points NVTX_INJECTION64_PATH at cupti_lib unless the user set it
 * (nvtx false: XPU_CUPTI_NVTX=off, so the library leaves NVTX alone); walk
 * sets XPU_CUPTI_MARKER=walk unless the user set it (the launch walk). */
int launch__fork(struct launch *l, const char *path, char **argv, const char *cupti_lib,
		 const char *socket_path, bool nvtx, bool walk);
int launch__go(struct launch *l);
void launch__abort(struct launch *l);

/* tree.c: the launched command's process tree, as the BPF tracked set has
 * it (the command and every process forked below it, until it exits) */
#define TREE_GRACE 5.0			/* seconds from SIGTERM to SIGKILL */
/* Sends sig to every process of the tree; returns how many got it. */
int tree__signal(struct record_bpf *b, int sig);
/* Ending the tree: SIGTERM to every process, SIGKILL to what is left
 * TREE_GRACE seconds later (and to what it forks), then TREE_GRACE seconds
 * more at most. Zero-initialize, call tree__end_step until it returns true. */
struct tree_end {
	int phase;			/* 0: not begun, 1: SIGTERM sent, 2: SIGKILL sent */
	double next;			/* when the phase ends (CLOCK_MONOTONIC seconds) */
	int signalled;			/* how many got the SIGTERM */
	int left;			/* processes left after the last step */
};
bool tree__end_step(struct record_bpf *b, struct tree_end *te, double now);
/* --pid-tree: root and every process below it now (parents from
 * /proc/PID/stat), root first, parents before children: their count and
 * the pids in *out (malloc'ed), or -errno. */
int tree__descendants(pid_t root, pid_t **out);
/* --kill-on-exit: forks the watchdog that ends the tree once xpu-record has
 * exited, however it exits. Call before the command is forked and before any
 * thread is started. */
int tree__watchdog(struct record_bpf *b);

/* cpu_time.c: CPU time (user + system) in ns, or -1 when unknown */
/* xpu-record's waited-for children's, with what they waited for */
int64_t cpu_time__children(void);
/* a process's, with its waited-for children's (/proc/PID/stat) */
int64_t cpu_time__proc(pid_t pid);

/* CLOCK_MONOTONIC in ns: the clock of the trace (bpf_ktime_get_ns()). */
static inline uint64_t record__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds: deadlines of -d and of ending the tree. */
static inline double record__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
