// SPDX-License-Identifier: MIT
/*
 * CUDA graph capture sites (issue 12), for tests/gpu/graph.sh. Graphs are
 * defined in one place and replayed from another:
 *
 *   main -> capture_site   stream capture: cap_a, cap_b (kernels), a memset
 *   main -> build_site     explicit construction: built_c (cudaGraphAddKernelNode)
 *   main -> clone_site     cudaGraphClone of the captured graph (clones of clones)
 *   main -> replay_site    cudaGraphLaunch of the three executables, N times
 *
 * With --graph-attribution=capture every replayed cap_* kernel and the memset
 * must sit under capture_site, built_c under build_site (the clone's kernels
 * under capture_site too: a clone's nodes lead back to the captured ones);
 * with launch all under replay_site; with both under replay_site, then
 * [graph replay], then the capture stack. Prints DONE.
 *
 * Build: nvcc -O2 -g -arch=sm_90 -o graph_demo graph_demo.cu
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call) do {							\
	cudaError_t e_ = (call);						\
	if (e_ != cudaSuccess) {						\
		fprintf(stderr, "graph_demo: %s:%d: %s: %s\n", __FILE__, __LINE__,	\
			#call, cudaGetErrorString(e_));				\
		exit(1);							\
	}									\
} while (0)

__global__ void cap_a(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }
__global__ void cap_b(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }
__global__ void built_c(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }

static long cycles = 200000;		/* ~0.1 ms at 2 GHz */

__attribute__((noinline)) static cudaGraph_t capture_site(cudaStream_t s, void *buf)
{
	cudaGraph_t g;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	cap_a<<<1, 1, 0, s>>>(cycles);
	CHECK(cudaMemsetAsync(buf, 0, 64 << 20, s));
	cap_b<<<1, 1, 0, s>>>(cycles);
	CHECK(cudaStreamEndCapture(s, &g));
	return g;
}

__attribute__((noinline)) static cudaGraph_t build_site(void)
{
	cudaGraph_t g;
	cudaGraphNode_t n;
	cudaKernelNodeParams p = {};
	void *args[] = { &cycles };

	CHECK(cudaGraphCreate(&g, 0));
	p.func = (void *)built_c;
	p.gridDim = dim3(1);
	p.blockDim = dim3(1);
	p.kernelParams = args;
	CHECK(cudaGraphAddKernelNode(&n, g, NULL, 0, &p));
	return g;
}

__attribute__((noinline)) static cudaGraph_t clone_site(cudaGraph_t g)
{
	cudaGraph_t c;

	CHECK(cudaGraphClone(&c, g));
	return c;
}

__attribute__((noinline)) static void replay_site(cudaGraphExec_t *ge, int nr, cudaStream_t s,
						  int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nr; k++)
			CHECK(cudaGraphLaunch(ge[k], s));
	CHECK(cudaStreamSynchronize(s));
}

int main(void)
{
	const char *e = getenv("GRAPH_DEMO_N");
	int n = e ? atoi(e) : 300;
	cudaStream_t s;
	cudaGraph_t g[3];
	cudaGraphExec_t ge[3];
	void *buf;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&buf, 64 << 20));
	g[0] = capture_site(s, buf);
	g[1] = build_site();
	g[2] = clone_site(g[0]);
	for (int k = 0; k < 3; k++)
		CHECK(cudaGraphInstantiate(&ge[k], g[k], 0));
	replay_site(ge, 3, s, n);
	for (int k = 0; k < 3; k++) {
		CHECK(cudaGraphExecDestroy(ge[k]));
		CHECK(cudaGraphDestroy(g[k]));
	}
	CHECK(cudaFree(buf));
	printf("DONE %d launches\n", 3 * n);
	return 0;
}
