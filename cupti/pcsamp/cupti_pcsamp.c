// SPDX-License-Identifier: MIT
/* CUPTI PC Sampling glue: see cupti_pcsamp.h. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "pcsamp.h"
#include "cupti_pcsamp.h"

_Static_assert(sizeof(CUpti_PCSamplingStallReason) == sizeof(struct xpu_gpu_pc_stall) &&
	       offsetof(CUpti_PCSamplingStallReason, samples) ==
	       offsetof(struct xpu_gpu_pc_stall, samples), "stall layouts differ");

#define PCS_MAX_CTX		64
#define PCS_COLLECT_PCS		4096		/* PCs per cuptiPCSamplingGetData */
#define PCS_MAX_REASONS		256
#define PCS_GETDATA_ROUNDS	64		/* per fetch: remainingNumPcs */

typedef CUptiResult (*pcs_enable_fn)(CUpti_PCSamplingEnableParams *);
typedef CUptiResult (*pcs_disable_fn)(CUpti_PCSamplingDisableParams *);
typedef CUptiResult (*pcs_config_fn)(CUpti_PCSamplingConfigurationInfoParams *);
typedef CUptiResult (*pcs_getdata_fn)(CUpti_PCSamplingGetDataParams *);
typedef CUptiResult (*pcs_nreasons_fn)(CUpti_PCSamplingGetNumStallReasonsParams *);
typedef CUptiResult (*pcs_reasons_fn)(CUpti_PCSamplingGetStallReasonsParams *);
typedef CUptiResult (*pcs_crc_fn)(CUpti_GetCubinCrcParams *);
typedef CUptiResult (*pcs_start_fn)(CUpti_PCSamplingStartParams *);
typedef CUptiResult (*pcs_stop_fn)(CUpti_PCSamplingStopParams *);

struct pcs_ctx {
	CUcontext ctx;
	uint32_t device, context_id;
	uint64_t window_start;
	CUpti_PCSamplingData data;	/* for cuptiPCSamplingGetData */
	CUpti_PCSamplingData cfg_data;	/* CUPTI's at disable (SAMPLING_DATA_BUFFER) */
	size_t nr_reasons;
	bool on;
	bool sampling;			/* duty: between Start and Stop */
	uint64_t range_start;		/* duty: the last Start */
	uint64_t next_toggle;		/* duty: when to Stop (sampling) or Start */
};

static struct {
	struct xpu_pcsamp *s;
	uint64_t (*now)(void);
	int period;
	struct xpu_pcsamp_duty duty;	/* both 0: continuous */
	_Atomic uint64_t next_toggle;	/* duty: the soonest of the contexts' */
	_Atomic uint64_t enable_after;	/* contexts enabled at API exits from then on */
	uint64_t nr_toggles, toggle_ns;	/* duty: Start/Stop calls and their time */
	uint64_t nr_fetches, fetch_ns;	/* cuptiPCSamplingGetData rounds and their time */
	bool on;
	pthread_mutex_t lock;		/* ctxs and every call into the PC Sampling API */
	struct pcs_ctx ctxs[PCS_MAX_CTX];
	bool failed_noted;
	pcs_enable_fn enable;
	pcs_disable_fn disable;
	pcs_config_fn config;
	pcs_getdata_fn getdata;
	pcs_nreasons_fn nreasons;
	pcs_reasons_fn reasons;
	pcs_crc_fn crc;
	pcs_start_fn start;
	pcs_stop_fn stop;
} pcs = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *pcs__strerr(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* Once per process: why PC sampling does not run, on stderr and in the
 * trace. The rest of the recording goes on. */
static void pcs__off(const char *what, CUptiResult r)
{
	char msg[256];

	if (pcs.failed_noted)
		return;
	pcs.failed_noted = true;
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		snprintf(msg, sizeof(msg), "off: %s: %s (the driver restricts profiling to admin "
			 "users: NVreg_RestrictProfilingToAdminUsers=0, or run as root)", what,
			 pcs__strerr(r));
	else
		snprintf(msg, sizeof(msg), "off: %s: %s", what, r == CUPTI_SUCCESS ?
			 "not available in this libcupti" : pcs__strerr(r));
	fprintf(stderr, "xpu-cupti: warning: pid %u: GPU PC sampling %s; the rest of the "
		"recording goes on\n", pcs.s->pid, msg);
	xpu_client__meta(pcs.s->client, XPU_META_CUPTI_PC_SAMPLING, msg);
}

static bool pcs__resolve(void)
{
	Dl_info info;
	void *h;

	if (!dladdr((void *)cuptiGetVersion, &info) || !info.dli_fname)
		return false;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	pcs.enable = (pcs_enable_fn)dlsym(h, "cuptiPCSamplingEnable");
	pcs.disable = (pcs_disable_fn)dlsym(h, "cuptiPCSamplingDisable");
	pcs.config = (pcs_config_fn)dlsym(h, "cuptiPCSamplingSetConfigurationAttribute");
	pcs.getdata = (pcs_getdata_fn)dlsym(h, "cuptiPCSamplingGetData");
	pcs.nreasons = (pcs_nreasons_fn)dlsym(h, "cuptiPCSamplingGetNumStallReasons");
	pcs.reasons = (pcs_reasons_fn)dlsym(h, "cuptiPCSamplingGetStallReasons");
	pcs.crc = (pcs_crc_fn)dlsym(h, "cuptiGetCubinCrc");
	pcs.start = (pcs_start_fn)dlsym(h, "cuptiPCSamplingStart");
	pcs.stop = (pcs_stop_fn)dlsym(h, "cuptiPCSamplingStop");
	dlclose(h);	/* NOLOAD: our link holds it */
	return pcs.enable && pcs.disable && pcs.config && pcs.getdata && pcs.nreasons &&
	       pcs.reasons && pcs.start && pcs.stop;
}

int xpu_cupti_pcsamp__setup(struct xpu_pcsamp *s, CUpti_SubscriberHandle sub, int period,
			    const struct xpu_pcsamp_duty *duty, uint64_t (*now)(void))
{
	static const CUpti_CallbackIdResource cbids[] = {
		CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CUPTI_CBID_RESOURCE_MODULE_LOADED,
		CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
	};
	char msg[192], cycle[96] = "";

	pcs.s = s;
	pcs.now = now;
	pcs.period = period;
	pcs.duty = *duty;
	atomic_store(&pcs.next_toggle, UINT64_MAX);
	atomic_store(&pcs.enable_after, now() + duty->after_ns);
	pcs.nr_toggles = pcs.toggle_ns = pcs.nr_fetches = pcs.fetch_ns = 0;
	pcs.failed_noted = false;
	memset(pcs.ctxs, 0, sizeof(pcs.ctxs));
	if (!pcs__resolve()) {
		pcs__off("cuptiPCSampling*", CUPTI_SUCCESS);
		return -ENOSYS;
	}
	for (size_t i = 0; i < sizeof(cbids) / sizeof(cbids[0]); i++) {
		CUptiResult r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbids[i]);

		if (r != CUPTI_SUCCESS) {
			pcs__off("cuptiEnableCallback(RESOURCE)", r);
			return -EIO;
		}
	}
	pcs.on = true;
	if (duty->on_ns)
		snprintf(cycle, sizeof(cycle), ", duty %" PRIu64 " ms on / %" PRIu64 " ms off",
			 duty->on_ns / 1000000, duty->off_ns / 1000000);
	else if (duty->after_ns)
		snprintf(cycle, sizeof(cycle), ", from %" PRIu64 " ms after the start",
			 duty->after_ns / 1000000);
	if (period > 0)
		snprintf(msg, sizeof(msg), "on (continuous, period 2^%d cycles%s)", period, cycle);
	else
		snprintf(msg, sizeof(msg), "on (continuous, CUPTI's default period%s)", cycle);
	xpu_client__meta(s->client, XPU_META_CUPTI_PC_SAMPLING, msg);
	return 0;
}

bool xpu_cupti_pcsamp__on(void)
{
	return pcs.on;
}

static int pcs__alloc_data(CUpti_PCSamplingData *d, size_t nr_reasons)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->collectNumPcs = PCS_COLLECT_PCS;
	d->pPcData = calloc(PCS_COLLECT_PCS, sizeof(*d->pPcData));
	if (!d->pPcData)
		return -ENOMEM;
	for (size_t i = 0; i < PCS_COLLECT_PCS; i++) {
		d->pPcData[i].size = sizeof(d->pPcData[i]);
		d->pPcData[i].stallReason = calloc(nr_reasons ? nr_reasons : 1,
						   sizeof(CUpti_PCSamplingStallReason));
		if (!d->pPcData[i].stallReason)
			return -ENOMEM;
	}
	return 0;
}

static void pcs__free_data(CUpti_PCSamplingData *d)
{
	if (!d->pPcData)
		return;
	for (size_t i = 0; i < PCS_COLLECT_PCS; i++)
		free(d->pPcData[i].stallReason);
	free(d->pPcData);
	d->pPcData = NULL;
}

/* The PCs of d (one GetData's, or CUPTI's buffer at disable) as records. */
static void pcs__emit(struct pcs_ctx *c, CUpti_PCSamplingData *d)
{
	struct xpu_pcsamp_pc pcs_buf[256];
	uint64_t end = pcs.now();
	size_t n = 0;

	for (size_t i = 0; i < d->totalNumPcs && i < d->collectNumPcs; i++) {
		const CUpti_PCSamplingPCData *p = &d->pPcData[i];

		pcs_buf[n++] = (struct xpu_pcsamp_pc){
			.cubin_crc = p->cubinCrc, .pc_offset = p->pcOffset,
			.function = p->functionName, .correlation_id = p->correlationId,
			.nr_stalls = p->stallReasonCount,
			.stalls = (const struct xpu_gpu_pc_stall *)p->stallReason,
		};
		if (n == sizeof(pcs_buf) / sizeof(pcs_buf[0])) {
			xpu_pcsamp__pcs(pcs.s, c->device, c->context_id, c->window_start, end, pcs_buf, n);
			n = 0;
		}
	}
	if (n)
		xpu_pcsamp__pcs(pcs.s, c->device, c->context_id, c->window_start, end, pcs_buf, n);
	xpu_pcsamp__dropped(pcs.s, d->droppedSamples);
	c->window_start = end;
}

/* cuptiPCSamplingGetData until CUPTI has no more PCs. Caller holds the lock. */
static void pcs__fetch(struct pcs_ctx *c)
{
	uint64_t t0 = pcs.now();

	for (int round = 0; c->on && round < PCS_GETDATA_ROUNDS; round++) {
		CUpti_PCSamplingGetDataParams p = {
			.size = CUpti_PCSamplingGetDataParamsSize, .ctx = c->ctx,
			.pcSamplingData = &c->data,
		};
		CUptiResult r;

		c->data.totalNumPcs = c->data.remainingNumPcs = 0;
		c->data.droppedSamples = 0;
		r = pcs.getdata(&p);
		if (r == CUPTI_ERROR_OUT_OF_MEMORY) {	/* hardware buffer full */
			xpu_pcsamp__dropped(pcs.s, 1);
			break;
		}
		if (r != CUPTI_SUCCESS) {
			pcs__off("cuptiPCSamplingGetData", r);
			break;
		}
		pcs__emit(c, &c->data);
		if (!c->data.remainingNumPcs)
			break;
	}
	pcs.nr_fetches++;
	pcs.fetch_ns += pcs.now() - t0;
}

/* Duty: sampling on in c from now (caller holds the lock). */
static void pcs__range_start(struct pcs_ctx *c, uint64_t now)
{
	CUpti_PCSamplingStartParams p = { .size = CUpti_PCSamplingStartParamsSize, .ctx = c->ctx };
	CUptiResult r = pcs.start(&p);

	pcs.nr_toggles++;
	pcs.toggle_ns += pcs.now() - now;
	if (r != CUPTI_SUCCESS) {
		pcs__off("cuptiPCSamplingStart", r);
		c->next_toggle = UINT64_MAX;	/* stays off */
		return;
	}
	c->sampling = true;
	c->range_start = now;
	c->next_toggle = now + pcs.duty.on_ns;
}

/* Duty: sampling off in c, the range sent (caller holds the lock). Its
 * PCs stay in CUPTI until the flush thread fetches them, as in continuous
 * mode. cuptiPCSamplingStop waits for CUPTI to take in the range's samples
 * (H200: about 55 ns a sample, 60-90 ms for a 100 ms range at the default
 * period, 2 ms at period 31): the cost of cycles, on the thread that
 * toggles. Made on the flush thread, it deadlocked with a context's
 * destruction (pcs.lock against the driver's) on an H200. */
static void pcs__range_stop(struct pcs_ctx *c, uint64_t now)
{
	CUpti_PCSamplingStopParams p = { .size = CUpti_PCSamplingStopParamsSize, .ctx = c->ctx };
	CUptiResult r;

	if (!c->sampling)
		return;
	r = pcs.stop(&p);
	c->sampling = false;
	c->next_toggle = now + pcs.duty.off_ns;
	if (r != CUPTI_SUCCESS) {
		pcs__off("cuptiPCSamplingStop", r);
		c->next_toggle = UINT64_MAX;
	}
	pcs.nr_toggles++;
	pcs.toggle_ns += pcs.now() - now;
	xpu_pcsamp__range(pcs.s, c->device, c->context_id, c->range_start, now);
}

static void pcs__toggle(struct pcs_ctx *c, uint64_t now)
{
	if (c->sampling)
		pcs__range_stop(c, now);
	else
		pcs__range_start(c, now);
}

/* The soonest toggle of every context (caller holds the lock). */
static void pcs__next_toggle(void)
{
	uint64_t next = UINT64_MAX;

	for (int i = 0; i < PCS_MAX_CTX; i++)
		if (pcs.ctxs[i].on && pcs.ctxs[i].next_toggle < next)
			next = pcs.ctxs[i].next_toggle;
	atomic_store(&pcs.next_toggle, next);
}

static struct pcs_ctx *pcs__find(CUcontext ctx)
{
	for (int i = 0; i < PCS_MAX_CTX; i++)
		if (pcs.ctxs[i].on && pcs.ctxs[i].ctx == ctx)
			return &pcs.ctxs[i];
	return NULL;
}

/* Caller holds the lock. */
static void pcs__enable(CUcontext ctx)
{
	CUpti_PCSamplingEnableParams ep = { .size = CUpti_PCSamplingEnableParamsSize, .ctx = ctx };
	CUpti_PCSamplingGetNumStallReasonsParams np = {
		.size = CUpti_PCSamplingGetNumStallReasonsParamsSize, .ctx = ctx };
	CUpti_PCSamplingGetStallReasonsParams rp = {
		.size = CUpti_PCSamplingGetStallReasonsParamsSize, .ctx = ctx };
	CUpti_PCSamplingConfigurationInfo info[6];
	CUpti_PCSamplingConfigurationInfoParams cp = {
		.size = CUpti_PCSamplingConfigurationInfoParamsSize, .ctx = ctx,
		.pPCSamplingConfigurationInfo = info,
	};
	uint32_t *index = NULL, sel_index[PCS_MAX_REASONS];
	const char *sel_names[PCS_MAX_REASONS];
	char **names = NULL;
	size_t nr = 0, nsel = 0, ni = 0;
	struct pcs_ctx *c = NULL;
	CUptiResult r;

	if (pcs__find(ctx))
		return;
	for (int i = 0; i < PCS_MAX_CTX && !c; i++)
		if (!pcs.ctxs[i].on)
			c = &pcs.ctxs[i];
	if (!c) {
		pcs__off("more than 64 contexts", CUPTI_ERROR_MAX_LIMIT_REACHED);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	cuptiGetDeviceId(ctx, &c->device);
	cuptiGetContextId(ctx, &c->context_id);
	r = pcs.enable(&ep);
	if (r != CUPTI_SUCCESS) {
		pcs__off("cuptiPCSamplingEnable", r);
		return;
	}
	np.numStallReasons = &nr;
	r = pcs.nreasons(&np);
	if (r != CUPTI_SUCCESS || !nr)
		goto out_disable;
	if (nr > PCS_MAX_REASONS)
		nr = PCS_MAX_REASONS;
	index = calloc(nr, sizeof(*index));
	names = calloc(nr, sizeof(*names));
	for (size_t i = 0; names && i < nr; i++)
		if (!(names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
			goto out_disable;
	if (!index || !names)
		goto out_disable;
	rp.numStallReasons = nr;
	rp.stallReasonIndex = index;
	rp.stallReasons = names;
	r = pcs.reasons(&rp);
	if (r != CUPTI_SUCCESS)
		goto out_disable;
	for (size_t i = 0; i < nr; i++)
		if (xpu_pcsamp__want_reason(names[i])) {
			sel_index[nsel] = index[i];
			sel_names[nsel++] = names[i];
		}
	xpu_pcsamp__reasons(pcs.s, c->device, nsel, sel_index, sel_names);
	c->nr_reasons = nsel;
	if (pcs__alloc_data(&c->data, nsel) || pcs__alloc_data(&c->cfg_data, nsel)) {
		r = CUPTI_ERROR_OUT_OF_MEMORY;
		goto out_disable;
	}
	memset(info, 0, sizeof(info));
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	info[ni++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	info[ni].attributeData.stallReasonData.stallReasonCount = nsel;
	info[ni++].attributeData.stallReasonData.pStallReasonIndex = sel_index;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	info[ni++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->cfg_data;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	info[ni++].attributeData.enableStartStopControlData.enableStartStopControl = pcs.duty.on_ns ? 1 : 0;
	if (pcs.period > 0) {
		info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		info[ni++].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)pcs.period;
	}
	cp.numAttributes = ni;
	r = pcs.config(&cp);
	if (r != CUPTI_SUCCESS)
		goto out_disable;
	c->window_start = pcs.now();
	c->on = true;
	c->range_start = c->window_start;
	c->sampling = !pcs.duty.on_ns;	/* continuous from here */
	if (pcs.duty.on_ns) {
		/* off first, then started by an API exit: a Start made in
		 * CONTEXT_CREATED sampled nothing (H200: graph_demo and a
		 * Triton kernel had no PC sample) */
		c->next_toggle = c->window_start + pcs.duty.off_ns;
		pcs__next_toggle();
	}
	goto out;
out_disable:
	{
		CUpti_PCSamplingDisableParams dp = { .size = CUpti_PCSamplingDisableParamsSize, .ctx = ctx };

		pcs.disable(&dp);
	}
	pcs__off(!nr ? "cuptiPCSamplingGetNumStallReasons" : "cuptiPCSamplingSetConfigurationAttribute", r);
	pcs__free_data(&c->data);
	pcs__free_data(&c->cfg_data);
out:
	for (size_t i = 0; names && i < nr; i++)
		free(names[i]);
	free(names);
	free(index);
}

/* Caller holds the lock. The last PCs, then disabled (CUPTI then puts what
 * it still had in cfg_data). */
static void pcs__disable(struct pcs_ctx *c)
{
	CUpti_PCSamplingDisableParams dp = { .size = CUpti_PCSamplingDisableParamsSize, .ctx = c->ctx };

	if (pcs.duty.on_ns) {
		pcs__range_stop(c, pcs.now());
	} else if (pcs.duty.after_ns) {	/* sampled from its enable on */
		xpu_pcsamp__range(pcs.s, c->device, c->context_id, c->range_start, pcs.now());
	}
	pcs__fetch(c);
	c->cfg_data.totalNumPcs = 0;
	if (pcs.disable(&dp) == CUPTI_SUCCESS && c->cfg_data.totalNumPcs)
		pcs__emit(c, &c->cfg_data);
	c->on = false;
	pcs__free_data(&c->data);
	pcs__free_data(&c->cfg_data);
}

static void pcs__cubin(const CUpti_ModuleResourceData *m)
{
	CUpti_GetCubinCrcParams p = { .size = CUpti_GetCubinCrcParamsSize };
	uint64_t crc;

	if (!m || !m->pCubin || !m->cubinSize)
		return;
	p.cubin = m->pCubin;
	p.cubinSize = m->cubinSize;
	crc = pcs.crc && pcs.crc(&p) == CUPTI_SUCCESS ? p.cubinCrc :
	      xpu_pcsamp__crc64(m->pCubin, m->cubinSize);
	xpu_pcsamp__cubin(pcs.s, crc, m->pCubin, m->cubinSize);
}

void xpu_cupti_pcsamp__resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	struct pcs_ctx *c;

	if (!pcs.on || !rd)
		return;
	/* the cubin without our lock: the flush thread may hold it inside
	 * cuptiPCSamplingGetData while this thread holds the driver's (a
	 * module load); xpu_pcsamp__cubin has its own */
	if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
		pcs__cubin(rd->resourceDescriptor);
		return;
	}
	pthread_mutex_lock(&pcs.lock);
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		if (!pcs.duty.after_ns)	/* else at an API exit, when due */
			pcs__enable(rd->context);
		break;
	case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
		if ((c = pcs__find(rd->context)))
			pcs__disable(c);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
		/* a PC of this module's functions is only unique until it goes;
		 * duty-cycled, the range ends here and the next starts at its
		 * time */
		if ((c = pcs__find(rd->context))) {
			if (pcs.duty.on_ns && c->sampling)
				pcs__range_stop(c, pcs.now());
			pcs__fetch(c);
		}
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&pcs.lock);
}

void xpu_cupti_pcsamp__context(CUcontext ctx)
{
	static __thread CUcontext enabled;	/* this thread's last, known on */

	if (!pcs.on || !ctx || ctx == enabled ||
	    pcs.now() < atomic_load_explicit(&pcs.enable_after, memory_order_relaxed))
		return;
	pthread_mutex_lock(&pcs.lock);
	if (pcs.on && !pcs__find(ctx))
		pcs__enable(ctx);
	if (pcs__find(ctx))
		enabled = ctx;
	pthread_mutex_unlock(&pcs.lock);
}

void xpu_cupti_pcsamp__tick(CUcontext ctx)
{
	uint64_t now;
	struct pcs_ctx *c;

	if (!pcs.on || !pcs.duty.on_ns || !ctx)
		return;
	now = pcs.now();
	if (now < atomic_load_explicit(&pcs.next_toggle, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&pcs.lock))
		return;		/* another thread toggles: the next call sees it */
	c = pcs__find(ctx);
	if (c && now >= c->next_toggle)
		pcs__toggle(c, now);
	pcs__next_toggle();
	pthread_mutex_unlock(&pcs.lock);
}

void xpu_cupti_pcsamp__flush(void)
{
	if (!pcs.on)
		return;
	pthread_mutex_lock(&pcs.lock);
	for (int i = 0; i < PCS_MAX_CTX; i++)
		if (pcs.ctxs[i].on)
			pcs__fetch(&pcs.ctxs[i]);
	pthread_mutex_unlock(&pcs.lock);
}

void xpu_cupti_pcsamp__finish(void)
{
	if (!pcs.on)
		return;
	pthread_mutex_lock(&pcs.lock);
	for (int i = 0; i < PCS_MAX_CTX; i++)
		if (pcs.ctxs[i].on)
			pcs__disable(&pcs.ctxs[i]);
	pcs.on = false;
	if (pcs.duty.on_ns) {
		char msg[224];

		snprintf(msg, sizeof(msg), "%" PRIu64 " cuptiPCSamplingStart/Stop calls on the "
			 "application's threads, %.1f us each; %" PRIu64 " GetData on ours, %.1f us each",
			 pcs.nr_toggles,
			 pcs.nr_toggles ? (double)pcs.toggle_ns / 1e3 / (double)pcs.nr_toggles : 0.0,
			 pcs.nr_fetches,
			 pcs.nr_fetches ? (double)pcs.fetch_ns / 1e3 / (double)pcs.nr_fetches : 0.0);
		xpu_client__meta(pcs.s->client, XPU_META_CUPTI_PC_DUTY, msg);
	}
	pthread_mutex_unlock(&pcs.lock);
	xpu_pcsamp__finish(pcs.s);
}
