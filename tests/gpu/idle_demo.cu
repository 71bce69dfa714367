// SPDX-License-Identifier: MIT
/*
 * GPU-idle and sync-wait test program for tests/gpu/idle.sh (GPU machine).
 * Each of ROUNDS iterations (IDLE_DEMO_ROUNDS, default 20):
 *
 *   launch_long     one kernel of about 10 ms (spins on %globaltimer)
 *   wait_for_gpu    cudaStreamSynchronize: the CPU waits on that kernel
 *   cpu_work        20 ms of CPU work: the GPU is idle, the thread on CPU
 *   sleep_work      30 ms nanosleep: the GPU is idle, the thread off CPU
 *
 * It measures each part with CLOCK_MONOTONIC and prints
 *   MEASURED <name> <ns>      cpu_work, sleep_work, wait_for_gpu totals
 * so the checks compare the report with what happened.
 * Build: nvcc -O2 -g -arch=sm_90 -o idle_demo idle_demo.cu
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CHECK(call) do {							\
	cudaError_t e_ = (call);						\
	if (e_ != cudaSuccess) {						\
		fprintf(stderr, "idle_demo: %s:%d: %s: %s\n", __FILE__, __LINE__,	\
			#call, cudaGetErrorString(e_));				\
		exit(1);							\
	}									\
} while (0)

__device__ unsigned long long gtimer()
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void long_kernel(unsigned long long ns)
{
	unsigned long long t = gtimer();

	while (gtimer() - t < ns)
		;
}

static unsigned long long now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static void launch_long(cudaStream_t s)
{
	long_kernel<<<1, 1, 0, s>>>(10000000ull);
	CHECK(cudaGetLastError());
}

__attribute__((noinline)) static unsigned long long wait_for_gpu(cudaStream_t s)
{
	unsigned long long t0 = now_ns();

	CHECK(cudaStreamSynchronize(s));
	return now_ns() - t0;
}

__attribute__((noinline)) static unsigned long long cpu_work(void)
{
	unsigned long long t0 = now_ns();
	volatile unsigned long x = 0;

	while (now_ns() - t0 < 20000000ull)
		for (int i = 0; i < 1000; i++)
			x += i;
	return now_ns() - t0;
}

__attribute__((noinline)) static unsigned long long sleep_work(void)
{
	unsigned long long t0 = now_ns();
	struct timespec ts = { 0, 30000000 };

	while (nanosleep(&ts, &ts))
		;
	return now_ns() - t0;
}

int main()
{
	const char *r = getenv("IDLE_DEMO_ROUNDS");
	int rounds = r ? atoi(r) : 20;
	unsigned long long cpu = 0, slp = 0, wait = 0;
	cudaStream_t s;

	CHECK(cudaStreamCreate(&s));
	long_kernel<<<1, 1, 0, s>>>(1000);	/* warm-up: module load, context */
	CHECK(cudaStreamSynchronize(s));
	for (int i = 0; i < rounds; i++) {
		launch_long(s);
		wait += wait_for_gpu(s);
		cpu += cpu_work();
		slp += sleep_work();
	}
	launch_long(s);			/* the last gap ends at a kernel */
	wait += wait_for_gpu(s);
	printf("MEASURED cpu_work %llu\nMEASURED sleep_work %llu\nMEASURED wait_for_gpu %llu\n",
	       cpu, slp, wait);
	printf("DONE\n");
	return 0;
}
