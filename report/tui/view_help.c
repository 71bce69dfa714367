// SPDX-License-Identifier: MIT
/* The help screen: every key, from one table (Documentation/xpu-report-tui.md
 * lists the same keys). */
#ifdef HAVE_NCURSES
#include "common/xalloc.h"
#include "report/tui/views.h"

static const char *const help__keys[][2] = {
	{ NULL, "Call tree (main screen)" },
	{ "Up/Down j/k", "move the selection" },
	{ "PgUp/PgDn Home/End", "move by a page / to the first or last line" },
	{ "Enter", "expand or collapse the selected node" },
	{ "+ / Right", "expand the selected node" },
	{ "- / Left", "collapse it (on a collapsed node: go to its parent)" },
	{ "e", "expand the whole subtree of the selected node" },
	{ "E", "expand every node / collapse every node (toggles)" },
	{ "/", "search names as you type (Enter keeps, Esc cancels)" },
	{ "n / N", "next / previous match" },
	{ "z", "zoom into the selected node's subtree" },
	{ "Z / Esc", "zoom back out one level" },
	{ "i", "invert: top-down (callers first) / bottom-up" },
	{ "v", "next view with data: CPU+GPU, GPU, CPU, off-CPU, wall, GPU idle, sync wait" },
	{ "p / t / c", "filter by pid / tid / comm (comma list; empty clears)" },
	{ "x", "clear every filter" },
	{ "a", "annotate the selected function or kernel (disassembly)" },
	{ NULL, "" },
	{ NULL, "Every screen" },
	{ "H", "header: metadata, lost events, damage, GPU summary" },
	{ "h / ? / F1", "this help" },
	{ "/ n N", "search the text (header, help, annotate)" },
	{ "q / Esc", "back to the previous screen; quit on the main screen" },
	{ "Q", "quit from anywhere" },
	{ "^L", "redraw" },
	{ NULL, "" },
	{ NULL, "Columns: Children = weight of everything under the node, Self = stacks" },
	{ NULL, "ending there, Samples = children weight in samples (GPU time is" },
	{ NULL, "converted with the recording frequency). Tags: [.] CPU user code," },
	{ NULL, "[k] kernel, [g] GPU work (also in green when colors are on)." },
};

struct tui_view *help_view__new(struct tui *t)
{
	size_t nr = sizeof(help__keys) / sizeof(help__keys[0]);
	char **lines = xcalloc(nr, sizeof(*lines));
	int *attrs = xcalloc(nr, sizeof(*attrs));

	for (size_t i = 0; i < nr; i++) {
		if (help__keys[i][0]) {
			lines[i] = xasprintf("  %-20s %s", help__keys[i][0], help__keys[i][1]);
		} else {
			lines[i] = xstrdup(help__keys[i][1]);
			attrs[i] = help__keys[i][1][0] && i + 1 < nr && help__keys[i + 1][0] ?
				   TUI_C_SOURCE : 0;
		}
	}
	struct tui_view *v = text_view__new("Help: keys", lines, attrs, nr, -1);

	if (v)
		v->name = "help";	/* the browser opens one at a time */
	return v;
}
#endif
