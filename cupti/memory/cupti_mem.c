// SPDX-License-Identifier: MIT
/* --gpu-memory's CUPTI glue; see cupti_mem.h. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "format/xpu_format.h"
#include "cupti/memory/mem_apis.h"
#include "cupti/memory/mem_send.h"
#include "cupti/memory/cupti_mem_convert.h"
#include "cupti/memory/cupti_mem.h"

#define MEM_DEVICES	64		/* devices whose state is sent once each */

static struct {
	bool on;
	struct xpu_client *client;
	uint32_t pid;
	uint64_t (*time)(void);
	_Atomic uint64_t devices_done;	/* bit per device ordinal below MEM_DEVICES */
	bool rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];	/* memory calls: their exits looked at */
	bool drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
} mem;

void xpu_cupti_mem__init(bool on, struct xpu_client *c, uint32_t pid, uint64_t (*time)(void))
{
	mem.on = on;
	mem.client = c;
	mem.pid = pid;
	mem.time = time;
	atomic_store(&mem.devices_done, 0);
	memset(mem.rt, 0, sizeof(mem.rt));
	memset(mem.drv, 0, sizeof(mem.drv));
}

bool xpu_cupti_mem__on(void)
{
	return mem.on;
}

CUptiResult xpu_cupti_mem__enable(const char **what)
{
	CUptiResult r;

	*what = "cuptiActivityEnable(MEMORY2)";
	if ((r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2)) != CUPTI_SUCCESS)
		return r;
	*what = "cuptiActivityEnable(MEMORY_POOL)";
	return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
}

void xpu_cupti_mem__disable(void)
{
	if (!mem.on)
		return;
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
}

bool xpu_cupti_mem__want(CUpti_CallbackDomain domain, uint32_t cbid, const char *name)
{
	if (!mem.on || !xpu_mem_apis__match(name))
		return false;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		mem.rt[cbid] = true;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		mem.drv[cbid] = true;
	return true;
}

void xpu_cupti_mem__api_exit(CUpti_CallbackDomain domain, uint32_t cbid,
			     const CUpti_CallbackData *cb)
{
	bool rt = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	struct xpu_mem_oom o;
	int ret;

	if (!mem.on || !cb->functionReturnValue ||
	    !(rt ? cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && mem.rt[cbid] :
		   cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && mem.drv[cbid]))
		return;
	ret = *(const int *)cb->functionReturnValue;
	if (!xpu_mem_apis__is_oom(ret))
		return;
	o = (struct xpu_mem_oom){
		.time = mem.time(), .correlation_id = cb->correlationId,
		.pid = mem.pid, .tid = (uint32_t)gettid(), .device = -1,
		.domain = rt ? XPU_API_RUNTIME : XPU_API_DRIVER, .cbid = cbid, .ret = ret,
	};
	o.bytes = xpu_mem_convert__bytes(o.domain, cbid, cb->functionParams);
	xpu_mem__oom(mem.client, &o);
}

/* ---- each device's memory (cuMemGetInfo) ------------------------------------- */

typedef CUresult (*cu_ctx_fn)(CUcontext);
typedef CUresult (*cu_ctx_out_fn)(CUcontext *);
typedef CUresult (*cu_ctx_dev_fn)(CUdevice *);
typedef CUresult (*cu_meminfo_fn)(size_t *, size_t *);
typedef CUresult (*cu_count_fn)(int *);
typedef CUresult (*cu_get_fn)(CUdevice *, int);
typedef CUresult (*cu_pstate_fn)(CUdevice, unsigned int *, int *);
typedef CUresult (*cu_pretain_fn)(CUcontext *, CUdevice);
typedef CUresult (*cu_prelease_fn)(CUdevice);

struct mem_cu {
	void *lib;
	cu_ctx_fn push;
	cu_ctx_out_fn pop;
	cu_ctx_dev_fn get_device;
	cu_meminfo_fn meminfo;
	cu_count_fn count;
	cu_get_fn get;
	cu_pstate_fn pstate;
	cu_pretain_fn pretain;
	cu_prelease_fn prelease;
};

/* libcuda's functions, from its own handle (it is loaded: it loaded us). */
static bool mem__cu(struct mem_cu *cu)
{
	memset(cu, 0, sizeof(*cu));
	if (!(cu->lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)))
		return false;
	cu->push = (cu_ctx_fn)dlsym(cu->lib, "cuCtxPushCurrent_v2");
	cu->pop = (cu_ctx_out_fn)dlsym(cu->lib, "cuCtxPopCurrent_v2");
	cu->get_device = (cu_ctx_dev_fn)dlsym(cu->lib, "cuCtxGetDevice");
	cu->meminfo = (cu_meminfo_fn)dlsym(cu->lib, "cuMemGetInfo_v2");
	cu->count = (cu_count_fn)dlsym(cu->lib, "cuDeviceGetCount");
	cu->get = (cu_get_fn)dlsym(cu->lib, "cuDeviceGet");
	cu->pstate = (cu_pstate_fn)dlsym(cu->lib, "cuDevicePrimaryCtxGetState");
	cu->pretain = (cu_pretain_fn)dlsym(cu->lib, "cuDevicePrimaryCtxRetain");
	cu->prelease = (cu_prelease_fn)dlsym(cu->lib, "cuDevicePrimaryCtxRelease_v2");
	if (cu->push && cu->pop && cu->get_device && cu->meminfo)
		return true;
	dlclose(cu->lib);
	cu->lib = NULL;
	return false;
}

/* The state of ctx's device, unless sent already; ctx is made current for
 * the call and the thread's own current context restored. */
static void mem__ctx_state(struct mem_cu *cu, CUcontext ctx, bool attach)
{
	size_t free = 0, total = 0;
	CUcontext old;
	CUdevice dev = -1;
	uint64_t bit;

	if (cu->push(ctx) != CUDA_SUCCESS)
		return;
	if (cu->get_device(&dev) == CUDA_SUCCESS && dev >= 0 && dev < MEM_DEVICES) {
		bit = 1ull << dev;
		if (!(atomic_fetch_or(&mem.devices_done, bit) & bit) &&
		    cu->meminfo(&free, &total) == CUDA_SUCCESS)
			xpu_mem__state(mem.client, mem.pid, (uint32_t)dev, free, total, attach,
				       mem.time());
	}
	cu->pop(&old);
}

void xpu_cupti_mem__context(CUcontext ctx)
{
	struct mem_cu cu;

	if (!mem.on || !ctx || !mem__cu(&cu))
		return;
	mem__ctx_state(&cu, ctx, false);
	dlclose(cu.lib);
}

void xpu_cupti_mem__attached(void)
{
	struct mem_cu cu;
	int n = 0;

	if (!mem.on || !mem__cu(&cu))
		return;
	if (!cu.count || !cu.get || !cu.pstate || !cu.pretain || !cu.prelease ||
	    cu.count(&n) != CUDA_SUCCESS)
		n = 0;
	for (int i = 0; i < n && i < MEM_DEVICES; i++) {
		unsigned int flags;
		CUcontext ctx;
		CUdevice dev;
		int active = 0;

		/* an inactive primary context: the process has no memory there,
		 * and retaining it would create one */
		if (cu.get(&dev, i) != CUDA_SUCCESS || cu.pstate(dev, &flags, &active) != CUDA_SUCCESS ||
		    !active || cu.pretain(&ctx, dev) != CUDA_SUCCESS)
			continue;
		mem__ctx_state(&cu, ctx, true);
		cu.prelease(dev);
	}
	dlclose(cu.lib);
}
