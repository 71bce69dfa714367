/* SPDX-License-Identifier: MIT */
/*
 * The profile model: what every output (folded, stdio, the TUI) reads and
 * what every producer (CPU sample resolution, the GPU join) writes. Outputs
 * never look at trace records; producers never format text.
 *
 *  - Frames are interned: one id per distinct (kind, module, name). A frame
 *    is a function, not an instruction; per-instruction weight for annotate
 *    lives in the address histogram below.
 *  - Stacks are interned arrays of frame ids, ROOT FIRST (main ... leaf).
 *    Stack id 0 is the empty stack.
 *  - Entries are weights keyed by (stack, pid, tid, comm, origin). Weight is
 *    a double in *samples*: a CPU sample adds its record weight (1); GPU work
 *    adds duration_ns * sample_freq / 1e9; GPU memory (ORIGIN_GPU_MEM, a view
 *    of its own) adds bytes. Nothing is rounded until printed.
 *  - origin says whether an entry came from CPU sampling or GPU activity, so
 *    views (merged / cpu-only / gpu-only) filter entries, not frames.
 *
 * Strings handed in are copied (interned); pointers returned stay valid for
 * the life of the profile.
 */
#ifndef XPU_REPORT_PROFILE_H
#define XPU_REPORT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/hashmap.h"

enum frame_kind {
	FRAME_CPU_USER,
	FRAME_CPU_KERNEL,
	FRAME_GPU_KERNEL,
	FRAME_GPU_MEMCPY,
	FRAME_GPU_MEMSET,
	FRAME_GPU_SYNC,
	FRAME_GPU_API,		/* the CUDA API call that caused GPU work */
	FRAME_MARKER,		/* made by the report: "[off-cpu] futex_wait", "[GPU idle dev0]" */
	FRAME_NR_KINDS
};

struct frame {
	enum frame_kind kind;
	const char *name;	/* display name: demangled symbol, "mod+0x1f0", "[unknown]" */
	const char *module;	/* short module name ("libc.so.6", "[kernel.kallsyms]"); "" if none */
	uint64_t addr;		/* symbol start in the module's address space; 0 if unknown */
	bool unknown;		/* no symbol was found (name is a placeholder) */
	bool inlined;		/* "bar (inlined)": inlined into the frame above it */
};

/*
 * Source locations, kept beside the frames (profile_loc.c): a frame is a
 * function, so the file:line of each pc cannot be part of its identity
 * without splitting it. A resolved stack gets an interned location array,
 * a (frame, location id) pair per resolved frame (location 0: unknown), and
 * each entry the weight it got under each such array; an output lines the
 * array up with the entry's stack (profile__stack_locs: frames added after
 * resolving, like NVTX ranges, borrowed callers or the off-CPU reason,
 * have none), sums the weight per row or tree node and shows the heaviest
 * line (the hot line of a leaf, the hot call site of a caller).
 */
struct profile_loc {
	uint32_t file;		/* string id: the path as DWARF names it */
	uint32_t line;
};

struct profile_locw {		/* weight of an entry under one location array */
	uint32_t entry, locs;
	double weight;
};

/* Interned arrays of (frame id, value) pairs, both of one element size
 * (profile_loc.c): id -> [off, off + 2 * len) of the elements; id 0: none. */
struct profile_arrays {
	void *arr;			/* the elements */
	size_t nr_arr, arr_cap;		/* in elements */
	uint64_t *span;			/* off << 16 | len */
	size_t nr_span, span_cap;
	struct bmap ids;
	uint32_t memo;			/* the last id + 1: stacks repeat */
};

struct profile_lines {
	struct profile_loc *locs;	/* id -> (file, line); id 0: none */
	size_t nr_locs, locs_cap;
	struct bmap loc_ids;
	struct profile_arrays a;	/* location arrays: (frame, location id) pairs */
	struct profile_locw *w;		/* (entry, array) -> weight */
	size_t nr_w, w_cap;
	struct u64map w_ids;		/* entry << 32 | array -> index + 1 */
	uint32_t memo_w;		/* last index + 1 */
};

/*
 * Sampled addresses, kept only when an output asks (pprof: its locations
 * are addresses): per resolved stack an interned array of (frame id,
 * address) pairs, root first, the address being the pc looked up for that
 * frame in its module's address space (ELF vaddr; the sampled pc at the
 * leaf, the return address - 1 for a caller; the kernel address for kernel
 * frames; 0 where none: Python frames, no mapping). The frames of one pc
 * (a function and what is inlined there) share its address. Each entry
 * gets its weight per (location array, address array); nothing else reads
 * them, so the other outputs are the same whether they are kept or not.
 */
struct profile_pcw {
	uint32_t entry, locs, pcs;
	double weight;
};

struct profile_pcs {
	bool on;			/* keep them (profile__add_pcs does nothing else) */
	struct profile_arrays a;	/* (frame, address) pairs, 64 bits each */
	struct profile_pcw *w;		/* (entry, locs, pcs) -> weight */
	size_t nr_w, w_cap;
	struct bmap w_ids;
};

/* What an entry's weight measures. Each is a bit, so a view is a mask. */
enum entry_origin {
	ORIGIN_CPU = 1,		/* on-CPU samples */
	ORIGIN_GPU = 2,		/* GPU work under the stack that launched it */
	ORIGIN_OFFCPU = 4,	/* time blocked off CPU, under where it blocked */
	ORIGIN_GPU_IDLE = 8,	/* a GPU's idle time, under what its launchers did then */
	ORIGIN_SYNC_WAIT = 16,	/* time in synchronizing CUDA calls, under what they waited on */
	ORIGIN_GPU_MEM = 32,	/* GPU memory in bytes, under the stack that allocated it */
	ORIGIN_MAX = ORIGIN_GPU_MEM,
};

/* Which entries a view shows: a mask of ORIGIN_* bits. */
enum profile_view {
	VIEW_CPU = ORIGIN_CPU,
	VIEW_GPU = ORIGIN_GPU,
	VIEW_MERGED = ORIGIN_CPU | ORIGIN_GPU,	/* the default */
	VIEW_OFFCPU = ORIGIN_OFFCPU,
	VIEW_WALL = ORIGIN_CPU | ORIGIN_OFFCPU,	/* each thread sums to its wall time */
	VIEW_GPU_IDLE = ORIGIN_GPU_IDLE,
	VIEW_SYNC_WAIT = ORIGIN_SYNC_WAIT,
	VIEW_GPU_MEM = ORIGIN_GPU_MEM,	/* --gpu-memory: weights are bytes, counts blocks */
};

/* "CPU+GPU", "off-CPU", ...: a view's name for headers and the TUI. */
const char *profile_view__name(enum profile_view view);

struct profile_entry {
	uint32_t stack;		/* stack id */
	uint32_t pid, tid;
	uint32_t comm;		/* interned string id: profile__str() */
	uint32_t origin;	/* ORIGIN_* */
	double weight;		/* in samples */
	uint64_t count;		/* records merged into this entry */
};

struct profile {
	/* frames: id -> frame */
	struct frame *frames;
	size_t nr_frames, frames_cap;
	struct bmap frame_ids;		/* (kind, module, name) -> id+1 */

	/* stacks: id -> [off, len) into stack_frames */
	uint32_t *stack_frames;
	size_t nr_stack_frames, stack_frames_cap;
	uint64_t *stack_span;		/* off << 16 | len */
	size_t nr_stacks, stacks_cap;
	struct bmap stack_ids;		/* frame-id array -> id+1 */

	/* entries */
	struct profile_entry *entries;
	size_t nr_entries, entries_cap;
	struct bmap entry_ids;		/* key fields -> index+1 */

	/* strings (comms, names): id -> char * */
	char **strs;
	size_t nr_strs, strs_cap;
	struct bmap str_ids;

	/* per-instruction weight for annotate: (frame id, addr) -> double */
	struct bmap addr_hist;

	double total[ORIGIN_MAX + 1];	/* indexed by origin: [ORIGIN_CPU], [ORIGIN_GPU], ... */

	/* One-entry memos for the interning calls: consecutive samples mostly
	 * repeat the last stack, entry and leaf address, and hashing the keys
	 * was the largest per-sample cost on 10M-event traces. */
	uint32_t memo_stack;		/* stack id + 1; 0: none */
	uint32_t memo_entry;		/* entry index + 1; 0: none */
	uint32_t memo_entry_key[5];
	uint32_t memo_addr_frame;
	uint64_t memo_addr;
	double *memo_addr_w;		/* NULL: none */
	uint32_t max_depth;

	struct profile_lines lines;	/* source locations: profile_loc.c */
	struct profile_pcs pcs;		/* sampled addresses: profile_loc.c */
};

#define PROFILE_MAX_DEPTH 1024		/* deeper stacks keep their leaf-most part */

void profile__init(struct profile *p);
void profile__exit(struct profile *p);

/* Interns a string; returns its id. */
uint32_t profile__intern_str(struct profile *p, const char *s);
static inline const char *profile__str(const struct profile *p, uint32_t id)
{
	return p->strs[id];
}

/* Interns a frame (name and module are copied). Returns its id. */
uint32_t profile__intern_frame(struct profile *p, enum frame_kind kind,
			       const char *module, const char *name,
			       uint64_t addr, bool unknown);
static inline const struct frame *profile__frame(const struct profile *p, uint32_t id)
{
	return &p->frames[id];
}

/* Interns a stack given root first. Returns its id (0 for n == 0). */
uint32_t profile__intern_stack(struct profile *p, const uint32_t *frames, size_t n);
/* stack + frame at its leaf end, or frame + stack at its root end (the
 * leaf-most frames are kept when that passes PROFILE_MAX_DEPTH), interned;
 * memo caches (stack, frame) -> the result for callers that repeat them. */
uint32_t profile__append(struct profile *p, struct u64map *memo, uint32_t stack, uint32_t frame);
uint32_t profile__prepend(struct profile *p, struct u64map *memo, uint32_t frame, uint32_t stack);
/* Frames of a stack, root first; *n gets the count. */
const uint32_t *profile__stack(const struct profile *p, uint32_t id, size_t *n);

/* Adds weight to the entry (stack, pid, tid, comm, origin). */
void profile__add(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid,
		  uint32_t comm, enum entry_origin origin, double weight);

/* The same for count records at once (a memory row: its bytes and blocks). */
void profile__add_n(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid,
		    uint32_t comm, enum entry_origin origin, double weight, uint64_t count);

/* Per-instruction weight for the leaf frame (annotate). */
void profile__add_addr(struct profile *p, uint32_t frame, uint64_t addr, double weight);
/* Walks the per-instruction weights: *iter = 0 first; false at the end. */
bool profile__addr_next(const struct profile *p, size_t *iter, uint32_t *frame, uint64_t *addr,
			double *weight);
double profile__addr_weight(const struct profile *p, uint32_t frame, uint64_t addr);

/* ---- source locations (profile_loc.c) ---- */
/* Interns (file, line); returns its id (>= 1). */
uint32_t profile__intern_loc(struct profile *p, const char *file, uint32_t line);
static inline const struct profile_loc *profile__loc(const struct profile *p, uint32_t id)
{
	return &p->lines.locs[id];
}
/* Interns a location array: n (frame id, location id) pairs, root first, as
 * 2n ids. 0 when every location is 0. */
uint32_t profile__intern_locs(struct profile *p, const uint32_t *pairs, size_t n);
/* Its pairs (2 * *n ids). */
const uint32_t *profile__locs(const struct profile *p, uint32_t id, size_t *n);
/* The locations of the n frames of a stack from location array locs: out[i]
 * for frames[i], 0 for frames the array does not have (it is lined up in
 * order: frames in both, others skipped). */
void profile__stack_locs(const struct profile *p, uint32_t locs, const uint32_t *frames,
			 size_t n, uint32_t *out);
/* Adds weight under location array locs (0: nothing) to the entry the last
 * profile__add() added to: call it right after that. */
void profile__add_locs(struct profile *p, uint32_t locs, double weight);
/* Interns an address array: n (frame id, address) pairs, root first, as 2n
 * numbers; 0 when n is 0 or every address is 0. */
uint32_t profile__intern_pcs(struct profile *p, const uint64_t *pairs, size_t n);
/* Its pairs (2 * *n numbers). */
const uint64_t *profile__pcs(const struct profile *p, uint32_t id, size_t *n);
/* The addresses of the n frames of a stack from address array pcs, lined up
 * as profile__stack_locs() lines up locations (0 where the array has none). */
void profile__stack_pcs(const struct profile *p, uint32_t pcs, const uint32_t *frames, size_t n,
			uint64_t *out);
/* When p->pcs.on: adds weight under (location array locs, address array
 * pcs) to the entry the last profile__add() added to: call it right after. */
void profile__add_pcs(struct profile *p, uint32_t locs, uint32_t pcs, double weight);
/* "file.c:42" (the file's base name) into buf; "" for id 0. Returns buf. */
const char *profile__loc_str(const struct profile *p, uint32_t id, char *buf, size_t size);

/* Per key (a table row, a tree node) the location with the most weight.
 * Zeroed is empty. */
struct loc_vote {
	struct u64map w;		/* key << 32 | loc -> weight (double bits) */
};
void loc_vote__add(struct loc_vote *v, uint32_t key, uint32_t loc, double w);
/* best[key] for key < nr: the heaviest location, 0 where none. */
void loc_vote__best(struct loc_vote *v, uint32_t *best, size_t nr);
void loc_vote__exit(struct loc_vote *v);

/* Sum of weights of entries in the view. */
double profile__total(const struct profile *p, enum profile_view view);

static inline bool profile__in_view(const struct profile_entry *e, enum profile_view view)
{
	return (e->origin & (unsigned)view) != 0;
}

#endif
