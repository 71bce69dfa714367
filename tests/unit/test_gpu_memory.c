// SPDX-License-Identifier: MIT
/*
 * The live-set computation of --gpu-memory (report/gpu/gpu_memory.c) on a
 * hand-made history: a PyTorch process (pid 1, device 0) with one segment,
 * a CUDA-level allocation that holds no block (not a segment), and blocks
 * of four stacks (weights kept, a temporary freed, its address
 * reused, a leak), a free of a pointer never seen and a double free; a
 * plain CUDA process (pid 2, device 1) with CUDA-level allocations only.
 * Every expected number below follows from the history by hand.
 */
#include <string.h>
#include "tests/unit/test.h"
#include "report/gpu/gpu_memory.h"

enum { ST_WEIGHTS = 1, ST_TEMP = 2, ST_LEAK = 3, ST_CUDA_A = 4, ST_CUDA_B = 5 };

static void ev(struct gpu_mem *m, uint64_t t, uint32_t pid, int layer, int op, uint64_t addr,
	       uint64_t bytes, int32_t dev, uint32_t stack)
{
	gpu_mem__add(m, &(struct gpu_mem_ev){ .time = t, .pid = pid, .tid = pid + 10,
					      .layer = (uint8_t)layer, .op = (uint8_t)op,
					      .addr = addr, .bytes = bytes, .device = dev,
					      .stack = stack, .kind = 3 });
}

/* The history, in an order other than time's (the computation sorts). */
static void history(struct gpu_mem *m)
{
	gpu_mem__init(m);
	ev(m, 80, 1, GPU_MEM_BLOCK, GPU_MEM_FREE, 0x100, 0, -1, 0);
	ev(m, 10, 1, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0x100, 1000, 0, 0);	/* the segment */
	ev(m, 45, 1, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0x9000, 64, 0, 0);	/* no block: other */
	ev(m, 20, 1, GPU_MEM_BLOCK, GPU_MEM_ALLOC, 0x100, 300, 0, ST_WEIGHTS);
	ev(m, 30, 1, GPU_MEM_BLOCK, GPU_MEM_ALLOC, 0x200, 200, 0, ST_TEMP);
	ev(m, 40, 1, GPU_MEM_BLOCK, GPU_MEM_ALLOC, 0x300, 100, 0, ST_LEAK);
	ev(m, 50, 1, GPU_MEM_BLOCK, GPU_MEM_FREE, 0x200, 0, -1, 0);
	ev(m, 55, 1, GPU_MEM_BLOCK, GPU_MEM_FREE, 0x999, 0, -1, 0);	/* unknown */
	ev(m, 56, 1, GPU_MEM_BLOCK, GPU_MEM_FREE, 0x200, 0, -1, 0);	/* double */
	ev(m, 60, 1, GPU_MEM_BLOCK, GPU_MEM_ALLOC, 0x200, 150, 0, ST_TEMP);
	ev(m, 70, 1, GPU_MEM_BLOCK, GPU_MEM_FREE, 0x200, 0, -1, 0);
	ev(m, 15, 2, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0xa000, 5000, 1, ST_CUDA_A);
	ev(m, 25, 2, GPU_MEM_CUDA, GPU_MEM_FREE, 0xa000, 5000, 1, 0);
	ev(m, 35, 2, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0xb000, 3000, 1, ST_CUDA_B);
	ev(m, 36, 2, GPU_MEM_CUDA, GPU_MEM_FREE, 0xc000, 64, 1, 0);	/* unknown */
}

static const struct gpu_mem_row *row(const struct gpu_mem *m, uint32_t space, uint32_t stack)
{
	for (size_t i = 0; i < m->nr_rows; i++)
		if (m->rows[i].space == space && m->rows[i].stack == stack)
			return &m->rows[i];
	return NULL;
}

static uint64_t bytes_of(const struct gpu_mem *m, uint32_t space, uint32_t stack)
{
	const struct gpu_mem_row *r = row(m, space, stack);

	return r ? r->bytes : 0;
}

static void test_peak(void)
{
	struct gpu_mem m;
	const struct gpu_mem_space *a, *b;

	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_PEAK, .end = 100 });
	TEST_ASSERT_EQ(m.nr_spaces, 2);
	a = &m.spaces[0], b = &m.spaces[1];
	TEST_ASSERT_EQ(a->pid, 1);
	TEST_ASSERT_EQ(a->device, 0);
	TEST_ASSERT(a->torch);
	TEST_ASSERT(!b->torch);
	/* blocks counted: 300 + 200 + 100 at 40, the segment is reserved */
	TEST_ASSERT_EQ(a->peak, 600);
	TEST_ASSERT_EQ(a->peak_time, 40);
	TEST_ASSERT_EQ(a->reserved_at_peak, 1000);
	TEST_ASSERT_EQ(a->reserved_peak, 1000);
	TEST_ASSERT_EQ(a->reserved_peak_time, 10);
	TEST_ASSERT_EQ(a->other_peak, 64);		/* not in reserved */
	TEST_ASSERT_EQ(a->other_peak_time, 45);
	TEST_ASSERT_EQ(a->live_taken, 600);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_WEIGHTS), 300);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_TEMP), 200);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_LEAK), 100);
	TEST_ASSERT_EQ(bytes_of(&m, 0, 0), 0);		/* the segment is not a row */
	TEST_ASSERT_EQ(m.rows[0].stack, ST_WEIGHTS);	/* heaviest first */
	/* CUDA-level only: the first allocation, then freed */
	TEST_ASSERT_EQ(b->peak, 5000);
	TEST_ASSERT_EQ(b->peak_time, 15);
	TEST_ASSERT_EQ(bytes_of(&m, 1, ST_CUDA_A), 5000);
	TEST_ASSERT_EQ(bytes_of(&m, 1, ST_CUDA_B), 0);
	/* the frees */
	TEST_ASSERT_EQ(m.unknown_frees[GPU_MEM_BLOCK], 1);
	TEST_ASSERT_EQ(m.double_frees[GPU_MEM_BLOCK], 1);
	TEST_ASSERT_EQ(m.unknown_frees[GPU_MEM_CUDA], 1);
	TEST_ASSERT_EQ(m.double_frees[GPU_MEM_CUDA], 0);
	gpu_mem__exit(&m);
}

static void test_at_time(void)
{
	struct gpu_mem m;

	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_AT, .at = 65, .end = 100 });
	TEST_ASSERT_EQ(m.spaces[0].live_taken, 550);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_TEMP), 150);	/* the reused address's block */
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_WEIGHTS), 300);
	TEST_ASSERT_EQ(bytes_of(&m, 1, ST_CUDA_B), 3000);
	TEST_ASSERT_EQ(bytes_of(&m, 1, ST_CUDA_A), 0);
	gpu_mem__exit(&m);
	/* at an event's own time: it has happened */
	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_AT, .at = 50, .end = 100 });
	TEST_ASSERT_EQ(m.spaces[0].live_taken, 400);
	gpu_mem__exit(&m);
}

static void test_leak(void)
{
	struct gpu_mem m;
	const struct gpu_mem_row *r;

	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_LEAK, .end = 100 });
	r = row(&m, 0, ST_LEAK);
	TEST_ASSERT(r);
	TEST_ASSERT_EQ(r->bytes, 100);
	TEST_ASSERT_EQ(r->count, 1);
	TEST_ASSERT_EQ(r->oldest, 40);
	TEST_ASSERT_EQ((long long)r->age_sum, 60);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_WEIGHTS), 0);
	TEST_ASSERT_EQ(bytes_of(&m, 1, ST_CUDA_B), 3000);
	TEST_ASSERT_EQ((long long)row(&m, 1, ST_CUDA_B)->age_sum, 65);
	TEST_ASSERT_EQ(m.spaces[0].live_end, 100);
	TEST_ASSERT_EQ(m.spaces[0].nr_live_end, 1);
	gpu_mem__exit(&m);
	/* the end of a window: the weights are still held at 75 */
	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_LEAK, .start = 0,
						     .end = 75 });
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_WEIGHTS), 300);
	TEST_ASSERT_EQ((long long)row(&m, 0, ST_WEIGHTS)->age_sum, 55);
	gpu_mem__exit(&m);
}

static void test_alloc(void)
{
	struct gpu_mem m;
	const struct gpu_mem_row *r;

	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_ALLOCS, .end = 100 });
	r = row(&m, 0, ST_TEMP);
	TEST_ASSERT(r);
	TEST_ASSERT_EQ(r->bytes, 350);
	TEST_ASSERT_EQ(r->count, 2);
	TEST_ASSERT_EQ(m.spaces[0].nr_allocs, 4);
	TEST_ASSERT_EQ(m.spaces[0].alloc_bytes, 750);	/* blocks only */
	TEST_ASSERT_EQ(m.spaces[1].alloc_bytes, 8000);
	TEST_ASSERT_EQ(m.spaces[0].taken, 0);
	gpu_mem__exit(&m);
}

static void test_window(void)
{
	struct gpu_mem m;

	/* from 45: the 600 live at the start is the peak, at the start */
	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_PEAK, .start = 45,
						     .end = 100 });
	TEST_ASSERT_EQ(m.spaces[0].peak, 600);
	TEST_ASSERT_EQ(m.spaces[0].peak_time, 45);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_TEMP), 200);
	gpu_mem__exit(&m);
	/* from 52: 400 then, 550 at 60 */
	history(&m);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_PEAK, .start = 52,
						     .end = 100 });
	TEST_ASSERT_EQ(m.spaces[0].peak, 550);
	TEST_ASSERT_EQ(m.spaces[0].peak_time, 60);
	TEST_ASSERT_EQ(bytes_of(&m, 0, ST_TEMP), 150);
	TEST_ASSERT_EQ(m.spaces[0].nr_allocs, 1);
	gpu_mem__exit(&m);
}

static void test_oom(void)
{
	struct gpu_mem m;

	history(&m);
	gpu_mem__oom(&m, 1, -1, 65, 4096, 9, 11);	/* device unknown: its allocations' */
	gpu_mem__oom(&m, 1, 0, 90, 8192, 9, 11);	/* later: the first is kept */
	gpu_mem__baseline(&m, 2, 1, 5, 123456, true);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_PEAK, .end = 100,
						     .oom_first = true });
	TEST_ASSERT_EQ(m.nr_spaces, 2);
	TEST_ASSERT(m.spaces[0].oom);
	TEST_ASSERT_EQ(m.spaces[0].oom_bytes, 4096);
	TEST_ASSERT(m.spaces[0].taken_at_oom);
	TEST_ASSERT_EQ(m.spaces[0].taken, 65);
	TEST_ASSERT_EQ(m.spaces[0].live_taken, 550);
	TEST_ASSERT_EQ(m.spaces[0].peak, 600);		/* the peak is still known */
	TEST_ASSERT(!m.spaces[1].taken_at_oom);
	TEST_ASSERT(m.spaces[1].attached);
	TEST_ASSERT_EQ(m.spaces[1].used_before, 123456);
	gpu_mem__exit(&m);
}

/* A process with no blocks on a device counts CUDA-level memory there,
 * even when it has blocks on another device. */
static void test_selection(void)
{
	struct gpu_mem m;

	gpu_mem__init(&m);
	ev(&m, 1, 7, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0x1000, 4096, 0, 1);
	ev(&m, 2, 7, GPU_MEM_BLOCK, GPU_MEM_ALLOC, 0x1000, 512, 0, 2);
	ev(&m, 3, 7, GPU_MEM_CUDA, GPU_MEM_ALLOC, 0x9000, 2048, 1, 3);
	gpu_mem__compute(&m, &(struct gpu_mem_query){ .mode = GPU_MEM_PEAK, .end = 10 });
	TEST_ASSERT_EQ(m.nr_spaces, 2);
	TEST_ASSERT(m.spaces[0].torch);
	TEST_ASSERT_EQ(m.spaces[0].peak, 512);
	TEST_ASSERT_EQ(m.spaces[0].reserved_at_peak, 4096);
	TEST_ASSERT(!m.spaces[1].torch);
	TEST_ASSERT_EQ(m.spaces[1].peak, 2048);
	TEST_ASSERT_EQ(m.nr_rows, 2);
	gpu_mem__exit(&m);
}

int main(void)
{
	TEST_RUN(test_peak);
	TEST_RUN(test_at_time);
	TEST_RUN(test_leak);
	TEST_RUN(test_alloc);
	TEST_RUN(test_window);
	TEST_RUN(test_oom);
	TEST_RUN(test_selection);
	TEST_EXIT();
}
