// SPDX-License-Identifier: MIT
/*
 * --svg: a flame graph as a self-contained SVG (no flamegraph.pl needed):
 * the call tree of the view (report/util/tree.h), roots at the bottom, each
 * frame a box as wide as its weight, named when the box is wide enough and
 * always in its tooltip ("name (N samples, P%)"). Colors say the kind of
 * frame: warm for CPU code, blue for the kernel, green for GPU work, grey for
 * the report's own frames ([off-cpu] ..., [GPU idle devN], [nvtx] ...).
 * Boxes narrower than SVG_MIN_WIDTH pixels are left out, as flamegraph.pl
 * does; their weight stays in their parent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/output/output.h"
#include "report/util/tree.h"

#define SVG_WIDTH	1200.0
#define SVG_FRAME_H	16
#define SVG_PAD_TOP	34
#define SVG_PAD_BOTTOM	10
#define SVG_PAD_SIDE	10.0
#define SVG_MIN_WIDTH	0.1
#define SVG_CHAR_W	7.0		/* Verdana 12px, roughly */

static void svg__escape(FILE *fp, const char *s, size_t max)
{
	for (size_t n = 0; *s && n < max; s++, n++) {
		switch (*s) {
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '&': fputs("&amp;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, fp);
		}
	}
}

/* A stable color per name, in the palette of its kind. */
static void svg__color(const struct frame *f, char *buf, size_t size)
{
	unsigned h = 2166136261u;

	for (const char *c = f->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	switch (f->kind) {
	case FRAME_CPU_KERNEL:
		snprintf(buf, size, "rgb(%u,%u,%u)", 80 + h % 50, 140 + (h >> 8) % 60, 230);
		break;
	case FRAME_MARKER:
		snprintf(buf, size, "rgb(%u,%u,%u)", 170 + h % 30, 170 + h % 30, 180 + h % 30);
		break;
	case FRAME_CPU_USER:
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130, (h >> 16) % 55);
		break;
	default:			/* GPU work and the CUDA API frames */
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + h % 50, 170 + (h >> 8) % 60, 70 + (h >> 16) % 40);
	}
}

static void svg__box(FILE *fp, const char *name, const char *color, double x, double w,
		     int y, double weight, double total)
{
	size_t fit = w > 3 * SVG_CHAR_W ? (size_t)((w - 6) / SVG_CHAR_W) : 0;
	size_t len = strlen(name);

	fputs("<g><title>", fp);
	svg__escape(fp, name, len);
	fprintf(fp, " (%.0f samples, %.2f%%)</title>", weight, total > 0 ? 100 * weight / total : 0);
	fprintf(fp, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\" ry=\"2\"/>", x, y, w, SVG_FRAME_H - 1, color);
	if (fit) {
		fprintf(fp, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + SVG_FRAME_H - 5);
		if (len <= fit) {
			svg__escape(fp, name, len);
		} else if (fit > 2) {
			svg__escape(fp, name, fit - 2);
			fputs("..", fp);
		}
		fputs("</text>", fp);
	}
	fputs("</g>\n", fp);
}

int output__svg(const struct profile *p, FILE *fp, enum profile_view view, const char *title)
{
	struct tree_opts to = { .view = view };
	struct tree t;
	double scale, *x;
	int max_depth = 0, height;
	char color[32], *name;

	if (tree__build(&t, p, &to))
		return -ENOMEM;
	scale = t.view_total > 0 ? (SVG_WIDTH - 2 * SVG_PAD_SIDE) / t.view_total : 0;
	for (size_t i = 0; i < t.nr; i++)
		if (t.total[i] * scale >= SVG_MIN_WIDTH && t.depth[i] > max_depth)
			max_depth = t.depth[i];
	height = SVG_PAD_TOP + (max_depth + 2) * SVG_FRAME_H + SVG_PAD_BOTTOM;
	fprintf(fp, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.0f %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; "
		"pointer-events: none; } rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" style=\"font-size:16px\">",
		SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH / 2);
	svg__escape(fp, title, strlen(title));
	fprintf(fp, " (%s, %.0f samples)</text>\n", profile_view__name(view), t.view_total);

	/* "all" at the bottom, then the tree: x of a node = x of its parent plus
	 * the totals of its earlier siblings (preorder: a running cursor). */
	svg__box(fp, "all", "rgb(230,200,150)", SVG_PAD_SIDE, t.view_total * scale,
		 height - SVG_PAD_BOTTOM - SVG_FRAME_H, t.view_total, t.view_total);
	x = calloc(t.nr + 1, sizeof(*x));
	if (!x) {
		tree__exit(&t);
		return -ENOMEM;
	}
	{
		double root_cursor = SVG_PAD_SIDE;
		double *cursor = calloc(t.nr + 1, sizeof(*cursor));	/* next child's x */

		if (!cursor) {
			free(x);
			tree__exit(&t);
			return -ENOMEM;
		}
		for (size_t i = 0; i < t.nr; i++) {
			const struct frame *f = profile__frame(p, t.frame[i]);
			uint32_t par = t.parent[i];
			double w = t.total[i] * scale;
			char buf[4096];

			if (par == UINT32_MAX) {
				x[i] = root_cursor;
				root_cursor += w;
			} else {
				x[i] = cursor[par];
				cursor[par] += w;
			}
			cursor[i] = x[i];
			if (w < SVG_MIN_WIDTH)
				continue;
			folded__frame(f, buf, sizeof(buf));
			name = buf;
			svg__color(f, color, sizeof(color));
			svg__box(fp, name, color, x[i], w,
				 height - SVG_PAD_BOTTOM - (t.depth[i] + 2) * SVG_FRAME_H,
				 t.total[i], t.view_total);
		}
		free(cursor);
	}
	fputs("</svg>\n", fp);
	free(x);
	tree__exit(&t);
	return ferror(fp) ? -EIO : 0;
}

static int svg__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	const char *cmd = session__meta(s, XPU_META_CMDLINE);
	char title[512];

	snprintf(title, sizeof(title), "%s", cmd ? cmd : s->path);
	return output__svg(&s->profile, fp, o->view, title);
}

const struct report_output output_svg = {
	.name = "svg",
	.help = "a flame graph as SVG (xpu-report --svg flame.svg): no flamegraph.pl needed",
	.needs = OUTPUT_NEEDS_PROFILE,
	.takes_file = true,
	.run = svg__run,
};
