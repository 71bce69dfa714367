// SPDX-License-Identifier: MIT
/*
 * Inline chains and source lines (report/symbols/srcline.c) on this test
 * program itself, built -O2 -g: sl_outer calls sl_mid, which calls sl_inner,
 * both always_inline, so the code of all three is sl_outer's. Each passes
 * __LINE__ at its call to the next one, so the test knows the lines DWARF
 * must give. Checks srcline__lookup() at the probe's call, and a sampled
 * trace of it through the report: "sl_outer;sl_mid (inlined);sl_inner
 * (inlined)" with each frame's line, and --no-inline / --no-srcline; and
 * annotate of sl_outer: lines of inlined code marked, call targets named.
 */
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "report/output/output.h"
#include "report/annotate/annotate.h"
#include "report/symbols/dso.h"
#include "report/session/session.h"
#include "report/symbols/srcline.h"

static struct rt_sample sl_smp;
static uint64_t sl_stack_end;
static struct xpu_writer *sl_w;
static void *sl_ret;			/* return address of sl_probe's call */
static int sl_line_outer, sl_line_mid, sl_line_probe, sl_line_fill;
static volatile int sl_sink;

__attribute__((noipa)) static void sl_probe(int line)
{
	sl_ret = __builtin_return_address(0);
	sl_line_probe = line;
}

/* The sample: registers were captured by the caller just before. */
__attribute__((noipa)) static void sl_fill(int line)
{
	sl_line_fill = line;
	rt_fill(&sl_smp, sl_stack_end);
	if (sl_w)
		rt_write_sample(sl_w, &sl_smp);
}

#pragma GCC push_options
#pragma GCC optimize("omit-frame-pointer")
static inline __attribute__((always_inline)) int sl_inner(int x, int line)
{
	sl_line_mid = line;
	sl_probe(__LINE__);
	rt_capture(sl_smp.regs);
	sl_fill(__LINE__);
	return x + sl_sink;
}

static inline __attribute__((always_inline)) int sl_mid(int x, int line)
{
	sl_line_outer = line;
	return sl_inner(x * 2, __LINE__) + 1;
}

__attribute__((noipa)) int sl_outer(int x)
{
	return sl_mid(x + 1, __LINE__) * 3 + (getpid() == 0);	/* a call through the PLT */
}
#pragma GCC pop_options

static char sl_exe[4096];

static int sl_map(uint64_t addr, uint64_t *start, uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &off) == 3 && addr >= s && addr < e) {
			*start = s;
			*pgoff = off;
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static bool sl_is_me(const char *file)
{
	return file && !strcmp(srcline__basename(file), "test_srcline.c");
}

static void test_srcline_lookup(void)
{
	struct dsos d;
	struct dso *dso;
	struct srcline_chain ch;
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	uint64_t start, pgoff, vaddr;

	sl_outer(1);
	TEST_ASSERT(readlink("/proc/self/exe", sl_exe, sizeof(sl_exe) - 1) > 0);
	dsos__init(&d);
	dso = dsos__findnew(&d, sl_exe, id, rt_file_build_id(sl_exe, id));
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	TEST_ASSERT(sl_map((uint64_t)sl_ret, &start, &pgoff) == 0);
	vaddr = (uint64_t)sl_ret - 1 - dso__bias(dso, start, pgoff);	/* in the call */
	TEST_ASSERT(!strcmp(symtab__name(&dso->symtab, dso__find_symbol(dso, vaddr)), "sl_outer"));

	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_INLINE | SRCLINE_LINES, &ch), 0);
	TEST_ASSERT_EQ(ch.n, 3);
	TEST_ASSERT(ch.lv[0].name == NULL);		/* the symbol's level */
	TEST_ASSERT(ch.lv[1].name && !strcmp(ch.lv[1].name, "sl_mid"));
	TEST_ASSERT(ch.lv[2].name && !strcmp(ch.lv[2].name, "sl_inner"));
	/* each level at the call of the next, the innermost at the probe call */
	TEST_ASSERT(sl_is_me(ch.lv[0].file) && sl_is_me(ch.lv[1].file) && sl_is_me(ch.lv[2].file));
	TEST_ASSERT_EQ(ch.lv[0].line, sl_line_outer);
	TEST_ASSERT_EQ(ch.lv[1].line, sl_line_mid);
	TEST_ASSERT_EQ(ch.lv[2].line, sl_line_probe);

	/* each part alone */
	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_INLINE, &ch), 0);
	TEST_ASSERT_EQ(ch.n, 3);
	TEST_ASSERT(!ch.lv[0].file && !ch.lv[2].file && ch.lv[2].line == 0);
	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_LINES, &ch), 0);
	TEST_ASSERT_EQ(ch.n, 1);
	TEST_ASSERT(sl_is_me(ch.lv[0].file));
	/* the function's own line, where the inlined code was called: a
	 * frame of sl_outer at a line of sl_inner was --no-inline's answer
	 * (e2e_inline failed when the samples in mix outweighed the loop's) */
	TEST_ASSERT_EQ(ch.lv[0].line, sl_line_outer);

	/* a function with nothing inlined at its entry: one level, its line */
	vaddr = (uint64_t)(uintptr_t)&sl_probe - dso__bias(dso, start, pgoff);
	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_INLINE | SRCLINE_LINES, &ch), 0);
	TEST_ASSERT_EQ(ch.n, 1);
	TEST_ASSERT(sl_is_me(ch.lv[0].file) && ch.lv[0].line > 0);
	/* outside every unit */
	TEST_ASSERT(srcline__lookup(dso, 1, SRCLINE_INLINE | SRCLINE_LINES, &ch) == -ENOENT);
	TEST_ASSERT_EQ(ch.n, 0);
	dsos__exit(&d);

	/* opened for inline chains only, the file's line tables are not read
	 * (hidden from libdw): the chain is whole, lines are never found */
	dsos__init(&d);
	dso = dsos__findnew(&d, sl_exe, id, rt_file_build_id(sl_exe, id));
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	vaddr = (uint64_t)sl_ret - 1 - dso__bias(dso, start, pgoff);
	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_INLINE, &ch), 0);
	TEST_ASSERT_EQ(ch.n, 3);
	TEST_ASSERT(ch.lv[2].name && !strcmp(ch.lv[2].name, "sl_inner"));
	TEST_ASSERT_EQ(srcline__lookup(dso, vaddr, SRCLINE_INLINE | SRCLINE_LINES, &ch), 0);
	TEST_ASSERT(ch.n == 3 && !ch.lv[0].file && !ch.lv[2].file);
	dsos__exit(&d);
}

static char sl_path[] = "/tmp/xpu-test-srcline-XXXXXX";

static int sl_write_trace(const char *path)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS };
	struct xpu_finish fin = { .nr_samples = 1 };

	sl_stack_end = rt_map_end((uint64_t)__builtin_frame_address(0));
	sl_w = xpu_writer__open(path, &wo);
	if (!sl_w)
		return -1;
	xpu_writer__meta(sl_w, "sample_freq", "99");
	rt_write_maps(sl_w, rt_now(), "test_srcline");
	sl_outer(2);
	fin.time = rt_now();
	xpu_writer__add(sl_w, XPU_REC_FINISH, &fin, sizeof(fin));
	xpu_writer__close(sl_w);
	sl_w = NULL;
	return 0;
}

/* The report of the trace with the options given: its only stack's last
 * three frames and their locations (the sample is in sl_inner, at the
 * sl_fill call). */
static void sl_report(bool no_inline, bool no_srcline, struct session *s, const char **names,
		      char (*locs)[64], size_t *nframes, size_t *ninlined)
{
	const struct profile *p = &s->profile;
	uint32_t lo[PROFILE_MAX_DEPTH];
	const uint32_t *fr;
	size_t n;

	memset(names, 0, 3 * sizeof(*names));
	memset(locs, 0, 3 * sizeof(*locs));
	*nframes = 0;
	if (session__open(s, sl_path))
		return;
	s->callchain.no_inline = no_inline;
	s->callchain.no_srcline = no_srcline;
	if (session__pass1(s) || session__pass2(s) || p->nr_entries != 1)
		return;
	fr = profile__stack(p, p->entries[0].stack, &n);
	if (p->lines.nr_w > 1 || (p->lines.nr_w == 1 && (p->lines.w[0].entry != 0 ||
							 p->lines.w[0].weight != 1)))
		return;
	profile__stack_locs(p, p->lines.nr_w ? p->lines.w[0].locs : 0, fr, n, lo);
	*nframes = n;
	*ninlined = 0;
	for (size_t i = 0; i < n; i++)
		*ninlined += profile__frame(p, fr[i])->inlined;
	for (size_t i = 0; i < 3 && i < n; i++) {
		names[i] = profile__frame(p, fr[n - 3 + i])->name;
		profile__loc_str(p, lo[n - 3 + i], locs[i], sizeof(locs[i]));
	}
}

/* Annotate of sl_outer: the sample's weight (the leaf was inlined code),
 * the inlined lines marked, call targets named, the PLT one too. */
static void test_srcline_annotate(struct session *s, uint32_t outer, bool no_srcline)
{
#ifdef HAVE_CAPSTONE
	struct annotation a;
	char err[256], want[128];
	bool probe = false, plt = false, inl = false, fill = false;

	TEST_ASSERT_EQ(annotate__frame(&a, s, outer, err, sizeof(err)), 0);
	TEST_ASSERT(a.total == 1);
	TEST_ASSERT(a.lines_off == no_srcline && a.has_lines == !no_srcline);
	snprintf(want, sizeof(want), "test_srcline.c:%d", sl_line_fill);
	for (size_t i = 0; i < a.nr; i++) {
		const char *t = a.lines[i].text;

		if (a.lines[i].kind == ANNOTATE_INSN) {
			probe |= strstr(t, "call") && strstr(t, " <sl_probe>");
			plt |= strstr(t, "call") && strstr(t, " <getpid@plt>");
		} else {
			inl |= strstr(t, "[in sl_inner, inlined]") != NULL;
			fill |= !strncmp(t, want, strlen(want)) && strstr(t, "sl_fill(__LINE__)");
		}
	}
	if (!probe || !plt)
		annotation__fprint(&a, stderr);
	annotation__exit(&a);
	TEST_ASSERT(probe && plt);
	TEST_ASSERT(inl == !no_srcline && fill == !no_srcline);
#endif
}

static void test_srcline_report(void)
{
	struct session s;
	const char *names[3];
	char locs[3][64], want[3][64];
	const struct frame *f;
	size_t n, n_noinline, ninl, ninl2;
	uint32_t outer = UINT32_MAX;

	TEST_ASSERT(mkstemp(sl_path) >= 0);
	TEST_ASSERT_EQ(sl_write_trace(sl_path), 0);
	snprintf(want[0], sizeof(want[0]), "test_srcline.c:%d", sl_line_outer);
	snprintf(want[1], sizeof(want[1]), "test_srcline.c:%d", sl_line_mid);
	snprintf(want[2], sizeof(want[2]), "test_srcline.c:%d", sl_line_fill);

	sl_report(false, false, &s, names, locs, &n, &ninl);
	TEST_ASSERT(n >= 4 && ninl >= 2);	/* main may have inlined the test case too */
	TEST_ASSERT(names[0] && !strcmp(names[0], "sl_outer"));
	TEST_ASSERT(names[1] && !strcmp(names[1], "sl_mid (inlined)"));
	TEST_ASSERT(names[2] && !strcmp(names[2], "sl_inner (inlined)"));
	for (int i = 0; i < 3; i++) {
		if (strcmp(locs[i], want[i]))
			fprintf(stderr, "  level %d: %s, want %s\n", i, locs[i], want[i]);
		TEST_ASSERT(!strcmp(locs[i], want[i]));
	}
	/* inlined frames are marked, have no address of their own, and the
	 * leaf's annotate weight goes to the function they are inlined into */
	for (uint32_t i = 0; i < s.profile.nr_frames; i++) {
		f = profile__frame(&s.profile, i);
		if (!strcmp(f->name, "sl_outer"))
			outer = i;
		TEST_ASSERT(f->inlined == (strstr(f->name, " (inlined)") != NULL));
		TEST_ASSERT(!f->inlined || f->addr == 0);
	}
	TEST_ASSERT(outer != UINT32_MAX && s.callchain.leaf_func == outer);
	TEST_ASSERT(s.profile.addr_hist.len == 1);
	test_srcline_annotate(&s, outer, false);
	session__close(&s);

	/* --no-inline: sl_outer is the leaf, at its own line that called the
	 * inlined code (sl_mid's call), not sl_fill's call inside sl_inner */
	sl_report(true, false, &s, names, locs, &n_noinline, &ninl2);
	TEST_ASSERT_EQ(n_noinline, n - ninl);
	TEST_ASSERT_EQ(ninl2, 0);
	TEST_ASSERT(names[2] && !strcmp(names[2], "sl_outer"));
	TEST_ASSERT(!strcmp(locs[2], want[0]));
	session__close(&s);

	/* --no-srcline: the same frames, no locations at all */
	sl_report(false, true, &s, names, locs, &n_noinline, &ninl2);
	TEST_ASSERT_EQ(n_noinline, n);
	for (uint32_t i = 0; i < s.profile.nr_frames; i++)
		if (!strcmp(profile__frame(&s.profile, i)->name, "sl_outer"))
			test_srcline_annotate(&s, i, true);
	TEST_ASSERT(names[2] && !strcmp(names[2], "sl_inner (inlined)"));
	TEST_ASSERT_EQ(s.profile.lines.nr_w, 0);
	TEST_ASSERT_EQ(s.profile.lines.nr_locs, 0);
	session__close(&s);

	/* both off: no DWARF is read at all */
	sl_report(true, true, &s, names, locs, &n_noinline, &ninl2);
	TEST_ASSERT_EQ(n_noinline, n - ninl);
	for (size_t i = 0; i < s.machine.dsos.nr; i++)
		TEST_ASSERT(s.machine.dsos.list[i]->srcline == NULL);
	session__close(&s);
	unlink(sl_path);
}

/* Location arrays line up with stacks that frames were added to after
 * resolving (an NVTX range in the middle, borrowed callers, a reason). */
static void test_srcline_stack_locs(void)
{
	struct profile p;
	uint32_t a, b, c, x, nv, r, l1, l2, out[6];

	profile__init(&p);
	a = profile__intern_frame(&p, FRAME_CPU_USER, "m", "a", 16, false);
	b = profile__intern_frame(&p, FRAME_CPU_USER, "m", "b", 32, false);
	c = profile__intern_frame(&p, FRAME_CPU_USER, "m", "c (inlined)", 0, false);
	x = profile__intern_frame(&p, FRAME_CPU_USER, "m", "borrowed", 48, false);
	nv = profile__intern_frame(&p, FRAME_MARKER, "[nvtx]", "[nvtx] step", 0, false);
	r = profile__intern_frame(&p, FRAME_MARKER, "[off-cpu]", "[off-cpu] futex", 0, false);
	l1 = profile__intern_loc(&p, "/src/a.c", 10);
	l2 = profile__intern_loc(&p, "b.c", 20);
	TEST_ASSERT(l1 && l2 && l1 != l2 && profile__intern_loc(&p, "/src/a.c", 10) == l1);
	{
		uint32_t pairs[] = { a, l1, b, 0, c, l2 }, none[] = { a, 0, b, 0 };
		uint32_t stack[] = { x, a, nv, b, c, r }, id = profile__intern_locs(&p, pairs, 3);
		char buf[64];

		TEST_ASSERT(id != 0 && profile__intern_locs(&p, pairs, 3) == id);
		TEST_ASSERT_EQ(profile__intern_locs(&p, none, 2), 0);
		profile__stack_locs(&p, id, stack, 6, out);
		TEST_ASSERT(out[0] == 0 && out[1] == l1 && out[2] == 0 && out[3] == 0 &&
			    out[4] == l2 && out[5] == 0);
		TEST_ASSERT(!strcmp(profile__loc_str(&p, l1, buf, sizeof(buf)), "a.c:10"));
		TEST_ASSERT(!strcmp(profile__loc_str(&p, 0, buf, sizeof(buf)), ""));
		profile__stack_locs(&p, 0, stack, 6, out);
		TEST_ASSERT(!out[0] && !out[1] && !out[4]);
	}
	{	/* the root part cut after a marker ("[autograd backward]": the
		 * forward op's frames, the marker, then b and c of the resolved
		 * a, b, c): the lines still line up */
		uint32_t ab = profile__intern_frame(&p, FRAME_MARKER, "[autograd]",
						    "[autograd backward]", 0, false);
		uint32_t pairs[] = { a, l1, b, l2, c, l1 }, id = profile__intern_locs(&p, pairs, 3);
		uint32_t stack[] = { x, ab, b, c };

		profile__stack_locs(&p, id, stack, 4, out);
		TEST_ASSERT(out[0] == 0 && out[1] == 0 && out[2] == l2 && out[3] == l1);
	}
	profile__exit(&p);
}

int main(void)
{
	TEST_RUN(test_srcline_lookup);
	TEST_RUN(test_srcline_report);
	TEST_RUN(test_srcline_stack_locs);
	TEST_EXIT();
}
