/* SPDX-License-Identifier: MIT */
/*
 * The interactive browser of xpu-report (ncurses). report/main.c calls
 * tui__prepare() before session__pass1() (it attaches the GPU summary
 * collector) and tui__run() after session__pass2(). Built without ncurses,
 * tui__run() says how to get it and exits XPU_EXIT_USAGE.
 */
#ifndef XPU_REPORT_TUI_TUI_H
#define XPU_REPORT_TUI_TUI_H

#include <stdbool.h>
#include "common/log.h"
#include "report/session.h"

#ifdef HAVE_NCURSES
static inline bool tui__available(void) { return true; }
void tui__prepare(struct session *s);
/* Runs until the user quits. Returns 0 or -errno. */
int tui__run(struct session *s, enum profile_view view);
#else
static inline bool tui__available(void) { return false; }
static inline void tui__prepare(struct session *s) { (void)s; }
static inline int tui__run(struct session *s, enum profile_view view)
{
	(void)s; (void)view;
	die(XPU_EXIT_USAGE, "built without ncurses: install libncurses-dev and rebuild "
	    "(or use --stdio / --folded)");
}
#endif

#endif
