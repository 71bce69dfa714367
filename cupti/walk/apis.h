/* SPDX-License-Identifier: MIT */
/*
 * Which CUDA API calls get a marker call (and so a CPU stack): the calls that
 * launch work, move memory or wait, that add nodes to a CUDA graph (their
 * stack is the capture site of the node: graphs.h), and the event and
 * stream queries: CUPTI
 * writes a SYNCHRONIZATION record for each query that completes (see
 * cuptiActivityEnableAllSyncRecords in cupti_activity.h), whose correlation
 * id is the query's; unmarked, those records had no CPU stack (issue 9). XPU_CUPTI_APIS_ENV overrides the default
 * with a comma-separated list of names; a trailing '*' matches a prefix
 * ("cudaMemcpy*"). Names are matched after removing CUPTI's version and
 * per-thread-stream suffixes ("cudaLaunchKernel_ptsz_v7000" ->
 * "cudaLaunchKernel"), so users write the names they call.
 *
 * Does not include cupti.h: the CUPTI glue feeds it cuptiGetCallbackName().
 */
#ifndef XPU_CUPTI_APIS_H
#define XPU_CUPTI_APIS_H

#include <stdbool.h>
#include <stddef.h>

#define XPU_CUPTI_APIS_DEFAULT						\
	"cudaLaunch*,cudaGraphLaunch*,cudaMemcpy*,cudaMemset*,cudaGraphAdd*,"	\
	"cudaDeviceSynchronize,cudaStreamSynchronize,cudaEventSynchronize,"	\
	"cudaStreamWaitEvent,cudaEventQuery,cudaStreamQuery,"		\
	"cuLaunch*,cuGraphLaunch*,cuMemcpy*,cuMemset*,cuGraphAdd*,"		\
	"cuCtxSynchronize,cuStreamSynchronize,cuEventSynchronize,cuStreamWaitEvent,"	\
	"cuEventQuery,cuStreamQuery"

#define XPU_APIS_MAX		64
#define XPU_APIS_SPEC_MAX	2048

struct xpu_apis {
	char spec[XPU_APIS_SPEC_MAX];	/* patterns point into this copy */
	const char *pat[XPU_APIS_MAX];
	size_t plen[XPU_APIS_MAX];	/* without the '*' */
	bool prefix[XPU_APIS_MAX];
	int n;
};

/* spec NULL: the default set. Returns 0, or -EINVAL when the list is too
 * long or holds too many names (the caller then warns and uses the default). */
int xpu_apis__parse(struct xpu_apis *a, const char *spec);

/* Writes name without CUPTI's suffixes into out (size outsz). */
void xpu_apis__normalize(const char *name, char *out, size_t outsz);

/* Does the CUPTI callback name (raw or normalized) match a pattern? */
bool xpu_apis__match(const struct xpu_apis *a, const char *cb_name);

/* Calls marked at their exit, and only when they return success: the
 * queries (cudaEventQuery, cudaStreamQuery, cuEventQuery, cuStreamQuery).
 * A polling loop calls them over and over; only a query that succeeds gets
 * a sync record, so one marker per record instead of one per poll. */
bool xpu_apis__mark_at_exit(const char *cb_name);

/* Calls that copy the nodes of a CUDA graph (instantiation, clone, exec
 * update): the nodes created inside them are copies, not capture sites
 * (graphs.h). */
bool xpu_apis__copies_graph(const char *cb_name);

#endif
