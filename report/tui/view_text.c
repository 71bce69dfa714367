// SPDX-License-Identifier: MIT
/* A scrollable text screen: help, header/statistics and annotate are this
 * view over lines their producers made. */
#ifdef HAVE_NCURSES
#include <stdlib.h>
#include <string.h>
#include <ncurses.h>
#include "common/xalloc.h"
#include "report/tui/views.h"

struct text_view {
	struct tui_view v;
	char *title;
	char **lines;
	int *attrs;
	size_t nr;
	size_t top;
	long focus;			/* highlighted line, -1: none */
	char search[128];
};

static size_t text_view__height(void)
{
	return LINES > 2 ? (size_t)LINES - 2 : 1;
}

static void text_view__draw(struct tui_view *v, struct tui *t)
{
	struct text_view *tv = v->priv;
	size_t h = text_view__height();

	tui__title(t, "%s  [%zu-%zu of %zu]", tv->title, tv->nr ? tv->top + 1 : 0,
		   tv->top + h < tv->nr ? tv->top + h : tv->nr, tv->nr);
	for (size_t r = 0; r < h && tv->top + r < tv->nr; r++) {
		size_t i = tv->top + r;
		int attr = tv->attrs && tv->attrs[i] ? tui__color(t, tv->attrs[i]) : 0;

		if ((long)i == tv->focus)
			attr |= A_REVERSE;
		tui__line(t, (int)r + 1, tv->lines[i], attr);
	}
}

static void text_view__scroll(struct text_view *tv, long delta)
{
	size_t h = text_view__height();
	long max = tv->nr > h ? (long)(tv->nr - h) : 0;
	long top = (long)tv->top + delta;

	tv->top = (size_t)(top < 0 ? 0 : top > max ? max : top);
}

static bool text_view__find(struct text_view *tv, size_t from, bool reverse)
{
	for (size_t k = 1; k <= tv->nr; k++) {
		size_t i = reverse ? (from + tv->nr - k) % tv->nr : (from + k) % tv->nr;

		if (strcasestr(tv->lines[i], tv->search)) {
			tv->focus = (long)i;
			tv->top = i;
			text_view__scroll(tv, -(long)text_view__height() / 2);
			return true;
		}
	}
	return false;
}

static enum tui_req text_view__request(struct tui_view *v, struct tui *t, int key)
{
	struct text_view *tv = v->priv;
	long h = (long)text_view__height();
	size_t cur = tv->focus >= 0 ? (size_t)tv->focus : tv->top;

	switch (key) {
	case KEY_UP: case 'k':		text_view__scroll(tv, -1); break;
	case KEY_DOWN: case 'j':	text_view__scroll(tv, 1); break;
	case KEY_PPAGE: case 'b': text_view__scroll(tv, -h); break;
	case KEY_NPAGE: case ' ':	text_view__scroll(tv, h); break;
	case KEY_HOME: case 'g':	tv->top = 0; break;
	case KEY_END: case 'G':		text_view__scroll(tv, (long)tv->nr); break;
	case '/':
		if (!tui__prompt(t, "search: ", tv->search, sizeof(tv->search), NULL, NULL) ||
		    !tv->search[0])
			break;
		if (!text_view__find(tv, tv->nr ? cur + tv->nr - 1 : 0, false))
			tui__msg(t, "not found: %s", tv->search);
		break;
	case 'n': case 'N':
		if (!tv->search[0])
			tui__msg(t, "no search yet: press / first");
		else if (!text_view__find(tv, cur, key == 'N'))
			tui__msg(t, "not found: %s", tv->search);
		break;
	case 'q': case 27: case KEY_LEFT:
		return TUI_BACK;
	default:
		return TUI_UNHANDLED;
	}
	return TUI_HANDLED;
}

static void text_view__done(struct tui_view *v, struct tui *t)
{
	struct text_view *tv = v->priv;

	for (size_t i = 0; i < tv->nr; i++)
		free(tv->lines[i]);
	free(tv->lines);
	free(tv->attrs);
	free(tv->title);
	free(tv);
}

struct tui_view *text_view__new(const char *title, char **lines, int *attrs, size_t nr,
				long focus)
{
	struct text_view *tv = xzalloc(sizeof(*tv));

	tv->v = (struct tui_view){ .name = "text", .draw = text_view__draw,
				   .request = text_view__request, .done = text_view__done,
				   .priv = tv };
	tv->title = xstrdup(title);
	tv->lines = lines;
	tv->attrs = attrs;
	tv->nr = nr;
	tv->focus = focus;
	if (focus >= 0) {	/* show the focus line in the upper third */
		tv->top = (size_t)focus;
		text_view__scroll(tv, -(long)text_view__height() / 3);
	}
	return &tv->v;
}
#endif
