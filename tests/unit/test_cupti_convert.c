// SPDX-License-Identifier: MIT
/*
 * CUPTI activity conversion on synthetic CUPTI 13 records (no GPU, no
 * libcupti): a buffer laid out like CUPTI's, walked by a stand-in for
 * cuptiActivityGetNextRecord, converted, and the queued records checked
 * field by field, with name interning, order and drop counting.
 */
#include <string.h>

#include "test.h"
#include "test_cupti_server.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/activity/cupti_convert.h"

#define PID 31337

/* Record sizes by kind, as CUPTI 13 lays them out in a buffer. */
static size_t rec_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
	default: return 0;
	}
}

/* cuptiActivityGetNextRecord's contract: *rec NULL starts at the beginning. */
static int walk_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + rec_size(*rec) : 0;

	if (off + sizeof(CUpti_Activity) > valid)
		return 1;
	*rec = (CUpti_Activity *)(buf + off);
	return rec_size(*rec) == 0 || off + rec_size(*rec) > valid;
}

static uint8_t buf[64 * 1024] __attribute__((aligned(8)));
static size_t buf_len;

static void *put(size_t size)
{
	void *p = buf + buf_len;

	memset(p, 0, size);
	buf_len += size;
	return p;
}

static const char *NAME_A = "_Z7kernelAPfi";
static const char *NAME_B = "_ZN5torch6kernelIfEEvv";

static void put_kernel(const char *name, uint32_t corr, uint64_t start, uint64_t dur,
		       uint32_t graph_id, uint64_t node)
{
	CUpti_ActivityKernel10 *k = put(sizeof(*k));
	/* CUPTI's name pointer lives in its own memory; copy to prove we do
	 * not intern by pointer. */
	char *copy = strdup(name);

	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->name = copy;
	k->correlationId = corr;
	k->start = start;
	k->end = start + dur;
	k->deviceId = 1;
	k->contextId = 2;
	k->streamId = 13;
	k->gridX = 128; k->gridY = 2; k->gridZ = 1;
	k->blockX = 256; k->blockY = 1; k->blockZ = 1;
	k->staticSharedMemory = 1024;
	k->dynamicSharedMemory = 4096;
	k->registersPerThread = 40;
	k->launchType = 1;
	k->graphId = graph_id;
	k->graphNodeId = node;
}

static void build_buffer(void)
{
	CUpti_ActivityMemcpy6 *mc;
	CUpti_ActivityMemset4 *ms;
	CUpti_ActivityAPI *api;
	CUpti_ActivitySynchronization2 *sy;
	CUpti_ActivityName *nm;

	buf_len = 0;
	put_kernel(NAME_A, 100, 1000000, 5000, 0, 0);
	put_kernel(NAME_A, 101, 1010000, 6000, 0, 0);
	/* Two kernels of one graph launch share its correlation ID. */
	put_kernel(NAME_B, 102, 1020000, 7000, 9, 77);
	put_kernel(NAME_A, 102, 1030000, 8000, 9, 78);

	mc = put(sizeof(*mc));
	mc->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mc->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mc->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	mc->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mc->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	mc->bytes = 1 << 20;
	mc->start = 2000000; mc->end = 2100000;
	mc->deviceId = 1; mc->contextId = 2; mc->streamId = 14;
	mc->correlationId = 103;

	ms = put(sizeof(*ms));
	ms->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms->value = 0xab;
	ms->bytes = 4096;
	ms->start = 2200000; ms->end = 2201000;
	ms->deviceId = 1; ms->contextId = 2; ms->streamId = 15;
	ms->correlationId = 104;

	/* Not converted: must be skipped without upsetting what follows. */
	nm = put(sizeof(*nm));
	nm->kind = CUPTI_ACTIVITY_KIND_NAME;

	api = put(sizeof(*api));
	api->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api->cbid = 211;
	api->start = 999000; api->end = 999900;
	api->processId = PID; api->threadId = 4444;
	api->correlationId = 100;
	api->returnValue = 0;

	api = put(sizeof(*api));
	api->kind = CUPTI_ACTIVITY_KIND_DRIVER;
	api->cbid = 307;
	api->start = 999100; api->end = 999800;
	api->processId = PID; api->threadId = 4444;
	api->correlationId = 100;
	api->returnValue = 700;		/* CUDA_ERROR_ILLEGAL_ADDRESS */

	sy = put(sizeof(*sy));
	sy->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	sy->start = 3000000; sy->end = 3500000;
	sy->correlationId = 105;
	sy->contextId = 2;
	sy->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	sy->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
}

static void free_names(void)
{
	CUpti_Activity *rec = NULL;

	while (!walk_next(buf, buf_len, &rec))
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			free((void *)((CUpti_ActivityKernel10 *)rec)->name);
}

static void test_convert_all_kinds(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_convert cv;
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int i = 0;
	/* Expected order: records in buffer order, each STRING just before its first use. */
	static const uint16_t want[] = {
		XPU_REC_STRING, XPU_REC_GPU_KERNEL, XPU_REC_GPU_KERNEL,
		XPU_REC_STRING, XPU_REC_GPU_KERNEL, XPU_REC_GPU_KERNEL,
		XPU_REC_GPU_MEMCPY, XPU_REC_GPU_MEMSET,
		XPU_REC_GPU_API, XPU_REC_GPU_API, XPU_REC_GPU_SYNC,
	};

	build_buffer();
	xpu_client__init(&c, PID, 0);
	xpu_names__init(&n, PID);
	xpu_convert__init(&cv, &c, &n, PID);
	TEST_ASSERT_EQ(xpu_convert__buffer(&cv, buf, buf_len, walk_next), 10);
	TEST_ASSERT_EQ(cv.nr_converted, 9);
	TEST_ASSERT_EQ(cv.nr_ignored, 1);
	TEST_ASSERT_EQ(c.nr_dropped, 0);

	while (test__next(c.buf, c.len, &off, &h, &body)) {
		TEST_ASSERT(i < (int)(sizeof(want) / sizeof(want[0])));
		TEST_ASSERT_EQ(h.type, want[i]);
		switch (h.type) {
		case XPU_REC_STRING: {
			struct xpu_string s;

			memcpy(&s, body, sizeof(s));
			TEST_ASSERT_EQ(s.pid, PID);
			TEST_ASSERT_EQ(s.id, i == 0 ? 1 : 2);
			TEST_ASSERT(!strcmp((const char *)body + sizeof(s), i == 0 ? NAME_A : NAME_B));
			TEST_ASSERT_EQ(h.size, (8 + sizeof(s) + strlen((const char *)body + sizeof(s)) + 1 + 7) & ~7u);
			break;
		}
		case XPU_REC_GPU_KERNEL: {
			struct xpu_gpu_kernel k;

			TEST_ASSERT_EQ(h.size, 8 + sizeof(k));
			memcpy(&k, body, sizeof(k));
			TEST_ASSERT_EQ(k.pid, PID);
			TEST_ASSERT_EQ(k.device, 1);
			TEST_ASSERT_EQ(k.context, 2);
			TEST_ASSERT_EQ(k.stream, 13);
			TEST_ASSERT_EQ(k.grid[0], 128);
			TEST_ASSERT_EQ(k.grid[1], 2);
			TEST_ASSERT_EQ(k.grid[2], 1);
			TEST_ASSERT_EQ(k.block[0], 256);
			TEST_ASSERT_EQ(k.block[1], 1);
			TEST_ASSERT_EQ(k.static_smem, 1024);
			TEST_ASSERT_EQ(k.dynamic_smem, 4096);
			TEST_ASSERT_EQ(k.registers, 40);
			TEST_ASSERT_EQ(k.launch_type, 1);
			TEST_ASSERT_EQ(k.reserved, 0);
			if (i == 1) {
				TEST_ASSERT_EQ(k.correlation_id, 100);
				TEST_ASSERT_EQ(k.start, 1000000);
				TEST_ASSERT_EQ(k.end, 1005000);
				TEST_ASSERT_EQ(k.name_id, 1);
				TEST_ASSERT_EQ(k.graph_id, 0);
				TEST_ASSERT_EQ(k.graph_node_id, 0);
			} else if (i == 2) {
				TEST_ASSERT_EQ(k.correlation_id, 101);
				TEST_ASSERT_EQ(k.name_id, 1);
			} else if (i == 4) {
				TEST_ASSERT_EQ(k.correlation_id, 102);
				TEST_ASSERT_EQ(k.name_id, 2);
				TEST_ASSERT_EQ(k.graph_id, 9);
				TEST_ASSERT_EQ(k.graph_node_id, 77);
			} else {
				TEST_ASSERT_EQ(k.correlation_id, 102);
				TEST_ASSERT_EQ(k.name_id, 1);
				TEST_ASSERT_EQ(k.graph_node_id, 78);
				TEST_ASSERT_EQ(k.end - k.start, 8000);
			}
			break;
		}
		case XPU_REC_GPU_MEMCPY: {
			struct xpu_gpu_memcpy m;

			memcpy(&m, body, sizeof(m));
			TEST_ASSERT_EQ(m.copy_kind, XPU_MEMCPY_HTOD);
			TEST_ASSERT_EQ(m.src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
			TEST_ASSERT_EQ(m.dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
			TEST_ASSERT_EQ(m.flags, 1);
			TEST_ASSERT_EQ(m.bytes, 1 << 20);
			TEST_ASSERT_EQ(m.start, 2000000);
			TEST_ASSERT_EQ(m.end, 2100000);
			TEST_ASSERT_EQ(m.correlation_id, 103);
			TEST_ASSERT_EQ(m.stream, 14);
			TEST_ASSERT_EQ(m.pid, PID);
			break;
		}
		case XPU_REC_GPU_MEMSET: {
			struct xpu_gpu_memset m;

			memcpy(&m, body, sizeof(m));
			TEST_ASSERT_EQ(m.value, 0xab);
			TEST_ASSERT_EQ(m.bytes, 4096);
			TEST_ASSERT_EQ(m.correlation_id, 104);
			TEST_ASSERT_EQ(m.stream, 15);
			TEST_ASSERT_EQ(m.end - m.start, 1000);
			break;
		}
		case XPU_REC_GPU_API: {
			struct xpu_gpu_api a;

			memcpy(&a, body, sizeof(a));
			TEST_ASSERT_EQ(a.pid, PID);
			TEST_ASSERT_EQ(a.tid, 4444);
			TEST_ASSERT_EQ(a.correlation_id, 100);
			if (i == 8) {
				TEST_ASSERT_EQ(a.domain, XPU_API_RUNTIME);
				TEST_ASSERT_EQ(a.cbid, 211);
				TEST_ASSERT_EQ(a.ret, 0);
				TEST_ASSERT_EQ(a.start, 999000);
				TEST_ASSERT_EQ(a.end, 999900);
			} else {
				TEST_ASSERT_EQ(a.domain, XPU_API_DRIVER);
				TEST_ASSERT_EQ(a.cbid, 307);
				TEST_ASSERT_EQ(a.ret, 700);
			}
			break;
		}
		case XPU_REC_GPU_SYNC: {
			struct xpu_gpu_sync s;

			memcpy(&s, body, sizeof(s));
			TEST_ASSERT_EQ(s.type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
			TEST_ASSERT_EQ(s.correlation_id, 105);
			TEST_ASSERT_EQ(s.context, 2);
			TEST_ASSERT_EQ(s.stream, 0xffffffffu);
			TEST_ASSERT_EQ(s.event, 0xffffffffu);
			TEST_ASSERT_EQ(s.end - s.start, 500000);
			break;
		}
		}
		i++;
	}
	TEST_ASSERT_EQ(i, (int)(sizeof(want) / sizeof(want[0])));
	TEST_ASSERT_EQ(off, c.len);

	/* A second buffer in the same process: names stay interned, no new STRING. */
	c.len = 0;
	TEST_ASSERT_EQ(xpu_convert__buffer(&cv, buf, buf_len, walk_next), 10);
	off = 0;
	i = 0;
	while (test__next(c.buf, c.len, &off, &h, &body)) {
		TEST_ASSERT(h.type != XPU_REC_STRING);
		i++;
	}
	TEST_ASSERT_EQ(i, 9);
	free_names();
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* A queue too small for the buffer: records are dropped and counted, never
 * written half, and a kernel never arrives before its name's STRING. */
static void test_convert_drops(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_convert cv;
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int kept = 0, have_a = 0;

	build_buffer();
	xpu_client__init(&c, PID, 3 * (8 + sizeof(struct xpu_gpu_kernel)));
	xpu_names__init(&n, PID);
	xpu_convert__init(&cv, &c, &n, PID);
	xpu_convert__buffer(&cv, buf, buf_len, walk_next);
	while (test__next(c.buf, c.len, &off, &h, &body)) {
		if (h.type == XPU_REC_STRING)
			have_a = 1;
		if (h.type == XPU_REC_GPU_KERNEL)
			TEST_ASSERT(have_a);
		kept++;
	}
	TEST_ASSERT_EQ(off, c.len);
	TEST_ASSERT(c.nr_dropped > 0);
	TEST_ASSERT_EQ(kept + c.nr_dropped, 11);
	TEST_ASSERT_EQ(c.dropped_unreported, c.nr_dropped);
	free_names();
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* An empty or NULL buffer (CUPTI hands those back on flush) is harmless. */
static void test_convert_empty(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_convert cv;

	xpu_client__init(&c, PID, 0);
	xpu_names__init(&n, PID);
	xpu_convert__init(&cv, &c, &n, PID);
	TEST_ASSERT_EQ(xpu_convert__buffer(&cv, NULL, 0, walk_next), 0);
	TEST_ASSERT_EQ(xpu_convert__buffer(&cv, buf, 0, walk_next), 0);
	TEST_ASSERT_EQ(c.len, 0);
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

int main(void)
{
	TEST_RUN(test_convert_all_kinds);
	TEST_RUN(test_convert_drops);
	TEST_RUN(test_convert_empty);
	TEST_EXIT();
}
