// SPDX-License-Identifier: MIT
/* --diff: two profiles joined by frame identity, normalised (diff.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/profile/diff.h"

/* Copies the entries of p in view into d->u under pid side. */
static void diff__add_side(struct diff *d, const struct profile *p, int side)
{
	uint32_t *map = xcalloc(p->nr_frames + 1, sizeof(*map));	/* p id -> u id + 1 */
	uint32_t *buf = xcalloc(PROFILE_MAX_DEPTH + 1, sizeof(*buf));

	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		const uint32_t *fr;
		size_t n;

		if (!profile__in_view(e, d->view))
			continue;
		fr = profile__stack(p, e->stack, &n);
		for (size_t j = 0; j < n; j++) {
			if (!map[fr[j]]) {
				const struct frame *f = profile__frame(p, fr[j]);

				map[fr[j]] = profile__intern_frame(&d->u, f->kind, f->module, f->name,
								   0, f->unknown) + 1;
			}
			buf[j] = map[fr[j]] - 1;
		}
		profile__add(&d->u, profile__intern_stack(&d->u, buf, n), (uint32_t)side, 0,
			     profile__intern_str(&d->u, profile__str(p, e->comm)), e->origin,
			     e->weight);
	}
	free(buf);
	free(map);
}

/* The frame is name, or a kernel frame written as in --folded: name_[k]. */
static bool diff__frame_is(const struct frame *f, const char *name)
{
	size_t n = strlen(f->name);

	if (!strcmp(f->name, name))
		return true;
	return f->kind == FRAME_CPU_KERNEL && !strncmp(f->name, name, n) &&
	       !strcmp(name + n, "_[k]");
}

/* Each side's weight of the stacks through the frame named name (once per
 * stack: a recursive function is not counted twice). */
static void diff__frame_weight(struct diff *d, const char *name)
{
	bool *is = xcalloc(d->u.nr_frames + 1, sizeof(*is));

	for (size_t i = 0; i < d->u.nr_frames; i++)
		is[i] = diff__frame_is(profile__frame(&d->u, (uint32_t)i), name);
	for (size_t i = 0; i < d->u.nr_entries; i++) {
		const struct profile_entry *e = &d->u.entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(&d->u, e->stack, &n);

		for (size_t j = 0; j < n; j++)
			if (is[fr[j]]) {
				d->frame_w[e->pid] += e->weight;
				break;
			}
	}
	free(is);
}

struct diff_tnode {
	uint32_t node, parent, frame;
	double w[2];
	const char *name;
};

/* Siblings together, by new weight, then old weight, then name. */
static int diff_tnode__cmp(const void *a, const void *b)
{
	const struct diff_tnode *x = a, *y = b;
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->w[DIFF_NEW] != y->w[DIFF_NEW])
		return x->w[DIFF_NEW] > y->w[DIFF_NEW] ? -1 : 1;
	if (x->w[DIFF_OLD] != y->w[DIFF_OLD])
		return x->w[DIFF_OLD] > y->w[DIFF_OLD] ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : (x->frame > y->frame) - (x->frame < y->frame);
}

/* The union call tree: a trie of the stacks, then laid out in preorder. */
static void diff__tree(struct diff *d)
{
	struct diff_tnode *t = NULL, *sorted;
	size_t nr = 0, cap = 0, *first, *count, *stack, sp = 0, out = 0;
	uint32_t *pos;
	struct u64map kids;		/* (parent + 1) << 32 | frame -> node + 1 */

	u64map__init(&kids);
	for (size_t i = 0; i < d->u.nr_entries; i++) {
		const struct profile_entry *e = &d->u.entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(&d->u, e->stack, &n);
		uint32_t par = UINT32_MAX;

		for (size_t j = 0; j < n; j++) {
			uint64_t *slot = u64map__slot(&kids, ((uint64_t)(par + 1) << 32) | fr[j]);

			if (!*slot) {
				t = xgrow(t, &cap, nr + 1, sizeof(*t));
				t[nr] = (struct diff_tnode){ .node = (uint32_t)nr, .parent = par,
					.frame = fr[j], .name = profile__frame(&d->u, fr[j])->name };
				*slot = ++nr;
			}
			par = (uint32_t)(*slot - 1);
			t[par].w[e->pid] += e->weight;
		}
	}
	u64map__exit(&kids);

	/* children of p: sorted[first[p] .. first[p] + count[p]); roots at nr */
	sorted = xcalloc(nr + 1, sizeof(*sorted));
	memcpy(sorted, t, nr * sizeof(*t));
	for (size_t i = 0; i < nr; i++)		/* roots sort last, as parent nr */
		if (sorted[i].parent == UINT32_MAX)
			sorted[i].parent = (uint32_t)nr;
	xpu_qsort(sorted, nr, sizeof(*sorted), diff_tnode__cmp);
	first = xcalloc(nr + 2, sizeof(*first));
	count = xcalloc(nr + 2, sizeof(*count));
	for (size_t i = nr; i-- > 0; ) {
		first[sorted[i].parent] = i;
		count[sorted[i].parent]++;
	}

	d->nr = nr;
	d->frame = xcalloc(nr + 1, sizeof(*d->frame));
	d->parent = xcalloc(nr + 1, sizeof(*d->parent));
	d->depth = xcalloc(nr + 1, sizeof(*d->depth));
	d->w[0] = xcalloc(nr + 1, sizeof(double));
	d->w[1] = xcalloc(nr + 1, sizeof(double));
	pos = xcalloc(nr + 1, sizeof(*pos));		/* trie node -> preorder index */
	stack = xcalloc(nr + 1, sizeof(*stack));	/* sorted[] indices to visit */
	for (size_t k = count[nr]; k-- > 0; )		/* roots, first on top */
		stack[sp++] = first[nr] + k;
	while (sp) {
		const struct diff_tnode *n = &sorted[stack[--sp]];

		pos[n->node] = (uint32_t)out;
		d->frame[out] = n->frame;
		d->parent[out] = n->parent == nr ? UINT32_MAX : pos[n->parent];
		d->depth[out] = n->parent == nr ? 0 : (uint16_t)(d->depth[pos[n->parent]] + 1);
		d->w[0][out] = n->w[0];
		d->w[1][out] = n->w[1];
		out++;
		for (size_t k = count[n->node]; k-- > 0; )
			stack[sp++] = first[n->node] + k;
	}
	free(stack);
	free(pos);
	free(first);
	free(count);
	free(sorted);
	free(t);
}

int diff__build(struct diff *d, const struct profile *old, const struct profile *new,
		enum profile_view view, enum diff_norm norm, const char *norm_frame,
		int *missing)
{
	memset(d, 0, sizeof(*d));
	profile__init(&d->u);
	d->view = view;
	d->norm = norm;
	d->norm_frame = norm_frame;
	d->total[DIFF_OLD] = profile__total(old, view);
	d->total[DIFF_NEW] = profile__total(new, view);
	diff__add_side(d, old, DIFF_OLD);
	diff__add_side(d, new, DIFF_NEW);
	d->scale = 1;
	switch (norm) {
	case DIFF_NORM_TOTAL:
		if (d->total[DIFF_OLD] > 0)
			d->scale = d->total[DIFF_NEW] / d->total[DIFF_OLD];
		break;
	case DIFF_NORM_FRAME:
		diff__frame_weight(d, norm_frame);
		for (int side = DIFF_OLD; side <= DIFF_NEW; side++)
			if (!(d->frame_w[side] > 0)) {
				if (missing)
					*missing = side;
				diff__exit(d);
				return -ENOENT;
			}
		d->scale = d->frame_w[DIFF_NEW] / d->frame_w[DIFF_OLD];
		break;
	case DIFF_NORM_NONE:
		break;
	}
	diff__tree(d);
	return 0;
}

void diff__exit(struct diff *d)
{
	profile__exit(&d->u);
	free(d->frame);
	free(d->parent);
	free(d->depth);
	free(d->w[0]);
	free(d->w[1]);
	memset(d, 0, sizeof(*d));
}

/*
 * Grown most first, shrunk most last. Not by |delta|: with each run's total
 * as the norm, a function that got slower takes its share from the others,
 * and with one other hot function both move by about the same points; the
 * one that grew is what a diff of a slower run is looked at for.
 */
static int diff_row__cmp(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	if (x->base != y->base)
		return x->base > y->base ? -1 : 1;
	return (x->frame > y->frame) - (x->frame < y->frame);
}

static int diff_row__abs_cmp(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;

	if (fabs(x->delta) != fabs(y->delta))
		return fabs(x->delta) > fabs(y->delta) ? -1 : 1;
	return diff_row__cmp(a, b);
}

static size_t diff__rows_by(const struct diff *d, enum entry_origin origin, bool children,
			    struct diff_row **rows, double totals[2]);

size_t diff__rows(const struct diff *d, enum entry_origin origin, struct diff_row **rows,
		  double totals[2])
{
	size_t nr = diff__rows_by(d, origin, false, rows, totals);

	xpu_qsort(*rows, nr, sizeof(**rows), diff_row__cmp);
	return nr;
}

size_t diff__table_rows(const struct diff *d, enum entry_origin origin, bool children,
			struct diff_row **rows, double totals[2])
{
	size_t nr = diff__rows_by(d, origin, children, rows, totals);

	xpu_qsort(*rows, nr, sizeof(**rows), diff_row__abs_cmp);
	return nr;
}

static size_t diff__rows_by(const struct diff *d, enum entry_origin origin, bool children,
			    struct diff_row **rows, double totals[2])
{
	uint32_t *row_of = xcalloc(d->u.nr_frames + 1, sizeof(*row_of));	/* frame -> row + 1 */
	struct diff_row *r = NULL;
	size_t nr = 0, cap = 0;
	double scale = d->scale, denom;

	totals[0] = totals[1] = 0;
	for (size_t i = 0; i < d->u.nr_entries; i++) {
		const struct profile_entry *e = &d->u.entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(&d->u, e->stack, &n);
		uint32_t leaf;

		if (e->origin != (uint32_t)origin)
			continue;
		totals[e->pid] += e->weight;
		if (!n)
			continue;
		for (size_t j = children ? 0 : n - 1; j < n; j++) {
			leaf = fr[j];
			if (!row_of[leaf]) {
				r = xgrow(r, &cap, nr + 1, sizeof(*r));
				r[nr] = (struct diff_row){ .frame = leaf };
				row_of[leaf] = (uint32_t)++nr;
			}
			/* once per stack: a recursive function is not counted twice */
			if (r[row_of[leaf] - 1].seen == i + 1)
				continue;
			r[row_of[leaf] - 1].seen = i + 1;
			r[row_of[leaf] - 1].w[e->pid] += e->weight;
		}
	}
	free(row_of);
	/* percentages of the new total; the old weights scaled onto it (with
	 * DIFF_NORM_TOTAL by this section's totals: each run's own share) */
	if (d->norm == DIFF_NORM_TOTAL)
		scale = totals[DIFF_OLD] > 0 ? totals[DIFF_NEW] / totals[DIFF_OLD] : 1;
	denom = totals[DIFF_NEW] > 0 ? totals[DIFF_NEW] : totals[DIFF_OLD] * scale;
	for (size_t i = 0; i < nr && denom > 0; i++) {
		r[i].base = 100 * r[i].w[DIFF_OLD] * scale / denom;
		r[i].delta = 100 * r[i].w[DIFF_NEW] / denom - r[i].base;
	}
	*rows = r;
	return nr;
}
