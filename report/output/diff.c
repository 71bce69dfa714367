// SPDX-License-Identifier: MIT
/*
 * xpu-report --diff OLD NEW: the outputs of two runs compared (the model and
 * its arithmetic: report/profile/diff.h).
 *
 *  --stdio   a table like perf diff: per kind of weight in the view (CPU
 *            samples, GPU time, ...) one section of symbols, Baseline % (the
 *            old run, normalised), Delta (percentage points), Shared Object,
 *            Symbol, sorted by the size of the change; the weights are
 *            inclusive (--children, the default: a change in how two
 *            callers split a common leaf shows on the callers) or self
 *            (--no-children, perf diff's); the header has both runs'
 *            totals and the normalisation.
 *  --folded  flamegraph.pl's differential input (difffolded.pl's format):
 *            "stack OLD NEW", the lines of each run's own --folded joined;
 *            OLD scaled by the normalisation (none: as they are, so each
 *            column sums to that run's --folded total).
 *  --svg     a differential flame graph: widths from NEW, red where a frame
 *            grew against the normalised OLD, blue where it shrank.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

static const char *diff__origin_name(unsigned origin)
{
	switch (origin) {
	case ORIGIN_CPU:	return "on-CPU samples";
	case ORIGIN_GPU:	return "GPU time";
	case ORIGIN_OFFCPU:	return "off-CPU time";
	case ORIGIN_GPU_IDLE:	return "GPU idle time";
	case ORIGIN_SYNC_WAIT:	return "time in synchronizing CUDA calls";
	case ORIGIN_GPU_MEM:	return "GPU memory (bytes)";
	}
	return "?";
}

/* "each run's total", "the weight of FRAME (...)", "none". */
static void diff__norm_str(const struct diff *d, char *buf, size_t size)
{
	switch (d->norm) {
	case DIFF_NORM_TOTAL:
		snprintf(buf, size, "each run's total (old x %.4f)", d->scale);
		break;
	case DIFF_NORM_FRAME:
		snprintf(buf, size, "the weight of %s (old %.0f, new %.0f samples: old x %.4f)",
			 d->norm_frame, d->frame_w[DIFF_OLD], d->frame_w[DIFF_NEW], d->scale);
		break;
	case DIFF_NORM_NONE:
		snprintf(buf, size, "none (the weights as they are)");
		break;
	}
}

int output__diff_table(const struct diff *d, FILE *fp, const char *old_name,
		       const char *new_name, bool children)
{
	char norm[512];

	diff__norm_str(d, norm, sizeof(norm));
	fprintf(fp, "# Baseline: %s (%.0f samples)\n# New:      %s (%.0f samples)\n"
		"# View: %s; normalised by %s\n"
		"# Rows: %s; sorted by the size of the change\n",
		old_name, d->total[DIFF_OLD], new_name, d->total[DIFF_NEW],
		profile_view__name(d->view), norm,
		children ? "each function's inclusive weight (it and what it called; "
			   "--no-children: self only)" :
			   "each function's self weight (--children: inclusive)");
	for (unsigned origin = 1; origin <= ORIGIN_MAX; origin <<= 1) {
		struct diff_row *rows;
		double totals[2];
		size_t nr;

		if (!(d->view & origin))
			continue;
		nr = diff__table_rows(d, origin, children, &rows, totals);
		if (totals[DIFF_OLD] <= 0 && totals[DIFF_NEW] <= 0) {
			free(rows);
			continue;
		}
		fprintf(fp, "#\n# %s: old %.0f, new %.0f samples\n#\n"
			"# Baseline     Delta  %-24s  Symbol\n"
			"# ........  ........  ........................  ......\n#\n",
			diff__origin_name(origin), totals[DIFF_OLD], totals[DIFF_NEW],
			"Shared Object");
		for (size_t i = 0; i < nr; i++) {
			const struct diff_row *r = &rows[i];
			const struct frame *f = profile__frame(&d->u, r->frame);
			const char *tag = f->kind == FRAME_CPU_KERNEL ? "[k]" :
					  f->kind == FRAME_CPU_USER ? "[.]" : "[g]";
			char base[16] = "";

			/* below both columns' precision: noise */
			if (fabs(r->delta) < 0.005 && r->base < 0.005)
				continue;
			if (r->w[DIFF_OLD] > 0)
				snprintf(base, sizeof(base), "%.2f%%", r->base);
			fprintf(fp, "  %8s  %+7.2f%%  %-24s  %s %s\n", base, r->delta,
				f->module[0] ? f->module : "[unknown]", tag, f->name);
		}
		free(rows);
	}
	return ferror(fp) ? -EIO : 0;
}

struct diff_line {
	char *text;
	long long n[2];
};

static int diff_line__cmp(const void *a, const void *b)
{
	return strcmp(((const struct diff_line *)a)->text, ((const struct diff_line *)b)->text);
}

/* Each run's --folded lines, into lines[] (text -> count per side). */
static int diff__folded_side(const struct profile *p, const struct folded_opts *fo, int side,
			     struct bmap *idx, struct diff_line **lines, size_t *nr, size_t *cap)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -ENOMEM;
	err = output__folded(p, mem, fo);
	if (fclose(mem) || err) {
		free(buf);
		return err ? err : -ENOMEM;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		bool found;
		void **slot;

		if (!sp)
			continue;
		*sp = '\0';
		slot = bmap__slot(idx, line, strlen(line), &found);
		if (!found) {
			*lines = xgrow(*lines, cap, *nr + 1, sizeof(**lines));
			(*lines)[*nr] = (struct diff_line){ .text = xstrdup(line) };
			*slot = (void *)(uintptr_t)++*nr;
		}
		(*lines)[(uintptr_t)*slot - 1].n[side] += strtoll(sp + 1, NULL, 10);
	}
	free(buf);
	return 0;
}

int output__diff_folded(const struct diff *d, const struct profile *old,
			const struct profile *new, FILE *fp, bool comm)
{
	struct folded_opts fo = { .view = d->view, .comm = comm };
	struct diff_line *lines = NULL;
	size_t nr = 0, cap = 0;
	struct bmap idx;
	int err;

	bmap__init(&idx);
	/* OLD's weights scaled before they are counted: scaling its integer
	 * counts would multiply their rounding (a 0.4 counted 1, x 3) */
	fo.scale = d->scale;
	err = diff__folded_side(old, &fo, DIFF_OLD, &idx, &lines, &nr, &cap);
	fo.scale = 0;
	if (!err)
		err = diff__folded_side(new, &fo, DIFF_NEW, &idx, &lines, &nr, &cap);
	bmap__exit(&idx, NULL);
	xpu_qsort(lines, nr, sizeof(*lines), diff_line__cmp);
	for (size_t i = 0; i < nr; i++) {
		if (!err)
			fprintf(fp, "%s %lld %lld\n", lines[i].text, lines[i].n[DIFF_OLD],
				lines[i].n[DIFF_NEW]);
		free(lines[i].text);
	}
	free(lines);
	return err ? err : ferror(fp) ? -EIO : 0;
}

int output__diff_svg(const struct diff *d, FILE *fp, const char *old_name, const char *new_name,
		     double freq)
{
	const struct frame **frames = xcalloc(d->nr + 1, sizeof(*frames));
	double *old_w = xcalloc(d->nr + 1, sizeof(*old_w));
	char title[1024], sub[1024], norm[512];
	int err;

	for (size_t i = 0; i < d->nr; i++) {
		frames[i] = profile__frame(&d->u, d->frame[i]);
		old_w[i] = d->w[DIFF_OLD][i] * d->scale;
	}
	diff__norm_str(d, norm, sizeof(norm));
	snprintf(title, sizeof(title), "Differential flame graph: %s vs %s (%s)", new_name,
		 old_name, profile_view__name(d->view));
	snprintf(sub, sizeof(sub), "widths: the new run; red grew, blue shrank against the "
		 "baseline normalised by %s", norm);
	err = output__svg_graph(fp, &(struct svg_graph){
		.nr = d->nr, .frame = frames, .parent = d->parent, .depth = d->depth,
		.total_w = d->w[DIFF_NEW], .old_w = old_w, .total = d->total[DIFF_NEW],
		.freq = freq, .title = title, .subtitle = sub,
	});
	free(old_w);
	free(frames);
	return err;
}

int output__diff(const struct session *old, const struct session *new,
		 const struct report_opts *o, FILE *fp)
{
	struct diff d;
	int missing = 0, err;

	err = diff__build(&d, &old->profile, &new->profile, o->view, o->diff_norm,
			  o->diff_norm_frame, &missing);
	if (err == -ENOENT)
		die(XPU_EXIT_NODATA, "--diff-norm=%s: no such frame in the %s view of %s",
		    o->diff_norm_frame, profile_view__name(o->view),
		    missing == DIFF_OLD ? o->diff_old : o->diff_new);
	if (err)
		return err;
	if (o->output == &output_folded)
		err = output__diff_folded(&d, &old->profile, &new->profile, fp, !o->no_comm);
	else if (o->output == &output_svg)
		err = output__diff_svg(&d, fp, o->diff_old, o->diff_new, new->sample_freq);
	else
		err = output__diff_table(&d, fp, o->diff_old, o->diff_new, !o->table.no_children);
	diff__exit(&d);
	return err;
}
