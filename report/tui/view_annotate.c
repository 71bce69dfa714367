// SPDX-License-Identifier: MIT
/* The annotate screen: report/annotate/annotate.c's lines in a text view, the
 * hottest instruction highlighted and shown first; for a GPU kernel's
 * [GPU_Kernel] or [sass] frame, report/gpu/gpu_annotate.c's (its PC samples
 * per SASS instruction and per source line). */
#ifdef HAVE_NCURSES
#include <stdlib.h>
#include "common/xalloc.h"
#include "report/annotate/annotate.h"
#include "report/gpu/gpu_annotate.h"
#include "report/tui/views.h"

static struct tui_view *annotate_view__kernel(struct tui *t, const char *frame_name)
{
	struct gpu_annotation a;
	char err[1024], *title;
	char **lines;
	int *attrs;
	struct tui_view *v;

	if (gpu_annotate__kernel(&a, t->s, frame_name, err, sizeof(err))) {
		tui__msg(t, "%s", err);
		return NULL;
	}
	lines = xcalloc(a.nr, sizeof(*lines));
	attrs = xcalloc(a.nr, sizeof(*attrs));
	for (size_t i = 0; i < a.nr; i++) {
		const struct gpu_annotate_line *l = &a.lines[i];

		lines[i] = l->kind == GPU_ANNOTATE_SOURCE ? xasprintf("  %s", l->text) :
			   xstrdup(l->text);
		if (l->kind == GPU_ANNOTATE_NOTE || l->kind == GPU_ANNOTATE_HEAD)
			attrs[i] = TUI_C_DIM;
		else if (l->kind == GPU_ANNOTATE_SOURCE)
			attrs[i] = TUI_C_SOURCE;
		else if (a.total > 0 && l->samples >= 0.05 * (double)a.total)
			attrs[i] = TUI_C_HOT;
	}
	title = xasprintf("Annotate: %s", a.title);
	v = text_view__new(title, lines, attrs, a.nr, a.total > 0 ? (long)a.hottest : -1);
	free(title);
	gpu_annotation__exit(&a);
	return v;
}

struct tui_view *annotate_view__new(struct tui *t, uint32_t frame)
{
	const struct frame *f = profile__frame(&t->s->profile, frame);

	if (f->kind == FRAME_GPU_KERNEL && gpu_annotate__is_kernel_frame(f->name))
		return annotate_view__kernel(t, f->name);

	struct annotation a;
	char err[512], buf[1024], *title;
	char **lines;
	int *attrs;
	size_t nr;
	struct tui_view *v;

	if (annotate__frame(&a, t->s, frame, err, sizeof(err))) {
		tui__msg(t, "%s", err);
		return NULL;
	}
	nr = a.nr + 1;
	lines = xcalloc(nr, sizeof(*lines));
	attrs = xcalloc(nr, sizeof(*attrs));
	lines[0] = xasprintf("%.0f samples in %zu instructions%s", a.total, a.nr_insns,
			     a.lines_off ? "; source lines off (--no-srcline)" :
			     a.has_lines ? "" : "; no DWARF line info in this file");
	attrs[0] = TUI_C_DIM;
	for (size_t i = 0; i < a.nr; i++) {
		const struct annotate_line *l = &a.lines[i];

		annotation__format(&a, i, buf, sizeof(buf));
		lines[i + 1] = xstrdup(buf);
		if (l->kind == ANNOTATE_SOURCE)
			attrs[i + 1] = TUI_C_SOURCE;
		else if (a.total > 0 && l->weight >= 0.05 * a.total)
			attrs[i + 1] = TUI_C_HOT;
	}
	title = xasprintf("Annotate: %s", a.title);
	v = text_view__new(title, lines, attrs, nr, a.total > 0 ? (long)a.hottest + 1 : -1);
	free(title);
	annotation__exit(&a);
	return v;
}
#endif
