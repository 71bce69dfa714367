// SPDX-License-Identifier: MIT
/*
 * GPU test program for tests/gpu/run.sh (run on a GPU machine, not in CI).
 * Kernels spin on clock64() for a fixed number of cycles, so their durations
 * are known, and each kind of GPU work is launched from its own call path:
 *
 *   main -> path_a            spin_a, N_A launches, main thread, stream sa
 *   main -> thread -> path_b  spin_b, N_B launches, second thread, stream sb
 *   main -> path_graph        a CUDA graph of 3 spin_c nodes, N_G launches
 *   main -> path_copy         cudaMemcpyAsync HtoD and DtoH (pinned), cudaMemsetAsync
 *
 * Every unit of work is bracketed by a pair of cudaEvents on its stream; the
 * sums of those intervals are what the profile must show, printed as
 *   EXPECT <path> <frame> <count> <gpu_ns>
 * where <frame> is the folded-output GPU frame (e.g. "[GPU_Kernel]spin_a(long)").
 *
 * Build: nvcc -O2 -g -arch=sm_90 -o gpu_demo gpu_demo.cu -lpthread
 * (-Xcompiler -fno-omit-frame-pointer is not needed: xpu-record unwinds DWARF.)
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call) do {							\
	cudaError_t e_ = (call);						\
	if (e_ != cudaSuccess) {						\
		fprintf(stderr, "gpu_demo: %s:%d: %s: %s\n", __FILE__, __LINE__,	\
			#call, cudaGetErrorString(e_));				\
		exit(1);							\
	}									\
} while (0)

/* One spin kernel per path so the folded frames tell them apart. */
__global__ void spin_a(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }
__global__ void spin_b(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }
__global__ void spin_c(long cycles) { long t = clock64(); while (clock64() - t < cycles) ; }

static long opt(const char *name, long def)
{
	const char *v = getenv(name);

	return v ? strtol(v, NULL, 0) : def;
}

struct timed {
	std::vector<cudaEvent_t> start, end;

	void init(int n)
	{
		start.resize(n);
		end.resize(n);
		for (int i = 0; i < n; i++) {
			CHECK(cudaEventCreate(&start[i]));
			CHECK(cudaEventCreate(&end[i]));
		}
	}
	/* Sum of the bracketed intervals, in ns (cudaEvent resolution ~0.5 us). */
	double total_ns()
	{
		double ns = 0;

		for (size_t i = 0; i < start.size(); i++) {
			float ms;

			CHECK(cudaEventSynchronize(end[i]));
			CHECK(cudaEventElapsedTime(&ms, start[i], end[i]));
			ns += ms * 1e6;
		}
		return ns;
	}
};

static void expect(const char *path, const char *frame, size_t count, double ns)
{
	printf("EXPECT %s %s %zu %.0f\n", path, frame, count, ns);
}

__attribute__((noinline)) static void path_a(int n, long cycles)
{
	cudaStream_t s;
	timed t;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	t.init(n);
	for (int i = 0; i < n; i++) {
		CHECK(cudaEventRecord(t.start[i], s));
		spin_a<<<1, 1, 0, s>>>(cycles);
		CHECK(cudaEventRecord(t.end[i], s));
	}
	CHECK(cudaStreamSynchronize(s));
	expect("path_a", "[GPU_Kernel]spin_a(long)", n, t.total_ns());
	CHECK(cudaStreamDestroy(s));
}

__attribute__((noinline)) static void path_b(int n, long cycles)
{
	cudaStream_t s;
	timed t;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	t.init(n);
	for (int i = 0; i < n; i++) {
		CHECK(cudaEventRecord(t.start[i], s));
		spin_b<<<1, 1, 0, s>>>(cycles);
		CHECK(cudaEventRecord(t.end[i], s));
	}
	CHECK(cudaStreamSynchronize(s));
	expect("path_b", "[GPU_Kernel]spin_b(long)", n, t.total_ns());
	CHECK(cudaStreamDestroy(s));
}

__attribute__((noinline)) static void thread_b(int n, long cycles)
{
	path_b(n, cycles);
	/* Keep this frame on the stack: without it the call is a tail jump. */
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void path_graph(int n, long cycles)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	timed t;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	for (int k = 0; k < 3; k++)
		spin_c<<<1, 1, 0, s>>>(cycles);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	t.init(n);
	for (int i = 0; i < n; i++) {
		CHECK(cudaEventRecord(t.start[i], s));
		CHECK(cudaGraphLaunch(ge, s));
		CHECK(cudaEventRecord(t.end[i], s));
	}
	CHECK(cudaStreamSynchronize(s));
	/* The interval also holds the ~1 us gaps between the 3 nodes. */
	expect("path_graph", "[GPU_Kernel]spin_c(long)", 3 * (size_t)n, t.total_ns());
	CHECK(cudaGraphExecDestroy(ge));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(s));
}

/* The memsets get their own, larger buffer: a 256 MB memset takes ~0.1 ms,
 * which is below a sample at 999 Hz and close to the cudaEvent overhead. */
__attribute__((noinline)) static void path_copy(int n, size_t bytes, size_t set_bytes)
{
	cudaStream_t s;
	void *host, *dev, *big;
	timed h2d, d2h, set;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocHost(&host, bytes));	/* pinned: one DMA per copy */
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMalloc(&big, set_bytes));
	memset(host, 1, bytes);
	h2d.init(n);
	d2h.init(n);
	set.init(n);
	for (int i = 0; i < n; i++) {
		CHECK(cudaEventRecord(h2d.start[i], s));
		CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
		CHECK(cudaEventRecord(h2d.end[i], s));
		CHECK(cudaEventRecord(set.start[i], s));
		CHECK(cudaMemsetAsync(big, i & 0xff, set_bytes, s));
		CHECK(cudaEventRecord(set.end[i], s));
		CHECK(cudaEventRecord(d2h.start[i], s));
		CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
		CHECK(cudaEventRecord(d2h.end[i], s));
	}
	CHECK(cudaStreamSynchronize(s));
	expect("path_copy", "[GPU_Memcpy HtoD]", n, h2d.total_ns());
	expect("path_copy", "[GPU_Memcpy DtoH]", n, d2h.total_ns());
	expect("path_copy", "[GPU_Memset]", n, set.total_ns());
	CHECK(cudaFree(dev));
	CHECK(cudaFree(big));
	CHECK(cudaFreeHost(host));
	CHECK(cudaStreamDestroy(s));
}

int main(void)
{
	/* ~1 s of GPU time per kernel path at ~2 GHz: enough samples at -F 999
	 * for the 5% check to measure attribution, not rounding. */
	long cycles = opt("GPU_DEMO_CYCLES", 2000000);	/* ~1 ms per kernel */
	int n_a = (int)opt("GPU_DEMO_N_A", 1000);
	int n_b = (int)opt("GPU_DEMO_N_B", 1000);
	int n_g = (int)opt("GPU_DEMO_N_GRAPH", 300);
	int n_c = (int)opt("GPU_DEMO_N_COPY", 40);
	size_t bytes = (size_t)opt("GPU_DEMO_COPY_MB", 256) << 20;
	size_t set_bytes = (size_t)opt("GPU_DEMO_MEMSET_MB", 4096) << 20;
	cudaDeviceProp prop;

	CHECK(cudaGetDeviceProperties(&prop, 0));
	printf("DEVICE %s sm_%d%d\n", prop.name, prop.major, prop.minor);
	CHECK(cudaFree(0));	/* create the context before the paths start */

	/* The second thread runs alone: kernels of both paths overlapping on
	 * the GPU would stretch the cudaEvent times the checks compare with. */
	std::thread tb(thread_b, n_b, cycles);
	tb.join();
	path_a(n_a, cycles);
	path_graph(n_g, cycles);
	path_copy(n_c, bytes, set_bytes);
	CHECK(cudaDeviceSynchronize());
	printf("DONE\n");
	return 0;
}
