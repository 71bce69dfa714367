// SPDX-License-Identifier: MIT
/*
 * --svg: an interactive flame graph as one self-contained SVG document (no
 * flamegraph.pl needed), in the spirit of flamegraph.pl's output: the call
 * tree of the view (report/profile/tree.h), roots at the bottom on an "all"
 * box, each frame a box as wide as its weight, named when the box is wide
 * enough and always in its tooltip and on the details line under the graph
 * ("name (N samples, T, P%)"). Boxes narrower than SVG_MIN_WIDTH pixels are
 * left out, as flamegraph.pl does; their weight stays in their parent.
 *
 * The embedded script (svg__script) zooms on a click (the frame fills the
 * width, its ancestors stay as full-width bars, everything else hides),
 * searches with a regular expression (Ctrl-F or the Search button; matches
 * turn magenta and "Matched: P%" gives their share, nested matches counted
 * once), and honours ?s=REGEX and ?z=ID in the URL (ID: a frame's id, "f12"),
 * which it keeps up to date, so a zoomed or searched view can be linked to.
 * Frames carry the structure the script needs: id="fN" in preorder and
 * data-p, the parent's N; class "f", plus "match", "hide", "parent" as the
 * script sets them.
 *
 * Colours say what a frame is, one family each (svg__color): warm for CPU
 * code, aqua for Python (py::), blue for the kernel (_[k]), purple for the
 * CUDA API frames, green for GPU work, grey for the report's own frames
 * ([off-cpu] ..., [GPU idle devN], [nvtx] ...). Within a family the shade
 * comes from a hash of the name, so it is the same in every graph.
 *
 * The differential graph of --diff (diff.c) draws with the same code:
 * widths from the new profile, each box red where its weight grew against
 * the (normalised) old one and blue where it shrank, the deeper the more.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/utf8.h"
#include "report/output/output.h"
#include "report/profile/tree.h"

#define SVG_WIDTH_PX	1200
#define SVG_WIDTH	((double)SVG_WIDTH_PX)
#define SVG_STR_(x)	#x
#define SVG_STR(x)	SVG_STR_(x)
#define SVG_FRAME_H	16
#define SVG_PAD_TOP	58		/* title, subtitle, buttons */
#define SVG_PAD_BOTTOM	30		/* details line */
#define SVG_PAD_SIDE	10.0
#define SVG_MIN_WIDTH	0.1
#define SVG_CHAR_W	7.0		/* Verdana 12px, roughly; the script uses the same */

/*
 * Text for the document: at most max characters of s (utf8.h: a browser
 * refuses a whole SVG for one byte that is not UTF-8, so those, and the
 * code points XML 1.0 forbids, are U+FFFD; control characters are left out),
 * XML's specials escaped.
 */
static void svg__escape(FILE *fp, const char *s, size_t max)
{
	size_t len = strlen(s);
	uint32_t c;

	for (size_t i = 0, k, n = 0; i < len && n < max; i += k, n++) {
		k = utf8__next(s + i, len - i, &c);
		switch (c) {
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '&': fputs("&amp;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case UTF8_BAD: case 0xfffe: case 0xffff:
			fputs(UTF8_REPLACEMENT, fp);
			break;
		default:
			if (c >= 0x20)
				fwrite(s + i, 1, k, fp);
		}
	}
}

bool svg__is_python(const struct frame *f)
{
	/* CPython 3.12's perf-map trampolines: "py::function:file.py" */
	return f->kind == FRAME_CPU_USER && !strncmp(f->name, "py::", 4);
}

enum svg_family svg__family(const struct frame *f)
{
	/* the root of GPU work without a CPU stack (gpu__unknown_frame) is
	 * the report's own, not CPU time */
	if (f->kind == FRAME_CPU_USER && f->unknown && !strcmp(f->name, "[unknown CPU stack]"))
		return SVG_MARKER;
	switch (f->kind) {
	case FRAME_CPU_USER:	return svg__is_python(f) ? SVG_PYTHON : SVG_CPU;
	case FRAME_CPU_KERNEL:	return SVG_KERNEL;
	case FRAME_GPU_API:	return SVG_CUDA_API;
	case FRAME_MARKER:	return SVG_MARKER;
	default:		return SVG_GPU;	/* kernels, memcpy, memset, sync */
	}
}

/* A stable colour per name, in the family of its kind (hues: warm 0-45,
 * GPU 95-135, Python 165-195, kernel 205-225, CUDA API 260-290, grey). */
void svg__color(const struct frame *f, char *buf, size_t size)
{
	unsigned h = 2166136261u, a, b, c;

	for (const char *s = f->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	a = h % 40, b = (h >> 8) % 40, c = (h >> 16) % 40;
	switch (svg__family(f)) {
	case SVG_CPU:
		snprintf(buf, size, "rgb(%u,%u,%u)", 215 + a, 60 + 2 * b + c / 2, c);
		break;
	case SVG_PYTHON:
		snprintf(buf, size, "rgb(%u,%u,%u)", 40 + a / 2, 200 + b / 2, 190 + c / 2);
		break;
	case SVG_KERNEL:
		snprintf(buf, size, "rgb(%u,%u,%u)", 70 + a, 125 + b, 225 + c / 2);
		break;
	case SVG_CUDA_API:
		snprintf(buf, size, "rgb(%u,%u,%u)", 170 + a, 95 + b / 2, 220 + c / 2);
		break;
	case SVG_GPU:
		snprintf(buf, size, "rgb(%u,%u,%u)", 70 + a, 185 + b, 60 + c);
		break;
	case SVG_MARKER:
		snprintf(buf, size, "rgb(%u,%u,%u)", 170 + a / 2, 170 + a / 2, 180 + a / 2);
		break;
	}
}

/* Differential colour: white at no change, red (grew) or blue (shrank) at
 * full strength for the largest change of the graph. */
static void svg__diff_color(double delta, double max_delta, char *buf, size_t size)
{
	unsigned v = max_delta > 0 ? (unsigned)(210 * fabs(delta) / max_delta + 0.5) : 0;

	if (delta > 0)
		snprintf(buf, size, "rgb(255,%u,%u)", 255 - v, 255 - v);
	else
		snprintf(buf, size, "rgb(%u,%u,255)", 255 - v, 255 - v);
}

/* "12.3 ms": a weight in samples as time at the recording's frequency. */
static void svg__time(char *buf, size_t size, double samples, double freq)
{
	double s = freq > 0 ? samples / freq : 0;

	if (s >= 1)
		snprintf(buf, size, "%.2f s", s);
	else if (s >= 1e-3)
		snprintf(buf, size, "%.2f ms", s * 1e3);
	else
		snprintf(buf, size, "%.2f us", s * 1e6);
}

static void svg__box(FILE *fp, const struct svg_graph *g, uint32_t id, uint32_t parent,
		     const char *name, const char *color, double x, double w, int y, double weight,
		     const double *delta)
{
	/* characters, not bytes: the script counts the same (fit()), and a
	 * name shortened to fit ends between two */
	size_t fit = w > 3 * SVG_CHAR_W ? (size_t)((w - 6) / SVG_CHAR_W) : 0;
	size_t len = utf8__count(name);
	char t[32];

	fprintf(fp, "<g class=\"f\" id=\"f%u\"", id);
	if (parent != UINT32_MAX)
		fprintf(fp, " data-p=\"%u\"", parent);
	fputs("><title>", fp);
	svg__escape(fp, name, len);
	if (g->bytes) {
		fprintf(fp, " (%.0f bytes, %s, %.2f%%", weight,
			gpu_mem__bytes_str((uint64_t)(weight + 0.5), t, sizeof(t)),
			g->total > 0 ? 100 * weight / g->total : 0);
	} else {
		svg__time(t, sizeof(t), weight, g->freq);
		/* GPU time and durations are fractions of samples: 2 decimals
		 * then, so the script's "Matched" sums stay right */
		fprintf(fp, " (%.*f samples, %s, %.2f%%",
			weight == (double)(uint64_t)weight ? 0 : 2, weight, t,
			g->total > 0 ? 100 * weight / g->total : 0);
	}
	if (delta)
		fprintf(fp, "; %+.2f%%", g->total > 0 ? 100 * *delta / g->total : 0);
	fprintf(fp, ")</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		x, y, w, SVG_FRAME_H - 1, color, x + 3, y + SVG_FRAME_H - 5);
	if (fit && len <= fit) {
		svg__escape(fp, name, len);
	} else if (fit > 2) {
		svg__escape(fp, name, fit - 2);
		fputs("..", fp);
	}
	fputs("</text></g>\n", fp);
}

/*
 * The script. Written for this file (not flamegraph.pl's): frames are read
 * once from the document (their box, their name and weight from the title,
 * their parent from data-p); zoom and search change attributes only.
 */
static const char svg__script[] =
"'use strict';\n"
"var W = " SVG_STR(SVG_WIDTH_PX) ", PAD = 10, CHAR_W = 7, nodes = [], total = 0;\n"
"var zoomed = -1, term = null, ic = false;\n"
"function $(id) { return document.getElementById(id); }\n"
/* k characters as the C side counts them: code points (a name's UTF-16
 * length is never less), so a shortened name never ends inside one */
"function fit(n, w) {\n"
"	var k = w > 3 * CHAR_W ? Math.floor((w - 6) / CHAR_W) : 0, c;\n"
"	if (k && n.name.length <= k) return n.name;\n"
"	c = Array.from(n.name);\n"
"	if (k && c.length <= k) return n.name;\n"
"	return k > 2 ? c.slice(0, k - 2).join('') + '..' : '';\n"
"}\n"
"function place(n, x, w) {\n"
"	n.rect.setAttribute('x', x.toFixed(2));\n"
"	n.rect.setAttribute('width', w.toFixed(2));\n"
"	n.text.setAttribute('x', (x + 3).toFixed(2));\n"
"	n.text.textContent = fit(n, w);\n"
"}\n"
"function cls(n, c, on) { n.g.classList.toggle(c, on); }\n"
"function set_url() {\n"
"	var q = [];\n"
"	if (zoomed > 0) q.push('z=f' + zoomed);\n"
"	if (term !== null) q.push('s=' + encodeURIComponent(term));\n"
"	if (ic) q.push('i=1');\n"
"	try { history.replaceState(null, '', (q.length ? '?' + q.join('&') : '?') + location.hash); }\n"
"	catch (e) { /* file: URLs may refuse; the view works all the same */ }\n"
"}\n"
"function unzoom() {\n"
"	zoomed = -1;\n"
"	nodes.forEach(function (n) { place(n, n.x, n.w); cls(n, 'hide', false); cls(n, 'parent', false); });\n"
"	$('unzoom').classList.add('hide');\n"
"	set_url();\n"
"}\n"
/* i's subtree is [i, end): preorder. Ancestors become full-width bars,
 * the subtree is stretched so i fills the width, the rest hides. */
"function zoom(i) {\n"
"	var z = nodes[i], s = (W - 2 * PAD) / z.w, j;\n"
"	if (i === 0) return unzoom();\n"
"	zoomed = i;\n"
"	nodes.forEach(function (n) { cls(n, 'hide', true); cls(n, 'parent', false); });\n"
"	for (j = z.p; j >= 0; j = nodes[j].p) {\n"
"		place(nodes[j], PAD, W - 2 * PAD);\n"
"		cls(nodes[j], 'hide', false); cls(nodes[j], 'parent', true);\n"
"	}\n"
"	for (j = i; j < z.end; j++) {\n"
"		place(nodes[j], PAD + (nodes[j].x - z.x) * s, nodes[j].w * s);\n"
"		cls(nodes[j], 'hide', false);\n"
"	}\n"
"	$('unzoom').classList.remove('hide');\n"
"	set_url();\n"
"}\n"
/* Matches are magenta; their weight counts once even when a match lies
 * inside another (a recursive function): hit[i] says i or an ancestor
 * matched. */
"function search(t) {\n"
"	var re, sum = 0, hit = [];\n"
"	try { re = new RegExp(t, ic ? 'i' : ''); } catch (e) { alert('not a regular expression: ' + t); return; }\n"
"	term = t;\n"
"	nodes.forEach(function (n, i) {\n"
"		var m = re.test(n.name), under = n.p >= 0 && hit[n.p];\n"
"		hit[i] = m || under;\n"
"		if (m && !under) sum += n.weight;\n"
"		cls(n, 'match', m);\n"
"		n.rect.setAttribute('fill', m ? 'rgb(230,0,230)' : n.fill);\n"
"	});\n"
"	$('matched').textContent = 'Matched: ' + (total > 0 ? 100 * sum / total : 0).toFixed(2) + '%';\n"
"	$('search').textContent = 'Reset Search';\n"
"	set_url();\n"
"}\n"
"function reset_search() {\n"
"	term = null;\n"
"	nodes.forEach(function (n) { cls(n, 'match', false); n.rect.setAttribute('fill', n.fill); });\n"
"	$('matched').textContent = '';\n"
"	$('search').textContent = 'Search';\n"
"	set_url();\n"
"}\n"
/* flamegraph.pl's "ic": the search ignores case while it is on */
"function toggle_ic() {\n"
"	ic = !ic;\n"
"	$('ic').classList.toggle('on', ic);\n"
"	if (term !== null) search(term); else set_url();\n"
"}\n"
"function ask() {\n"
"	var t = prompt('Search for a frame (a regular expression, e.g. ^cuda|GPU_Kernel)', term || '');\n"
"	if (t) search(t); else if (t === '') reset_search();\n"
"}\n"
"function xpu_init() {\n"
"	var gs = $('frames').getElementsByTagName('g'), stack = [], params, z, s;\n"
"	for (var i = 0; i < gs.length; i++) {\n"
"		var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
"		var t = g.getElementsByTagName('title')[0].textContent;\n"
"		var m = /^([^]*) \\(([0-9.]+) samples[^()]*\\)$/.exec(t);\n"
"		var n = { g: g, rect: r, text: g.getElementsByTagName('text')[0],\n"
"			  name: m ? m[1] : t, weight: m ? +m[2] : 0, title: t,\n"
"			  x: +r.getAttribute('x'), w: +r.getAttribute('width'),\n"
"			  fill: r.getAttribute('fill'), end: i + 1,\n"
"			  p: g.hasAttribute('data-p') ? +g.getAttribute('data-p') : -1 };\n"
"		while (stack.length && stack[stack.length - 1] !== n.p)\n"
"			nodes[stack.pop()].end = i;\n"
"		stack.push(i);\n"
"		nodes.push(n);\n"
"	}\n"
"	while (stack.length) nodes[stack.pop()].end = nodes.length;\n"
"	total = nodes.length ? nodes[0].weight : 0;\n"
"	$('frames').addEventListener('click', function (e) {\n"
"		var g = e.target.closest('g.f');\n"
"		if (g) zoom(+g.id.substr(1));\n"
"	});\n"
"	$('frames').addEventListener('mouseover', function (e) {\n"
"		var g = e.target.closest('g.f');\n"
"		if (g) $('details').textContent = nodes[+g.id.substr(1)].title;\n"
"	});\n"
"	$('frames').addEventListener('mouseout', function () { $('details').textContent = ' '; });\n"
"	$('unzoom').addEventListener('click', unzoom);\n"
"	$('search').addEventListener('click', function () { if (term !== null) reset_search(); else ask(); });\n"
"	$('ic').addEventListener('click', toggle_ic);\n"
"	window.addEventListener('keydown', function (e) {\n"
"		if ((e.ctrlKey || e.metaKey) && e.key === 'f' || e.key === 'F3') { e.preventDefault(); ask(); }\n"
"		else if (e.key === 'Escape') { reset_search(); unzoom(); }\n"
"	});\n"
"	params = new URLSearchParams(location.search);\n"
"	z = /^f([0-9]+)$/.exec(params.get('z') || '');\n"
"	s = params.get('s');\n"
"	if (params.get('i') === '1') { ic = true; $('ic').classList.add('on'); }\n"
"	if (z && +z[1] < nodes.length) zoom(+z[1]);\n"
"	if (s) search(s);\n"
"}\n";

/* The script; for weights in bytes its tooltip pattern reads "N bytes". */
static void svg__put_script(FILE *fp, bool bytes)
{
	static const char word[] = " samples[^()]";
	const char *at = bytes ? strstr(svg__script, word) : NULL;

	if (!at) {
		fputs(svg__script, fp);
		return;
	}
	fwrite(svg__script, 1, (size_t)(at - svg__script), fp);
	fputs(" bytes[^()]", fp);
	fputs(at + sizeof(word) - 1, fp);
}

static void svg__header(FILE *fp, const struct svg_graph *g, int height)
{
	fprintf(fp, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.0f %d\" "
		"onload=\"xpu_init()\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- made by xpu-report: click a frame to zoom, Ctrl-F to search; "
		"?s=REGEX&z=fN in the URL do the same, &i=1 ignores case (the ic button) -->\n"
		"<style>\n"
		"text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		".hide { display: none; }\n"
		"g.parent { opacity: 0.5; }\n"
		".button { cursor: pointer; fill: #444; }\n"
		".button:hover { text-decoration: underline; }\n"
		"#ic.on { fill: #000; font-weight: bold; }\n"
		"#title { font-size: 17px; }\n"
		"#subtitle { fill: #555; }\n"
		"</style>\n"
		"<script><![CDATA[\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	svg__put_script(fp, g->bytes);
	fputs("]]></script>\n"
	      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f0\"/>\n", fp);
	fprintf(fp, "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
		SVG_WIDTH / 2);
	svg__escape(fp, g->title, SIZE_MAX);
	fprintf(fp, "</text>\n<text id=\"subtitle\" x=\"%.0f\" y=\"44\" text-anchor=\"middle\">",
		SVG_WIDTH / 2);
	svg__escape(fp, g->subtitle, SIZE_MAX);
	fprintf(fp, "</text>\n"
		"<text id=\"unzoom\" class=\"button hide\" x=\"%.0f\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"ic\" class=\"button\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">"
		"<title>ignore case in the search</title>ic</text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\"></text>\n",
		SVG_PAD_SIDE, SVG_WIDTH - SVG_PAD_SIDE, SVG_WIDTH - SVG_PAD_SIDE - 60,
		SVG_PAD_SIDE, height - 10,
		SVG_WIDTH - SVG_PAD_SIDE, height - 10);
}

int output__svg_graph(FILE *fp, const struct svg_graph *g)
{
	double scale = g->total > 0 ? (SVG_WIDTH - 2 * SVG_PAD_SIDE) / g->total : 0;
	double *x, *cursor, root_cursor = SVG_PAD_SIDE, max_delta = 0;
	uint32_t *id, next_id = 1;
	int max_depth = 0, height, y0;
	struct frame all = { .kind = FRAME_MARKER, .name = "all" };
	char color[32], buf[4096];
	double all_delta = 0;

	for (size_t i = 0; i < g->nr; i++) {
		if (g->total_w[i] * scale >= SVG_MIN_WIDTH && g->depth[i] > max_depth)
			max_depth = g->depth[i];
		if (g->old_w && fabs(g->total_w[i] - g->old_w[i]) > max_delta)
			max_delta = fabs(g->total_w[i] - g->old_w[i]);
	}
	height = SVG_PAD_TOP + (max_depth + 2) * SVG_FRAME_H + SVG_PAD_BOTTOM;
	y0 = height - SVG_PAD_BOTTOM - SVG_FRAME_H;	/* the "all" row */
	x = calloc(g->nr + 1, sizeof(*x));
	cursor = calloc(g->nr + 1, sizeof(*cursor));	/* next child's x */
	id = calloc(g->nr + 1, sizeof(*id));		/* the box's id; 0: none */
	if (!x || !cursor || !id) {
		free(x), free(cursor), free(id);
		return -ENOMEM;
	}
	svg__header(fp, g, height);
	fputs("<g id=\"frames\">\n", fp);
	svg__color(&all, color, sizeof(color));
	if (g->old_w) {
		for (size_t i = 0; i < g->nr; i++)
			if (g->parent[i] == UINT32_MAX)
				all_delta += g->total_w[i] - g->old_w[i];
		if (fabs(all_delta) > max_delta)
			max_delta = fabs(all_delta);
		svg__diff_color(all_delta, max_delta, color, sizeof(color));
	}
	svg__box(fp, g, 0, UINT32_MAX, "all", color, SVG_PAD_SIDE, g->total * scale, y0,
		 g->total, g->old_w ? &all_delta : NULL);
	/* x of a node = x of its parent plus the totals of its earlier
	 * siblings (preorder: a running cursor per parent) */
	for (size_t i = 0; i < g->nr; i++) {
		uint32_t par = g->parent[i];
		double w = g->total_w[i] * scale, delta;

		if (par == UINT32_MAX) {
			x[i] = root_cursor;
			root_cursor += w;
		} else {
			x[i] = cursor[par];
			cursor[par] += w;
		}
		cursor[i] = x[i];
		/* a box too narrow to draw: so are its children */
		if (w < SVG_MIN_WIDTH || (par != UINT32_MAX && !id[par]))
			continue;
		id[i] = next_id++;
		folded__frame(g->frame[i], buf, sizeof(buf));
		if (g->old_w) {
			delta = g->total_w[i] - g->old_w[i];
			svg__diff_color(delta, max_delta, color, sizeof(color));
		} else {
			svg__color(g->frame[i], color, sizeof(color));
		}
		svg__box(fp, g, id[i], par == UINT32_MAX ? 0 : id[par], buf, color, x[i], w,
			 y0 - (g->depth[i] + 1) * SVG_FRAME_H, g->total_w[i],
			 g->old_w ? &delta : NULL);
	}
	fputs("</g>\n</svg>\n", fp);
	free(x), free(cursor), free(id);
	return ferror(fp) ? -EIO : 0;
}

void svg__subtitle(char *buf, size_t size, enum profile_view view, double freq, double total)
{
	const char *what;
	char t[32];

	switch (view) {
	case VIEW_CPU:		what = "on-CPU samples"; break;
	case VIEW_GPU:		what = "GPU time, scaled to samples"; break;
	case VIEW_MERGED:	what = "CPU samples + GPU time scaled to samples"; break;
	case VIEW_OFFCPU:	what = "off-CPU time, scaled to samples"; break;
	case VIEW_WALL:		what = "on-CPU samples + off-CPU time scaled to samples"; break;
	case VIEW_GPU_IDLE:	what = "GPU idle time, scaled to samples, under what the "
				       "launching threads did"; break;
	case VIEW_SYNC_WAIT:	what = "time in synchronizing CUDA calls, scaled to samples"; break;
	case VIEW_GPU_MEM:
		snprintf(buf, size, "GPU memory in bytes, under the stacks that allocated it: "
			 "%s in all", gpu_mem__bytes_str((uint64_t)(total + 0.5), t, sizeof(t)));
		return;
	default:		what = "samples"; break;
	}
	svg__time(t, sizeof(t), total, freq);
	snprintf(buf, size, "%s: 1 sample = 1/%.0f s; %.0f samples = %s", what, freq, total, t);
}

/* The default view names what the profile holds: CPU, GPU or both. */
static enum profile_view svg__held(const struct profile *p, enum profile_view view)
{
	uint32_t held = 0;

	if (view != VIEW_MERGED)
		return view;
	for (size_t i = 0; i < p->nr_entries; i++)
		if (p->entries[i].weight > 0)
			held |= p->entries[i].origin & VIEW_MERGED;
	return held == ORIGIN_CPU ? VIEW_CPU : held == ORIGIN_GPU ? VIEW_GPU : view;
}

static const char *svg__view_name(enum profile_view view)
{
	switch (view) {
	case VIEW_CPU:		return "CPU";
	case VIEW_GPU:		return "GPU";
	case VIEW_MERGED:	return "CPU+GPU";
	default:		return profile_view__name(view);
	}
}

int output__svg(const struct profile *p, FILE *fp, enum profile_view view, const char *title,
		double freq)
{
	return output__svg_by(p, fp, view, title, freq, NULL, false);
}

int output__svg_by(const struct profile *p, FILE *fp, enum profile_view view, const char *title,
		   double freq, const struct u64map *roots, bool by_tid)
{
	struct tree_opts to = { .view = view, .roots = roots, .roots_by_tid = by_tid };
	enum profile_view held = svg__held(p, view);
	struct tree t;
	const struct frame **frames;
	char full[1024], sub[256];
	int err;

	if (tree__build(&t, p, &to))
		return -ENOMEM;
	frames = calloc(t.nr + 1, sizeof(*frames));
	if (!frames) {
		tree__exit(&t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t.nr; i++)
		frames[i] = profile__frame(p, t.frame[i]);
	snprintf(full, sizeof(full), "%s (%s)", title,
		 view == VIEW_MERGED ? svg__view_name(held) : profile_view__name(view));
	svg__subtitle(sub, sizeof(sub), held, freq, t.view_total);
	err = output__svg_graph(fp, &(struct svg_graph){
		.nr = t.nr, .frame = frames, .parent = t.parent, .depth = t.depth,
		.total_w = t.total, .total = t.view_total, .freq = freq,
		.title = full, .subtitle = sub,
		.bytes = view == VIEW_GPU_MEM,
	});
	free(frames);
	tree__exit(&t);
	return err;
}

/* --svg-by=process|thread: a root frame per process ("comm (pid P)") or
 * thread ("comm (tid T)"), named by the name it had last, as
 * flamegraph.pl's graphs of folded lines that start with the comm. */
static void svg__roots(struct session *s, bool by_tid, struct u64map *roots)
{
	struct profile *p = &s->profile;
	size_t nr = p->nr_entries;

	for (size_t i = 0; i < nr; i++) {
		const struct profile_entry *e = &p->entries[i];
		uint32_t id = by_tid ? e->tid : e->pid, c;
		uint64_t *slot = u64map__slot(roots, id);
		char name[256];

		if (*slot)
			continue;
		c = machine__comm(&s->machine, e->pid, by_tid ? e->tid : e->pid, UINT64_MAX);
		snprintf(name, sizeof(name), "%s (%s %u)", profile__str(p, c),
			 by_tid ? "tid" : "pid", session__pid(s, id));
		*slot = 1 + profile__intern_frame(p, FRAME_MARKER, by_tid ? "[thread]" : "[process]",
						  name, 0, false);
	}
}

static int svg__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	const char *cmd = session__meta(s, XPU_META_CMDLINE);
	struct u64map roots;
	int err;

	if (o->svg_by == SVG_BY_NONE)
		return output__svg(&s->profile, fp, o->view, cmd ? cmd : s->path, s->sample_freq);
	u64map__init(&roots);
	svg__roots(s, o->svg_by == SVG_BY_THREAD, &roots);
	err = output__svg_by(&s->profile, fp, o->view, cmd ? cmd : s->path, s->sample_freq,
			     &roots, o->svg_by == SVG_BY_THREAD);
	u64map__exit(&roots);
	return err;
}

const struct report_output output_svg = {
	.name = "svg",
	.help = "an interactive flame graph as SVG (click to zoom, Ctrl-F to search):\n"
		"xpu-report --svg flame.svg; no flamegraph.pl needed",
	.needs = OUTPUT_NEEDS_PROFILE,
	.takes_file = true,
	.run = svg__run,
};
