/* SPDX-License-Identifier: MIT */
/*
 * diff_demo: two hot functions, one of which an argument makes slower, for
 * tests/shell/report_diff.sh (xpu-report --diff): recorded once as
 * "diff_demo 1" and once as "diff_demo 3", diff_slow does three times the
 * work in the second run while diff_steady does the same, so --diff must put
 * diff_slow on top with a positive delta.
 *
 *	main -> diff_loop -> diff_steady	ROUNDS x STEADY_UNITS of work
 *	main -> diff_loop -> diff_slow		ROUNDS x FACTOR x SLOW_UNITS
 *
 * A fixed amount of work, not a duration, so the two runs differ only in
 * diff_slow. noipa: no inlining or cloning that would rename frames.
 * Usage: diff_demo [FACTOR] [ROUNDS]   (defaults 1, 400)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define CHAIN __attribute__((noinline, used))
#else
#define CHAIN __attribute__((noipa, used))
#endif

#define STEADY_UNITS 1
#define SLOW_UNITS 1
#define UNIT_ITERS 400000ULL	/* ~0.4 ms per unit */

volatile uint64_t sink;

CHAIN void diff_steady(void)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < STEADY_UNITS * UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

CHAIN void diff_slow(long factor)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < (uint64_t)factor * SLOW_UNITS * UNIT_ITERS; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	sink = x;
}

CHAIN void diff_loop(long factor, long rounds)
{
	for (long r = 0; r < rounds; r++) {
		diff_steady();
		diff_slow(factor);
	}
}

int main(int argc, char **argv)
{
	long factor = argc > 1 ? atol(argv[1]) : 1;
	long rounds = argc > 2 ? atol(argv[2]) : 400;

	if (factor < 1 || rounds < 1) {
		fprintf(stderr, "usage: diff_demo [FACTOR >= 1] [ROUNDS >= 1]\n");
		return 2;
	}
	diff_loop(factor, rounds);
	printf("diff_demo: factor %ld, %ld rounds\n", factor, rounds);
	return 0;
}
