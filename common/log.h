/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics. Every user-facing error is ONE line: what went wrong and how to
 * fix it, prefixed by the program name. die() exits with a distinct code from
 * exitcodes.h; error() and warn() only print.
 */
#ifndef XPU_COMMON_LOG_H
#define XPU_COMMON_LOG_H

#include <stdarg.h>
#include "exitcodes.h"

extern const char *xpu_progname;
extern int xpu_verbose;		/* -v count */
extern int xpu_quiet;		/* -q: only errors */

/* Called before exiting from die(), e.g. the TUI's endwin(). */
extern void (*xpu_die_hook)(void);

void xpu_log_init(const char *argv0);

__attribute__((format(printf, 2, 3), noreturn))
void die(int code, const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void error(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void info(const char *fmt, ...);	/* suppressed by -q */
__attribute__((format(printf, 2, 3)))
void debug(int level, const char *fmt, ...);	/* shown at -v >= level */

/* Internal invariant violated: a bug in xpu-perf, not in the input. */
#define BUG_ON(cond) do { if (cond) die(XPU_EXIT_FAILURE, "BUG: %s:%d: %s", \
					   __FILE__, __LINE__, #cond); } while (0)

#endif
