// SPDX-License-Identifier: MIT
/* The table of views the browser opens by itself (browser.h): the first
 * row at start, the others on their global keys. */
#ifdef HAVE_NCURSES
#include <ncurses.h>
#include "report/tui/views.h"

static const struct tui_view_kind tree_view_kind = {
	.name = "tree", .open = tree_view__new,
};
static const struct tui_view_kind help_view_kind = {
	.name = "help", .keys = (const int[]){ 'h', '?', KEY_F(1), 0 }, .open = help_view__new,
};
static const struct tui_view_kind header_view_kind = {
	.name = "header", .keys = (const int[]){ 'H', 0 }, .open = header_view__new,
};

const struct tui_view_kind *const tui_view_kinds[] = {
	&tree_view_kind,	/* first: the screen the TUI opens with */
	&help_view_kind,
	&header_view_kind,
	NULL
};
#endif
