/* SPDX-License-Identifier: MIT */
/*
 * From a recorded stack (CPU sample or GPU correlation record) to interned
 * profile frames, root first: kernel ips through XPU_REC_KSYM symbols, user
 * ips as recorded (fp mode) or unwound from registers + stack copy (dwarf
 * mode), each pc mapped to its DSO and symbol. Return addresses are looked up
 * at pc - 1 so a call at the end of a function names the caller.
 *
 * Frame names:
 *	symbol found		demangled name, module = DSO basename
 *	DSO but no symbol	"libfoo.so+0x1234": 0x1234 is the address in the
 *				file's own address space (what addr2line -e takes)
 *				when the ELF is available, else the file offset
 *	no mapping		"[unknown]"
 *	JIT (perf map)		the perf-map name, module "[jit]"
 *
 * Inlined functions (report/symbols/srcline.h): where the DSO has DWARF, one
 * pc becomes the symbol's frame followed by a frame per function inlined at
 * that pc, outermost first, named "bar (inlined)" (frame->inlined set, addr
 * 0); each frame also gets the pc's file:line at that level, returned as an
 * interned location array (c->locs, profile.h). no_inline / no_srcline
 * turn either off.
 *
 * Python (PY_STACK): each _PyEval_EvalFrameDefault frame of the unwound
 * stack becomes the Python frames of that activation, innermost first
 * (a group ends at a frame flagged XPU_PY_FRAME_ENTRY); Python frames left
 * when the native stack has no more eval frames (its unwind stopped short)
 * go at the root end.
 *
 * Cache: per process, (lookup pc) -> its frames and locations, valid while
 * the set of mappings valid for that process does not change.
 */
#ifndef XPU_REPORT_CALLCHAIN_H
#define XPU_REPORT_CALLCHAIN_H

#include <stddef.h>
#include <stdint.h>
#include "format/reader.h"
#include "report/machine/machine.h"
#include "report/profile/profile.h"
#include "report/unwind/pyframes.h"
#include "report/unwind/unwind_ahead.h"

struct callchain_stats {
	uint64_t stacks;
	uint64_t frames;
	uint64_t frames_unknown;	/* no mapping or no symbol */
	uint64_t kernel_pcs;		/* distinct kernel pcs looked up */
	uint64_t kernel_unknown;	/* of them, no KSYM covers */
	uint64_t cache_hits;
	uint64_t recorded_frames;	/* stacks unwound by the recorder (XPU_STACK_UNWOUND) */
};

struct callchain {
	struct machine *m;
	struct profile *p;
	struct callchain_stats stats;
	bool no_kernel;			/* drop kernel frames */
	bool no_inline;			/* no frames for inlined functions */
	bool no_srcline;		/* no file:line locations */
	/* An address no symbol covers is a frame of its own, "mod+0xOFFSET"
	 * (--unknown-addresses, and outputs that keep addresses); else one
	 * "[mod]" frame per module, as perf shows [unknown] per dso, so one
	 * stripped function is one box, not a tower per instruction; a run of
	 * them in a stack is one frame (their calls are unknowable). */
	bool unknown_addrs;
	struct u64map kcache;		/* kernel pc -> frame id + 1 */
	struct proc *last_proc;		/* of the last stack resolved */
	/* Python frames of the interpreter walk: a stack with a PY_STACK of
	 * its own has each _PyEval_EvalFrameDefault frame replaced by the
	 * Python frames that activation ran (pyframes.h); NULL: none. */
	struct pyframes *py;
	/* Stacks unwound ahead on other threads (unwind_ahead.h), or NULL. */
	struct unwind_ahead *ahead;
	/* Of the last callchain__resolve(): the location array of its frames
	 * (profile__add_locs(); 0: none), and the function frame holding the
	 * leaf pc (the leaf itself, or the function it is inlined into: the
	 * frame profile__add_addr() weighs for annotate). */
	uint32_t locs;
	uint32_t leaf_func;
	/* Keep each frame's address (an output asked: p->pcs.on): the last
	 * callchain__resolve()'s address array (profile__add_pcs(); 0: none). */
	bool want_pcs;
	uint32_t pcs;
};

#define CALLCHAIN_MAX 512

void callchain__init(struct callchain *c, struct machine *m, struct profile *p);
void callchain__exit(struct callchain *c);

/* Resolves a stack into frame ids, root first, into out[max]. Returns the
 * count. *leaf_vaddr (if not NULL) gets the leaf pc in its module's address
 * space (0 when unknown), for per-instruction weights. */
size_t callchain__resolve(struct callchain *c, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct xpu_stack_view *v, uint32_t *out, size_t max,
			  uint64_t *leaf_vaddr);

/* The frame for one user pc of pid at time (lookup_pc already adjusted). */
uint32_t callchain__user_frame(struct callchain *c, uint32_t pid, uint64_t time,
			       uint64_t lookup_pc);
uint32_t callchain__kernel_frame(struct callchain *c, uint64_t lookup_pc);

void callchain__proc_exit(struct proc *proc);

#endif
