// SPDX-License-Identifier: MIT
/*
 * --gpu-memory in the library, without a GPU or libcupti (cupti/memory/):
 * synthetic CUPTI 13 MEMORY2 and MEMORY_POOL records through the library's
 * own converter (cupti_convert.c hands them to cupti_mem_convert.c),
 * checked field by field; the size a failed allocation asked for, read
 * from each call's own params struct; which calls are memory calls; the
 * GPU_MEM_STATE and GPU_OOM records; and the ready byte's config, whose
 * flags tell the library that the recorder asked for it (cupti/channel/wire.h).
 */
#include <pthread.h>
#include <string.h>

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>
#include <generated_cuda_runtime_api_meta.h>
#include <generated_cuda_meta.h>

#include "test.h"
#include "test_cupti_server.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/activity/cupti_convert.h"
#include "cupti/memory/cupti_mem_convert.h"
#include "cupti/memory/mem_apis.h"
#include "cupti/memory/mem_send.h"

#define PID 4711

static size_t rec_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
	default: return 0;
	}
}

static int walk_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + rec_size(*rec) : 0;

	if (off + sizeof(CUpti_Activity) > valid)
		return 1;
	*rec = (CUpti_Activity *)(buf + off);
	return rec_size(*rec) == 0 || off + rec_size(*rec) > valid;
}

static uint8_t buf[16 * 1024] __attribute__((aligned(8)));
static size_t buf_len;

static void *put(size_t size)
{
	void *p = buf + buf_len;

	memset(p, 0xa5, size);		/* what the converter leaves must not leak */
	buf_len += size;
	return p;
}

static void put_mem(int op, int kind, uint32_t corr, uint64_t addr, uint64_t bytes, uint64_t t,
		    int pool_type, uint64_t pool_addr, uint32_t stream, uint32_t async)
{
	CUpti_ActivityMemory4 *m = put(sizeof(*m));

	m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m->memoryOperationType = op;
	m->memoryKind = kind;
	m->correlationId = corr;
	m->address = addr;
	m->bytes = bytes;
	m->timestamp = t;
	m->PC = 0;
	m->processId = 999;		/* CUPTI's; the record carries the library's pid */
	m->deviceId = 1;
	m->contextId = 3;
	m->streamId = stream;
	m->name = NULL;
	m->isAsync = async;
	m->memoryPoolConfig.memoryPoolType = pool_type;
	m->memoryPoolConfig.address = pool_addr;
	m->memoryPoolConfig.releaseThreshold = 0;
	m->memoryPoolConfig.pool.size = 1 << 21;
	m->memoryPoolConfig.utilizedSize = 4096;
	m->source = NULL;
}

static void put_pool(int op, uint32_t corr, uint64_t addr, uint64_t size, uint64_t used, uint64_t t)
{
	CUpti_ActivityMemoryPool3 *p = put(sizeof(*p));

	p->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	p->memoryPoolOperationType = op;
	p->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	p->correlationId = corr;
	p->processId = 999;
	p->deviceId = 2;
	p->minBytesToKeep = 0;
	p->address = addr;
	p->size = size;
	p->releaseThreshold = 64;
	p->timestamp = t;
	p->utilizedSize = used;
	p->isManagedPool = 0;
}

static void test_convert_memory(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_convert cv;
	struct xpu_record_header h;
	struct xpu_gpu_memory m[3];
	struct xpu_gpu_mempool p[2];
	const uint8_t *body;
	size_t off = 0;
	int nm = 0, np = 0;

	buf_len = 0;
	put_mem(1, 3, 11, 0x7f0000001000, 1 << 20, 5000, 0, 0xdead, 0xffffffffu, 0);	/* cudaMalloc */
	put_pool(1, 12, 0xb00, 2 << 20, 0, 5500);				/* created */
	put_mem(1, 3, 12, 0x7f0000200000, 4096, 6000, 1, 0xb00, 7, 1);		/* cudaMallocAsync */
	put_mem(3, 3, 13, 0x1, 1, 6500, 0, 0, 0, 0);				/* no such op: left out */
	put_pool(9, 14, 0xb00, 0, 0, 6600);					/* likewise */
	put_mem(2, 3, 15, 0x7f0000001000, 1 << 20, 7000, 0, 0, 0xffffffffu, 0);	/* cudaFree */
	put_pool(3, 16, 0xb00, 0, 0, 8000);					/* trimmed */
	xpu_client__init(&c, PID, 0);
	xpu_names__init(&n, PID);
	xpu_convert__init(&cv, &c, &n, PID);
	TEST_ASSERT_EQ(xpu_convert__buffer(&cv, buf, buf_len, walk_next), 7);
	TEST_ASSERT_EQ(cv.nr_ignored, 0);
	TEST_ASSERT_EQ(c.nr_dropped, 0);
	while (test__next(c.buf, c.len, &off, &h, &body)) {
		if (h.type == XPU_REC_GPU_MEMORY) {
			TEST_ASSERT_EQ(h.size, 8 + sizeof(m[0]));
			TEST_ASSERT(nm < 3);
			memcpy(&m[nm++], body, sizeof(m[0]));
		} else if (h.type == XPU_REC_GPU_MEMPOOL) {
			TEST_ASSERT_EQ(h.size, 8 + sizeof(p[0]));
			TEST_ASSERT(np < 2);
			memcpy(&p[np++], body, sizeof(p[0]));
		} else {
			TEST_ASSERT(!"a record of another type");
		}
	}
	TEST_ASSERT_EQ(nm, 3);
	TEST_ASSERT_EQ(np, 2);
	/* the synchronous allocation: no pool, whatever the config said */
	TEST_ASSERT_EQ(m[0].time, 5000);
	TEST_ASSERT_EQ(m[0].correlation_id, 11);
	TEST_ASSERT_EQ(m[0].address, 0x7f0000001000ull);
	TEST_ASSERT_EQ(m[0].bytes, 1u << 20);
	TEST_ASSERT_EQ(m[0].pool_address, 0);
	TEST_ASSERT_EQ(m[0].pid, PID);
	TEST_ASSERT_EQ(m[0].device, 1);
	TEST_ASSERT_EQ(m[0].context, 3);
	TEST_ASSERT_EQ(m[0].stream, XPU_GPU_MEMORY_NO_STREAM);
	TEST_ASSERT_EQ(m[0].op, XPU_MEMORY_ALLOC);
	TEST_ASSERT_EQ(m[0].memory_kind, XPU_MEMKIND_DEVICE);
	TEST_ASSERT_EQ(m[0].pool_type, 0);
	TEST_ASSERT_EQ(m[0].reserved, 0);
	TEST_ASSERT_EQ(m[0].flags, 0);
	/* the stream-ordered one, from its pool */
	TEST_ASSERT_EQ(m[1].correlation_id, 12);
	TEST_ASSERT_EQ(m[1].pool_address, 0xb00);
	TEST_ASSERT_EQ(m[1].pool_type, 1);
	TEST_ASSERT_EQ(m[1].stream, 7);
	TEST_ASSERT_EQ(m[1].flags, XPU_GPU_MEMORY_ASYNC);
	TEST_ASSERT_EQ(m[2].op, XPU_MEMORY_RELEASE);
	TEST_ASSERT_EQ(m[2].correlation_id, 15);
	TEST_ASSERT_EQ(m[2].address, m[0].address);
	TEST_ASSERT_EQ(m[2].time, 7000);
	TEST_ASSERT_EQ(p[0].op, XPU_MEMPOOL_CREATED);
	TEST_ASSERT_EQ(p[0].time, 5500);
	TEST_ASSERT_EQ(p[0].correlation_id, 12);
	TEST_ASSERT_EQ(p[0].address, 0xb00);
	TEST_ASSERT_EQ(p[0].size, 2u << 20);
	TEST_ASSERT_EQ(p[0].release_threshold, 64);
	TEST_ASSERT_EQ(p[0].pid, PID);
	TEST_ASSERT_EQ(p[0].device, 2);
	TEST_ASSERT_EQ(p[0].pool_type, 1);
	TEST_ASSERT_EQ(p[0].reserved, 0);
	TEST_ASSERT_EQ(p[0].flags, 0);
	TEST_ASSERT_EQ(p[1].op, XPU_MEMPOOL_TRIMMED);
	TEST_ASSERT_EQ(p[1].correlation_id, 16);
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* each allocation call's size, from its own params struct */
static void test_oom_bytes(void)
{
	cudaMalloc_v3020_params rm = { NULL, 12345 };
	cudaMallocAsync_ptsz_v11020_params ra = { NULL, 777, NULL };
	cudaMallocFromPoolAsync_v11020_params rp = { NULL, 888, NULL, NULL };
	cudaMallocPitch_v3020_params rpi = { NULL, NULL, 100, 30 };
	cudaMallocManaged_v6000_params rmm = { NULL, 5, 1 };
	cuMemAlloc_v2_params dm = { NULL, 1ull << 40 };
	cuMemCreate_params dc = { NULL, 2 << 20, NULL, 0 };
	cuMemAllocPitch_v2_params dpi = { NULL, NULL, 64, 8, 4 };
	cuMemHostAlloc_params dh = { NULL, 99, 0 };

	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &rm), 12345);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020, &ra), 777);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020, &rp), 888);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020, &rpi), 3000);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, &rmm), 5);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &dm), 1ull << 40);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &dc), 2u << 20);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, &dpi), 512);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc_v2, &dh), 99);
	/* a free, another domain, no params: unknown */
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &rm), 0);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_NVTX, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &rm), 0);
	TEST_ASSERT_EQ(xpu_mem_convert__bytes(XPU_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, NULL), 0);
}

static void test_mem_apis(void)
{
	static const char *const yes[] = {
		"cudaMalloc_v3020", "cudaFree_v3020", "cudaMallocAsync_ptsz_v11020",
		"cudaFreeAsync_v11020", "cudaMallocFromPoolAsync_v11020", "cudaMallocManaged_v6000",
		"cudaMallocHost_v3020", "cudaFreeHost_v3020", "cudaHostAlloc_v3020",
		"cudaMemPoolCreate_v11020", "cudaMemPoolTrimTo_v11020", "cudaMemPoolDestroy_v11020",
		"cuMemAlloc_v2", "cuMemAllocAsync_ptsz", "cuMemFree_v2", "cuMemFreeAsync",
		"cuMemAllocManaged", "cuMemHostAlloc", "cuMemCreate", "cuMemSetAccess", "cuMemUnmap",
		"cuMemPoolTrimTo",
	};
	static const char *const no[] = {
		"cudaMemcpy_v3020", "cudaLaunchKernel_v7000", "cudaMemPoolSetAttribute_v11020",
		"cuMemGetInfo_v2", "cuMemcpyHtoD_v2", "cuMemMap", "cudaMemset_v3020", "cuMemsetD8_v2",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		TEST_ASSERT(xpu_mem_apis__match(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		TEST_ASSERT(!xpu_mem_apis__match(no[i]));
	TEST_ASSERT(xpu_mem_apis__is_oom(2));
	TEST_ASSERT(!xpu_mem_apis__is_oom(0));
	TEST_ASSERT(!xpu_mem_apis__is_oom(1));
}

static void test_send(void)
{
	struct xpu_mem_oom o = {
		.time = 42, .bytes = 1ull << 34, .correlation_id = 77, .pid = PID, .tid = 8,
		.device = -1, .domain = XPU_API_RUNTIME, .cbid = 20, .ret = 2,
	};
	struct xpu_record_header h;
	struct xpu_gpu_mem_state s;
	struct xpu_gpu_oom r;
	struct xpu_client c;
	const uint8_t *body;
	size_t off = 0;

	xpu_client__init(&c, PID, 0);
	TEST_ASSERT_EQ(xpu_mem__state(&c, PID, 3, 1000, 4000, true, 9), 0);
	TEST_ASSERT_EQ(xpu_mem__state(&c, PID, 3, 5000, 4000, false, 9), -EINVAL);
	TEST_ASSERT_EQ(xpu_mem__oom(&c, &o), 0);
	TEST_ASSERT(test__next(c.buf, c.len, &off, &h, &body));
	TEST_ASSERT_EQ(h.type, XPU_REC_GPU_MEM_STATE);
	TEST_ASSERT_EQ(h.size, 8 + sizeof(s));
	memcpy(&s, body, sizeof(s));
	TEST_ASSERT_EQ(s.time, 9);
	TEST_ASSERT_EQ(s.free, 1000);
	TEST_ASSERT_EQ(s.total, 4000);
	TEST_ASSERT_EQ(s.used_before, 3000);
	TEST_ASSERT_EQ(s.pid, PID);
	TEST_ASSERT_EQ(s.device, 3);
	TEST_ASSERT_EQ(s.flags, XPU_MEM_STATE_ATTACH);
	TEST_ASSERT_EQ(s.reserved, 0);
	TEST_ASSERT(test__next(c.buf, c.len, &off, &h, &body));
	TEST_ASSERT_EQ(h.type, XPU_REC_GPU_OOM);
	TEST_ASSERT_EQ(h.size, 8 + sizeof(r));
	memcpy(&r, body, sizeof(r));
	TEST_ASSERT_EQ(r.time, 42);
	TEST_ASSERT_EQ(r.bytes, 1ull << 34);
	TEST_ASSERT_EQ(r.correlation_id, 77);
	TEST_ASSERT_EQ(r.pid, PID);
	TEST_ASSERT_EQ(r.tid, 8);
	TEST_ASSERT_EQ(r.device, -1);
	TEST_ASSERT_EQ(r.source, XPU_OOM_CUDA);
	TEST_ASSERT_EQ(r.domain, XPU_API_RUNTIME);
	TEST_ASSERT_EQ(r.cbid, 20);
	TEST_ASSERT_EQ(r.ret, 2);
	TEST_ASSERT_EQ(r.reserved, 0);
	TEST_ASSERT(!test__next(c.buf, c.len, &off, &h, &body));
	xpu_client__exit(&c);
}

/* The recorder's side of the ready message: the byte and a config of
 * len bytes (0: the byte alone; 8: the config of before flags). */
static size_t ready_len;
static void *send_ready(void *arg)
{
	struct test_server *s = arg;
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m = {
		XPU_CHANNEL_READY, { XPU_CHANNEL_CONFIG_MAGIC, 300, XPU_CHANNEL_GPU_MEMORY, 0 },
	};
	int fd = accept(s->lfd, NULL, NULL);

	if (fd >= 0 && send(fd, &m, 1 + ready_len, 0) < 0)
		perror("send");
	return (void *)(intptr_t)fd;
}

static void test_ready_flags(void)
{
	static const size_t lens[] = { 0, XPU_CHANNEL_CONFIG_V1_SIZE, sizeof(struct xpu_channel_config) };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct test_server s;
		struct xpu_client c;
		pthread_t t;
		void *fd;

		ready_len = lens[i];
		TEST_ASSERT_EQ(test_server__open(&s), 0);
		TEST_ASSERT_EQ(pthread_create(&t, NULL, send_ready, &s), 0);
		xpu_client__init(&c, PID, 0);
		TEST_ASSERT_EQ(xpu_client__connect(&c, s.path), 0);
		pthread_join(t, &fd);
		TEST_ASSERT_EQ(c.flush_ms, i ? 300u : 0u);
		/* only the config that has flags says --gpu-memory */
		TEST_ASSERT_EQ(c.flags, i == 2 ? XPU_CHANNEL_GPU_MEMORY : 0u);
		close((int)(intptr_t)fd);
		xpu_client__exit(&c);
		test_server__close(&s);
	}
}

int main(void)
{
	TEST_RUN(test_convert_memory);
	TEST_RUN(test_oom_bytes);
	TEST_RUN(test_mem_apis);
	TEST_RUN(test_send);
	TEST_RUN(test_ready_flags);
	TEST_EXIT();
}
