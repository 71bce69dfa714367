/* SPDX-License-Identifier: MIT */
/*
 * The CPU->GPU join (issue 3, report side): a session_tool that gives every
 * GPU kernel, memcpy, memset and synchronization the CPU stack of the CUDA
 * API call that caused it, and adds it to the profile as ORIGIN_GPU weight
 * (duration_ns * sample_freq / 1e9 samples). Design notes:
 * Documentation/design-gpu-join.md.
 *
 *  pass 1   GPU activity (compact), STRING names per (pid, id), API records
 *           per (pid, correlation id), the set of (pid, correlation id) that
 *           have a correlation record, devices.
 *  pass 2   correlation records: stack resolved, trimmed at the CUDA entry
 *           point, through the session's stack filters (NVTX frames; with
 *           the launching thread and time), API frame appended, interned.
 *           CPU samples that fall inside an API call lacking a correlation
 *           record (timestamp fallback).
 *  finish   the join: by ID, else by time (that stack through the filters
 *           too), else "[unknown CPU stack]".
 *
 * Correlation IDs are CUPTI's 32-bit IDs, unique per process: the join keys
 * on (pid, correlation id). Larger IDs are counted and left unmatched.
 */
#ifndef XPU_REPORT_GPU_H
#define XPU_REPORT_GPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"
#include "report/session/session.h"

struct gpu_pcsamp;

enum gpu_kind { GPU_KIND_KERNEL, GPU_KIND_MEMCPY, GPU_KIND_MEMSET, GPU_KIND_SYNC, GPU_KIND_NR };

/* How a piece of GPU work found its CPU stack. */
enum gpu_match {
	GPU_MATCH_ID,			/* correlation record with the same (pid, id) */
	GPU_MATCH_TIME,			/* API record + CPU samples inside its interval */
	GPU_MATCH_NONE,			/* neither: "[unknown CPU stack]" */
};

/*
 * One joined piece of GPU work, as the join hands it to its subscribers
 * (the profile is one; a timeline or an idle-time analysis are others).
 * Stack and frame ids are the session profile's. Only work that passes the
 * session's filters is delivered; the join counts the rest.
 */
struct gpu_event {
	enum gpu_kind kind;
	enum gpu_match match;
	uint32_t pid, tid;		/* the launching thread; tid 0 when unknown */
	uint32_t comm;			/* profile string id of the launcher's comm */
	uint32_t device;		/* CUDA ordinal; 0 for sync records (none recorded) */
	uint32_t stream;		/* ~0u when not stream-scoped (some syncs) */
	uint64_t start, end;		/* GPU time, CLOCK_MONOTONIC ns */
	uint64_t correlation_id;
	uint64_t launch_time;		/* CPU time of the API call; 0 when unknown */
	uint32_t cpu_stack;		/* the CPU stack + API frame (no GPU leaf) */
	uint32_t leaf;			/* the GPU leaf frame ("[GPU_Kernel]name", ...) */
	uint32_t stack;			/* cpu_stack + leaf: what the profile is given */
	uint32_t graph_id;		/* 0: not launched from a graph */
	uint64_t graph_node_id;
	uint64_t bytes;			/* memcpy / memset */
	uint32_t sub;			/* memcpy: copy kind; sync: CUPTI sync type */
	uint32_t name_id;		/* kernel: STRING id of its name in pid; else 0 */
	const char *name;		/* kernel: mangled name from the trace, or NULL;
					 * valid until session__close() */
	uint64_t ns;			/* GPU time: end - start, less what PC sampling added
					 * to a sampled kernel (gpu_pcsamp_perturb.h) */
	double weight;			/* GPU time in samples: ns * sample_freq / 1e9 */
	bool filtered;			/* left out by the filters (gpu_join__subscribe_all only) */
};

/* A subscriber; called once per delivered event, in trace order, from the
 * join's finish (after pass 2). */
typedef void (*gpu_event_fn)(struct session *s, const struct gpu_event *ev, void *priv);

struct gpu_kind_stats {
	uint64_t by_id;			/* GPU_MATCH_ID */
	uint64_t by_time;		/* GPU_MATCH_TIME */
	uint64_t unmatched;		/* GPU_MATCH_NONE */
	uint64_t filtered;		/* joined, then left out by --pid/--tid/--comm/--time */
	uint64_t ns;			/* total duration */
};

struct gpu_join_stats {
	struct gpu_kind_stats kind[GPU_KIND_NR];
	uint64_t corr_records;
	uint64_t corr_duplicates;	/* same (pid, id) seen again: first one kept */
	uint64_t corr_bad;		/* malformed stack part, or id >= 2^32 */
	uint64_t corr_unused;		/* correlation records no activity refers to */
	uint64_t api_records;
	uint64_t ts_samples;		/* CPU samples kept for the timestamp join */
	uint64_t ts_samples_dropped;	/* over GPU_TS_SAMPLES_MAX */
	uint64_t acts_no_time;		/* activity left out: a start of 0 or ~0, an
					 * end of ~0 (unfinished when CUPTI flushed) */
};

#define GPU_JOIN_TOOL "gpu-join"

struct gpu_join;

/* Creates the join and registers it in s (before session__pass1) as the
 * tool GPU_JOIN_TOOL; the session frees it. The profile is subscribed. */
struct gpu_join *gpu_join__attach(struct session *s);
/* Adds a subscriber to the joined events (before session__pass2). */
void gpu_join__subscribe(struct gpu_join *g, gpu_event_fn fn, void *priv);
/* The same, but also handed the work the filters leave out (ev->filtered):
 * for analyses that need every kernel of a device, whoever launched it. */
void gpu_join__subscribe_all(struct gpu_join *g, gpu_event_fn fn, void *priv);
/* Asks pass 2 to resolve the correlation record of (pid, id) even if no GPU
 * activity refers to it (a synchronizing call); from a tool's pass1_done(). */
void gpu_join__want_corr(struct gpu_join *g, uint32_t pid, uint64_t id);
/* The CPU stack + API frame of the API call (pid, id) from its correlation
 * record, and its thread, once pass 2 resolved it; false when there is none. */
bool gpu_join__call_stack(const struct gpu_join *g, uint32_t pid, uint64_t id,
			  uint32_t *stack, uint32_t *tid);
/* --graph-attribution (enum gpu_graph_attr, gpu_graph.h; default both),
 * before session__pass1. */
void gpu_join__set_graph_attribution(struct gpu_join *g, int mode);
/* --no-autograd: PyTorch backward launches keep their own stacks, not the
 * forward op's Python code (gpu_autograd.h); on by default. */
void gpu_join__set_autograd(struct gpu_join *g, bool on);
/* Kernels split by their PC samples (gpu_pcsamp.h): on unless --no-pc-sampling. */
void gpu_join__set_pc_sampling(struct gpu_join *g, bool on);
/* --cubins DIR: *.cubin files for the lines of PC samples the trace has no
 * cubin for (gpu_fatbin.h); NULL: none. */
void gpu_join__set_cubins_dir(struct gpu_join *g, const char *dir);
/* A kernel event's GPU PC sample shares (its stack + [sass] + [stall], the
 * weight, the fraction of the event's): fn once per share, for a
 * subscriber that keeps its own rows (pprof). false: no shares, no call. */
bool gpu_join__pc_split(struct session *s, const struct gpu_event *ev,
			void (*fn)(void *priv, uint32_t stack, double weight, double frac),
			void *priv);
/* The PC samples and cubins (gpu_pcsamp.h), for annotate (gpu_annotate.h),
 * and the mangled name of a kernel (pid, name id) (NULL: unknown). */
const struct gpu_pcsamp *gpu_join__pcsamp(const struct gpu_join *g);
const char *gpu_join__kernel_name(const struct gpu_join *g, uint32_t pid, uint32_t name_id);
/* Graph nodes recorded, replayed work and how much of it found its capture
 * site (after the join). */
struct gpu_graph_stats;
const struct gpu_graph_stats *gpu_join__graph_stats(const struct gpu_join *g);
/* The join registered in s, or NULL. */
struct gpu_join *gpu_join__find(const struct session *s);
const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *g);
/* Whether the trace holds GPU activity (known after pass 1). */
bool gpu_join__has_activity(const struct gpu_join *g);

/* The GPU section of --header: join counts per kind, CUPTI / correlation /
 * channel losses, subscriber conflict, devices. Prints nothing for traces
 * without GPU data. Returns 0 or -EIO. */
int gpu__header(const struct session *s, FILE *fp);

/* ---- frames (gpu_frames.c) ------------------------------------------------ */

/* CUDA API name of a CUPTI callback id (XPU_API_RUNTIME / XPU_API_DRIVER),
 * without version suffixes; NULL when unknown. */
const char *gpu_cbid__name(uint32_t domain, uint32_t cbid);
/* Every CUDA runtime and driver API name, for gpu_cbid__is_api(). */
struct gpu_api_names {
	struct bmap names;
};
void gpu_api_names__init(struct gpu_api_names *a);
void gpu_api_names__exit(struct gpu_api_names *a);

/* Whether name (a symbol, demangled or not) is a CUDA runtime/driver API. */
bool gpu_cbid__is_api(const struct gpu_api_names *a, const char *name);

extern const char *const gpu_cbid_runtime[];
extern const unsigned gpu_cbid_runtime_size;
extern const char *const gpu_cbid_driver[];
extern const unsigned gpu_cbid_driver_size;

/* Where a stack (root first) enters CUDA: the index of the outermost frame
 * that is in a CUDA library (libcudart, libcuda, libcupti, libxpu-cupti, the
 * module of the xpu_cupti_marker frame) or is a CUDA API function (by name).
 * Returns n when there is none. */
size_t gpu__stack_cut(const struct profile *p, const struct gpu_api_names *a,
		      const uint32_t *frames, size_t n);

/* The FRAME_GPU_API frame for (domain, cbid): "cudaLaunchKernel", or
 * "cuda_api_<cbid>" / "cuda_driver_api_<cbid>" for ids not in the table. */
uint32_t gpu__api_frame(struct profile *p, uint32_t domain, uint32_t cbid);
/* "[unknown CPU stack]": the root when no CPU stack could be joined. */
uint32_t gpu__unknown_frame(struct profile *p);
/* Replayed CUDA graph work (--graph-attribution): "[graph replay]" between
 * the launch and the capture site, "[unknown capture site]" when the trace
 * does not hold it, and "[graph node]", the API frame of a node created
 * outside any marked call. */
uint32_t gpu__graph_replay_frame(struct profile *p);
uint32_t gpu__graph_unknown_site_frame(struct profile *p);
uint32_t gpu__graph_node_frame(struct profile *p);
/* Leaf frames: "[GPU_Kernel]demangled", "[GPU_Memcpy HtoD]", "[GPU_Memset]",
 * "[GPU_Sync]StreamSynchronize". kernel_name may be NULL (unknown). */
uint32_t gpu__kernel_frame(struct profile *p, const char *kernel_name);
uint32_t gpu__memcpy_frame(struct profile *p, uint32_t copy_kind);
uint32_t gpu__memset_frame(struct profile *p);
uint32_t gpu__sync_frame(struct profile *p, uint32_t type);

const char *gpu_kind__name(enum gpu_kind kind);

#endif
