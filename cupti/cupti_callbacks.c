// SPDX-License-Identifier: MIT
/* CUPTI's callbacks: marking and the exit duties; see cupti_callbacks.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/activity/graphs.h"
#include "cupti/channel/wire.h"
#include "cupti/nvtx/cupti_nvtx.h"
#include "cupti/pcsamp/cupti_pcsamp.h"
#include "cupti/walk/unw_probe.h"
#include "cupti/walk/walk_probe.h"
#include "cupti/memory/cupti_mem.h"
#include "cupti_state.h"
#include "cupti_devices.h"
#include "cupti_callbacks.h"

/* Marking state of this thread: depth of selected runtime calls, the
 * correlation ID of the outermost one and whether it was marked at enter;
 * the marked driver call in progress outside a runtime call (0: none). A
 * graph node created now belongs to the marked call in progress (graphs.h).
 * Also: inside a call that copies graph nodes (copying), inside the PC
 * sampling exit duty (pcs_busy), the walk probe's rsp and rbp at entry. */
static __thread struct {
	int rt_depth;
	uint32_t rt_corr;
	bool rt_marked;
	uint32_t drv_corr;
	int copying;
	int pcs_busy;
	uint64_t entry_sp, entry_bp;
} tls;

static struct {
	/* selected calls marked at exit when they succeed (xpu_apis__mark_at_exit) */
	bool rt_at_exit[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	bool drv_at_exit[CUPTI_DRIVER_TRACE_CBID_SIZE];
	/* unmarked calls that copy graph nodes (instantiation, clone, update):
	 * their callbacks only count the depth, so that the nodes they create
	 * are not taken for capture sites (xpu_apis__copies_graph) */
	bool rt_copy[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	bool drv_copy[CUPTI_DRIVER_TRACE_CBID_SIZE];
} mk;

/*
 * The exit duties. The detach's cuptiFinalize() is made in a runtime or
 * driver API's exit callback as CUPTI's documentation asks ("Dynamic
 * Detach": no other thread is then in CUPTI; Kineto's teardown from a
 * thread of its own crashed in cuptiActivityFlushAll, pytorch/kineto#686):
 * the detach asks (finalize_req), the next API exit on any thread does it
 * and says so (finalized). PC sampling of an attach (--gpu-pc-sampling
 * with -p) is driven from the same place: enabled per context there (the
 * context of the call), its data fetched there when the attach thread asks
 * (pcs_fetch_req, every flush), and disabled there just before the
 * finalize. Enabled on a retained primary context and disabled from the
 * attach thread while the application launched, the application hung for
 * good (2x H200, pcsamp_demo).
 */
static struct {
	_Atomic int finalize_req;
	bool finalized;
	pthread_mutex_t fin_lock;
	pthread_cond_t fin_cond;
	_Atomic bool pcs_attach;
	_Atomic int pcs_fetch_req;
	_Atomic bool pcs_exits;		/* launched: PC sampling driven from API exits too */
} ex = {
	.fin_lock = PTHREAD_MUTEX_INITIALIZER,
	.fin_cond = PTHREAD_COND_INITIALIZER,
};

static void inject__note_nested(uint32_t rt, uint32_t drv)
{
	char buf[96];

	if (atomic_flag_test_and_set(&inj.nested_noted))
		return;
	snprintf(buf, sizeof(buf), "differs (runtime %u, driver %u): both marked", rt, drv);
	xpu_client__meta(&inj.client, XPU_META_CUPTI_NESTED_CORR, buf);
}

/* At API exit: did the call return success (cudaSuccess / CUDA_SUCCESS)? */
static bool inject__succeeded(const CUpti_CallbackData *cb)
{
	return cb->functionReturnValue && *(const int *)cb->functionReturnValue == 0;
}

/* The marker call, unless XPU_CUPTI_MARKER=off (benchmarks: the cost of
 * the callbacks without the uprobe's stack copy) or the unw probe says no
 * (unw_probe.c, benchmarks too). */
static inline void inject__mark(uint64_t corr, uint32_t cbid, uint32_t domain)
{
	if (inj.unw_probe && !xpu_unw_probe__hit(corr))
		return;
	if (inj.walk_probe && tls.entry_sp) {
		switch (xpu_walk_probe__hit(corr, cbid, domain, tls.entry_sp, tls.entry_bp)) {
		case XPU_WALK_DONE:
			return;
		case XPU_WALK_MARKER_URGENT:
			domain |= XPU_MARKER_URGENT;
			break;
		}
	}
	if (!inj.no_marker)
		xpu_cupti_marker(corr, cbid, domain);
}

/* The marked API call in progress on this thread, or 0. */
static uint64_t inject__api_in_progress(void)
{
	if (tls.rt_depth > 0)
		return tls.rt_marked ? tls.rt_corr : 0;
	return tls.drv_corr;
}

/* A graph node created or cloned (graphs.h). Nodes that instantiation or
 * cudaGraphClone copy are described by their CLONED callback, which says
 * where they come from and wins in the report. CUPTI also reports them as
 * CREATED, before the CLONED (on CUDA 13.0 even outside the GRAPHEXEC_CREATE
 * callbacks' window, so that window tells nothing): inside a copying call
 * (tls.copying) the CREATED is skipped, else the copy would take a stack of
 * its own. A
 * failed id lookup skips the node; its replays keep their launch stack. */
static void inject__graph_node(CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
	struct xpu_graph_node_ev ev = { .cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED };

	if (!gd || !gd->node || !xpu_graphs__wanted((uint32_t)gd->nodeType) ||
	    (!ev.cloned && tls.copying))
		return;
	ev.node_type = (uint32_t)gd->nodeType;
	if (cuptiGetGraphNodeId(gd->node, &ev.node_id) != CUPTI_SUCCESS)
		return;
	if (gd->graph)
		cuptiGetGraphId(gd->graph, &ev.graph_id);
	if (ev.cloned) {
		if (!gd->originalNode ||
		    cuptiGetGraphNodeId(gd->originalNode, &ev.orig_node_id) != CUPTI_SUCCESS)
			return;
		if (gd->originalGraph)
			cuptiGetGraphId(gd->originalGraph, &ev.orig_graph_id);
	} else {
		ev.api_corr = inject__api_in_progress();
	}
	ev.time = inject__timestamp();
	xpu_graphs__node(&inj.client, inj.pid, (uint32_t)gettid(), &ev);
}

/* Enter / exit of a call that copies graph nodes. */
static void inject__copying(const CUpti_CallbackData *cb)
{
	if (cb->callbackSite == CUPTI_API_ENTER)
		tls.copying++;
	else if (tls.copying > 0)
		tls.copying--;
}

static void CUPTIAPI inject__callback(void *userdata, CUpti_CallbackDomain domain,
				      CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool at_exit;

	if (atomic_load_explicit(&ex.finalize_req, memory_order_relaxed) &&
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cb->callbackSite == CUPTI_API_EXIT && !tls.pcs_busy && atomic_exchange(&ex.finalize_req, 0)) {
		if (atomic_exchange(&ex.pcs_attach, false))
			xpu_cupti_pcsamp__finish();
		cuptiFinalize();
		pthread_mutex_lock(&ex.fin_lock);
		ex.finalized = true;
		pthread_cond_signal(&ex.fin_cond);
		pthread_mutex_unlock(&ex.fin_lock);
		return;
	}
	/* PC sampling driven from the application's threads: an attach's
	 * (enabled per context, fetched when the attach thread asks), or a
	 * launched process's whose sampling is deferred or duty-cycled */
	if ((atomic_load_explicit(&ex.pcs_attach, memory_order_relaxed) ||
	     atomic_load_explicit(&ex.pcs_exits, memory_order_relaxed)) &&
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cb->callbackSite == CUPTI_API_EXIT && !tls.pcs_busy) {
		/* a CUDA call made inside these (none seen) must not take
		 * pcs.lock again on this thread */
		tls.pcs_busy = 1;
		xpu_cupti_pcsamp__context(cb->context);
		if (atomic_load_explicit(&ex.pcs_fetch_req, memory_order_relaxed) &&
		    atomic_exchange(&ex.pcs_fetch_req, 0))
			xpu_cupti_pcsamp__flush();
		xpu_cupti_pcsamp__tick(cb->context);
		tls.pcs_busy = 0;
	}
	if (atomic_load_explicit(&inj.state, memory_order_relaxed) != INJECT_ACTIVE)
		return;
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && mk.rt_copy[cbid]) {
			inject__copying(cb);
			break;
		}
		at_exit = cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && mk.rt_at_exit[cbid];
		if (cb->callbackSite == CUPTI_API_ENTER) {
			if (tls.rt_depth++ == 0) {
				tls.rt_corr = cb->correlationId;
				tls.rt_marked = !at_exit;
				if (!at_exit)
					inject__mark(cb->correlationId, cbid, XPU_API_RUNTIME);
			}
		} else if (tls.rt_depth > 0) {
			/* the stack below the call is the same at its exit */
			if (--tls.rt_depth == 0 && at_exit && inject__succeeded(cb))
				inject__mark(cb->correlationId, cbid, XPU_API_RUNTIME);
			if (tls.rt_depth == 0 && inj.gpu_memory)	/* out of memory? */
				xpu_cupti_mem__api_exit(domain, cbid, cb);
		}
		break;
	case CUPTI_CB_DOMAIN_DRIVER_API:
		if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && mk.drv_copy[cbid]) {
			inject__copying(cb);
			break;
		}
		at_exit = cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && mk.drv_at_exit[cbid];
		if (cb->callbackSite != CUPTI_API_ENTER) {
			if (at_exit && tls.rt_depth == 0 && inject__succeeded(cb))
				inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			if (tls.rt_depth == 0 && inj.gpu_memory)	/* out of memory? */
				xpu_cupti_mem__api_exit(domain, cbid, cb);
			if (tls.rt_depth == 0)
				tls.drv_corr = 0;
			break;
		}
		if (at_exit && tls.rt_depth == 0)
			break;		/* marked at exit */
		if (tls.rt_depth == 0) {
			inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			tls.drv_corr = cb->correlationId;
		} else if (cb->correlationId != tls.rt_corr) {
			inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			inject__note_nested(tls.rt_corr, cb->correlationId);
		}
		break;
	case CUPTI_CB_DOMAIN_NVTX:
		xpu_cupti_nvtx__callback(&inj.nvtx, cbid, data, inject__timestamp());
		break;
	case CUPTI_CB_DOMAIN_RESOURCE:
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED &&
		    !atomic_flag_test_and_set(&inj.devices_done))
			inject__devices();
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && inj.gpu_memory)
			xpu_cupti_mem__context(((const CUpti_ResourceData *)data)->context);
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
		    cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING ||
		    cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED ||
		    cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING)
			xpu_cupti_pcsamp__resource(cbid, data);
		else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
			 cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
			inject__graph_node(cbid, data);
		break;
	default:
		break;
	}
}

/*
 * The walk probe's callback entry (walk_probe.c): CUPTI calls this instead
 * of inject__callback, which gets rsp and rbp as they were at the call.
 * The callback reaches the marker by a tail call, so those are the marker's
 * own rsp and rbp at its entry: a walk from them gives the frames the
 * marker's uprobe would have copied.
 */
__attribute__((visibility("hidden"), used))
void inject__callback_regs(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			   const void *data, uint64_t sp, uint64_t bp)
{
	/* set at every entry, so never stale where it is read; nothing after
	 * the call, so that the callback still tail-calls the marker */
	tls.entry_sp = sp;
	tls.entry_bp = bp;
	inject__callback(userdata, domain, cbid, data);
}

#if defined(__x86_64__)
void inject__callback_entry(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data);
__asm__(".text\n"
	".p2align 4\n"
	".hidden inject__callback_entry\n"
	".globl inject__callback_entry\n"
	".type inject__callback_entry, @function\n"
	"inject__callback_entry:\n"
	"	.cfi_startproc\n"
	"	mov %rsp, %r8\n"
	"	mov %rbp, %r9\n"
	"	jmp inject__callback_regs\n"
	"	.cfi_endproc\n"
	".size inject__callback_entry, .-inject__callback_entry\n");
#endif

CUpti_CallbackFunc inject__callback_func(bool walk)
{
#if defined(__x86_64__)
	if (walk)
		return (CUpti_CallbackFunc)inject__callback_entry;
#endif
	(void)walk;
	return (CUpti_CallbackFunc)inject__callback;
}

void inject__setup_graphs(void)
{
	static const CUpti_CallbackIdResource cbids[] = {
		CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
	};
	char why[160];

	for (size_t i = 0; i < sizeof(cbids) / sizeof(cbids[0]); i++) {
		CUptiResult r = cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE, cbids[i]);

		if (r != CUPTI_SUCCESS) {
			snprintf(why, sizeof(why), "off: resource callback %d: %s", (int)cbids[i],
				 inject__strerr(r));
			xpu_client__meta(&inj.client, XPU_META_CUPTI_GRAPH_NODES, why);
			return;
		}
	}
	xpu_client__meta(&inj.client, XPU_META_CUPTI_GRAPH_NODES, "on");
}

void inject__enable_copying(CUpti_CallbackDomain domain, uint32_t nr_cbids)
{
	for (uint32_t cbid = 1; cbid < nr_cbids; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name ||
		    xpu_apis__match(&inj.apis, name) || !xpu_apis__copies_graph(name) ||
		    cuptiEnableCallback(1, inj.sub, domain, cbid) != CUPTI_SUCCESS)
			continue;
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
			mk.rt_copy[cbid] = true;
		else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
			mk.drv_copy[cbid] = true;
	}
}

int inject__enable_apis(CUpti_CallbackDomain domain, uint32_t nr_cbids, int api_records)
{
	int n = 0;

	for (uint32_t cbid = 1; cbid < nr_cbids; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		/* --gpu-memory's calls (noted by want) and the selected ones */
		if (!xpu_cupti_mem__want(domain, cbid, name) && !xpu_apis__match(&inj.apis, name))
			continue;
		if (!CUPTI_TRY(cuptiEnableCallback(1, inj.sub, domain, cbid)))
			return -1;
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
			mk.rt_at_exit[cbid] = xpu_apis__mark_at_exit(name);
		else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
			mk.drv_at_exit[cbid] = xpu_apis__mark_at_exit(name);
		if (api_records == API_RECORDS_MARKED) {
			CUptiResult r = domain == CUPTI_CB_DOMAIN_RUNTIME_API ?
				cuptiActivityEnableRuntimeApi(cbid, 1) :
				cuptiActivityEnableDriverApi(cbid, 1);

			if (r != CUPTI_SUCCESS) {
				inject__fail("cuptiActivityEnable{Runtime,Driver}Api", r);
				return -1;
			}
		}
		n++;
	}
	return n;
}

void inject__reset_marking(void)
{
	memset(&mk, 0, sizeof(mk));
	atomic_store(&ex.pcs_fetch_req, 0);
}

void inject__pcs_exits(bool on)
{
	atomic_store(&ex.pcs_exits, on);
}

void inject__pcs_attach(bool on)
{
	atomic_store(&ex.pcs_attach, on);
}

bool inject__pcs_attach_end(void)
{
	return atomic_exchange(&ex.pcs_attach, false);
}

bool inject__pcs_attached(void)
{
	return atomic_load(&ex.pcs_attach);
}

void inject__pcs_fetch(void)
{
	atomic_store(&ex.pcs_fetch_req, 1);
}

bool inject__finalize_at_exit(int wait_ms)
{
	struct timespec ts;
	bool done;

	pthread_mutex_lock(&ex.fin_lock);
	ex.finalized = false;
	pthread_mutex_unlock(&ex.fin_lock);
	atomic_store(&ex.finalize_req, 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += wait_ms / 1000;
	ts.tv_nsec += (wait_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ex.fin_lock);
	while (!ex.finalized &&
	       pthread_cond_timedwait(&ex.fin_cond, &ex.fin_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&ex.fin_lock);
	/* no callback took it (an idle process): the caller's, unless one
	 * takes it now */
	done = !atomic_exchange(&ex.finalize_req, 0);
	if (!done)
		return false;
	/* a callback took the request: wait until it has finalized */
	pthread_mutex_lock(&ex.fin_lock);
	while (!ex.finalized)
		pthread_cond_wait(&ex.fin_cond, &ex.fin_lock);
	pthread_mutex_unlock(&ex.fin_lock);
	return true;
}
