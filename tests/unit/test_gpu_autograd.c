// SPDX-License-Identifier: MIT
/*
 * PyTorch's backward work under its forward code (report/gpu/gpu_autograd.c):
 * the NODE records' Python frames (the PY_STACK right before, of the same
 * thread and time; a node's later outputs ignored), the node a thread ran
 * last at a time (none before its first EVAL; an EVAL of a node whose layout
 * did not check ends the one before), nodes made by C++ code (no frames)
 * left alone; the launch stack rewritten (forward frames, the marker, the
 * stack from evaluate_function on) and the same as a stack filter for CPU
 * stacks, which leaves a stack that already has the marker.
 */
#include <string.h>
#include "report/gpu/gpu_autograd.h"
#include "report/profile/profile.h"
#include "report/unwind/pyframes.h"
#include "report/session/session.h"
#include "tests/unit/test.h"

static struct xpu_record rec_of(uint16_t type, const void *body, size_t size)
{
	struct xpu_record r = { .type = type, .body = body, .body_size = (uint32_t)size };

	return r;
}

static void feed_node(struct gpu_autograd *a, uint32_t tid, uint64_t time, uint64_t seq, bool py)
{
	static uint8_t buf[sizeof(struct xpu_py_stack) + sizeof(struct xpu_py_frame)];
	struct xpu_py_stack st = { .time = time, .pid = 7, .tid = tid, .nr_frames = 1,
				   .version = 0x030b };
	struct xpu_py_frame f = { .code = 0x7f0000001000, .offset = 0, .code_key = 0x1234 };
	struct xpu_autograd n = { .time = time, .pid = 7, .tid = tid, .seq = seq,
				  .node = 0x5000 + seq, .kind = XPU_AUTOGRAD_NODE };
	struct xpu_record r;

	if (py) {
		memcpy(buf, &st, sizeof(st));
		memcpy(buf + sizeof(st), &f, sizeof(f));
		r = rec_of(XPU_REC_PY_STACK, buf, sizeof(buf));
		gpu_autograd__pass1(a, &r);
	}
	r = rec_of(XPU_REC_AUTOGRAD, &n, sizeof(n));
	gpu_autograd__pass1(a, &r);
}

static void feed_eval(struct gpu_autograd *a, uint32_t tid, uint64_t time, uint64_t seq)
{
	struct xpu_autograd e = { .time = time, .pid = 7, .tid = tid, .seq = seq,
				  .kind = XPU_AUTOGRAD_EVAL };
	struct xpu_record r = rec_of(XPU_REC_AUTOGRAD, &e, sizeof(e));

	gpu_autograd__pass1(a, &r);
}

static void test_autograd(void)
{
	static struct session s;	/* only its profile, Python frames and filters */
	struct gpu_autograd a;
	struct profile *p = &s.profile;
	uint32_t root, eval, leaf, other, base, plain, id, frames[16];
	const uint32_t *fr;
	size_t n;

	memset(&s, 0, sizeof(s));
	profile__init(p);
	pyframes__init(&s.py);
	gpu_autograd__init(&a);
	root = profile__intern_frame(p, FRAME_CPU_USER, "libc.so.6", "start_thread", 0, false);
	eval = profile__intern_frame(p, FRAME_CPU_USER, "libtorch_cpu.so",
				     "torch::autograd::Engine::evaluate_function(x)", 0, false);
	leaf = profile__intern_frame(p, FRAME_CPU_USER, "libtorch_cpu.so", "MmBackward0::apply", 0,
				     false);
	other = profile__intern_frame(p, FRAME_CPU_USER, "libc.so.6", "other", 0, false);
	base = profile__intern_stack(p, (uint32_t[]){ root, eval, leaf }, 3);
	plain = profile__intern_stack(p, (uint32_t[]){ root, other }, 2);

	feed_node(&a, 1, 100, 7, true);
	feed_node(&a, 1, 101, 7, false);	/* its second output: ignored */
	feed_node(&a, 1, 102, 8, false);	/* made by C++ code */
	feed_node(&a, 3, 103, 9, true);
	/* a PY_STACK of another thread or time than the NODE after it */
	{
		uint8_t buf[sizeof(struct xpu_py_stack) + sizeof(struct xpu_py_frame)] = { 0 };
		struct xpu_py_stack st = { .time = 104, .pid = 7, .tid = 5, .nr_frames = 1 };
		struct xpu_autograd nd = { .time = 104, .pid = 7, .tid = 1, .seq = 10,
					   .kind = XPU_AUTOGRAD_NODE };
		struct xpu_record r;

		memcpy(buf, &st, sizeof(st));
		r = rec_of(XPU_REC_PY_STACK, buf, sizeof(buf));
		gpu_autograd__pass1(&a, &r);
		r = rec_of(XPU_REC_AUTOGRAD, &nd, sizeof(nd));
		gpu_autograd__pass1(&a, &r);
	}
	/* thread 2 runs the backward: out of time order in the trace */
	feed_eval(&a, 2, 300, 8);
	feed_eval(&a, 2, 200, 7);
	feed_eval(&a, 2, 400, XPU_AUTOGRAD_SEQ_UNKNOWN);
	feed_eval(&a, 2, 500, 10);
	gpu_autograd__prepare(&a);
	TEST_ASSERT_EQ(a.stats.nodes, 4);
	TEST_ASSERT_EQ(a.stats.nodes_py, 2);
	TEST_ASSERT_EQ(a.stats.evals, 4);

	/* in node 7: its forward frame, the marker, then evaluate_function on */
	id = gpu_autograd__stack(&a, &s, 7, 2, 250, base);
	fr = profile__stack(p, id, &n);
	TEST_ASSERT_EQ(n, 4);
	TEST_ASSERT(!strncmp(profile__frame(p, fr[0])->name, "py::", 4));
	TEST_ASSERT(!strcmp(profile__frame(p, fr[1])->name, "[autograd backward]"));
	TEST_ASSERT(fr[2] == eval && fr[3] == leaf);
	TEST_ASSERT_EQ(a.stats.moved, 1);
	/* node 8 (C++), the unknown node, node 10 (no frames: the PY_STACK
	 * before it was another thread's), before any node, another thread,
	 * another process: left */
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 2, 350, base), base);
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 2, 450, base), base);
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 2, 550, base), base);
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 2, 150, base), base);
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 4, 250, base), base);
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 8, 2, 250, base), base);
	TEST_ASSERT_EQ(a.stats.moved, 1);
	TEST_ASSERT_EQ(a.stats.launches, 7);
	TEST_ASSERT_EQ(a.stats.no_eval, 3);
	TEST_ASSERT_EQ(a.stats.no_node, 1);	/* the unknown one; nodes without frames count nowhere */
	/* not inside evaluate_function: not a backward op's launch */
	TEST_ASSERT_EQ(gpu_autograd__stack(&a, &s, 7, 2, 250, plain), plain);
	TEST_ASSERT_EQ(a.stats.launches, 7);

	/* the CPU side: the same move by the filter, the marker once */
	gpu_autograd__add_filter(&a, &s);
	memcpy(frames, (uint32_t[]){ root, eval, leaf }, 3 * sizeof(*frames));
	n = session__filter_stack(&s, 7, 2, 250, frames, 3, 16);
	TEST_ASSERT_EQ(n, 4);
	TEST_ASSERT(!strcmp(profile__frame(p, frames[1])->name, "[autograd backward]"));
	TEST_ASSERT(frames[2] == eval && frames[3] == leaf);
	TEST_ASSERT_EQ(session__filter_stack(&s, 7, 2, 250, frames, 4, 16), 4);
	TEST_ASSERT_EQ(a.stats.cpu_moved, 1);
	/* no room for the forward frames: the stack stays */
	memcpy(frames, (uint32_t[]){ root, eval, leaf }, 3 * sizeof(*frames));
	TEST_ASSERT_EQ(session__filter_stack(&s, 7, 2, 250, frames, 3, 3), 3);
	TEST_ASSERT(frames[0] == root && frames[1] == eval);

	gpu_autograd__exit(&a);
	pyframes__exit(&s.py);
	profile__exit(p);
}

int main(void)
{
	TEST_RUN(test_autograd);
	TEST_EXIT();
}
