// SPDX-License-Identifier: MIT
/* CUDA graph capture sites; see gpu_graph.h. */
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/gpu/gpu_graph.h"

/* Clone chains are short (capture -> instantiate, maybe a cudaGraphClone or
 * a child graph in between): a longer one is a damaged trace. */
#define GPU_GRAPH_MAX_HOPS	32

struct gpu_graph_key {
	uint64_t node_id;
	uint32_t pid;
	uint32_t zero;			/* no padding bytes in the key */
};

struct gpu_graph_node {
	uint64_t orig_node_id;		/* cloned from; 0: created */
	bool cloned;
	struct gpu_graph_site site;
};

int gpu_graph_attr__parse(const char *s)
{
	if (!strcmp(s, "both"))
		return GPU_GRAPH_BOTH;
	if (!strcmp(s, "capture"))
		return GPU_GRAPH_CAPTURE;
	if (!strcmp(s, "launch"))
		return GPU_GRAPH_LAUNCH;
	return -1;
}

void gpu_graphs__init(struct gpu_graphs *gg)
{
	memset(gg, 0, sizeof(*gg));
	bmap__init(&gg->nodes);
}

void gpu_graphs__exit(struct gpu_graphs *gg)
{
	bmap__exit(&gg->nodes, free);
}

static struct gpu_graph_node *gpu_graphs__node(struct gpu_graphs *gg, uint32_t pid,
					       uint64_t node_id, bool create)
{
	struct gpu_graph_key k = { .node_id = node_id, .pid = pid };
	void **slot;
	bool found;

	if (!create)
		return bmap__find(&gg->nodes, &k, sizeof(k));
	slot = bmap__slot(&gg->nodes, &k, sizeof(k), &found);
	if (!found)
		*slot = xzalloc(sizeof(struct gpu_graph_node));
	return *slot;
}

void gpu_graphs__add_node(struct gpu_graphs *gg, const struct xpu_gpu_graph_node *n)
{
	struct gpu_graph_node *node;

	if (!n->node_id)
		return;
	node = gpu_graphs__node(gg, n->pid, n->node_id, true);
	if (n->flags & XPU_GRAPH_NODE_CLONED) {
		gg->stats.cloned++;
		if (n->orig_node_id && n->orig_node_id != n->node_id) {
			node->cloned = true;
			node->orig_node_id = n->orig_node_id;
		}
		return;
	}
	gg->stats.created++;
	if (n->api_correlation_id)
		node->site.api_corr = n->api_correlation_id;
}

void gpu_graphs__add_stack(struct gpu_graphs *gg, const struct xpu_gpu_corr *c)
{
	struct gpu_graph_node *node;

	if (!c->correlation_id)
		return;
	node = gpu_graphs__node(gg, c->pid, c->correlation_id, true);
	if (node->site.own_stack)	/* the first one counts, as for correlation records */
		return;
	node->site.own_stack = true;
	node->site.time = c->time;
	node->site.tid = c->tid;
}

struct gpu_graph_site *gpu_graphs__site(struct gpu_graphs *gg, uint32_t pid, uint64_t node_id)
{
	struct gpu_graph_node *node = gpu_graphs__node(gg, pid, node_id, false);

	for (int hop = 0; node && node->cloned && hop < GPU_GRAPH_MAX_HOPS; hop++) {
		struct gpu_graph_node *orig = gpu_graphs__node(gg, pid, node->orig_node_id, false);

		if (!orig)
			break;		/* the original's creation was not recorded */
		node = orig;
	}
	return node ? &node->site : NULL;
}

struct gpu_graph_site *gpu_graphs__own(struct gpu_graphs *gg, uint32_t pid, uint64_t node_id)
{
	struct gpu_graph_node *node = gpu_graphs__node(gg, pid, node_id, false);

	return node && node->site.own_stack ? &node->site : NULL;
}
