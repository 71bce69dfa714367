// SPDX-License-Identifier: MIT
/*
 * recurse_demo [SECONDS]: a recursive function whose frames repeat one
 * return address many times over, as gcc's execute_pass_list_1 does in
 * cc1 (tests/shell/e2e_recursion.sh):
 *
 *	main -> walk(12) -> walk(11) -> ... -> walk(0) -> spin
 *
 * Built like the other workloads (-O2, no frame pointers): unwinding goes
 * through .eh_frame, and each walk frame has the same pc at a higher stack
 * pointer. SECONDS (default 1) are the process's CPU time, so the test
 * gets its samples however busy the machine is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 12

static volatile uint64_t sink;

/* the CPU time this process has had */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t spin(void)
{
	uint64_t x = 1;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	return x;
}

/* Not a tail call: the result is used after the recursive call returns. */
__attribute__((noinline)) static uint64_t walk(int depth)
{
	volatile char pad[64];
	uint64_t r;

	pad[0] = (char)depth;
	r = depth ? walk(depth - 1) : spin();
	return r + pad[0];
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	uint64_t total = 0;

	/* the CPU clock is a system call: read it every 16 walks (~4 ms) */
	while (now() < end)
		for (int i = 0; i < 16; i++)
			total += walk(DEPTH);
	printf("recurse_demo: %llu\n", (unsigned long long)total);
	return 0;
}
