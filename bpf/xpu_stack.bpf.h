/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Stack capture shared by the CPU sampler and the correlation uprobe: kernel
 * IPs, then either user PCs (fp) or the user registers plus the part of the
 * user stack in use (dwarf), written after a record's fixed part in a scratch
 * slot. Included by xpu_record.bpf.c only; kept apart so both programs run
 * the same code.
 */
#ifndef XPU_STACK_BPF_H
#define XPU_STACK_BPF_H

const volatile __u32 cfg_mode = XPU_BPF_MODE_DWARF;
const volatile __u32 cfg_stack_bytes = XPU_BPF_STACK_DEFAULT;
const volatile __u32 cfg_kernel_stacks = 1;
/* Wake the reader only once a ring holds this many bytes (set by user space
 * to a quarter of each ring); below that it polls every few milliseconds.
 * A wakeup per record is an irq_work self-IPI on the profiled thread's CPU:
 * at 40k CUDA launches/s that was the largest cost xpu-record added to a
 * launch-bound loop on our (virtualized) GPU machine. */
const volatile __u64 cfg_wakeup_samples = 0;
const volatile __u64 cfg_wakeup_corr = 0;
const volatile __u64 cfg_wakeup_corr_early = 0;

static __always_inline __u64 ring__flags(void *ring, __u64 threshold)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= threshold ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_LOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* User registers staged per program kind: from ctx, or, for a sample that
 * interrupted the kernel, copied from bpf_task_pt_regs(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_NR_SLOTS);
	__type(key, __u32);
	__type(value, struct pt_regs);
} regs_tmp SEC(".maps");

static __always_inline void lost__inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &idx);

	if (v)
		(*v)++;
}

/* pt_regs -> x86-64 DWARF register order (enum in xpu_format.h). */
#define XPU_REGS_TO_DWARF(out, r) do {					\
	(out)[XPU_X86_RAX] = (r)->ax;  (out)[XPU_X86_RDX] = (r)->dx;	\
	(out)[XPU_X86_RCX] = (r)->cx;  (out)[XPU_X86_RBX] = (r)->bx;	\
	(out)[XPU_X86_RSI] = (r)->si;  (out)[XPU_X86_RDI] = (r)->di;	\
	(out)[XPU_X86_RBP] = (r)->bp;  (out)[XPU_X86_RSP] = (r)->sp;	\
	(out)[XPU_X86_R8] = (r)->r8;   (out)[XPU_X86_R9] = (r)->r9;	\
	(out)[XPU_X86_R10] = (r)->r10; (out)[XPU_X86_R11] = (r)->r11;	\
	(out)[XPU_X86_R12] = (r)->r12; (out)[XPU_X86_R13] = (r)->r13;	\
	(out)[XPU_X86_R14] = (r)->r14; (out)[XPU_X86_R15] = (r)->r15;	\
	(out)[XPU_X86_RIP] = (r)->ip;					\
} while (0)

#define XPU_REGS_COPY(d, s) do {						\
	(d)->ax = (s)->ax; (d)->dx = (s)->dx; (d)->cx = (s)->cx;	\
	(d)->bx = (s)->bx; (d)->si = (s)->si; (d)->di = (s)->di;	\
	(d)->bp = (s)->bp; (d)->sp = (s)->sp; (d)->r8 = (s)->r8;	\
	(d)->r9 = (s)->r9; (d)->r10 = (s)->r10; (d)->r11 = (s)->r11;	\
	(d)->r12 = (s)->r12; (d)->r13 = (s)->r13; (d)->r14 = (s)->r14;	\
	(d)->r15 = (s)->r15; (d)->ip = (s)->ip;				\
} while (0)

struct stack__vma_ctx {
	__u64 start, end;
	__u64 mm;		/* the address space they were found in (an exec changes it) */
	__u64 uses;		/* since the lookup: every 64th use looks again */
};

static long stack__vma_cb(struct task_struct *task, struct vm_area_struct *vma,
			  struct stack__vma_ctx *c)
{
	c->start = vma->vm_start;
	c->end = vma->vm_end;
	return 0;
}

/*
 * The mapping each thread's stack was last found in. bpf_find_vma() only
 * try-locks the mmap lock, so a sample taken while another thread of the
 * process maps or unmaps memory (a thread starting, an allocator growing)
 * gets -EBUSY; without a bound the copy would be the whole BYTES (128 KB by
 * default) for that sample. A thread's stack mapping does not move while
 * the thread lives, so its last bounds serve; the entry dies with the task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack__vma_ctx);
} stack_vmas SEC(".maps");

/*
 * Before a lookup: the bounds the thread's stack was last found in, when
 * they hold sp in the same address space. Then bpf_find_vma() is not
 * needed: from the sampler's interrupt it try-locks the mmap lock and,
 * with interrupts off, releases it through an irq_work, a self-interrupt
 * (a VM exit on a virtual machine): on the 2-CPU development VM a DWARF
 * sample cost 7.7-13.5 us of BPF time with the lookup at every sample,
 * against 2-2.4 us for a frame-pointer one (bench/overhead.sh's "where").
 * A stack that grew below its old start, a signal stack, a new image
 * after an exec: sp or mm differ, and the lookup runs. A mapping that
 * grew up (a coroutine's stack in a heap that grew since): every 64th
 * sample of a thread looks again.
 */
static __always_inline bool stack__vma_known(struct task_struct *task, __u64 sp,
					     struct stack__vma_ctx *vc)
{
	struct stack__vma_ctx *c = bpf_task_storage_get(&stack_vmas, task, 0, 0);

	if (!c || sp < c->start || sp >= c->end || c->mm != vc->mm || !(++c->uses & 63))
		return false;
	vc->start = c->start;
	vc->end = c->end;
	return true;
}

/* After a lookup: remember (n == 0) or recall (n == -EBUSY) the bounds of
 * the mapping holding sp. Returns n, or 0 when recalled bounds hold sp. */
static __always_inline long stack__vma_cache(struct task_struct *task, __u64 sp, long n,
					     struct stack__vma_ctx *vc)
{
	struct stack__vma_ctx *c;

	if (n == 0) {
		c = bpf_task_storage_get(&stack_vmas, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (c) {
			c->start = vc->start;
			c->end = vc->end;
			c->mm = vc->mm;
		}
		return 0;
	}
	if (n != -16)	/* -EBUSY */
		return n;
	lost__inc(XPU_BPF_STAT_VMA_BUSY);
	c = bpf_task_storage_get(&stack_vmas, task, 0, 0);
	if (!c || sp < c->start || sp >= c->end || c->mm != vc->mm)
		return n;
	vc->start = c->start;
	vc->end = c->end;
	lost__inc(XPU_BPF_STAT_VMA_CACHED);
	return 0;
}

/*
 * The whole copy faulted: some page in the range was never touched (the
 * kernel leaves an untouched gap of up to a few pages between the argv/env
 * strings at the top of the main stack and the first frame). Copy page by
 * page and keep the part below the first missing page; frames live there.
 * bpf_loop keeps verification to one pass over the body.
 */
struct stack__pages_ctx {
	__u8 *buf;
	__u64 pos, sp, len, first, done;
};

/* Page i after the first (partial) one. Everything is derived from i, so
 * the verifier sees the same state each iteration and converges at once. */
static long stack__copy_page(__u32 i, struct stack__pages_ctx *c)
{
	__u64 off = c->first + (__u64)i * 4096, pos = c->pos, chunk;

	if (off >= c->len || off > XPU_BPF_STACK_MAX || pos > XPU_BPF_FIXED_MAX + 8 *
	    (XPU_BPF_MAX_KERNEL_IPS + XPU_BPF_MAX_USER_IPS + XPU_BPF_NR_REGS))
		return 1;
	chunk = c->len - off;
	if (chunk > 4096)
		chunk = 4096;
	if (bpf_probe_read_user(c->buf + pos + off, chunk, (void *)(c->sp + off)))
		return 1;
	c->done = off + chunk;
	return 0;
}

static __always_inline __u64 stack__copy_pages(__u8 *buf, __u64 pos, __u64 sp, __u64 len,
					       struct xpu_stack *st)
{
	struct stack__pages_ctx c = { .buf = buf, .pos = pos, .sp = sp, .len = len };
	__u64 off;

	lost__inc(XPU_BPF_STAT_COPY_PAGES);
	c.first = 4096 - (sp & 4095);
	if (c.first > len)
		c.first = len;
	if (c.first && !bpf_probe_read_user(buf + pos, c.first & 4095 ? c.first & 4095 : 4096,
					    (void *)sp)) {
		c.done = c.first;
		bpf_loop(XPU_BPF_STACK_MAX / 4096 + 1, stack__copy_page, &c, 0);
	}
	off = c.done & ~7ULL;
	if (off > XPU_BPF_STACK_MAX)
		off = XPU_BPF_STACK_MAX;
	if (!off)
		lost__inc(XPU_BPF_LOST_STACK_READ);
	else
		st->flags |= XPU_STACK_USER_TRUNCATED;
	return off;
}

/*
 * Fills st (inside buf) and the variable data from buf[fixed] on.
 * ctx_regs: the user registers when the caller has them (uprobe context, or
 * a sample that interrupted user code), else NULL: the task's saved user
 * registers are used. slot: the caller's XPU_BPF_SLOT_* (for regs_tmp).
 * Returns the record's total size.
 */
static __always_inline __u32 stack__capture(void *ctx, bool kernel, struct pt_regs *ctx_regs,
					    __u8 *buf, __u32 fixed, struct xpu_stack *st, __u32 slot)
{
	struct stack__vma_ctx vc = {};
	struct task_struct *task;
	__u64 pos = fixed, sp, len;
	__u64 *out;
	long n;

	st->nr_kernel_ips = 0;
	st->nr_user_ips = 0;
	st->nr_regs = 0;
	st->arch = XPU_ARCH_X86_64;
	st->stack_size = 0;
	st->flags = ctx_regs ? 0 : XPU_STACK_KERNEL_MODE;

	if (kernel && cfg_kernel_stacks) {
		n = bpf_get_stack(ctx, buf + pos, XPU_BPF_MAX_KERNEL_IPS * 8, 0);
		if (n > 0 && n <= XPU_BPF_MAX_KERNEL_IPS * 8) {
			st->nr_kernel_ips = n / 8;
			pos += n & ~7UL;
		}
	}

	if (cfg_mode == XPU_BPF_MODE_FP) {
		n = bpf_get_stack(ctx, buf + pos, XPU_BPF_MAX_USER_IPS * 8, BPF_F_USER_STACK);
		if (n > 0 && n <= XPU_BPF_MAX_USER_IPS * 8) {
			st->nr_user_ips = n / 8;
			pos += n & ~7UL;
		}
		return pos;
	}

	out = (__u64 *)(buf + pos);
	task = bpf_get_current_task_btf();
	{
		/* Both sources go through regs_tmp, so no instruction ever
		 * loads from "ctx or map value" (the verifier refuses that). */
		struct pt_regs *r = bpf_map_lookup_elem(&regs_tmp, &slot);

		if (!r)
			return pos;
		if (ctx_regs) {
			XPU_REGS_COPY(r, ctx_regs);
		} else if (bpf_probe_read_kernel(r, sizeof(*r), (void *)bpf_task_pt_regs(task))) {
			return pos;
		}
		XPU_REGS_TO_DWARF(out, r);
	}
	sp = out[XPU_X86_RSP];
	st->nr_regs = XPU_BPF_NR_REGS;
	pos += XPU_BPF_NR_REGS * 8;

	/* Copy only the part of the stack in use: from SP to the end of its
	 * mapping, at most cfg_stack_bytes. */
	len = cfg_stack_bytes;
	vc.mm = (__u64)task->mm;
	if (stack__vma_known(task, sp, &vc)) {
		n = 0;
	} else {
		n = bpf_find_vma(task, sp, stack__vma_cb, &vc, 0);
		n = stack__vma_cache(task, sp, n, &vc);
	}
	if (n == 0 && vc.end > sp) {
		if (vc.end - sp < len)
			len = vc.end - sp;
		else if (vc.end - sp > len)
			st->flags |= XPU_STACK_USER_TRUNCATED;
	} else if (n == -2) {
		/* -ENOENT: SP is in no mapping (a sample inside execve, after the
		 * old mm is gone): there is no user stack to copy, nothing lost. */
		lost__inc(XPU_BPF_STAT_VMA_MISS);
		len = 0;
	}	/* else -EBUSY with no remembered bounds: try BYTES */
	len &= ~7ULL;
	if (len > XPU_BPF_STACK_MAX)
		len = XPU_BPF_STACK_MAX;
	if (len && bpf_probe_read_user(buf + pos, len, (void *)sp))
		len = stack__copy_pages(buf, pos, sp, len, st);
	st->stack_size = len;
	return pos + len;
}

#endif
