/* SPDX-License-Identifier: MIT */
/*
 * xpu-report --diff OLD NEW: two profiles made by the same pipeline, joined
 * by frame identity (kind, module, name: addresses move between builds),
 * the arithmetic the diff outputs print (report/output/diff.c).
 *
 *  - The union profile u holds the frames and stacks of both sides, its
 *    entries keyed with pid DIFF_OLD or DIFF_NEW (so one frame id means one
 *    symbol in both runs).
 *  - Normalisation: old weights times scale are comparable with new ones.
 *    DIFF_NORM_TOTAL: the totals of the view (scale = new / old total; per
 *    section of the table each section's own totals: percentages of each
 *    run's total); DIFF_NORM_FRAME: one frame's total weight (a main loop
 *    that ran more iterations in one run); DIFF_NORM_NONE: the weights as
 *    they are.
 *  - The call tree of the union (top-down, no comm), preorder, children by
 *    new weight: a node's old and new weights (every stack through it).
 *  - Rows: per symbol and origin (a table section: CPU, GPU, ...) the self
 *    weight of each side, as perf diff compares symbols.
 */
#ifndef XPU_REPORT_DIFF_H
#define XPU_REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "report/profile/profile.h"

enum { DIFF_OLD, DIFF_NEW };

enum diff_norm { DIFF_NORM_TOTAL, DIFF_NORM_FRAME, DIFF_NORM_NONE };

struct diff_row {
	uint32_t frame;			/* in u */
	double w[2];			/* self weight: old, new */
	double base, delta;		/* percent: old (normalised), new minus that */
	size_t seen;			/* building: the last entry index + 1 counted */
};

struct diff {
	struct profile u;
	enum profile_view view;
	enum diff_norm norm;
	const char *norm_frame;		/* DIFF_NORM_FRAME: its name */
	double total[2];		/* of the view */
	double frame_w[2];		/* DIFF_NORM_FRAME: the frame's weight */
	double scale;			/* old weight * scale ~ new weight */

	/* the union call tree, preorder */
	size_t nr;
	uint32_t *frame, *parent;	/* parent: UINT32_MAX for roots */
	uint16_t *depth;
	double *w[2];
};

/* Joins old and new in view. norm_frame: the frame for DIFF_NORM_FRAME (a
 * kernel frame may be given with its folded "_[k]" suffix). Returns 0,
 * -ENOENT when that frame has no weight in one of the sides (*missing gets
 * DIFF_OLD or DIFF_NEW), -ENOMEM. */
int diff__build(struct diff *d, const struct profile *old, const struct profile *new,
		enum profile_view view, enum diff_norm norm, const char *norm_frame,
		int *missing);
void diff__exit(struct diff *d);

/* The table section of one origin (ORIGIN_CPU, ...): one row per symbol with
 * weight in either side, sorted by delta (grown most first, shrunk most
 * last), then base.
 * *totals gets the section's old and new totals. Returns the number of
 * rows (*rows: free() it). */
size_t diff__rows(const struct diff *d, enum entry_origin origin, struct diff_row **rows,
		  double totals[2]);
/* The table's rows: as diff__rows(), but with children each symbol's
 * inclusive weight (every stack through it, once per stack: what it and
 * its callees took; two callers of one leaf whose split changed show
 * their change, which self weights put on the leaf alone), and sorted by
 * the size of the change (|delta|, then base): what changed most on top,
 * grown or shrunk. */
size_t diff__table_rows(const struct diff *d, enum entry_origin origin, bool children,
			struct diff_row **rows, double totals[2]);

#endif
