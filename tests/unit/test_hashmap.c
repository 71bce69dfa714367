// SPDX-License-Identifier: MIT
/* common/hashmap.c against a brute-force reference: random inserts, finds
 * and deletes (backward shift), growth, iteration, and the keys the layout
 * treats specially (0 and UINT64_MAX, the empty-slot marker). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "common/hashmap.h"
#include "tests/unit/test.h"

#define NKEYS 4096

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
	return rng;
}

/* The reference: keys[i] present[i] vals[i]. */
static uint64_t keys[NKEYS], vals[NKEYS];
static int present[NKEYS];

static void u64map_random(bool seq)
{
	struct u64map m;
	size_t n = 0;

	if (seq)
		u64map__init_seq(&m);
	else
		u64map__init(&m);
	for (int i = 0; i < NKEYS; i++)
		keys[i] = i == 0 ? 0 : i == 1 ? UINT64_MAX : i < 64 ? (uint64_t)i << 40 :
			  seq && i < NKEYS / 2 ? (uint64_t)(i % 3 + 100) << 32 | i : next_rand();
	memset(present, 0, sizeof(present));
	for (int step = 0; step < 200000; step++) {
		int i = next_rand() % NKEYS;
		uint64_t *v;

		switch (next_rand() % 3) {
		case 0:
			v = u64map__slot(&m, keys[i]);
			TEST_ASSERT(v);
			if (!present[i]) {
				TEST_ASSERT_EQ(*v, 0);
				present[i] = 1;
				n++;
			} else {
				TEST_ASSERT(*v == vals[i]);
			}
			*v = vals[i] = next_rand();
			break;
		case 1:
			v = u64map__find(&m, keys[i]);
			TEST_ASSERT_EQ(!!v, present[i]);
			if (v)
				TEST_ASSERT(*v == vals[i]);
			break;
		case 2:
			TEST_ASSERT_EQ(u64map__del(&m, keys[i]), present[i]);
			if (present[i])
				n--;
			present[i] = 0;
			break;
		}
		TEST_ASSERT_EQ(m.len, n);
	}
	/* Iteration visits each present key once with its value. */
	{
		size_t it = 0, seen = 0;
		uint64_t k, val;

		while (u64map__next(&m, &it, &k, &val)) {
			int found = 0;

			for (int i = 0; i < NKEYS; i++)
				if (present[i] && keys[i] == k) {
					TEST_ASSERT(vals[i] == val);
					found = 1;
				}
			TEST_ASSERT(found);
			seen++;
		}
		TEST_ASSERT_EQ(seen, n);
	}
	u64map__exit(&m);
}

static void test_u64map_random(void) { u64map_random(false); }
/* init_seq: pid << 32 | rising IDs (three pids) plus random keys. */
static void test_u64map_seq(void) { u64map_random(true); }

static void test_bmap(void)
{
	struct bmap m;
	bool found;
	char key[32];

	bmap__init(&m);
	for (int i = 0; i < 1000; i++) {
		int len = snprintf(key, sizeof(key), "k%d", i);
		void **slot = bmap__slot(&m, key, len, &found);

		TEST_ASSERT(!found);
		*slot = (void *)(uintptr_t)(i + 1);
	}
	for (int i = 0; i < 1000; i++) {
		int len = snprintf(key, sizeof(key), "k%d", i);

		TEST_ASSERT_EQ((uintptr_t)bmap__find(&m, key, len), i + 1);
	}
	TEST_ASSERT(!bmap__find(&m, "k1000", 5));
	TEST_ASSERT(bmap__slot(&m, "", 0, &found) && !found);	/* empty key */
	TEST_ASSERT(bmap__slot(&m, "", 0, &found) && found);
	TEST_ASSERT_EQ(m.len, 1001);
	bmap__exit(&m, NULL);
}

int main(void)
{
	TEST_RUN(test_u64map_random);
	TEST_RUN(test_u64map_seq);
	TEST_RUN(test_bmap);
	TEST_EXIT();
}
