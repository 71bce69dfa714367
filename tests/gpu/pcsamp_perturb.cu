// What GPU PC sampling does to the kernels it samples, built by
// tests/gpu/pc_sampling.sh with
//   nvcc -O2 -lineinfo -arch=sm_90 pcsamp_perturb.cu -lcupti -lcuda
// Three kernels: gather (random 4-byte reads over 1 GiB: memory-latency
// bound), stream (a coalesced copy of 1 GiB: bandwidth bound) and compute
// (a dependent FMA chain). Each is timed with cudaEvents, REPS times, and
// the program prints one line per kernel:
//   KERNEL name median_ms min_ms max_ms
// With no option it runs as it is (unprofiled, or under xpu-record). With
// --cupti it enables CUPTI's PC Sampling API itself, the way CUPTI's
// pc_sampling_continuous sample does, so the perturbation of CUPTI alone
// can be told from ours; the configuration is varied by options:
//   --period N        2^N cycles (5..31; default CUPTI's)
//   --serialized      CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
//   --hwbuf MB        hardware buffer size (CUPTI's default 512 MB)
//   --scratch MB      scratch buffer size (CUPTI's default 1 MB)
//   --reasons N       collect only the first N stall reasons (default all)
//   --sleep MS        worker threads' sleep span (CUPTI's default 100 ms)
//   --iters N         the gather kernel's reads a thread (default 256)
//   --table-gib G     its table (default 1 GiB; a power of two)
//   --startstop       start/stop control: sampling only around every other
//                     repetition (the rest unsampled, timed apart: UNSAMPLED
//                     lines)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CUPTI(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s_; \
	cuptiGetResultString(r_, &s_); fprintf(stderr, "%s: %s\n", #x, s_); exit(3); } } while (0)

#define N_FLOATS (256u << 20)		/* 1 GiB */

__global__ void gather(float *out, const float *__restrict__ in, int iters, size_t mask)
{
	size_t i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0.f;

	for (int k = 0; k < iters; k++)
		acc += in[(i * 0x9E3779B97F4A7C15ull + (size_t)k * 0xBF58476D1CE4E5B9ull) & mask];
	out[i] = acc;
}

__global__ void stream(float *out, const float *__restrict__ in, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i] * 2.f;
}

/* one element a thread, as PyTorch's index kernels: a grid of 2^20 blocks */
__global__ void gather1(float *out, const float *__restrict__ in, const unsigned *__restrict__ idx)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	out[i] = in[idx[i]];
}

__global__ void copy1(float *out, const float *__restrict__ in)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	out[i] = in[i] + 1.f;
}

__global__ void init_idx(unsigned *idx)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	idx[i] = (i * 2654435761u) & (N_FLOATS - 1);
}

__global__ void compute(float *out, int iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = (float)i;

	for (int k = 0; k < iters; k++)
		x = x * 1.000001f + 0.999999f;
	out[i] = x;
}

#define NK 5
static const char *names[NK] = { "gather", "stream", "compute", "gather1", "copy1" };

struct opts {
	bool cupti, serialized, startstop;
	int period, reasons, reps, iters;
	size_t table;
	size_t hwbuf, scratch;
	unsigned sleep;
};

static CUpti_PCSamplingData data;

static void pcs_alloc(size_t npcs, size_t nreasons)
{
	data.size = sizeof(data);
	data.collectNumPcs = npcs;
	data.pPcData = (CUpti_PCSamplingPCData *)calloc(npcs, sizeof(CUpti_PCSamplingPCData));
	for (size_t i = 0; i < npcs; i++) {
		data.pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
		data.pPcData[i].stallReason = (CUpti_PCSamplingStallReason *)calloc(nreasons,
			sizeof(CUpti_PCSamplingStallReason));
	}
}

static unsigned long long pcs_total;

static void pcs_drain(CUcontext ctx)
{
	for (int round = 0; round < 64; round++) {
		CUpti_PCSamplingGetDataParams p = {};

		p.size = CUpti_PCSamplingGetDataParamsSize;
		p.ctx = ctx;
		p.pcSamplingData = &data;
		data.totalNumPcs = data.remainingNumPcs = 0;
		CUptiResult r = cuptiPCSamplingGetData(&p);
		if (r != CUPTI_SUCCESS) {
			static bool said;
			const char *e;
			cuptiGetResultString(r, &e);
			if (!said)
				fprintf(stderr, "cuptiPCSamplingGetData: %s\n", e);
			said = true;
			return;
		}
		pcs_total += data.totalSamples;
		if (!data.remainingNumPcs)
			return;
	}
}

static void pcs_enable(CUcontext ctx, const opts &o)
{
	CUpti_PCSamplingEnableParams ep = {};
	CUpti_PCSamplingGetNumStallReasonsParams np = {};
	CUpti_PCSamplingGetStallReasonsParams rp = {};
	CUpti_PCSamplingConfigurationInfo info[10] = {};
	CUpti_PCSamplingConfigurationInfoParams cp = {};
	size_t nr = 0, ni = 0;

	ep.size = CUpti_PCSamplingEnableParamsSize;
	ep.ctx = ctx;
	CUPTI(cuptiPCSamplingEnable(&ep));
	np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
	np.ctx = ctx;
	np.numStallReasons = &nr;
	CUPTI(cuptiPCSamplingGetNumStallReasons(&np));
	uint32_t *index = (uint32_t *)calloc(nr, sizeof(uint32_t));
	char **names = (char **)calloc(nr, sizeof(char *));
	for (size_t i = 0; i < nr; i++)
		names[i] = (char *)calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
	rp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
	rp.ctx = ctx;
	rp.numStallReasons = nr;
	rp.stallReasonIndex = index;
	rp.stallReasons = names;
	CUPTI(cuptiPCSamplingGetStallReasons(&rp));
	size_t nsel = o.reasons > 0 && (size_t)o.reasons < nr ? (size_t)o.reasons : nr;
	pcs_alloc(4096, nsel);

	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	info[ni++].attributeData.collectionModeData.collectionMode = o.serialized ?
		CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED :
		CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	info[ni].attributeData.stallReasonData.stallReasonCount = nsel;
	info[ni++].attributeData.stallReasonData.pStallReasonIndex = index;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	static CUpti_PCSamplingData cfg = data;
	pcs_alloc(4096, nsel);		/* data: GetData's own */
	info[ni++].attributeData.samplingDataBufferData.samplingDataBuffer = &cfg;
	info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	info[ni++].attributeData.enableStartStopControlData.enableStartStopControl = o.startstop;
	if (o.period) {
		info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		info[ni++].attributeData.samplingPeriodData.samplingPeriod = o.period;
	}
	if (o.hwbuf) {
		info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
		info[ni++].attributeData.hardwareBufferSizeData.hardwareBufferSize = o.hwbuf;
	}
	if (o.scratch) {
		info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
		info[ni++].attributeData.scratchBufferSizeData.scratchBufferSize = o.scratch;
	}
	if (o.sleep) {
		info[ni].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
		info[ni++].attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan = o.sleep;
	}
	cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
	cp.ctx = ctx;
	cp.numAttributes = ni;
	cp.pPCSamplingConfigurationInfo = info;
	CUPTI(cuptiPCSamplingSetConfigurationAttribute(&cp));
}

static double range_us[2];
static int range_n[2];

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void pcs_range(CUcontext ctx, bool start)
{
	double t0 = now_us();

	if (start) {
		CUpti_PCSamplingStartParams p = {};
		p.size = CUpti_PCSamplingStartParamsSize;
		p.ctx = ctx;
		CUPTI(cuptiPCSamplingStart(&p));
	} else {
		CUpti_PCSamplingStopParams p = {};
		p.size = CUpti_PCSamplingStopParamsSize;
		p.ctx = ctx;
		CUPTI(cuptiPCSamplingStop(&p));
	}
	range_us[!start] += now_us() - t0;
	range_n[!start]++;
}

static void report(const char *tag, const char *name, std::vector<float> v)
{
	if (v.empty())
		return;
	std::sort(v.begin(), v.end());
	printf("%s %s %.3f %.3f %.3f\n", tag, name, v[v.size() / 2], v.front(), v.back());
}

int main(int argc, char **argv)
{
	opts o = {};
	o.reps = 20;
	o.iters = 256;
	o.table = N_FLOATS;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : "0";
		if (!strcmp(a, "--cupti")) o.cupti = true;
		else if (!strcmp(a, "--serialized")) o.serialized = o.cupti = true;
		else if (!strcmp(a, "--startstop")) o.startstop = o.cupti = true;
		else if (!strcmp(a, "--period")) { o.period = atoi(v); o.cupti = true; i++; }
		else if (!strcmp(a, "--hwbuf")) { o.hwbuf = (size_t)atoi(v) << 20; o.cupti = true; i++; }
		else if (!strcmp(a, "--scratch")) { o.scratch = (size_t)atoi(v) << 20; o.cupti = true; i++; }
		else if (!strcmp(a, "--reasons")) { o.reasons = atoi(v); o.cupti = true; i++; }
		else if (!strcmp(a, "--sleep")) { o.sleep = atoi(v); o.cupti = true; i++; }
		else if (!strcmp(a, "--reps")) { o.reps = atoi(v); i++; }
		else if (!strcmp(a, "--iters")) { o.iters = atoi(v); i++; }
		else if (!strcmp(a, "--table-gib")) { o.table = (size_t)atoi(v) << 28; i++; }
		else { fprintf(stderr, "unknown option %s\n", a); return 2; }
	}
	const int threads = 256, blocks = 132 * 8;
	float *a, *b, *c;
	unsigned *idx;
	CUcontext ctx;
	cudaEvent_t e0, e1;

	CHECK(cudaFree(0));
	cuCtxGetCurrent(&ctx);
	if (o.cupti)
		pcs_enable(ctx, o);
	CHECK(cudaMalloc(&a, (size_t)N_FLOATS * sizeof(float)));
	CHECK(cudaMalloc(&b, std::max(o.table, (size_t)N_FLOATS) * sizeof(float)));
	CHECK(cudaMalloc(&c, (size_t)blocks * threads * sizeof(float)));
	CHECK(cudaMalloc(&idx, (size_t)N_FLOATS * sizeof(unsigned)));
	CHECK(cudaMemset(b, 0, std::max(o.table, (size_t)N_FLOATS) * sizeof(float)));
	init_idx<<<N_FLOATS / 256, 256>>>(idx);
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	std::vector<float> t[2][NK];	/* [sampled][kernel] */
	for (int r = 0; r < o.reps; r++) {
		bool sampled = !o.startstop || r % 2 == 0;
		float ms;

		CHECK(cudaDeviceSynchronize());
		if (o.startstop && sampled)
			pcs_range(ctx, true);
		for (int k = 0; k < NK; k++) {
			CHECK(cudaEventRecord(e0));
			if (k == 0)
				gather<<<blocks, threads>>>(c, b, o.iters, o.table - 1);
			else if (k == 1)
				stream<<<blocks * 4, threads>>>(a, b, N_FLOATS);
			else if (k == 2)
				compute<<<blocks, threads>>>(c, 100000);
			else if (k == 3)
				gather1<<<N_FLOATS / 256, 256>>>(a, b, idx);
			else
				copy1<<<N_FLOATS / 256, 256>>>(a, b);
			CHECK(cudaEventRecord(e1));
			CHECK(cudaEventSynchronize(e1));
			CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (r)	/* the first is warm-up */
				t[sampled][k].push_back(ms);
		}
		if (o.startstop && sampled)
			pcs_range(ctx, false);
		if (o.cupti)
			pcs_drain(ctx);
	}
	for (int k = 0; k < NK; k++) {
		report("KERNEL", names[k], t[1][k]);
		report("UNSAMPLED", names[k], t[0][k]);
	}
	if (o.cupti)
		printf("PCSAMPLES %llu\n", pcs_total);
	if (range_n[0] && range_n[1])
		printf("STARTSTOP start %.1f us stop %.1f us (mean of %d, %d)\n", range_us[0] / range_n[0],
		       range_us[1] / range_n[1], range_n[0], range_n[1]);
	return 0;
}
