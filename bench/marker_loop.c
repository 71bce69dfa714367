// SPDX-License-Identifier: MIT
/*
 * marker_loop LIB N: dlopens LIB (an injection library exporting
 * xpu_cupti_marker, e.g. tests' libmarker_test.so), calls the marker N times
 * from a call chain DEPTH frames deep, and prints "NS_PER_CALL x". Used by
 * bench/marker_cost.sh to price the correlation uprobe + stack capture that
 * xpu-record adds to every CUDA launch.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*marker_fn)(uint64_t, uint32_t, uint32_t);

static volatile unsigned long sink;

/* A few frames with some stack in use, like a launch from framework code. */
__attribute__((noinline)) static void launch(marker_fn m, uint64_t i, int depth)
{
	volatile char pad[512];

	pad[0] = (char)i;
	if (depth)
		launch(m, i, depth - 1);
	else
		m(i, 211, 1);
	sink += pad[0];
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	void *h;
	marker_fn m;
	long n;

	if (argc < 3) {
		fprintf(stderr, "usage: marker_loop LIB N\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	m = h ? (marker_fn)dlsym(h, "xpu_cupti_marker") : NULL;
	if (!m) {
		fprintf(stderr, "marker_loop: %s\n", dlerror());
		return 1;
	}
	n = atol(argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		launch(m, i, 8);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("NS_PER_CALL %.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
