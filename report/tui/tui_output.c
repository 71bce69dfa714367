// SPDX-License-Identifier: MIT
/* The TUI as a row of the output table (report/output/output.h). Built with or
 * without ncurses; without, the row says how to get it. */
#include "report/output/header.h"
#include "report/output/output.h"
#include "report/tui/tui.h"

static const char *tui__unavailable(void)
{
	return tui__available() ? NULL : "built without ncurses: install libncurses-dev and "
					 "rebuild (or use --stdio / --folded)";
}

static int tui__output_prepare(struct session *s, const struct report_opts *o)
{
	return header__prepare(s);	/* the header screen's sections */
}

static int tui__output_run(struct session *s, const struct report_opts *o, FILE *fp)
{
	/* -g callee: perf's inverted tree is the bottom-up one */
	return tui__run(s, o->view, o->table.callgraph == CALLGRAPH_CALLEE);
}

const struct report_output output_tui = {
	.name = "tui",
	.help = "interactive call-tree browser (default when stdout is a terminal)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.lines = true,
	.unavailable = tui__unavailable,
	.prepare = tui__output_prepare,
	.run = tui__output_run,
};
