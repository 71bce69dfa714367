/* SPDX-License-Identifier: MIT */
/*
 * The call tree every TUI view (and the plain-text tree printer) reads: one
 * model, rebuilt from the profile's entries whenever the direction, the view
 * (merged / cpu / gpu) or a filter changes.
 *
 * Nodes live in flat arrays in PREORDER with children sorted by weight, so a
 * subtree is the contiguous range [i, end[i]), the first child of i is i+1
 * (when end[i] > i+1) and the next sibling of i is end[i] (when it is still
 * inside the parent's range). Search, expand-all and zoom are linear scans of
 * ranges; nothing is allocated per node.
 *
 *  top-down   roots are outermost callers (main, thread starts); children are
 *             callees. total = weight of every stack through this path,
 *             self = weight of stacks ending here.
 *  bottom-up  roots are leaf functions; children are their callers.
 *             total = weight of the stacks whose leaf end is this path,
 *             self = the leaf's own weight, as in perf: equal to total for a
 *             root (every stack through it ends there), 0 for its callers.
 */
#ifndef XPU_REPORT_TUI_TREE_H
#define XPU_REPORT_TUI_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"
#include "report/profile/filter.h"
#include "report/profile/profile.h"

struct tree_opts {
	enum profile_view view;
	bool inverted;			/* bottom-up */
	struct filter filter;		/* pid, tid, comm (entries have no time) */
	/* top-down only: a root frame per process or thread (--svg-by):
	 * roots maps pid (tid when roots_by_tid) to a frame id + 1 */
	const struct u64map *roots;
	bool roots_by_tid;
};

struct tree {
	const struct profile *p;
	struct tree_opts opts;

	size_t nr;			/* nodes, preorder */
	uint32_t *frame;		/* frame id */
	uint32_t *parent;		/* UINT32_MAX for roots */
	uint32_t *end;			/* subtree is [i, end[i]) */
	uint16_t *depth;
	double *total, *self;
	uint64_t *count;		/* records through this node */
	uint32_t *loc;			/* heaviest source line of the node (profile.h); 0: none */

	double view_total;		/* weight of all entries in view + filter */
	uint64_t nr_entries_used;
};

/* Builds the tree; opts are copied (the filter arrays are not: they must
 * outlive the tree). Returns 0 or -ENOMEM. */
int tree__build(struct tree *t, const struct profile *p, const struct tree_opts *opts);
void tree__exit(struct tree *t);

static inline bool tree__has_children(const struct tree *t, uint32_t i)
{
	return t->end[i] > i + 1;
}

/* Next sibling of i, or UINT32_MAX when i is the last one. */
uint32_t tree__next_sibling(const struct tree *t, uint32_t i);

/* Next node after from (wrapping, inside [lo, hi)) whose frame name holds
 * needle (case-insensitive); backwards when reverse. UINT32_MAX: none. */
uint32_t tree__search(const struct tree *t, const char *needle, uint32_t from,
		      uint32_t lo, uint32_t hi, bool reverse);

/* Line text of node i as the views show it: "  12.34%   5.67%   1234  <indent>+ name",
 * then the node's heaviest source line and module: "  file.c:42  (module)".
 * Glyphs are UTF-8 unless ascii. Returns the length. */
size_t tree__format(const struct tree *t, uint32_t i, int indent_depth, bool expanded,
		    bool ascii, char *buf, size_t size);

/* Column header matching tree__format(). */
const char *tree__header(void);

/* One-letter kind tag printed before names: '.' CPU user, 'k' kernel, 'g' GPU. */
char frame__tag(const struct frame *f);
static inline bool frame__is_gpu(const struct frame *f)
{
	return f->kind >= FRAME_GPU_KERNEL && f->kind <= FRAME_GPU_API;
}

/* The plain-text renderer: every node of [lo, hi) down to max_depth levels
 * (0: all), one line each, as tree__format() writes them. */
int tree__fprint(const struct tree *t, FILE *fp, uint32_t lo, uint32_t hi, int max_depth,
		 bool ascii);

#endif
