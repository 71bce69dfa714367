// SPDX-License-Identifier: MIT
/*
 * -g for --stdio: under a row, the call paths that reach its function, as
 * a tree in perf's graph layout, each branch with its share of the total:
 *
 *   caller   from each thread's root down to the function (top-down)
 *   callee   from the function up to the root, nearest caller first (the
 *            inverted tree: who calls this, then who calls them)
 *
 * A stack where the function recurses counts once, at its outermost call.
 * Branches under callgraph_min percent of the total are left out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

struct cg_node {
	uint32_t frame;
	double weight;
	uint32_t first_child, next;	/* indexes + 1; 0: none */
};

struct cg_tree {
	struct cg_node *nodes;		/* [0]: the root (the row's function) */
	size_t nr, cap;
};

static uint32_t cg__child(struct cg_tree *t, uint32_t parent, uint32_t frame)
{
	uint32_t c;

	for (c = t->nodes[parent].first_child; c; c = t->nodes[c - 1].next)
		if (t->nodes[c - 1].frame == frame)
			return c - 1;
	t->nodes = xgrow(t->nodes, &t->cap, t->nr + 1, sizeof(*t->nodes));
	t->nodes[t->nr] = (struct cg_node){ .frame = frame, .next = t->nodes[parent].first_child };
	t->nodes[parent].first_child = (uint32_t)++t->nr;
	return (uint32_t)t->nr - 1;
}

struct cg_print {
	const struct profile *p;
	const struct cg_tree *t;
	FILE *fp;
	double total, min;
};

static int cg__cmp(const void *a, const void *b, void *ctx)
{
	const struct cg_tree *t = ctx;
	const struct cg_node *x = &t->nodes[*(const uint32_t *)a], *y = &t->nodes[*(const uint32_t *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* The children of n heavier than the threshold, heaviest first. */
static size_t cg__children(const struct cg_print *pr, uint32_t n, uint32_t **out)
{
	size_t nr = 0, cap = 0;
	uint32_t *v = NULL;

	for (uint32_t c = pr->t->nodes[n].first_child; c; c = pr->t->nodes[c - 1].next) {
		if (100.0 * pr->t->nodes[c - 1].weight / pr->total < pr->min)
			continue;
		v = xgrow(v, &cap, nr + 1, sizeof(*v));
		v[nr++] = c - 1;
	}
	if (nr > 1)
		qsort_r(v, nr, sizeof(*v), cg__cmp, (void *)pr->t);
	*out = v;
	return nr;
}

/* Node n's subtree: a lone child continues the chain in the same column,
 * several open branches "|--P%--name" as perf prints them. */
static void cg__print(const struct cg_print *pr, uint32_t n, char *prefix, size_t plen,
		      size_t cap)
{
	uint32_t *kids;
	size_t nr = cg__children(pr, n, &kids);

	if (nr == 1 && pr->t->nodes[kids[0]].weight == pr->t->nodes[n].weight) {
		char name[512];

		folded__frame(profile__frame(pr->p, pr->t->nodes[kids[0]].frame), name, sizeof(name));
		fprintf(pr->fp, "%.*s%s\n", (int)plen, prefix, name);
		cg__print(pr, kids[0], prefix, plen, cap);
		free(kids);
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct cg_node *c = &pr->t->nodes[kids[i]];
		char name[512], head[64];
		int hl;
		size_t np = plen;

		folded__frame(profile__frame(pr->p, c->frame), name, sizeof(name));
		fprintf(pr->fp, "%.*s|\n", (int)plen, prefix);
		hl = snprintf(head, sizeof(head), "%s--%.2f%%--", i + 1 < nr ? "|" : " ",
			      100.0 * c->weight / pr->total);
		fprintf(pr->fp, "%.*s%s%s\n", (int)plen, prefix, head, name);
		/* the columns below: a bar while siblings follow */
		if (np + (size_t)hl + 1 < cap) {
			prefix[np] = i + 1 < nr ? '|' : ' ';
			memset(prefix + np + 1, ' ', (size_t)hl - 1);
			np += (size_t)hl;
		}
		cg__print(pr, kids[i], prefix, np, cap);
	}
	free(kids);
}

int stdio__callgraph(const struct profile *p, FILE *fp, enum profile_view view, uint32_t frame,
		     uint32_t comm, double total, const struct table_opts *t)
{
	struct cg_tree tree = { 0 };
	struct cg_print pr = { p, &tree, fp, total, t->callgraph_min };
	char prefix[1024], name[512];
	uint32_t kid;

	if (!(total > 0))
		return 0;
	tree.nodes = xgrow(tree.nodes, &tree.cap, 1, sizeof(*tree.nodes));
	tree.nodes[0] = (struct cg_node){ .frame = frame };
	tree.nr = 1;
	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		const uint32_t *fr;
		size_t n, at;
		uint32_t node = 0;

		if (!profile__in_view(e, view) || (comm != ~0u && e->comm != comm))
			continue;
		fr = profile__stack(p, e->stack, &n);
		for (at = 0; at < n && fr[at] != frame; at++)	/* the outermost call */
			;
		if (at == n)
			continue;
		tree.nodes[0].weight += e->weight;
		if (t->callgraph == CALLGRAPH_CALLER) {
			for (size_t j = 0; j <= at; j++) {	/* root ... the function */
				node = cg__child(&tree, node, fr[j]);
				tree.nodes[node].weight += e->weight;
			}
		} else {
			for (size_t j = at; j-- > 0; ) {	/* caller ... root */
				node = cg__child(&tree, node, fr[j]);
				tree.nodes[node].weight += e->weight;
			}
		}
	}
	/* perf's layout: the chains hang from a bar under the row; callee
	 * order starts at the function, caller order at the threads' roots
	 * (node 0 stands for them) and ends at the function */
	memset(prefix, ' ', sizeof(prefix));
	fprintf(fp, "            |\n");
	if (t->callgraph == CALLGRAPH_CALLEE) {
		folded__frame(profile__frame(p, frame), name, sizeof(name));
		fprintf(fp, "            ---%s\n", name);
		cg__print(&pr, 0, prefix, 15, sizeof(prefix));
	} else if ((kid = tree.nodes[0].first_child) && !tree.nodes[kid - 1].next) {
		folded__frame(profile__frame(p, tree.nodes[kid - 1].frame), name, sizeof(name));
		fprintf(fp, "            ---%s\n", name);
		cg__print(&pr, kid - 1, prefix, 15, sizeof(prefix));
	} else {
		cg__print(&pr, 0, prefix, 12, sizeof(prefix));
	}
	fprintf(fp, "\n");
	free(tree.nodes);
	return ferror(fp) ? -EIO : 0;
}
