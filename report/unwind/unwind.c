// SPDX-License-Identifier: MIT
/* Unwinding over copied stacks: the fast path over each file's CFI rules,
 * libdwfl (one Dwfl per process, built when first needed) where it gives up. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>
#include "common/knobs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/unwind/unwind.h"
#include "common/unwind_cfi.h"

struct unwind_proc {
	Dwfl *dwfl;			/* libdwfl's unwinder: built on first need */
	uint64_t sig;
	bool built;			/* dwfl was built for sig */
	bool attached;
	struct unwind_cfi_pcs pcs;	/* the fast path's pcs, for pcs_sig */
	uint64_t pcs_sig;
	bool pcs_ok;
	/* the last maps signature and the times it holds for */
	bool span_ok;
	uint64_t span_lo, span_hi, span_sig;
	size_t span_maps, span_execs;
	/* the sample being unwound: read by the callbacks */
	struct machine *m;
	struct proc *proc;
	uint32_t tid;
	uint64_t time;
	const struct xpu_stack_view *v;
	uint64_t sp;
	/* (dso, bias) pairs already reported to this Dwfl */
	struct bmap reported;
	struct unwind_stats stats;	/* this process's; unwind__stats() sums them */
};

/* XPU_UNWIND_CHECK=1: unwind every sample both ways, die on a difference. */
static int unwind__check = -1;

/* No separate debuginfo lookup: unwinding needs only .eh_frame/.debug_frame
 * of the main file. Issue 5's debuginfo finders hook in here. */
static int unwind__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name)
{
	return -1;
}

static char *unwind__debuginfo_path;
static const Dwfl_Callbacks unwind__offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = unwind__find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &unwind__debuginfo_path,
};

static pid_t unwind__next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_proc *up = arg;

	if (*thread_argp)	/* one thread per call: the sample's */
		return 0;
	*thread_argp = up;
	return (pid_t)up->tid;
}

static bool unwind__get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwind_proc *up = arg;

	*thread_argp = up;
	return true;
}

/* A word outside the stack copy: only file-backed module contents are
 * knowable. */
static bool unwind__read_file(struct machine *m, uint32_t pid, uint64_t addr, uint64_t time,
			      uint64_t *result)
{
	struct map *map = machine__find_map(m, pid, addr, time);

	return map && map->end - addr >= 8 && dso__load(map->dso, &m->dsos) == 0 &&
	       dso__read(map->dso, addr - map->start + map->pgoff, result, 8) == 0;
}

static bool unwind__read(uint64_t addr, uint64_t *result, void *arg)
{
	struct unwind_proc *up = arg;
	const struct xpu_stack_view *v = up->v;
	uint64_t size = v->hdr->stack_size;

	if (addr >= up->sp && size >= 8 && addr - up->sp <= size - 8) {	/* no wrap */
		memcpy(result, v->stack + (addr - up->sp), 8);
		return true;
	}
	return unwind__read_file(up->m, up->proc->pid, addr, up->time, result);
}

static bool unwind__memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	return unwind__read(addr, result, arg);
}

static bool unwind__set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwind_proc *up = arg;
	const struct xpu_stack_view *v = up->v;
	Dwarf_Word regs[XPU_X86_NR_REGS];

	for (int i = 0; i < XPU_X86_NR_REGS; i++)
		regs[i] = v->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, XPU_X86_NR_REGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[XPU_X86_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks unwind__thread_callbacks = {
	.next_thread = unwind__next_thread,
	.get_thread = unwind__get_thread,
	.memory_read = unwind__memory_read,
	.set_initial_registers = unwind__set_initial_registers,
};

struct sig_arg { uint64_t h; };

static int unwind__sig_cb(struct map *map, void *arg)
{
	struct sig_arg *a = arg;

	a->h = xpu_hash_u64(a->h ^ (map->seq + 1));
	return 0;
}

/* The files' rules: machine->unwind, dso -> struct unwind_cfi *. */
struct unwind_files {
	struct u64map of_dso;
	uint64_t opened;		/* files whose CFI was looked for (-v) */
};

/*
 * The rules of a loaded DSO, made on first use: a Dwfl holding its file
 * alone at load address 0 (reported from a copy of the checked descriptor,
 * as unwind__report_cb() does). A file libdwfl refuses gets rules that all
 * fall back, as a process Dwfl would have no module there.
 */
static struct unwind_cfi *unwind__file(struct machine *m, struct dso *dso)
{
	struct unwind_files *f = m->unwind;
	struct unwind_cfi *c;
	Dwfl_Module *mod = NULL;
	Dwfl *dwfl;
	uint64_t *slot;
	int fd = -1;

	if (!f) {
		f = m->unwind = xzalloc(sizeof(*f));
		u64map__init(&f->of_dso);
	}
	slot = u64map__find(&f->of_dso, (uint64_t)(uintptr_t)dso);
	if (slot)
		return (struct unwind_cfi *)(uintptr_t)*slot;
	c = xmalloc(sizeof(*c));
	dwfl = dwfl_begin(&unwind__offline_callbacks);
	if (dwfl) {
		dwfl_report_begin(dwfl);
		fd = fcntl(dso->fd, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0 && !(mod = dwfl_report_elf(dwfl, dso->short_name, dso->file, fd, 0,
						       true)))
			close(fd);	/* libdwfl keeps it only on success */
		if (dwfl_report_end(dwfl, NULL, NULL) || !mod) {
			debug(2, "unwind: %s: no CFI: %s", dso->file, dwfl_errmsg(-1));
			dwfl_end(dwfl);
			dwfl = NULL;
		}
		f->opened++;
	}
	unwind_cfi__init(c, dwfl, mod, dwfl ? fd : -1);
	*u64map__slot(&f->of_dso, (uint64_t)(uintptr_t)dso) = (uint64_t)(uintptr_t)c;
	return c;
}

/* The fast path's unwind_cfi_module_fn: the mapping valid at the sample's
 * time that holds pc (newest first, as the process Dwfl reports them). */
static struct unwind_cfi *unwind__module(uint64_t pc, uint64_t *bias, void *arg)
{
	struct unwind_proc *up = arg;
	struct map *map = machine__find_valid_map(up->m, up->proc->pid, pc, up->time);

	if (!map || !machine__map_bias(up->m, map, bias))
		return NULL;
	return unwind__file(up->m, map->dso);
}

void unwind__machine_exit(struct machine *m)
{
	struct unwind_files *f = m->unwind;
	uint64_t k, v;

	if (!f)
		return;
	for (size_t i = 0; u64map__next(&f->of_dso, &i, &k, &v); ) {
		unwind_cfi__exit((struct unwind_cfi *)(uintptr_t)v);
		free((void *)(uintptr_t)v);
	}
	u64map__exit(&f->of_dso);
	free(f);
	m->unwind = NULL;
}

static struct unwind_proc *unwind__proc(struct proc *proc)
{
	struct unwind_proc *up = proc->unwind;

	if (!up) {
		up = proc->unwind = xzalloc(sizeof(*up));
		bmap__init(&up->reported);
		unwind_cfi_pcs__init(&up->pcs, unwind__module, up);
	}
	return up;
}

/* Samples come in time order, so the last signature usually holds: it
 * stays the same between two changes of the valid mapping set. */
uint64_t unwind__maps_sig(struct machine *m, uint32_t pid, uint64_t time)
{
	struct sig_arg a = { 0x9e3779b97f4a7c15ULL };
	struct proc *proc = machine__find_proc(m, pid);
	struct unwind_proc *up;

	if (!proc)
		return a.h;
	up = unwind__proc(proc);
	if (up->span_ok && time >= up->span_lo && time <= up->span_hi &&
	    up->span_maps == proc->nr_maps && up->span_execs == proc->nr_execs)
		return up->span_sig;
	machine__for_each_map(m, pid, time, unwind__sig_cb, &a);
	machine__maps_span(m, pid, time, &up->span_lo, &up->span_hi);
	up->span_sig = a.h;
	up->span_maps = proc->nr_maps;
	up->span_execs = proc->nr_execs;
	up->span_ok = true;
	return a.h;
}

struct report_arg { struct unwind_proc *up; int nr, failed; };

static int unwind__report_cb(struct map *map, void *arg)
{
	struct report_arg *ra = arg;
	struct unwind_proc *up = ra->up;
	struct { struct dso *dso; uint64_t bias; } key;
	uint64_t bias;
	bool found;
	void **slot;
	int fd;

	if (!machine__map_bias(up->m, map, &bias))
		return 0;
	key.dso = map->dso;
	key.bias = bias;
	slot = bmap__slot(&up->reported, &key, sizeof(key), &found);
	if (found)
		return 0;
	*slot = map;
	/* newest mappings come first; an older overlapping one fails here. libdwfl
	 * gets (and closes) a copy of the checked descriptor: it never opens the
	 * file by name (report/files/path.h) */
	fd = fcntl(map->dso->fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && dwfl_report_elf(up->dwfl, map->dso->short_name, map->dso->file, fd, bias,
				       true)) {
		ra->nr++;
		return 0;
	}
	if (fd >= 0)
		close(fd);	/* libdwfl keeps it only on success */
	ra->failed++;
	debug(2, "unwind: pid %u: cannot report %s at %#lx: %s", up->proc->pid,
	      map->dso->file, (unsigned long)bias, dwfl_errmsg(-1));
	return 0;
}

/*
 * The machine libdwfl unwinds for: that of the samples' registers (x86-64,
 * checked in unwind__stack()), given as a bare ELF header. Left to itself,
 * dwfl_attach_state() takes the machine of the first module reported, and
 * one mapped file of another machine (or a damaged e_machine) made it
 * refuse every sample's registers.
 */
static Elf *unwind__x86_64_elf(void)
{
	static union { Elf64_Ehdr eh; char bytes[sizeof(Elf64_Ehdr)]; } hdr;
	static Elf *elf;

	if (!elf) {
		memcpy(hdr.eh.e_ident, ELFMAG, SELFMAG);
		hdr.eh.e_ident[EI_CLASS] = ELFCLASS64;
		hdr.eh.e_ident[EI_DATA] = ELFDATA2LSB;
		hdr.eh.e_ident[EI_VERSION] = EV_CURRENT;
		hdr.eh.e_type = ET_EXEC;
		hdr.eh.e_machine = EM_X86_64;
		hdr.eh.e_version = EV_CURRENT;
		hdr.eh.e_ehsize = sizeof(hdr.eh);
		elf_version(EV_CURRENT);
		elf = elf_memory(hdr.bytes, sizeof(hdr.bytes));
	}
	return elf;
}

/* The valid mappings' (dso, bias) pairs: how many are already reported,
 * how many are new. */
struct grow_arg { struct unwind_proc *up; struct bmap seen; size_t old, new; };

static int unwind__grow_cb(struct map *map, void *arg)
{
	struct grow_arg *g = arg;
	struct { struct dso *dso; uint64_t bias; } key;
	bool found;

	if (!machine__map_bias(g->up->m, map, &key.bias))
		return 0;
	key.dso = map->dso;
	bmap__slot(&g->seen, &key, sizeof(key), &found);
	if (found)
		return 0;
	if (bmap__find(&g->up->reported, &key, sizeof(key)))
		g->old++;
	else
		g->new++;
	return 0;
}

/*
 * The mapping set changed, but only by new mappings (a process loading its
 * libraries: PyTorch's hundreds made a Dwfl rebuild, every module reported
 * and its CFI read again, for each of 600 changes in a GPT-2 recording):
 * reports the new ones into the same Dwfl, whose modules keep their state.
 * False when a reported mapping is gone or a new one cannot be reported
 * (overlapping an old one): then the caller rebuilds.
 */
static bool unwind__grow(struct unwind_proc *up, uint64_t sig)
{
	struct grow_arg g = { .up = up };
	struct report_arg ra = { up, 0, 0 };
	bool ok;

	bmap__init(&g.seen);
	machine__for_each_map(up->m, up->proc->pid, up->time, unwind__grow_cb, &g);
	bmap__exit(&g.seen, NULL);
	if (g.old != up->reported.len)
		return false;
	if (g.new) {
		dwfl_report_begin_add(up->dwfl);
		machine__for_each_map(up->m, up->proc->pid, up->time, unwind__report_cb, &ra);
		ok = !dwfl_report_end(up->dwfl, NULL, NULL) && !ra.failed;
		if (!ok)
			return false;
		up->stats.dwfl_grows++;
	}
	up->sig = sig;
	return true;
}

static int unwind__rebuild(struct unwind_proc *up, uint64_t sig)
{
	struct report_arg ra = { up, 0 };

	if (up->dwfl)
		dwfl_end(up->dwfl);
	bmap__exit(&up->reported, NULL);
	bmap__init(&up->reported);
	up->attached = false;
	up->sig = sig;
	up->built = true;
	up->dwfl = dwfl_begin(&unwind__offline_callbacks);
	if (!up->dwfl)
		return -ENOMEM;
	up->stats.dwfl_rebuilds++;
	dwfl_report_begin(up->dwfl);
	machine__for_each_map(up->m, up->proc->pid, up->time, unwind__report_cb, &ra);
	if (dwfl_report_end(up->dwfl, NULL, NULL) || !ra.nr)
		return -ENOENT;
	if (!dwfl_attach_state(up->dwfl, unwind__x86_64_elf(), (pid_t)up->proc->pid,
			       &unwind__thread_callbacks, up)) {
		debug(1, "unwind: pid %u: dwfl_attach_state: %s", up->proc->pid, dwfl_errmsg(-1));
		return -EINVAL;
	}
	up->attached = true;
	return 0;
}

struct frames_arg { struct unwind_frame *frames; int nr, max; uint64_t prev_sp; };

static int unwind__frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frames_arg *fa = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (dwfl_frame_reg(state, 7, &sp))	/* rsp */
		sp = UNWIND_SP_UNKNOWN;
	if (unwind__stuck(fa->frames, fa->nr, pc, &fa->prev_sp, sp))
		return DWARF_CB_ABORT;
	fa->frames[fa->nr++] = (struct unwind_frame){ .pc = pc, .activation = activation };
	return fa->nr < fa->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static bool unwind__check_on(void)
{
	if (unwind__check < 0)
		unwind__check = knob__bool(KNOB_UNWIND_CHECK);
	return unwind__check;
}

/* Check mode: the fast path again, against libdwfl's frames[0..nr). */
static void unwind__compare(struct unwind_proc *up, const struct unwind_frame *frames,
			    int nr, int fast_nr, int max)
{
	struct unwind_frame *fast = xcalloc((size_t)max, sizeof(*fast));
	struct unwind_cfi_mem mem = { up->sp, up->v->stack, up->v->hdr->stack_size,
				      unwind__read, up };
	int n = unwind_cfi__frames(&up->pcs, up->v->regs, &mem, fast, max);

	BUG_ON(n != fast_nr);
	for (int i = 0; i < nr || i < n; i++)
		if (i >= nr || i >= n || fast[i].pc != frames[i].pc ||
		    fast[i].activation != frames[i].activation)
			die(XPU_EXIT_FAILURE, "XPU_UNWIND_CHECK: pid %u tid %u: frame %d of %d/%d "
			    "differs: libdwfl %#lx/%d, fast %#lx/%d", up->proc->pid, up->tid, i,
			    nr, n, i < nr ? (unsigned long)frames[i].pc : 0UL,
			    i < nr ? frames[i].activation : -1,
			    i < n ? (unsigned long)fast[i].pc : 0UL, i < n ? fast[i].activation : -1);
	up->stats.checked++;
	free(fast);
}

int unwind__stack(struct machine *m, struct proc *proc, uint32_t tid, uint64_t time,
		  uint64_t maps_sig, const struct xpu_stack_view *v,
		  struct unwind_frame *frames, int max)
{
	struct unwind_proc *up = proc->unwind;
	struct frames_arg fa = { frames, 0, max, UNWIND_SP_UNKNOWN };
	struct unwind_cfi_mem mem;
	int fast;

	if (!v->regs || v->hdr->nr_regs < XPU_X86_NR_REGS || v->hdr->arch != XPU_ARCH_X86_64 ||
	    max <= 0)
		return 0;
	up = unwind__proc(proc);
	up->m = m;
	up->proc = proc;
	up->tid = tid;
	up->time = time;
	up->v = v;
	up->sp = v->regs[XPU_X86_RSP];
	up->stats.stacks++;

	if (!up->pcs_ok || up->pcs_sig != maps_sig) {
		unwind_cfi_pcs__reset(&up->pcs);
		up->pcs_sig = maps_sig;
		up->pcs_ok = true;
	}
	mem = (struct unwind_cfi_mem){ up->sp, v->stack, v->hdr->stack_size, unwind__read, up };
	fast = unwind_cfi__frames(&up->pcs, v->regs, &mem, frames, max);
	fa.nr = fast > 0 ? fast : 0;
	/* libdwfl where the fast path gave up, or to check it */
	if (fast < 0 || unwind__check_on()) {
		if (!up->built ||
		    (up->sig != maps_sig && !(up->attached && unwind__grow(up, maps_sig))))
			unwind__rebuild(up, maps_sig);
		fa.nr = 0;
		if (up->attached)
			dwfl_getthread_frames(up->dwfl, (pid_t)tid, unwind__frame_cb, &fa);
		if (fast < 0)
			up->stats.slow++;
		else if (up->attached)
			unwind__compare(up, frames, fa.nr, fast, max);
	}
	if (fa.nr == 0) {	/* no CFI or no module: at least the sampled pc */
		frames[0] = (struct unwind_frame){ .pc = v->regs[XPU_X86_RIP], .activation = true };
		fa.nr = 1;
	}
	if (fa.nr == 1)
		up->stats.failed++;
	up->v = NULL;
	return fa.nr;
}

bool unwind__checking(void)
{
	return unwind__check_on();
}

void unwind__count(struct proc *proc, int nr)
{
	struct unwind_proc *up = unwind__proc(proc);

	up->stats.stacks++;
	if (nr == 1)
		up->stats.failed++;
}

/* A worker's state for one process. */
struct unwind_wproc {
	struct unwind_cfi_pcs pcs;
	uint64_t sig;
	struct unwind_worker *w;
	/* the sample being unwound: read by the callbacks */
	struct proc *proc;
	uint64_t time;
	const struct xpu_stack_view *v;
	uint64_t sp;
};

struct unwind_worker {
	struct machine *m;
	pthread_rwlock_t *lock;
	struct u64map procs;		/* struct proc * -> struct unwind_wproc * */
};

struct unwind_worker *unwind_worker__new(struct machine *m, pthread_rwlock_t *lock)
{
	struct unwind_worker *w = xzalloc(sizeof(*w));

	w->m = m;
	w->lock = lock;
	u64map__init(&w->procs);
	return w;
}

void unwind_worker__free(struct unwind_worker *w)
{
	uint64_t k, v;

	if (!w)
		return;
	for (size_t i = 0; u64map__next(&w->procs, &i, &k, &v); ) {
		struct unwind_wproc *wp = (struct unwind_wproc *)(uintptr_t)v;

		unwind_cfi_pcs__exit(&wp->pcs);
		free(wp);
	}
	u64map__exit(&w->procs);
	free(w);
}

static struct unwind_cfi *unwind_worker__module(uint64_t pc, uint64_t *bias, void *arg)
{
	struct unwind_wproc *wp = arg;
	struct machine *m = wp->w->m;
	struct unwind_cfi *c = NULL;
	struct map *map;

	const uint64_t *slot;

	/* shared: a map whose bias and file's rules are known already */
	pthread_rwlock_rdlock(wp->w->lock);
	map = machine__find_valid_map(m, wp->proc->pid, pc, wp->time);
	if (!map) {
		pthread_rwlock_unlock(wp->w->lock);
		return NULL;
	}
	if (map->bias_known && m->unwind &&
	    (slot = u64map__find(&((struct unwind_files *)m->unwind)->of_dso,
				 (uint64_t)(uintptr_t)map->dso)) != NULL) {
		*bias = map->bias;
		c = (struct unwind_cfi *)(uintptr_t)*slot;
		pthread_rwlock_unlock(wp->w->lock);
		return c;
	}
	pthread_rwlock_unlock(wp->w->lock);
	/* alone: load the file, note the bias, make the file's rules */
	pthread_rwlock_wrlock(wp->w->lock);
	map = machine__find_valid_map(m, wp->proc->pid, pc, wp->time);
	if (map && machine__map_bias(m, map, bias))
		c = unwind__file(m, map->dso);
	pthread_rwlock_unlock(wp->w->lock);
	return c;
}

static bool unwind_worker__read(uint64_t addr, uint64_t *result, void *arg)
{
	struct unwind_wproc *wp = arg;
	uint64_t size = wp->v->hdr->stack_size;
	struct machine *m = wp->w->m;
	bool ok;

	if (addr >= wp->sp && size >= 8 && addr - wp->sp <= size - 8) {	/* no wrap */
		memcpy(result, wp->v->stack + (addr - wp->sp), 8);
		return true;
	}
	pthread_rwlock_wrlock(wp->w->lock);
	ok = unwind__read_file(m, wp->proc->pid, addr, wp->time, result);
	pthread_rwlock_unlock(wp->w->lock);
	return ok;
}

int unwind_worker__stack(struct unwind_worker *w, struct proc *proc, uint64_t time,
			 uint64_t maps_sig, const struct xpu_stack_view *v,
			 struct unwind_frame *frames, int max)
{
	uint64_t *slot = u64map__slot(&w->procs, (uint64_t)(uintptr_t)proc);
	struct unwind_wproc *wp = (struct unwind_wproc *)(uintptr_t)*slot;
	struct unwind_cfi_mem mem;
	int fast;

	if (!v->regs || v->hdr->nr_regs < XPU_X86_NR_REGS || v->hdr->arch != XPU_ARCH_X86_64 ||
	    max <= 0)
		return -1;
	if (!wp) {
		wp = xzalloc(sizeof(*wp));
		wp->w = w;
		wp->proc = proc;
		unwind_cfi_pcs__init(&wp->pcs, unwind_worker__module, wp);
		wp->sig = maps_sig;
		*slot = (uint64_t)(uintptr_t)wp;
	} else if (wp->sig != maps_sig) {
		unwind_cfi_pcs__reset(&wp->pcs);
		wp->sig = maps_sig;
	}
	wp->time = time;
	wp->v = v;
	wp->sp = v->regs[XPU_X86_RSP];
	mem = (struct unwind_cfi_mem){ wp->sp, v->stack, v->hdr->stack_size, unwind_worker__read,
				       wp };
	fast = unwind_cfi__frames(&wp->pcs, v->regs, &mem, frames, max);
	wp->v = NULL;
	return fast > 0 ? fast : -1;
}

void unwind__proc_exit(struct proc *proc)
{
	struct unwind_proc *up = proc->unwind;

	if (!up)
		return;
	if (up->dwfl)
		dwfl_end(up->dwfl);
	bmap__exit(&up->reported, NULL);
	unwind_cfi_pcs__exit(&up->pcs);
	free(up);
	proc->unwind = NULL;
}

void unwind__stats(const struct machine *m, struct unwind_stats *sum)
{
	uint64_t k, v;

	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; u64map__next(&m->procs, &i, &k, &v); ) {
		const struct unwind_proc *up = ((const struct proc *)(uintptr_t)v)->unwind;

		if (!up)
			continue;
		sum->stacks += up->stats.stacks;
		sum->dwfl_rebuilds += up->stats.dwfl_rebuilds;
		sum->dwfl_grows += up->stats.dwfl_grows;
		sum->failed += up->stats.failed;
		sum->slow += up->stats.slow;
		sum->checked += up->stats.checked;
	}
	if (m->unwind)
		sum->files = ((const struct unwind_files *)m->unwind)->opened;
}
