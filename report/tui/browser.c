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
#include <time.h>
#include <unistd.h>
#include <ncurses.h>
#include "common/knobs.h"
#include "common/log.h"
#include "common/utf8.h"
#include "report/tui/browser.h"
#include "report/tui/tui.h"

static volatile sig_atomic_t tui__active;

/* XPU_TUI_KEYLOG=FILE: one line per key, "key NAME MS", with the time from
 * getch() returning to the screen being refreshed, and "ready MS" (process
 * start to the first screen). bench/tui_speed.sh reads it. */
static FILE *tui__keylog;
static double tui__key_t0;	/* when the key being handled arrived */

static double tui__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Milliseconds since this process started (/proc/self/stat starttime, in
 * clock ticks since boot, against CLOCK_BOOTTIME); -1 when unknown. */
static double tui__since_start_ms(void)
{
	unsigned long long start = 0;
	struct timespec ts;
	char buf[1024], *p;
	FILE *fp = fopen("/proc/self/stat", "r");
	size_t n;

	if (!fp)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &start) != 1)
		return -1;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - start * 1e3 / sysconf(_SC_CLK_TCK);
}

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

/* Writes at most COLS columns of text, a column per character (utf8.h: the
 * cut never falls inside one), then pads the row with spaces in the same
 * attribute. Bytes that are not UTF-8 (a thread name the kernel cut) show
 * as U+FFFD ('?' without UTF-8 glyphs), not as whatever the terminal makes
 * of them. */
void tui__line(struct tui *t, int y, const char *text, int attr)
{
	size_t len = strlen(text);
	int cols = 0;
	uint32_t c;

	if (y < 0 || y >= LINES)
		return;
	if (attr)
		attron(attr);
	move(y, 0);
	for (size_t i = 0, k; i < len && cols < COLS; i += k, cols++) {
		k = utf8__next(text + i, len - i, &c);
		if (c == UTF8_BAD)
			addstr(t->ascii ? "?" : UTF8_REPLACEMENT);
		else
			addnstr(text + i, (int)k);
	}
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
	double t0_prev = 0;
	bool t0_valid = false;	/* log each edit's redraw time (incremental search) */
	int key = 0;

	curs_set(1);
	for (;;) {
		snprintf(line, sizeof(line), "%s%s", prompt, buf);
		tui__line(t, LINES - 1, line, 0);
		move(LINES - 1, (int)(strlen(line) < (size_t)COLS ? strlen(line) : (size_t)COLS - 1));
		refresh();
		if (tui__keylog && t0_valid) {
			fprintf(tui__keylog, "key prompt:%s %.2f\n", keyname(key), tui__now_ms() - t0_prev);
			fflush(tui__keylog);
		}
		key = getch();
		t0_prev = tui__now_ms();
		t0_valid = true;
		if (key == '\n' || key == '\r' || key == KEY_ENTER)
			break;
		if (key == 27 || key == 7 /* ^G */) {
			curs_set(0);
			tui__key_t0 = t0_prev;	/* time the answer, not the typing */
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
	tui__key_t0 = t0_prev;
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

/* The registered view a global key opens, or NULL. */
static const struct tui_view_kind *tui__view_for_key(int key)
{
	for (size_t i = 0; tui_view_kinds[i]; i++)
		for (const int *k = tui_view_kinds[i]->keys; k && *k; k++)
			if (*k == key)
				return tui_view_kinds[i];
	return NULL;
}

/* Keys every screen understands; views see them first. */
static void tui__global_key(struct tui *t, int key)
{
	const struct tui_view_kind *kind = tui__view_for_key(key);

	if (kind) {
		/* already on screen (H on the header screen): not a second copy */
		if (!t->nr_views || strcmp(t->stack[t->nr_views - 1]->name, kind->name))
			tui__push(t, kind->open(t));
		return;
	}
	switch (key) {
	case 'q':
	case 27:
		tui__pop(t);
		break;
	case 'Q':
		t->quit = true;
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

int tui__run(struct session *s, enum profile_view view, bool inverted)
{
	struct tui t = { .s = s, .view = view, .inverted = inverted };
	SCREEN *scr;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		die(XPU_EXIT_USAGE, "the TUI needs a terminal on stdin and stdout; use --stdio or "
		    "--folded for text");
	setlocale(LC_ALL, "");
	t.ascii = !tui__utf8();
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
	if (tui__push(&t, tui_view_kinds[0]->open(&t))) {
		tui__endwin();
		delscreen(scr);
		die(XPU_EXIT_FAILURE, "cannot build the call tree: out of memory");
	}
	if (knob__str(KNOB_TUI_KEYLOG))
		tui__keylog = fopen(knob__str(KNOB_TUI_KEYLOG), "a");
	tui__draw(&t);
	if (tui__keylog) {
		fprintf(tui__keylog, "ready %.1f\n", tui__since_start_ms());
		fflush(tui__keylog);
	}
	while (!t.quit && t.nr_views) {
		struct tui_view *v;
		int key;

		key = getch();
		tui__key_t0 = tui__now_ms();
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
		if (!t.quit && t.nr_views)
			tui__draw(&t);
		if (tui__keylog && key != ERR) {
			fprintf(tui__keylog, "key %s %.2f\n", keyname(key), tui__now_ms() - tui__key_t0);
			fflush(tui__keylog);
		}
	}
	if (tui__keylog) {
		fclose(tui__keylog);
		tui__keylog = NULL;
	}
	while (t.nr_views)
		tui__pop(&t);
	tui__endwin();
	delscreen(scr);
	xpu_die_hook = NULL;
	return 0;
}
#endif
