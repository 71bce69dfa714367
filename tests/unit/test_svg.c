// SPDX-License-Identifier: MIT
/* The flame graph's colour families (by hue, one per kind of frame, Python
 * frames apart from other CPU code), stable shades, and the frame markup
 * the script reads (preorder ids, data-p parents, titles). */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "report/output/output.h"

/* The hue of "rgb(r,g,b)" in degrees; -1 for a grey. */
static int hue(const char *rgb)
{
	int r, g, b, mx, mn, h;

	if (sscanf(rgb, "rgb(%d,%d,%d)", &r, &g, &b) != 3)
		return -2;
	mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
	mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
	if (mx - mn < 30)
		return -1;
	if (mx == r)
		h = (60 * (g - b) / (mx - mn) + 360) % 360;
	else if (mx == g)
		h = 60 * (b - r) / (mx - mn) + 120;
	else
		h = 60 * (r - g) / (mx - mn) + 240;
	return h;
}

static void test_svg_families(void)
{
	static const struct { enum frame_kind kind; const char *name; enum svg_family fam;
			      int lo, hi; } cases[] = {
		{ FRAME_CPU_USER, "main", SVG_CPU, 0, 50 },
		{ FRAME_CPU_USER, "ns::Foo::bar(int)", SVG_CPU, 0, 50 },
		{ FRAME_CPU_USER, "py::train:train.py", SVG_PYTHON, 160, 200 },
		{ FRAME_CPU_USER, "py::<module>:x.py", SVG_PYTHON, 160, 200 },
		{ FRAME_CPU_KERNEL, "do_syscall_64", SVG_KERNEL, 200, 235 },
		{ FRAME_GPU_API, "cudaLaunchKernel", SVG_CUDA_API, 255, 300 },
		{ FRAME_GPU_KERNEL, "[GPU_Kernel]gemm", SVG_GPU, 90, 140 },
		{ FRAME_GPU_MEMCPY, "[GPU_Memcpy HtoD]", SVG_GPU, 90, 140 },
		{ FRAME_GPU_SYNC, "[GPU_Sync]StreamSynchronize", SVG_GPU, 90, 140 },
		{ FRAME_MARKER, "[off-cpu] futex_wait", SVG_MARKER, -1, -1 },
		{ FRAME_MARKER, "[GPU idle dev0]", SVG_MARKER, -1, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame f = { .kind = cases[i].kind, .name = cases[i].name, .module = "" };
		char c1[32], c2[32];
		int h;

		TEST_ASSERT_EQ(svg__family(&f), cases[i].fam);
		svg__color(&f, c1, sizeof(c1));
		svg__color(&f, c2, sizeof(c2));
		TEST_ASSERT(!strcmp(c1, c2));			/* stable per name */
		h = hue(c1);
		TEST_ASSERT(h >= cases[i].lo && h <= cases[i].hi);
	}
	/* 200 names of one family: shades differ, the hue stays in the family */
	{
		char name[32], c[32], first[32] = "";
		int distinct = 0;

		for (int i = 0; i < 200; i++) {
			struct frame f = { .kind = FRAME_CPU_USER, .name = name, .module = "" };

			snprintf(name, sizeof(name), "py::f%d:m.py", i);
			svg__color(&f, c, sizeof(c));
			TEST_ASSERT(hue(c) >= 160 && hue(c) <= 200);
			if (!first[0])
				strcpy(first, c);
			distinct += strcmp(first, c) != 0;
		}
		TEST_ASSERT(distinct > 150);
	}
	/* only CPU user frames are Python; the GPU-join's placeholder is grey */
	{
		struct frame k = { .kind = FRAME_CPU_KERNEL, .name = "py::x", .module = "" };
		struct frame u = { .kind = FRAME_CPU_USER, .name = "[unknown CPU stack]",
				   .module = "", .unknown = true };

		TEST_ASSERT_EQ(svg__family(&k), SVG_KERNEL);
		TEST_ASSERT_EQ(svg__family(&u), SVG_MARKER);
	}
}

static void test_svg_markup(void)
{
	struct profile p;
	uint32_t fr[3], comm;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	profile__init(&p);
	fr[0] = profile__intern_frame(&p, FRAME_CPU_USER, "python3", "main", 0, false);
	fr[1] = profile__intern_frame(&p, FRAME_CPU_USER, "[jit]", "py::step:<a&b>.py", 0, false);
	fr[2] = profile__intern_frame(&p, FRAME_GPU_API, "", "cudaLaunchKernel", 0, false);
	comm = profile__intern_str(&p, "python3");
	profile__add(&p, profile__intern_stack(&p, fr, 2), 1, 1, comm, ORIGIN_CPU, 3);
	profile__add(&p, profile__intern_stack(&p, fr, 3), 1, 1, comm, ORIGIN_CPU, 1);
	profile__add(&p, profile__intern_stack(&p, fr, 1), 1, 1, comm, ORIGIN_GPU, 0.5);
	fp = open_memstream(&buf, &len);
	TEST_ASSERT_EQ(output__svg(&p, fp, VIEW_MERGED, "t<1>", 100), 0);
	fclose(fp);
	/* preorder ids, each with its parent's */
	TEST_ASSERT(strstr(buf, "<g class=\"f\" id=\"f0\"><title>all (4.50 samples, 45.00 ms, 100.00%)"));
	TEST_ASSERT(strstr(buf, "<g class=\"f\" id=\"f1\" data-p=\"0\"><title>main (4.50 samples"));
	TEST_ASSERT(strstr(buf, "<g class=\"f\" id=\"f2\" data-p=\"1\"><title>py::step:&lt;a&amp;b&gt;.py "
			   "(4 samples, 40.00 ms, 88.89%)"));
	TEST_ASSERT(strstr(buf, "<g class=\"f\" id=\"f3\" data-p=\"2\"><title>cudaLaunchKernel (1 samples"));
	TEST_ASSERT(!strstr(buf, "id=\"f4\""));
	TEST_ASSERT(strstr(buf, "<text id=\"title\" x=\"600\" y=\"24\" text-anchor=\"middle\">t&lt;1&gt; (CPU+GPU)</text>"));
	TEST_ASSERT(strstr(buf, ">CPU samples + GPU time scaled to samples: 1 sample = 1/100 s; "
			   "4.50 samples = 45.00 ms</text>") || strstr(buf, "4 samples = 45.00 ms"));
	TEST_ASSERT(strstr(buf, "<script><![CDATA[") && strstr(buf, "onload=\"xpu_init()\""));
	free(buf);
	profile__exit(&p);
}

int main(void)
{
	TEST_RUN(test_svg_families);
	TEST_RUN(test_svg_markup);
	TEST_EXIT();
}
