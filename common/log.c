// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"

const char *xpu_progname = "xpu-perf";
int xpu_verbose;
int xpu_quiet;
void (*xpu_die_hook)(void);

void xpu_log_init(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0)
		xpu_progname = slash ? slash + 1 : argv0;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	/* One fprintf per line so concurrent threads do not interleave. */
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (level)
		fprintf(stderr, "%s: %s: %s\n", xpu_progname, level, buf);
	else
		fprintf(stderr, "%s: %s\n", xpu_progname, buf);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;

	if (xpu_die_hook) {
		void (*hook)(void) = xpu_die_hook;

		xpu_die_hook = NULL;
		hook();
	}
	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
	exit(code);
}

void error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;

	if (xpu_quiet)
		return;
	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}

void debug(int level, const char *fmt, ...)
{
	va_list ap;

	if (xpu_verbose < level)
		return;
	va_start(ap, fmt);
	vlog("debug", fmt, ap);
	va_end(ap);
}
