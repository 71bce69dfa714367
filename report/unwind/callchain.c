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

/* Pushes the Python frames of one eval activation from pf[*pi] on,
 * innermost first, into leaf_first/locs at *n; returns false when none. */
static bool callchain__py_group(struct callchain *c, uint32_t pid, const struct xpu_py_frame *pf,
				uint16_t npf, uint16_t *pi, uint32_t *leaf_first, uint32_t *locs,
				size_t *n, size_t max, bool *any_loc)
{
	if (*pi >= npf)
		return false;
	while (*pi < npf && *n < max) {
		const struct xpu_py_frame *f = &pf[(*pi)++];

		leaf_first[*n] = pyframes__frame(c->py, c->p, pid, f, &locs[*n]);
		*any_loc |= locs[*n] != 0;
		(*n)++;
		if (f->flags & XPU_PY_FRAME_ENTRY)
			break;
	}
	return true;
}

static bool pc__is_marker(uint64_t pc)
{
	return pc >= (uint64_t)-4095;	/* perf's PERF_CONTEXT_* markers */
}

size_t callchain__resolve(struct callchain *c, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct xpu_stack_view *v, uint32_t *out, size_t max,
			  uint64_t *leaf_vaddr)
{
	uint32_t leaf_first[CALLCHAIN_MAX];	/* innermost first, reversed at the end */
	uint32_t locs[CALLCHAIN_MAX];		/* the same for their locations */
	uint64_t addrs[CALLCHAIN_MAX];		/* and addresses (want_pcs) */
	struct unwind_frame uf[CALLCHAIN_MAX];
	uint64_t leaf_pc = 0;
	struct cc_proc *cp = NULL;
	size_t n = 0;
	int nu = 0;
	bool any_loc = false, leaf_set = false, unwound = false;
	const struct xpu_py_frame *pf = NULL;
	uint16_t npf = 0, pi = 0;

	if (max > CALLCHAIN_MAX)
		max = CALLCHAIN_MAX;
	c->stats.stacks++;
	c->locs = 0;
	c->pcs = 0;
	c->leaf_func = 0;
	if (c->want_pcs)
		memset(addrs, 0, max * sizeof(*addrs));
	if (c->py)
		pf = pyframes__take(c->py, tid, time, &npf);
	if (!c->no_kernel) {
		for (size_t i = 0; i < v->hdr->nr_kernel_ips && n < max; i++) {
			uint64_t pc = v->kernel_ips[i];

			if (pc__is_marker(pc) || !pc)
				continue;
			leaf_first[n] = callchain__kernel_frame(c, n == 0 ? pc : pc - 1);
			if (c->want_pcs)
				addrs[n] = n == 0 ? pc : pc - 1;
			locs[n++] = 0;
		}
	}

	if (v->hdr->nr_user_ips) {
		for (size_t i = 0; i < v->hdr->nr_user_ips && nu < CALLCHAIN_MAX; i++) {
			if (pc__is_marker(v->user_ips[i]) || !v->user_ips[i])
				continue;
			uf[nu] = (struct unwind_frame){ v->user_ips[i], nu == 0 };
			nu++;
		}
	}

	if (nu || v->hdr->nr_regs) {
		struct proc *proc = callchain__find_proc(c, pid);
		uint64_t sig = unwind__maps_sig(c->m, pid, time);

		/* frames unwound here, or by the recorder (format 1.6) */
		bool recorded = nu && (v->hdr->flags & XPU_STACK_UNWOUND);

		unwound = !nu || recorded;
		c->stats.recorded_frames += recorded;
		if (!nu) {
			uint64_t t0 = phase__begin();
			int ahead = c->ahead ? unwind_ahead__get(c->ahead, v->regs, pid, time, uf,
								 CALLCHAIN_MAX) : -1;

			if (ahead > 0)
				unwind__count(proc, nu = ahead);
			else
				nu = unwind__stack(c->m, proc, tid, time, sig, v, uf, CALLCHAIN_MAX);
			phase__end(PHASE_UNWIND, t0);
		}
		cp = callchain__proc(c, proc, sig);
		for (int i = 0; i < nu && n < max; i++) {
			uint64_t pc = uf[i].activation ? uf[i].pc : uf[i].pc - 1;
			uint64_t v = callchain__pc(c, cp, pid, time, pc);
			uint64_t va = c->want_pcs ? callchain__vaddr(c, cp, pid, time, pc) : 0;
			const struct cc_level *lv;
			int k;

			if (i == 0)
				leaf_pc = pc;
			if (!(v & CC_LEVELS)) {		/* one frame: the common case */
				uint32_t f = (uint32_t)v - 1;

				/* An unwound caller in no executable mapping of the
				 * process is a data word the unwinder took for a
				 * return address (a frame without CFI, as in the
				 * vDSO): the stack ends above it. JIT code has its
				 * anonymous mapping, so it is not this. */
				if (i > 0 && unwound && c->p->frames[f].unknown &&
				    !c->p->frames[f].module[0])
					break;

				/* a run of unsymbolized frames of one module is
				 * one [module] frame: their calls are unknowable */
				if (n && leaf_first[n - 1] == f && !c->unknown_addrs &&
				    c->p->frames[f].unknown && c->p->frames[f].module[0])
					continue;
				if (i == 0 && n == 0) {
					c->leaf_func = (uint32_t)v - 1;
					leaf_set = true;
				}
				if (pi < npf && pyframes__is_eval(c->p->frames[(uint32_t)v - 1].name) &&
				    callchain__py_group(c, pid, pf, npf, &pi, leaf_first, locs, &n, max,
							&any_loc))
					continue;
				leaf_first[n] = (uint32_t)v - 1;
				if (c->want_pcs)
					addrs[n] = va;
				locs[n++] = (uint32_t)(v >> 32);
				any_loc |= v >> 32 != 0;
				continue;
			}
			lv = callchain__levels(cp, v, &k);
			if (i == 0 && n == 0) {
				c->leaf_func = lv[0].frame;
				leaf_set = true;
			}
			while (k-- > 0 && n < max) {	/* innermost first */
				if (!k && pi < npf && pyframes__is_eval(c->p->frames[lv[0].frame].name) &&
				    callchain__py_group(c, pid, pf, npf, &pi, leaf_first, locs, &n, max,
							&any_loc))
					break;
				leaf_first[n] = lv[k].frame;
				if (c->want_pcs)
					addrs[n] = va;
				locs[n++] = lv[k].loc;
				any_loc |= lv[k].loc != 0;
			}
		}
	}
	/* the native unwind stopped before the outer activations: their
	 * Python frames are still the thread's callers */
	while (callchain__py_group(c, pid, pf, npf, &pi, leaf_first, locs, &n, max, &any_loc) &&
	       n < max)
		;
	c->stats.frames += n;
	if (n && !leaf_set)
		c->leaf_func = leaf_first[0];

	if (leaf_vaddr) {
		*leaf_vaddr = 0;
		if (v->hdr->nr_kernel_ips == 0 && leaf_pc) {
			/* the same mappings give the same map: cached with the frames */
			uint64_t *slot = u64map__find(&cp->leaf_vaddr, leaf_pc);

			if (slot) {
				*leaf_vaddr = *slot;
			} else {
				struct map *map = machine__find_map(c->m, pid, leaf_pc, time);
				uint64_t bias;

				if (map && machine__map_bias(c->m, map, &bias))
					*leaf_vaddr = leaf_pc - bias;
				*u64map__slot(&cp->leaf_vaddr, leaf_pc) = *leaf_vaddr;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		out[i] = leaf_first[n - 1 - i];
	if (any_loc) {
		uint32_t pairs[2 * CALLCHAIN_MAX];	/* (frame, location), root first */

		for (size_t i = 0; i < n; i++) {
			pairs[2 * i] = out[i];
			pairs[2 * i + 1] = locs[n - 1 - i];
		}
		c->locs = profile__intern_locs(c->p, pairs, n);
	}
	if (c->want_pcs && n) {
		uint64_t pairs[2 * CALLCHAIN_MAX];	/* (frame, address), root first */

		for (size_t i = 0; i < n; i++) {
			pairs[2 * i] = out[i];
			pairs[2 * i + 1] = addrs[n - 1 - i];
		}
		c->pcs = profile__intern_pcs(c->p, pairs, n);
	}
	return n;
}
