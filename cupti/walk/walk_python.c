// SPDX-License-Identifier: MIT
/*
 * The interpreter walk of bpf/xpu_python.bpf.h done in the launching thread
 * by the launch walk (walk_probe.c), with the layout xpu-record chose for
 * this process (record/python/python.c, handed over in the rule table's header:
 * wire.h's struct xpu_walk_py). Frame for frame what the BPF walk gives:
 * the code object's address, the instruction's byte offset, the eval-loop
 * entry flag and the code key; the same checks (a code object whose type
 * is not PyCode_Type stops the walk: XPU_PY_STACK_BAD_FRAME), the same
 * bound (XPU_WALK_PY_FRAMES, then XPU_PY_STACK_TRUNCATED).
 *
 * Where the BPF walk reads with bpf_probe_read_user, this one reads
 * directly, so it reads only what cannot be gone: the thread's own state,
 * from CPython's PyGILState_GetThisThreadState() (its thread-specific
 * key; no list of other threads' states is walked, unlike the BPF walk),
 * checked to be this thread's (thread_id == pthread_self()); the chain of
 * this thread's own frames, which only this thread changes and which hold
 * their code objects alive. A null or low pointer where one is expected
 * stops the walk (BAD_FRAME). And only with a layout the BPF walk has
 * proved on this process (its fault-safe walks found thread states and
 * code objects with it, and never one that did not fit: py.valid 2, raised
 * by record/unwind/launch_rules.c); until then walk_probe.c leaves a Python
 * process's launches to the marker.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "walk_python.h"

typedef void *(*tstate_fn)(void);
static tstate_fn py_tstate;		/* PyGILState_GetThisThreadState, or NULL */

bool xpu_walk_python__init(void)
{
	py_tstate = (tstate_fn)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	return py_tstate != NULL;
}

static inline uint64_t rd64(uint64_t addr)
{
	uint64_t v;

	memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v;
}

static inline int32_t rd32(uint64_t addr)
{
	int32_t v;

	memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v;
}

static inline bool bad_ptr(uint64_t p)
{
	return p < 4096;
}

unsigned xpu_walk_python(const struct xpu_walk_py *l, struct xpu_py_frame *out, uint32_t *flags)
{
	uint64_t ts, frame;
	unsigned n = 0;

	*flags = 0;
	if (!l->valid || !py_tstate)
		return 0;
	ts = (uint64_t)(uintptr_t)py_tstate();
	if (bad_ptr(ts) || rd64(ts + l->ts_thread_id) != (uint64_t)pthread_self())
		return 0;
	if (l->ts_cframe != XPU_WALK_PY_NO_CFRAME) {
		uint64_t cf = rd64(ts + l->ts_cframe);

		if (bad_ptr(cf))
			return 0;
		frame = rd64(cf + l->cur_frame);
	} else {
		frame = rd64(ts + l->cur_frame);
	}
	/* the BPF walk's bpf_loop(XPU_BPF_PY_FRAMES + 32, ...) */
	for (unsigned i = 0; frame && i < XPU_WALK_PY_FRAMES + 32; i++) {
		uint64_t code, prev, off = XPU_PY_NO_OFFSET;
		uint16_t fl = 0;

		if (n >= XPU_WALK_PY_FRAMES) {
			*flags |= XPU_PY_STACK_TRUNCATED;
			break;
		}
		if (bad_ptr(frame)) {
			*flags |= XPU_PY_STACK_BAD_FRAME;
			break;
		}
		prev = rd64(frame + l->fr_previous);
		/* 3.14+: a _PyStackRef, tagged in its low bits (the BPF walk's mask) */
		code = rd64(frame + l->fr_code) & ~7ULL;
		if (l->entry_kind == XPU_WALK_PY_ENTRY_SHIM &&
		    *(const uint8_t *)(uintptr_t)(frame + l->fr_entry) >= l->owner_cstack) {
			/* the C stack's shim frame below an eval activation's first */
			if (n)
				out[n - 1].flags |= XPU_PY_FRAME_ENTRY;
			frame = prev;
			continue;
		}
		if (bad_ptr(code) || rd64(code + 8) != l->code_type) {
			*flags |= XPU_PY_STACK_BAD_FRAME;
			break;
		}
		if (l->instr_kind == XPU_WALK_PY_INSTR_PTR) {
			uint64_t instr = rd64(frame + l->fr_instr), base = code + l->co_code;

			off = instr >= base ? instr - base : 0;
			if (off >= (1ULL << 28))
				off = XPU_PY_NO_OFFSET;
		} else if (l->instr_kind == XPU_WALK_PY_INSTR_LASTI) {
			int32_t lasti = rd32(frame + l->fr_instr);

			off = lasti > 0 ? (uint64_t)lasti * 2 : 0;
		}
		if (l->entry_kind == XPU_WALK_PY_ENTRY_ALL ||
		    (l->entry_kind == XPU_WALK_PY_ENTRY_FLAG &&
		     *(const uint8_t *)(uintptr_t)(frame + l->fr_entry)))
			fl = XPU_PY_FRAME_ENTRY;
		out[n] = (struct xpu_py_frame){
			.code = code, .offset = (uint32_t)off, .flags = fl,
			.code_key = xpu_walk_python__key(rd64(code + l->co_qualname),
							 rd64(code + l->co_filename),
							 rd32(code + l->co_firstlineno)),
		};
		n++;
		frame = prev;
	}
	if (frame && n >= XPU_WALK_PY_FRAMES)
		*flags |= XPU_PY_STACK_TRUNCATED;
	return n;
}
