// SPDX-License-Identifier: MIT
/* Processes, threads and their mapping / comm timelines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/machine/machine.h"
#include "report/profile/profile.h"

void machine__init(struct machine *m, struct profile *p)
{
	memset(m, 0, sizeof(*m));
	u64map__init(&m->procs);
	u64map__init(&m->threads);
	dsos__init(&m->dsos);
	symtab__init(&m->ksyms, true);
	m->profile = p;
}

void machine__exit(struct machine *m)
{
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&m->procs, &i, &k, &v); ) {
		struct proc *p = (struct proc *)(uintptr_t)v;

		free(p->maps);
		free(p->execs);
		symtab__exit(&p->jit);
		free(p);
	}
	for (size_t i = 0; u64map__next(&m->threads, &i, &k, &v); ) {
		struct thread *t = (struct thread *)(uintptr_t)v;

		free(t->comms);
		free(t);
	}
	u64map__exit(&m->procs);
	u64map__exit(&m->threads);
	dsos__exit(&m->dsos);
	symtab__exit(&m->ksyms);
}

struct proc *machine__find_proc(const struct machine *m, uint32_t pid)
{
	uint64_t *v = u64map__find(&m->procs, pid);

	return v ? (struct proc *)(uintptr_t)*v : NULL;
}

struct proc *machine__proc(struct machine *m, uint32_t pid)
{
	uint64_t *v = u64map__slot(&m->procs, pid);
	struct proc *p;

	if (*v)
		return (struct proc *)(uintptr_t)*v;
	p = xzalloc(sizeof(*p));
	p->pid = pid;
	symtab__init(&p->jit, true);
	*v = (uintptr_t)p;
	return p;
}

struct thread *machine__thread(struct machine *m, uint32_t pid, uint32_t tid)
{
	uint64_t *v = u64map__slot(&m->threads, tid);
	struct thread *t;

	if (*v)
		return (struct thread *)(uintptr_t)*v;
	t = xzalloc(sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	*v = (uintptr_t)t;
	return t;
}

void machine__add_mmap(struct machine *m, uint32_t pid, uint64_t time, uint64_t start,
		       uint64_t len, uint64_t pgoff, const char *path,
		       const uint8_t *build_id, size_t build_id_size)
{
	struct proc *p = machine__proc(m, pid);
	struct map *map;

	if (!len || start + len < start)
		return;
	p->maps = xgrow(p->maps, &p->maps_cap, p->nr_maps + 1, sizeof(*p->maps));
	map = &p->maps[p->nr_maps++];
	*map = (struct map){
		.start = start, .end = start + len, .pgoff = pgoff, .time = time,
		.dso = dsos__findnew(&m->dsos, path, build_id, build_id_size),
		.seq = m->map_seq++,
	};
}

void machine__add_comm(struct machine *m, uint32_t pid, uint32_t tid, uint64_t time,
		       const char *comm, bool exec)
{
	struct thread *t = machine__thread(m, pid, tid);
	char name[17];
	uint32_t str;

	snprintf(name, sizeof(name), "%.16s", comm);
	t->pid = pid;
	str = profile__intern_str(m->profile, name);
	/* one the thread has already (the files of a rotated recording each
	 * repeat it): nothing new; kept, machine__comm() read all 20,000
	 * copies of a thread's comm at every sample */
	for (size_t i = 0; i < t->nr_comms; i++)
		if (t->comms[i].time == time && t->comms[i].str == str && t->comms[i].exec == exec)
			return;
	t->comms = xgrow(t->comms, &t->comms_cap, t->nr_comms + 1, sizeof(*t->comms));
	t->comms[t->nr_comms++] = (struct comm_event){
		.time = time, .str = str, .exec = exec,
	};
	if (exec) {
		struct proc *p = machine__proc(m, pid);

		p->execs = xgrow(p->execs, &p->execs_cap, p->nr_execs + 1, sizeof(*p->execs));
		p->execs[p->nr_execs++] = time;
	}
}

void machine__add_fork(struct machine *m, uint32_t pid, uint32_t tid, uint32_t ppid,
		       uint32_t ptid, uint64_t time)
{
	struct thread *t = machine__thread(m, pid, tid);

	t->pid = pid;
	t->parent_tid = ptid;
	t->fork_time = time;
	t->has_parent = true;
	if (pid != ppid) {	/* a new process: it starts with its parent's maps */
		struct proc *p = machine__proc(m, pid);

		p->ppid = ppid;
		p->fork_time = time;
		p->has_parent = true;
		machine__proc(m, ppid);
	}
}

void machine__add_ksym(struct machine *m, uint64_t addr, uint64_t size, const char *name)
{
	symtab__add(&m->ksyms, addr, size, name, STB_GLOBAL);
}

void machine__add_jit(struct machine *m, uint32_t pid, uint64_t start, uint64_t size,
		      const char *name)
{
	symtab__add(&machine__proc(m, pid)->jit, start, size, name, STB_GLOBAL);
}

static int map__cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int comm__cmp(const void *a, const void *b)
{
	const struct comm_event *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int u64__cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void machine__finish(struct machine *m)
{
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&m->procs, &i, &k, &v); ) {
		struct proc *p = (struct proc *)(uintptr_t)v;

		xpu_qsort(p->maps, p->nr_maps, sizeof(*p->maps), map__cmp);
		xpu_qsort(p->execs, p->nr_execs, sizeof(*p->execs), u64__cmp);
		symtab__finish(&p->jit);
	}
	for (size_t i = 0; u64map__next(&m->threads, &i, &k, &v); ) {
		struct thread *t = (struct thread *)(uintptr_t)v;

		/* stable enough: records of one thread arrive in order */
		xpu_qsort(t->comms, t->nr_comms, sizeof(*t->comms), comm__cmp);
	}
	symtab__finish(&m->ksyms);
}

/* Whether pid exec'd in (after, upto]. */
static bool proc__exec_between(const struct proc *p, uint64_t after, uint64_t upto)
{
	for (size_t i = 0; i < p->nr_execs; i++)
		if (p->execs[i] > after && p->execs[i] <= upto)
			return true;
	return false;
}

static bool map__valid_at(const struct proc *p, const struct map *map, uint64_t time)
{
	return map->time <= time && !proc__exec_between(p, map->time, time);
}

/* Valid lookup through own maps then the parent's at fork time. */
static struct map *proc__find_valid(struct machine *m, struct proc *p, uint64_t addr,
				    uint64_t time, int depth)
{
	for (size_t i = p->nr_maps; i-- > 0; ) {	/* newest first */
		struct map *map = &p->maps[i];

		if (addr >= map->start && addr < map->end && map__valid_at(p, map, time))
			return map;
	}
	if (p->has_parent && depth < 64 && time >= p->fork_time &&
	    !proc__exec_between(p, p->fork_time, time)) {
		struct proc *pp = machine__find_proc(m, p->ppid);

		if (pp && pp != p)
			return proc__find_valid(m, pp, addr, p->fork_time, depth + 1);
	}
	return NULL;
}

static struct map *proc__find_any(struct machine *m, struct proc *p, uint64_t addr, int depth)
{
	for (size_t i = p->nr_maps; i-- > 0; ) {
		struct map *map = &p->maps[i];

		if (addr >= map->start && addr < map->end)
			return map;
	}
	if (p->has_parent && depth < 64) {
		struct proc *pp = machine__find_proc(m, p->ppid);

		if (pp && pp != p)
			return proc__find_any(m, pp, addr, depth + 1);
	}
	return NULL;
}

struct map *machine__find_valid_map(struct machine *m, uint32_t pid, uint64_t addr,
				    uint64_t time)
{
	struct proc *p = machine__find_proc(m, pid);

	return p ? proc__find_valid(m, p, addr, time, 0) : NULL;
}

struct map *machine__find_map(struct machine *m, uint32_t pid, uint64_t addr, uint64_t time)
{
	struct proc *p = machine__find_proc(m, pid);
	struct map *map;

	if (!p)
		return NULL;
	map = proc__find_valid(m, p, addr, time, 0);
	if (!map) {
		map = proc__find_any(m, p, addr, 0);
		if (map)
			m->map_fallbacks++;
	}
	return map;
}

static int proc__for_each_map(struct machine *m, struct proc *p, uint64_t time, int depth,
			      int (*cb)(struct map *map, void *arg), void *arg)
{
	int ret;

	for (size_t i = p->nr_maps; i-- > 0; )
		if (map__valid_at(p, &p->maps[i], time) && (ret = cb(&p->maps[i], arg)))
			return ret;
	if (p->has_parent && depth < 64 && time >= p->fork_time &&
	    !proc__exec_between(p, p->fork_time, time)) {
		struct proc *pp = machine__find_proc(m, p->ppid);

		if (pp && pp != p)
			return proc__for_each_map(m, pp, p->fork_time, depth + 1, cb, arg);
	}
	return 0;
}

int machine__for_each_map(struct machine *m, uint32_t pid, uint64_t time,
			  int (*cb)(struct map *map, void *arg), void *arg)
{
	struct proc *p = machine__find_proc(m, pid);

	return p ? proc__for_each_map(m, p, time, 0, cb, arg) : 0;
}

static void span__cut(uint64_t b, uint64_t time, uint64_t *lo, uint64_t *hi)
{
	if (b <= time) {
		if (b > *lo)
			*lo = b;
	} else if (b - 1 < *hi) {
		*hi = b - 1;
	}
}

/* What decides validity at time: own map times, exec times and the fork
 * time; the parent is looked at as of the fork, which does not move. */
void machine__maps_span(const struct machine *m, uint32_t pid, uint64_t time,
			uint64_t *lo, uint64_t *hi)
{
	const struct proc *p = machine__find_proc(m, pid);

	*lo = 0;
	*hi = UINT64_MAX;
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_maps; i++)
		span__cut(p->maps[i].time, time, lo, hi);
	for (size_t i = 0; i < p->nr_execs; i++)
		span__cut(p->execs[i], time, lo, hi);
	if (p->has_parent)
		span__cut(p->fork_time, time, lo, hi);
}

bool machine__map_bias(struct machine *m, struct map *map, uint64_t *bias)
{
	if (!map->bias_known) {
		if (dso__load(map->dso, &m->dsos))
			return false;
		map->bias = dso__bias(map->dso, map->start, map->pgoff);
		map->bias_known = true;
	}
	*bias = map->bias;
	return true;
}

uint32_t machine__comm(struct machine *m, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t *v = u64map__find(&m->threads, tid);
	uint32_t first = 0;		/* the thread's own first comm, if nothing better */
	bool have_first = false;
	char buf[24];

	for (int depth = 0; v && depth < 64; depth++) {
		struct thread *t = (struct thread *)(uintptr_t)*v;
		const struct comm_event *best = NULL;

		for (size_t i = 0; i < t->nr_comms; i++)
			if (t->comms[i].time <= time)
				best = &t->comms[i];
		if (best)
			return best->str;
		if (t->nr_comms && !depth) {
			first = t->comms[0].str;
			have_first = true;
		}
		/* no comm of its own yet (a child before its exec or its
		 * prctl): the one it was forked with, its parent's then */
		if (!t->has_parent || t->parent_tid == t->tid)
			break;
		if (t->fork_time < time)
			time = t->fork_time;
		v = u64map__find(&m->threads, t->parent_tid);
	}
	if (have_first)
		return first;
	if (pid != tid && (v = u64map__find(&m->threads, pid)) != NULL) {
		struct thread *t = (struct thread *)(uintptr_t)*v;

		if (t->nr_comms)
			return t->comms[t->nr_comms - 1].str;
	}
	snprintf(buf, sizeof(buf), ":%u", tid);
	return profile__intern_str(m->profile, buf);
}
