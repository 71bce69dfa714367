// SPDX-License-Identifier: MIT
/*
 * --activate (activate.h): the wall-clock instant a recording starts at,
 * parsed, and the wait for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "record/capture/activate.h"
#include "record/capture/rotate_opts.h"

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

static uint64_t activate__realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void rotate_opts__activate(struct rotate_opts *ro, const char *arg)
{
	static const double time_mult[] = { 1, 60, 3600 };
	uint64_t now = activate__realtime_ns();
	double v;

	if (arg[0] == '/') {
		uint64_t period;

		if (!rotate_opts__number(arg + 1, "smh", time_mult, &v) || v < 0.001 || v > 86400)
			usage_die("--activate %s: expected /PERIOD, e.g. /10s (the next multiple of "
				  "10 s of the wall clock)", arg);
		period = v * 1e9;
		ro->activate_ns = (now + period - 1) / period * period;
	} else if (arg[0] == '@') {
		struct tm tm = { 0 };
		const char *rest;
		char *end;

		errno = 0;
		v = strtod(arg + 1, &end);
		if (end != arg + 1 && !*end && !errno && v > 0) {
			ro->activate_ns = v * 1e9;		/* @UNIX_SECONDS */
		} else if ((rest = strptime(arg + 1, "%Y-%m-%dT%H:%M:%S", &tm)) &&
			   (!*rest || !strcmp(rest, "Z"))) {
			time_t t;

			tm.tm_isdst = -1;
			t = *rest ? timegm(&tm) : mktime(&tm);	/* Z: UTC, else local */
			if (t == (time_t)-1)
				goto bad;
			ro->activate_ns = (uint64_t)t * 1000000000ull;
		} else {
			goto bad;
		}
		if (ro->activate_ns + 1000000000ull < now)
			usage_die("--activate %s: that instant has passed", arg);
	} else {
		goto bad;
	}
	ro->activate = true;
	return;
bad:
	usage_die("--activate %s: expected @YYYY-MM-DDTHH:MM:SS[Z], @UNIX_SECONDS or /PERIOD "
		  "(e.g. /10s)", arg);
}

double activate__delay(const struct rotate_opts *ro)
{
	uint64_t now = activate__realtime_ns();

	return ro->activate && ro->activate_ns > now ? (ro->activate_ns - now) / 1e9 : 0;
}

bool activate__wait(const struct rotate_opts *ro, volatile int *stop)
{
	if (!ro->activate)
		return true;
	for (;;) {
		uint64_t now = activate__realtime_ns();
		struct timespec ts;
		uint64_t left;

		if (now >= ro->activate_ns)
			return true;
		if (stop && *stop)
			return false;
		left = ro->activate_ns - now;
		if (left > 100000000ull)
			left = 100000000ull;	/* a signal is seen within 0.1 s */
		ts.tv_sec = left / 1000000000ull;
		ts.tv_nsec = left % 1000000000ull;
		nanosleep(&ts, NULL);
	}
}
