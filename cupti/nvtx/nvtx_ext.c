// SPDX-License-Identifier: MIT
/* NVTX payload extension pushes and pops; see nvtx_ext.h. */
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "nvtx.h"
#include "nvtx_ext.h"

static _Atomic(struct xpu_nvtx *) ext_nv;
static atomic_ullong ext_next_key = 1;

static uint64_t nvtx_ext__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's state and the event of a push or start in domain. */
static struct xpu_nvtx_thread *nvtx_ext__self(const void *domain, uint32_t cbid,
					      struct xpu_nvtx_event *ev)
{
	struct xpu_nvtx *nv = atomic_load(&ext_nv);

	if (!nv)
		return NULL;
	*ev = (struct xpu_nvtx_event){
		.time = nvtx_ext__now(), .domain = (uint64_t)(uintptr_t)domain, .cbid = cbid,
	};
	ev->domain_id = xpu_nvtx__domain_id(nv, ev->domain);
	return xpu_nvtx__self(nv);
}

/* The handlers: NVTX's signatures (domain, const nvtxPayloadData_t *, count). */
static int nvtx_ext__push(const void *domain, const void *payload, size_t count)
{
	struct xpu_nvtx_event ev;
	struct xpu_nvtx_thread *t = nvtx_ext__self(domain, XPU_NVTX_EXT_CBID_PUSH, &ev);

	(void)payload, (void)count;
	if (t)
		xpu_nvtx__push(t, &ev);
	return 0;
}

static int nvtx_ext__pop(const void *domain, const void *payload, size_t count)
{
	struct xpu_nvtx *nv = atomic_load(&ext_nv);
	struct xpu_nvtx_thread *t = nv ? xpu_nvtx__self(nv) : NULL;

	(void)payload, (void)count;
	if (t)
		xpu_nvtx__pop(t, nvtx_ext__now(), (uint64_t)(uintptr_t)domain);
	return 0;
}

static uint64_t nvtx_ext__start(const void *domain, const void *payload, size_t count)
{
	struct xpu_nvtx_event ev;
	struct xpu_nvtx_thread *t = nvtx_ext__self(domain, XPU_NVTX_EXT_CBID_START, &ev);
	uint64_t key = XPU_NVTX_EXT_KEY_BIT | atomic_fetch_add(&ext_next_key, 1);

	(void)payload, (void)count;
	if (t)
		xpu_nvtx__start(t, key, &ev);
	return key;
}

static void nvtx_ext__end(const void *domain, uint64_t key, const void *payload, size_t count)
{
	struct xpu_nvtx *nv = atomic_load(&ext_nv);
	struct xpu_nvtx_thread *t = nv ? xpu_nvtx__self(nv) : NULL;

	(void)domain, (void)payload, (void)count;
	if (t)
		xpu_nvtx__end(t, nvtx_ext__now(), key);
}

int xpu_nvtx_ext__init(struct xpu_nvtx_ext_module *m)
{
	static const struct {
		size_t slot;
		intptr_t fn;
	} handlers[] = {
		{ XPU_NVTX_EXT_PUSH, (intptr_t)nvtx_ext__push },
		{ XPU_NVTX_EXT_POP, (intptr_t)nvtx_ext__pop },
		{ XPU_NVTX_EXT_START, (intptr_t)nvtx_ext__start },
		{ XPU_NVTX_EXT_END, (intptr_t)nvtx_ext__end },
	};
	struct xpu_nvtx_ext_segment *seg;

	if (!m)
		return 0;
	if (m->module_id != XPU_NVTX_EXT_PAYLOAD_MODULE || m->nr_segments < 1 || !m->segments ||
	    m->struct_size < offsetof(struct xpu_nvtx_ext_module, get_export_function))
		return 1;	/* a module we leave alone: its calls stay no-ops */
	seg = &m->segments[0];
	for (size_t i = 0; seg->slots && i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].slot < seg->slot_count)	/* older versions have fewer */
			seg->slots[handlers[i].slot] = handlers[i].fn;
	return 1;
}

void xpu_nvtx_ext__attach(struct xpu_nvtx *nv)
{
	atomic_store(&ext_nv, nv);
}
