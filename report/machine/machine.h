/* SPDX-License-Identifier: MIT */
/*
 * The traced system as the sideband records describe it (perf's "machine"):
 * processes with their mapping timelines, threads with their comm timelines,
 * kernel symbols, JIT symbols. Filled in pass 1, queried in pass 2.
 *
 * Map lookup for (pid, addr, time): the mapping covering addr that was
 * created latest at or before time and not replaced by an exec of that pid
 * in between. A process created by fork sees the maps its parent had at the
 * fork (until it execs); threads use their process's maps. When timestamps
 * disagree (no mapping is valid at that time) any covering mapping is used,
 * newest first, and the fallback is counted.
 */
#ifndef XPU_REPORT_MACHINE_H
#define XPU_REPORT_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "report/symbols/dso.h"
#include "report/symbols/symbol.h"

struct map {
	uint64_t start, end;		/* [start, end) */
	uint64_t pgoff;
	uint64_t time;			/* when it was created */
	struct dso *dso;
	uint64_t bias;			/* runtime = vaddr + bias; valid when bias_known */
	bool bias_known;
	uint32_t seq;			/* order of arrival in the trace */
};

struct comm_event {
	uint64_t time;
	uint32_t str;			/* profile string id */
	bool exec;
};

struct thread {
	uint32_t tid, pid;
	struct comm_event *comms;	/* sorted by time after machine__finish() */
	size_t nr_comms, comms_cap;
	uint32_t parent_tid;		/* comm inherited from here when it has none */
	uint64_t fork_time;		/* ... as it was then */
	bool has_parent;
};

struct proc {
	uint32_t pid;
	struct map *maps;		/* sorted by time after machine__finish() */
	size_t nr_maps, maps_cap;
	uint64_t *execs;		/* exec times, sorted */
	size_t nr_execs, execs_cap;
	uint32_t ppid;			/* forked from this process ... */
	uint64_t fork_time;		/* ... at this time */
	bool has_parent;
	struct symtab jit;		/* /tmp/perf-PID.map symbols */
	void *unwind;			/* owned by report/unwind/unwind.c */
	void *callchain;		/* owned by report/unwind/callchain.c */
};

struct machine {
	struct u64map procs;		/* pid -> struct proc * */
	struct u64map threads;		/* tid -> struct thread * */
	struct dsos dsos;
	struct symtab ksyms;
	struct profile *profile;	/* for interning comm strings */
	uint32_t map_seq;
	uint64_t map_fallbacks;		/* lookups that used the any-time fallback */
	void *unwind;			/* owned by report/unwind/unwind.c */
};

struct profile;
void machine__init(struct machine *m, struct profile *p);
void machine__exit(struct machine *m);

struct proc *machine__proc(struct machine *m, uint32_t pid);		/* findnew */
struct proc *machine__find_proc(const struct machine *m, uint32_t pid);
struct thread *machine__thread(struct machine *m, uint32_t pid, uint32_t tid);	/* findnew */

void machine__add_mmap(struct machine *m, uint32_t pid, uint64_t time, uint64_t start,
		       uint64_t len, uint64_t pgoff, const char *path,
		       const uint8_t *build_id, size_t build_id_size);
void machine__add_comm(struct machine *m, uint32_t pid, uint32_t tid, uint64_t time,
		       const char *comm, bool exec);
void machine__add_fork(struct machine *m, uint32_t pid, uint32_t tid, uint32_t ppid,
		       uint32_t ptid, uint64_t time);
void machine__add_ksym(struct machine *m, uint64_t addr, uint64_t size, const char *name);
void machine__add_jit(struct machine *m, uint32_t pid, uint64_t start, uint64_t size,
		      const char *name);

/* Sorts timelines and symbol tables; call once after pass 1. */
void machine__finish(struct machine *m);

/* The mapping of pid covering addr at time (see the header comment). */
struct map *machine__find_map(struct machine *m, uint32_t pid, uint64_t addr, uint64_t time);
/* The same without the any-time fallback: only a mapping valid at time. */
struct map *machine__find_valid_map(struct machine *m, uint32_t pid, uint64_t addr,
				    uint64_t time);

/* Calls cb for every mapping valid in pid at time (own maps newest first,
 * then inherited ones). Stops when cb returns non-zero, and returns that. */
int machine__for_each_map(struct machine *m, uint32_t pid, uint64_t time,
			  int (*cb)(struct map *map, void *arg), void *arg);

/* The times [*lo, *hi] around time over which the set of mappings valid
 * for pid (machine__for_each_map()) stays the same. */
void machine__maps_span(const struct machine *m, uint32_t pid, uint64_t time,
			uint64_t *lo, uint64_t *hi);

/* The load bias of a mapping, loading its DSO on first use. false: no ELF. */
bool machine__map_bias(struct machine *m, struct map *map, uint64_t *bias);

/* Comm string id of tid at time (inherited from the parent, else ":tid"). */
uint32_t machine__comm(struct machine *m, uint32_t pid, uint32_t tid, uint64_t time);

#endif
