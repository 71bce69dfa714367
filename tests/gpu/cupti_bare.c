// SPDX-License-Identifier: MIT
/* A CUPTI client reduced to what any CUPTI-based tool does, for the control
 * run of tests/gpu/attach.sh: how much slower a process stays after CUPTI
 * was enabled in it and finalized again, with none of xpu-perf's code in
 * it (no launch walk, no socket, no NVTX, no uprobes). attach_train.py
 * loads it with ctypes (--cupti-bare) and calls bare_start() and
 * bare_stop() between two steps:
 *   bare_start: activity records for kernels, copies, sets and syncs
 *               (buffers counted and freed), a callback on every runtime
 *               API call (empty but for the detach below);
 *   bare_stop:  records flushed, activity off, and cuptiFinalize() asked
 *               of the next runtime API call's exit callback, as CUPTI's
 *               "Dynamic Detach" sample and xpu-perf's library do it.
 * bare_records() returns the records seen, bare_finalized() 1 once the
 * finalize ran.
 *   cc -O2 -shared -fPIC -o libcupti_bare.so cupti_bare.c \
 *      -I$CUDA/include -I$CUDA/extras/CUPTI/include -L$CUDA/lib64 -lcupti */
#include <cupti.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define BARE_BUF_SIZE (8u << 20)

static CUpti_SubscriberHandle bare_sub;
static atomic_int bare_fin_req, bare_fin_done;
static atomic_ulong bare_nrec;

static const CUpti_ActivityKind bare_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
#define BARE_NKINDS (sizeof(bare_kinds) / sizeof(bare_kinds[0]))

static void CUPTIAPI bare_callback(void *user, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	int one = 1;

	(void)user; (void)cbid;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cb->callbackSite == CUPTI_API_EXIT &&
	    atomic_load_explicit(&bare_fin_req, memory_order_relaxed) &&
	    atomic_compare_exchange_strong(&bare_fin_req, &one, 0)) {
		cuptiFinalize();
		atomic_store(&bare_fin_done, 1);
	}
}

static void CUPTIAPI bare_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BARE_BUF_SIZE);
	*size = *buf ? BARE_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI bare_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
					   size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx; (void)stream; (void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		atomic_fetch_add(&bare_nrec, 1);
	free(buf);
}

int bare_start(void)
{
	if (cuptiActivityRegisterCallbacks(bare_buffer_requested, bare_buffer_completed) ||
	    cuptiSubscribe(&bare_sub, bare_callback, NULL) ||
	    cuptiEnableDomain(1, bare_sub, CUPTI_CB_DOMAIN_RUNTIME_API))
		return -1;
	for (size_t i = 0; i < BARE_NKINDS; i++)
		if (cuptiActivityEnable(bare_kinds[i]))
			return -1;
	return 0;
}

int bare_stop(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (size_t i = 0; i < BARE_NKINDS; i++)
		cuptiActivityDisable(bare_kinds[i]);
	atomic_store(&bare_fin_req, 1);
	return 0;
}

unsigned long bare_records(void)
{
	return atomic_load(&bare_nrec);
}

int bare_finalized(void)
{
	return atomic_load(&bare_fin_done);
}
