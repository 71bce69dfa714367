// SPDX-License-Identifier: MIT
/* Stacks to interned frames: symbolization with per-process caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/unwind/callchain.h"
#include "report/phase/phase.h"
#include "report/symbols/srcline.h"
#include "report/unwind/unwind.h"

/* One pc's frames with their locations, outermost first. */
struct cc_level {
	uint32_t frame, loc;
};

/* The pc cache's values: one frame, "loc << 32 | frame + 1"; several (a pc
 * in inlined code), CC_LEVELS | the index in cc_proc.levels of the count,
 * followed by that many (frame, loc) pairs. */
#define CC_LEVELS (1ULL << 63)

struct cc_proc {
	uint64_t sig;
	bool sig_valid;
	struct u64map pcs;		/* lookup pc -> frames (above) */
	struct u64map leaf_vaddr;	/* leaf pc -> its address in its module */
	struct u64map vaddrs;		/* want_pcs: lookup pc -> its address in its module */
	uint32_t *levels;
	size_t nr_levels, levels_cap;
};

void callchain__init(struct callchain *c, struct machine *m, struct profile *p)
{
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->p = p;
	u64map__init(&c->kcache);
}

void callchain__exit(struct callchain *c)
{
	u64map__exit(&c->kcache);
}

void callchain__proc_exit(struct proc *proc)
{
	struct cc_proc *cp = proc->callchain;

	if (!cp)
		return;
	u64map__exit(&cp->pcs);
	u64map__exit(&cp->leaf_vaddr);
	u64map__exit(&cp->vaddrs);
	free(cp->levels);
	free(cp);
	proc->callchain = NULL;
}

uint32_t callchain__kernel_frame(struct callchain *c, uint64_t pc)
{
	uint64_t *slot = u64map__slot(&c->kcache, pc);
	struct symbol *sym;
	uint32_t id;

	if (*slot)
		return (uint32_t)*slot - 1;
	c->stats.kernel_pcs++;
	sym = symtab__find(&c->m->ksyms, pc);
	if (sym) {
		/* "name [module]" names a module symbol */
		const char *name = symtab__name(&c->m->ksyms, sym), *br = strstr(name, " [");
		char buf[512], mod[128];

		if (br && br[strlen(br) - 1] == ']') {
			snprintf(buf, sizeof(buf), "%.*s", (int)(br - name), name);
			snprintf(mod, sizeof(mod), "[%.*s]", (int)strlen(br + 2) - 1, br + 2);
			id = profile__intern_frame(c->p, FRAME_CPU_KERNEL, mod, buf, sym->addr, false);
		} else {
			id = profile__intern_frame(c->p, FRAME_CPU_KERNEL, "[kernel.kallsyms]",
						   name, sym->addr, false);
		}
	} else {
		c->stats.frames_unknown++;
		c->stats.kernel_unknown++;
		id = profile__intern_frame(c->p, FRAME_CPU_KERNEL, "[kernel.kallsyms]",
					   "[unknown]", 0, true);
	}
	*slot = id + 1;
	return id;
}

/* The frames of the functions inlined at vaddr after the symbol's frame,
 * and each level's file:line, into lv (lv[0].frame is set). Returns the
 * count of levels. */
static int callchain__expand(struct callchain *c, struct dso *dso, uint64_t vaddr,
			     struct cc_level *lv)
{
	unsigned flags = (c->no_inline ? 0 : SRCLINE_INLINE) | (c->no_srcline ? 0 : SRCLINE_LINES);
	struct srcline_chain ch;
	char buf[512];

	uint64_t t0;
	int miss;

	if (!flags)
		return 1;
	t0 = phase__begin();
	miss = srcline__lookup(dso, vaddr, flags, &ch);
	phase__end(PHASE_SRCLINE, t0);
	if (miss)
		return 1;
	for (int i = 0; i < ch.n; i++) {
		const struct srcline_level *l = &ch.lv[i];

		if (i) {
			snprintf(buf, sizeof(buf), "%s (inlined)", l->name);
			lv[i].frame = profile__intern_frame(c->p, FRAME_CPU_USER, dso->short_name,
							    buf, 0, false);
			c->p->frames[lv[i].frame].inlined = true;
		}
		lv[i].loc = l->file && l->line ? profile__intern_loc(c->p, l->file, l->line) : 0;
	}
	return ch.n;
}

/* The frames of one user pc, outermost first, into lv; returns the count. */
static int callchain__symbolize(struct callchain *c, uint32_t pid, uint64_t time, uint64_t pc,
				struct cc_level *lv)
{
	struct map *map = machine__find_map(c->m, pid, pc, time);
	struct proc *proc;
	struct symbol *sym;
	uint64_t bias, vaddr;
	char buf[512];

	lv[0].loc = 0;
	/* JIT code (perf map) lives in anonymous exec maps, or in none */
	if (!map || map->dso->path[0] != '/' || !strncmp(map->dso->path, "//", 2)) {
		proc = machine__find_proc(c->m, pid);
		sym = proc && proc->jit.nr ? symtab__find(&proc->jit, pc) : NULL;
		if (sym) {
			lv[0].frame = profile__intern_frame(c->p, FRAME_CPU_USER, "[jit]",
							    symtab__display(&proc->jit, sym),
							    sym->addr, false);
			return 1;
		}
	}
	if (!map) {
		c->stats.frames_unknown++;
		lv[0].frame = profile__intern_frame(c->p, FRAME_CPU_USER, "", "[unknown]", 0, true);
		return 1;
	}
	map->dso->frames_total++;
	if (machine__map_bias(c->m, map, &bias)) {
		vaddr = pc - bias;
		sym = dso__find_symbol(map->dso, vaddr);
		if (sym) {
			lv[0].frame = profile__intern_frame(c->p, FRAME_CPU_USER,
							    map->dso->short_name,
							    symtab__display(&map->dso->symtab, sym),
							    sym->addr, false);
			return callchain__expand(c, map->dso, vaddr, lv);
		}
	} else {
		vaddr = pc - map->start + map->pgoff;	/* file offset */
	}
	map->dso->frames_unsymbolized++;
	c->stats.frames_unknown++;
	if (!c->unknown_addrs) {
		snprintf(buf, sizeof(buf), "[%s]", map->dso->short_name);
		lv[0].frame = profile__intern_frame(c->p, FRAME_CPU_USER, map->dso->short_name,
						    buf, 0, true);
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s+%#lx", map->dso->short_name, (unsigned long)vaddr);
	lv[0].frame = profile__intern_frame(c->p, FRAME_CPU_USER, map->dso->short_name, buf,
					    vaddr, true);
	return 1;
}

static struct cc_proc *callchain__proc(struct callchain *c, struct proc *proc, uint64_t sig)
{
	struct cc_proc *cp = proc->callchain;

	if (!cp) {
		cp = proc->callchain = xzalloc(sizeof(*cp));
		u64map__init(&cp->pcs);
		u64map__init(&cp->leaf_vaddr);
		u64map__init(&cp->vaddrs);
	}
	if (!cp->sig_valid || cp->sig != sig) {
		u64map__exit(&cp->pcs);
		u64map__init(&cp->pcs);
		u64map__exit(&cp->leaf_vaddr);
		u64map__init(&cp->leaf_vaddr);
		u64map__exit(&cp->vaddrs);
		u64map__init(&cp->vaddrs);
		cp->nr_levels = 0;
		cp->sig = sig;
		cp->sig_valid = true;
	}
	return cp;
}

/* A cache miss: symbolizes pc and returns the value to cache. */
static uint64_t __attribute__((noinline)) callchain__fill(struct callchain *c, struct cc_proc *cp,
							   uint32_t pid, uint64_t time, uint64_t pc)
{
	struct cc_level lv[SRCLINE_MAX_DEPTH];
	uint64_t t0 = phase__begin();
	int k = callchain__symbolize(c, pid, time, pc, lv);
	size_t at = cp->nr_levels;

	phase__end(PHASE_SYMBOLIZE, t0);
	if (k == 1 && lv[0].loc < (1U << 31))
		return (uint64_t)lv[0].loc << 32 | (lv[0].frame + 1);
	cp->levels = xgrow(cp->levels, &cp->levels_cap, at + 1 + 2 * (size_t)k,
			   sizeof(*cp->levels));
	cp->levels[at] = (uint32_t)k;
	memcpy(cp->levels + at + 1, lv, (size_t)k * sizeof(*lv));
	cp->nr_levels += 1 + 2 * (size_t)k;
	return CC_LEVELS | at;
}

/* The cached value of pc (see CC_LEVELS). */
static inline uint64_t callchain__pc(struct callchain *c, struct cc_proc *cp, uint32_t pid,
				     uint64_t time, uint64_t pc)
{
	uint64_t *slot = u64map__slot(&cp->pcs, pc);

	if (*slot) {
		c->stats.cache_hits++;
		return *slot;
	}
	return *slot = callchain__fill(c, cp, pid, time, pc);
}

/* The several frames of a CC_LEVELS value, outermost first; *n of them. */
static inline const struct cc_level *callchain__levels(const struct cc_proc *cp, uint64_t v,
						       int *n)
{
	*n = (int)cp->levels[v & 0xffffffffu];
	return (const struct cc_level *)(cp->levels + (v & 0xffffffffu) + 1);
}

uint32_t callchain__user_frame(struct callchain *c, uint32_t pid, uint64_t time,
			       uint64_t lookup_pc)
{
	struct proc *proc = machine__proc(c->m, pid);
	struct cc_proc *cp = callchain__proc(c, proc, unwind__maps_sig(c->m, pid, time));
	uint64_t v = callchain__pc(c, cp, pid, time, lookup_pc);
	int n;

	return v & CC_LEVELS ? callchain__levels(cp, v, &n)[0].frame : (uint32_t)v - 1;
}

/* want_pcs: the address of a user pc in its module (the ELF vaddr, else
 * the file offset), 0 when no mapping holds it; cached per process. */
static uint64_t callchain__vaddr(struct callchain *c, struct cc_proc *cp, uint32_t pid,
				 uint64_t time, uint64_t pc)
{
	uint64_t *slot = u64map__slot(&cp->vaddrs, pc);
	struct map *map;
	uint64_t bias;

	if (*slot)
		return *slot - 1;
	map = machine__find_map(c->m, pid, pc, time);
	if (!map)
		bias = pc;
	else if (!machine__map_bias(c->m, map, &bias))
		bias = map->start - map->pgoff;
	*slot = pc - bias + 1;
	return pc - bias;
}

/* machine__proc() for the pid of the last sample, without a lookup. */
static struct proc *callchain__find_proc(struct callchain *c, uint32_t pid)
{
	if (!c->last_proc || c->last_proc->pid != pid)
		c->last_proc = machine__proc(c->m, pid);
	return c->last_proc;
}

/* One stack as callchain__resolve() builds it: its frames innermost first
 * (reversed into out at the end), their locations and (want_pcs) their
 * addresses, and what the steps share of the sample. Its fields are set
 * one by one, not zeroed as a whole: the arrays are 8 KB a stack. */
struct cc_stack {
	uint32_t pid, tid;
	uint64_t time;
	size_t n, max;
	bool any_loc;			/* a frame has a location */
	bool leaf_set;			/* c->leaf_func set from the leaf pc */
	bool unwound;			/* the user frames were unwound, here or by the
					 * recorder, not walked by frame pointers */
	uint64_t leaf_pc;		/* the leaf's lookup pc (0: no user frame) */
	struct cc_proc *cp;		/* the process's pc cache (with a user frame) */
	const struct xpu_py_frame *pf;	/* the PY_STACK's frames not yet pushed: */
	uint16_t npf, pi;		/* pf[pi..npf) */
	uint32_t leaf_first[CALLCHAIN_MAX];
	uint32_t locs[CALLCHAIN_MAX];
	uint64_t addrs[CALLCHAIN_MAX];
};

/* Pushes the Python frames of one eval activation from pf[pi] on,
 * innermost first; returns false when none is left. */
static bool callchain__py_group(struct callchain *c, struct cc_stack *st)
{
	if (st->pi >= st->npf)
		return false;
	while (st->pi < st->npf && st->n < st->max) {
		const struct xpu_py_frame *f = &st->pf[st->pi++];
		uint32_t loc;

		st->leaf_first[st->n] = pyframes__frame(c->py, c->p, st->pid, f, &loc);
		st->locs[st->n] = loc;
		st->any_loc |= loc != 0;
		st->n++;
		if (f->flags & XPU_PY_FRAME_ENTRY)
			break;
	}
	return true;
}

static bool pc__is_marker(uint64_t pc)
{
	return pc >= (uint64_t)-4095;	/* perf's PERF_CONTEXT_* markers */
}

/* The kernel's frames, leaf first: its pc as it is, the callers' at pc - 1. */
static void callchain__kernel_frames(struct callchain *c, struct cc_stack *st,
				     const struct xpu_stack_view *v)
{
	for (size_t i = 0; i < v->hdr->nr_kernel_ips && st->n < st->max; i++) {
		uint64_t pc = v->kernel_ips[i];

		if (pc__is_marker(pc) || !pc)
			continue;
		st->leaf_first[st->n] = callchain__kernel_frame(c, st->n == 0 ? pc : pc - 1);
		if (c->want_pcs)
			st->addrs[st->n] = st->n == 0 ? pc : pc - 1;
		st->locs[st->n++] = 0;
	}
}

/* The user pcs the recorder took (frame pointers, or its own unwind) into
 * uf; returns their count. */
static int callchain__recorded_ips(const struct xpu_stack_view *v, struct unwind_frame *uf)
{
	int nu = 0;

	for (size_t i = 0; i < v->hdr->nr_user_ips && nu < CALLCHAIN_MAX; i++) {
		if (pc__is_marker(v->user_ips[i]) || !v->user_ips[i])
			continue;
		uf[nu] = (struct unwind_frame){ v->user_ips[i], nu == 0 };
		nu++;
	}
	return nu;
}

/* No user pc recorded: the stack unwound ahead on another thread, else here
 * from the registers and the stack copy, into uf; returns the count. */
static int callchain__unwind(struct callchain *c, const struct cc_stack *st,
			     const struct xpu_stack_view *v, struct proc *proc, uint64_t sig,
			     struct unwind_frame *uf)
{
	uint64_t t0 = phase__begin();
	int ahead = c->ahead ? unwind_ahead__get(c->ahead, v->regs, st->pid, st->time, uf,
						 CALLCHAIN_MAX) : -1;
	int nu;

	if (ahead > 0)
		unwind__count(proc, nu = ahead);
	else
		nu = unwind__stack(c->m, proc, st->tid, st->time, sig, v, uf, CALLCHAIN_MAX);
	phase__end(PHASE_UNWIND, t0);
	return nu;
}

/* The one frame of uf[i]'s pc (val: its cached value; va: its address),
 * or the Python frames of its activation when it is an eval frame. Returns
 * false when the stack ends above it. */
static inline bool callchain__push_one(struct callchain *c, struct cc_stack *st, int i,
				       uint64_t val, uint64_t va)
{
	uint32_t f = (uint32_t)val - 1;

	/* An unwound caller in no executable mapping of the process is a
	 * data word the unwinder took for a return address (a frame without
	 * CFI, as in the vDSO): the stack ends above it. JIT code has its
	 * anonymous mapping, so it is not this. */
	if (i > 0 && st->unwound && c->p->frames[f].unknown && !c->p->frames[f].module[0])
		return false;

	/* a run of unsymbolized frames of one module is one [module] frame:
	 * their calls are unknowable */
	if (st->n && st->leaf_first[st->n - 1] == f && !c->unknown_addrs &&
	    c->p->frames[f].unknown && c->p->frames[f].module[0])
		return true;
	if (i == 0 && st->n == 0) {
		c->leaf_func = f;
		st->leaf_set = true;
	}
	if (st->pi < st->npf && pyframes__is_eval(c->p->frames[f].name) &&
	    callchain__py_group(c, st))
		return true;
	st->leaf_first[st->n] = f;
	if (c->want_pcs)
		st->addrs[st->n] = va;
	st->locs[st->n++] = (uint32_t)(val >> 32);
	st->any_loc |= val >> 32 != 0;
	return true;
}

/* The several frames of uf[i]'s pc (a pc in inlined code; val: its cached
 * value), innermost first; the function's own frame, outermost, replaced by
 * the Python frames of its activation when it is an eval frame. */
static inline void callchain__push_levels(struct callchain *c, struct cc_stack *st, int i,
					  uint64_t val, uint64_t va)
{
	int k;
	const struct cc_level *lv = callchain__levels(st->cp, val, &k);

	if (i == 0 && st->n == 0) {
		c->leaf_func = lv[0].frame;
		st->leaf_set = true;
	}
	while (k-- > 0 && st->n < st->max) {	/* innermost first */
		if (!k && st->pi < st->npf && pyframes__is_eval(c->p->frames[lv[0].frame].name) &&
		    callchain__py_group(c, st))
			break;
		st->leaf_first[st->n] = lv[k].frame;
		if (c->want_pcs)
			st->addrs[st->n] = va;
		st->locs[st->n++] = lv[k].loc;
		st->any_loc |= lv[k].loc != 0;
	}
}

/* The user frames: the nu the recorder took in uf, else those unwound
 * here; each pc looked up in the process's cache (callers at pc - 1). */
static void callchain__user_frames(struct callchain *c, struct cc_stack *st,
				   const struct xpu_stack_view *v, struct unwind_frame *uf, int nu)
{
	struct proc *proc = callchain__find_proc(c, st->pid);
	uint64_t sig = unwind__maps_sig(c->m, st->pid, st->time);
	/* frames unwound here, or by the recorder (format 1.6) */
	bool recorded = nu && (v->hdr->flags & XPU_STACK_UNWOUND);

	st->unwound = !nu || recorded;
	c->stats.recorded_frames += recorded;
	if (!nu)
		nu = callchain__unwind(c, st, v, proc, sig, uf);
	st->cp = callchain__proc(c, proc, sig);
	for (int i = 0; i < nu && st->n < st->max; i++) {
		uint64_t pc = uf[i].activation ? uf[i].pc : uf[i].pc - 1;
		uint64_t val = callchain__pc(c, st->cp, st->pid, st->time, pc);
		uint64_t va = c->want_pcs ? callchain__vaddr(c, st->cp, st->pid, st->time, pc) : 0;

		if (i == 0)
			st->leaf_pc = pc;
		if (!(val & CC_LEVELS)) {	/* one frame: the common case */
			if (!callchain__push_one(c, st, i, val, va))
				break;
			continue;
		}
		callchain__push_levels(c, st, i, val, va);
	}
}

/* The leaf pc in its module's address space, 0 when unknown or under
 * kernel frames. */
static uint64_t callchain__leaf_vaddr(struct callchain *c, const struct cc_stack *st,
				      const struct xpu_stack_view *v)
{
	uint64_t *slot, bias, vaddr = 0;
	struct map *map;

	if (v->hdr->nr_kernel_ips || !st->leaf_pc)
		return 0;
	/* the same mappings give the same map: cached with the frames */
	slot = u64map__find(&st->cp->leaf_vaddr, st->leaf_pc);
	if (slot)
		return *slot;
	map = machine__find_map(c->m, st->pid, st->leaf_pc, st->time);
	if (map && machine__map_bias(c->m, map, &bias))
		vaddr = st->leaf_pc - bias;
	*u64map__slot(&st->cp->leaf_vaddr, st->leaf_pc) = vaddr;
	return vaddr;
}

/* The frames root first into out; their locations and addresses interned
 * as arrays (c->locs, c->pcs). */
static void callchain__emit(struct callchain *c, const struct cc_stack *st, uint32_t *out)
{
	size_t n = st->n;

	for (size_t i = 0; i < n; i++)
		out[i] = st->leaf_first[n - 1 - i];
	if (st->any_loc) {
		uint32_t pairs[2 * CALLCHAIN_MAX];	/* (frame, location), root first */

		for (size_t i = 0; i < n; i++) {
			pairs[2 * i] = out[i];
			pairs[2 * i + 1] = st->locs[n - 1 - i];
		}
		c->locs = profile__intern_locs(c->p, pairs, n);
	}
	if (c->want_pcs && n) {
		uint64_t pairs[2 * CALLCHAIN_MAX];	/* (frame, address), root first */

		for (size_t i = 0; i < n; i++) {
			pairs[2 * i] = out[i];
			pairs[2 * i + 1] = st->addrs[n - 1 - i];
		}
		c->pcs = profile__intern_pcs(c->p, pairs, n);
	}
}

size_t callchain__resolve(struct callchain *c, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct xpu_stack_view *v, uint32_t *out, size_t max,
			  uint64_t *leaf_vaddr)
{
	struct unwind_frame uf[CALLCHAIN_MAX];
	struct cc_stack st;
	int nu;

	st.pid = pid;
	st.tid = tid;
	st.time = time;
	st.n = 0;
	st.max = max > CALLCHAIN_MAX ? CALLCHAIN_MAX : max;
	st.any_loc = st.leaf_set = st.unwound = false;
	st.leaf_pc = 0;
	st.cp = NULL;
	st.pf = NULL;
	st.npf = st.pi = 0;
	c->stats.stacks++;
	c->locs = 0;
	c->pcs = 0;
	c->leaf_func = 0;
	if (c->want_pcs)
		memset(st.addrs, 0, st.max * sizeof(*st.addrs));
	if (c->py)
		st.pf = pyframes__take(c->py, tid, time, &st.npf);
	if (!c->no_kernel)
		callchain__kernel_frames(c, &st, v);
	nu = callchain__recorded_ips(v, uf);
	if (nu || v->hdr->nr_regs)
		callchain__user_frames(c, &st, v, uf, nu);
	/* the native unwind stopped before the outer activations: their
	 * Python frames are still the thread's callers */
	while (callchain__py_group(c, &st) && st.n < st.max)
		;
	c->stats.frames += st.n;
	if (st.n && !st.leaf_set)
		c->leaf_func = st.leaf_first[0];
	if (leaf_vaddr)
		*leaf_vaddr = callchain__leaf_vaddr(c, &st, v);
	callchain__emit(c, &st, out);
	return st.n;
}
