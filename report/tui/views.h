/* SPDX-License-Identifier: MIT */
/* The views of the TUI (one file each) and their constructors; views.c
 * lists the ones the browser opens by itself. */
#ifndef XPU_REPORT_TUI_VIEWS_H
#define XPU_REPORT_TUI_VIEWS_H

#include <stddef.h>
#include <stdint.h>
#include "report/tui/browser.h"

struct tui_view *tree_view__new(struct tui *t);
/* A scrollable text screen; takes ownership of lines and attrs (may be NULL:
 * attrs are color pairs, 0 = default). focus is the line first shown and
 * highlighted (-1: none). */
struct tui_view *text_view__new(const char *title, char **lines, int *attrs, size_t nr,
				long focus);
struct tui_view *help_view__new(struct tui *t);
struct tui_view *header_view__new(struct tui *t);
/* NULL with the reason in the status line when the frame cannot be annotated. */
struct tui_view *annotate_view__new(struct tui *t, uint32_t frame);

#endif
