/* SPDX-License-Identifier: MIT */
/*
 * Minimal unit-test helpers (after perf's TEST_ASSERT_VAL). Each test file is
 * its own program: main() calls TEST_RUN(fn) for each case; the exit status
 * is the number of failed cases, so the shell runner counts them.
 */
#ifndef XPU_TESTS_UNIT_TEST_H
#define XPU_TESTS_UNIT_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test__failed_cases;
static int test__case_failed;

#define TEST_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		test__case_failed = 1;					\
		return;							\
	}								\
} while (0)

#define TEST_ASSERT_EQ(a, b) do {					\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b);		\
		test__case_failed = 1;					\
		return;							\
	}								\
} while (0)

/* The whole of a file (malloc'd, *size its length), or NULL. */
static inline char *test__load(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n ? (size_t)n : 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf)
			*size = (size_t)n;
	}
	fclose(f);
	return buf;
}

#define TEST_RUN(fn) do {						\
	test__case_failed = 0;						\
	fn();								\
	printf("%s %s\n", test__case_failed ? "FAIL" : "ok  ", #fn);	\
	test__failed_cases += test__case_failed;			\
} while (0)

#define TEST_EXIT() return test__failed_cases ? 1 : 0

#endif
