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

/* Fixed part before the variable stack data: record header + largest body
 * (struct xpu_offcpu, 64 bytes). The extra page in the scratch size lets
 * the verifier accept the page-by-page stack copy. */
#define XPU_BPF_FIXED_MAX	72
#define XPU_BPF_SCRATCH_SIZE	(XPU_BPF_FIXED_MAX + 8 * (XPU_BPF_MAX_KERNEL_IPS + \
				 XPU_BPF_MAX_USER_IPS + XPU_BPF_NR_REGS) + XPU_BPF_STACK_MAX + 4096)

/* Scratch slots: one per CPU and per program kind, because the cpu-clock
 * program can interrupt the uprobe program on the same CPU. */
#define XPU_BPF_SLOT_SAMPLE	0
#define XPU_BPF_SLOT_CORR	1
#define XPU_BPF_SLOT_OFFCPU	2
#define XPU_BPF_NR_SLOTS	3

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
	XPU_BPF_LOST_MAX,
};

/* Stack modes (rodata cfg_mode). */
#define XPU_BPF_MODE_FP		1
#define XPU_BPF_MODE_DWARF	2

#endif
