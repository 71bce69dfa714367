/* SPDX-License-Identifier: MIT */
/*
 * inline_demo: a CPU-bound workload whose hot code is inlined, for the
 * inline-frame and source-line tests (tests/shell/e2e_inline.sh). Built -O2
 * -g like the other workloads. The time goes to
 *
 *	main -> demo_loop -> run_steps -> step (inlined) -> mix (inlined)
 *
 * step and mix are always_inline, so the binary has no code of theirs: only
 * DWARF's inlined-subroutine records name them. The lines the test expects
 * are marked with "LINE:" comments, which it reads from this file.
 *
 * Usage: inline_demo [SECONDS]	run for SECONDS of CPU time (default 2), so
 *				the test gets its samples however busy the
 *				machine is
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAIN __attribute__((noipa, used))
#define INLINE static inline __attribute__((always_inline))

volatile uint64_t sink;

INLINE uint64_t mix(uint64_t x)
{
	x ^= x << 13;	/* LINE:mix */
	x ^= x >> 7;	/* LINE:mix */
	x ^= x << 17;	/* LINE:mix */
	return x * 0x2545f4914f6cdd1dULL;	/* LINE:mix */
}

INLINE uint64_t step(uint64_t x, uint64_t i)
{
	return mix(x + i);	/* LINE:step */
}

CHAIN uint64_t run_steps(uint64_t n)
{
	uint64_t x = sink | 1;

	for (uint64_t i = 0; i < n; i++) x = step(x, i);	/* LINE:run_steps */
	sink = x;
	return x;
}

CHAIN uint64_t demo_loop(double seconds)
{
	struct timespec a, b;
	uint64_t r = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		r += run_steps(1000000);	/* LINE:demo_loop */
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
	return r;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;

	printf("inline_demo: %llu\n", (unsigned long long)demo_loop(seconds));
	return 0;
}
