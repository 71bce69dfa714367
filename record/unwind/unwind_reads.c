// SPDX-License-Identifier: MIT
/*
 * Which words of a stack record's copy, and which of its registers, the
 * report will read, found by running the report's own CFI frame step
 * (common/unwind_cfi.c) over the record, so that pruning
 * (format/stack_prune.h) can zero the others: the stack addresses and code
 * addresses that no frame's rule reads (pointers to locals, stale return
 * addresses in a frame's locals, function pointers), which the address rule
 * alone must keep. On gcc -O2 they were 160 words a sample, more than half
 * of a trace's bytes (Documentation/design-trace-size.md).
 *
 * Exact or nothing. The report unwinds a record from the same registers
 * and words with the rules of the same file, found from the same MMAP,
 * COMM (exec) and FORK records: the mapping valid at the record's time
 * that holds the pc, newest first, else the parent's at the fork, as
 * report/machine/machine.c chooses it; the file by its path and build-id, its
 * .eh_frame, else its own .debug_frame, as report/unwind/unwind.c reads it.
 * So it reads the same words in the same order, a prefix of these (it
 * stops at CALLCHAIN_MAX frames, this at UR_MAX_FRAMES). A record is "not
 * known" (kept by the address rule alone) when a step could differ: a pc
 * in no mapping, a file that cannot be opened or is not the recorded one,
 * a step the fast path leaves to libdwfl (no rule, a signal frame), a read
 * outside the copy where a mapping of the process or an ancestor could
 * give a file to read (the report reads it there; elsewhere, as below the
 * stack pointer, its read fails as this one does). What it cannot see: a
 * FORK reusing the pid of a process after its records (the report takes
 * the last FORK of a pid for its whole life), and a report made without
 * the files, whose libdwfl then follows frame pointers through words no
 * CFI step reads (zeroed here).
 *
 * Called under the prune's lock (format/stack_prune.c): one thread at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <gelf.h>
#include <limits.h>
#include <elfutils/libdwfl.h>
#include "common/bounded.h"
#include "common/elf_buildid.h"
#include "common/elf_segs.h"
#include "common/file.h"
#include "common/hashmap.h"
#include "common/unwind_cfi.h"
#include "common/unwind_simple.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/xpu_format.h"
#include "record/unwind/launch_rules.h"
#include "record/unwind/unwind_reads.h"

/* At least the report's CALLCHAIN_MAX (512): its reads are then a prefix. */
#define UR_MAX_FRAMES	1024
#define UR_MISSES	256

struct ur_file {
	char *path;
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t build_id_size;
	bool tried, usable;
	bool exec_type;			/* ET_EXEC: load bias 0 */
	struct elf_seg *segs;		/* for the load bias, as the report's */
	size_t nr_segs;
	struct unwind_cfi cfi;
	struct ur_file *next;		/* same hash */
};

struct ur_map {
	uint64_t start, end, pgoff, time, seq;
	struct ur_file *file;
};

struct ur_proc {
	uint32_t pid, ppid;		/* ppid: its parent at its FORK */
	bool has_parent;
	uint64_t fork_time;
	struct ur_map *maps;
	size_t nr_maps, maps_cap;
	uint64_t *execs;
	size_t nr_execs, execs_cap;
	struct unwind_cfi_pcs pcs;	/* for the valid mapping set sig */
	uint64_t sig;
	bool pcs_ok;
};

struct unwind_reads {
	struct u64map procs;		/* pid -> struct ur_proc * */
	struct u64map files;		/* hash of path and build-id -> struct ur_file * */
	uint64_t seq;
	/* the record being unwound */
	struct ur_proc *cur;
	uint64_t time, sp, size;
	const uint8_t *stack;
	uint8_t *read;
	bool outside;
	struct unwind_frame frames[UR_MAX_FRAMES];
	int nr_frames;			/* of the last record: -1 not known */
	uint64_t rip;			/* its sampled pc */
	uint64_t pcs[XPU_UNWOUND_MAX];	/* ur__frames()' answer */
	struct unwind_reads_stats stats;
	bool simple_check;		/* XPU_UNWIND_SIMPLE_CHECK=1 */
	struct unwind_frame simple[UR_MAX_FRAMES];
	uint64_t simple_miss;		/* the lookup pc without a simple rule */
	/* where walks met one: file and file offset, the first UR_MISSES */
	struct ur_miss {
		const struct ur_file *file;
		uint64_t off, count;
		char rule[200];		/* unwind_cfi__describe() */
	} misses[UR_MISSES];
	size_t nr_misses;
	uint64_t launch_known, launch_same;	/* of those, stacks taken in libxpu-cupti.so */
	/* marker stacks whose rules ur__publish() stopped adding: at a pc with
	 * no simple rule, whose code crosses a mapping, or cannot be read */
	uint64_t pub_stacks, pub_not_simple, pub_mapping, pub_unreadable;
	uint64_t pub_last;		/* the last pc that stopped it, for -v */
	struct launch_rules *rules;	/* where the marker stacks' rules go, or NULL */
	char *marker_lib;		/* the CUPTI library's real path, or NULL */
};

/* report/unwind/unwind.c's per-file Dwfl finds no separate debuginfo: nor
 * does this one (a file's own .debug_frame is used as there). */
static int ur__no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static char *ur__debuginfo_path;
static const Dwfl_Callbacks ur__file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = ur__no_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &ur__debuginfo_path,
};

struct unwind_reads *unwind_reads__new(void)
{
	struct unwind_reads *u = xzalloc(sizeof(*u));

	u64map__init(&u->procs);
	u64map__init(&u->files);
	u->nr_frames = -1;
	return u;
}

void unwind_reads__set_simple_check(struct unwind_reads *u, bool on)
{
	u->simple_check = on;
}

void unwind_reads__free(struct unwind_reads *u)
{
	uint64_t k, v;

	if (!u)
		return;
	for (size_t i = 0; u64map__next(&u->procs, &i, &k, &v); ) {
		struct ur_proc *p = (struct ur_proc *)(uintptr_t)v;

		if (p->pcs_ok)
			unwind_cfi_pcs__exit(&p->pcs);
		free(p->maps);
		free(p->execs);
		free(p);
	}
	for (size_t i = 0; u64map__next(&u->files, &i, &k, &v); ) {
		struct ur_file *f = (struct ur_file *)(uintptr_t)v, *next;

		for (; f; f = next) {
			next = f->next;
			if (f->tried)
				unwind_cfi__exit(&f->cfi);
			free(f->segs);
			free(f->path);
			free(f);
		}
	}
	u64map__exit(&u->procs);
	u64map__exit(&u->files);
	free(u->marker_lib);
	free(u);
}

void unwind_reads__stats(const struct unwind_reads *u, struct unwind_reads_stats *s)
{
	*s = u->stats;
}

static int ur_miss__cmp(const void *a, const void *b)
{
	const struct ur_miss *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

void unwind_reads__simple_debug(struct unwind_reads *u)
{
	if (u->rules)
		debug(1, "launch rules: %llu marker stacks read for rules; stopped at a pc with no "
		      "simple rule %llu times, at code crossing a mapping %llu, at code that could "
		      "not be read %llu (the last at %#llx)", (unsigned long long)u->pub_stacks,
		      (unsigned long long)u->pub_not_simple, (unsigned long long)u->pub_mapping,
		      (unsigned long long)u->pub_unreadable, (unsigned long long)u->pub_last);
	if (!u->simple_check)
		return;
	debug(1, "unwind check: %llu of the known stacks were taken in the CUPTI library (GPU "
	      "launches), %llu of them walked with simple rules alone",
	      (unsigned long long)u->launch_known, (unsigned long long)u->launch_same);
	qsort(u->misses, u->nr_misses, sizeof(*u->misses), ur_miss__cmp);
	for (size_t i = 0; i < u->nr_misses && i < 8; i++)
		debug(1, "unwind check: no simple rule at %s+%#llx (%llu stacks): %s",
		      u->misses[i].file ? u->misses[i].file->path : "[no file]",
		      (unsigned long long)u->misses[i].off,
		      (unsigned long long)u->misses[i].count, u->misses[i].rule);
}

static struct ur_proc *ur__proc(struct unwind_reads *u, uint32_t pid, bool create)
{
	uint64_t *slot = create ? u64map__slot(&u->procs, pid) : u64map__find(&u->procs, pid);

	if (!slot)
		return NULL;
	if (!*slot) {
		struct ur_proc *p = xzalloc(sizeof(*p));

		p->pid = pid;
		*slot = (uint64_t)(uintptr_t)p;
	}
	return (struct ur_proc *)(uintptr_t)*slot;
}

static uint64_t ur__file_hash(const char *path, const uint8_t *id, size_t id_size)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *c = path; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	for (size_t i = 0; i < id_size; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	return h;
}

static struct ur_file *ur__file(struct unwind_reads *u, const char *path, const uint8_t *id,
				size_t id_size)
{
	uint64_t *slot = u64map__slot(&u->files, ur__file_hash(path, id, id_size));
	struct ur_file *f;

	for (f = (struct ur_file *)(uintptr_t)*slot; f; f = f->next)
		if (f->build_id_size == id_size && !memcmp(f->build_id, id, id_size) &&
		    !strcmp(f->path, path))
			return f;
	f = xzalloc(sizeof(*f));
	f->path = xstrdup(path);
	memcpy(f->build_id, id, id_size);
	f->build_id_size = (uint8_t)id_size;
	f->next = (struct ur_file *)(uintptr_t)*slot;
	*slot = (uint64_t)(uintptr_t)f;
	return f;
}

/* xpu_prune_reads.note: MMAP, COMM (exec) and FORK records make the
 * processes' mapping timelines; a process's EXIT frees its cached lookups. */
static void ur__note(void *arg, uint16_t type, const void *body, size_t len)
{
	struct unwind_reads *u = arg;

	if (type == XPU_REC_MMAP && len > sizeof(struct xpu_mmap)) {
		const char *path = (const char *)body + sizeof(struct xpu_mmap);
		struct xpu_mmap m;
		struct ur_proc *p;

		memcpy(&m, body, sizeof(m));
		/* as report/session/session.c and machine__add_mmap() take it */
		if (!memchr(path, 0, len - sizeof(m)) || m.build_id_size > XPU_MMAP_BUILD_ID_MAX ||
		    !m.len || m.start + m.len < m.start)
			return;
		p = ur__proc(u, m.pid, true);
		p->maps = xgrow(p->maps, &p->maps_cap, p->nr_maps + 1, sizeof(*p->maps));
		p->maps[p->nr_maps++] = (struct ur_map){
			.start = m.start, .end = m.start + m.len, .pgoff = m.pgoff, .time = m.time,
			.seq = u->seq++, .file = ur__file(u, path, m.build_id, m.build_id_size),
		};
	} else if (type == XPU_REC_FORK && len >= sizeof(struct xpu_fork)) {
		struct xpu_fork f;

		memcpy(&f, body, sizeof(f));
		if (f.pid != f.ppid) {	/* a new process, as machine__add_fork() */
			struct ur_proc *p = ur__proc(u, f.pid, true);

			p->ppid = f.ppid;
			p->fork_time = f.time;
			p->has_parent = true;
		}
	} else if (type == XPU_REC_EXIT && len >= sizeof(struct xpu_exit)) {
		struct xpu_exit x;
		struct ur_proc *p;

		/* the process ended: its pcs go (a sample drained after this
		 * record finds them again); its mappings stay, for such samples
		 * and for its children's lookups */
		memcpy(&x, body, sizeof(x));
		if (x.pid == x.tid && (p = ur__proc(u, x.pid, false)) && p->pcs_ok) {
			unwind_cfi_pcs__exit(&p->pcs);
			p->pcs_ok = false;
		}
	} else if (type == XPU_REC_COMM && len >= sizeof(struct xpu_comm)) {
		struct xpu_comm c;
		struct ur_proc *p;

		memcpy(&c, body, sizeof(c));
		if (!(c.flags & XPU_COMM_EXEC))
			return;
		p = ur__proc(u, c.pid, true);
		p->execs = xgrow(p->execs, &p->execs_cap, p->nr_execs + 1, sizeof(*p->execs));
		p->execs[p->nr_execs++] = c.time;
	}
}

static bool ur__exec_between(const struct ur_proc *p, uint64_t after, uint64_t upto)
{
	for (size_t i = 0; i < p->nr_execs; i++)
		if (p->execs[i] > after && p->execs[i] <= upto)
			return true;
	return false;
}

/* report/machine/machine.c's map__valid_at(). */
static bool ur__valid(const struct ur_proc *p, const struct ur_map *m, uint64_t time)
{
	return m->time <= time && !ur__exec_between(p, m->time, time);
}

/* The parent whose mappings p runs at time, as machine.c's
 * proc__find_valid() goes on to it: forked before time, no exec since. */
static struct ur_proc *ur__parent(struct unwind_reads *u, const struct ur_proc *p, uint64_t time)
{
	struct ur_proc *pp;

	if (!p->has_parent || time < p->fork_time || ur__exec_between(p, p->fork_time, time))
		return NULL;
	pp = ur__proc(u, p->ppid, false);
	return pp != p ? pp : NULL;
}

/* proc__find_valid(): the mapping valid at time that holds pc, newest (time,
 * then record order) first, in p's own, else in its parent's at the fork. */
static const struct ur_map *ur__find(struct unwind_reads *u, const struct ur_proc *p,
				     uint64_t pc, uint64_t time)
{
	for (int depth = 0; p && depth <= 64; depth++) {
		const struct ur_map *best = NULL;

		for (size_t i = 0; i < p->nr_maps; i++) {
			const struct ur_map *m = &p->maps[i];

			if (pc < m->start || pc >= m->end || !ur__valid(p, m, time))
				continue;
			if (!best || m->time > best->time ||
			    (m->time == best->time && m->seq > best->seq))
				best = m;
		}
		if (best || depth == 64)
			return best;
		{
			const struct ur_proc *pp = ur__parent(u, p, time);

			if (pp)
				time = p->fork_time;
			p = pp;
		}
	}
	return NULL;
}

/* ur__open()'s first reads, with the time bound (common/bounded.h): the
 * mapped file, maybe replaced since; a regular one, the recorded ELF. */
struct ur_open_job {
	char path[PATH_MAX];
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t build_id_size;
	int fd;				/* out: the caller's now */
	bool exec_type;
	struct elf_seg *segs;
	size_t nr_segs;
};

static int ur__open_job(void *arg)
{
	struct ur_open_job *j = arg;
	Elf *elf = NULL;
	GElf_Ehdr ehdr;
	int ret = -EINVAL;

	j->fd = file__open_regular(j->path, 0, FILE_ELF_MAX, NULL);
	if (j->fd < 0)
		return j->fd;
	if (!(elf = elf_begin(j->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &ehdr))
		goto out;
	if (j->build_id_size) {
		uint8_t id[XPU_MMAP_BUILD_ID_MAX];

		if (elf__build_id(elf, id, sizeof(id)) != j->build_id_size ||
		    memcmp(id, j->build_id, j->build_id_size))
			goto out;		/* replaced since it was mapped */
	}
	j->nr_segs = elf_segs__read(elf, &j->segs);
	j->exec_type = ehdr.e_type == ET_EXEC;
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	if (ret) {
		close(j->fd);
		j->fd = -1;
	}
	return ret;
}

static void ur__open_drop(void *arg)
{
	struct ur_open_job *j = arg;

	if (j->fd >= 0)
		close(j->fd);
	free(j->segs);
}

/* Opens f once: the recorded file (same build-id) and its rules. */
static bool ur__open(struct unwind_reads *u, struct ur_file *f)
{
	struct ur_open_job j = { .fd = -1 };
	Dwfl_Module *mod = NULL;
	Dwfl *dwfl = NULL;
	int fd;

	if (f->tried)
		return f->usable;
	f->tried = true;
	if (f->path[0] != '/' || strlen(f->path) >= sizeof(j.path) ||
	    elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	strcpy(j.path, f->path);
	memcpy(j.build_id, f->build_id, f->build_id_size);
	j.build_id_size = f->build_id_size;
	if (bounded__call(ur__open_job, ur__open_drop, &j, sizeof(j)))
		goto out;
	fd = j.fd;
	f->segs = j.segs;
	f->nr_segs = j.nr_segs;
	f->exec_type = j.exec_type;
	/* report/unwind/unwind.c's unwind__file(): the file alone at 0 (its
	 * headers were just read: from the page cache now) */
	dwfl = dwfl_begin(&ur__file_callbacks);
	if (!dwfl)
		goto out_close;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, f->path, f->path, fd, 0, true);
	if (dwfl_report_end(dwfl, NULL, NULL) || !mod) {
		dwfl_end(dwfl);
		if (!mod)
			close(fd);
		goto out;
	}
	unwind_cfi__init(&f->cfi, dwfl, mod, fd);	/* libdwfl owns fd now */
	/* the CFI's pages go back more often than in the report: the
	 * recorder runs beside the program (clang: 42.5 -> 40.2 MB peak) */
	f->cfi.cfi_release_every = 16;
	f->usable = true;
	u->stats.files++;
	return true;
out_close:
	close(fd);
out:
	unwind_cfi__init(&f->cfi, NULL, NULL, -1);	/* no rules: every lookup gives up */
	u->stats.files_failed++;
	return false;
}

/* unwind_cfi_module_fn: the file and bias of the mapping that holds pc. */
static struct unwind_cfi *ur__module(uint64_t pc, uint64_t *bias, void *arg)
{
	struct unwind_reads *u = arg;
	const struct ur_map *m = ur__find(u, u->cur, pc, u->time);

	if (!m || !ur__open(u, m->file))
		return NULL;	/* the step gives up: the record is not known */
	*bias = elf_segs__bias(m->file->segs, m->file->nr_segs, m->file->exec_type, m->start,
			       m->pgoff);
	return &m->file->cfi;
}

/* Whether addr is in any mapping of p or of an ancestor, at any time: where
 * report/unwind/unwind.c's unwind__read_file() could find a file to read
 * (machine__find_map() looks no further). */
static bool ur__any_map(struct unwind_reads *u, const struct ur_proc *p, uint64_t addr)
{
	for (int depth = 0; p && depth < 64; depth++) {
		for (size_t i = 0; i < p->nr_maps; i++)
			if (addr >= p->maps[i].start && addr < p->maps[i].end)
				return true;
		if (!p->ppid || p->ppid == p->pid)
			break;
		p = ur__proc(u, p->ppid, false);
	}
	return false;
}

/* Every read of the unwinding comes here (the copy is passed as empty). */
static bool ur__read(uint64_t addr, uint64_t *val, void *arg)
{
	struct unwind_reads *u = arg;
	uint64_t off;

	/* report/unwind/unwind.c's unwind__read(): inside the copy */
	if (addr >= u->sp && u->size >= 8 && addr - u->sp <= u->size - 8) {
		off = addr - u->sp;
		memcpy(val, u->stack + off, 8);
		u->read[off / 8] = 1;
		if (off % 8 && off / 8 + 1 < u->size / 8)
			u->read[off / 8 + 1] = 1;
		return true;
	}
	/* outside: the report reads a mapped file there, else fails as here
	 * (a read below the stack pointer, past a copy cut at its limit) */
	if (ur__any_map(u, u->cur, addr))
		u->outside = true;
	return false;
}

/* The valid mapping set of p at time (its own, its ancestors' at their
 * forks), as a hash: the pcs' cache key. */
static uint64_t ur__sig(struct unwind_reads *u, const struct ur_proc *p, uint64_t time)
{
	uint64_t h = 0;

	for (int depth = 0; p && depth <= 64; depth++) {
		const struct ur_proc *pp;

		h = h * 31 + p->nr_execs + p->pid;
		for (size_t i = 0; i < p->nr_maps; i++)
			if (ur__valid(p, &p->maps[i], time))
				h += xpu_hash_u64(p->maps[i].seq + 1);
		pp = ur__parent(u, p, time);
		if (pp)
			time = p->fork_time;
		p = pp;
	}
	return h;
}

/*
 * xpu_prune_reads.frames: those report/unwind/unwind.c's unwind__stack()
 * gives for the record reads() last said true for (the fast path alone,
 * when its reads are known): its first CALLCHAIN_MAX (XPU_UNWOUND_MAX)
 * frames, or the sampled pc alone where the fast path finds none. Only the
 * first may be an activation in user_ips: a later one (none from
 * unwind_cfi__frames today), like a pc the report would skip there, keeps
 * the words (0).
 */
static unsigned ur__frames(void *arg, const uint64_t **pcs)
{
	struct unwind_reads *u = arg;
	int nr = u->nr_frames;

	*pcs = u->pcs;
	if (nr < 0)
		return 0;
	if (nr == 0) {
		u->pcs[0] = u->rip;
		return 1;
	}
	if (nr > XPU_UNWOUND_MAX)
		nr = XPU_UNWOUND_MAX;
	for (int i = 0; i < nr; i++) {
		/* (the report skips a 0 or a perf context marker in user_ips) */
		if (u->frames[i].activation != (i == 0) || !u->frames[i].pc ||
		    u->frames[i].pc >= (uint64_t)-4095)
			return 0;
		u->pcs[i] = u->frames[i].pc;
	}
	return (unsigned)nr;
}

/* The simple walk's rules and reads: those of the full one. */
static bool ur__simple_rule(uint64_t lookup_pc, struct unwind_simple_rule *out, void *arg)
{
	struct unwind_reads *u = arg;

	if (unwind_cfi__simple(&u->cur->pcs, lookup_pc, out))
		return true;
	u->simple_miss = lookup_pc;
	return false;
}

/* The check's tally of a walk that met lookup pc without a simple rule. */
static void ur__simple_missed(struct unwind_reads *u, uint64_t pc)
{
	const struct ur_map *m = ur__find(u, u->cur, pc, u->time);
	const struct ur_file *f = m ? m->file : NULL;
	uint64_t off = m ? pc - m->start + m->pgoff : pc;
	size_t i;

	for (i = 0; i < u->nr_misses; i++)
		if (u->misses[i].file == f && u->misses[i].off == off)
			break;
	if (i == u->nr_misses) {
		if (i == UR_MISSES)
			return;
		u->misses[u->nr_misses] = (struct ur_miss){ f, off, 0, "" };
		unwind_cfi__describe(&u->cur->pcs, pc, u->misses[u->nr_misses].rule,
				     sizeof(u->misses[u->nr_misses].rule));
		u->nr_misses++;
	}
	u->misses[i].count++;
}

/* Whether pc is in the CUPTI library (unwind_reads__set_marker_lib(); by
 * default a file named libxpu-cupti.so): the marker's stacks. */
static bool ur__in_cupti_lib(struct unwind_reads *u, uint64_t pc)
{
	const struct ur_map *m = ur__find(u, u->cur, pc, u->time);
	const char *name = m && m->file ? strrchr(m->file->path, '/') : NULL;

	if (!name)
		return false;
	if (u->marker_lib)
		return !strcmp(m->file->path, u->marker_lib);
	return !strcmp(name + 1, "libxpu-cupti.so");
}

void unwind_reads__set_marker_lib(struct unwind_reads *u, const char *path)
{
	free(u->marker_lib);
	u->marker_lib = path ? realpath(path, NULL) : NULL;
}

static bool ur__simple_read(uint64_t addr, uint64_t *val, void *arg)
{
	struct unwind_reads *u = arg;

	if (addr >= u->sp && u->size >= 8 && addr - u->sp <= u->size - 8) {
		memcpy(val, u->stack + (addr - u->sp), 8);
		return true;
	}
	return ur__read(addr, val, u);
}

/*
 * XPU_UNWIND_SIMPLE_CHECK=1: would a walk with simple rules alone, from
 * rip, rsp and rbp, have given the nr frames just found? Counts the
 * answer; a walk that gives other frames is a bug, said at -v.
 */
static void ur__simple_check(struct unwind_reads *u, const uint64_t *regs, int nr)
{
	struct unwind_simple_regs sr = { regs[XPU_X86_RIP], regs[XPU_X86_RSP], regs[XPU_X86_RBP] };
	bool launch = ur__in_cupti_lib(u, sr.pc);
	int n = unwind_simple__frames(&sr, ur__simple_rule, ur__simple_read, u, u->simple,
				      UR_MAX_FRAMES);

	u->launch_known += launch;
	if (n < 0) {
		u->stats.simple_none++;
		ur__simple_missed(u, u->simple_miss);
		return;
	}
	for (int i = 0; n == nr && i < n; i++)
		if (u->simple[i].pc != u->frames[i].pc ||
		    u->simple[i].activation != u->frames[i].activation)
			n = -2 - i;
	if (n == nr) {
		u->launch_same += launch;
		u->stats.simple_same++;
		u->stats.simple_frames += (uint64_t)n;
		return;
	}
	if (!u->stats.simple_differ++)
		debug(1, "unwind check: simple rules gave other frames (%d, %d by CFI) for a stack "
		      "of pid %u at %#llx", n, nr, u->cur->pid, (unsigned long long)regs[XPU_X86_RIP]);
}

void unwind_reads__set_rules(struct unwind_reads *u, struct launch_rules *rules)
{
	u->rules = rules;
}

/*
 * A marker stack of a CUDA process with a rule table (launch_rules.c),
 * unwound to its nr frames: the simple rule of each frame's lookup pc not
 * in the table yet, with the code bytes that end at it (from the process,
 * both ends in one mapping), so the process can walk the next launch from
 * that place itself.
 */
static void ur__publish(struct unwind_reads *u, uint32_t pid, int nr)
{
	struct unwind_table_hdr *t = launch_rules__table(u->rules, pid);

	u->pub_stacks++;
	for (int i = 0; t && i < nr; i++) {
		uint64_t pc = u->frames[i].activation ? u->frames[i].pc : u->frames[i].pc - 1;
		uint8_t code[UNWIND_TABLE_CODE];
		struct iovec local = { code, sizeof(code) };
		struct iovec remote = { (void *)(uintptr_t)(pc + 1 - sizeof(code)), sizeof(code) };
		struct unwind_simple_rule r;
		const struct ur_map *m;

		if (unwind_table__find(t, pc))
			continue;
		if (!unwind_cfi__simple(&u->cur->pcs, pc, &r)) {
			u->pub_not_simple++;	/* the walk stops here anyway */
			u->pub_last = pc;
			break;
		}
		m = ur__find(u, u->cur, pc, u->time);
		if (!m || m != ur__find(u, u->cur, pc + 1 - sizeof(code), u->time)) {
			u->pub_mapping++;
			u->pub_last = pc;
			break;
		}
		if (process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(code)) {
			u->pub_unreadable++;
			u->pub_last = pc;
			break;
		}
		unwind_table__add(t, pc, code, &r);
	}
}

/* xpu_prune_reads.reads: the words and registers unwinding this record
 * reads, or false when that is not known exactly. */
static bool ur__reads(void *arg, uint32_t pid, uint64_t time, const uint64_t *regs_,
		      unsigned nr_regs, const uint8_t *stack, uint64_t size, uint8_t *read,
		      uint32_t *reg_read)
{
	struct unwind_reads *u = arg;
	struct unwind_cfi_mem mem;
	uint64_t regs[UNWIND_CFI_NREGS], sig;
	struct ur_proc *p;
	int nr;

	u->nr_frames = -1;
	if (nr_regs < XPU_X86_NR_REGS || !(p = ur__proc(u, pid, false)))
		goto not_known;
	memcpy(regs, regs_, sizeof(regs));	/* the body may be unaligned */
	sig = ur__sig(u, p, time);
	if (!p->pcs_ok) {
		unwind_cfi_pcs__init(&p->pcs, ur__module, u);
		p->pcs_ok = true;
		p->sig = sig;
	} else if (p->sig != sig) {
		unwind_cfi_pcs__reset(&p->pcs);
		p->sig = sig;
	}
	u->cur = p;
	u->time = time;
	u->sp = regs[XPU_X86_RSP];
	u->size = size;
	u->stack = stack;
	u->read = read;
	u->outside = false;
	mem = (struct unwind_cfi_mem){ u->sp, stack, 0, ur__read, u, reg_read };
	nr = unwind_cfi__frames(&p->pcs, regs, &mem, u->frames, UR_MAX_FRAMES);
	if (nr >= 0 && !u->outside && u->simple_check)
		ur__simple_check(u, regs, nr);
	if (nr > 0 && !u->outside && u->rules && ur__in_cupti_lib(u, regs[XPU_X86_RIP]))
		ur__publish(u, pid, nr);
	u->cur = NULL;
	if (nr < 0 || u->outside)
		goto not_known;
	u->stats.exact++;
	u->stats.frames += (uint64_t)nr;
	u->nr_frames = nr;
	u->rip = regs[XPU_X86_RIP];
	return true;
not_known:
	u->stats.not_known++;
	return false;
}

void unwind_reads__hook(struct unwind_reads *u, struct xpu_prune_reads *r)
{
	*r = (struct xpu_prune_reads){ ur__note, ur__reads, ur__frames, u };
}
