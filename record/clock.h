/* SPDX-License-Identifier: MIT */
/* The trace's clock, CLOCK_MONOTONIC, as the recorder reads it. */
#ifndef XPU_RECORD_CLOCK_H
#define XPU_RECORD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns: the clock of the trace (bpf_ktime_get_ns()). */
static inline uint64_t record__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds: deadlines of -d and of ending the tree. */
static inline double record__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
