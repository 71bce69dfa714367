// SPDX-License-Identifier: MIT
/*
 * The fake CUPTI library's --gpu-memory, as the real one records a CUDA
 * program's memory (cupti/memory/): the fake app's allocation calls below
 * are marked at enter (when the recorder asked for --gpu-memory, as the
 * real library enables those callbacks only then) and give what CUPTI's
 * MEMORY2 and MEMORY_POOL activity would, with the call's correlation ID:
 *
 *   xpu_fake_cuda_malloc(&p, n)        cudaMalloc: a GPU_MEMORY allocation of n
 *                                      bytes at the next fake address; more than
 *                                      the device's free memory returns 2
 *                                      (cudaErrorMemoryAllocation) and sends a
 *                                      GPU_OOM of n bytes (the real library's
 *                                      mem_send.c) instead
 *   xpu_fake_cuda_free(p)              cudaFree: its release, same size
 *   xpu_fake_cuda_malloc_async(&p, n)  cudaMallocAsync on stream 7: the first one
 *                                      creates the pool (GPU_MEMPOOL created, same
 *                                      correlation ID); allocations are async,
 *                                      from the pool
 *   xpu_fake_cuda_free_async(p)        cudaFreeAsync
 *   xpu_fake_cuda_pool_trim()          cudaMemPoolTrimTo: GPU_MEMPOOL trimmed
 *
 * The device (XPU_FAKE_DEVICE) has 80 GiB, of which 512 MiB are in use at
 * the start: its GPU_MEM_STATE, sent at the start (flagged attached after
 * xpu-record -p). Calls return 0 (and 2 for the OOM) with or without a
 * recording, as CUDA does.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/memory/mem_send.h"
#include "fake_memory.h"

/* cupti_runtime_cbid.h's ids (not included: no CUDA toolkit needed) */
#define FAKE_CBID_MALLOC	20	/* cudaMalloc_v3020 */
#define FAKE_CBID_FREE		22	/* cudaFree_v3020 */
#define FAKE_CBID_MALLOC_ASYNC	373	/* cudaMallocAsync_v11020 */
#define FAKE_CBID_FREE_ASYNC	375	/* cudaFreeAsync_v11020 */
#define FAKE_CBID_POOL_TRIM	377	/* cudaMemPoolTrimTo_v11020 */
#define FAKE_MEM_TOTAL		(80ull << 30)
#define FAKE_MEM_USED		(512ull << 20)
#define FAKE_POOL_ADDR		0x7f00a0000000ull
#define FAKE_BLOCKS		256

static struct {
	pthread_mutex_t lock;
	struct xpu_client *client;
	uint32_t pid, device;
	bool on;
	uint64_t next_addr, used;
	bool pool;			/* created */
	uint64_t pool_used, pool_size;
	struct { uint64_t addr, bytes; bool async; } blk[FAKE_BLOCKS];
	int nr_blk;
} mem = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_addr = 0x7f0040000000ull };

static uint64_t fake_mem__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void fake_mem__start(struct xpu_client *c, uint32_t pid, uint32_t device, bool on, bool attach,
		     uint64_t now)
{
	pthread_mutex_lock(&mem.lock);
	mem.client = c;
	mem.pid = pid;
	mem.device = device;
	mem.on = on;
	if (on)
		xpu_mem__state(c, pid, device, FAKE_MEM_TOTAL - FAKE_MEM_USED - mem.used,
			       FAKE_MEM_TOTAL, attach, now);
	pthread_mutex_unlock(&mem.lock);
}

void fake_mem__finish(void)
{
	pthread_mutex_lock(&mem.lock);
	mem.on = false;
	pthread_mutex_unlock(&mem.lock);
}

/* One GPU_MEMORY record. With mem.lock. */
static void fake_mem__record(uint64_t corr, int op, uint64_t addr, uint64_t bytes, bool async)
{
	struct xpu_gpu_memory m = {
		.time = fake_mem__now(), .correlation_id = corr, .address = addr, .bytes = bytes,
		.pool_address = async ? FAKE_POOL_ADDR : 0, .pid = mem.pid, .device = mem.device,
		.context = 1, .stream = async ? 7 : XPU_GPU_MEMORY_NO_STREAM, .op = (uint8_t)op,
		.memory_kind = XPU_MEMKIND_DEVICE, .pool_type = async ? 1 : 0,
		.flags = async ? XPU_GPU_MEMORY_ASYNC : 0,
	};

	if (mem.on)
		xpu_client__add(mem.client, XPU_REC_GPU_MEMORY, &m, sizeof(m));
}

static void fake_mem__pool(uint64_t corr, int op)
{
	struct xpu_gpu_mempool p = {
		.time = fake_mem__now(), .correlation_id = corr, .address = FAKE_POOL_ADDR,
		.size = mem.pool_size, .utilized = mem.pool_used, .pid = mem.pid,
		.device = mem.device, .op = (uint8_t)op, .pool_type = 1,
	};

	if (mem.on)
		xpu_client__add(mem.client, XPU_REC_GPU_MEMPOOL, &p, sizeof(p));
}

static uint64_t fake_mem__call(uint32_t cbid)
{
	return mem.on ? fake__memory_call(cbid) : 0;
}

static int fake_mem__alloc(uint64_t *ptr, uint64_t bytes, bool async)
{
	uint32_t cbid = async ? FAKE_CBID_MALLOC_ASYNC : FAKE_CBID_MALLOC;
	uint64_t corr = fake_mem__call(cbid);

	pthread_mutex_lock(&mem.lock);
	if (bytes > FAKE_MEM_TOTAL - FAKE_MEM_USED - mem.used || mem.nr_blk == FAKE_BLOCKS) {
		struct xpu_mem_oom o = {
			.time = fake_mem__now(), .bytes = bytes, .correlation_id = corr,
			.pid = mem.pid, .tid = (uint32_t)gettid(), .device = -1,
			.domain = XPU_API_RUNTIME, .cbid = cbid, .ret = 2,
		};

		if (mem.on)
			xpu_mem__oom(mem.client, &o);
		pthread_mutex_unlock(&mem.lock);
		*ptr = 0;
		return 2;
	}
	*ptr = mem.next_addr;
	mem.next_addr += (bytes + 0xfffff) & ~0xfffffull;	/* 1 MiB apart */
	mem.used += bytes;
	mem.blk[mem.nr_blk].addr = *ptr;
	mem.blk[mem.nr_blk].bytes = bytes;
	mem.blk[mem.nr_blk++].async = async;
	if (async && !mem.pool) {
		mem.pool = true;
		mem.pool_size = 32ull << 20;
		fake_mem__pool(corr, XPU_MEMPOOL_CREATED);
	}
	if (async)
		mem.pool_used += bytes;
	fake_mem__record(corr, XPU_MEMORY_ALLOC, *ptr, bytes, async);
	pthread_mutex_unlock(&mem.lock);
	return 0;
}

static int fake_mem__free(uint64_t ptr, bool async)
{
	uint64_t corr = fake_mem__call(async ? FAKE_CBID_FREE_ASYNC : FAKE_CBID_FREE);

	pthread_mutex_lock(&mem.lock);
	for (int i = 0; i < mem.nr_blk; i++) {
		if (mem.blk[i].addr != ptr)
			continue;
		fake_mem__record(corr, XPU_MEMORY_RELEASE, ptr, mem.blk[i].bytes, mem.blk[i].async);
		mem.used -= mem.blk[i].bytes;
		if (mem.blk[i].async)
			mem.pool_used -= mem.blk[i].bytes;
		mem.blk[i] = mem.blk[--mem.nr_blk];
		break;
	}
	pthread_mutex_unlock(&mem.lock);
	return 0;
}

__attribute__((visibility("default")))
int xpu_fake_cuda_malloc(uint64_t *ptr, uint64_t bytes)
{
	return fake_mem__alloc(ptr, bytes, false);
}

__attribute__((visibility("default")))
int xpu_fake_cuda_free(uint64_t ptr)
{
	return fake_mem__free(ptr, false);
}

__attribute__((visibility("default")))
int xpu_fake_cuda_malloc_async(uint64_t *ptr, uint64_t bytes)
{
	return fake_mem__alloc(ptr, bytes, true);
}

__attribute__((visibility("default")))
int xpu_fake_cuda_free_async(uint64_t ptr)
{
	return fake_mem__free(ptr, true);
}

__attribute__((visibility("default")))
int xpu_fake_cuda_pool_trim(void)
{
	uint64_t corr = fake_mem__call(FAKE_CBID_POOL_TRIM);

	pthread_mutex_lock(&mem.lock);
	if (mem.pool) {
		mem.pool_size = mem.pool_used;
		fake_mem__pool(corr, XPU_MEMPOOL_TRIMMED);
	}
	pthread_mutex_unlock(&mem.lock);
	return 0;
}
