/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * PyTorch's CUDA caching allocator, block by block (format: GPU_BLOCK,
 * Documentation/design-gpu-memory.md): probes in libc10_cuda.so, placed by
 * record/kernel/torch_alloc.c for each tracked process that maps it, with
 * --gpu-memory only. Either its USDT notes pytorch:malloc(ptr, device,
 * size, stream) and pytorch:free(ptr), or, where a build has none,
 * uprobes on NativeCachingAllocator::malloc(void **out, signed char
 * device, size_t size, cudaStream_t) (the pointer read from *out where it
 * returns to) and NativeCachingAllocator::free(void *ptr).
 *
 * Each malloc takes the full native stack and the Python frames, as a
 * launch's marker uprobe does, into a GPU_CORR record of domain
 * XPU_API_ALLOC whose correlation_id (the block's stack_id) is a counter
 * of this recording: unique per process. A free takes no stack. Records go
 * to rb_mem, a ring of their own (allocations come in bursts of thousands
 * a training step; they must not push launch stacks out), counted
 * XPU_BPF_LOST_GPU_BLOCK when it is full. Included by xpu_record.bpf.c.
 */
#ifndef XPU_ALLOC_BPF_H
#define XPU_ALLOC_BPF_H

#include <bpf/usdt.bpf.h>

const volatile __u64 cfg_wakeup_mem = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* resized by user space with --gpu-memory */
} rb_mem SEC(".maps");

/* uprobe malloc: what its entry saw, until its return (by thread) */
struct alloc_pending {
	__u64 out, size, stream, stack_id, time;
	__u64 sp;			/* at the entry: the return address's slot */
	__s32 device;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct alloc_pending);
} alloc_pending SEC(".maps");

__u64 alloc_next_id = 0;	/* the last stack_id handed out */

/*
 * The GPU_CORR record of an allocation's stack, taken now: its stack_id, 0
 * when it could not go out.
 */
static __always_inline __u64 alloc__stack(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 time)
{
	__u32 cpu = bpf_get_smp_processor_id(), size, py_size;
	struct xpu_record_header *rh;
	struct xpu_gpu_corr *c;
	__u64 id;
	__u8 *buf;

	buf = scratch__get(cpu, XPU_BPF_SLOT_CORR);
	if (!buf)
		return 0;
	id = __sync_fetch_and_add(&alloc_next_id, 1) + 1;
	rh = (void *)buf;
	c = (void *)(buf + sizeof(*rh));
	c->time = time;
	c->pid = tgid;
	c->tid = tid;
	c->cpu = cpu;
	c->domain = XPU_API_ALLOC;
	c->correlation_id = id;
	c->cbid = XPU_BLOCK_MALLOC;	/* the spec's cbid 1 */
	c->reserved = 0;
	py_size = python__walk(tgid, tid, time, XPU_BPF_SLOT_CORR);
	size = stack__capture(ctx, false, ctx, buf, sizeof(*rh) + sizeof(*c), &c->stack,
			      XPU_BPF_SLOT_CORR);
	rh->type = XPU_REC_GPU_CORR;
	rh->flags = 0;
	rh->size = size;
	size = python__append(buf, size, py_size, XPU_BPF_SLOT_CORR);
	if (bpf_ringbuf_output(&rb_mem, buf, size, ring__flags(&rb_mem, cfg_wakeup_mem))) {
		lost__inc(XPU_BPF_LOST_ALLOC_STACK);
		return 0;
	}
	return id;
}

struct alloc_rec {
	struct xpu_record_header rh;
	struct xpu_gpu_block b;
};

static __always_inline void alloc__block(struct alloc_rec *r, __u32 tgid, __u32 tid)
{
	r->rh.type = XPU_REC_GPU_BLOCK;
	r->rh.flags = 0;
	r->rh.size = sizeof(*r);
	r->b.pid = tgid;
	r->b.tid = tid;
	r->b.flags = 0;
	if (bpf_ringbuf_output(&rb_mem, r, sizeof(*r), ring__flags(&rb_mem, cfg_wakeup_mem)))
		lost__inc(XPU_BPF_LOST_GPU_BLOCK);
	else
		lost__inc(XPU_BPF_STAT_GPU_BLOCKS);
}

static __always_inline int alloc__malloc(struct pt_regs *ctx, __u64 ptr, __s32 device, __u64 size,
					 __u64 stream)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct alloc_rec r = {};

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	r.b.time = bpf_ktime_get_ns();
	r.b.stack_id = alloc__stack(ctx, tgid, (__u32)id, r.b.time);
	r.b.ptr = ptr;
	r.b.size = size;
	r.b.stream = stream;
	r.b.device = device;
	r.b.op = XPU_BLOCK_MALLOC;
	r.b.source = XPU_BLOCK_USDT;
	alloc__block(&r, tgid, (__u32)id);
	return 0;
}

static __always_inline int alloc__free(__u64 ptr, __u8 source)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct alloc_rec r = {};

	if (!ptr || !bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	r.b.time = bpf_ktime_get_ns();
	r.b.ptr = ptr;
	r.b.device = -1;
	r.b.op = XPU_BLOCK_FREE;
	r.b.source = source;
	alloc__block(&r, tgid, (__u32)id);
	return 0;
}

/* pytorch:malloc(ptr, device, size, stream_id), in NativeCachingAllocator::allocate */
SEC("usdt")
int BPF_USDT(xpu_torch_malloc, __u64 ptr, long device, __u64 size, __u64 stream)
{
	return alloc__malloc(ctx, ptr, (__s32)device, size, stream);
}

/* pytorch:free(ptr), in local_raw_delete and uncached_delete */
SEC("usdt")
int BPF_USDT(xpu_torch_free, __u64 ptr)
{
	return alloc__free(ptr, XPU_BLOCK_USDT);
}

/*
 * NativeCachingAllocator::malloc(void **devPtr, c10::DeviceIndex device,
 * size_t size, cudaStream_t stream), a member function: this first. The
 * stack is taken at its entry; the block is written when it returns, by a
 * uprobe on the instruction after the call (its return address), not a
 * uretprobe: a uretprobe replaces the return address on the stack, and an
 * exception thrown through the function (PyTorch's out-of-memory error)
 * then finds no unwind information for the trampoline and ends the
 * program in std::terminate. Return sites are learnt as mallocs come: the
 * first call from a site tells user space (XPU_BPF_EV_ALLOC_SITE), which
 * places the probe; the mallocs from that site until then are counted
 * lost (XPU_BPF_LOST_ALLOC_NO_SITE).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct xpu_bpf_site_key);
	__type(value, __u8);
} alloc_sites SEC(".maps");

static __always_inline bool alloc__site_probed(__u32 tgid, __u64 ra)
{
	struct xpu_bpf_site_key k = { .ra = ra, .pid = tgid };
	struct {
		struct xpu_record_header rh;
		struct xpu_bpf_alloc_site s;
	} ev = {};
	__u8 seen = XPU_BPF_SITE_SEEN, *v = bpf_map_lookup_elem(&alloc_sites, &k);

	if (v)
		return *v == XPU_BPF_SITE_PROBED;
	if (bpf_map_update_elem(&alloc_sites, &k, &seen, BPF_NOEXIST))
		return false;
	ev.rh.type = XPU_BPF_EV_ALLOC_SITE;
	ev.rh.size = sizeof(ev);
	ev.s.ra = ra;
	ev.s.pid = tgid;
	if (bpf_ringbuf_output(&rb_mem, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP))
		bpf_map_delete_elem(&alloc_sites, &k);	/* told next time */
	return false;
}

SEC("uprobe")
int BPF_KPROBE(xpu_torch_umalloc, void *self, void *out, long device, __u64 size, void *stream)
{
	__u64 id = bpf_get_current_pid_tgid(), ra = 0;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct alloc_pending p = {};

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	p.sp = PT_REGS_SP(ctx);
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)p.sp) || !alloc__site_probed(tgid, ra)) {
		lost__inc(XPU_BPF_LOST_ALLOC_NO_SITE);
		return 0;
	}
	p.time = bpf_ktime_get_ns();
	p.out = (__u64)out;
	p.size = size;
	p.stream = (__u64)stream;
	p.device = (__s8)device;
	p.stack_id = alloc__stack(ctx, tgid, tid, p.time);
	/* one still there: its malloc threw (out of memory) and never returned */
	if (bpf_map_lookup_elem(&alloc_pending, &tid))
		lost__inc(XPU_BPF_STAT_ALLOC_NO_RET);
	bpf_map_update_elem(&alloc_pending, &tid, &p, BPF_ANY);
	return 0;
}

/* On a return site of malloc: the block, when this thread's pending malloc
 * returns here (its stack pointer one word above the entry's: not a jump
 * to this instruction, not a malloc that threw long ago) */
SEC("uprobe")
int BPF_KPROBE(xpu_torch_umalloc_ret)
{
	__u64 id = bpf_get_current_pid_tgid(), ptr = 0;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct alloc_pending *p = bpf_map_lookup_elem(&alloc_pending, &tid);
	struct alloc_rec r = {};

	if (!p || PT_REGS_SP(ctx) != p->sp + 8)
		return 0;
	bpf_probe_read_user(&ptr, sizeof(ptr), (void *)p->out);
	r.b.time = p->time;
	r.b.ptr = ptr;
	r.b.size = p->size;
	r.b.stream = p->stream;
	r.b.device = p->device;
	r.b.stack_id = p->stack_id;
	r.b.op = XPU_BLOCK_MALLOC;
	r.b.source = XPU_BLOCK_UPROBE;
	bpf_map_delete_elem(&alloc_pending, &tid);
	if (ptr)	/* a size-0 request hands out no block */
		alloc__block(&r, tgid, tid);
	return 0;
}

/* NativeCachingAllocator::free(void *ptr) */
SEC("uprobe")
int BPF_KPROBE(xpu_torch_ufree, void *self, void *ptr)
{
	return alloc__free((__u64)ptr, XPU_BLOCK_UPROBE);
}

#endif
