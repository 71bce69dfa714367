// GPU PC sampling check (issue 35), built by tests/gpu/pc_sampling.sh with
//   nvcc -O2 -lineinfo -arch=sm_90
// One kernel, two_loops, runs a memory-bound loop (a gather over 256 MiB,
// line LOOP_MEM) and then a compute-bound one (a dependent FMA chain, line
// LOOP_CMP); mem_loop and cmp_loop run the same loops alone (the same
// inlined device functions, so the same source lines). The program times
// each alone with cudaEvents and prints
//   EVENTS mem_ms cmp_ms both_ms
// (per launch, medians of REPS): the share of two_loops' GPU time its
// memory loop should get under PC sampling is mem / (mem + cmp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

#define N_FLOATS (64u << 20)		/* 256 MiB: far past L2 */

__device__ __forceinline__ float mem_part(const float *__restrict__ b, unsigned i, int iters)
{
	float acc = 0.f;
	for (int k = 0; k < iters; k++) acc += b[(i * 2654435761u + (unsigned)k * 40503u) & (N_FLOATS - 1)]; // LOOP_MEM
	return acc;
}

__device__ __forceinline__ float cmp_part(float x, int iters)
{
	for (int k = 0; k < iters; k++) x = x * 1.000001f + 0.999999f; // LOOP_CMP
	return x;
}

__global__ void two_loops(float *a, const float *b, int mem_iters, int cmp_iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = mem_part(b, i, mem_iters);
	a[i] = cmp_part(x, cmp_iters);
}

__global__ void mem_loop(float *a, const float *b, int mem_iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	a[i] = mem_part(b, i, mem_iters);
}

__global__ void cmp_loop(float *a, const float *b, int cmp_iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	a[i] = cmp_part(b[i], cmp_iters);
}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 100;
	int mem_iters = argc > 2 ? atoi(argv[2]) : 256;
	int cmp_iters = argc > 3 ? atoi(argv[3]) : 100000;	/* ~ the memory loop's time on an H200 (4096: 0.053 vs 1.405 ms) */
	const int threads = 256, blocks = 132 * 8;
	float *a, *b;
	cudaEvent_t e0, e1;
	std::vector<float> tm, tc, tb;

	CHECK(cudaMalloc(&a, (size_t)blocks * threads * sizeof(float)));
	CHECK(cudaMalloc(&b, (size_t)N_FLOATS * sizeof(float)));
	CHECK(cudaMemset(b, 0, (size_t)N_FLOATS * sizeof(float)));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	for (int r = 0; r < reps; r++) {
		float ms;

		CHECK(cudaEventRecord(e0));
		mem_loop<<<blocks, threads>>>(a, b, mem_iters);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
		tm.push_back(ms);
		CHECK(cudaEventRecord(e0));
		cmp_loop<<<blocks, threads>>>(a, b, cmp_iters);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
		tc.push_back(ms);
		CHECK(cudaEventRecord(e0));
		two_loops<<<blocks, threads>>>(a, b, mem_iters, cmp_iters);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
		tb.push_back(ms);
	}
	CHECK(cudaDeviceSynchronize());
	printf("EVENTS %.4f %.4f %.4f\n", median(tm), median(tc), median(tb));
	return 0;
}
