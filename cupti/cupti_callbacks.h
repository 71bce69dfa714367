/* SPDX-License-Identifier: MIT */
/*
 * CUPTI's callbacks into the library: the API calls selected by apis.h,
 * NVTX, resources (contexts, modules, graph nodes).
 *
 * - Marking: at API enter we take the call's stack (the walk probe in this
 *   thread, cupti/walk/, or the marker xpu-record's uprobe attaches to),
 *   keyed by its correlation ID. A runtime call nests a driver call; only
 *   the outermost call is marked (a thread-local depth), unless the nested
 *   driver call carries a different correlation ID, in which case it is
 *   marked too so a join on either ID finds the stack. Calls that fail
 *   where their stack matters only on success are marked at exit.
 * - Exit duties, on the application's threads at an API exit: an attach's
 *   cuptiFinalize() (CUPTI's "Dynamic Detach" asks for it there) and the
 *   PC sampling that is driven from there (an attach's, or a deferred or
 *   duty-cycled one).
 */
#ifndef XPU_CUPTI_CALLBACKS_H
#define XPU_CUPTI_CALLBACKS_H
#include <stdbool.h>

#include <cupti.h>

/* API activity records: for the marked calls (default), for every call
 * (XPU_CUPTI_API_ACTIVITY=all) or none (=none: the correlation records
 * alone attribute the GPU work; the report's timestamp fallback then has
 * no API intervals to use). */
enum { API_RECORDS_MARKED, API_RECORDS_ALL, API_RECORDS_NONE };

/* The function to subscribe with: the walk probe's entry, which passes the
 * caller's rsp and rbp on (x86-64), or the plain callback. */
CUpti_CallbackFunc inject__callback_func(bool walk);
/* Enables the callback (and, for API_RECORDS_MARKED, the API activity
 * record) of every selected cbid in one domain. Returns how many, or -1
 * (the library is then off). */
int inject__enable_apis(CUpti_CallbackDomain domain, uint32_t nr_cbids, int api_records);
/* Enables the callback, without marking, of the calls that copy graph
 * nodes and are not marked anyway. Not fatal. */
void inject__enable_copying(CUpti_CallbackDomain domain, uint32_t nr_cbids);
/* Graph node callbacks (capture sites of replayed graph work). Not fatal:
 * without them replayed work keeps its launch stack, and the trace says
 * why in META cupti.graph_nodes. */
void inject__setup_graphs(void);
/* The marking tables back to nothing, for the next attach. */
void inject__reset_marking(void);

/* PC sampling driven from API exits: a launched process's deferred or
 * duty-cycled sampling (exits), an attach's (attach: enabled per context
 * there, fetched there when asked). */
void inject__pcs_exits(bool on);
void inject__pcs_attach(bool on);
bool inject__pcs_attach_end(void);	/* was on: now off */
bool inject__pcs_attached(void);
void inject__pcs_fetch(void);		/* at the next API exit */
/* Asks the next API exit on any thread to cuptiFinalize() and waits up to
 * wait_ms. Returns true once one did; false when none came (the process is
 * idle in CUDA: no thread is in CUPTI, the caller may finalize). */
bool inject__finalize_at_exit(int wait_ms);
#endif
