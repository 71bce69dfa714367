// The device code of the fake CUPTI library's kernel "_Z11fake_kerneli"
// (tests/workloads/libfake_cupti): fake_kernel.cubin is this file built with
//   nvcc -cubin -lineinfo -arch=sm_90 -o fake_kernel.cubin fake_kernel.cu
// (tests/data/pcsamp/build.sh), so that the report maps the fake PC samples
// to these lines. Two loops on different lines: a memory-bound one and a
// compute-bound one.
__device__ float fake_buf[1 << 20];

__global__ void fake_kernel(int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0.f;

	for (int k = 0; k < n; k++)
		acc += fake_buf[(i * 33 + k * 4097) & ((1 << 20) - 1)];
	for (int k = 0; k < n; k++)
		acc = acc * 1.0001f + 0.5f;
	fake_buf[i & ((1 << 20) - 1)] = acc;
}
