// Plain CUDA allocations of known sizes, each from a site of its own, for
// xpu-record --gpu-memory on the GPU machine (tests/gpu/memory_cuda.sh):
// cudaMalloc 1 MiB and 3 MiB (sync_site), a stream-ordered 64 KiB from the
// default pool (async_site), pinned host memory (pinned_site), an explicit
// pool: cudaMemPoolCreate, 256 KiB from it, cudaMemPoolTrimTo,
// cudaMemPoolDestroy (pool_site), and a cudaMalloc of 16 TiB that fails
// (oom_site: prints "OOM <ret>"). The 3 MiB stay allocated to the end.
//   nvcc -O2 -g -arch=sm_90 -o memory_cuda memory_cuda.cu
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(char *p) { p[threadIdx.x] = 1; }

static void *a, *b, *c, *h, *q;
static cudaStream_t s;

__attribute__((noinline)) static void sync_site()
{
	cudaMalloc(&a, 1 << 20);
	cudaMalloc(&b, 3 << 20);
}

__attribute__((noinline)) static void async_site()
{
	cudaMallocAsync(&c, 64 << 10, s);
	touch<<<1, 32, 0, s>>>((char *)c);
	cudaFreeAsync(c, s);
	cudaStreamSynchronize(s);
}

__attribute__((noinline)) static void pinned_site()
{
	cudaMallocHost(&h, 1 << 20);
	cudaFreeHost(h);
}

__attribute__((noinline)) static void pool_site()
{
	cudaMemPoolProps props = {};
	cudaMemPool_t pool;

	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	cudaMemPoolCreate(&pool, &props);
	cudaMallocFromPoolAsync(&q, 256 << 10, pool, s);
	cudaFreeAsync(q, s);
	cudaStreamSynchronize(s);
	cudaMemPoolTrimTo(pool, 0);
	cudaMemPoolDestroy(pool);
}

__attribute__((noinline)) static void oom_site()
{
	void *x = nullptr;
	cudaError_t r = cudaMalloc(&x, 16ull << 40);

	printf("OOM %d\n", (int)r);
	cudaGetLastError();	/* clear it */
}

int main()
{
	cudaStreamCreate(&s);
	sync_site();
	async_site();
	pinned_site();
	pool_site();
	oom_site();
	cudaFree(a);
	cudaDeviceSynchronize();
	printf("DONE\n");
	return 0;
}
