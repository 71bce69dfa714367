/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges in the report (issue 9 part 4): a session tool that reads the
 * GPU_NVTX records and the push stacks (GPU_CORR of domain XPU_API_NVTX)
 * and, as a session stack filter, puts an "[nvtx]message" frame into every
 * CPU stack of a thread inside one of its push/pop ranges, and into the
 * launch stack of GPU work launched from inside one.
 *
 *  pass 1       STRING names per (pid, id), the ranges, the number of push
 *               stacks.
 *  pass1_done   per thread, its push/pop ranges sorted by start with the
 *               enclosing range of each (so the ranges open at a time are
 *               one walk up from the last one started); then, when frames
 *               are on, one more read of the trace that resolves the push
 *               stacks (they must be known before the first sample of
 *               pass 2 that falls in their range, and the trace does not
 *               promise they come first).
 *  filter       for thread T at time t: each push/pop range R of T with
 *               start <= t < end (end 0: never closed), outermost first,
 *               gets its frame inserted after the deepest frame the stack
 *               shares with R's push stack (the push stack cut where CUDA,
 *               CUPTI, our library or an nvtx* function begins). Without a
 *               push stack the frame goes after the root. Nested ranges
 *               nest: an inner range never goes above an outer one.
 *
 * A push/pop range whose end was not recorded (end 0; issue 31: NCCL's pops
 * through NVTX's payload extension, unseen by older recorders) must not
 * swallow its thread's later samples: with a push stack it applies only to
 * stacks that hold the whole push stack (the code that pushed it still
 * runs); without one it ends where its thread next pushed a range in its
 * domain, else it lasts to the end. --header counts and names them.
 *
 * Start/end ranges are not thread-scoped: they are counted and listed in
 * --header, never put into stacks. Marks are counted.
 *
 * Frame names: "[nvtx]message", "[nvtx]domain:message" for a non-default
 * domain. PyTorch's emit_nvtx() messages carry per-call details
 * ("aten::mm, seq = 12, op_id = 3, sizes = [[2, 3]]"): the name stops before
 * them, so one op is one frame.
 */
#ifndef XPU_REPORT_GPU_NVTX_H
#define XPU_REPORT_GPU_NVTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report/session/session.h"

#define GPU_NVTX_TOOL	"nvtx"
#define GPU_NVTX_MODULE	"[nvtx]"

struct gpu_nvtx_stats {
	uint64_t pushpop;		/* push/pop ranges */
	uint64_t startend;		/* start/end ranges */
	uint64_t marks;
	uint64_t never_closed;		/* ranges with end 0 (of the two kinds above) */
	uint64_t unclosed_stack;	/* push/pop ones with a push stack: only on
					 * stacks inside the code that pushed them */
	uint64_t unclosed_cut;		/* ... without: cut at their thread's next push
					 * in their domain */
	uint64_t unclosed_open;		/* ... without, and no later push: open to the end */
	uint64_t bad;			/* no kind, or end before start: left out */
	uint64_t push_records;		/* GPU_CORR records of domain XPU_API_NVTX */
	uint64_t push_stacks;		/* push/pop ranges whose push stack was resolved */
};

struct gpu_nvtx_row {			/* one line of the --header table */
	char *name;			/* "domain:message" or "message" */
	uint64_t count;			/* closed ranges */
	uint64_t total_ns, max_ns;
};

struct gpu_nvtx;

/* Registers the tool GPU_NVTX_TOOL in s before session__pass1 (a second
 * call returns the first one); frames: add the stack filter that puts the
 * [nvtx] frames into stacks (only the first call decides). */
struct gpu_nvtx *gpu_nvtx__attach(struct session *s, bool frames);
struct gpu_nvtx *gpu_nvtx__find(const struct session *s);
const struct gpu_nvtx_stats *gpu_nvtx__stats(const struct gpu_nvtx *nv);

/* One push/pop or start/end range, as a timeline shows it. */
struct gpu_nvtx_range {
	uint64_t start, end;		/* end 0: never closed */
	uint32_t pid, tid;		/* tid: the thread that pushed or started it */
	uint32_t depth;			/* push/pop nesting depth */
	bool startend;			/* a start/end range (may end on another thread) */
	const char *message;		/* the whole message, NULL when none; valid
					 * until session__close() */
};
/* The ranges, after pass 1 (marks are only counted); range i with its
 * label ("domain:message", cut as the frames are) into label. */
size_t gpu_nvtx__nr_ranges(const struct gpu_nvtx *nv);
void gpu_nvtx__range(const struct gpu_nvtx *nv, size_t i, struct gpu_nvtx_range *r,
		     char *label, size_t size);

/* The closed ranges (push/pop and start/end) per name, by total time; valid
 * until session__close(). */
const struct gpu_nvtx_row *gpu_nvtx__rows(struct gpu_nvtx *nv, size_t *nr);

/* "domain:message" (domain NULL: the default domain), the message cut
 * before PyTorch's per-call details. */
void gpu_nvtx__label(const char *domain, const char *message, char *buf, size_t size);

/* The --header section: counts and the top 20 names by total time, when the
 * trace has NVTX records. header prepare: attaches the tool (no frames). */
int gpu_nvtx__header_prepare(struct session *s);
int gpu_nvtx__header(const struct session *s, FILE *fp);

#endif
