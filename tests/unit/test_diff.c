// SPDX-License-Identifier: MIT
/* --diff's arithmetic (report/profile/diff.c, report/output/diff.c): frames
 * joined by identity across profiles, the normalisations, the table rows
 * (self weights per origin, baseline %, delta, order), the union tree and
 * the difffolded lines. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "report/output/output.h"
#include "report/profile/diff.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* old: main;a 30, main;b 70, main;sys_x[k] 0 (none), main;launch;k GPU 10.
 * new: a 3x slower (90), b the same, k the same, and a frame c only there.
 * The frames are interned in another order and at other addresses in new. */
static void profiles(struct profile *old, struct profile *new)
{
	uint32_t m, a, b, l, api, k, c, comm;

	profile__init(old);
	m = profile__intern_frame(old, FRAME_CPU_USER, "app", "main", 0x10, false);
	a = profile__intern_frame(old, FRAME_CPU_USER, "app", "a", 0x20, false);
	b = profile__intern_frame(old, FRAME_CPU_USER, "app", "b", 0x30, false);
	l = profile__intern_frame(old, FRAME_CPU_USER, "app", "launch", 0x40, false);
	api = profile__intern_frame(old, FRAME_GPU_API, "", "cudaLaunchKernel", 0, false);
	k = profile__intern_frame(old, FRAME_GPU_KERNEL, "[gpu]", "[GPU_Kernel]k", 0, false);
	comm = profile__intern_str(old, "app");
	profile__add(old, profile__intern_stack(old, (uint32_t[]){ m, a }, 2), 1, 1, comm, ORIGIN_CPU, 30);
	profile__add(old, profile__intern_stack(old, (uint32_t[]){ m, b }, 2), 1, 1, comm, ORIGIN_CPU, 70);
	profile__add(old, profile__intern_stack(old, (uint32_t[]){ m, l, api, k }, 4), 1, 1, comm,
		     ORIGIN_GPU, 10);

	profile__init(new);
	k = profile__intern_frame(new, FRAME_GPU_KERNEL, "[gpu]", "[GPU_Kernel]k", 0, false);
	b = profile__intern_frame(new, FRAME_CPU_USER, "app", "b", 0x130, false);
	m = profile__intern_frame(new, FRAME_CPU_USER, "app", "main", 0x110, false);
	a = profile__intern_frame(new, FRAME_CPU_USER, "app", "a", 0x120, false);
	c = profile__intern_frame(new, FRAME_CPU_KERNEL, "[kernel.kallsyms]", "sys_x", 0, false);
	l = profile__intern_frame(new, FRAME_CPU_USER, "app", "launch", 0x140, false);
	api = profile__intern_frame(new, FRAME_GPU_API, "", "cudaLaunchKernel", 0, false);
	comm = profile__intern_str(new, "app");
	profile__add(new, profile__intern_stack(new, (uint32_t[]){ m, l, api, k }, 4), 2, 2, comm,
		     ORIGIN_GPU, 10);
	profile__add(new, profile__intern_stack(new, (uint32_t[]){ m, a }, 2), 2, 2, comm, ORIGIN_CPU, 45);
	profile__add(new, profile__intern_stack(new, (uint32_t[]){ m, a }, 2), 2, 3, comm, ORIGIN_CPU, 45);
	profile__add(new, profile__intern_stack(new, (uint32_t[]){ m, b }, 2), 2, 2, comm, ORIGIN_CPU, 70);
	profile__add(new, profile__intern_stack(new, (uint32_t[]){ m, c }, 2), 2, 2, comm, ORIGIN_CPU, 20);
}

static const char *row_name(const struct diff *d, const struct diff_row *r)
{
	return profile__frame(&d->u, r->frame)->name;
}

static void test_diff_total(void)
{
	struct profile old, new;
	struct diff d;
	struct diff_row *rows;
	double tot[2];
	size_t nr;

	profiles(&old, &new);
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_TOTAL, NULL, NULL), 0);
	TEST_ASSERT(NEAR(d.total[DIFF_OLD], 110) && NEAR(d.total[DIFF_NEW], 190));
	TEST_ASSERT(NEAR(d.scale, 190.0 / 110));
	/* 7 distinct frames: one id per (kind, module, name) */
	TEST_ASSERT_EQ(d.u.nr_frames, 7);

	/* CPU: old 100, new 180; a 30% -> 50%, b 70% -> 38.9%, sys_x new */
	nr = diff__rows(&d, ORIGIN_CPU, &rows, tot);
	TEST_ASSERT_EQ(nr, 3);
	TEST_ASSERT(NEAR(tot[DIFF_OLD], 100) && NEAR(tot[DIFF_NEW], 180));
	TEST_ASSERT(!strcmp(row_name(&d, &rows[0]), "a"));		/* grew most: first */
	TEST_ASSERT(NEAR(rows[0].base, 30) && NEAR(rows[0].delta, 20));
	TEST_ASSERT(NEAR(rows[0].w[DIFF_OLD], 30) && NEAR(rows[0].w[DIFF_NEW], 90));
	TEST_ASSERT(!strcmp(row_name(&d, &rows[1]), "sys_x"));
	TEST_ASSERT(NEAR(rows[1].base, 0) && NEAR(rows[1].delta, 100.0 * 20 / 180));
	TEST_ASSERT(!strcmp(row_name(&d, &rows[2]), "b"));		/* shrank: last */
	TEST_ASSERT(NEAR(rows[2].base, 70) && NEAR(rows[2].delta, 100.0 * 70 / 180 - 70));
	free(rows);

	/* GPU: its own section and totals, unchanged */
	nr = diff__rows(&d, ORIGIN_GPU, &rows, tot);
	TEST_ASSERT_EQ(nr, 1);
	TEST_ASSERT(NEAR(tot[DIFF_OLD], 10) && NEAR(tot[DIFF_NEW], 10));
	TEST_ASSERT(!strcmp(row_name(&d, &rows[0]), "[GPU_Kernel]k"));
	TEST_ASSERT(NEAR(rows[0].base, 100) && NEAR(rows[0].delta, 0));
	free(rows);
	nr = diff__rows(&d, ORIGIN_OFFCPU, &rows, tot);
	TEST_ASSERT_EQ(nr, 0);
	free(rows);

	/* the union tree: main; its children by new weight: a, b, sys_x, launch */
	TEST_ASSERT_EQ(d.nr, 7);
	TEST_ASSERT(!strcmp(profile__frame(&d.u, d.frame[0])->name, "main"));
	TEST_ASSERT_EQ(d.parent[0], UINT32_MAX);
	TEST_ASSERT(NEAR(d.w[DIFF_OLD][0], 110) && NEAR(d.w[DIFF_NEW][0], 190));
	{
		static const char *const order[] = { "main", "a", "b", "sys_x", "launch",
						     "cudaLaunchKernel", "[GPU_Kernel]k" };
		static const int depth[] = { 0, 1, 1, 1, 1, 2, 3 };
		static const double w_old[] = { 110, 30, 70, 0, 10, 10, 10 };

		for (size_t i = 0; i < 7; i++) {
			TEST_ASSERT(!strcmp(profile__frame(&d.u, d.frame[i])->name, order[i]));
			TEST_ASSERT_EQ(d.depth[i], depth[i]);
			TEST_ASSERT(NEAR(d.w[DIFF_OLD][i], w_old[i]));
		}
		TEST_ASSERT_EQ(d.parent[1], 0);
		TEST_ASSERT_EQ(d.parent[5], 4);
		TEST_ASSERT_EQ(d.parent[6], 5);
	}
	diff__exit(&d);

	/* the CPU view only: GPU work is not in the tree */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_CPU, DIFF_NORM_TOTAL, NULL, NULL), 0);
	TEST_ASSERT(NEAR(d.scale, 1.8));
	TEST_ASSERT_EQ(d.nr, 4);
	diff__exit(&d);
	profile__exit(&old);
	profile__exit(&new);
}

static void test_diff_norm(void)
{
	struct profile old, new;
	struct diff d;
	struct diff_row *rows;
	double tot[2];
	int missing = -1;

	profiles(&old, &new);
	/* by b, which did not change: a's delta is its whole growth */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_FRAME, "b", NULL), 0);
	TEST_ASSERT(NEAR(d.scale, 1) && NEAR(d.frame_w[DIFF_OLD], 70));
	TEST_ASSERT_EQ(diff__rows(&d, ORIGIN_CPU, &rows, tot), 3);
	TEST_ASSERT(!strcmp(row_name(&d, &rows[0]), "a"));
	TEST_ASSERT(NEAR(rows[0].base, 100.0 * 30 / 180) && NEAR(rows[0].delta, 100.0 * 60 / 180));
	TEST_ASSERT(!strcmp(row_name(&d, &rows[2]), "b"));
	TEST_ASSERT(NEAR(rows[2].delta, 0));
	free(rows);
	diff__exit(&d);

	/* by main: every stack goes through it, so the totals */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_FRAME, "main", NULL), 0);
	TEST_ASSERT(NEAR(d.scale, 190.0 / 110));
	diff__exit(&d);

	/* a frame only one side has: an error that says which */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_FRAME, "sys_x_[k]",
				   &missing), -ENOENT);
	TEST_ASSERT_EQ(missing, DIFF_OLD);
	TEST_ASSERT_EQ(diff__build(&d, &new, &old, VIEW_MERGED, DIFF_NORM_FRAME, "sys_x",
				   &missing), -ENOENT);
	TEST_ASSERT_EQ(missing, DIFF_NEW);
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_FRAME, "nope",
				   &missing), -ENOENT);

	/* none: percentages of the new total, old as it is */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_NONE, NULL, NULL), 0);
	TEST_ASSERT(NEAR(d.scale, 1));
	TEST_ASSERT_EQ(diff__rows(&d, ORIGIN_CPU, &rows, tot), 3);
	TEST_ASSERT(NEAR(rows[0].base, 100.0 * 30 / 180));
	free(rows);
	diff__exit(&d);
	profile__exit(&old);
	profile__exit(&new);
}

static char *folded(const struct diff *d, const struct profile *old, const struct profile *new)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	int err = output__diff_folded(d, old, new, fp, true);

	fclose(fp);
	if (err)
		buf[0] = '\0';
	return buf;
}

static void test_diff_folded(void)
{
	struct profile old, new;
	struct diff d;
	char *out;

	profiles(&old, &new);
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_NONE, NULL, NULL), 0);
	out = folded(&d, &old, &new);
	TEST_ASSERT(!strcmp(out,
		"app;main;a 30 90\n"
		"app;main;b 70 70\n"
		"app;main;launch;cudaLaunchKernel;[GPU_Kernel]k 10 10\n"
		"app;main;sys_x_[k] 0 20\n"));
	free(out);
	diff__exit(&d);
	/* by b: old x 1; by the totals: old x 190/110 */
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_TOTAL, NULL, NULL), 0);
	out = folded(&d, &old, &new);
	TEST_ASSERT(!strcmp(out,
		"app;main;a 52 90\n"
		"app;main;b 121 70\n"
		"app;main;launch;cudaLaunchKernel;[GPU_Kernel]k 17 10\n"
		"app;main;sys_x_[k] 0 20\n"));
	free(out);
	diff__exit(&d);
	profile__exit(&old);
	profile__exit(&new);
}

/* Two callers of one leaf: old main;f;spin 2, main;g;spin 1; new 1:1. The
 * self rows have only spin (no change); the table's inclusive rows (the
 * default) show f shrinking and g growing, each by 100/6 points, on top,
 * and name both runs' totals and the rows' kind in the header. */
static void test_diff_children(void)
{
	struct profile old, new;
	struct diff d;
	struct diff_row *rows;
	double tot[2];
	size_t nr;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	for (int side = 0; side < 2; side++) {
		struct profile *p = side ? &new : &old;
		uint32_t m, f, g, sp, comm;

		profile__init(p);
		m = profile__intern_frame(p, FRAME_CPU_USER, "app", "main", 0x10, false);
		f = profile__intern_frame(p, FRAME_CPU_USER, "app", "f", 0x20, false);
		g = profile__intern_frame(p, FRAME_CPU_USER, "app", "g", 0x30, false);
		sp = profile__intern_frame(p, FRAME_CPU_USER, "app", "spin", 0x40, false);
		comm = profile__intern_str(p, "app");
		profile__add(p, profile__intern_stack(p, (uint32_t[]){ m, f, sp }, 3), 1, 1, comm,
			     ORIGIN_CPU, side ? 30 : 40);
		profile__add(p, profile__intern_stack(p, (uint32_t[]){ m, g, sp }, 3), 1, 1, comm,
			     ORIGIN_CPU, side ? 30 : 20);
	}
	TEST_ASSERT_EQ(diff__build(&d, &old, &new, VIEW_MERGED, DIFF_NORM_TOTAL, NULL, NULL), 0);
	nr = diff__table_rows(&d, ORIGIN_CPU, false, &rows, tot);
	TEST_ASSERT_EQ(nr, 1);
	TEST_ASSERT(!strcmp(row_name(&d, &rows[0]), "spin") && NEAR(rows[0].delta, 0));
	free(rows);
	nr = diff__table_rows(&d, ORIGIN_CPU, true, &rows, tot);
	TEST_ASSERT_EQ(nr, 4);
	TEST_ASSERT(NEAR(tot[DIFF_OLD], 60) && NEAR(tot[DIFF_NEW], 60));
	/* |delta| first: f (-16.7) and g (+16.7), then main and spin (0) */
	TEST_ASSERT(NEAR(fabs(rows[0].delta), 100.0 / 6) && NEAR(fabs(rows[1].delta), 100.0 / 6));
	for (size_t i = 0; i < 2; i++) {
		const char *n = row_name(&d, &rows[i]);

		TEST_ASSERT(!strcmp(n, "f") ? NEAR(rows[i].delta, -100.0 / 6) && NEAR(rows[i].base, 100.0 * 2 / 3) :
			    !strcmp(n, "g") && NEAR(rows[i].delta, 100.0 / 6));
	}
	TEST_ASSERT(NEAR(rows[2].delta, 0) && NEAR(rows[2].base, 100) && NEAR(rows[3].base, 100));
	free(rows);

	mem = open_memstream(&buf, &len);
	TEST_ASSERT_EQ(output__diff_table(&d, mem, "old.data", "new.data", true), 0);
	fclose(mem);
	TEST_ASSERT(strstr(buf, "# Baseline: old.data (60 samples)") != NULL);
	TEST_ASSERT(strstr(buf, "normalised by each run's total") != NULL);
	TEST_ASSERT(strstr(buf, "inclusive weight") != NULL);
	TEST_ASSERT(strstr(buf, "-16.67%") != NULL && strstr(buf, "+16.67%") != NULL);
	free(buf);
	diff__exit(&d);
	profile__exit(&old);
	profile__exit(&new);
}

int main(void)
{
	TEST_RUN(test_diff_total);
	TEST_RUN(test_diff_norm);
	TEST_RUN(test_diff_folded);
	TEST_RUN(test_diff_children);
	TEST_EXIT();
}
