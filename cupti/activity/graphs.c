// SPDX-License-Identifier: MIT
/* CUDA graph nodes; see graphs.h. */
#include "format/xpu_format.h"
#include "cupti/channel/wire.h"
#include "cupti/channel/client.h"
#include "graphs.h"

bool xpu_graphs__wanted(uint32_t node_type)
{
	return node_type == XPU_GRAPH_NODE_KERNEL || node_type == XPU_GRAPH_NODE_MEMCPY ||
	       node_type == XPU_GRAPH_NODE_MEMSET;
}

int xpu_graphs__node(struct xpu_client *c, uint32_t pid, uint32_t tid,
		     const struct xpu_graph_node_ev *ev)
{
	struct xpu_gpu_graph_node n = {
		.time = ev->time, .node_id = ev->node_id, .pid = pid, .tid = tid,
		.graph_id = ev->graph_id, .node_type = ev->node_type,
	};

	if (ev->cloned) {
		n.orig_node_id = ev->orig_node_id;
		n.orig_graph_id = ev->orig_graph_id;
		n.flags = XPU_GRAPH_NODE_CLONED;
	} else if (ev->api_corr) {
		n.api_correlation_id = ev->api_corr;
	} else {
		/* the uprobe on the marker writes GPU_CORR (XPU_API_GRAPH_NODE) */
		xpu_cupti_marker(ev->node_id, ev->node_type, XPU_API_GRAPH_NODE);
		n.flags = XPU_GRAPH_NODE_STACK;
	}
	return xpu_client__add(c, XPU_REC_GPU_GRAPH_NODE, &n, sizeof(n));
}
