// SPDX-License-Identifier: MIT
/*
 * common/utf8.c: strict decoding with one U+FFFD per maximal subpart (the
 * expected texts are what Python's bytes.decode('utf-8', 'replace') gives),
 * encoding that never writes a surrogate, and cuts between characters.
 */
#include <string.h>
#include "common/utf8.h"
#include "test.h"

#define R UTF8_REPLACEMENT

static const struct { const char *in, *fixed; size_t chars; } cases[] = {
	{ "plain", "plain", 5 },
	{ "caf\xc3\xa9", "caf\xc3\xa9", 4 },				/* 2 bytes */
	{ "\xe2\x82\xac" "1", "\xe2\x82\xac" "1", 2 },			/* 3 bytes */
	{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 1 },			/* 4 bytes */
	{ "a\xff" "b", "a" R "b", 3 },					/* never UTF-8 */
	{ "\xc0\xaf", R R, 2 },						/* overlong '/' */
	{ "\xe0\x80\xaf", R R R, 3 },					/* overlong, 3 bytes */
	{ "\xf0\x80\x80\xaf", R R R R, 4 },				/* overlong, 4 bytes */
	{ "\xed\xa0\x80", R R R, 3 },					/* CESU-8 U+D800 */
	{ "\xed\xb3\xbf", R R R, 3 },					/* CESU-8 U+DCFF */
	{ "\xf4\x90\x80\x80", R R R R, 4 },				/* past U+10FFFF */
	{ "\xe2\x82" "A", R "A", 2 },					/* cut short */
	{ "\xf0\x9f\x98", R, 1 },					/* cut at the end */
	{ "\xe1\x80\xe2\x82\xac", R "\xe2\x82\xac", 2 },
	{ "\x80\xbf", R R, 2 },						/* stray continuations */
	{ "\xf5\x80", R R, 2 },
};

static void test_fix(void)
{
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = utf8__fix(buf, sizeof(buf), cases[i].in);

		if (strcmp(buf, cases[i].fixed))
			fprintf(stderr, "  case %zu\n", i);
		TEST_ASSERT(!strcmp(buf, cases[i].fixed));
		TEST_ASSERT_EQ(n, strlen(cases[i].fixed));
		TEST_ASSERT(utf8__valid(buf, n));
		TEST_ASSERT_EQ(utf8__count(cases[i].in), cases[i].chars);
		TEST_ASSERT_EQ(utf8__valid(cases[i].in, strlen(cases[i].in)),
			       !strcmp(cases[i].in, cases[i].fixed));
	}
}

/* A buffer too small is cut between characters, never inside one. */
static void test_fix_cut(void)
{
	char buf[8];

	TEST_ASSERT_EQ(utf8__fix(buf, sizeof(buf), "\xf0\x9f\x98\x80\xf0\x9f\x98\x80"), 4);
	TEST_ASSERT(!strcmp(buf, "\xf0\x9f\x98\x80"));
	TEST_ASSERT_EQ(utf8__fix(buf, sizeof(buf), "ab\xff\xff"), 5);	/* ab + one U+FFFD */
	TEST_ASSERT(!strcmp(buf, "ab" R));
	TEST_ASSERT_EQ(utf8__fix(buf, 1, "abc"), 0);
	TEST_ASSERT(!buf[0]);
}

static void test_put(void)
{
	static const uint32_t cps[] = { 0x41, 0xe9, 0x20ac, 0x1f600, 0xd800, 0xdcff, 0x110000 };
	static const char *const want[] = { "A", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
					    R, R, R };
	char out[5];

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		size_t n = utf8__put(out, cps[i]);
		uint32_t c;

		out[n] = '\0';
		TEST_ASSERT(!strcmp(out, want[i]));
		TEST_ASSERT_EQ(utf8__next(out, n, &c), n);
		TEST_ASSERT_EQ(c, cps[i] >= 0xd800 && cps[i] <= 0xdfff ? 0xfffd :
				  cps[i] > 0x10ffff ? 0xfffd : cps[i]);
	}
}

static void test_cut(void)
{
	/* "é€😀x": 2 + 3 + 4 + 1 bytes */
	const char *s = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x";
	static const size_t want[] = { 0, 0, 2, 2, 2, 5, 5, 5, 5, 9, 10, 10 };

	for (size_t max = 0; max < sizeof(want) / sizeof(want[0]); max++)
		TEST_ASSERT_EQ(utf8__cut(s, max), want[max]);
	TEST_ASSERT_EQ(utf8__chars(s, 0), 0);
	TEST_ASSERT_EQ(utf8__chars(s, 1), 2);
	TEST_ASSERT_EQ(utf8__chars(s, 3), 9);
	TEST_ASSERT_EQ(utf8__chars(s, 99), 10);
	TEST_ASSERT_EQ(utf8__count(s), 4);
	/* an invalid byte is one character of its own */
	TEST_ASSERT_EQ(utf8__cut("a\xff\xff", 2), 2);
}

static void test_trim(void)
{
	/* what snprintf() leaves of "ab€" in 4 and 5 bytes */
	TEST_ASSERT_EQ(utf8__trim("ab\xe2", 3), 2);
	TEST_ASSERT_EQ(utf8__trim("ab\xe2\x82", 4), 2);
	TEST_ASSERT_EQ(utf8__trim("ab\xe2\x82\xac", 5), 5);
	TEST_ASSERT_EQ(utf8__trim("ab\xf0\x9f\x98", 5), 2);
	/* bad bytes that are not a cut stay (they are not this cut's doing) */
	TEST_ASSERT_EQ(utf8__trim("ab\xff", 3), 3);
	TEST_ASSERT_EQ(utf8__trim("ab\xed\xa0", 4), 4);
	TEST_ASSERT_EQ(utf8__trim("", 0), 0);
}

int main(void)
{
	TEST_RUN(test_fix);
	TEST_RUN(test_fix_cut);
	TEST_RUN(test_put);
	TEST_RUN(test_cut);
	TEST_RUN(test_trim);
	TEST_EXIT();
}
