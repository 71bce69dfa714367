// SPDX-License-Identifier: MIT
/* The progress line: see progress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "common/knobs.h"
#include "common/log.h"
#include "common/progress.h"

#define PROGRESS_REDRAW_NS	200000000ull	/* 5 redraws a second at most */

static uint64_t progress__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress__start(struct progress *p)
{
	uint64_t delay_ns = (uint64_t)knob__int(KNOB_PROGRESS_DELAY_MS) * 1000000ull;

	p->tty = isatty(STDERR_FILENO) && !knob__bool(KNOB_NO_PROGRESS);
	p->start_ns = progress__now();
	p->next_ns = p->start_ns + delay_ns;
	p->calls = 0;
	p->shown = false;
}

static void progress__draw(struct progress *p, const char *what, double frac, uint64_t count)
{
	if (frac >= 0)
		fprintf(stderr, "\r\033[K%s: %s %3.0f%%", xpu_progname, what,
			100.0 * (frac > 1 ? 1 : frac));
	else
		fprintf(stderr, "\r\033[K%s: %s %llu", xpu_progname, what,
			(unsigned long long)count);
	fflush(stderr);
	p->shown = true;
}

void progress__update(struct progress *p, const char *what, double frac, uint64_t count)
{
	uint64_t now;

	if (!p->tty || ++p->calls < 1024)
		return;
	p->calls = 0;
	now = progress__now();
	if (now < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_REDRAW_NS;
	progress__draw(p, what, frac, count);
}

void progress__step(struct progress *p, const char *what)
{
	if (!p->tty)
		return;
	fprintf(stderr, "\r\033[K%s: %s...", xpu_progname, what);
	fflush(stderr);
	p->shown = true;
}

void progress__end(struct progress *p)
{
	if (p->shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	p->shown = false;
}
