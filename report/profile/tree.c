// SPDX-License-Identifier: MIT
/* The call tree: built from profile entries in two phases (insert with a
 * (parent, frame) hash, then a sorted preorder layout). See tree.h. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/hashmap.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "report/profile/tree.h"

#define NONE UINT32_MAX

/* Phase-1 node, in insertion order. */
struct tnode {
	uint32_t frame, parent;
	double total, self;
	uint64_t count;
};

struct tbuild {
	struct tnode *n;
	size_t nr, cap;
	struct u64map kids;		/* (parent + 1) << 32 | frame -> node + 1 */
};

static bool tree__keep(const struct tree_opts *o, const struct profile *p,
		       const struct profile_entry *e)
{
	return profile__in_view(e, o->view) &&
	       filter__match(&o->filter, e->pid, e->tid, FILTER_NO_TIME, profile__str(p, e->comm));
}

static uint32_t tbuild__child(struct tbuild *b, uint32_t parent, uint32_t frame)
{
	uint64_t *slot = u64map__slot(&b->kids, (uint64_t)(parent + 1) << 32 | frame);

	if (*slot)
		return (uint32_t)*slot - 1;
	b->n = xgrow(b->n, &b->cap, b->nr + 1, sizeof(*b->n));
	b->n[b->nr] = (struct tnode){ .frame = frame, .parent = parent };
	*slot = ++b->nr;
	return (uint32_t)b->nr - 1;
}

/* Each node's heaviest source line: the weight of the entries it holds under
 * each location array, summed per (node, line). entry_node[e] is the tnode
 * where entry e's path ends (NONE: not in the tree), pos[] the preorder
 * place of a tnode. */
static int tree__locs(struct tree *t, const struct tbuild *b, const uint32_t *entry_node,
		      const uint32_t *pos)
{
	const struct profile *p = t->p;
	struct loc_vote votes = { 0 };

	t->loc = calloc(b->nr + 1, sizeof(*t->loc));
	if (!t->loc)
		return -ENOMEM;
	for (size_t i = 0; i < p->lines.nr_w; i++) {
		const struct profile_locw *w = &p->lines.w[i];
		uint32_t node = entry_node[w->entry];
		uint32_t lo[PROFILE_MAX_DEPTH];
		const uint32_t *fr;
		size_t n;

		if (node == NONE)
			continue;
		fr = profile__stack(p, p->entries[w->entry].stack, &n);
		profile__stack_locs(p, w->locs, fr, n, lo);
		/* up the path from its end: the leaf-most frame first
		 * (top-down), the root-most (bottom-up) */
		for (size_t k = 0; k < n && node != NONE; k++, node = b->n[node].parent) {
			size_t j = t->opts.inverted ? k : n - 1 - k;

			if (lo[j])
				loc_vote__add(&votes, pos[node], lo[j], w->weight);
		}
	}
	loc_vote__best(&votes, t->loc, b->nr);
	loc_vote__exit(&votes);
	return 0;
}

static int tnode__cmp(const void *a, const void *b, void *arg)
{
	const struct tbuild *tb = ((void **)arg)[0];
	const struct profile *p = ((void **)arg)[1];
	const struct tnode *x = &tb->n[*(const uint32_t *)a], *y = &tb->n[*(const uint32_t *)b];
	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = strcmp(profile__frame(p, x->frame)->name, profile__frame(p, y->frame)->name);
	if (c)
		return c;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int tree__build(struct tree *t, const struct profile *p, const struct tree_opts *opts)
{
	struct tbuild b = { 0 };
	uint32_t *koff = NULL, *kids = NULL, *fill = NULL, *stk = NULL, *pos = NULL;
	uint32_t *entry_node = malloc((p->nr_entries + 1) * sizeof(*entry_node));
	size_t nr_roots = 0;
	void *ctx[2] = { &b, (void *)p };
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->opts = *opts;
	u64map__init(&b.kids);
	if (!entry_node)
		return -ENOMEM;

	/* phase 1: insert every entry's path */
	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		const uint32_t *fr;
		uint32_t node = NONE;
		size_t n;

		entry_node[i] = NONE;
		if (!tree__keep(opts, p, e) || e->weight == 0)
			continue;
		t->view_total += e->weight;
		t->nr_entries_used++;
		fr = profile__stack(p, e->stack, &n);
		if (opts->roots && !opts->inverted) {
			uint64_t *r = u64map__find(opts->roots, opts->roots_by_tid ? e->tid : e->pid);

			if (r) {
				node = tbuild__child(&b, node, (uint32_t)*r - 1);
				b.n[node].total += e->weight;
				b.n[node].count += e->count;
			}
		}
		for (size_t j = 0; j < n; j++) {
			uint32_t f = opts->inverted ? fr[n - 1 - j] : fr[j];

			node = tbuild__child(&b, node, f);
			b.n[node].total += e->weight;
			b.n[node].count += e->count;
			if (opts->inverted && !j)	/* the leaf: its own weight */
				b.n[node].self += e->weight;
		}
		if (node != NONE && !opts->inverted)
			b.n[node].self += e->weight;
		entry_node[i] = node;
	}
	u64map__exit(&b.kids);

	/* phase 2: children lists (CSR, slot nr = virtual root), sorted */
	t->nr = b.nr;
	koff = calloc(b.nr + 2, sizeof(*koff));
	kids = malloc((b.nr + 1) * sizeof(*kids));
	fill = malloc((b.nr + 2) * sizeof(*fill));
	stk = malloc((b.nr + 1) * sizeof(*stk));
	pos = malloc((b.nr + 1) * sizeof(*pos));
	t->frame = malloc((b.nr + 1) * sizeof(*t->frame));
	t->parent = malloc((b.nr + 1) * sizeof(*t->parent));
	t->end = malloc((b.nr + 1) * sizeof(*t->end));
	t->depth = malloc((b.nr + 1) * sizeof(*t->depth));
	t->total = malloc((b.nr + 1) * sizeof(*t->total));
	t->self = malloc((b.nr + 1) * sizeof(*t->self));
	t->count = malloc((b.nr + 1) * sizeof(*t->count));
	if (!koff || !kids || !fill || !stk || !pos || !t->frame || !t->parent || !t->end ||
	    !t->depth || !t->total || !t->self || !t->count) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b.nr; i++) {
		uint32_t par = b.n[i].parent == NONE ? (uint32_t)b.nr : b.n[i].parent;

		koff[par + 1]++;
		nr_roots += b.n[i].parent == NONE;
	}
	for (size_t i = 0; i <= b.nr; i++)
		koff[i + 1] += koff[i];
	memcpy(fill, koff, (b.nr + 2) * sizeof(*fill));
	for (size_t i = 0; i < b.nr; i++) {
		uint32_t par = b.n[i].parent == NONE ? (uint32_t)b.nr : b.n[i].parent;

		kids[fill[par]++] = (uint32_t)i;
	}
	for (size_t i = 0; i <= b.nr; i++)
		if (koff[i + 1] - koff[i] > 1)
			qsort_r(kids + koff[i], koff[i + 1] - koff[i], sizeof(*kids), tnode__cmp, ctx);

	/* preorder: depth-first over the sorted lists; stk holds pending
	 * nodes, pushed in reverse so the heaviest child comes out first */
	{
		size_t sp = 0, out = 0;

		for (size_t k = koff[b.nr + 1]; k-- > koff[b.nr]; )
			stk[sp++] = kids[k];
		while (sp) {
			uint32_t old = stk[--sp];
			uint32_t par = b.n[old].parent;

			pos[old] = (uint32_t)out;
			t->frame[out] = b.n[old].frame;
			t->parent[out] = par == NONE ? NONE : pos[par];
			t->depth[out] = par == NONE ? 0 : (uint16_t)(t->depth[pos[par]] + 1);
			t->total[out] = b.n[old].total;
			t->self[out] = b.n[old].self;
			t->count[out] = b.n[old].count;
			out++;
			for (size_t k = koff[old + 1]; k-- > koff[old]; )
				stk[sp++] = kids[k];
		}
		/* end[i]: a node's subtree ends where the next node at its
		 * depth or shallower starts; walk backwards keeping, per
		 * node, the end it inherits */
		for (size_t i = out; i-- > 0; ) {
			uint32_t e = (uint32_t)i + 1;

			/* children were laid out right after i: the last
			 * child's end is i's end */
			if (e < out && t->parent[e] == i) {
				uint32_t c = e;

				while (t->end[c] < out && t->parent[t->end[c]] == i)
					c = t->end[c];
				e = t->end[c];
			}
			t->end[i] = e;
		}
	}
	(void)nr_roots;
	err = tree__locs(t, &b, entry_node, pos);
out:
	free(entry_node);
	free(b.n);
	free(koff);
	free(kids);
	free(fill);
	free(stk);
	free(pos);
	if (err)
		tree__exit(t);
	return err;
}

void tree__exit(struct tree *t)
{
	free(t->frame);
	free(t->parent);
	free(t->end);
	free(t->depth);
	free(t->total);
	free(t->self);
	free(t->count);
	free(t->loc);
	memset(t, 0, sizeof(*t));
}

uint32_t tree__next_sibling(const struct tree *t, uint32_t i)
{
	uint32_t e = t->end[i];

	if (e >= t->nr || t->parent[e] != t->parent[i])
		return NONE;
	return e;
}

static bool str__icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (!n)
		return false;
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

uint32_t tree__search(const struct tree *t, const char *needle, uint32_t from,
		      uint32_t lo, uint32_t hi, bool reverse)
{
	const struct profile *p = t->p;
	uint8_t *match;
	uint32_t n = hi - lo, res = NONE;

	if (!n || !needle[0])
		return NONE;
	/* decide per frame once: names repeat across many nodes */
	match = calloc(p->nr_frames + 1, 1);
	if (!match)
		return NONE;
	if (from < lo || from >= hi)
		from = reverse ? lo : hi - 1;
	for (uint32_t k = 1; k <= n; k++) {
		uint32_t i = reverse ? lo + (from - lo + n - k) % n : lo + (from - lo + k) % n;
		uint32_t f = t->frame[i];

		if (!match[f])
			match[f] = str__icontains(profile__frame(p, f)->name, needle) ? 1 : 2;
		if (match[f] == 1) {
			res = i;
			break;
		}
	}
	free(match);
	return res;
}

char frame__tag(const struct frame *f)
{
	switch (f->kind) {
	case FRAME_CPU_USER:	return '.';
	case FRAME_CPU_KERNEL:	return 'k';
	case FRAME_MARKER:	return '-';
	default:		return 'g';
	}
}

const char *tree__header(void)
{
	return "Children     Self  Samples  Symbol";
}

size_t tree__format(const struct tree *t, uint32_t i, int indent_depth, bool expanded,
		    bool ascii, char *buf, size_t size)
{
	const struct frame *f = profile__frame(t->p, t->frame[i]);
	double tot = t->view_total > 0 ? t->view_total : 1;
	const char *mark;
	char loc[256];
	int len;

	if (!tree__has_children(t, i))
		mark = "  ";
	else if (ascii)
		mark = expanded ? "- " : "+ ";
	else
		mark = expanded ? "\u25be " : "\u25b8 ";
	profile__loc_str(t->p, t->loc ? t->loc[i] : 0, loc, sizeof(loc));
	len = snprintf(buf, size, "%7.2f%% %7.2f%% %8.0f  %*s%s[%c] %s%s%s%s%s%s",
		       100.0 * t->total[i] / tot,
		       100.0 * t->self[i] / tot, t->total[i], indent_depth * 2, "", mark,
		       frame__tag(f), f->name, loc[0] ? "  " : "", loc,
		       f->module[0] && !f->unknown ? "  (" : "",
		       f->module[0] && !f->unknown ? f->module : "",
		       f->module[0] && !f->unknown ? ")" : "");
	if (len < 0)
		len = 0;
	if ((size_t)len < size)
		return (size_t)len;
	/* cut: between two characters (utf8.h) */
	len = (int)utf8__trim(buf, size - 1);
	buf[len] = '\0';
	return (size_t)len;
}

int tree__fprint(const struct tree *t, FILE *fp, uint32_t lo, uint32_t hi, int max_depth,
		 bool ascii)
{
	char buf[1024];

	fprintf(fp, "%s\n", tree__header());
	for (uint32_t i = lo; i < hi && i < t->nr; i++) {
		int d = t->depth[i] - t->depth[lo];

		if (max_depth && d >= max_depth)
			continue;
		tree__format(t, i, d, !max_depth || d + 1 < max_depth, ascii, buf, sizeof(buf));
		fprintf(fp, "%s\n", buf);
	}
	return ferror(fp) ? -EIO : 0;
}
