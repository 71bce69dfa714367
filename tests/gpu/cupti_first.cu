// Holds CUPTI before CUDA initializes (as Nsight or a profiler started
// early would), then launches kernels: xpu-record's library must find the
// subscriber slot taken, say so, store gpu.subscriber_conflict in the trace,
// and let the app run on with CPU profiling.
//   nvcc -O2 -arch=sm_90 -o cupti_first cupti_first.cu -lcupti
#include <cstdio>
#include <cupti.h>

__global__ void tick(int *p) { p[threadIdx.x] += 1; }

static void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

int main()
{
	CUpti_SubscriberHandle h;
	CUptiResult r = cuptiSubscribe(&h, (CUpti_CallbackFunc)on_api, nullptr);
	printf("SUBSCRIBE %d\n", (int)r);
	int *d;
	cudaMalloc(&d, 256 * sizeof(int));
	for (int i = 0; i < 1000; i++)
		tick<<<1, 256>>>(d);
	cudaDeviceSynchronize();
	cudaFree(d);
	printf("DONE\n");
	return 0;
}
