// SPDX-License-Identifier: MIT
/* Folded output: escaping, kernel suffix, comm first frame, sorting, merging
 * of equal lines, rounding of fractional (GPU) weights, views. */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "report/output/output.h"
#include "report/profile/profile.h"

static char *folded(const struct profile *p, enum profile_view view, bool comm)
{
	struct folded_opts o = { .view = view, .comm = comm };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (output__folded(p, fp, &o))
		buf[0] = '\0';
	fclose(fp);
	return buf;
}

static void test_folded_escaping(void)
{
	struct frame f = { .kind = FRAME_CPU_USER, .name = "a;b c<int>;\n" };
	struct frame k = { .kind = FRAME_CPU_KERNEL, .name = "do_syscall_64" };
	char buf[64];

	folded__frame(&f, buf, sizeof(buf));
	TEST_ASSERT(!strcmp(buf, "a:b c<int>: "));	/* ';' -> ':', spaces kept */
	folded__frame(&k, buf, sizeof(buf));
	TEST_ASSERT(!strcmp(buf, "do_syscall_64_[k]"));
	folded__frame(&k, buf, 6);			/* truncates, stays terminated */
	TEST_ASSERT(!strcmp(buf, "do_sy"));
}

static void test_folded_lines(void)
{
	struct profile p;
	uint32_t fr[4], s1, s2, s3, comm, comm2;
	char *out;

	profile__init(&p);
	fr[0] = profile__intern_frame(&p, FRAME_CPU_USER, "app", "main", 0x10, false);
	fr[1] = profile__intern_frame(&p, FRAME_CPU_USER, "app", "ns::f(int; char)", 0x20, false);
	fr[2] = profile__intern_frame(&p, FRAME_CPU_KERNEL, "[kernel.kallsyms]", "sys_read", 0, false);
	fr[3] = profile__intern_frame(&p, FRAME_GPU_KERNEL, "", "[GPU_Kernel]gemm", 0, false);
	TEST_ASSERT_EQ(profile__intern_frame(&p, FRAME_CPU_USER, "app", "main", 0x10, false), fr[0]);
	s1 = profile__intern_stack(&p, fr, 2);
	s2 = profile__intern_stack(&p, fr, 3);
	TEST_ASSERT_EQ(profile__intern_stack(&p, fr, 2), s1);
	s3 = profile__intern_stack(&p, (uint32_t[]){ fr[0], fr[3] }, 2);
	comm = profile__intern_str(&p, "my app");
	comm2 = profile__intern_str(&p, "zz;top");
	profile__add(&p, s1, 1, 1, comm, ORIGIN_CPU, 1);
	profile__add(&p, s1, 1, 2, comm, ORIGIN_CPU, 1);	/* other thread: same line */
	profile__add(&p, s2, 1, 1, comm, ORIGIN_CPU, 3);
	profile__add(&p, s1, 2, 3, comm2, ORIGIN_CPU, 1);
	profile__add(&p, s3, 1, 1, comm, ORIGIN_GPU, 2.6);	/* ns * Hz / 1e9 */
	profile__add(&p, s3, 1, 1, comm, ORIGIN_GPU, 0.2);	/* sums before rounding */
	TEST_ASSERT(profile__total(&p, VIEW_MERGED) > 8.79 && profile__total(&p, VIEW_MERGED) < 8.81);

	out = folded(&p, VIEW_MERGED, true);
	TEST_ASSERT(!strcmp(out,
		"my app;main;[GPU_Kernel]gemm 3\n"
		"my app;main;ns::f(int: char) 2\n"
		"my app;main;ns::f(int: char);sys_read_[k] 3\n"
		"zz:top;main;ns::f(int: char) 1\n"));
	free(out);

	out = folded(&p, VIEW_CPU, false);			/* --no-comm, cpu only */
	TEST_ASSERT(!strcmp(out,
		"main;ns::f(int: char) 3\n"
		"main;ns::f(int: char);sys_read_[k] 3\n"));
	free(out);

	out = folded(&p, VIEW_GPU, true);
	TEST_ASSERT(!strcmp(out, "my app;main;[GPU_Kernel]gemm 3\n"));
	free(out);
	profile__exit(&p);
}

static void test_folded_rounding_drops_zero(void)
{
	struct profile p;
	uint32_t f, s;
	char *out;

	profile__init(&p);
	f = profile__intern_frame(&p, FRAME_GPU_MEMSET, "", "[GPU_Memset]", 0, false);
	s = profile__intern_stack(&p, &f, 1);
	profile__add(&p, s, 1, 1, profile__intern_str(&p, "x"), ORIGIN_GPU, 0.4);
	out = folded(&p, VIEW_MERGED, true);
	TEST_ASSERT(!strcmp(out, ""));
	free(out);
	profile__exit(&p);
}

/* Lines are sorted by segments, not built as text: the order must still be
 * strcmp()'s of the whole lines. A frame whose name is a prefix of another's
 * ("f" of "f!x", "f_x") sorts by what follows it: ';' (0x3b) against '!'
 * (0x21) or '_' (0x5f), or the line's end; frames of equal text from other
 * modules make one line; an empty comm is no segment. */
static void test_folded_order_bytes(void)
{
	static const char *const names[] = { "f", "f!x", "f_x", "g" };
	struct profile p;
	uint32_t f[4], other, comm, empty;
	char *out;

	profile__init(&p);
	for (int i = 0; i < 4; i++)
		f[i] = profile__intern_frame(&p, FRAME_CPU_USER, "app", names[i], 0x10 * i, false);
	other = profile__intern_frame(&p, FRAME_CPU_USER, "lib", "f", 0x99, false);
	comm = profile__intern_str(&p, "c");
	empty = profile__intern_str(&p, "");
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ f[0], f[3] }, 2), 1, 1, comm,
		     ORIGIN_CPU, 1);					/* c;f;g */
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ f[1] }, 1), 1, 1, comm,
		     ORIGIN_CPU, 2);					/* c;f!x */
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ f[2] }, 1), 1, 1, comm,
		     ORIGIN_CPU, 3);					/* c;f_x */
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ f[0] }, 1), 1, 1, comm,
		     ORIGIN_CPU, 4);					/* c;f */
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ other }, 1), 1, 1, comm,
		     ORIGIN_CPU, 5);					/* c;f too */
	profile__add(&p, profile__intern_stack(&p, (uint32_t[]){ f[3] }, 1), 2, 2, empty,
		     ORIGIN_CPU, 6);					/* g */
	profile__add(&p, profile__intern_stack(&p, NULL, 0), 3, 3, empty, ORIGIN_CPU, 7);
	out = folded(&p, VIEW_MERGED, true);
	TEST_ASSERT(!strcmp(out,
		"[unknown] 7\n"
		"c;f 9\n"
		"c;f!x 2\n"
		"c;f;g 1\n"
		"c;f_x 3\n"
		"g 6\n"));
	free(out);
	profile__exit(&p);
}

/* Random stacks over names that are prefixes of one another ("a", "a;"
 * escaped to "a:", "a!", "ab", "a_b", ...), in several modules (equal texts
 * of other frames), with and without comms: every line's text is strictly
 * above the one before it in strcmp() order (sorted, and equal texts made
 * one line), and the counts add up to the weight put in. */
static void test_folded_order_random(void)
{
	static const char *const names[] = { "a", "a!", "ab", "a_b", "a b", "a;", "b", "",
					      "ab!", "a:", "ba", "b\n" };
	static const char *const comms[] = { "", "c", "c!", "c_d", "cc" };
	uint64_t seed = 7;

	for (int round = 0; round < 20; round++) {
		struct profile p;
		uint32_t fr[24], stack[8];
		long long total = 0, sum = 0;
		char *out, *line, *prev = NULL, *save;

		profile__init(&p);
		for (int i = 0; i < 24; i++)
			fr[i] = profile__intern_frame(&p, FRAME_CPU_USER, i < 12 ? "m1" : "m2",
						      names[i % 12], 0x10 * i, false);
		for (int e = 0; e < 300; e++) {
			int depth;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			depth = (int)((seed >> 33) % 6);
			for (int d = 0; d < depth; d++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				stack[d] = fr[(seed >> 35) % 24];
			}
			profile__add(&p, profile__intern_stack(&p, stack, (size_t)depth), 1, 1,
				     profile__intern_str(&p, comms[(seed >> 20) % 5]), ORIGIN_CPU, 1);
			total++;
		}
		out = folded(&p, VIEW_MERGED, round & 1);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *sp = strrchr(line, ' ');

			TEST_ASSERT(sp != NULL);
			if (!sp)
				break;
			*sp = '\0';
			sum += atoll(sp + 1);
			if (prev)
				TEST_ASSERT(strcmp(prev, line) < 0);
			prev = line;
		}
		TEST_ASSERT_EQ(sum, total);
		free(out);
		profile__exit(&p);
	}
}

int main(void)
{
	TEST_RUN(test_folded_escaping);
	TEST_RUN(test_folded_lines);
	TEST_RUN(test_folded_rounding_drops_zero);
	TEST_RUN(test_folded_order_bytes);
	TEST_RUN(test_folded_order_random);
	TEST_EXIT();
}
