/* SPDX-License-Identifier: MIT */
/*
 * Inside the TUI: the browser owns the terminal, a stack of views and the
 * status line; each view (tree, text) is a struct of operations in its own
 * file, tig style. Views draw rows 1 .. LINES-2; row 0 is the title bar,
 * row LINES-1 the status line or a prompt.
 */
#ifndef XPU_REPORT_TUI_BROWSER_H
#define XPU_REPORT_TUI_BROWSER_H

#include <stdbool.h>
#include <stddef.h>
#include "report/session/session.h"

struct tui;

enum tui_req {
	TUI_UNHANDLED,		/* the browser tries its global keys */
	TUI_HANDLED,
	TUI_BACK,		/* pop this view */
};

struct tui_view {
	const char *name;
	int (*open)(struct tui_view *v, struct tui *t);
	void (*draw)(struct tui_view *v, struct tui *t);
	enum tui_req (*request)(struct tui_view *v, struct tui *t, int key);
	void (*done)(struct tui_view *v, struct tui *t);
	void *priv;
};

/* Color pairs (when the terminal has colors and NO_COLOR is unset). */
enum tui_color {
	TUI_C_TITLE = 1, TUI_C_GPU, TUI_C_KERNEL, TUI_C_HOT, TUI_C_SOURCE, TUI_C_DIM,
};

#define TUI_MAX_VIEWS 8

struct tui {
	struct session *s;
	enum profile_view view;		/* initial view from the command line */
	bool inverted;			/* start bottom-up (-g callee) */
	bool ascii;			/* no UTF-8 glyphs */
	bool colors;
	struct tui_view *stack[TUI_MAX_VIEWS];
	int nr_views;
	char status[256];		/* one-shot message, cleared by the next key */
	bool quit;
};

/* Pushes an opened view; on open failure the view is freed by its done(). */
int tui__push(struct tui *t, struct tui_view *v);

/* A text line clipped to the screen width at row y, padded with attr. */
void tui__line(struct tui *t, int y, const char *text, int attr);
int tui__color(struct tui *t, enum tui_color c);
void tui__title(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tui__msg(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads a line at the bottom row after prompt. Returns false on Esc. If
 * on_change is set it is called after every edit (incremental search). */
bool tui__prompt(struct tui *t, const char *prompt, char *buf, size_t size,
		 void (*on_change)(struct tui *t, const char *text, void *arg), void *arg);

/*
 * Views register themselves in the table of views.c: the browser opens the
 * first row at start and the others on their global keys, and never names a
 * view. A view that opens another (tree -> annotate) includes views.h.
 */
struct tui_view_kind {
	const char *name;
	const int *keys;		/* global keys that open it, 0-terminated; NULL: none */
	struct tui_view *(*open)(struct tui *t);
};

extern const struct tui_view_kind *const tui_view_kinds[];	/* NULL-terminated */

#endif
