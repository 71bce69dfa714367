/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Python frames read from the interpreter itself, at a CPU sample or a
 * CUDA-call marker of a thread of a process user space registered in
 * py_procs (record/python/python.c found _PyRuntime in its mappings and wrote the
 * CPython version's layout there).
 *
 * The walk: the thread's PyThreadState is the one of the interpreter's
 * thread list whose thread_id (pthread_self()) equals the task's fsbase
 * (x86-64: the TCB is the pthread); it is cached per thread and checked
 * again at every use. From its current frame the chain of frames is
 * followed through their 'previous' (f_back) links, emitting per frame the
 * code object's address, the instruction's byte offset and whether the
 * frame is the last one of an eval-loop activation. Every code object must
 * have PyCode_Type as its type and every thread state must point back to
 * the interpreter: a wrong layout stops the walk (counted in the process's
 * entry, which user space reads to warn) instead of emitting garbage.
 * Bounded: XPU_BPF_PY_THREADS thread states, XPU_BPF_PY_FRAMES frames
 * (more: XPU_PY_STACK_TRUNCATED and a lost count), one read of at most 128
 * bytes per frame and one of at most 255 bytes per code object (its type
 * and a key of its names and first line, so that user space tells apart
 * code objects made at the address of a freed one).
 *
 * Included by xpu_record.bpf.c after xpu_stack.bpf.h.
 */
#ifndef XPU_PYTHON_BPF_H
#define XPU_PYTHON_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);			/* tgid */
	__type(value, struct xpu_bpf_py_cfg);
} py_procs SEC(".maps");

/* A thread's PyThreadState; 0 with the time it was last looked for when it
 * has none (a thread that never ran Python is not searched at every sample). */
struct py_thread {
	__u64 tstate;
	__u64 checked;
};

#define PY_NO_THREAD_RETRY_NS	(2 * 1000000ULL)

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);			/* tid */
	__type(value, struct py_thread);
} py_threads SEC(".maps");

#define PY_BLK 136	/* a frame read at once (<= 128 bytes) + room for an 8-byte field */
#define PY_CBLK 264	/* a code object's head (<= 255 bytes) + the same */

struct py_scratch {
	struct xpu_record_header rh;
	struct xpu_py_stack st;
	struct xpu_py_frame fr[XPU_BPF_PY_FRAMES];
	__u8 blk[PY_BLK];
	__u8 cblk[PY_CBLK];
};

/* One per program kind, per CPU (the sampler can interrupt the uprobe). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_NR_SLOTS);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

static __always_inline __u64 py__read_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

struct py_threads_ctx {
	struct xpu_bpf_py_cfg *cfg;
	__u64 interp, ts, fsbase, found;
};

static long py__thread_cb(__u32 i, struct py_threads_ctx *c)
{
	struct xpu_bpf_py_cfg *cfg = c->cfg;

	if (!c->ts)
		return 1;
	if (py__read_u64(c->ts + cfg->ts_interp) != c->interp) {
		__sync_fetch_and_add(&cfg->bad_thread, 1);
		return 1;
	}
	if (py__read_u64(c->ts + cfg->ts_thread_id) == c->fsbase) {
		c->found = c->ts;
		return 1;
	}
	c->ts = py__read_u64(c->ts + cfg->ts_next);
	return 0;
}

struct py_walk_ctx {
	struct xpu_bpf_py_cfg *cfg;
	struct py_scratch *ps;
	__u64 frame;
	__u32 n;
	__u32 flags;
};

static long py__frame_cb(__u32 i, struct py_walk_ctx *c)
{
	struct xpu_bpf_py_cfg *cfg = c->cfg;
	struct py_scratch *ps = c->ps;
	__u64 code, prev, off = XPU_PY_NO_OFFSET;
	__u32 n = c->n, flags = 0;
	__u8 *b = ps->blk, *cb = ps->cblk;
	__u16 key;

	if (!c->frame)
		return 1;
	if (n >= XPU_BPF_PY_FRAMES) {
		c->flags |= XPU_PY_STACK_TRUNCATED;
		return 1;
	}
	if (bpf_probe_read_user(b, cfg->fr_size & 127, (void *)c->frame)) {
		c->flags |= XPU_PY_STACK_BAD_FRAME;
		return 1;
	}
	prev = *(__u64 *)(b + (cfg->fr_previous & 120));
	/* 3.14+: f_executable is a _PyStackRef, its low bits a tag (objects
	 * are 8-aligned in every version, so the mask is harmless before) */
	code = *(__u64 *)(b + (cfg->fr_code & 120)) & ~7ULL;
	/* owner_cstack and above: 3.12/3.13's FRAME_OWNED_BY_CSTACK, 3.14+'s
	 * FRAME_OWNED_BY_INTERPRETER (3) and FRAME_OWNED_BY_CSTACK (4) */
	if (cfg->entry_kind == XPU_PY_ENTRY_SHIM && b[cfg->fr_entry & 127] >= cfg->owner_cstack) {
		/* the C stack's shim frame below an eval activation's first frame */
		if (n)
			ps->fr[(n - 1) & (XPU_BPF_PY_FRAMES - 1)].flags |= XPU_PY_FRAME_ENTRY;
		c->frame = prev;
		return 0;
	}
	/* the code object's head: its type, and what its key is made of */
	if (bpf_probe_read_user(cb, cfg->co_size & 255, (void *)code) ||
	    *(__u64 *)(cb + 8) != cfg->code_type) {
		__sync_fetch_and_add(&cfg->bad_code, 1);
		c->flags |= XPU_PY_STACK_BAD_FRAME;
		return 1;
	}
	key = xpu_py_code_key(*(__u64 *)(cb + (cfg->co_qualname & 248)),
			      *(__u64 *)(cb + (cfg->co_filename & 248)),
			      *(__s32 *)(cb + (cfg->co_firstlineno & 252)));
	if (cfg->instr_kind == XPU_PY_INSTR_PTR) {
		__u64 instr = *(__u64 *)(b + (cfg->fr_instr & 120)), base = code + cfg->co_code;

		/* 3.11/3.12 point at the previous instruction: one before the
		 * first when the frame has not started */
		off = instr >= base ? instr - base : 0;
		if (off >= (1ULL << 28))
			off = XPU_PY_NO_OFFSET;
	} else if (cfg->instr_kind == XPU_PY_INSTR_LASTI) {
		__s32 lasti = *(__s32 *)(b + (cfg->fr_instr & 124));

		off = lasti > 0 ? (__u64)lasti * 2 : 0;
	}
	if (cfg->entry_kind == XPU_PY_ENTRY_ALL ||
	    (cfg->entry_kind == XPU_PY_ENTRY_FLAG && b[cfg->fr_entry & 127]))
		flags = XPU_PY_FRAME_ENTRY;
	ps->fr[n & (XPU_BPF_PY_FRAMES - 1)].code = code;
	ps->fr[n & (XPU_BPF_PY_FRAMES - 1)].offset = off;
	ps->fr[n & (XPU_BPF_PY_FRAMES - 1)].flags = flags;
	ps->fr[n & (XPU_BPF_PY_FRAMES - 1)].code_key = key;
	c->n = n + 1;
	c->frame = prev;
	return 0;
}

/* The current thread's PyThreadState, or 0. */
static __always_inline __u64 python__tstate(struct xpu_bpf_py_cfg *cfg, struct task_struct *task,
					    __u32 tid, __u64 now)
{
	struct py_threads_ctx tc = { .cfg = cfg };
	struct py_thread *pt, nt;

	tc.fsbase = BPF_CORE_READ(task, thread.fsbase);
	pt = bpf_map_lookup_elem(&py_threads, &tid);
	if (pt) {
		if (pt->tstate && py__read_u64(pt->tstate + cfg->ts_thread_id) == tc.fsbase)
			return pt->tstate;
		if (!pt->tstate && now - pt->checked < PY_NO_THREAD_RETRY_NS)
			return 0;
	}
	tc.interp = py__read_u64(cfg->runtime + cfg->rt_interp_head);
	if (tc.interp) {
		tc.ts = py__read_u64(tc.interp + cfg->is_threads_head);
		bpf_loop(XPU_BPF_PY_THREADS, py__thread_cb, &tc, 0);
	}
	nt.tstate = tc.found;
	nt.checked = now;
	bpf_map_update_elem(&py_threads, &tid, &nt, BPF_ANY);
	return tc.found;
}

/*
 * Walks the current thread's Python frames into the slot's PY_STACK record
 * (time, pid, tid as given). Returns the record's size, 0 when there is
 * none (not a Python process, no thread state, no frame).
 */
static __always_inline __u32 python__walk(__u32 tgid, __u32 tid, __u64 time, __u32 slot)
{
	struct py_walk_ctx c = {};
	struct xpu_bpf_py_cfg *cfg;
	struct task_struct *task;
	__u64 ts, frame;

	cfg = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!cfg)
		return 0;
	c.ps = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!c.ps)
		return 0;
	task = bpf_get_current_task_btf();
	ts = python__tstate(cfg, task, tid, time);
	if (!ts) {
		lost__inc(XPU_BPF_STAT_PY_NO_THREAD);
		return 0;
	}
	if (cfg->ts_cframe != XPU_PY_NO_CFRAME)
		frame = py__read_u64(py__read_u64(ts + cfg->ts_cframe) + cfg->cur_frame);
	else
		frame = py__read_u64(ts + cfg->cur_frame);
	c.cfg = cfg;
	c.frame = frame;
	__sync_fetch_and_add(&cfg->walks, 1);
	bpf_loop(XPU_BPF_PY_FRAMES + 32, py__frame_cb, &c, 0);
	if (c.frame && c.n >= XPU_BPF_PY_FRAMES)
		c.flags |= XPU_PY_STACK_TRUNCATED;
	if (c.flags)
		lost__inc(XPU_BPF_LOST_PYTHON);
	if (!c.n)
		return 0;
	__sync_fetch_and_add(&cfg->frames, c.n);
	lost__inc(XPU_BPF_STAT_PY_WALKS);
	{
		__u32 idx = XPU_BPF_STAT_PY_FRAMES;
		__u64 *v = bpf_map_lookup_elem(&lost, &idx);

		if (v)
			*v += c.n;
	}
	c.ps->st.time = time;
	c.ps->st.pid = tgid;
	c.ps->st.tid = tid;
	c.ps->st.nr_frames = c.n;
	c.ps->st.version = cfg->version;
	c.ps->st.flags = c.flags;
	c.ps->rh.type = XPU_REC_PY_STACK;
	c.ps->rh.flags = 0;
	c.ps->rh.size = sizeof(c.ps->rh) + sizeof(c.ps->st) + c.n * sizeof(struct xpu_py_frame);
	return c.ps->rh.size;
}

/*
 * Appends the slot's PY_STACK record (py_size bytes) after the record of
 * size bytes in buf, so both go out as one ring-buffer entry (the recorder
 * writes the PY_STACK first). Returns the entry's size.
 */
static __always_inline __u32 python__append(__u8 *buf, __u32 size, __u32 py_size, __u32 slot)
{
	struct py_scratch *ps;

	if (!py_size || py_size > XPU_BPF_PY_REC_MAX || size > XPU_BPF_SCRATCH_SIZE - XPU_BPF_PY_ROOM)
		return size;
	ps = bpf_map_lookup_elem(&py_scratch, &slot);
	/* the bound again, on the register passed: clang would drop a plain
	 * mask (it knows the check above) and pass an unchecked copy */
	asm volatile("%[v] &= %[m]" : [v] "+r"(py_size) : [m] "i"(XPU_BPF_PY_ROOM - 1));
	if (!ps || bpf_probe_read_kernel(buf + size, py_size, ps))
		return size;
	return size + py_size;
}

#endif
