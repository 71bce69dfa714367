// SPDX-License-Identifier: MIT
/*
 * --trigger oom (record/capture/trigger.c): a GPU_OOM record that the
 * writer's tap hands over fires the trigger, due TRIGGER_AFTER_S after
 * the failure (a quarter of a short flight ring), says what failed, is
 * merged into a window already due and fires again once that window was
 * written; without an oom trigger, or for a record too short, nothing.
 */
#include <string.h>

#include "test.h"
#include "format/xpu_format.h"
#include "record/clock.h"
#include "record/capture/rotate_opts.h"
#include "record/capture/trigger.h"

static void tap_oom(struct trigger *tr, uint64_t t, uint64_t bytes, size_t len)
{
	struct xpu_gpu_oom o = {
		.time = t, .bytes = bytes, .correlation_id = 42, .pid = 77, .tid = 77,
		.device = -1, .source = XPU_OOM_CUDA, .domain = XPU_API_RUNTIME, .cbid = 20, .ret = 2,
	};
	struct iovec iov = { &o, len };

	trigger__tap(tr, XPU_REC_GPU_OOM, &iov);
}

static void test_oom_fires(void)
{
	struct rotate_opts o = { .flight_secs = 30 };
	struct trigger tr;
	char why[200] = "";
	uint64_t now = record__now_ns(), due;

	rotate_opts__trigger(&o, "oom");
	TEST_ASSERT_EQ(o.triggers[0].kind, ROTATE_TRIG_OOM);
	trigger__init(&tr, &o);
	tap_oom(&tr, now, 1ull << 40, 16);		/* too short: not looked at */
	TEST_ASSERT_EQ(trigger__due(&tr, now + 10000000000ull, why, sizeof(why)), 0);
	tap_oom(&tr, now, 1ull << 40, sizeof(struct xpu_gpu_oom));
	TEST_ASSERT_EQ(tr.nr_fired, 1);
	/* not before 1 s after the failure, then at it */
	TEST_ASSERT_EQ(trigger__due(&tr, now + 500000000ull, why, sizeof(why)), 0);
	due = trigger__due(&tr, now + 5000000000ull, why, sizeof(why));
	TEST_ASSERT(due >= now + 1000000000ull && due < now + 2000000000ull);
	TEST_ASSERT(!strcmp(why, "oom: pid 77 asked for 1099511627776 bytes (a CUDA call, "
			    "correlation 42)"));
	/* another inside the window due: merged */
	tap_oom(&tr, now + 1000, 8, sizeof(struct xpu_gpu_oom));
	TEST_ASSERT_EQ(tr.nr_fired, 1);
	TEST_ASSERT_EQ(tr.nr_merged, 1);
	trigger__clear(&tr);
	tap_oom(&tr, now + 2000, 8, sizeof(struct xpu_gpu_oom));
	TEST_ASSERT_EQ(tr.nr_fired, 2);
	trigger__exit(&tr);
}

/* a short ring: a quarter of it after the failure; no oom trigger: nothing */
static void test_oom_short_ring_and_none(void)
{
	struct rotate_opts o = { .flight_secs = 1 };
	struct trigger tr;
	char why[200];
	uint64_t now = record__now_ns() + 60000000000ull, due;

	rotate_opts__trigger(&o, "oom");
	trigger__init(&tr, &o);
	tap_oom(&tr, now, 1, sizeof(struct xpu_gpu_oom));
	due = trigger__due(&tr, now + 5000000000ull, why, sizeof(why));
	TEST_ASSERT_EQ(due, now + 250000000ull);
	trigger__exit(&tr);

	memset(&o, 0, sizeof(o));
	o.flight_secs = 30;
	rotate_opts__trigger(&o, "gpu-idle>50");
	trigger__init(&tr, &o);
	tap_oom(&tr, now, 1, sizeof(struct xpu_gpu_oom));
	TEST_ASSERT_EQ(tr.nr_fired, 0);
	TEST_ASSERT_EQ(trigger__due(&tr, now + 5000000000ull, why, sizeof(why)), 0);
	trigger__exit(&tr);
}

int main(void)
{
	TEST_RUN(test_oom_fires);
	TEST_RUN(test_oom_short_ring_and_none);
	TEST_EXIT();
}
