/* SPDX-License-Identifier: MIT */
/*
 * The interactive browser of xpu-report (ncurses), run as the "tui" row of
 * the output table (tui_output.c) after both passes. Built without ncurses,
 * tui__run() says how to get it and exits XPU_EXIT_USAGE.
 */
#ifndef XPU_REPORT_TUI_TUI_H
#define XPU_REPORT_TUI_TUI_H

#include <stdbool.h>
#include "common/log.h"
#include "report/session/session.h"

#ifdef HAVE_NCURSES
static inline bool tui__available(void) { return true; }
/* Runs until the user quits. Returns 0 or -errno. */
int tui__run(struct session *s, enum profile_view view, bool inverted);
#else
static inline bool tui__available(void) { return false; }
static inline int tui__run(struct session *s, enum profile_view view, bool inverted)
{
	(void)s; (void)view; (void)inverted;
	die(XPU_EXIT_USAGE, "built without ncurses: install libncurses-dev and rebuild "
	    "(or use --stdio / --folded)");
}
#endif

#endif
