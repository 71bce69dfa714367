// SPDX-License-Identifier: MIT
/* The TUI's call-tree model (report/profile/tree.c): preorder layout, weights,
 * sorting, bottom-up, views, filters, search and the text renderer. */
#include <string.h>
#include "common/utf8.h"
#include "report/profile/tree.h"
#include "test.h"

/* main -> a -> leaf1 (6, cpu), main -> b -> leaf1 (3, cpu, tid 2),
 * main -> a -> gpuk (2, gpu), main (1, cpu: self), other -> x (4, pid 9) */
static uint32_t F_MAIN, F_A, F_B, F_LEAF, F_GPU, F_OTHER, F_X;

static void build_profile(struct profile *p)
{
	uint32_t s[4], comm;

	profile__init(p);
	comm = profile__intern_str(p, "app");
	F_MAIN = profile__intern_frame(p, FRAME_CPU_USER, "app", "main", 0x10, false);
	F_A = profile__intern_frame(p, FRAME_CPU_USER, "app", "a", 0x20, false);
	F_B = profile__intern_frame(p, FRAME_CPU_USER, "app", "b", 0x30, false);
	F_LEAF = profile__intern_frame(p, FRAME_CPU_USER, "libc.so.6", "leaf1", 0x40, false);
	F_GPU = profile__intern_frame(p, FRAME_GPU_KERNEL, "[gpu]", "gpuk", 0, false);
	F_OTHER = profile__intern_frame(p, FRAME_CPU_USER, "app", "other", 0x50, false);
	F_X = profile__intern_frame(p, FRAME_CPU_KERNEL, "[kernel.kallsyms]", "x", 0x60, false);

	s[0] = F_MAIN; s[1] = F_A; s[2] = F_LEAF;
	profile__add(p, profile__intern_stack(p, s, 3), 1, 1, comm, ORIGIN_CPU, 6);
	s[1] = F_B;
	profile__add(p, profile__intern_stack(p, s, 3), 1, 2, comm, ORIGIN_CPU, 3);
	s[1] = F_A; s[2] = F_GPU;
	profile__add(p, profile__intern_stack(p, s, 3), 1, 1, comm, ORIGIN_GPU, 2);
	profile__add(p, profile__intern_stack(p, s, 1), 1, 1, comm, ORIGIN_CPU, 1);
	s[0] = F_OTHER; s[1] = F_X;
	profile__add(p, profile__intern_stack(p, s, 2), 9, 9,
		     profile__intern_str(p, "other"), ORIGIN_CPU, 4);
}

static uint32_t find(const struct tree *t, uint32_t parent, uint32_t frame)
{
	for (uint32_t i = 0; i < t->nr; i++)
		if (t->parent[i] == parent && t->frame[i] == frame)
			return i;
	return UINT32_MAX;
}

static void test_top_down(void)
{
	struct profile p;
	struct tree t;
	struct tree_opts o = { .view = VIEW_MERGED };
	uint32_t m, a, b, l;

	build_profile(&p);
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 16);
	/* nodes: main, a, leaf1, gpuk, b, leaf1, other, x */
	TEST_ASSERT_EQ(t.nr, 8);
	/* roots sorted by weight: main (12) before other (4) */
	TEST_ASSERT_EQ(t.frame[0], F_MAIN);
	TEST_ASSERT(t.total[0] == 12 && t.self[0] == 1);
	TEST_ASSERT_EQ(t.end[0], 6);
	TEST_ASSERT_EQ(tree__next_sibling(&t, 0), 6);
	TEST_ASSERT_EQ(t.frame[6], F_OTHER);
	TEST_ASSERT_EQ(tree__next_sibling(&t, 6), UINT32_MAX);
	m = 0;
	a = find(&t, m, F_A);
	b = find(&t, m, F_B);
	TEST_ASSERT_EQ(a, 1);		/* heaviest child first, right after its parent */
	TEST_ASSERT(t.total[a] == 8 && t.self[a] == 0);
	TEST_ASSERT_EQ(b, 4);
	TEST_ASSERT_EQ(tree__next_sibling(&t, a), b);
	l = find(&t, a, F_LEAF);
	TEST_ASSERT_EQ(l, 2);
	TEST_ASSERT(t.self[l] == 6 && t.total[l] == 6);
	TEST_ASSERT_EQ(t.depth[l], 2);
	TEST_ASSERT(!tree__has_children(&t, l));
	/* every subtree range holds exactly its descendants */
	for (uint32_t i = 0; i < t.nr; i++)
		for (uint32_t j = i + 1; j < t.end[i]; j++)
			TEST_ASSERT(t.depth[j] > t.depth[i]);
	tree__exit(&t);
	profile__exit(&p);
}

static void test_bottom_up_and_views(void)
{
	struct profile p;
	struct tree t;
	struct tree_opts o = { .view = VIEW_CPU, .inverted = true };
	uint32_t l;

	build_profile(&p);
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 14);
	/* roots are leaves: leaf1 (9), x (4), main (1) */
	TEST_ASSERT_EQ(t.frame[0], F_LEAF);
	TEST_ASSERT(t.total[0] == 9);
	/* Self of a root is the leaf's own weight (perf), not the weight of
	 * stacks that end at the root; its callers have none */
	TEST_ASSERT(t.self[0] == 9);
	l = find(&t, 0, F_A);
	TEST_ASSERT(l != UINT32_MAX && t.total[l] == 6);
	TEST_ASSERT(t.self[l] == 0);
	for (uint32_t i = 0; i < t.nr; i++)
		TEST_ASSERT(t.depth[i] ? t.self[i] == 0 : t.self[i] == t.total[i]);
	TEST_ASSERT(find(&t, UINT32_MAX, F_GPU) == UINT32_MAX);	/* cpu view: no GPU */
	tree__exit(&t);

	o.view = VIEW_GPU;
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 2);
	TEST_ASSERT_EQ(t.frame[0], F_GPU);
	TEST_ASSERT_EQ(t.nr, 3);
	tree__exit(&t);
	profile__exit(&p);
}

static void test_filters(void)
{
	struct profile p;
	struct tree t;
	uint32_t pid = 9, tid = 2;
	char *comm = "app";
	struct tree_opts o = { .view = VIEW_MERGED };

	build_profile(&p);
	o.filter.pids = &pid;
	o.filter.nr_pids = 1;
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 4);
	TEST_ASSERT_EQ(t.frame[0], F_OTHER);
	tree__exit(&t);

	o.filter.nr_pids = 0;
	o.filter.tids = &tid;
	o.filter.nr_tids = 1;
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 3);
	TEST_ASSERT_EQ(t.nr, 3);
	tree__exit(&t);

	o.filter.nr_tids = 0;
	o.filter.comms = &comm;
	o.filter.nr_comms = 1;
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT(t.view_total == 12);
	tree__exit(&t);
	profile__exit(&p);
}

static void test_search_and_print(void)
{
	struct profile p;
	struct tree t;
	struct tree_opts o = { .view = VIEW_MERGED };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	uint32_t first;

	build_profile(&p);
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	first = tree__search(&t, "LEAF", UINT32_MAX, 0, (uint32_t)t.nr, false);
	TEST_ASSERT_EQ(first, 2);
	TEST_ASSERT_EQ(tree__search(&t, "leaf", first, 0, (uint32_t)t.nr, false), 5);
	TEST_ASSERT_EQ(tree__search(&t, "leaf", 5, 0, (uint32_t)t.nr, false), 2);	/* wraps */
	TEST_ASSERT_EQ(tree__search(&t, "leaf", 2, 0, (uint32_t)t.nr, true), 5);	/* back */
	TEST_ASSERT_EQ(tree__search(&t, "leaf", 4, 4, 6, false), 5);		/* in a zoom */
	TEST_ASSERT_EQ(tree__search(&t, "nomatch", 0, 0, (uint32_t)t.nr, false), UINT32_MAX);

	fp = open_memstream(&buf, &len);
	TEST_ASSERT(fp);
	tree__fprint(&t, fp, 0, (uint32_t)t.nr, 0, true);
	fclose(fp);
	TEST_ASSERT(strstr(buf, "  75.00%    6.25%       12  - [.] main  (app)\n"));
	TEST_ASSERT(strstr(buf, "  37.50%   37.50%        6        [.] leaf1  (libc.so.6)\n"));
	TEST_ASSERT(strstr(buf, "  12.50%   12.50%        2        [g] gpuk  ([gpu])\n"));
	TEST_ASSERT(strstr(buf, "[k] x  ([kernel.kallsyms])"));
	free(buf);
	tree__exit(&t);
	profile__exit(&p);
}

static void test_empty(void)
{
	struct profile p;
	struct tree t;
	struct tree_opts o = { .view = VIEW_GPU };

	profile__init(&p);
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT_EQ(t.nr, 0);
	TEST_ASSERT_EQ(tree__search(&t, "x", 0, 0, 0, false), UINT32_MAX);
	tree__exit(&t);
	profile__exit(&p);
}

/* A line too long for the buffer ends between two characters: a name of
 * 4-byte characters cut at every byte offset stays UTF-8. */
static void test_format_cut(void)
{
	struct profile p;
	struct tree t;
	struct tree_opts o = { .view = VIEW_CPU };
	char name[4 * 64 + 1], buf[160];
	uint32_t f;

	for (int i = 0; i < 64; i++)
		memcpy(name + 4 * i, "\xf0\x9f\x98\x80", 4);	/* U+1F600 */
	name[4 * 64] = '\0';
	profile__init(&p);
	f = profile__intern_frame(&p, FRAME_CPU_USER, "app", name, 0x10, false);
	profile__add(&p, profile__intern_stack(&p, &f, 1), 1, 1, profile__intern_str(&p, "app"),
		     ORIGIN_CPU, 1);
	TEST_ASSERT_EQ(tree__build(&t, &p, &o), 0);
	TEST_ASSERT_EQ(t.nr, 1);
	for (size_t size = 40; size < sizeof(buf); size++) {
		size_t len = tree__format(&t, 0, 0, false, false, buf, size);

		TEST_ASSERT(len < size && len == strlen(buf));
		TEST_ASSERT(len + 4 > size - 1);	/* no more cut than the character */
		TEST_ASSERT(utf8__valid(buf, len));
	}
	tree__exit(&t);
	profile__exit(&p);
}

int main(void)
{
	TEST_RUN(test_top_down);
	TEST_RUN(test_format_cut);
	TEST_RUN(test_bottom_up_and_views);
	TEST_RUN(test_filters);
	TEST_RUN(test_search_and_print);
	TEST_RUN(test_empty);
	TEST_EXIT();
}
