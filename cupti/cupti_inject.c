// SPDX-License-Identifier: MIT
/*
 * libxpu-cupti.so entry point and CUPTI glue. libcuda loads us through
 * CUDA_INJECTION64_PATH and calls InitializeInjection() inside cuInit().
 *
 * - Callbacks: only the API calls selected by apis.h are enabled. At API
 *   enter we call xpu_cupti_marker(correlation ID, cbid, domain), where
 *   xpu-record's uprobe captures the CPU stack. A runtime call nests a driver
 *   call; only the outermost call is marked (a thread-local depth), unless
 *   the nested driver call carries a different correlation ID, in which case
 *   it is marked too so a join on either ID finds the stack.
 * - Activity: kernels, memcpy, memset, synchronization, and API records for
 *   the same selected calls (XPU_CUPTI_API_ACTIVITY_ENV=all: every call),
 *   timestamped with CLOCK_MONOTONIC so they line up with the BPF clock.
 * - NVTX: the NVTX callbacks (push/pop, start/end, marks, domain and string
 *   registration) feed nvtx.h through cupti_nvtx.c; a push or start calls
 *   the marker with (range id, cbid, XPU_API_NVTX). They fire only when the
 *   process's NVTX was injected with CUPTI: xpu-record points
 *   NVTX_INJECTION64_PATH at this library, and InitializeInjectionNvtx2 below
 *   hands each NVTX instance to the libcupti we link (the setup CUPTI
 *   documents is NVTX_INJECTION64_PATH naming the subscriber's libcupti; this
 *   makes it that very library, wherever the loader found it). The pushes
 *   and pops of NVTX's payload extension, which CUPTI does not report (NCCL
 *   pops its API ranges with nvtxRangePopPayload), come to
 *   InitializeInjectionNvtxExtension below and feed nvtx.h through
 *   nvtx_ext.c.
 * - A flush thread asks CUPTI for completed buffers every 200 ms (or the
 *   period xpu-record's bounded capture asks for, wire.h: then CUPTI's
 *   buffers are sized to fill within it, bufsize.h) and sends the queue;
 *   at exit a forced flush sends the rest.
 *
 * Never break the application: every CUPTI failure is one warning and the
 * library turns itself off; no exit(), no abort(), no blocking on the socket
 * in application threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "format/xpu_format.h"
#include "unw_probe.h"
#include "walk_probe.h"
#include "wire.h"
#include "apis.h"
#include "client.h"
#include "names.h"
#include "nvtx.h"
#include "nvtx_ext.h"
#include "cupti_convert.h"
#include "cupti_nvtx.h"
#include "graphs.h"
#include "attach.h"
#include "pcsamp.h"
#include "cupti_pcsamp.h"
#include "bufsize.h"
#include "cupti/memory/cupti_mem.h"

#define INJECT_FLUSH_MS		200
#define INJECT_SEND_TIMEOUT_MS	200		/* periodic flush */
#define INJECT_EXIT_TIMEOUT_MS	2000		/* final flush at exit */

enum inject_state { INJECT_NONE, INJECT_ACTIVE, INJECT_OFF };

static struct {
	_Atomic int state;
	atomic_flag devices_done;
	atomic_flag nested_noted;
	atomic_flag finished;
	uint32_t pid;
	CUpti_SubscriberHandle sub;
	int subscribed;
	struct xpu_client client;
	struct xpu_names names;
	struct xpu_convert conv;
	struct xpu_apis apis;
	struct xpu_nvtx nvtx;
	struct xpu_pcsamp pcsamp;	/* --gpu-pc-sampling */
	struct xpu_bufsize bufsize;	/* CUPTI's activity buffers */
	int pc_period;			/* xpu_pcsamp__parse(): 0 off */
	struct xpu_pcsamp_duty pc_duty;	/* xpu_pcsamp__parse_duty() */
	bool nvtx_on;			/* NVTX callbacks enabled */
	bool no_marker;			/* XPU_CUPTI_MARKER=off */
	bool unw_probe;			/* XPU_CUPTI_MARKER=unw:LIB or unw+:LIB */
	bool walk_probe;		/* XPU_CUPTI_MARKER=walk or walk+ */
	bool gpu_memory;		/* --gpu-memory (wire.h: XPU_CHANNEL_GPU_MEMORY) */
	pthread_t flusher;
	int flusher_started;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	int stop;
} inj = {
	.devices_done = ATOMIC_FLAG_INIT,
	.nested_noted = ATOMIC_FLAG_INIT,
	.finished = ATOMIC_FLAG_INIT,
	.stop_lock = PTHREAD_MUTEX_INITIALIZER,
	.stop_cond = PTHREAD_COND_INITIALIZER,
};

/* Marking state of this thread: depth of selected runtime calls, the
 * correlation ID of the outermost one and whether it was marked at enter;
 * the marked driver call in progress outside a runtime call (0: none). A
 * graph node created now belongs to the marked call in progress (graphs.h). */
static __thread int tls_rt_depth;
static __thread uint32_t tls_rt_corr;
static __thread bool tls_rt_marked;
static __thread uint32_t tls_drv_corr;

/* Selected calls marked at exit when they succeed (xpu_apis__mark_at_exit). */
static bool inj_rt_at_exit[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static bool inj_drv_at_exit[CUPTI_DRIVER_TRACE_CBID_SIZE];
/* Unmarked calls that copy graph nodes (instantiation, clone, update): their
 * callbacks only count the depth, so that the nodes they create are not
 * taken for capture sites (xpu_apis__copies_graph). */
static bool inj_rt_copy[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static bool inj_drv_copy[CUPTI_DRIVER_TRACE_CBID_SIZE];
static __thread int tls_copying;

/* xpu-record -p (attach.h): the configuration of the attach in progress;
 * off when the library was loaded at start (the environment then says). */
static struct xpu_attach_cfg inj_cfg;
static pthread_mutex_t inj_attach_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int inj_attaching;	/* an attach thread runs */
static _Atomic int inj_attach_live;	/* it records: not yet ending */
/* The detach's cuptiFinalize(), made in a runtime or driver API's exit
 * callback as CUPTI's documentation asks ("Dynamic Detach": no other
 * thread is then in CUPTI; Kineto's teardown from a thread of its own
 * crashed in cuptiActivityFlushAll, pytorch/kineto#686): the detach asks,
 * the next API exit on any thread does it and says so. */
static _Atomic int inj_finalize_req;
/* PC sampling of an attach (--gpu-pc-sampling with -p) is driven from
 * the same place, the API exit callbacks on the application's threads:
 * enabled per context there (the context of the call), its data fetched
 * there when the attach thread asks (inj_pcs_fetch_req, every flush), and
 * disabled there just before the finalize. Enabled on a retained primary
 * context and disabled from the attach thread while the application
 * launched, the application hung for good (2x H200, pcsamp_demo). */
static _Atomic bool inj_pcs_attach;
static _Atomic int inj_pcs_fetch_req;
static _Atomic bool inj_pcs_exits;	/* launched: PC sampling driven from API exits too */
static __thread int tls_pcs_busy;
static bool inj_finalized;
static pthread_mutex_t inj_fin_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t inj_fin_cond = PTHREAD_COND_INITIALIZER;
#define INJECT_FINALIZE_WAIT_MS	2000
#define inject__cfg(key) xpu_attach_cfg__get(&inj_cfg, key)

__attribute__((format(printf, 1, 2)))
static void inject__warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line; stderr may be shared with the app. */
	fprintf(stderr, "xpu-cupti: warning: %s\n", buf);
}

static const char *inject__strerr(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/*
 * A CUPTI call failed: say so once, store it in the trace, stop collecting.
 * Callbacks check the state first, so the app only pays a load per call.
 */
static void inject__fail(const char *what, CUptiResult r)
{
	char msg[256];
	int expect = INJECT_ACTIVE;

	if (!atomic_compare_exchange_strong(&inj.state, &expect, INJECT_OFF))
		return;
	snprintf(msg, sizeof(msg), "%s failed: %s", what, inject__strerr(r));
	inject__warn("%s; GPU activity is not recorded for pid %u, the application runs on",
		     msg, inj.pid);
	xpu_client__meta(&inj.client, XPU_META_GPU_ERROR, msg);
	if (inj.subscribed) {
		static const CUpti_ActivityKind kinds[] = {
			CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
			CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
			CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
		};

		/* Best effort: CUPTI is already failing. Collected records still
		 * go out with the final flush. */
		cuptiEnableAllDomains(0, inj.sub);
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			cuptiActivityDisable(kinds[i]);
		xpu_cupti_mem__disable();
	}
}

#define CUPTI_TRY(call) ({						\
	CUptiResult _r = (call);					\
	if (_r != CUPTI_SUCCESS)					\
		inject__fail(#call, _r);				\
	_r == CUPTI_SUCCESS;						\
})

static uint64_t CUPTIAPI inject__timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void CUPTIAPI inject__buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	size_t want = xpu_bufsize__next(&inj.bufsize);

	*buf = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, want);
	*size = *buf ? want : 0;	/* 0: CUPTI drops and counts */
	*max_records = 0;
}

static int inject__next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	return cuptiActivityGetNextRecord(buf, valid, rec) != CUPTI_SUCCESS;
}

static void inject__report_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;

	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		xpu_client__lost(&inj.client, XPU_LOST_CUPTI, dropped);
}

static void CUPTIAPI inject__buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
					      size_t size, size_t valid)
{
	/* Convert even when turned off: records already collected are real. */
	if (atomic_load(&inj.state) != INJECT_NONE)
		xpu_convert__buffer(&inj.conv, buf, valid, inject__next);
	free(buf);
	xpu_bufsize__done(&inj.bufsize, valid, inject__timestamp());
	inject__report_dropped(ctx, stream);
}

/* ---- device metadata, at the first context creation ------------------------ */

typedef CUresult (*cu_count_fn)(int *);
typedef CUresult (*cu_get_fn)(CUdevice *, int);
typedef CUresult (*cu_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*cu_mem_fn)(size_t *, CUdevice);
typedef CUresult (*cu_ver_fn)(int *);
typedef int (*rt_ver_fn)(int *);

static void inject__meta_u(const char *key, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	xpu_client__meta(&inj.client, key, buf);
}

/* Driver calls made from libcuda's own handle (it is loaded: it loaded us);
 * no link-time dependency on libcuda. Best effort: missing data is left out. */
static void inject__devices(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	cu_count_fn get_count;
	cu_get_fn get_dev;
	cu_name_fn get_name;
	cu_attr_fn get_attr;
	cu_mem_fn get_mem;
	cu_ver_fn drv_ver;
	rt_ver_fn rt_ver;
	int n = 0, v = 0;

	if (!cuda)
		return;
	get_count = (cu_count_fn)dlsym(cuda, "cuDeviceGetCount");
	get_dev = (cu_get_fn)dlsym(cuda, "cuDeviceGet");
	get_name = (cu_name_fn)dlsym(cuda, "cuDeviceGetName");
	get_attr = (cu_attr_fn)dlsym(cuda, "cuDeviceGetAttribute");
	get_mem = (cu_mem_fn)dlsym(cuda, "cuDeviceTotalMem_v2");
	drv_ver = (cu_ver_fn)dlsym(cuda, "cuDriverGetVersion");
	/* Only found when the app links libcudart dynamically (PyTorch does). */
	rt_ver = (rt_ver_fn)dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");

	if (drv_ver && drv_ver(&v) == CUDA_SUCCESS)
		inject__meta_u(XPU_META_CUDA_DRIVER_VERSION, v);
	if (rt_ver && rt_ver(&v) == 0)
		inject__meta_u(XPU_META_CUDA_RUNTIME_VERSION, v);
	if (!get_count || !get_dev || !get_name || !get_attr || !get_mem ||
	    get_count(&n) != CUDA_SUCCESS)
		goto out;
	inject__meta_u(XPU_META_GPU_COUNT, n);
	for (int i = 0; i < n; i++) {
		struct xpu_gpu_device d = { .pid = inj.pid, .id = i };
		char name[256] = "", key[32];
		CUdevice dev;
		size_t mem = 0;
		int val;

		if (get_dev(&dev, i) != CUDA_SUCCESS)
			continue;
		if (get_name(name, sizeof(name) - 1, dev) != CUDA_SUCCESS)
			strcpy(name, "unknown");
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
			d.sm_count = val;
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS)
			d.cc_major = val;
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
			d.cc_minor = val;
		if (get_mem(&mem, dev) == CUDA_SUCCESS)
			d.global_memory = mem;
		xpu_client__add_str(&inj.client, XPU_REC_GPU_DEVICE, &d, sizeof(d), name);
		snprintf(key, sizeof(key), XPU_META_GPU_NAME_FMT, i);
		xpu_client__meta(&inj.client, key, name);
	}
out:
	dlclose(cuda);
}

/* ---- API callbacks ----------------------------------------------------------- */

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
static __thread uint64_t tls_entry_sp, tls_entry_bp;	/* walk probe: see below */

static inline void inject__mark(uint64_t corr, uint32_t cbid, uint32_t domain)
{
	if (inj.unw_probe && !xpu_unw_probe__hit(corr))
		return;
	if (inj.walk_probe && tls_entry_sp) {
		switch (xpu_walk_probe__hit(corr, cbid, domain, tls_entry_sp, tls_entry_bp)) {
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
	if (tls_rt_depth > 0)
		return tls_rt_marked ? tls_rt_corr : 0;
	return tls_drv_corr;
}

/* A graph node created or cloned (graphs.h). Nodes that instantiation or
 * cudaGraphClone copy are described by their CLONED callback, which says
 * where they come from and wins in the report. CUPTI also reports them as
 * CREATED, before the CLONED (on CUDA 13.0 even outside the GRAPHEXEC_CREATE
 * callbacks' window, so that window tells nothing): inside a copying call
 * (tls_copying) the CREATED is skipped, else the copy would take a stack of
 * its own. A
 * failed id lookup skips the node; its replays keep their launch stack. */
static void inject__graph_node(CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
	struct xpu_graph_node_ev ev = { .cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED };

	if (!gd || !gd->node || !xpu_graphs__wanted((uint32_t)gd->nodeType) ||
	    (!ev.cloned && tls_copying))
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
		tls_copying++;
	else if (tls_copying > 0)
		tls_copying--;
}

static void CUPTIAPI inject__callback(void *userdata, CUpti_CallbackDomain domain,
				      CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool at_exit;

	if (atomic_load_explicit(&inj_finalize_req, memory_order_relaxed) &&
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cb->callbackSite == CUPTI_API_EXIT && !tls_pcs_busy && atomic_exchange(&inj_finalize_req, 0)) {
		if (atomic_exchange(&inj_pcs_attach, false))
			xpu_cupti_pcsamp__finish();
		cuptiFinalize();
		pthread_mutex_lock(&inj_fin_lock);
		inj_finalized = true;
		pthread_cond_signal(&inj_fin_cond);
		pthread_mutex_unlock(&inj_fin_lock);
		return;
	}
	/* PC sampling driven from the application's threads: an attach's
	 * (enabled per context, fetched when the attach thread asks), or a
	 * launched process's whose sampling is deferred or duty-cycled */
	if ((atomic_load_explicit(&inj_pcs_attach, memory_order_relaxed) ||
	     atomic_load_explicit(&inj_pcs_exits, memory_order_relaxed)) &&
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cb->callbackSite == CUPTI_API_EXIT && !tls_pcs_busy) {
		/* a CUDA call made inside these (none seen) must not take
		 * pcs.lock again on this thread */
		tls_pcs_busy = 1;
		xpu_cupti_pcsamp__context(cb->context);
		if (atomic_load_explicit(&inj_pcs_fetch_req, memory_order_relaxed) &&
		    atomic_exchange(&inj_pcs_fetch_req, 0))
			xpu_cupti_pcsamp__flush();
		xpu_cupti_pcsamp__tick(cb->context);
		tls_pcs_busy = 0;
	}
	if (atomic_load_explicit(&inj.state, memory_order_relaxed) != INJECT_ACTIVE)
		return;
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && inj_rt_copy[cbid]) {
			inject__copying(cb);
			break;
		}
		at_exit = cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && inj_rt_at_exit[cbid];
		if (cb->callbackSite == CUPTI_API_ENTER) {
			if (tls_rt_depth++ == 0) {
				tls_rt_corr = cb->correlationId;
				tls_rt_marked = !at_exit;
				if (!at_exit)
					inject__mark(cb->correlationId, cbid, XPU_API_RUNTIME);
			}
		} else if (tls_rt_depth > 0) {
			/* the stack below the call is the same at its exit */
			if (--tls_rt_depth == 0 && at_exit && inject__succeeded(cb))
				inject__mark(cb->correlationId, cbid, XPU_API_RUNTIME);
			if (tls_rt_depth == 0 && inj.gpu_memory)	/* out of memory? */
				xpu_cupti_mem__api_exit(domain, cbid, cb);
		}
		break;
	case CUPTI_CB_DOMAIN_DRIVER_API:
		if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && inj_drv_copy[cbid]) {
			inject__copying(cb);
			break;
		}
		at_exit = cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && inj_drv_at_exit[cbid];
		if (cb->callbackSite != CUPTI_API_ENTER) {
			if (at_exit && tls_rt_depth == 0 && inject__succeeded(cb))
				inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			if (tls_rt_depth == 0 && inj.gpu_memory)	/* out of memory? */
				xpu_cupti_mem__api_exit(domain, cbid, cb);
			if (tls_rt_depth == 0)
				tls_drv_corr = 0;
			break;
		}
		if (at_exit && tls_rt_depth == 0)
			break;		/* marked at exit */
		if (tls_rt_depth == 0) {
			inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			tls_drv_corr = cb->correlationId;
		} else if (cb->correlationId != tls_rt_corr) {
			inject__mark(cb->correlationId, cbid, XPU_API_DRIVER);
			inject__note_nested(tls_rt_corr, cb->correlationId);
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
	tls_entry_sp = sp;
	tls_entry_bp = bp;
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
#define INJECT_CALLBACK(walk) ((walk) ? (CUpti_CallbackFunc)inject__callback_entry : \
				  (CUpti_CallbackFunc)inject__callback)
#else
#define INJECT_CALLBACK(walk) ((CUpti_CallbackFunc)inject__callback)
#endif

/* Graph node callbacks (capture sites of replayed graph work). Not fatal:
 * without them replayed work keeps its launch stack, and the trace says
 * why in META cupti.graph_nodes. */
static void inject__setup_graphs(void)
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

/* API activity records: for the marked calls (default), for every call
 * (XPU_CUPTI_API_ACTIVITY=all) or none (=none: the correlation records
 * alone attribute the GPU work; the report's timestamp fallback then has
 * no API intervals to use). */
enum { API_RECORDS_MARKED, API_RECORDS_ALL, API_RECORDS_NONE };

/* Enables the callback, without marking, of the calls that copy graph
 * nodes and are not marked anyway (inj_*_copy). Not fatal. */
static void inject__enable_copying(CUpti_CallbackDomain domain, uint32_t nr_cbids)
{
	for (uint32_t cbid = 1; cbid < nr_cbids; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name ||
		    xpu_apis__match(&inj.apis, name) || !xpu_apis__copies_graph(name) ||
		    cuptiEnableCallback(1, inj.sub, domain, cbid) != CUPTI_SUCCESS)
			continue;
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
			inj_rt_copy[cbid] = true;
		else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
			inj_drv_copy[cbid] = true;
	}
}

/* Enables the callback (and, for API_RECORDS_MARKED, the API activity
 * record) of every selected cbid in one domain. */
static int inject__enable_apis(CUpti_CallbackDomain domain, uint32_t nr_cbids, int api_records)
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
			inj_rt_at_exit[cbid] = xpu_apis__mark_at_exit(name);
		else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
			inj_drv_at_exit[cbid] = xpu_apis__mark_at_exit(name);
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

/* ---- flushing ----------------------------------------------------------------- */

/* The flush period: the recorder's (bounded capture), within 10 ms to 1 s. */
static int inject__flush_ms(void)
{
	uint32_t ms = inj.client.flush_ms;

	return !ms ? INJECT_FLUSH_MS : ms < 10 ? 10 : ms > 1000 ? 1000 : (int)ms;
}

static void *inject__flush_thread(void *arg)
{
	struct timespec ts;

	long period_ms = inject__flush_ms();

	pthread_mutex_lock(&inj.stop_lock);
	while (!inj.stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += period_ms * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&inj.stop_cond, &inj.stop_lock, &ts);
		if (inj.stop)
			break;
		pthread_mutex_unlock(&inj.stop_lock);
		if (atomic_load(&inj.state) == INJECT_ACTIVE) {
			xpu_cupti_pcsamp__flush();
			cuptiActivityFlushAll(0);
		}
		if (inj.nvtx_on)
			xpu_nvtx__report_lost(&inj.nvtx);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
		pthread_mutex_lock(&inj.stop_lock);
	}
	pthread_mutex_unlock(&inj.stop_lock);
	return NULL;
}

/* At exit (atexit, or CUPTI's teardown): forced flush, send, close. Once. */
static void inject__finish(void)
{
	if (atomic_load(&inj.state) == INJECT_NONE || atomic_flag_test_and_set(&inj.finished))
		return;
	if (inj.flusher_started) {
		pthread_mutex_lock(&inj.stop_lock);
		inj.stop = 1;
		pthread_cond_signal(&inj.stop_cond);
		pthread_mutex_unlock(&inj.stop_lock);
		pthread_join(inj.flusher, NULL);
		inj.flusher_started = 0;
	}
	if (inj.subscribed) {
		xpu_cupti_pcsamp__finish();
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		inject__report_dropped(NULL, 0);
	}
	atomic_store(&inj.state, INJECT_OFF);
	if (inj.nvtx_on)
		xpu_nvtx__finish(&inj.nvtx);	/* ranges still open: end 0 */
	if (inj.walk_probe)
		xpu_walk_probe__finish(&inj.client);
	/* the rest of an earlier flush, then the queue: two tries at most, so
	 * a recorder that stopped reading delays the exit by 2 x the timeout */
	if (xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS) == -ETIMEDOUT ||
	    inj.client.len)
		xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS);
	xpu_client__close(&inj.client);
	if (inj.client.nr_dropped)
		inject__warn("pid %u: %llu GPU records could not be sent to xpu-record",
			     inj.pid, (unsigned long long)inj.client.nr_dropped);
}

/* A forked child shares our socket: writing to it would interleave with the
 * parent's messages. The child stays silent (CUDA does not work across fork
 * anyway; an exec'd child loads its own copy of the library). */
static void inject__atfork_child(void)
{
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&inj_attaching, 0);	/* the attach thread is not in the child */
	atomic_store(&inj_attach_live, 0);
	inj.flusher_started = 0;
	if (inj.client.fd >= 0)
		close(inj.client.fd);
	inj.client.fd = -1;
}

static int inject__start_flusher(void)
{
	sigset_t all, old;
	int err;

	/* The app's signal handlers must not run on our thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&inj.flusher, NULL, inject__flush_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	inj.flusher_started = 1;
	return 0;
}

/* ---- entry point ---------------------------------------------------------------- */

static void inject__meta_versions(void)
{
	uint32_t v = 0;

	xpu_client__meta(&inj.client, XPU_META_CUPTI_LIBRARY, "libxpu-cupti " XPU_VERSION);
	if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
		inject__meta_u(XPU_META_CUPTI_VERSION, v);
	inject__meta_u(XPU_META_CUPTI_API_VERSION_BUILT, CUPTI_API_VERSION);
}

/* CUPTI 13.0.0 crashes inside its NVTX handlers (nvtxNameOsThreadA,
 * NVIDIA/NVTX#125; CUDA.jl leaves NVTX alone with that version): we neither
 * inject NVTX nor enable its callbacks there. cuptiGetVersion() encodes
 * major.minor.patch from CUDA 13 on. */
static bool inject__nvtx_broken(void)
{
	uint32_t v = 0;

	return cuptiGetVersion(&v) == CUPTI_SUCCESS && v == 130000;
}

/* The NVTX callbacks, unless xpu-record said --no-nvtx or CUPTI is one whose
 * NVTX support crashes. Says which in META cupti.nvtx. A failure here turns
 * NVTX off, not the GPU recording. */
static int inject__setup_nvtx(void)
{
	const char *env = inject__cfg(XPU_CUPTI_NVTX_ENV);

	if (env && !strcmp(env, "off")) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off (" XPU_CUPTI_NVTX_ENV "=off)");
		return 0;
	}
	if (inject__nvtx_broken()) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off: CUPTI 13.0.0 crashes in "
				 "NVTX calls (NVIDIA/NVTX#125); use CUDA 13.0.1 or later");
		return 0;
	}
	if (xpu_nvtx__init(&inj.nvtx, &inj.client, &inj.names, inj.pid, xpu_cupti_marker)) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off: no thread-local key left");
		return 0;
	}
	for (size_t i = 0; i < xpu_cupti_nvtx_nr_cbids; i++) {
		CUptiResult r = cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_NVTX,
						    xpu_cupti_nvtx_cbids[i]);
		char msg[160];

		if (r == CUPTI_SUCCESS)
			continue;
		/* NVTX is an extra: without it the GPU recording goes on */
		for (size_t j = 0; j < i; j++)
			cuptiEnableCallback(0, inj.sub, CUPTI_CB_DOMAIN_NVTX, xpu_cupti_nvtx_cbids[j]);
		snprintf(msg, sizeof(msg), "off: cuptiEnableCallback(NVTX, %u) failed: %s",
			 xpu_cupti_nvtx_cbids[i], inject__strerr(r));
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, msg);
		inject__warn("pid %u: NVTX ranges are not recorded (%s)", inj.pid, msg);
		return 0;
	}
	inj.nvtx_on = true;
	xpu_nvtx_ext__attach(&inj.nvtx);
	xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "on");
	return 0;
}

static int inject__setup(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};
	const char *api_activity = inject__cfg(XPU_CUPTI_API_ACTIVITY_ENV);
	int api_records = !api_activity ? API_RECORDS_MARKED :
			  !strcmp(api_activity, "all") ? API_RECORDS_ALL :
			  !strcmp(api_activity, "none") ? API_RECORDS_NONE : API_RECORDS_MARKED;
	int all_api = api_records == API_RECORDS_ALL;
	CUptiResult r;
	int nrt, ndrv;

	r = cuptiSubscribe(&inj.sub, INJECT_CALLBACK(inj.walk_probe), NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		const char *why = "another CUPTI subscriber (torch.profiler, Nsight Systems, "
			"compute-sanitizer, ...) holds CUPTI in this process";

		inject__warn("pid %u: %s; GPU activity is not recorded, CPU profiling goes on",
			     inj.pid, why);
		xpu_client__meta(&inj.client, XPU_META_GPU_SUBSCRIBER_CONFLICT, why);
		atomic_store(&inj.state, INJECT_OFF);
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS) {
		inject__fail("cuptiSubscribe", r);
		return -EIO;
	}
	inj.subscribed = 1;

	/* The clock first: records must never carry CUPTI's own timebase. */
	if (!CUPTI_TRY(cuptiActivityRegisterTimestampCallback(inject__timestamp)) ||
	    !CUPTI_TRY(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) ||
	    !CUPTI_TRY(cuptiActivityRegisterCallbacks(inject__buffer_requested,
						      inject__buffer_completed)))
		return -EIO;

	nrt = inject__enable_apis(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, api_records);
	ndrv = inject__enable_apis(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, api_records);
	if (nrt < 0 || ndrv < 0)
		return -EIO;
	inject__meta_u(XPU_META_CUPTI_MARKED_RUNTIME, nrt);
	inject__meta_u(XPU_META_CUPTI_MARKED_DRIVER, ndrv);
	if (!CUPTI_TRY(cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_CONTEXT_CREATED)))
		return -EIO;
	inject__setup_graphs();
	if (inj.pc_period) {
		xpu_pcsamp__init(&inj.pcsamp, &inj.client, &inj.names, inj.pid,
				 inject__cfg(XPU_CUPTI_CUBIN_MAX_ENV));
		if (!xpu_cupti_pcsamp__setup(&inj.pcsamp, inj.sub, inj.pc_period, &inj.pc_duty,
					     inject__timestamp) &&
		    (inj.pc_duty.after_ns || inj.pc_duty.on_ns))
			atomic_store(&inj_pcs_exits, true);
	}
	inject__enable_copying(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	inject__enable_copying(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	if (inject__setup_nvtx())
		return -EIO;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!CUPTI_TRY(cuptiActivityEnable(kinds[i])))
			return -EIO;
	if (all_api && (!CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME)) ||
			!CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER))))
		return -EIO;
	if (inj.gpu_memory) {	/* --gpu-memory (cupti/memory/) */
		const char *what;

		if ((r = xpu_cupti_mem__enable(&what)) != CUPTI_SUCCESS) {
			inject__fail(what, r);
			return -EIO;
		}
	}
	return 0;
}

/*
 * The start of a recording in this process: at cuInit (launched under
 * xpu-record: attach false) or in the attach thread (xpu_cupti_attach).
 * Returns 0 when recording; otherwise the library is off (and, at start,
 * finished).
 */
static int inject__start(bool attach)
{
	const char *path = inject__cfg(XPU_CUPTI_SOCKET_ENV);
	const char *apis = inject__cfg(XPU_CUPTI_APIS_ENV);
	const char *marker = inject__cfg(XPU_CUPTI_MARKER_ENV);
	const char *pc = inject__cfg(XPU_CUPTI_PC_SAMPLING_ENV);
	int err;

	inj.pid = getpid();
	xpu_client__init(&inj.client, inj.pid, 0);
	xpu_names__init(&inj.names, inj.pid);
	xpu_convert__init(&inj.conv, &inj.client, &inj.names, inj.pid);

	if (!path || !*path) {
		inject__warn("%s is not set: libxpu-cupti.so runs only under xpu-record; "
			     "GPU activity is not recorded", XPU_CUPTI_SOCKET_ENV);
		goto off;
	}
	err = xpu_client__connect(&inj.client, path);
	if (err) {
		inject__warn("cannot connect to xpu-record at %s: %s; GPU activity is not recorded for pid %u",
			     path, strerror(-err), inj.pid);
		goto off;
	}
	/* the recorder's bounded capture: buffers that fill within its period */
	xpu_bufsize__init(&inj.bufsize, inj.client.flush_ms);
	/* the recorder's --gpu-memory, told with the ready byte (wire.h) */
	inj.gpu_memory = inj.client.flags & XPU_CHANNEL_GPU_MEMORY;
	xpu_cupti_mem__init(inj.gpu_memory, &inj.client, inj.pid, inject__timestamp);
	if (xpu_apis__parse(&inj.apis, apis)) {
		inject__warn("%s is longer than %d bytes or %d names; using the default API set",
			     XPU_CUPTI_APIS_ENV, XPU_APIS_SPEC_MAX - 1, XPU_APIS_MAX);
		xpu_apis__parse(&inj.apis, NULL);
	}
	if (apis)
		xpu_client__meta(&inj.client, XPU_META_CUPTI_APIS, apis);
	if (marker && !strcmp(marker, "off")) {
		inj.no_marker = true;
		xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER, "off (" XPU_CUPTI_MARKER_ENV "=off: no launch stacks)");
	}
	switch (xpu_walk_probe__init(marker, &inj.client, inj.pid)) {
	case 1:
		inj.walk_probe = true;
		if (!strcmp(marker, "walk"))
			xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER,
					 "walk (" XPU_CUPTI_MARKER_ENV "=walk: launch stacks walked in the "
					 "process, the marker where a walk cannot)");
		break;
	case -1:
		inject__warn("%s=%s: no rule table from xpu-record (--launch-stacks=marker or --call-graph fp?); "
			     "the marker stays", XPU_CUPTI_MARKER_ENV, marker);
		break;
	}
	switch (xpu_unw_probe__init(marker)) {
	case 1:
		inj.unw_probe = true;
		if (strncmp(marker, "unw+", 4))
			xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER,
					 "off (" XPU_CUPTI_MARKER_ENV "=unw: the unw benchmark probe, no launch stacks)");
		break;
	case -1:
		inject__warn("%s=%s: no unw_backtrace in that library; the marker stays on",
			     XPU_CUPTI_MARKER_ENV, marker);
		break;
	}
	inject__meta_versions();
	inj.pc_period = xpu_pcsamp__parse(pc);
	if (xpu_pcsamp__parse_duty(inject__cfg(XPU_CUPTI_PC_DUTY_ENV), &inj.pc_duty)) {
		inject__warn("%s=%s: not ON_MS:OFF_MS or off; the default duty cycle is used",
			     XPU_CUPTI_PC_DUTY_ENV, inject__cfg(XPU_CUPTI_PC_DUTY_ENV));
		xpu_pcsamp__parse_duty(NULL, &inj.pc_duty);
	}
	if (inj.pc_period < 0 && inj.pc_period != -1) {
		inject__warn("%s=%s: not a period (5-31, on, off); GPU PC sampling is off",
			     XPU_CUPTI_PC_SAMPLING_ENV, pc);
		xpu_client__meta(&inj.client, XPU_META_CUPTI_PC_SAMPLING, "off: bad " XPU_CUPTI_PC_SAMPLING_ENV);
		inj.pc_period = 0;
	}
	if (attach && !xpu_attach__cuda_initialised()) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_ATTACH, XPU_ATTACH_NOT_INITIALISED);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
		atomic_store(&inj.state, INJECT_OFF);
		return -EAGAIN;
	}
	if (attach)
		xpu_client__meta(&inj.client, XPU_META_CUPTI_ATTACH,
				 "attached to the running process (xpu-record -p): its CUDA work from "
				 "the attach on; NVTX ranges only where its NVTX was injected with "
				 "CUPTI at start; graphs made before the attach keep their launch stacks");

	err = inject__setup();
	if (err) {
		/* Conflict or CUPTI failure: deliver the reason now, then stop
		 * (an attach: its thread detaches). */
		if (!attach)
			inject__finish();
		return err;
	}
	if (attach) {
		/* the contexts exist already: no CONTEXT_CREATED to wait for */
		if (!atomic_flag_test_and_set(&inj.devices_done))
			inject__devices();
		if (inj.gpu_memory)	/* the baseline: what was there before */
			xpu_cupti_mem__attached();
		atomic_store(&inj_pcs_attach, xpu_cupti_pcsamp__on());
	} else if (inject__start_flusher()) {
		/* Without the thread the queue only drains at exit: still correct. */
		inject__warn("cannot start the flush thread; GPU records are sent at exit only");
	}
	xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
	return 0;
off:
	atomic_store(&inj.state, INJECT_OFF);
	xpu_client__disconnect(&inj.client);
	return -ENOTCONN;
}

__attribute__((visibility("default")))
int InitializeInjection(void)
{
	int expect = INJECT_NONE;

	/* Once per process, whoever calls first; never while attached. */
	if (atomic_load(&inj_attaching) ||
	    !atomic_compare_exchange_strong(&inj.state, &expect, INJECT_ACTIVE))
		return 1;
	pthread_atfork(NULL, NULL, inject__atfork_child);
	atexit(inject__finish);
	inject__start(false);
	return 1;
}

/* ---- attach and detach (xpu-record -p: attach.h) -------------------------------- */

/* cuptiFinalize() in the next API exit callback (inj_finalize_req); a
 * process that makes no runtime or driver call within
 * INJECT_FINALIZE_WAIT_MS is idle in CUDA: then from this thread, after
 * the callbacks are off and we unsubscribed. */
static void inject__finalize(void)
{
	struct timespec ts;
	bool done;

	pthread_mutex_lock(&inj_fin_lock);
	inj_finalized = false;
	pthread_mutex_unlock(&inj_fin_lock);
	atomic_store(&inj_finalize_req, 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += INJECT_FINALIZE_WAIT_MS / 1000;
	ts.tv_nsec += (INJECT_FINALIZE_WAIT_MS % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&inj_fin_lock);
	while (!inj_finalized &&
	       pthread_cond_timedwait(&inj_fin_cond, &inj_fin_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&inj_fin_lock);
	/* no callback took it (an idle process): ours, unless one takes it now */
	done = !atomic_exchange(&inj_finalize_req, 0);
	if (done) {
		/* a callback took the request: wait until it has finalized */
		pthread_mutex_lock(&inj_fin_lock);
		while (!inj_finalized)
			pthread_cond_wait(&inj_fin_cond, &inj_fin_lock);
		pthread_mutex_unlock(&inj_fin_lock);
		return;
	}
	/* no application thread is in CUDA: ours to do */
	if (atomic_exchange(&inj_pcs_attach, false))
		xpu_cupti_pcsamp__finish();
	cuptiEnableAllDomains(0, inj.sub);
	cuptiUnsubscribe(inj.sub);
	cuptiFinalize();
}

/* Everything a recording set up, undone: what CUPTI holds flushed and
 * sent, activity and callbacks off, unsubscribed, CUPTI finalized (it
 * leaves the process's CUDA calls alone again), the socket closed. The
 * state stays off until the per-recording state is reset. Caller holds
 * inj_attach_lock. */
static void inject__detach(bool finalize)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
	};

	if (atomic_load(&inj.state) == INJECT_NONE)
		return;
	if (inj.subscribed) {
		/* records of the window still in CUPTI's buffers: converted
		 * while the state is off but not none */
		atomic_store(&inj.state, INJECT_OFF);
		/* an attach's PC sampling ends in the finalize (see
		 * inj_pcs_attach); the process's exit (!finalize) ends it here */
		if (!finalize && atomic_exchange(&inj_pcs_attach, false))
			xpu_cupti_pcsamp__finish();
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		inject__report_dropped(NULL, 0);
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			cuptiActivityDisable(kinds[i]);
		xpu_cupti_mem__disable();
		if (finalize)
			inject__finalize();
		inj.subscribed = 0;
	}
	atomic_store(&inj.state, INJECT_OFF);
	if (inj.nvtx_on)
		xpu_nvtx__finish(&inj.nvtx);
	if (inj.walk_probe)
		xpu_walk_probe__finish(&inj.client);
	if (xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS) == -ETIMEDOUT ||
	    inj.client.len)
		xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS);
	xpu_client__close(&inj.client);
}

/* What one recording set up per process, back to nothing, for the next
 * attach. The NVTX tracking and the walk's table of the last one are left
 * (a callback may still be reading them): a few KB per attach. */
static void inject__reset(void)
{
	atomic_flag_clear(&inj.devices_done);
	atomic_flag_clear(&inj.nested_noted);
	atomic_flag_clear(&inj.finished);
	memset(inj_rt_at_exit, 0, sizeof(inj_rt_at_exit));
	memset(inj_drv_at_exit, 0, sizeof(inj_drv_at_exit));
	memset(inj_rt_copy, 0, sizeof(inj_rt_copy));
	memset(inj_drv_copy, 0, sizeof(inj_drv_copy));
	inj.nvtx_on = inj.no_marker = inj.unw_probe = inj.walk_probe = inj.gpu_memory = false;
	inj.subscribed = 0;
	atomic_store(&inj_pcs_fetch_req, 0);
	xpu_client__exit(&inj.client);
}

/* The process exits while attached: the recording's end as the recorder
 * would have asked for it. */
static void inject__attach_atexit(void)
{
	pthread_mutex_lock(&inj_attach_lock);
	if (atomic_load(&inj_attaching))
		inject__detach(false);	/* the process ends: no finalize to wait for */
	pthread_mutex_unlock(&inj_attach_lock);
}

static void *inject__attach_thread(void *arg)
{
	int err;

	pthread_mutex_lock(&inj_attach_lock);
	err = inject__start(true);
	pthread_mutex_unlock(&inj_attach_lock);
	/* recording until the recorder shuts its side down or dies */
	while (!err && !xpu_attach__ended(inj.client.fd, inject__flush_ms())) {
		if (atomic_load(&inj.state) == INJECT_ACTIVE) {
			if (atomic_load(&inj_pcs_attach))
				atomic_store(&inj_pcs_fetch_req, 1);	/* the next API exit */
			cuptiActivityFlushAll(0);
		}
		if (inj.nvtx_on)
			xpu_nvtx__report_lost(&inj.nvtx);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
	}
	atomic_store(&inj_attach_live, 0);	/* ending: a next attach waits */
	pthread_mutex_lock(&inj_attach_lock);
	inject__detach(true);
	inject__reset();
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&inj_attaching, 0);
	pthread_mutex_unlock(&inj_attach_lock);
	return arg;
}

__attribute__((visibility("default")))
int xpu_cupti_attach(const char *config)
{
	static atomic_flag atexit_done = ATOMIC_FLAG_INIT;
	int expect = INJECT_NONE, err;

	/* one attach at a time: -EISCONN, one records (another recorder's:
	 * refused at once); -EALREADY, the last one still ends (tried again);
	 * a launched process records already (-EBUSY) */
	if (atomic_exchange(&inj_attaching, 1))
		return atomic_load(&inj_attach_live) ? -EISCONN : -EALREADY;
	if (!atomic_compare_exchange_strong(&inj.state, &expect, INJECT_ACTIVE)) {
		atomic_store(&inj_attaching, 0);
		return -EBUSY;
	}
	if (xpu_attach_cfg__parse(&inj_cfg, config)) {
		err = -EINVAL;
		goto out_off;
	}
	if (!atomic_flag_test_and_set(&atexit_done)) {
		pthread_atfork(NULL, NULL, inject__atfork_child);
		atexit(inject__attach_atexit);
	}
	atomic_store(&inj_attach_live, 1);
	err = xpu_attach__thread(inject__attach_thread, NULL);
	if (!err)
		return 0;
	atomic_store(&inj_attach_live, 0);
out_off:
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&inj_attaching, 0);
	return err;
}

/*
 * NVTX's injection entry point: each NVTX instance in the process (the
 * application's, PyTorch's, NCCL's: NVTX is header-only) calls it once, the
 * first time one of its functions runs, when NVTX_INJECTION64_PATH names this
 * library. We hand the instance to the libcupti we are linked with, exactly
 * as if the variable named that file: CUPTI then turns NVTX calls into
 * CUPTI_CB_DOMAIN_NVTX callbacks for its subscribers, us. NVTX calls made
 * before InitializeInjection (before cuInit) reach CUPTI with no subscriber
 * and are not recorded. Returns 0 (NVTX stays a no-op) when libcupti cannot
 * be found or is a version whose NVTX support crashes.
 */
typedef const void *(*nvtx_export_table_fn)(uint32_t);
typedef int (*nvtx_init_fn)(nvtx_export_table_fn);

__attribute__((visibility("default")))
int InitializeInjectionNvtx2(nvtx_export_table_fn get_export_table)
{
	nvtx_init_fn init = NULL;
	Dl_info info;
	void *h;

	if (inject__nvtx_broken() || !dladdr((void *)cuptiGetVersion, &info) || !info.dli_fname)
		return 0;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		init = (nvtx_init_fn)dlsym(h, "InitializeInjectionNvtx2");
	if (!init || init == InitializeInjectionNvtx2)
		return 0;
	return init(get_export_table);
}

/*
 * NVTX's entry point for its extensions, called once per NVTX instance and
 * extension module: the payload module's push, pop, start and end go to
 * nvtx.h (nvtx_ext.h); other modules are left as no-ops, as they were before
 * this existed (CUPTI's own extension entry point is not called).
 */
__attribute__((visibility("default")))
int InitializeInjectionNvtxExtension(struct xpu_nvtx_ext_module *module)
{
	return xpu_nvtx_ext__init(module);
}
