// SPDX-License-Identifier: MIT
/*
 * PyTorch-like caching-allocator traffic for tests/shell/record_gpu_blocks.sh:
 * dlopen()s a fake libc10_cuda.so (tests/workloads/fake_c10_cuda.cpp, given
 * as argv[1]), as torch does at import, waits up to WAIT_MS (argv[3],
 * default 10000; 0: no wait) for xpu-record's allocator probes to be in,
 * allocates and frees a warm-up block of 512 bytes (printed "warmup PTR":
 * the uprobe fallback learns malloc's return site from it) and waits for
 * the probes again, asks for 2 TiB (out of memory: printed "oom caught"
 * when the allocator's exception reached its catch), then runs ROUNDS
 * (argv[2]) rounds of blocks from named functions, each with a size of
 * its own:
 *   alloc_weights()       1 block of 1 MiB on device 0, kept to the end (a leak)
 *   alloc_activations()   3 blocks of 256 KiB on device 1, stream 0x5000,
 *                         freed by free_activations() at the round's end
 *   alloc_temp()          1 block of 64 KiB + 8, freed at once
 * and prints "malloc FUNCTION SIZE PTR" and "free PTR" for each, then
 * "alloc_blocks: done probed=0|1 ns_per_block=N" (the rounds' time per
 * malloc or free, printing included: the probes' cost, bench/).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *(*c10_alloc)(size_t size, int device, void *stream);
static void (*c10_free)(void *ptr);
static int (*c10_probed)(void);

#define WEIGHT_SIZE	(1u << 20)
#define ACT_SIZE	(256u << 10)
#define TEMP_SIZE	((64u << 10) + 8)

static void *weights[1024];
static int nr_weights;

__attribute__((noinline)) void alloc_weights(void)
{
	void *p = c10_alloc(WEIGHT_SIZE, 0, NULL);

	printf("malloc alloc_weights %u %p\n", WEIGHT_SIZE, p);
	if (nr_weights < 1024)
		weights[nr_weights++] = p;
}

__attribute__((noinline)) void alloc_activations(void **acts)
{
	for (int i = 0; i < 3; i++) {
		acts[i] = c10_alloc(ACT_SIZE, 1, (void *)0x5000);
		printf("malloc alloc_activations %u %p\n", ACT_SIZE, acts[i]);
	}
}

__attribute__((noinline)) void free_activations(void **acts)
{
	for (int i = 0; i < 3; i++) {
		c10_free(acts[i]);
		printf("free %p\n", acts[i]);
	}
}

__attribute__((noinline)) void alloc_temp(void)
{
	void *p = c10_alloc(TEMP_SIZE, 0, NULL);

	printf("malloc alloc_temp %u %p\n", TEMP_SIZE, p);
	c10_free(p);
	printf("free %p\n", p);
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	int wait_ms = argc > 3 ? atoi(argv[3]) : 10000, probed;
	struct timespec t0, t1;
	void *lib, *acts[3];

	if (argc < 2) {
		fprintf(stderr, "usage: alloc_blocks LIBC10_CUDA [ROUNDS [WAIT_MS]]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib || !(c10_alloc = (void *(*)(size_t, int, void *))dlsym(lib, "xpu_fake_c10_alloc")) ||
	    !(c10_free = (void (*)(void *))dlsym(lib, "xpu_fake_c10_free")) ||
	    !(c10_probed = (int (*)(void))dlsym(lib, "xpu_fake_c10_probed"))) {
		fprintf(stderr, "alloc_blocks: %s\n", dlerror());
		return 1;
	}
	for (int ms = 0; ms < wait_ms && !c10_probed(); ms += 5)
		usleep(5000);
	acts[0] = c10_alloc(512, 0, NULL);
	c10_free(acts[0]);
	printf("warmup %p\n", acts[0]);
	for (int ms = 0; ms < wait_ms && !c10_probed(); ms += 5)
		usleep(5000);
	probed = c10_probed();
	if (!c10_alloc(2ULL << 40, 0, NULL))
		printf("oom caught\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < rounds; r++) {
		alloc_weights();
		alloc_activations(acts);
		alloc_temp();
		free_activations(acts);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("alloc_blocks: done probed=%d ns_per_block=%.0f\n", probed,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (rounds > 0 ? rounds * 9.0 : 1));
	return 0;
}
