// Several kernels (a template's two instances among them) and a device
// function in one module: the cubin reducer's test data
// (tests/unit/test_pcsamp_cubin.c, tests/fuzz/corpus/cubin). multi_kernel.cubin
// is this file built with
//   nvcc -cubin -lineinfo -arch=sm_90 -o multi_kernel.cubin multi_kernel.cu
// (tests/data/pcsamp/build.sh).
__device__ float mk_buf[1 << 16];

__device__ __noinline__ float mk_helper(float x, int k)
{
	for (int i = 0; i < k; i++)
		x = x * 0.999f + mk_buf[(i * 7) & 0xffff];
	return x;
}

__global__ void mk_scale(float *out, const float *in, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = a * in[i];
}

__global__ void mk_sum(float *out, const float *in, int n)
{
	__shared__ float s[256];
	int t = threadIdx.x;
	float acc = 0.f;

	for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x)
		acc += in[i];
	s[t] = acc;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (t < w)
			s[t] += s[t + w];
		__syncthreads();
	}
	if (!t)
		atomicAdd(out, s[0]);
}

template <typename T>
__global__ void mk_poly(T *x, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	T v = x[i];
	for (int j = 0; j < k; j++)
		v = v * v * (T)0.5 + (T)1;
	x[i] = mk_helper((float)v, k);
}

template __global__ void mk_poly<float>(float *, int, int);
template __global__ void mk_poly<double>(double *, int, int);
