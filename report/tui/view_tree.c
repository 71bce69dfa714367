// SPDX-License-Identifier: MIT
/* The main screen: the call tree with expand/collapse, search, zoom,
 * invert, view switching and filters. Visible rows are recomputed from the
 * preorder layout (tree.h) after each change: O(visible rows), no allocation
 * per node. */
#ifdef HAVE_NCURSES
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ncurses.h>
#include "common/xalloc.h"
#include "report/tui/views.h"
#include "report/profile/tree.h"

#define NONE UINT32_MAX
#define TREE_MAX_ZOOM 64

struct tree_view {
	struct tui_view v;
	struct tree tree;
	struct tree_opts opts;
	uint8_t *expanded;		/* per node */
	uint32_t *rows;			/* visible nodes, ascending (preorder) */
	size_t nr_rows, rows_cap;
	size_t sel, top;
	uint32_t zoom[TREE_MAX_ZOOM];
	int nr_zoom;
	bool all_expanded;
	char search[128];
	uint32_t search_start;		/* selection when / was pressed */
	char filter_desc[160];
};

static size_t tree_view__height(void)
{
	return LINES > 3 ? (size_t)LINES - 3 : 1;
}

static void tree_view__range(const struct tree_view *tv, uint32_t *lo, uint32_t *hi)
{
	if (tv->nr_zoom) {
		*lo = tv->zoom[tv->nr_zoom - 1];
		*hi = tv->tree.end[*lo];
	} else {
		*lo = 0;
		*hi = (uint32_t)tv->tree.nr;
	}
}

static void tree_view__rows(struct tree_view *tv)
{
	uint32_t lo, hi, i;

	tree_view__range(tv, &lo, &hi);
	tv->nr_rows = 0;
	for (i = lo; i < hi; ) {
		tv->rows = xgrow(tv->rows, &tv->rows_cap, tv->nr_rows + 1, sizeof(*tv->rows));
		tv->rows[tv->nr_rows++] = i;
		i = tv->expanded[i] ? i + 1 : tv->tree.end[i];
	}
	if (tv->sel >= tv->nr_rows)
		tv->sel = tv->nr_rows ? tv->nr_rows - 1 : 0;
}

static uint32_t tree_view__selected(const struct tree_view *tv)
{
	return tv->nr_rows ? tv->rows[tv->sel] : NONE;
}

static void tree_view__visible(struct tree_view *tv)
{
	size_t h = tree_view__height();

	if (tv->sel < tv->top)
		tv->top = tv->sel;
	else if (tv->sel >= tv->top + h)
		tv->top = tv->sel - h + 1;
	if (tv->top + h > tv->nr_rows)
		tv->top = tv->nr_rows > h ? tv->nr_rows - h : 0;
}

/* Selects node i: opens its ancestors (inside the zoom) and finds its row. */
static void tree_view__select(struct tree_view *tv, uint32_t node)
{
	uint32_t lo, hi, p;
	size_t a = 0, b;

	tree_view__range(tv, &lo, &hi);
	for (p = tv->tree.parent[node]; p != NONE && p >= lo; p = tv->tree.parent[p])
		tv->expanded[p] = 1;
	tree_view__rows(tv);
	b = tv->nr_rows;
	while (a < b) {			/* rows are ascending */
		size_t m = (a + b) / 2;

		if (tv->rows[m] < node)
			a = m + 1;
		else
			b = m;
	}
	if (a < tv->nr_rows && tv->rows[a] == node)
		tv->sel = a;
	tree_view__visible(tv);
}

static void tree_view__describe_filter(struct tree_view *tv, const struct profile *p)
{
	const struct filter *f = &tv->opts.filter;
	char *d = tv->filter_desc, *end = d + sizeof(tv->filter_desc);

	d[0] = '\0';
	for (size_t i = 0; i < f->nr_pids && d < end; i++)
		d += snprintf(d, (size_t)(end - d), "%spid=%u", i ? "," : " | ", f->pids[i]);
	for (size_t i = 0; i < f->nr_tids && d < end; i++)
		d += snprintf(d, (size_t)(end - d), "%stid=%u", i ? "," : " | ", f->tids[i]);
	for (size_t i = 0; i < f->nr_comms && d < end; i++)
		d += snprintf(d, (size_t)(end - d), "%scomm=%s", i ? "," : " | ", f->comms[i]);
}

static int tree_view__rebuild(struct tree_view *tv, struct tui *t)
{
	int err;

	tree__exit(&tv->tree);
	free(tv->expanded);
	tv->expanded = NULL;
	err = tree__build(&tv->tree, &t->s->profile, &tv->opts);
	if (err)
		return err;
	tv->expanded = calloc(tv->tree.nr + 1, 1);
	if (!tv->expanded)
		return -ENOMEM;
	tv->nr_zoom = 0;
	tv->sel = tv->top = 0;
	tv->all_expanded = false;
	tree_view__describe_filter(tv, &t->s->profile);
	tree_view__rows(tv);
	return 0;
}

static int tree_view__open(struct tui_view *v, struct tui *t)
{
	struct tree_view *tv = v->priv;

	tv->opts.view = t->view;
	tv->opts.inverted = t->inverted;
	return tree_view__rebuild(tv, t);
}

/* The view after cur in the cycle of 'v', skipping views with nothing in them. */
static enum profile_view view__next(const struct profile *p, enum profile_view cur)
{
	static const enum profile_view cycle[] = {
		VIEW_MERGED, VIEW_GPU, VIEW_CPU, VIEW_OFFCPU, VIEW_WALL, VIEW_GPU_IDLE,
		VIEW_SYNC_WAIT, VIEW_GPU_MEM,
	};
	size_t n = sizeof(cycle) / sizeof(cycle[0]), at = 0;

	for (size_t i = 0; i < n; i++)
		if (cycle[i] == cur)
			at = i;
	for (size_t k = 1; k < n; k++) {
		enum profile_view v = cycle[(at + k) % n];

		if (profile__total(p, v) > 0 && (v != VIEW_WALL || p->total[ORIGIN_OFFCPU] > 0))
			return v;
	}
	return cur;
}

static void tree_view__draw(struct tui_view *v, struct tui *t)
{
	struct tree_view *tv = v->priv;
	const struct tree *tr = &tv->tree;
	size_t h = tree_view__height();
	int maxd = COLS > 60 ? (COLS - 48) / 2 : 2;
	char buf[1024];
	uint32_t lo, hi;

	tree_view__range(tv, &lo, &hi);
	tui__title(t, "%s | %s | %s | %.0f %s%s%s%s", t->s->path, profile_view__name(tv->opts.view),
		   tv->opts.inverted ? "bottom-up" : "top-down", tr->view_total,
		   tv->opts.view == VIEW_GPU_MEM ? "bytes" : "samples", tv->filter_desc,
		   tv->nr_zoom ? " | zoom: " : "",
		   tv->nr_zoom ? profile__frame(tr->p, tr->frame[lo])->name : "");
	snprintf(buf, sizeof(buf), " %s", tv->opts.view == VIEW_GPU_MEM ?
		 "Children     Self    Bytes  Symbol" : tree__header());
	tui__line(t, 1, buf, A_BOLD);
	if (!tr->nr) {
		tui__line(t, 3, "  nothing to show in this view with these filters: press v to "
			  "change the view, x to clear filters", 0);
		return;
	}
	for (size_t r = 0; r < h && tv->top + r < tv->nr_rows; r++) {
		uint32_t i = tv->rows[tv->top + r];
		const struct frame *f = profile__frame(tr->p, tr->frame[i]);
		int d = tr->depth[i] - tr->depth[lo], attr = 0;

		/* column 0 marks the selection also without reverse video
		 * (monochrome terminals, screen captures in the tests) */
		buf[0] = tv->top + r == tv->sel ? '>' : ' ';
		tree__format(tr, i, d > maxd ? maxd : d, tv->expanded[i], t->ascii, buf + 1,
			     sizeof(buf) - 1);
		if (frame__is_gpu(f))
			attr = tui__color(t, TUI_C_GPU);
		else if (f->kind == FRAME_CPU_KERNEL)
			attr = tui__color(t, TUI_C_KERNEL);
		if (tv->top + r == tv->sel)
			attr |= A_REVERSE;
		tui__line(t, (int)r + 2, buf, attr);
	}
}

static void tree_view__search_change(struct tui *t, const char *text, void *arg)
{
	struct tree_view *tv = arg;
	uint32_t lo, hi, from, hit;

	tree_view__range(tv, &lo, &hi);
	if (!text[0] || tv->search_start == NONE)
		return;
	/* incremental: the first match at or after where the search began */
	from = tv->search_start > lo ? tv->search_start - 1 : hi - 1;
	hit = tree__search(&tv->tree, text, from, lo, hi, false);
	if (hit != NONE)
		tree_view__select(tv, hit);
	else
		tui__msg(t, "not found: %s", text);
}

static void tree_view__find(struct tree_view *tv, struct tui *t, bool reverse)
{
	uint32_t lo, hi, cur = tree_view__selected(tv), hit;

	if (!tv->search[0]) {
		tui__msg(t, "no search yet: press / first");
		return;
	}
	tree_view__range(tv, &lo, &hi);
	hit = tree__search(&tv->tree, tv->search, cur, lo, hi, reverse);
	if (hit == NONE)
		tui__msg(t, "not found: %s", tv->search);
	else
		tree_view__select(tv, hit);
}

/* Parses "a,b,c" into ids (empty: clear). Returns false on bad input. */
static bool tree_view__parse_ids(const char *text, uint32_t **ids, size_t *nr)
{
	uint32_t *n = NULL;
	size_t nn = 0;

	if (text[0] && filter__parse_ids(&n, &nn, text))
		return false;
	free(*ids);
	*ids = n;
	*nr = nn;
	return true;
}

/* Names must be threads of this trace; the filter is unchanged otherwise. */
static bool tree_view__parse_comms(struct tree_view *tv, struct tui *t, const char *text)
{
	struct profile *p = &t->s->profile;
	struct filter parsed = { 0 };

	if (text[0] && filter__parse_comms(&parsed, text))
		return false;
	for (size_t i = 0; i < parsed.nr_comms; i++) {
		if (!bmap__find(&p->str_ids, parsed.comms[i], strlen(parsed.comms[i]))) {
			tui__msg(t, "no thread named '%s' in this trace (filter unchanged)",
				 parsed.comms[i]);
			filter__exit(&parsed);
			return false;
		}
	}
	for (size_t i = 0; i < tv->opts.filter.nr_comms; i++)
		free(tv->opts.filter.comms[i]);
	free(tv->opts.filter.comms);
	tv->opts.filter.comms = parsed.comms;
	tv->opts.filter.nr_comms = parsed.nr_comms;
	return true;
}

static void tree_view__filter(struct tree_view *tv, struct tui *t, int key)
{
	struct filter *f = &tv->opts.filter;
	char buf[256] = "";
	bool ok;

	if (!tui__prompt(t, key == 'p' ? "filter pid (P[,P], empty: all): " :
			 key == 't' ? "filter tid (T[,T], empty: all): " :
			 "filter comm (NAME[,NAME], empty: all): ", buf, sizeof(buf), NULL, NULL))
		return;
	if (key == 'p')
		ok = tree_view__parse_ids(buf, &f->pids, &f->nr_pids);
	else if (key == 't')
		ok = tree_view__parse_ids(buf, &f->tids, &f->nr_tids);
	else
		ok = tree_view__parse_comms(tv, t, buf);
	if (!ok) {
		if (key != 'c')
			tui__msg(t, "bad list '%s': expected numbers separated by commas", buf);
		return;
	}
	if (tree_view__rebuild(tv, t))
		tui__msg(t, "out of memory rebuilding the tree");
}

/* What annotate shows for node i: an inlined frame has no code of its own,
 * so the function it is inlined into along this path: the parent top-down,
 * the heaviest caller (first child) bottom-up. */
static uint32_t tree_view__function(const struct tree *tr, uint32_t i)
{
	uint32_t n = i;

	while (n != NONE && profile__frame(tr->p, tr->frame[n])->inlined)
		n = !tr->opts.inverted ? tr->parent[n] : tree__has_children(tr, n) ? n + 1 : NONE;
	return n != NONE ? n : i;
}

static enum tui_req tree_view__request(struct tui_view *v, struct tui *t, int key)
{
	struct tree_view *tv = v->priv;
	struct tree *tr = &tv->tree;
	uint32_t node = tree_view__selected(tv), lo, hi;
	size_t h = tree_view__height();

	tree_view__range(tv, &lo, &hi);
	switch (key) {
	case KEY_UP: case 'k':
		if (tv->sel)
			tv->sel--;
		break;
	case KEY_DOWN: case 'j':
		if (tv->sel + 1 < tv->nr_rows)
			tv->sel++;
		break;
	case KEY_PPAGE:
		tv->sel = tv->sel > h ? tv->sel - h : 0;
		break;
	case KEY_NPAGE: case ' ':
		tv->sel = tv->sel + h < tv->nr_rows ? tv->sel + h : (tv->nr_rows ? tv->nr_rows - 1 : 0);
		break;
	case KEY_HOME: case 'g':
		tv->sel = 0;
		break;
	case KEY_END: case 'G':
		tv->sel = tv->nr_rows ? tv->nr_rows - 1 : 0;
		break;
	case '\n': case '\r': case KEY_ENTER:
		if (node != NONE && tree__has_children(tr, node)) {
			tv->expanded[node] = !tv->expanded[node];
			tree_view__rows(tv);
		}
		break;
	case '+': case KEY_RIGHT:
		if (node != NONE && tree__has_children(tr, node)) {
			tv->expanded[node] = 1;
			tree_view__rows(tv);
		}
		break;
	case '-': case KEY_LEFT:
		if (node == NONE)
			break;
		if (tv->expanded[node] && tree__has_children(tr, node)) {
			tv->expanded[node] = 0;
			tree_view__rows(tv);
		} else if (tr->parent[node] != NONE && tr->parent[node] >= lo) {
			tree_view__select(tv, tr->parent[node]);
		}
		break;
	case 'e':
		if (node != NONE) {
			memset(tv->expanded + node, 1, tr->end[node] - node);
			tree_view__rows(tv);
		}
		break;
	case 'E':
		tv->all_expanded = !tv->all_expanded;
		memset(tv->expanded, tv->all_expanded, tr->nr);
		tree_view__rows(tv);
		if (node != NONE)
			tree_view__select(tv, tv->all_expanded ? node : lo);
		if (!tv->all_expanded)
			tv->sel = 0;
		break;
	case '/':
		tv->search_start = node;
		tv->search[0] = '\0';
		if (!tui__prompt(t, "search: ", tv->search, sizeof(tv->search),
				 tree_view__search_change, tv)) {
			tv->search[0] = '\0';
			if (node != NONE)
				tree_view__select(tv, node);
		}
		tv->search_start = NONE;
		break;
	case 'n': case 'N':
		tree_view__find(tv, t, key == 'N');
		break;
	case 'z':
		if (node == NONE || !tree__has_children(tr, node))
			tui__msg(t, "nothing to zoom into: select a node with children");
		else if (tv->nr_zoom == TREE_MAX_ZOOM)
			tui__msg(t, "zoomed in too deep: press Z to zoom out");
		else {
			tv->zoom[tv->nr_zoom++] = node;
			tv->expanded[node] = 1;
			tv->sel = tv->top = 0;
			tree_view__rows(tv);
		}
		break;
	case 'Z': case 27:
		if (!tv->nr_zoom) {
			if (key == 'Z')
				tui__msg(t, "not zoomed in");
			break;
		}
		tv->nr_zoom--;
		tree_view__select(tv, lo);
		break;
	case 'i':
		tv->opts.inverted = !tv->opts.inverted;
		if (tree_view__rebuild(tv, t))
			tui__msg(t, "out of memory rebuilding the tree");
		break;
	case 'v':
		tv->opts.view = view__next(tv->tree.p, tv->opts.view);
		if (tree_view__rebuild(tv, t))
			tui__msg(t, "out of memory rebuilding the tree");
		else
			tui__msg(t, "view: %s", profile_view__name(tv->opts.view));
		break;
	case 'p': case 't': case 'c':
		tree_view__filter(tv, t, key);
		break;
	case 'x':
		filter__exit(&tv->opts.filter);
		if (tree_view__rebuild(tv, t))
			tui__msg(t, "out of memory rebuilding the tree");
		break;
	case 'a':
		if (node != NONE)
			tui__push(t, annotate_view__new(t, tr->frame[tree_view__function(tr, node)]));
		break;
	default:
		return TUI_UNHANDLED;
	}
	tree_view__visible(tv);
	return TUI_HANDLED;
}

static void tree_view__done(struct tui_view *v, struct tui *t)
{
	struct tree_view *tv = v->priv;

	tree__exit(&tv->tree);
	free(tv->expanded);
	free(tv->rows);
	filter__exit(&tv->opts.filter);
	free(tv);
}

struct tui_view *tree_view__new(struct tui *t)
{
	struct tree_view *tv = xzalloc(sizeof(*tv));

	tv->v = (struct tui_view){ .name = "tree", .open = tree_view__open,
				   .draw = tree_view__draw, .request = tree_view__request,
				   .done = tree_view__done, .priv = tv };
	tv->search_start = NONE;
	return &tv->v;
}
#endif
