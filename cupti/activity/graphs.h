/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph nodes, for the capture-site attribution of replayed work
 * (format: XPU_REC_GPU_GRAPH_NODE). CUPTI's resource callbacks tell us when
 * a kernel, memcpy or memset node is created (stream capture, the
 * cudaGraphAdd*Node calls) and when it is cloned (instantiation,
 * cudaGraphClone, child graphs); replayed activity names its node id.
 *
 * A node created inside a marked API call (cudaLaunchKernel while a stream
 * is captured; the cudaGraphAdd* calls are marked by default) records that
 * call's correlation ID: its marker already took the stack. A node created
 * anywhere else calls the marker itself with (node id, node type,
 * XPU_API_GRAPH_NODE), so the capture site always has a stack. Clones only
 * record where they come from: no stack.
 *
 * Does not include cupti.h: the CUPTI glue (cupti/cupti_callbacks.c) reads the ids
 * from CUpti_GraphData; the fake CUPTI library of the tests calls this
 * directly.
 */
#ifndef XPU_CUPTI_GRAPHS_H
#define XPU_CUPTI_GRAPHS_H

#include <stdbool.h>
#include <stdint.h>

struct xpu_client;

/* CUgraphNodeType values of the nodes that produce GPU activity. */
#define XPU_GRAPH_NODE_KERNEL	0
#define XPU_GRAPH_NODE_MEMCPY	1
#define XPU_GRAPH_NODE_MEMSET	2

struct xpu_graph_node_ev {
	uint64_t time;			/* CLOCK_MONOTONIC ns */
	uint64_t node_id;
	uint64_t orig_node_id;		/* cloned: the node it copies */
	uint64_t api_corr;		/* the marked API call in progress on this thread; 0: none */
	uint32_t graph_id, orig_graph_id;
	uint32_t node_type;		/* CUgraphNodeType */
	bool cloned;
};

/* Whether nodes of this type are recorded (kernel, memcpy, memset). */
bool xpu_graphs__wanted(uint32_t node_type);

/* One node created or cloned, on the thread that created it: queues its
 * GPU_GRAPH_NODE record and, for a node created outside a marked call,
 * calls the marker. Returns 0, or -ENOSPC when the queue dropped it. */
int xpu_graphs__node(struct xpu_client *c, uint32_t pid, uint32_t tid,
		     const struct xpu_graph_node_ev *ev);

#endif
