// SPDX-License-Identifier: MIT
/*
 * libxpu-cupti.so's entry points. libcuda loads us through
 * CUDA_INJECTION64_PATH and calls InitializeInjection() inside cuInit();
 * xpu-record -p calls xpu_cupti_attach() (cupti_attach.c); NVTX calls its
 * two entries below. What a recording does:
 *
 * - Callbacks (cupti_callbacks.c): only the API calls selected by apis.h
 *   are enabled; at API enter the call's stack is taken, keyed by its
 *   correlation ID.
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
 * - A flush thread (cupti_flush.c) asks CUPTI for completed buffers every
 *   200 ms (or the period xpu-record's bounded capture asks for, wire.h:
 *   then CUPTI's buffers are sized to fill within it, bufsize.h) and sends
 *   the queue; at exit a forced flush sends the rest.
 * - The state of a recording is cupti_state.h's; its start, cupti_start.c.
 *
 * Never break the application: every CUPTI failure is one warning and the
 * library turns itself off; no exit(), no abort(), no blocking on the socket
 * in application threads.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <pthread.h>

#include <cupti.h>

#include "cupti/nvtx/nvtx_ext.h"
#include "cupti_state.h"
#include "cupti_flush.h"
#include "cupti_start.h"
#include "cupti_attach.h"

__attribute__((visibility("default")))
int InitializeInjection(void)
{
	int expect = INJECT_NONE;

	/* Once per process, whoever calls first; never while attached. */
	if (inject__attaching() ||
	    !atomic_compare_exchange_strong(&inj.state, &expect, INJECT_ACTIVE))
		return 1;
	pthread_atfork(NULL, NULL, inject__atfork_child);
	atexit(inject__finish);
	inject__start(false);
	return 1;
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
