// SPDX-License-Identifier: MIT
/* The browser: terminal life cycle (never left broken), the view stack,
 * global keys, title/status lines and the prompt. */
#ifdef HAVE_NCURSES
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ncurses.h>
#include "common/log.h"
#include "report/tui/browser.h"
#include "report/tui/tui.h"

static volatile sig_atomic_t tui__active;

/* The die hook and the signal handlers: leave curses mode before anything
 * else so the shell gets a sane terminal back. */
static void tui__endwin(void)
{
	if (tui__active) {
		tui__active = 0;
		endwin();
	}
}

static void tui__signal(int sig)
{
	tui__endwin();
	/* SA_RESETHAND restored the default action: die of the same signal */
	raise(sig);
}

static void tui__signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS,
				    SIGABRT, SIGFPE, SIGILL };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tui__signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int tui__color(struct tui *t, enum tui_color c)
{
	return t->colors ? (int)COLOR_PAIR(c) : 0;
}

/* Writes at most COLS columns of text (UTF-8 aware: continuation bytes take
 * no column), then pads the row with spaces in the same attribute. */
void tui__line(struct tui *t, int y, const char *text, int attr)
{
	int cols = 0;
	size_t bytes = 0;

	if (y < 0 || y >= LINES)
		return;
	while (text[bytes]) {
		unsigned char c = (unsigned char)text[bytes];

		if ((c & 0xc0) != 0x80) {
			if (cols == COLS)
				break;
			cols++;
		}
		bytes++;
	}
	if (attr)
		attron(attr);
	mvaddnstr(y, 0, text, (int)bytes);
	for (; cols < COLS; cols++)
		addch(' ');
	if (attr)
		attroff(attr);
}

void tui__title(struct tui *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tui__line(t, 0, buf, t->colors ? tui__color(t, TUI_C_TITLE) : (int)A_REVERSE);
}

void tui__msg(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->status, sizeof(t->status), fmt, ap);
	va_end(ap);
}

bool tui__prompt(struct tui *t, const char *prompt, char *buf, size_t size,
		 void (*on_change)(struct tui *t, const char *text, void *arg), void *arg)
{
	size_t len = strlen(buf);
	char line[512];
	int key;

	curs_set(1);
	for (;;) {
		snprintf(line, sizeof(line), "%s%s", prompt, buf);
		tui__line(t, LINES - 1, line, 0);
		move(LINES - 1, (int)(strlen(line) < (size_t)COLS ? strlen(line) : (size_t)COLS - 1));
		refresh();
		key = getch();
		if (key == '\n' || key == '\r' || key == KEY_ENTER)
			break;
		if (key == 27 || key == 7 /* ^G */) {
			curs_set(0);
			return false;
		}
		if (key == KEY_BACKSPACE || key == 127 || key == 8) {
			if (len)
				buf[--len] = '\0';
		} else if (key == 21 /* ^U */) {
			len = 0;
			buf[0] = '\0';
		} else if (key >= 32 && key < 256 && len + 1 < size) {
			buf[len++] = (char)key;
			buf[len] = '\0';
		} else {
			continue;
		}
		if (on_change) {
			on_change(t, buf, arg);
			erase();
			t->stack[t->nr_views - 1]->draw(t->stack[t->nr_views - 1], t);
		}
	}
	curs_set(0);
	return true;
}

int tui__push(struct tui *t, struct tui_view *v)
{
	int err;

	if (!v)
		return -EINVAL;
	if (t->nr_views == TUI_MAX_VIEWS) {
		tui__msg(t, "too many screens open: press q to go back first");
		v->done(v, t);
		return -ENOSPC;
	}
	err = v->open ? v->open(v, t) : 0;
	if (err) {
		v->done(v, t);
		return err;
	}
	t->stack[t->nr_views++] = v;
	return 0;
}

static void tui__pop(struct tui *t)
{
	struct tui_view *v = t->stack[--t->nr_views];

	v->done(v, t);
	if (!t->nr_views)
		t->quit = true;
}

/* Keys every screen understands; views see them first. */
static void tui__global_key(struct tui *t, int key)
{
	switch (key) {
	case 'q':
	case 27:
		tui__pop(t);
		break;
	case 'Q':
		t->quit = true;
		break;
	case 'h':
	case '?':
	case KEY_F(1):
		tui__push(t, help_view__new());
		break;
	case 'H':
		tui__push(t, header_view__new(t));
		break;
	case 12: /* ^L */
		clearok(curscr, TRUE);
		break;
	case KEY_RESIZE:
		break;
	case ERR:
		break;
	default:
		tui__msg(t, "unknown key: press h for the list of keys");
	}
}

static void tui__draw(struct tui *t)
{
	struct tui_view *v = t->stack[t->nr_views - 1];

	erase();
	v->draw(v, t);
	tui__line(t, LINES - 1, t->status[0] ? t->status : "h: help  q: back/quit",
		  t->status[0] ? (int)A_BOLD : tui__color(t, TUI_C_DIM));
	refresh();
}

static bool tui__utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}

static struct gpu_stats tui__gpu;
static bool tui__gpu_attached;

void tui__prepare(struct session *s)
{
	gpu_stats__attach(&tui__gpu, s);
	tui__gpu_attached = true;
}

int tui__run(struct session *s, enum profile_view view)
{
	struct tui t = { .s = s, .view = view };
	SCREEN *scr;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		die(XPU_EXIT_USAGE, "the TUI needs a terminal on stdin and stdout; use --stdio or "
		    "--folded for text");
	setlocale(LC_ALL, "");
	t.ascii = !tui__utf8();
	t.gpu = tui__gpu_attached ? &tui__gpu : NULL;
	set_escdelay(25);
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		die(XPU_EXIT_USAGE, "cannot start the TUI on terminal type '%s': set TERM to a "
		    "known terminal, or use --stdio", getenv("TERM") ? getenv("TERM") : "");
	tui__active = 1;
	xpu_die_hook = tui__endwin;
	tui__signals();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	t.colors = has_colors() && !getenv("NO_COLOR");
	if (t.colors) {
		start_color();
		use_default_colors();
		init_pair(TUI_C_TITLE, COLOR_WHITE, COLOR_BLUE);
		init_pair(TUI_C_GPU, COLOR_GREEN, -1);
		init_pair(TUI_C_KERNEL, COLOR_RED, -1);
		init_pair(TUI_C_HOT, COLOR_RED, -1);
		init_pair(TUI_C_SOURCE, COLOR_CYAN, -1);
		init_pair(TUI_C_DIM, COLOR_BLUE, -1);
	}
	if (tui__push(&t, tree_view__new())) {
		tui__endwin();
		delscreen(scr);
		die(XPU_EXIT_FAILURE, "cannot build the call tree: out of memory");
	}
	while (!t.quit && t.nr_views) {
		struct tui_view *v;
		int key;

		tui__draw(&t);
		key = getch();
		t.status[0] = '\0';
		v = t.stack[t.nr_views - 1];
		switch (v->request(v, &t, key)) {
		case TUI_BACK:
			tui__pop(&t);
			break;
		case TUI_UNHANDLED:
			tui__global_key(&t, key);
			break;
		case TUI_HANDLED:
			break;
		}
	}
	while (t.nr_views)
		tui__pop(&t);
	tui__endwin();
	delscreen(scr);
	xpu_die_hook = NULL;
	if (tui__gpu_attached)
		gpu_stats__exit(&tui__gpu);
	return 0;
}
#endif
