// SPDX-License-Identifier: MIT
/*
 * The options of bounded capture (rotate_opts.h): --switch-output,
 * --switch-max-files, --flight-recorder, --trigger, and the combinations
 * that make no sense. Each mistake is a one-line usage error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "record/capture/rotate_opts.h"

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

/* A number with a unit suffix; mult[] gives each suffix's factor. */
bool rotate_opts__number(const char *arg, const char *units, const double *mult, double *v)
{
	char *end;
	const char *u;

	errno = 0;
	*v = strtod(arg, &end);
	if (end == arg || errno || !isfinite(*v) || *v <= 0)
		return false;
	if (!*end)
		return units == NULL;
	if (end[1] || !units || !(u = strchr(units, *end)))
		return false;
	*v *= mult[u - units];	/* may be inf: the callers check their bounds */
	return true;
}

/* The largest --switch-output SIZE and TIME: what the switch counts in a
 * uint64_t (bytes; ns from now on CLOCK_MONOTONIC), with room; beyond them
 * the conversion wrapped (17179869184G was 0 bytes: a switch at every tick). */
#define SWITCH_MAX_BYTES	9223372036854775808.0	/* 2^63 */
#define SWITCH_MAX_SECS		(106751.0 * 86400)	/* below 2^63 ns */

void rotate_opts__switch_output(struct rotate_opts *ro, const char *arg)
{
	/* perf's: sizes B, K, M, G (k too); times s, m (minutes), h, d */
	static const double size_mult[] = { 1, 1024, 1024, 1048576, 1073741824.0 };
	static const double time_mult[] = { 1, 60, 3600, 86400 };
	double v;

	if (!arg || !strcmp(arg, "signal")) {
		ro->switch_mode = ROTATE_SWITCH_SIGNAL;
	} else if (rotate_opts__number(arg, "BKkMG", size_mult, &v) && strpbrk(arg, "BKkMG")) {
		if (v < 65536)
			usage_die("--switch-output=%s: a size of at least 64K", arg);
		if (!(v <= SWITCH_MAX_BYTES))
			usage_die("--switch-output=%s: too large: a size of at most 8589934592G "
				  "(2^63 bytes)", arg);
		ro->switch_mode = ROTATE_SWITCH_SIZE;
		ro->switch_bytes = v;
	} else if (rotate_opts__number(arg, "smhd", time_mult, &v) && strpbrk(arg, "smhd")) {
		if (v < 0.1)
			usage_die("--switch-output=%s: a time of at least 0.1s", arg);
		if (!(v <= SWITCH_MAX_SECS))
			usage_die("--switch-output=%s: too long: a time of at most 106751d (2^63 ns)",
				  arg);
		ro->switch_mode = ROTATE_SWITCH_TIME;
		ro->switch_secs = v;
	} else {
		usage_die("--switch-output=%s: expected signal, a size (100M: B, K, M, G) or a time "
			  "(30s: s, m, h, d)", arg);
	}
}

void rotate_opts__max_files(struct rotate_opts *ro, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg || v < 1 || v > 1000000)
		usage_die("--switch-max-files=%s: expected a number of files from 1", arg);
	ro->max_files = v;
}

void rotate_opts__flight(struct rotate_opts *ro, const char *arg)
{
	static const double time_mult[] = { 1, 60, 3600 };
	double v;

	if (!rotate_opts__number(arg, NULL, NULL, &v) && !rotate_opts__number(arg, "smh", time_mult, &v))
		usage_die("--flight-recorder=%s: expected the seconds to keep (e.g. 30)", arg);
	if (v < 0.5 || v > 86400)
		usage_die("--flight-recorder=%s: from 0.5 s to a day", arg);
	ro->flight_secs = v;
	if (!ro->flight_max_bytes)
		ro->flight_max_bytes = FLIGHT_MAX_BYTES_DEFAULT;
}

void rotate_opts__trigger(struct rotate_opts *ro, const char *arg)
{
	struct rotate_trigger *t;
	const char *gt = strrchr(arg, '>');
	char *end;
	double v;

	if (ro->nr_triggers == ROTATE_TRIGGERS_MAX)
		usage_die("--trigger %s: at most %d triggers", arg, ROTATE_TRIGGERS_MAX);
	t = &ro->triggers[ro->nr_triggers];
	memset(t, 0, sizeof(*t));
	if (!strcmp(arg, "oom")) {
		t->kind = ROTATE_TRIG_OOM;
		ro->nr_triggers++;
		return;
	}
	v = gt ? strtod(gt + 1, &end) : 0;
	if (!gt || end == gt + 1 || *end || !isfinite(v) || v < 0)
		goto bad;
	if (!strncmp(arg, "nvtx:", 5)) {
		size_t len = gt - (arg + 5);

		if (!len || len >= sizeof(t->name))
			goto bad;
		memcpy(t->name, arg + 5, len);
		t->kind = ROTATE_TRIG_NVTX;
		t->ms = v;
	} else if (!strncmp(arg, "gpu-idle", 8) && arg + 8 == gt) {
		if (v >= 100)
			usage_die("--trigger %s: the idle share must be below 100 (per cent)", arg);
		t->kind = ROTATE_TRIG_GPU_IDLE;
		t->pct = v;
	} else {
		goto bad;
	}
	ro->nr_triggers++;
	return;
bad:
	usage_die("--trigger %s: expected 'nvtx:RANGE>MS' (an NVTX range named RANGE longer than "
		  "MS ms), 'gpu-idle>PCT' (a GPU idle more than PCT %% of a second) or 'oom' (an "
		  "allocation that failed for want of memory)", arg);
}

void rotate_opts__check(const struct rotate_opts *ro, bool gpu_memory)
{
	bool oom = false;

	for (int i = 0; i < ro->nr_triggers; i++)
		oom |= ro->triggers[i].kind == ROTATE_TRIG_OOM;
	if (ro->switch_mode && ro->flight_secs)
		usage_die("--switch-output and --flight-recorder: choose one (the flight recorder "
			  "writes a new file at each SIGUSR2 already)");
	if (ro->max_files && !ro->switch_mode)
		usage_die("--switch-max-files needs --switch-output");
	if (ro->nr_triggers && !ro->flight_secs && !ro->switch_mode)
		usage_die("--trigger writes the flight recorder's window or switches the output "
			  "file: add --flight-recorder=SECONDS or --switch-output");
	if (oom && !gpu_memory)
		usage_die("--trigger oom needs --gpu-memory (allocations are recorded only with it)");
	if (ro->activate && !xpu_quiet) {
		time_t t = ro->activate_ns / 1000000000ull;
		struct tm tm;
		char when[64];

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(stderr, "xpu-record: --activate: recording from %llu.%09llu (%s)\n",
			(unsigned long long)t, (unsigned long long)(ro->activate_ns % 1000000000ull),
			when);
	}
}

bool rotate_opts__files(const struct rotate_opts *ro)
{
	return ro->switch_mode || ro->flight_secs > 0;
}

bool rotate_opts__active(const struct rotate_opts *ro)
{
	return rotate_opts__files(ro) || ro->activate;
}
