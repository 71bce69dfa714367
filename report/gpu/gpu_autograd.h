/* SPDX-License-Identifier: MIT */
/*
 * PyTorch's backward pass under the forward code that caused it
 * (Documentation/design-autograd.md): the GPU join's helper that reads the
 * AUTOGRAD records (format 1.7) and rewrites a backward launch's stack.
 *
 *  pass 1       each NODE record (a forward op made an autograd node) with
 *               the Python frames of the PY_STACK right before it, by
 *               (pid, sequence number), the first one kept (a node with
 *               several outputs is seen once per output); each EVAL record
 *               (the backward pass began running a node) per thread.
 *  pass1_done   each thread's EVALs sorted by time.
 *  stack        a launch whose stack runs inside
 *               torch::autograd::Engine::evaluate_function: the node that
 *               thread began last before the launch; if its forward op
 *               had Python frames, the stack becomes those frames
 *               (outermost first), an "[autograd backward]" frame, then
 *               the launch's own frames from evaluate_function on (the
 *               engine thread's start above it goes). Anything else is
 *               left as it is.
 *  filter       the same for CPU samples and off-CPU stacks (a session
 *               stack filter, after pass 1), so the backward thread's CPU
 *               time in a node sits under the node's forward code too.
 *
 * Nested backward passes on one thread (reentrant checkpointing) are
 * taken innermost first: a launch after an inner pass returned, still in
 * the outer node, is put under the inner node's forward code.
 */
#ifndef XPU_REPORT_GPU_AUTOGRAD_H
#define XPU_REPORT_GPU_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "format/reader.h"

struct session;

struct gpu_autograd_stats {
	uint64_t nodes, evals;		/* records read (nodes: distinct) */
	uint64_t nodes_py;		/* nodes with Python frames */
	uint64_t launches;		/* launch stacks inside evaluate_function */
	uint64_t moved;			/* of them put under their forward code */
	uint64_t no_eval, no_node;	/* left: no EVAL before it, its node unseen */
	uint64_t cpu_moved;		/* CPU samples and off-CPU stacks moved (the filter) */
};

struct gpu_autograd {
	struct bmap nodes;		/* (seq, pid) -> index into node + 1 */
	struct ag_node *node;
	size_t nr_node, node_cap;
	struct u64map threads;		/* pid << 32 | tid -> struct ag_thread * */
	/* the PY_STACK read last, for the record after it */
	uint8_t *py;
	size_t py_len, py_cap;
	struct u64map eval_frames;	/* frame id -> 1 + is evaluate_function */
	struct u64map eval_at;		/* stack id -> its innermost evaluate_function + 2; 1: none */
	uint32_t marker;		/* "[autograd backward]" frame + 1 */
	struct gpu_autograd_stats stats;
};

void gpu_autograd__init(struct gpu_autograd *a);
void gpu_autograd__exit(struct gpu_autograd *a);
/* Pass 1: PY_STACK and AUTOGRAD records (others are ignored). */
void gpu_autograd__pass1(struct gpu_autograd *a, const struct xpu_record *rec);
void gpu_autograd__prepare(struct gpu_autograd *a);
/* Pass 2: the launch stack base of (pid, tid) at time, moved under its
 * forward code where it belongs to a backward node, or base. */
uint32_t gpu_autograd__stack(struct gpu_autograd *a, struct session *s, uint32_t pid, uint32_t tid,
			     uint64_t time, uint32_t base);

/* After pass 1: the same move for CPU samples and off-CPU stacks of the
 * backward threads, as a session stack filter (when the trace has EVALs). */
void gpu_autograd__add_filter(struct gpu_autograd *a, struct session *s);

#endif
