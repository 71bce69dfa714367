// SPDX-License-Identifier: MIT
/*
 * cupti/walk/walk_python.h's code key is bpf/xpu_events.h's: the launch walk's
 * PY_STACK frames must name the same PY_CODE records as the BPF walk's.
 * (The walk itself is compared with the BPF walk end to end:
 * tests/shell/launch_walk.sh's Python part.)
 */
#include <stdlib.h>
#include "bpf/xpu_events.h"
#include "cupti/walk/walk_python.h"
#include "test.h"

static void test_same_key(void)
{
	uint64_t x = 88172645463325252ull;

	for (int i = 0; i < 100000; i++) {
		uint64_t q, f;
		int32_t l;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		q = x;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		f = x;
		l = (int32_t)(x >> 17) - (1 << 20);
		TEST_ASSERT_EQ(xpu_walk_python__key(q, f, l), xpu_py_code_key(q, f, l));
	}
	TEST_ASSERT_EQ(xpu_walk_python__key(0, 0, 0), xpu_py_code_key(0, 0, 0));
}

int main(void)
{
	TEST_RUN(test_same_key);
	TEST_EXIT();
}
