/* SPDX-License-Identifier: MIT */
/*
 * What the BPF programs and xpu-record share: map sizes, the configuration
 * user space writes into .rodata before load, and the lost-counter slots.
 * Events themselves need no struct here: the programs emit finished trace
 * records (struct xpu_record_header + body, format/xpu_format.h), so the
 * recorder appends them to the file without converting anything.
 */
#ifndef XPU_BPF_EVENTS_H
#define XPU_BPF_EVENTS_H

#include <stdint.h>	/* in BPF programs: vmlinux.h has the types, the header is a no-op */

#define XPU_BPF_MAX_KERNEL_IPS	127	/* perf's default kernel.perf_event_max_stack */
#define XPU_BPF_MAX_USER_IPS	127
#define XPU_BPF_NR_REGS		17	/* XPU_X86_NR_REGS */
/* Largest user stack copy per event. perf stops at 65528; launch stacks in
 * PyTorch are often deeper than 64 KiB, so allow twice that. */
#define XPU_BPF_STACK_MAX	131064
/* Default copy: the maximum. Only the part of the stack in use is copied
 * (bpf_find_vma), so shallow stacks cost no more; PyTorch launch stacks need
 * ~100 KB to reach their thread's root (13% did at 8 KB, 100% at 128 KB). */
#define XPU_BPF_STACK_DEFAULT	XPU_BPF_STACK_MAX

/* Python frames read per stack (a power of two: the index is masked), and
 * the largest PY_STACK record (header + body + frames) they make. */
#define XPU_BPF_PY_FRAMES	128
#define XPU_BPF_PY_REC_MAX	(8 + 24 + 16 * XPU_BPF_PY_FRAMES)
/* Room for it after a full record in the scratch buffer: a power of two,
 * as the program masks the size with it for the verifier. */
#define XPU_BPF_PY_ROOM		4096
/* Thread states looked at to find the current thread's (its list). */
#define XPU_BPF_PY_THREADS	64

/* Fixed part before the variable stack data: record header + largest body
 * (struct xpu_offcpu, 64 bytes). The extra page in the scratch size lets
 * the verifier accept the page-by-page stack copy. */
#define XPU_BPF_FIXED_MAX	72
#define XPU_BPF_SCRATCH_SIZE	(XPU_BPF_FIXED_MAX + 8 * (XPU_BPF_MAX_KERNEL_IPS + \
				 XPU_BPF_MAX_USER_IPS + XPU_BPF_NR_REGS) + XPU_BPF_STACK_MAX + 4096 + \
				 XPU_BPF_PY_ROOM)

/* Scratch slots: one per CPU and per program kind, because the cpu-clock
 * program can interrupt the uprobe program on the same CPU. */
#define XPU_BPF_SLOT_SAMPLE	0
#define XPU_BPF_SLOT_CORR	1
#define XPU_BPF_SLOT_OFFCPU	2
#define XPU_BPF_NR_SLOTS	3

/*
 * A record type of the sample ring that never reaches a trace: the exec of
 * a tracked process (pid and time in a struct xpu_bpf_exec), sent with a
 * wake-up so that the recorder reads the new image's mappings (side-band)
 * at once instead of at its next poll, up to 20 ms later. A Python process
 * gets its py_procs entry before its interpreter runs Python code.
 */
#define XPU_BPF_EV_EXEC		0xfff0
struct xpu_bpf_exec {
	uint64_t time;
	uint32_t pid;
	uint32_t reserved;
};

/*
 * An internal record of the memory ring (bpf/xpu_alloc.bpf.h), never
 * written to the trace: process pid called the allocator's malloc from a
 * return address ra that has no probe yet (uprobe fallback): user space
 * places one there (record/kernel/torch_alloc.c) and marks the site in
 * alloc_sites.
 */
#define XPU_BPF_EV_ALLOC_SITE	0xfff1
struct xpu_bpf_alloc_site {
	uint64_t ra;
	uint32_t pid;
	uint32_t reserved;
};
/* alloc_sites: key (pid, return address), value: */
#define XPU_BPF_SITE_SEEN	0	/* told user space, no probe yet */
#define XPU_BPF_SITE_PROBED	1	/* a uprobe on the return site */
#define XPU_BPF_SITE_FAILED	2	/* none could be placed */
struct xpu_bpf_site_key {
	uint64_t ra;
	uint32_t pid;
	uint32_t reserved;
};

/* cupti/channel/wire.h's XPU_MARKER_URGENT (record/kernel/bpf.c checks they agree): in
 * the marker's domain, "wake the reader for this stack now". */
#define XPU_BPF_MARKER_URGENT	0x80000000u

/* Kernel PCs kept per blocked thread (the blocking path is shallow). */
#define XPU_BPF_OFFCPU_KIPS	48

/* Indexes of the per-CPU lost-counter array. */
enum xpu_bpf_lost {
	XPU_BPF_LOST_SAMPLES,		/* sample ring buffer full */
	XPU_BPF_LOST_CORR,		/* correlation ring buffer full */
	XPU_BPF_LOST_STACK_READ,	/* user stack copy faulted */
	XPU_BPF_STAT_VMA_BUSY,		/* bpf_find_vma: mmap lock busy (stats, -v) */
	XPU_BPF_STAT_VMA_MISS,		/* bpf_find_vma: SP in no mapping (stats, -v) */
	XPU_BPF_LOST_OFFCPU,		/* off-CPU ring buffer full */
	XPU_BPF_STAT_OFFCPU_BLOCKS,	/* blocks seen (stats, -v) */
	XPU_BPF_LOST_PYTHON,		/* Python walk truncated or stopped by a check */
	XPU_BPF_STAT_PY_WALKS,		/* Python walks with frames (stats, -v) */
	XPU_BPF_STAT_PY_NO_THREAD,	/* no thread state for the thread (stats, -v) */
	XPU_BPF_STAT_PY_FRAMES,		/* Python frames emitted (stats, -v) */
	XPU_BPF_STAT_VMA_CACHED,	/* busy lookups served by the thread's last bounds (stats, -v) */
	XPU_BPF_STAT_COPY_PAGES,	/* stack copies done page by page (stats, -v) */
	XPU_BPF_STAT_OFFCPU_MISSED_IN,	/* off-CPU blocks whose switch-in was missed (stats, -v) */
	XPU_BPF_STAT_AUTOGRAD,		/* autograd records written (stats, -v) */
	XPU_BPF_STAT_AUTOGRAD_BAD,	/* autograd nodes whose layout did not check (stats, -v) */
	XPU_BPF_LOST_GPU_BLOCK,		/* allocator block records: memory ring full */
	XPU_BPF_LOST_ALLOC_STACK,	/* allocation stacks: memory ring full (block kept) */
	XPU_BPF_STAT_GPU_BLOCKS,	/* allocator block records written (stats, -v) */
	XPU_BPF_STAT_ALLOC_NO_RET,	/* uprobe mallocs whose return was not seen (stats, -v) */
	XPU_BPF_LOST_ALLOC_NO_SITE,	/* uprobe mallocs from a return site not probed yet */
	XPU_BPF_LOST_MAX,
};

/*
 * Per Python process (map py_procs, key tgid), written by user space
 * (record/python/python.c) once it found the interpreter in the process's
 * mappings: where _PyRuntime and PyCode_Type are, and the layout of the
 * structures the walk reads, for that CPython version. Offsets in bytes.
 */
#define XPU_PY_INSTR_LASTI	1	/* int f_lasti: index in code units (3.10) */
#define XPU_PY_INSTR_PTR	2	/* pointer into the code's bytecode (3.11+) */
#define XPU_PY_ENTRY_ALL	1	/* each frame has its eval activation (3.10) */
#define XPU_PY_ENTRY_FLAG	2	/* char is_entry in the frame (3.11) */
#define XPU_PY_ENTRY_SHIM	3	/* owner == cstack: a shim frame ends each (3.12+) */
#define XPU_PY_NO_CFRAME	0xffff
struct xpu_bpf_py_cfg {
	uint64_t runtime;			/* &_PyRuntime */
	uint64_t code_type;		/* &PyCode_Type: every frame's code must be one */
	uint16_t version;			/* 0x030b */
	uint16_t rt_interp_head;		/* _PyRuntime.interpreters.head */
	uint16_t is_threads_head;		/* PyInterpreterState's thread list head */
	uint16_t ts_next, ts_interp, ts_thread_id;
	uint16_t ts_cframe;		/* tstate->cframe, or XPU_PY_NO_CFRAME */
	uint16_t cur_frame;		/* current frame in the cframe, or the tstate */
	uint16_t fr_code, fr_previous, fr_instr, fr_entry;	/* fr_entry: is_entry / owner */
	uint16_t fr_size;			/* bytes of a frame read at once (<= 128) */
	uint16_t co_code;			/* offset of the bytecode in a code object (3.11+) */
	uint16_t co_qualname, co_filename, co_firstlineno;	/* for the code key */
	uint16_t co_size;		/* bytes of a code object read at once (<= 255) */
	uint8_t instr_kind;		/* XPU_PY_INSTR_* */
	uint8_t entry_kind;		/* XPU_PY_ENTRY_* */
	uint8_t owner_cstack;		/* XPU_PY_ENTRY_SHIM: shim frames own this value or more */
	uint8_t inherited;		/* copied from the parent at fork: gone at exec */
	uint32_t parent;		/* inherited: the parent's tgid */
	uint8_t pad[4];
	/* Written by the BPF side (atomic adds): the self-checks' results. */
	uint64_t walks;			/* walks that found the thread state */
	uint64_t bad_thread;		/* a thread state whose interp did not point back */
	uint64_t bad_code;			/* a frame whose code was not a code object */
	uint64_t frames;
};

/* A PY_STACK frame's code_key: a hash of the code object's co_qualname and
 * co_filename pointers and co_firstlineno, computed by the BPF walk and by
 * the recorder's code-object reader alike (format: struct xpu_py_frame). */
static inline uint16_t xpu_py_code_key(uint64_t qualname, uint64_t filename, int32_t firstlineno)
{
	uint64_t h = (qualname ^ (filename << 1) ^ (uint32_t)firstlineno) * 0x9e3779b97f4a7c15ULL;

	return (uint16_t)(h >> 48);
}

/* Stack modes (rodata cfg_mode). */
#define XPU_BPF_MODE_FP		1
#define XPU_BPF_MODE_DWARF	2

#endif
