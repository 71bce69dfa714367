// SPDX-License-Identifier: MIT
/*
 * A benchmark probe, not a capture path: what would a stack per launch cost
 * if the launching thread unwound it itself, with no kernel entry?
 * (Documentation/design-gpu.md, "What is left to reach CUPTI's floor".)
 *
 * XPU_CUPTI_MARKER=unw:LIB   at each marked call, call unw_backtrace() of
 *                            LIB (libunwind.so.8, dlopened RTLD_LOCAL)
 *                            instead of the marker: no launch stacks
 * XPU_CUPTI_MARKER=unw+:LIB  both: the marker's stacks, to compare
 * XPU_CUPTI_UNW_DUMP=FILE    every 997th walk's pcs, with its correlation id
 *
 * libunwind's unw_backtrace keeps a per-pc cache of each frame's CFA and
 * return-address rule (its "fast trace"), the shape a real in-process
 * walker would take with rules handed over by xpu-record. At exit it prints
 * the walk count and depth on stderr; bench/gpu_overhead.sh (rows unw,
 * unwx) prints the cost per launch.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unw_probe.h"

#define UNW_PROBE_FRAMES 512
#define UNW_PROBE_DUMP_EVERY 997

static int (*probe_bt)(void **, int);
static bool probe_also_marker;
static FILE *probe_dump;
static _Atomic uint64_t probe_walks, probe_frames, probe_max, probe_ns;

static inline uint64_t probe__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void unw_probe__report(void)
{
	uint64_t n = atomic_load(&probe_walks);

	fprintf(stderr, "xpu-cupti unw probe: %llu walks, %.1f frames mean, %llu max; %.0f ns a "
		"walk (timed inside, clock reads included)\n",
		(unsigned long long)n, n ? (double)atomic_load(&probe_frames) / n : 0.0,
		(unsigned long long)atomic_load(&probe_max),
		n ? (double)atomic_load(&probe_ns) / n : 0.0);
	if (probe_dump)
		fclose(probe_dump);
}

int xpu_unw_probe__init(const char *spec)
{
	const char *lib, *dump;
	void *h;

	if (!spec || strncmp(spec, "unw", 3) || !(lib = strchr(spec, ':')))
		return 0;
	h = dlopen(lib + 1, RTLD_NOW | RTLD_LOCAL);
	probe_bt = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
	if (!probe_bt)
		return -1;
	probe_also_marker = !strncmp(spec, "unw+", 4);
	dump = getenv("XPU_CUPTI_UNW_DUMP");
	if (dump && *dump)
		probe_dump = fopen(dump, "w");
	atexit(unw_probe__report);
	return 1;
}

bool xpu_unw_probe__hit(uint64_t corr)
{
	void *pcs[UNW_PROBE_FRAMES];
	uint64_t walk, max;
	int n, i;

	if (!probe_bt)
		return true;
	uint64_t t0 = probe__now();

	n = probe_bt(pcs, UNW_PROBE_FRAMES);
	atomic_fetch_add(&probe_ns, probe__now() - t0);
	if (n < 0)
		n = 0;
	walk = atomic_fetch_add(&probe_walks, 1) + 1;
	atomic_fetch_add(&probe_frames, (uint64_t)n);
	max = atomic_load(&probe_max);
	while ((uint64_t)n > max && !atomic_compare_exchange_weak(&probe_max, &max, (uint64_t)n))
		;
	if (probe_dump && walk % UNW_PROBE_DUMP_EVERY == 0) {
		fprintf(probe_dump, "corr %llu n %d:", (unsigned long long)corr, n);
		for (i = 0; i < n; i++)
			fprintf(probe_dump, " %llx", (unsigned long long)(uintptr_t)pcs[i]);
		fputc('\n', probe_dump);
	}
	return probe_also_marker;
}
