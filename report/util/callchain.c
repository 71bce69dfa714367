// SPDX-License-Identifier: MIT
/* Stacks to interned frames: symbolization with per-process caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/util/callchain.h"
#include "report/util/unwind.h"

struct cc_proc {
	uint64_t sig;
	bool sig_valid;
	struct u64map pcs;		/* lookup pc -> frame id + 1 */
	struct u64map leaf_vaddr;	/* leaf pc -> its address in its module */
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
	sym = symtab__find(&c->m->ksyms, pc);
	if (sym) {
		/* "name [module]" names a module symbol */
		const char *name = sym->name, *br = strstr(name, " [");
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
		id = profile__intern_frame(c->p, FRAME_CPU_KERNEL, "[kernel.kallsyms]",
					   "[unknown]", 0, true);
	}
	*slot = id + 1;
	return id;
}

static uint32_t callchain__symbolize(struct callchain *c, uint32_t pid, uint64_t time,
				     uint64_t pc)
{
	struct map *map = machine__find_map(c->m, pid, pc, time);
	struct proc *proc;
	struct symbol *sym;
	uint64_t bias, vaddr;
	char buf[512];

	/* JIT code (perf map) lives in anonymous exec maps, or in none */
	if (!map || map->dso->path[0] != '/' || !strncmp(map->dso->path, "//", 2)) {
		proc = machine__find_proc(c->m, pid);
		sym = proc && proc->jit.nr ? symtab__find(&proc->jit, pc) : NULL;
		if (sym)
			return profile__intern_frame(c->p, FRAME_CPU_USER, "[jit]",
						     symbol__display(sym), sym->addr, false);
	}
	if (!map) {
		c->stats.frames_unknown++;
		return profile__intern_frame(c->p, FRAME_CPU_USER, "", "[unknown]", 0, true);
	}
	map->dso->frames_total++;
	if (machine__map_bias(c->m, map, &bias)) {
		vaddr = pc - bias;
		sym = dso__find_symbol(map->dso, vaddr);
		if (sym)
			return profile__intern_frame(c->p, FRAME_CPU_USER, map->dso->short_name,
						     symbol__display(sym), sym->addr, false);
	} else {
		vaddr = pc - map->start + map->pgoff;	/* file offset */
	}
	map->dso->frames_unsymbolized++;
	c->stats.frames_unknown++;
	snprintf(buf, sizeof(buf), "%s+%#lx", map->dso->short_name, (unsigned long)vaddr);
	return profile__intern_frame(c->p, FRAME_CPU_USER, map->dso->short_name, buf, vaddr, true);
}

static struct cc_proc *callchain__proc(struct callchain *c, struct proc *proc, uint64_t sig)
{
	struct cc_proc *cp = proc->callchain;

	if (!cp) {
		cp = proc->callchain = xzalloc(sizeof(*cp));
		u64map__init(&cp->pcs);
		u64map__init(&cp->leaf_vaddr);
	}
	if (!cp->sig_valid || cp->sig != sig) {
		u64map__exit(&cp->pcs);
		u64map__init(&cp->pcs);
		u64map__exit(&cp->leaf_vaddr);
		u64map__init(&cp->leaf_vaddr);
		cp->sig = sig;
		cp->sig_valid = true;
	}
	return cp;
}

static uint32_t callchain__cached_user_frame(struct callchain *c, struct cc_proc *cp,
					     uint32_t pid, uint64_t time, uint64_t pc)
{
	uint64_t *slot = u64map__slot(&cp->pcs, pc);

	if (*slot) {
		c->stats.cache_hits++;
		return (uint32_t)*slot - 1;
	}
	*slot = (uint64_t)callchain__symbolize(c, pid, time, pc) + 1;
	return (uint32_t)*slot - 1;
}

uint32_t callchain__user_frame(struct callchain *c, uint32_t pid, uint64_t time,
			       uint64_t lookup_pc)
{
	struct proc *proc = machine__proc(c->m, pid);
	struct cc_proc *cp = callchain__proc(c, proc, unwind__maps_sig(c->m, pid, time));

	return callchain__cached_user_frame(c, cp, pid, time, lookup_pc);
}

/* machine__proc() for the pid of the last sample, without a lookup. */
static struct proc *callchain__find_proc(struct callchain *c, uint32_t pid)
{
	if (!c->last_proc || c->last_proc->pid != pid)
		c->last_proc = machine__proc(c->m, pid);
	return c->last_proc;
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
	struct unwind_frame uf[CALLCHAIN_MAX];
	uint64_t leaf_pc = 0;
	struct cc_proc *cp = NULL;
	size_t n = 0;
	int nu = 0;

	if (max > CALLCHAIN_MAX)
		max = CALLCHAIN_MAX;
	c->stats.stacks++;
	if (!c->no_kernel) {
		for (size_t i = 0; i < v->hdr->nr_kernel_ips && n < max; i++) {
			uint64_t pc = v->kernel_ips[i];

			if (pc__is_marker(pc) || !pc)
				continue;
			leaf_first[n] = callchain__kernel_frame(c, n == 0 ? pc : pc - 1);
			n++;
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

		if (!nu)
			nu = unwind__stack(c->m, proc, tid, time, sig, v, uf, CALLCHAIN_MAX);
		cp = callchain__proc(c, proc, sig);
		for (int i = 0; i < nu && n < max; i++) {
			uint64_t pc = uf[i].activation ? uf[i].pc : uf[i].pc - 1;

			if (i == 0)
				leaf_pc = pc;
			leaf_first[n++] = callchain__cached_user_frame(c, cp, pid, time, pc);
		}
	}
	c->stats.frames += n;

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
	return n;
}
