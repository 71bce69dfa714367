/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Off-CPU recording: how long each thread of the recorded tree is switched
 * out, and where it blocked. Included by xpu_record.bpf.c after its maps.
 *
 * Per context switch the cost must stay small, so nothing large is copied
 * there. At switch-out (sched_switch, prev tracked) the thread's task
 * storage gets the time and its user registers; at switch-in the time off
 * CPU is added up and, once the block is long enough to be written, the
 * kernel stack it is still blocked in is walked (bpf_get_task_stack: the
 * task has not run since). Short blocks cost no stack walk at all. The record is
 * written later, in the thread's own context, where its user stack can be
 * read:
 *  - at the return of the system call it blocked in (sys_exit, user ip and
 *    sp unchanged since the switch-out): the full user stack, which is the
 *    state the call was made in;
 *  - otherwise (preempted, or blocked in a page fault) at its next switch-out,
 *    next user-mode CPU sample or exit: its user registers only (the leaf).
 * Blocks shorter than cfg_offcpu_min_ns are summed per thread and written as
 * one XPU_OFFCPU_SHORT record, without a stack, once the sum reaches it.
 * A block still pending when the recording stops is not written.
 */
#ifndef XPU_OFFCPU_BPF_H
#define XPU_OFFCPU_BPF_H

const volatile __u64 cfg_offcpu_min_ns = 0;	/* 0: off-CPU recording is off */
const volatile __u64 cfg_wakeup_offcpu = 0;

#define XPU_TASK_DEAD	0x80		/* prev_state of an exiting task */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} rb_offcpu SEC(".maps");

struct offcpu_task {
	__u64 out;			/* switch-out of the block in progress; 0: on CPU */
	__u64 first_out;		/* first switch-out of the pending block; 0: none */
	__u64 last_in;			/* last switch-in */
	__u64 off_ns;			/* off CPU so far in the pending block */
	__u64 short_start, short_ns;	/* blocks under the threshold, not yet written */
	__u64 ip, sp;			/* user ip/sp at the first switch-out */
	__u32 state, cpu;
	__u32 nr_kips;
	__u32 preempted;
	__u64 regs[XPU_BPF_NR_REGS];	/* user registers, DWARF order */
	__u64 kips[XPU_BPF_OFFCPU_KIPS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

static __always_inline void offcpu__output(__u8 *buf, __u32 size)
{
	if (bpf_ringbuf_output(&rb_offcpu, buf, size, ring__flags(&rb_offcpu, cfg_wakeup_offcpu)))
		lost__inc(XPU_BPF_LOST_OFFCPU);
}

/* Writes the pending block of task (full: the user stack is readable now,
 * in the task's own context after its system call) and clears it. */
static __always_inline void offcpu__emit(void *ctx, struct task_struct *task,
					 struct offcpu_task *t, bool full, __s32 syscall,
					 __u32 slot)
{
	__u32 cpu = bpf_get_smp_processor_id(), size, nk;
	struct xpu_record_header *rh;
	struct xpu_offcpu *o;
	__u64 pos;
	__u8 *buf;

	buf = scratch__get(cpu, slot);
	if (!buf) {
		t->first_out = 0;
		return;
	}
	rh = (void *)buf;
	o = (void *)(buf + sizeof(*rh));
	o->pid = BPF_CORE_READ(task, tgid);
	o->tid = BPF_CORE_READ(task, pid);
	o->cpu = t->cpu;
	o->state = t->state;
	rh->type = XPU_REC_OFFCPU;
	rh->flags = 0;

	if (t->off_ns < cfg_offcpu_min_ns) {
		if (!t->short_ns)
			t->short_start = t->first_out;
		t->short_ns += t->off_ns;
		t->first_out = 0;
		if (t->short_ns < cfg_offcpu_min_ns)
			return;
		o->start = t->short_start;
		o->end = t->last_in;
		o->off_ns = t->short_ns;
		o->flags = XPU_OFFCPU_SHORT;
		o->syscall = -1;
		__builtin_memset(&o->stack, 0, sizeof(o->stack));
		o->stack.arch = XPU_ARCH_X86_64;
		t->short_ns = 0;
		rh->size = sizeof(*rh) + sizeof(*o);
		offcpu__output(buf, sizeof(*rh) + sizeof(*o));
		return;
	}
	o->start = t->first_out;
	o->end = t->last_in;
	o->off_ns = t->off_ns;
	o->flags = (t->preempted ? XPU_OFFCPU_PREEMPTED : 0) |
		   (syscall >= 0 ? XPU_OFFCPU_SYSCALL : 0);
	o->syscall = syscall;
	t->first_out = 0;

	nk = t->nr_kips;
	if (nk > XPU_BPF_OFFCPU_KIPS)
		nk = XPU_BPF_OFFCPU_KIPS;
	pos = sizeof(*rh) + sizeof(*o);
	if (nk && bpf_probe_read_kernel(buf + pos, nk * 8, t->kips))
		nk = 0;
	pos += nk * 8;
	if (full) {
		/* in the task's own context: its Python frames are those it
		 * blocked in (no Python ran since), as at a sample */
		__u32 py_size = python__walk(o->pid, o->tid, o->start, slot);

		size = stack__capture(ctx, false, NULL, buf, pos, &o->stack, slot);
		o->stack.nr_kernel_ips = nk;
		rh->size = size;
		size = python__append(buf, size, py_size, slot);
		offcpu__output(buf, size);
		return;
	} else {
		o->flags |= XPU_OFFCPU_LEAF_ONLY;
		o->stack.nr_kernel_ips = 0;
		o->stack.nr_user_ips = 0;
		o->stack.nr_regs = XPU_BPF_NR_REGS;
		o->stack.arch = XPU_ARCH_X86_64;
		o->stack.stack_size = 0;
		o->stack.flags = XPU_STACK_KERNEL_MODE;
		if (bpf_probe_read_kernel(buf + pos, sizeof(t->regs), t->regs))
			o->stack.nr_regs = 0;
		else
			pos += sizeof(t->regs);
		size = pos;
	}
	o->stack.nr_kernel_ips = nk;
	rh->size = size;
	offcpu__output(buf, size);
}

/*
 * The task runs now, so a block still marked out had its switch-in missed
 * (0-2 times a run of offcpu_demo; likely, not proven: the sched_switch
 * program's task-storage lookup fails while the per-CPU task-storage lock
 * is held by a preempted holder, as freeing a task's storage only disables
 * migration). The block ends now, a little
 * late, rather than never: offcpu_demo's last 200 ms futex wait had no
 * record in 1 of about 30 runs of the test suite.
 */
static __always_inline void offcpu__missed_in(struct offcpu_task *t)
{
	__u64 now;

	if (!t->out)
		return;
	now = bpf_ktime_get_ns();
	t->off_ns += now - t->out;
	t->last_in = now;
	t->out = 0;
	lost__inc(XPU_BPF_STAT_OFFCPU_MISSED_IN);
}

/* Writes task's pending block, if it has one that ended, with its user
 * registers only (called where the task is known to be past it). */
static __always_inline void offcpu__flush(void *ctx, struct task_struct *task, __u32 slot)
{
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);

	if (!t || !t->first_out)
		return;
	offcpu__missed_in(t);
	offcpu__emit(ctx, task, t, false, -1, slot);
}

static __always_inline void offcpu__switch_out(void *ctx, struct task_struct *prev,
					       struct offcpu_task *t, __u32 state, bool preempt,
					       __u64 now)
{
	struct pt_regs r;

	if (bpf_probe_read_kernel(&r, sizeof(r), (void *)bpf_task_pt_regs(prev)))
		return;
	lost__inc(XPU_BPF_STAT_OFFCPU_BLOCKS);
	if (t->first_out) {
		if (r.ip == t->ip && r.sp == t->sp) {	/* blocks again in the same call */
			t->out = now;
			if (state && !preempt) {
				/* a sleep after a preemption in the same call: the
				 * sleep is the reason; its path is walked anew */
				t->preempted = 0;
				t->state = state;
				t->nr_kips = 0;
			}
			return;
		}
		offcpu__emit(ctx, prev, t, false, -1, XPU_BPF_SLOT_OFFCPU);
	}
	t->first_out = t->out = now;
	t->off_ns = 0;
	t->last_in = 0;
	t->ip = r.ip;
	t->sp = r.sp;
	t->state = state;
	t->cpu = bpf_get_smp_processor_id();
	t->preempted = preempt || state == 0;
	XPU_REGS_TO_DWARF(t->regs, &r);
	t->nr_kips = 0;		/* taken at the switch-in, for long blocks only */
}

SEC("tp_btf/sched_switch")
int BPF_PROG(xpu_offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_task *t;
	__u32 tgid = prev->tgid;

	if (!(prev_state & XPU_TASK_DEAD) && bpf_map_lookup_elem(&tracked, &tgid)) {
		t = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t)
			offcpu__switch_out(ctx, prev, t, prev_state, preempt, now);
	}
	t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);
	if (t && t->out) {
		t->off_ns += now - t->out;
		t->last_in = now;
		t->out = 0;
		/* next has not run since it blocked: its kernel stack is still the
		 * blocking path. Walked only for blocks that will get a record. */
		if (!t->nr_kips && t->off_ns >= cfg_offcpu_min_ns) {
			long n = bpf_get_task_stack(next, t->kips, sizeof(t->kips), 0);

			t->nr_kips = n > 0 ? (__u64)n / 8 : 0;
		}
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(xpu_offcpu_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);
	__u64 ip, sp;

	if (!t || !t->first_out)
		return 0;
	offcpu__missed_in(t);
	ip = BPF_CORE_READ(regs, ip);
	sp = BPF_CORE_READ(regs, sp);
	if (ip == t->ip && sp == t->sp)
		offcpu__emit(ctx, task, t, true, (__s32)BPF_CORE_READ(regs, orig_ax),
			     XPU_BPF_SLOT_OFFCPU);
	else
		offcpu__emit(ctx, task, t, false, -1, XPU_BPF_SLOT_OFFCPU);
	return 0;
}

#endif
