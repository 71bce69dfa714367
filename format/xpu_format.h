/* SPDX-License-Identifier: MIT */
/*
 * The xpu.data trace format, version 1.11. The normative description, with byte
 * tables and the change log, is Documentation/xpu-data-format.md: change both
 * in the same commit.
 *
 * Layout:  file header | chunk | chunk | ...
 * A chunk is a 32-byte uncompressed header followed by a zstd frame holding
 * whole records. Chunks are self-contained so a reader can verify each one,
 * skip a damaged one (resynchronising on the chunk magic) and stop cleanly at
 * a truncated tail: everything before the damage is still reported.
 *
 * All integers are little-endian. Structs below are the exact byte layouts
 * (naturally aligned, no implicit padding; checked by static asserts) and are
 * read with memcpy on little-endian hosts, which is all we build for.
 */
#ifndef XPU_FORMAT_H
#define XPU_FORMAT_H

#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpu-perf reads and writes traces as little-endian structs; big-endian hosts are not supported"
#endif

#define XPU_FILE_MAGIC		"XPUPERF\0"	/* 8 bytes */
#define XPU_VERSION_MAJOR	1	/* incompatible changes: old readers refuse */
#define XPU_VERSION_MINOR	12	/* compatible additions: old readers skip */

/* Feature flags in the file header: which kinds of data the recorder enabled. */
#define XPU_FEAT_CPU_SAMPLES	(1ULL << 0)
#define XPU_FEAT_DWARF_STACKS	(1ULL << 1)	/* samples carry regs + stack copy */
#define XPU_FEAT_FP_STACKS	(1ULL << 2)	/* samples carry user PCs */
#define XPU_FEAT_GPU		(1ULL << 3)	/* CUPTI activity + correlation records */
#define XPU_FEAT_KERNEL_STACKS	(1ULL << 4)
#define XPU_FEAT_OFF_CPU	(1ULL << 5)	/* OFFCPU records: blocked time with stacks */
#define XPU_FEAT_NVTX		(1ULL << 6)	/* GPU_NVTX records */
#define XPU_FEAT_PYTHON		(1ULL << 7)	/* PY_STACK + PY_CODE records (1.3) */
#define XPU_FEAT_GPU_MEMORY	(1ULL << 8)	/* GPU_MEMORY, GPU_MEMPOOL, GPU_BLOCK records (1.12) */

struct xpu_file_header {		/* 64 bytes at offset 0 */
	char magic[8];			/* XPU_FILE_MAGIC */
	uint16_t major;
	uint16_t minor;
	uint32_t header_size;		/* sizeof(struct xpu_file_header); chunks start here */
	uint64_t features;		/* XPU_FEAT_* */
	uint64_t realtime_ns;		/* CLOCK_REALTIME at record start ... */
	uint64_t monotonic_ns;		/* ... and CLOCK_MONOTONIC at the same instant */
	uint8_t reserved[24];		/* must be zero */
};

#define XPU_CHUNK_MAGIC		0x4b484358u	/* "XCHK" */
#define XPU_CHUNK_ZSTD		(1u << 0)	/* payload is one zstd frame (else raw) */
#define XPU_CHUNK_MAX_RAW	(64u << 20)	/* readers refuse larger chunks as corrupt */

struct xpu_chunk_header {		/* 32 bytes */
	uint32_t magic;			/* XPU_CHUNK_MAGIC */
	uint32_t header_size;		/* 32; payload follows */
	uint32_t comp_size;		/* payload bytes in the file */
	uint32_t raw_size;		/* bytes after decompression */
	uint32_t nr_records;
	uint32_t flags;			/* XPU_CHUNK_* */
	uint32_t payload_crc;		/* crc32 (zlib) of the payload as stored */
	uint32_t header_crc;		/* crc32 of the previous 28 bytes */
};

/* Every record starts with this. size covers the header, is a multiple of 8. */
struct xpu_record_header {
	uint16_t type;			/* XPU_REC_* */
	uint16_t flags;			/* per type; unknown bits ignored */
	uint32_t size;
};

#define XPU_RECORD_ALIGN	8

/* Header flag of any type (1.7): a record written again at the start of a
 * file of a rotated or flight-recorder recording (xpu-record --switch-output,
 * --flight-recorder), so that the file is readable alone: a process's MMAP,
 * COMM, FORK, ... as they were written when they happened, with that time.
 * Its time is not in the file's span: readers take no time range from it. */
#define XPU_RECORD_REPEATED	(1u << 15)

enum xpu_record_type {
	XPU_REC_META		= 1,	/* "key\0value\0": recording metadata */
	XPU_REC_COMM		= 2,	/* thread name, and exec */
	XPU_REC_FORK		= 3,	/* new process or thread */
	XPU_REC_EXIT		= 4,	/* thread or process exit */
	XPU_REC_MMAP		= 5,	/* executable file mapping with build-id */
	XPU_REC_SAMPLE		= 6,	/* CPU sample with stack */
	XPU_REC_LOST		= 7,	/* events dropped, by source */
	XPU_REC_KSYM		= 8,	/* kernel symbol for kernel frames */
	XPU_REC_PERF_MAP	= 9,	/* one line of /tmp/perf-PID.map (JIT symbols) */
	XPU_REC_STRING		= 10,	/* interned string (GPU kernel names) */
	XPU_REC_FINISH		= 11,	/* recording ended cleanly: final counts */
	XPU_REC_OFFCPU		= 12,	/* time a thread spent off CPU, with its stack (1.2) */
	XPU_REC_PY_STACK	= 13,	/* Python frames of the SAMPLE/GPU_CORR that follows (1.3) */
	XPU_REC_PY_CODE		= 14,	/* a Python code object's names and line table (1.3) */
	XPU_REC_PROC_ENV	= 15,	/* rank variables of a process's environment at exec (1.3) */
	XPU_REC_AUTOGRAD	= 17,	/* a PyTorch autograd node made or run (1.7) */

	/* GPU records (filled in by the CUPTI library and the marker uprobe). */
	XPU_REC_GPU_KERNEL	= 32,
	XPU_REC_GPU_MEMCPY	= 33,
	XPU_REC_GPU_MEMSET	= 34,
	XPU_REC_GPU_SYNC	= 35,
	XPU_REC_GPU_API		= 36,	/* runtime/driver API call interval */
	XPU_REC_GPU_CORR	= 37,	/* CPU stack at an API call, with correlation ID */
	XPU_REC_GPU_DEVICE	= 38,	/* a GPU's properties */
	XPU_REC_GPU_NVTX	= 39,	/* an NVTX range (1.2) */
	XPU_REC_GPU_GRAPH_NODE	= 40,	/* a CUDA graph node created or cloned (1.4) */
	XPU_REC_GPU_PC_SAMPLE	= 41,	/* PC sampling: one PC's samples by stall reason (1.8) */
	XPU_REC_GPU_STALL_REASON = 42,	/* PC sampling: a stall reason's name (1.8) */
	XPU_REC_GPU_CUBIN	= 43,	/* a loaded cubin, for PC-to-line mapping (1.8) */
	XPU_REC_GPU_PC_RANGE	= 44,	/* PC sampling was on in a context from start to end (1.10) */
	XPU_REC_GPU_MEMORY	= 45,	/* a CUDA-level allocation or release (1.12) */
	XPU_REC_GPU_MEMPOOL	= 46,	/* a CUDA memory pool created, destroyed or trimmed (1.12) */
	XPU_REC_GPU_BLOCK	= 47,	/* a caching allocator's block handed out or freed (1.12) */
	XPU_REC_GPU_MEM_STATE	= 48,	/* a device's memory as a process found it (1.12) */
	XPU_REC_GPU_OOM		= 49,	/* an allocation failed for want of memory (1.12) */

	XPU_REC_MAX		= 64,
};

/* XPU_REC_META: two NUL-terminated strings, key then value, then zero padding.
 * Later records with the same key override earlier ones. The known keys, as
 * listed in the spec; writers and readers name them only through these. */
#define XPU_META_CMDLINE		"cmdline"
#define XPU_META_HOSTNAME		"hostname"
#define XPU_META_KERNEL			"kernel"
#define XPU_META_ARCH			"arch"
#define XPU_META_NR_CPUS		"nr_cpus"
#define XPU_META_SAMPLE_FREQ		"sample_freq"	/* Hz; absent: XPU_DEFAULT_SAMPLE_FREQ */
#define XPU_META_CALL_GRAPH		"call_graph"	/* "dwarf" or "fp" */
#define XPU_META_STACK_BYTES		"stack_bytes"
#define XPU_META_CLOCK			"clock"		/* "monotonic" */
#define XPU_META_TOOL_VERSION		"tool_version"
#define XPU_META_PAGE_SIZE		"page_size"
#define XPU_META_RECORD_START_REALTIME	"record_start_realtime"
#define XPU_META_GPU			"gpu"		/* "on" or "off" */
#define XPU_META_CUPTI_LIB		"cupti_lib"
#define XPU_META_PYTHON_FRAMES		"python_frames"
#define XPU_META_OFF_CPU		"off_cpu"	/* "min_us=N" or "off" (1.2) */
#define XPU_META_NVTX			"nvtx"		/* "on (...)", "off", or the user's injection */
#define XPU_META_LAUNCH_STACKS		"launch_stacks"	/* "walk" or "marker (...)" (1.6) */
#define XPU_META_GPU_PC_SAMPLING	"gpu_pc_sampling"	/* "period=N" or "off" (1.8) */
#define XPU_META_CPU_SAMPLES		"cpu_samples"	/* "none, although ...": only then (1.7) */
/* Bounded capture (1.7): the files of one recording (rotated, or windows
 * of the flight recorder) share this id, and so their processes */
#define XPU_META_RECORDING_ID		"recording_id"
#define XPU_META_RECORDING_FILE		"recording_file"	/* this file's name when written */
#define XPU_META_RECORDING_WINDOW	"recording_window"	/* flight recorder: why written */
/* A rotated or flight-recorder file's window (its records' times), the
 * recording's start (CLOCK_MONOTONIC ns, decimal), and how far the GPU
 * records lagged the window's end: "lag_ns=N flush_ns=P", or "none: ..." */
#define XPU_META_WINDOW_START		"window.start"
#define XPU_META_WINDOW_END		"window.end"
#define XPU_META_WINDOW_RECORDING_START	"window.recording_start"
#define XPU_META_WINDOW_GPU_LAG		"window.gpu_lag"
/* Sent by the CUPTI library of each CUDA process. */
#define XPU_META_GPU_COUNT		"gpu.count"
#define XPU_META_GPU_NAME_FMT		"gpu.%d.name"
#define XPU_META_GPU_ERROR		"gpu.error"
#define XPU_META_GPU_SUBSCRIBER_CONFLICT "gpu.subscriber_conflict"
#define XPU_META_CUDA_DRIVER_VERSION	"cuda.driver_version"
#define XPU_META_CUDA_RUNTIME_VERSION	"cuda.runtime_version"
#define XPU_META_CUPTI_NESTED_CORR	"cupti.nested_correlation"
#define XPU_META_CUPTI_LIBRARY		"cupti.library"
#define XPU_META_CUPTI_VERSION		"cupti.version"
#define XPU_META_CUPTI_API_VERSION_BUILT "cupti.api_version_built"
#define XPU_META_CUPTI_MARKED_RUNTIME	"cupti.marked_runtime_apis"
#define XPU_META_CUPTI_MARKED_DRIVER	"cupti.marked_driver_apis"
#define XPU_META_CUPTI_APIS		"cupti.apis"
#define XPU_META_CUPTI_NVTX		"cupti.nvtx"	/* "on", or "off: why" */
#define XPU_META_CUPTI_MARKER		"cupti.marker"	/* absent, or "off (...)" (1.4) */
#define XPU_META_CUPTI_LAUNCH_WALK	"cupti.launch_walk"	/* the walk's counts, at exit (1.6) */
#define XPU_META_CUPTI_GRAPH_NODES	"cupti.graph_nodes"	/* "on", or "off: why" (1.4) */
#define XPU_META_CUPTI_PC_SAMPLING	"cupti.pc_sampling"	/* "on (...)", or "off: why" (1.8) */
#define XPU_META_CUPTI_PC_DUTY		"cupti.pc_duty"		/* Start/Stop calls and their cost (1.10) */
#define XPU_META_CUPTI_CUBINS		"cupti.cubins"	/* cubins kept and skipped, at exit (1.8) */

/* The sampling frequency a reader assumes when a trace has no sample_freq
 * (xpu-record's default -F). */
#define XPU_DEFAULT_SAMPLE_FREQ		99

#define XPU_COMM_EXEC		(1u << 0)
struct xpu_comm {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	uint32_t flags;			/* XPU_COMM_EXEC: this comm starts a new image */
	char comm[16];			/* NUL-padded */
	uint32_t reserved;
};

struct xpu_fork {
	uint64_t time;
	uint32_t pid, tid;		/* the new task */
	uint32_t ppid, ptid;		/* its parent */
};

#define XPU_EXIT_HAS_STATUS	(1u << 0)
struct xpu_exit {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t flags;			/* XPU_EXIT_HAS_STATUS */
	int32_t status;			/* wait status, when known (direct child) */
};

#define XPU_MMAP_BUILD_ID_MAX	20
struct xpu_mmap {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;			/* file offset of start */
	uint32_t prot;			/* PROT_* */
	uint32_t flags;			/* MAP_* */
	uint8_t build_id_size;		/* 0: unknown */
	uint8_t reserved[3];
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	/* followed by the path, NUL-terminated, then zero padding */
};

/* Architectures for sample registers (values are ELF e_machine). */
#define XPU_ARCH_X86_64		62
#define XPU_ARCH_AARCH64	183

/*
 * The stack part shared by CPU samples and correlation records. After the
 * fixed part come, in order and each possibly empty:
 *	uint64_t kernel_ips[nr_kernel_ips];	innermost first
 *	uint64_t user_ips[nr_user_ips];		innermost first (fp mode; dwarf mode
 *						with XPU_STACK_UNWOUND)
 *	uint64_t regs[nr_regs];			user registers in DWARF order (dwarf mode)
 *	uint8_t  stack[stack_size];		user stack copied from regs[SP] upward
 * then zero padding to the record's 8-byte alignment.
 */
#define XPU_STACK_USER_TRUNCATED (1u << 0)	/* stack copy hit its size limit */
#define XPU_STACK_KERNEL_MODE	 (1u << 1)	/* sample interrupted kernel code */
#define XPU_STACK_PRUNED	 (1u << 2)	/* words no unwinder reads are zeroed (1.4) */
#define XPU_STACK_PRUNED_CFI	 (1u << 3)	/* and stack words the CFI unwinding does not read (1.5) */
/* user_ips are the frames the CFI unwinding gave at record time, in place of
 * regs and stack (1.6): the first is the sampled pc, the others return
 * addresses; at most XPU_UNWOUND_MAX of them */
#define XPU_STACK_UNWOUND	 (1u << 4)
#define XPU_UNWOUND_MAX		512
struct xpu_stack {
	uint16_t nr_kernel_ips;
	uint16_t nr_user_ips;
	uint16_t nr_regs;
	uint16_t arch;			/* XPU_ARCH_* of regs */
	uint32_t stack_size;
	uint32_t flags;			/* XPU_STACK_* */
};

/*
 * XPU_REC_STACK_DELTA (1.4): a SAMPLE, OFFCPU or GPU_CORR record whose user
 * registers and stack copy are coded against those of an earlier record of
 * the same chunk (the writer takes the thread's previous one). Only the
 * reader sees it: it rebuilds the record it stands for, byte for byte, while
 * checking the chunk, and hands that out; a 1.3 reader skips it as unknown.
 * Body: this header; then the coded record's body up to the end of its
 * user_ips (fixed part, stack part header, kernel_ips, user_ips) as is; then
 * ops_size bytes of ops, zero-padded to 8 bytes; then the literal words.
 * The words coded are the record's regs then its stack, 8 bytes each (its
 * stack_size is a multiple of 8). ops are LEB128 counts, alternately
 * "copy" and "literal", starting with a copy count and ending when every
 * word is given: a copied word is the reference's word at the same place
 * (which must exist), a literal word is the next literal. The same place
 * is regs[i] for regs[i], and the reference's stack word k + shift for
 * stack word k (the writer pairs words at the same address).
 */
#define XPU_REC_STACK_DELTA	16	/* not in enum xpu_record_type: readers never hand it out */
struct xpu_stack_delta {
	uint16_t type;			/* the coded record's type: SAMPLE, OFFCPU or GPU_CORR */
	uint16_t flags;			/* its record header flags */
	uint32_t back;			/* records back to the reference (1: the one just before) */
	uint32_t ops_size;		/* bytes of ops */
	int32_t shift;			/* stack word k pairs with the reference's word k + shift */
};

/* x86-64 DWARF register numbers, the order of regs[] for XPU_ARCH_X86_64. */
enum {
	XPU_X86_RAX, XPU_X86_RDX, XPU_X86_RCX, XPU_X86_RBX,
	XPU_X86_RSI, XPU_X86_RDI, XPU_X86_RBP, XPU_X86_RSP,
	XPU_X86_R8, XPU_X86_R9, XPU_X86_R10, XPU_X86_R11,
	XPU_X86_R12, XPU_X86_R13, XPU_X86_R14, XPU_X86_R15,
	XPU_X86_RIP, XPU_X86_NR_REGS
};

struct xpu_sample {
	uint64_t time;			/* CLOCK_MONOTONIC ns */
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t weight;		/* samples this record stands for (1) */
	struct xpu_stack stack;
};

enum xpu_lost_source {
	XPU_LOST_SAMPLES	= 1,	/* CPU sample ring buffer full */
	XPU_LOST_CORR		= 2,	/* correlation-record ring buffer full */
	XPU_LOST_SIDEBAND	= 3,	/* perf mmap/comm/task ring overflow */
	XPU_LOST_CUPTI		= 4,	/* CUPTI activity records dropped */
	XPU_LOST_GPU_CHANNEL	= 5,	/* GPU records lost between library and recorder */
	XPU_LOST_STACK_READ	= 6,	/* user stack could not be read (page not present) */
	XPU_LOST_OUTPUT		= 7,	/* records the trace file could not take (disk full) */
	XPU_LOST_OFFCPU		= 8,	/* off-CPU ring buffer full (1.2) */
	XPU_LOST_NVTX		= 9,	/* NVTX ranges dropped (per-thread nesting too deep) (1.2) */
	XPU_LOST_PYTHON		= 10,	/* Python frame walks cut short or failed (1.3) */
	XPU_LOST_PC_SAMPLES	= 11,	/* GPU PC samples CUPTI dropped (1.8) */
	XPU_LOST_GPU_UNCONNECTED = 12,	/* CUDA processes whose library never connected (1.11) */
	XPU_LOST_GPU_BLOCK	= 13,	/* allocator block events dropped (ring full) (1.12) */
	XPU_LOST_MAX,			/* one past the last source this version knows */
};

struct xpu_lost {
	uint64_t time;
	uint32_t source;		/* enum xpu_lost_source */
	uint32_t pid;			/* 0: whole recording */
	uint64_t count;			/* added to earlier counts of the same source+pid */
};

/* XPU_REC_KSYM: kernel text symbol, so reports elsewhere can name [k] frames. */
struct xpu_ksym {
	uint64_t addr;
	uint64_t size;			/* 0: up to the next symbol */
	/* followed by the name, NUL-terminated ("name [module]" for modules) */
};

/* XPU_REC_PERF_MAP: one JIT symbol of a process (from /tmp/perf-PID.map). */
struct xpu_perf_map {
	uint32_t pid;
	uint32_t reserved;
	uint64_t start;
	uint64_t size;
	/* followed by the name, NUL-terminated */
};

/* XPU_REC_STRING: names are sent once per process and referred to by id. */
struct xpu_string {
	uint32_t pid;
	uint32_t id;
	/* followed by the string, NUL-terminated */
};

/*
 * XPU_REC_OFFCPU: a thread of the recorded tree was off CPU from start to end
 * (switched out, then back in). The stack is where it blocked: kernel IPs at
 * switch-out, user registers and stack (or user PCs) from the moment it
 * returned to user space, which is the same user state. A thread blocked
 * several times within one system call gives one record: off_ns is the sum.
 */
#define XPU_OFFCPU_SYSCALL	(1u << 0)	/* blocked inside system call nr `syscall` */
#define XPU_OFFCPU_PREEMPTED	(1u << 1)	/* switched out while runnable (state 0) */
#define XPU_OFFCPU_SHORT	(1u << 2)	/* sum of blocks under the threshold, no stack */
#define XPU_OFFCPU_LEAF_ONLY	(1u << 3)	/* user registers only: no stack copy */
struct xpu_offcpu {
	uint64_t start;			/* CLOCK_MONOTONIC ns: first switch-out */
	uint64_t end;			/* last switch-in */
	uint64_t off_ns;		/* time off CPU in [start, end] */
	uint32_t pid, tid;
	uint32_t cpu;			/* CPU it was switched out on */
	uint32_t state;			/* task state at switch-out (TASK_INTERRUPTIBLE 1, ...) */
	uint32_t flags;			/* XPU_OFFCPU_* */
	int32_t syscall;		/* system call number, -1 when none */
	struct xpu_stack stack;
};

/*
 * XPU_REC_PY_STACK (1.3): the Python frames a thread was running, read from
 * the interpreter's frame chain at a CPU sample or a CUDA-call marker. It
 * comes immediately before the SAMPLE or GPU_CORR record it belongs to,
 * which has the same tid and time; a reader that does not know it skips it
 * and keeps the native stack. Frames follow, innermost first.
 */
#define XPU_PY_STACK_TRUNCATED	(1u << 0)	/* more frames than the walk's limit */
#define XPU_PY_STACK_BAD_FRAME	(1u << 1)	/* a frame failed the checks: walk stopped */
struct xpu_py_stack {
	uint64_t time;			/* of the record it belongs to */
	uint32_t pid, tid;
	uint16_t nr_frames;
	uint16_t version;		/* CPython PY_VERSION_HEX >> 16: 0x030b */
	uint32_t flags;			/* XPU_PY_STACK_* */
	/* followed by struct xpu_py_frame frames[nr_frames] */
};

/* The last frame of one activation of the interpreter's eval loop
 * (_PyEval_EvalFrameDefault): frames up to and including it ran in that
 * C frame; the next ones in the next activation outward. */
#define XPU_PY_FRAME_ENTRY	(1u << 0)
#define XPU_PY_NO_OFFSET	0xffffffffu
struct xpu_py_frame {
	uint64_t code;			/* address of the code object (PY_CODE addr) */
	uint32_t offset;		/* bytes from the first instruction; XPU_PY_NO_OFFSET */
	uint16_t flags;			/* XPU_PY_FRAME_* */
	uint16_t code_key;		/* tells apart code objects at one address (PY_CODE) */
};

/*
 * XPU_REC_PY_CODE (1.3): a code object of process pid, read from its memory
 * when the recorder first saw (addr, code_key) in a PY_STACK (so it comes
 * before the first PY_STACK naming it). code_key is a hash of the object's
 * name and file pointers and first line: a code object freed and another
 * made at the same address get different keys, and their own PY_CODE. The strings and the line table follow the
 * fixed part: qualname (qualname_size bytes with its NUL), filename (the
 * same), then linetable_size bytes of co_linetable as the version encodes
 * it (3.10: PEP 626 pairs; 3.11+: the location table), then zero padding.
 */
struct xpu_py_code {
	uint64_t addr;
	uint32_t pid;
	uint16_t version;		/* as in PY_STACK */
	uint16_t flags;			/* none yet */
	int32_t firstlineno;
	uint16_t qualname_size;		/* with the NUL */
	uint16_t filename_size;		/* with the NUL */
	uint32_t linetable_size;
	uint16_t code_key;		/* the frames' code_key for this object */
	uint16_t reserved;
};

/*
 * XPU_REC_PROC_ENV (1.3): the rank-related variables of a process of the
 * recorded tree (RANK, LOCAL_RANK, WORLD_SIZE, their MPI and Slurm
 * equivalents, CUDA_VISIBLE_DEVICES: the list is the recorder's), read from
 * /proc/PID/environ after each exec. Zero or more "KEY\0VALUE\0" pairs
 * follow, then zero padding; no pair: none of the variables was set. A
 * process with no PROC_ENV record has its parent's (fork without exec).
 */
#define XPU_PROC_ENV_TRUNCATED	(1u << 0)	/* environ was longer than the recorder reads */
struct xpu_proc_env {
	uint64_t time;			/* the exec (COMM record) it follows */
	uint32_t pid;
	uint32_t flags;			/* XPU_PROC_ENV_* */
	/* followed by "KEY\0VALUE\0" pairs */
};

/*
 * XPU_REC_AUTOGRAD (1.7): a PyTorch autograd node (libtorch's
 * torch::autograd::Node), seen by a uprobe in libtorch_cpu.so where the
 * forward op gives an output tensor its gradient edge to the node
 * (XPU_AUTOGRAD_NODE: the thread's Python frames in a PY_STACK right
 * before, when it runs Python) and where the backward pass starts running
 * it (XPU_AUTOGRAD_EVAL: Engine::evaluate_function, in the thread that
 * runs the backward). seq is the node's sequence number, which links the
 * two: a report puts what a backward node launches under the Python code
 * of the forward op that made it. Only nodes whose layout checks (the
 * node's enable_shared_from_this pointer points at itself) are written,
 * but for an EVAL, which says that the thread runs another node from now
 * on: its seq is then XPU_AUTOGRAD_SEQ_UNKNOWN.
 */
#define XPU_AUTOGRAD_NODE	1
#define XPU_AUTOGRAD_EVAL	2
#define XPU_AUTOGRAD_SEQ_UNKNOWN (~0ULL)	/* EVAL of a node whose layout did not check */
struct xpu_autograd {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t seq;			/* Node::sequence_nr_ */
	uint64_t node;			/* the node's address (reused once freed) */
	uint32_t kind;			/* XPU_AUTOGRAD_* */
	uint32_t reserved;
};

struct xpu_finish {
	uint64_t time;
	uint64_t nr_samples;		/* CPU samples written */
	uint64_t nr_corr;		/* correlation records written */
	uint64_t nr_gpu;		/* GPU activity records written */
	uint64_t nr_lost;		/* all sources together */
};

/* ---- GPU records -------------------------------------------------------- */

/* Times are CLOCK_MONOTONIC ns, the clock of CPU samples. correlation_id is
 * per process (CUPTI's), so joins key on (pid, correlation_id). */

struct xpu_gpu_kernel {
	uint64_t start, end;
	uint64_t correlation_id;
	uint64_t graph_node_id;		/* 0: not launched from a graph */
	uint32_t pid;
	uint32_t name_id;		/* XPU_REC_STRING id in this pid (mangled name) */
	uint32_t device, context, stream;
	uint32_t graph_id;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t static_smem, dynamic_smem;
	uint16_t registers;
	uint16_t launch_type;		/* 0 regular, 1 cooperative single, 2 multi-device */
	uint32_t reserved;
};

enum xpu_memcpy_kind {			/* values are CUpti_ActivityMemcpyKind */
	XPU_MEMCPY_UNKNOWN = 0, XPU_MEMCPY_HTOD = 1, XPU_MEMCPY_DTOH = 2,
	XPU_MEMCPY_HTOA = 3, XPU_MEMCPY_ATOH = 4, XPU_MEMCPY_ATOA = 5,
	XPU_MEMCPY_ATOD = 6, XPU_MEMCPY_DTOA = 7, XPU_MEMCPY_DTOD = 8,
	XPU_MEMCPY_HTOH = 9, XPU_MEMCPY_PTOP = 10,
};

struct xpu_gpu_memcpy {
	uint64_t start, end;
	uint64_t correlation_id;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t graph_id;
	uint8_t copy_kind;		/* enum xpu_memcpy_kind */
	uint8_t src_kind, dst_kind;	/* CUpti_ActivityMemoryKind */
	uint8_t flags;			/* bit 0: async */
};

struct xpu_gpu_memset {
	uint64_t start, end;
	uint64_t correlation_id;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t graph_id;
	uint32_t value;
};

struct xpu_gpu_sync {
	uint64_t start, end;
	uint64_t correlation_id;
	uint32_t pid;
	uint32_t type;			/* CUpti_ActivitySynchronizationType */
	uint32_t context, stream;	/* stream: ~0u when not stream-scoped */
	uint32_t event;
	uint32_t reserved;
};

/* XPU_API_NVTX (1.2): a GPU_CORR record with this domain holds the stack at
 * an NVTX push or range start; its correlation_id is the range id.
 * XPU_API_GRAPH_NODE (1.4): the stack where a CUDA graph node was created
 * outside any marked API call; its correlation_id is the graph node id, its
 * cbid the node type (see XPU_REC_GPU_GRAPH_NODE). */
enum xpu_api_domain {
	XPU_API_RUNTIME = 1, XPU_API_DRIVER = 2, XPU_API_NVTX = 3, XPU_API_GRAPH_NODE = 4,
	XPU_API_ALLOC = 5,		/* the stack of a GPU_BLOCK malloc (1.12) */
};

struct xpu_gpu_api {
	uint64_t start, end;
	uint64_t correlation_id;
	uint32_t pid, tid;
	uint32_t domain;		/* enum xpu_api_domain */
	uint32_t cbid;			/* CUPTI callback id within the domain */
	int32_t ret;			/* return value (cudaError_t / CUresult) */
	uint32_t reserved;
};

/* Correlation record: the CPU stack captured by the uprobe on the CUPTI
 * library's marker function at API enter. */
struct xpu_gpu_corr {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t domain;		/* enum xpu_api_domain */
	uint64_t correlation_id;
	uint32_t cbid;
	uint32_t reserved;
	struct xpu_stack stack;
};

struct xpu_gpu_device {
	uint32_t pid;			/* process that reported it */
	uint32_t id;			/* CUDA device ordinal */
	uint32_t sm_count;
	uint32_t cc_major, cc_minor;
	uint32_t reserved;
	uint64_t global_memory;
	/* followed by the device name, NUL-terminated */
};

/*
 * XPU_REC_GPU_NVTX: one NVTX range of a process, written when it closes
 * (push/pop: at the pop; start/end: at the end), or at the end of the
 * recording with end 0 when it never closed. Names are STRING ids.
 */
#define XPU_NVTX_PUSHPOP	(1u << 0)	/* nvtxRangePush/Pop: nests per thread */
#define XPU_NVTX_STARTEND	(1u << 1)	/* nvtxRangeStart/End: any thread may end it */
#define XPU_NVTX_MARK		(1u << 2)	/* nvtxMark: an instant, end == start */
struct xpu_gpu_nvtx {
	uint64_t start, end;		/* CLOCK_MONOTONIC ns; end 0: never closed */
	uint64_t range_id;		/* per process; GPU_CORR (XPU_API_NVTX) with this id: stack */
	uint32_t pid, tid;		/* the thread that pushed / started it */
	uint32_t end_tid;		/* the thread that popped / ended it */
	uint32_t domain_id;		/* STRING id of the domain name; 0: the default domain */
	uint32_t message_id;		/* STRING id of the message; 0: none */
	uint32_t flags;			/* XPU_NVTX_* */
	uint32_t depth;			/* push/pop nesting depth at push (0: outermost) */
	uint32_t color;			/* ARGB, 0: none */
};

/*
 * XPU_REC_GPU_GRAPH_NODE (1.4): a kernel, memcpy or memset node of a CUDA
 * graph, at its creation (stream capture, cudaGraphAdd*Node) or when it is
 * cloned (graph instantiation, cudaGraphClone, child graphs). Replayed GPU
 * activity names its node (graph_node_id); following orig_node_id from a
 * clone leads to the node that was created, whose stack is the capture
 * site: the GPU_CORR of api_correlation_id (the marked API call that created
 * it, e.g. cudaLaunchKernel during capture) or, with XPU_GRAPH_NODE_STACK,
 * the GPU_CORR (XPU_API_GRAPH_NODE) whose correlation_id is node_id.
 * Node ids are CUPTI's (cuptiGetGraphNodeId), unique per process.
 */
#define XPU_GRAPH_NODE_CLONED	(1u << 0)	/* orig_node_id is the node it copies */
#define XPU_GRAPH_NODE_STACK	(1u << 1)	/* a GPU_CORR (XPU_API_GRAPH_NODE) holds its stack */
struct xpu_gpu_graph_node {
	uint64_t time;			/* CLOCK_MONOTONIC ns of the callback */
	uint64_t node_id;
	uint64_t orig_node_id;		/* cloned: the original; else 0 */
	uint64_t api_correlation_id;	/* created inside this marked API call; 0: none */
	uint32_t pid, tid;
	uint32_t graph_id;		/* the graph it belongs to (cuptiGetGraphId) */
	uint32_t orig_graph_id;		/* cloned: the original's graph; else 0 */
	uint32_t node_type;		/* CUgraphNodeType: 0 kernel, 1 memcpy, 2 memset */
	uint32_t flags;			/* XPU_GRAPH_NODE_* */
};

/*
 * XPU_REC_GPU_PC_SAMPLE (1.8): the samples CUPTI's PC sampling took at one
 * PC of a GPU function between start and end (its collection window: the
 * previous cuptiPCSamplingGetData of the context and this one), by stall
 * reason. In continuous mode CUPTI aggregates a PC's samples over every
 * launch of the window and gives no correlation id (0): a report shares
 * them out among the kernels of that name (name_id, the GPU_KERNEL's) that
 * ran in the window. nr_stalls struct xpu_gpu_pc_stall follow the fixed
 * part; reason is the index of a GPU_STALL_REASON of the same pid and
 * device.
 */
struct xpu_gpu_pc_sample {
	uint64_t start, end;		/* CLOCK_MONOTONIC ns: the collection window */
	uint64_t cubin_crc;		/* CUPTI's CRC of the cubin (GPU_CUBIN crc) */
	uint64_t pc_offset;		/* bytes from the function's start */
	uint32_t pid;
	uint32_t name_id;		/* STRING id (this pid): the function's mangled name */
	uint32_t correlation_id;	/* the launch, when CUPTI gives one; else 0 */
	uint32_t device;		/* CUDA device ordinal */
	uint32_t context;		/* CUDA context id */
	uint16_t nr_stalls;		/* struct xpu_gpu_pc_stall that follow */
	uint16_t flags;			/* none yet */
};

struct xpu_gpu_pc_stall {
	uint32_t reason;		/* GPU_STALL_REASON index */
	uint32_t samples;
};

/* XPU_REC_GPU_STALL_REASON (1.8): the name of stall reason index on the
 * device's PC sampling, as CUPTI has it
 * ("smsp__pcsamp_warps_issue_stalled_long_scoreboard"); the name follows. */
struct xpu_gpu_stall_reason {
	uint32_t pid;
	uint32_t device;
	uint32_t index;
	uint32_t reserved;
};

/*
 * XPU_REC_GPU_CUBIN (1.8): a cubin (CUDA device ELF) a process loaded while
 * PC sampling was on, once per crc and pid, so that a report maps PC offsets
 * to source lines (its .debug_line: nvcc -lineinfo) on any machine. size
 * bytes of the cubin follow, then zero padding; with XPU_CUBIN_SKIPPED none
 * follow (the cubin was larger than the library keeps: size is its size).
 * With XPU_CUBIN_REDUCED (1.9) the cubin was larger than the library keeps
 * whole, and what follows (size bytes) is the same ELF reduced to its line
 * mapping: the bytes of .debug_line, .rela.debug_line, .symtab, its string
 * table and .shstrtab, every other section SHT_NOBITS with its header kept
 * (cupti/pcsamp/pcsamp_cubin.h). A 1.8 reader reads it as a cubin, lines and all.
 */
#define XPU_CUBIN_SKIPPED	(1u << 0)
#define XPU_CUBIN_REDUCED	(1u << 1)
struct xpu_gpu_cubin {
	uint64_t crc;			/* as PC_SAMPLE cubin_crc */
	uint64_t size;			/* bytes of the cubin (reduced: that follow) */
	uint32_t pid;
	uint32_t flags;			/* XPU_CUBIN_* */
};

/*
 * XPU_REC_GPU_PC_RANGE (1.10): PC sampling was on in a context from start to
 * end (cuptiPCSamplingStart .. Stop), with duty-cycled sampling (the
 * default): between ranges it was off, so the launches of a kernel that ran
 * outside every range are its unperturbed time, and a report compares them
 * with the launches inside. A trace with PC samples and no range sampled
 * continuously (1.8, or --gpu-pc-duty=off).
 */
struct xpu_gpu_pc_range {
	uint64_t start, end;		/* CLOCK_MONOTONIC ns */
	uint32_t pid;
	uint32_t device;		/* CUDA device ordinal */
	uint32_t context;		/* CUDA context id */
	uint32_t flags;			/* none yet, zero */
};

/*
 * XPU_REC_GPU_MEMORY (1.12): one CUDA-level allocation or release, as CUPTI's
 * MEMORY2 activity reports it (cudaMalloc/cudaFree, cudaMallocAsync and pools,
 * cuMemSetAccess/cuMemUnmap of virtual memory, managed and pinned host
 * memory). correlation_id is the API call's: its GPU_CORR holds the stack.
 */
enum xpu_gpu_memory_op {		/* values are CUpti_ActivityMemoryOperationType */
	XPU_MEMORY_ALLOC = 1, XPU_MEMORY_RELEASE = 2,
};
enum xpu_gpu_memory_kind {		/* values are CUpti_ActivityMemoryKind */
	XPU_MEMKIND_UNKNOWN = 0, XPU_MEMKIND_PAGEABLE = 1, XPU_MEMKIND_PINNED = 2,
	XPU_MEMKIND_DEVICE = 3, XPU_MEMKIND_ARRAY = 4, XPU_MEMKIND_MANAGED = 5,
	XPU_MEMKIND_DEVICE_STATIC = 6, XPU_MEMKIND_MANAGED_STATIC = 7,
	XPU_MEMKIND_MAX = 8,
};
#define XPU_GPU_MEMORY_ASYNC	(1u << 0)	/* stream-ordered (cudaMallocAsync, cudaFreeAsync) */
#define XPU_GPU_MEMORY_NO_STREAM 0xffffffffu	/* stream of a synchronous call */
struct xpu_gpu_memory {
	uint64_t time;			/* CLOCK_MONOTONIC ns: one instant */
	uint64_t correlation_id;	/* the API call's */
	uint64_t address;
	uint64_t bytes;
	uint64_t pool_address;		/* the memory pool's, 0: none */
	uint32_t pid;
	uint32_t device, context, stream;
	uint8_t op;			/* enum xpu_gpu_memory_op */
	uint8_t memory_kind;		/* enum xpu_gpu_memory_kind */
	uint8_t pool_type;		/* CUpti_ActivityMemoryPoolType: 0 none, 1 local, 2 imported */
	uint8_t reserved;
	uint32_t flags;			/* XPU_GPU_MEMORY_* */
};

/* XPU_REC_GPU_MEMPOOL (1.12): a memory pool created (its first
 * cudaMallocAsync, cudaMemPoolCreate), trimmed or destroyed (CUPTI's
 * MEMORY_POOL activity). Its memory is the GPU_MEMORY records'. */
enum xpu_gpu_mempool_op {		/* values are CUpti_ActivityMemoryPoolOperationType */
	XPU_MEMPOOL_CREATED = 1, XPU_MEMPOOL_DESTROYED = 2, XPU_MEMPOOL_TRIMMED = 3,
};
struct xpu_gpu_mempool {
	uint64_t time;
	uint64_t correlation_id;	/* the API call's, 0: none */
	uint64_t address;		/* the pool's */
	uint64_t size;			/* bytes the pool reserves */
	uint64_t utilized;		/* of which in use */
	uint64_t release_threshold;
	uint32_t pid, device;
	uint8_t op;			/* enum xpu_gpu_mempool_op */
	uint8_t pool_type;		/* 1 local, 2 imported */
	uint16_t reserved;
	uint32_t flags;			/* none yet, zero */
};

/*
 * XPU_REC_GPU_BLOCK (1.12): a block of PyTorch's CUDA caching allocator
 * handed out (malloc) or given back (free), seen out of process by a probe
 * in libc10_cuda.so (the allocator's USDT notes pytorch:malloc and
 * pytorch:free, or uprobes on its malloc and free). These are the tensors;
 * the segments they live in are GPU_MEMORY records. A malloc's stack is the
 * GPU_CORR of the same pid with domain XPU_API_ALLOC and correlation_id
 * stack_id (0: none taken).
 */
enum xpu_gpu_block_op { XPU_BLOCK_MALLOC = 1, XPU_BLOCK_FREE = 2 };
enum xpu_gpu_block_source { XPU_BLOCK_USDT = 1, XPU_BLOCK_UPROBE = 2 };
struct xpu_gpu_block {
	uint64_t time;
	uint64_t ptr;
	uint64_t size;			/* malloc: bytes asked for; free: 0 */
	uint64_t stream;		/* malloc: the cudaStream_t; free: 0 */
	uint64_t stack_id;		/* malloc: its GPU_CORR (XPU_API_ALLOC); 0: none */
	uint32_t pid, tid;
	int32_t device;			/* malloc: CUDA device ordinal; free: -1 */
	uint8_t op;			/* enum xpu_gpu_block_op */
	uint8_t source;			/* enum xpu_gpu_block_source */
	uint16_t flags;			/* none yet, zero */
};

/* XPU_REC_GPU_MEM_STATE (1.12): a device's memory as one process found it
 * when its library connected to the recorder (cuMemGetInfo), which after an
 * attach is the baseline of what was allocated before: used_before is the
 * device's used memory then (total - free), of which no allocation was seen. */
#define XPU_MEM_STATE_ATTACH	(1u << 0)	/* the library was attached to a running process */
struct xpu_gpu_mem_state {
	uint64_t time;
	uint64_t free, total;		/* cuMemGetInfo: the device's, all processes */
	uint64_t used_before;		/* total - free at the time */
	uint32_t pid, device;
	uint32_t flags;			/* XPU_MEM_STATE_* */
	uint32_t reserved;
};

/* XPU_REC_GPU_OOM (1.12): an allocation failed for want of memory. A CUDA
 * call that returned out-of-memory (cudaErrorMemoryAllocation,
 * CUDA_ERROR_OUT_OF_MEMORY), seen at its exit: correlation_id, domain and
 * cbid are the call's, its GPU_CORR holds the stack; or the caching
 * allocator's out-of-memory path: correlation_id is the stack_id of a
 * GPU_CORR (XPU_API_ALLOC). */
enum xpu_gpu_oom_source { XPU_OOM_CUDA = 1, XPU_OOM_ALLOCATOR = 2 };
struct xpu_gpu_oom {
	uint64_t time;
	uint64_t bytes;			/* the size asked for; 0: unknown */
	uint64_t correlation_id;
	uint32_t pid, tid;
	int32_t device;			/* -1: unknown */
	uint32_t source;		/* enum xpu_gpu_oom_source */
	uint32_t domain, cbid;		/* XPU_OOM_CUDA: the call */
	int32_t ret;			/* its return value */
	uint32_t reserved;
};

#define XPU_CHECK_SIZE(t, n) _Static_assert(sizeof(struct t) == (n), #t " layout changed: update the spec")
XPU_CHECK_SIZE(xpu_file_header, 64);
XPU_CHECK_SIZE(xpu_chunk_header, 32);
XPU_CHECK_SIZE(xpu_record_header, 8);
XPU_CHECK_SIZE(xpu_comm, 40);
XPU_CHECK_SIZE(xpu_fork, 24);
XPU_CHECK_SIZE(xpu_exit, 24);
XPU_CHECK_SIZE(xpu_mmap, 72);
XPU_CHECK_SIZE(xpu_stack, 16);
XPU_CHECK_SIZE(xpu_stack_delta, 16);
XPU_CHECK_SIZE(xpu_sample, 40);
XPU_CHECK_SIZE(xpu_lost, 24);
XPU_CHECK_SIZE(xpu_ksym, 16);
XPU_CHECK_SIZE(xpu_perf_map, 24);
XPU_CHECK_SIZE(xpu_string, 8);
XPU_CHECK_SIZE(xpu_finish, 40);
XPU_CHECK_SIZE(xpu_gpu_kernel, 96);
XPU_CHECK_SIZE(xpu_gpu_memcpy, 64);
XPU_CHECK_SIZE(xpu_gpu_memset, 64);
XPU_CHECK_SIZE(xpu_gpu_sync, 48);
XPU_CHECK_SIZE(xpu_gpu_api, 48);
XPU_CHECK_SIZE(xpu_gpu_corr, 56);
XPU_CHECK_SIZE(xpu_gpu_device, 32);
XPU_CHECK_SIZE(xpu_offcpu, 64);
XPU_CHECK_SIZE(xpu_gpu_nvtx, 56);
XPU_CHECK_SIZE(xpu_gpu_graph_node, 56);
XPU_CHECK_SIZE(xpu_py_stack, 24);
XPU_CHECK_SIZE(xpu_py_frame, 16);
XPU_CHECK_SIZE(xpu_py_code, 32);
XPU_CHECK_SIZE(xpu_proc_env, 16);
XPU_CHECK_SIZE(xpu_autograd, 40);
XPU_CHECK_SIZE(xpu_gpu_pc_sample, 56);
XPU_CHECK_SIZE(xpu_gpu_pc_stall, 8);
XPU_CHECK_SIZE(xpu_gpu_stall_reason, 16);
XPU_CHECK_SIZE(xpu_gpu_cubin, 24);
XPU_CHECK_SIZE(xpu_gpu_pc_range, 32);
XPU_CHECK_SIZE(xpu_gpu_memory, 64);
XPU_CHECK_SIZE(xpu_gpu_mempool, 64);
XPU_CHECK_SIZE(xpu_gpu_block, 56);
XPU_CHECK_SIZE(xpu_gpu_mem_state, 48);
XPU_CHECK_SIZE(xpu_gpu_oom, 56);

#endif
