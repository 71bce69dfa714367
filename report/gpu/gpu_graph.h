/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph capture sites (issue 12): the table of graph nodes of a trace
 * (XPU_REC_GPU_GRAPH_NODE) and, for a replayed kernel, memcpy or memset that
 * names its node, the node it was created as, by following clones back.
 * The join (gpu_join.c) asks for the stack of that creation: the
 * correlation record of the marked API call it happened in, or the node's
 * own GPU_CORR (XPU_API_GRAPH_NODE).
 */
#ifndef XPU_REPORT_GPU_GRAPH_H
#define XPU_REPORT_GPU_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "format/xpu_format.h"

/* --graph-attribution: where replayed graph work goes in the profile. */
enum gpu_graph_attr {
	GPU_GRAPH_BOTH,			/* launch stack, [graph replay], capture stack */
	GPU_GRAPH_CAPTURE,		/* capture stack, [graph replay] */
	GPU_GRAPH_LAUNCH,		/* launch stack only (before 1.4) */
};
/* "both", "capture", "launch" -> the mode; -1 for anything else. */
int gpu_graph_attr__parse(const char *s);

/* Where a node was created. */
struct gpu_graph_site {
	uint64_t api_corr;		/* created in this marked call (its GPU_CORR); 0: none */
	uint64_t time;			/* of its own stack record (own_stack) */
	uint32_t tid;
	uint32_t stack, raw;		/* own stack, resolved: filtered / unfiltered (+ API frame) */
	bool own_stack;			/* a GPU_CORR (XPU_API_GRAPH_NODE) was recorded for it */
	bool used;			/* replayed work needs it: resolve in pass 2 */
	bool resolved;
};

struct gpu_graph_stats {
	uint64_t created;		/* GPU_GRAPH_NODE records: created */
	uint64_t cloned;		/* ... cloned */
	uint64_t replayed;		/* GPU work with a graph node id */
	uint64_t with_site;		/* ... whose capture site has a stack */
	double replayed_ns, with_site_ns;
};

struct gpu_graphs {
	struct bmap nodes;		/* (pid, node id) -> struct gpu_graph_node * */
	struct gpu_graph_stats stats;
};

void gpu_graphs__init(struct gpu_graphs *gg);
void gpu_graphs__exit(struct gpu_graphs *gg);
/* Pass 1: a GPU_GRAPH_NODE record; a GPU_CORR record of XPU_API_GRAPH_NODE. */
void gpu_graphs__add_node(struct gpu_graphs *gg, const struct xpu_gpu_graph_node *n);
void gpu_graphs__add_stack(struct gpu_graphs *gg, const struct xpu_gpu_corr *c);
/* The creation site of (pid, node id): clones followed back to the node
 * that was created (at most a fixed number of steps: a cycle in a damaged
 * trace ends there). NULL when the trace does not know the node. */
struct gpu_graph_site *gpu_graphs__site(struct gpu_graphs *gg, uint32_t pid, uint64_t node_id);
/* The site whose own stack this GPU_CORR (XPU_API_GRAPH_NODE) record is. */
struct gpu_graph_site *gpu_graphs__own(struct gpu_graphs *gg, uint32_t pid, uint64_t node_id);

#endif
