// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * xpu-record's BPF side: a cpu-clock sampler and a uprobe on the CUPTI
 * library's marker, both filtered to the tracked process tree, both writing
 * finished trace records into ring buffers (one each, so a flood of samples
 * never drops a correlation record).
 *
 * The tracked set (tgid -> 1) is seeded by user space (the launched command or
 * -p PIDs); fork adds children of tracked processes; the exit of a process's
 * last thread removes it, so a recycled pid is not profiled by mistake.
 */
#include "vmlinux.h"
#define __CLANG_STDINT_H 1	/* vmlinux.h has the uintN_t types */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "format/xpu_format.h"
#include "bpf/xpu_events.h"
#include "bpf/xpu_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* resized by user space */
} rb_samples SEC(".maps");

/*
 * GPU correlation records go to the ring user space puts in corr_rings[0]
 * when the first CUDA process connects (sized for launch bursts: up to
 * 64 MiB, which a recording of a CPU program then never allocates), and
 * to the small rb_corr before that.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rb_corr SEC(".maps");

struct corr_ring {	/* a template: the kernel checks the type, not the size */
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct corr_ring);
} corr_rings SEC(".maps");

struct scratch {
	__u8 buf[XPU_BPF_SCRATCH_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* user space sets nr_cpus * XPU_BPF_NR_SLOTS */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline __u8 *scratch__get(__u32 cpu, __u32 slot)
{
	__u32 idx = cpu * XPU_BPF_NR_SLOTS + slot;

	return bpf_map_lookup_elem(&scratch, &idx);
}

#include "bpf/xpu_python.bpf.h"
#include "bpf/xpu_offcpu.bpf.h"	/* after python: a block's Python frames */
#include "bpf/xpu_alloc.bpf.h"	/* after python: an allocation's Python frames */

SEC("perf_event")
int xpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, cpu, size, py_size;
	struct xpu_record_header *rh;
	struct xpu_sample *s;
	__u8 *buf;

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	/* A block that ended outside a system call (preemption, a page
	 * fault): the thread is back in user code, so its record can go. */
	if (cfg_offcpu_min_ns && (*(volatile __u64 *)&ctx->regs.cs & 3))
		offcpu__flush(ctx, bpf_get_current_task_btf(), XPU_BPF_SLOT_SAMPLE);
	cpu = bpf_get_smp_processor_id();
	buf = scratch__get(cpu, XPU_BPF_SLOT_SAMPLE);
	if (!buf)
		return 0;
	rh = (void *)buf;
	s = (void *)(buf + sizeof(*rh));
	s->time = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = (__u32)id;
	s->cpu = cpu;
	s->weight = 1;
	py_size = python__walk(tgid, (__u32)id, s->time, XPU_BPF_SLOT_SAMPLE);
	/* Interrupted user code: its registers are in ctx, and there is no
	 * kernel stack to walk (bpf_get_stack would find none, at the price of
	 * a callchain setup). Two call sites so the verifier sees a plain ctx
	 * pointer or NULL on each path. */
	if (*(volatile __u64 *)&ctx->regs.cs & 3)	/* ctx fields load as 8 bytes */
		size = stack__capture(ctx, false, (struct pt_regs *)&ctx->regs, buf,
				      sizeof(*rh) + sizeof(*s), &s->stack, XPU_BPF_SLOT_SAMPLE);
	else
		size = stack__capture(ctx, true, NULL, buf, sizeof(*rh) + sizeof(*s), &s->stack,
				      XPU_BPF_SLOT_SAMPLE);
	rh->type = XPU_REC_SAMPLE;
	rh->flags = 0;
	rh->size = size;
	size = python__append(buf, size, py_size, XPU_BPF_SLOT_SAMPLE);
	if (bpf_ringbuf_output(&rb_samples, buf, size, ring__flags(&rb_samples, cfg_wakeup_samples)))
		lost__inc(XPU_BPF_LOST_SAMPLES);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(xpu_marker, __u64 correlation_id, __u32 cbid, __u32 domain)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, cpu, size, py_size;
	struct xpu_record_header *rh;
	struct xpu_gpu_corr *c;
	__u32 zero = 0;
	void *ring;
	long err;
	__u8 *buf;

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	cpu = bpf_get_smp_processor_id();
	buf = scratch__get(cpu, XPU_BPF_SLOT_CORR);
	if (!buf)
		return 0;
	rh = (void *)buf;
	c = (void *)(buf + sizeof(*rh));
	c->time = bpf_ktime_get_ns();
	c->pid = tgid;
	c->tid = (__u32)id;
	c->cpu = cpu;
	c->domain = domain & ~XPU_BPF_MARKER_URGENT;
	c->correlation_id = correlation_id;
	c->cbid = cbid;
	c->reserved = 0;
	py_size = python__walk(tgid, (__u32)id, c->time, XPU_BPF_SLOT_CORR);
	size = stack__capture(ctx, false, ctx, buf, sizeof(*rh) + sizeof(*c), &c->stack,
			      XPU_BPF_SLOT_CORR);
	rh->type = XPU_REC_GPU_CORR;
	rh->flags = 0;
	rh->size = size;
	size = python__append(buf, size, py_size, XPU_BPF_SLOT_CORR);
	/* the launch walk missed for want of this stack's rules: wake the
	 * reader now (cupti/walk/walk_probe.c limits how often) */
	ring = bpf_map_lookup_elem(&corr_rings, &zero);
	if (ring)
		err = bpf_ringbuf_output(ring, buf, size, (domain & XPU_BPF_MARKER_URGENT) ?
					 BPF_RB_FORCE_WAKEUP : ring__flags(ring, cfg_wakeup_corr));
	else
		err = bpf_ringbuf_output(&rb_corr, buf, size, (domain & XPU_BPF_MARKER_URGENT) ?
					 BPF_RB_FORCE_WAKEUP :
					 ring__flags(&rb_corr, cfg_wakeup_corr_early));
	if (err)
		lost__inc(XPU_BPF_LOST_CORR);
	return 0;
}

/*
 * PyTorch autograd nodes (Documentation/design-autograd.md): uprobes in
 * libtorch_cpu.so, attached by xpu-record when a tracked process maps it.
 * A node's first words: the vtable pointer, then enable_shared_from_this's
 * weak pointer to the node itself (its check), its control block, then
 * Node::sequence_nr_. Records go to the sample ring, with the forward op's
 * Python frames after the NODE record (python__append, written before it).
 */
static __always_inline int autograd__emit(struct pt_regs *ctx, __u64 node, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid(), words[4];
	__u32 tgid = id >> 32, cpu, size, py_size = 0;
	struct xpu_record_header *rh;
	struct xpu_autograd *a;
	__u8 *buf;

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	if (!node || bpf_probe_read_user(words, sizeof(words), (void *)node) || words[1] != node) {
		lost__inc(XPU_BPF_STAT_AUTOGRAD_BAD);
		if (kind != XPU_AUTOGRAD_EVAL)
			return 0;
		/* still the node the thread runs now, whatever it is: the
		 * launches from it are not the previous node's */
		words[3] = XPU_AUTOGRAD_SEQ_UNKNOWN;
	}
	cpu = bpf_get_smp_processor_id();
	buf = scratch__get(cpu, XPU_BPF_SLOT_CORR);
	if (!buf)
		return 0;
	rh = (void *)buf;
	a = (void *)(buf + sizeof(*rh));
	a->time = bpf_ktime_get_ns();
	a->pid = tgid;
	a->tid = (__u32)id;
	a->seq = words[3];
	a->node = node;
	a->kind = kind;
	a->reserved = 0;
	rh->type = XPU_REC_AUTOGRAD;
	rh->flags = 0;
	rh->size = sizeof(*rh) + sizeof(*a);
	size = rh->size;
	if (kind == XPU_AUTOGRAD_NODE) {
		py_size = python__walk(tgid, (__u32)id, a->time, XPU_BPF_SLOT_CORR);
		size = python__append(buf, size, py_size, XPU_BPF_SLOT_CORR);
	}
	if (size > XPU_BPF_SCRATCH_SIZE)
		return 0;
	if (bpf_ringbuf_output(&rb_samples, buf, size, ring__flags(&rb_samples, cfg_wakeup_samples)))
		lost__inc(XPU_BPF_LOST_SAMPLES);
	else
		lost__inc(XPU_BPF_STAT_AUTOGRAD);
	return 0;
}

/* torch::autograd::impl::set_gradient_edge(const Variable&, Edge edge): the
 * Edge (a shared_ptr<Node> first) is passed by reference to a copy */
SEC("uprobe")
int BPF_KPROBE(xpu_autograd_edge, void *variable, void *edge)
{
	__u64 node = 0;

	if (bpf_probe_read_user(&node, sizeof(node), edge))
		return 0;
	return autograd__emit(ctx, node, XPU_AUTOGRAD_NODE);
}

/* torch::autograd::Engine::evaluate_function(shared_ptr<GraphTask>&, Node*
 * func, InputBuffer&, const shared_ptr<ReadyQueue>&) */
SEC("uprobe")
int BPF_KPROBE(xpu_autograd_eval, void *engine, void *task, void *func)
{
	return autograd__emit(ctx, (__u64)func, XPU_AUTOGRAD_EVAL);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(xpu_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	struct xpu_bpf_py_cfg *pc, cc;

	if (ptgid == ctgid || !bpf_map_lookup_elem(&tracked, &ptgid))
		return 0;
	bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
	/* A forked Python process walks at its first sample, as its parent
	 * (user space sets the same entry when it reads the FORK record). */
	pc = bpf_map_lookup_elem(&py_procs, &ptgid);
	if (pc) {
		__builtin_memcpy(&cc, pc, sizeof(cc));
		cc.inherited = 1;
		cc.parent = ptgid;
		cc.walks = cc.bad_thread = cc.bad_code = cc.frames = 0;
		bpf_map_update_elem(&py_procs, &ctgid, &cc, BPF_NOEXIST);
	}
	return 0;
}

/* The exec of a tracked process: the new image is mapped (its MMAP records
 * wait in the side-band ring); wake the reader now (XPU_BPF_EV_EXEC). An
 * entry inherited at fork goes now, not when the reader sees the exec. */
const volatile __u32 cfg_exec_wake = 0;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(xpu_exec, struct task_struct *p)
{
	struct {
		struct xpu_record_header rh;
		struct xpu_bpf_exec ex;
	} ev = {};
	__u32 tgid = p->tgid;

	struct xpu_bpf_py_cfg *pc;

	if (!cfg_exec_wake || !bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	/* the parent's interpreter is not the new image's */
	pc = bpf_map_lookup_elem(&py_procs, &tgid);
	if (pc && pc->inherited)
		bpf_map_delete_elem(&py_procs, &tgid);
	ev.rh.type = XPU_BPF_EV_EXEC;
	ev.rh.size = sizeof(ev);
	ev.ex.time = bpf_ktime_get_ns();
	ev.ex.pid = tgid;
	/* lost with a full ring: the reader is busy anyway, and polls */
	bpf_ringbuf_output(&rb_samples, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(xpu_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	/* signal->live drops to 0 when the last thread exits. */
	if (cfg_offcpu_min_ns)
		offcpu__flush(ctx, p, XPU_BPF_SLOT_OFFCPU);
	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}
