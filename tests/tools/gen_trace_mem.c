// SPDX-License-Identifier: MIT
/*
 * gen_trace_mem: gen_trace's memory scenario, a deterministic trace of GPU
 * memory records (format 1.12) for the --gpu-memory tests. It is
 * gen_trace.c compiled again with its main() renamed, so that gen_trace
 * itself stays byte for byte what the TUI and report goldens hold (their
 * addresses move with any change to its code); the trace's program is this
 * binary, its mem_demo_* functions below the named allocators.
 *
 * Times in ms after the first record (t0); MiB = 2^20 bytes.
 *   pid 300 "mem-demo", device 0, PyTorch (GPU_BLOCK + its segments):
 *     0    GPU_MEM_STATE, attached: 1 GiB in use before
 *     1    segment 256 MiB (cudaMalloc from mem_demo_load_weights)
 *     2-5  mem_demo_load_weights: 4 blocks of 32 MiB (one stack id), freed at 30
 *     10   mem_demo_forward: 2 blocks of 16 MiB, freed at 20
 *     11   segment 128 MiB (cudaMalloc from mem_demo_forward), released at 32
 *     12   mem_demo_temp: 64 MiB, freed at 14 (the peak: 224 MiB at 12)
 *     13   cudaMalloc 2 MiB (mem_demo_cuda_init) holding no block: not a
 *          segment, "other" CUDA-level memory, never freed
 *     15   mem_demo_leak: 8 MiB, never freed
 *     16   a free of a pointer never allocated
 *     17   the temporary freed again (a double free)
 *     18   a GPU_BLOCK with an op out of range (skipped, counted)
 *     25   GPU_OOM (allocator): 40 GiB asked by mem_demo_grow
 *   pid 400 "cuda-demo", device 1, CUDA-level only:
 *     3    cudaMalloc 100 MiB (mem_demo_cuda_init), freed at 40
 *     5    cudaMallocAsync 50 MiB (mem_demo_cuda_pool), freed at 8
 *     6    cudaMallocHost 4 MiB pinned (mem_demo_cuda_init), never freed
 *     9    a release of an address never allocated
 *   50   FINISH; 20 CPU samples of pid 300 in mem_demo_forward (0-19 ms)
 *
 * Usage: gen_trace_mem -o FILE
 */
#define main gen_trace__main
#include "tests/tools/gen_trace.c"
#undef main

#define MEM_DEMO __attribute__((noipa, used, noinline))
volatile unsigned long mem_sink;

MEM_DEMO void mem_demo_load_weights(int n) { mem_sink += (unsigned long)n * 5; mem_sink++; }
MEM_DEMO void mem_demo_forward(int n) { mem_sink += (unsigned long)n * 7; mem_sink++; }
MEM_DEMO void mem_demo_temp(int n) { mem_sink += (unsigned long)n * 11; mem_sink++; }
MEM_DEMO void mem_demo_leak(int n) { mem_sink += (unsigned long)n * 13; mem_sink++; }
MEM_DEMO void mem_demo_grow(int n) { mem_sink += (unsigned long)n * 17; mem_sink++; }
MEM_DEMO void mem_demo_cuda_init(int n) { mem_sink += (unsigned long)n * 19; mem_sink++; }
MEM_DEMO void mem_demo_cuda_pool(int n) { mem_sink += (unsigned long)n * 23; mem_sink++; }
MEM_DEMO void mem_demo_main(int n)
{
	mem_demo_load_weights(n);
	mem_demo_forward(n);
	mem_demo_temp(n);
	mem_demo_leak(n);
	mem_demo_grow(n);
	mem_demo_cuda_init(n);
	mem_demo_cuda_pool(n);
}

#define MS 1000000ULL
#define MIB (1ULL << 20)

static uint64_t t0 = 1000000000ULL;
static uint64_t load_bias;		/* runtime address - ELF vaddr of this binary */

/* A pc inside fn (its ELF vaddr + 4, mapped at BASE): as a return address
 * its pc - 1 is inside it too. */
static uint64_t mem__pc(void (*fn)(int))
{
	return BASE + ((uint64_t)(uintptr_t)fn - load_bias) + 4;
}

/* A GPU_CORR of pid with the stack main -> mem_demo_main -> fn. */
static void mem__corr(struct xpu_writer *w, uint64_t t, uint32_t pid, uint32_t domain,
		      uint64_t id, uint32_t cbid, void (*fn)(int))
{
	struct { struct xpu_gpu_corr c; uint64_t ips[3]; } cr;

	memset(&cr, 0, sizeof(cr));
	cr.c = (struct xpu_gpu_corr){ .time = t, .pid = pid, .tid = pid, .domain = domain,
				      .correlation_id = id, .cbid = cbid };
	cr.c.stack.nr_user_ips = 3;
	cr.ips[0] = mem__pc(fn);
	cr.ips[1] = mem__pc(mem_demo_main);
	cr.ips[2] = ret_addr(F_MAIN);
	xpu_writer__add(w, XPU_REC_GPU_CORR, &cr, sizeof(cr));
}

static void mem__block(struct xpu_writer *w, uint64_t ms, uint32_t op, uint64_t ptr,
		       uint64_t size, uint64_t stack_id)
{
	struct xpu_gpu_block b = { .time = t0 + ms * MS, .ptr = ptr, .size = size,
				   .stack_id = stack_id, .pid = 300, .tid = 300,
				   .device = op == XPU_BLOCK_MALLOC ? 0 : -1, .op = (uint8_t)op,
				   .source = XPU_BLOCK_USDT };

	xpu_writer__add(w, XPU_REC_GPU_BLOCK, &b, sizeof(b));
}

/* A CUDA-level allocation (with its API call's stack when fn) or release. */
static void mem__cuda(struct xpu_writer *w, uint64_t ms, uint32_t pid, uint32_t dev, uint8_t op,
		      uint8_t kind, uint64_t addr, uint64_t bytes, uint64_t corr, uint32_t cbid,
		      void (*fn)(int))
{
	struct xpu_gpu_memory m = { .time = t0 + ms * MS, .correlation_id = corr, .address = addr,
				    .bytes = bytes, .pid = pid, .device = dev, .context = 1,
				    .stream = XPU_GPU_MEMORY_NO_STREAM, .op = op,
				    .memory_kind = kind };

	if (fn)
		mem__corr(w, m.time - 1000, pid, XPU_API_RUNTIME, corr, cbid, fn);
	if (cbid == 373) {
		m.flags = XPU_GPU_MEMORY_ASYNC;
		m.stream = 7;
		m.pool_address = 0x5000;
		m.pool_type = 1;
	}
	xpu_writer__add(w, XPU_REC_GPU_MEMORY, &m, sizeof(m));
}

static void mem__torch(struct xpu_writer *w)
{
	struct xpu_gpu_mem_state st = { .time = t0, .free = 79ULL << 30, .total = 80ULL << 30,
					.used_before = 1ULL << 30, .pid = 300, .device = 0,
					.flags = XPU_MEM_STATE_ATTACH };
	struct xpu_gpu_oom oom = { .time = t0 + 25 * MS, .bytes = 40ULL << 30,
				   .correlation_id = 105, .pid = 300, .tid = 300, .device = 0,
				   .source = XPU_OOM_ALLOCATOR };

	xpu_writer__add(w, XPU_REC_GPU_MEM_STATE, &st, sizeof(st));
	mem__cuda(w, 1, 300, 0, XPU_MEMORY_ALLOC, XPU_MEMKIND_DEVICE, 0x7f0000000000ULL,
		  256 * MIB, 1, 20, mem_demo_load_weights);
	/* the allocator's stacks: one per call site */
	mem__corr(w, t0 + 2 * MS - 1000, 300, XPU_API_ALLOC, 101, 0, mem_demo_load_weights);
	for (uint64_t k = 0; k < 4; k++)
		mem__block(w, 2 + k, XPU_BLOCK_MALLOC, 0x7f0000000000ULL + k * 32 * MIB, 32 * MIB,
			   101);
	mem__corr(w, t0 + 10 * MS - 1000, 300, XPU_API_ALLOC, 102, 0, mem_demo_forward);
	mem__block(w, 10, XPU_BLOCK_MALLOC, 0x7f0008000000ULL, 16 * MIB, 102);
	mem__block(w, 10, XPU_BLOCK_MALLOC, 0x7f0009000000ULL, 16 * MIB, 102);
	mem__cuda(w, 11, 300, 0, XPU_MEMORY_ALLOC, XPU_MEMKIND_DEVICE, 0x7f0010000000ULL,
		  128 * MIB, 2, 20, mem_demo_forward);
	mem__corr(w, t0 + 12 * MS - 1000, 300, XPU_API_ALLOC, 103, 0, mem_demo_temp);
	mem__block(w, 12, XPU_BLOCK_MALLOC, 0x7f0010000000ULL, 64 * MIB, 103);
	mem__block(w, 14, XPU_BLOCK_FREE, 0x7f0010000000ULL, 0, 0);
	/* a library's own 2 MiB (cuBLAS's workspace, say): no block in it */
	mem__cuda(w, 13, 300, 0, XPU_MEMORY_ALLOC, XPU_MEMKIND_DEVICE, 0x7f0100000000ULL,
		  2 * MIB, 4, 20, mem_demo_cuda_init);
	mem__corr(w, t0 + 15 * MS - 1000, 300, XPU_API_ALLOC, 104, 0, mem_demo_leak);
	mem__block(w, 15, XPU_BLOCK_MALLOC, 0x7f0014000000ULL, 8 * MIB, 104);
	mem__block(w, 16, XPU_BLOCK_FREE, 0x7f00deadbe00ULL, 0, 0);
	mem__block(w, 17, XPU_BLOCK_FREE, 0x7f0010000000ULL, 0, 0);
	mem__block(w, 18, 7, 0x7f0015000000ULL, 4096, 0);
	mem__block(w, 20, XPU_BLOCK_FREE, 0x7f0008000000ULL, 0, 0);
	mem__block(w, 20, XPU_BLOCK_FREE, 0x7f0009000000ULL, 0, 0);
	mem__corr(w, t0 + 25 * MS - 1000, 300, XPU_API_ALLOC, 105, 0, mem_demo_grow);
	xpu_writer__add(w, XPU_REC_GPU_OOM, &oom, sizeof(oom));
	for (uint64_t k = 0; k < 4; k++)
		mem__block(w, 30, XPU_BLOCK_FREE, 0x7f0000000000ULL + k * 32 * MIB, 0, 0);
	mem__cuda(w, 32, 300, 0, XPU_MEMORY_RELEASE, XPU_MEMKIND_DEVICE, 0x7f0010000000ULL,
		  128 * MIB, 3, 22, NULL);
}

static void mem__plain_cuda(struct xpu_writer *w)
{
	mem__cuda(w, 3, 400, 1, XPU_MEMORY_ALLOC, XPU_MEMKIND_DEVICE, 0x7e0000000000ULL,
		  100 * MIB, 10, 20, mem_demo_cuda_init);
	mem__cuda(w, 5, 400, 1, XPU_MEMORY_ALLOC, XPU_MEMKIND_DEVICE, 0x7e0010000000ULL,
		  50 * MIB, 11, 373, mem_demo_cuda_pool);
	mem__cuda(w, 6, 400, 1, XPU_MEMORY_ALLOC, XPU_MEMKIND_PINNED, 0x7d0000000000ULL,
		  4 * MIB, 12, 25, mem_demo_cuda_init);
	mem__cuda(w, 8, 400, 1, XPU_MEMORY_RELEASE, XPU_MEMKIND_DEVICE, 0x7e0010000000ULL,
		  50 * MIB, 13, 0, NULL);
	mem__cuda(w, 9, 400, 1, XPU_MEMORY_RELEASE, XPU_MEMKIND_DEVICE, 0x7e00ffff0000ULL,
		  1 * MIB, 14, 0, NULL);
	mem__cuda(w, 40, 400, 1, XPU_MEMORY_RELEASE, XPU_MEMKIND_DEVICE, 0x7e0000000000ULL,
		  100 * MIB, 15, 0, NULL);
}

/* 20 samples of pid 300 in mem_demo_forward, one per ms. */
static void mem__samples(struct xpu_writer *w)
{
	for (uint64_t k = 0; k < 20; k++) {
		struct { struct xpu_sample s; uint64_t ips[3]; } smp;

		memset(&smp, 0, sizeof(smp));
		smp.s = (struct xpu_sample){ .time = t0 + k * MS + 500, .pid = 300, .tid = 300,
					     .weight = 1 };
		smp.s.stack.nr_user_ips = 3;
		smp.ips[0] = mem__pc(mem_demo_forward);
		smp.ips[1] = mem__pc(mem_demo_main);
		smp.ips[2] = ret_addr(F_MAIN);
		xpu_writer__add(w, XPU_REC_SAMPLE, &smp, sizeof(smp));
	}
}

int main(int argc, char **argv)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
					       XPU_FEAT_GPU | XPU_FEAT_GPU_MEMORY };
	struct xpu_finish fin = { .time = t0 + 50 * MS, .nr_samples = 20 };
	struct xpu_writer *w;
	char exe[4096];
	ssize_t len;

	if (argc != 3 || strcmp(argv[1], "-o")) {
		fprintf(stderr, "usage: gen_trace_mem -o FILE\n");
		return 2;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		gen__die("cannot find my own executable");
	exe[len] = '\0';
	if (!(w = xpu_writer__open(argv[2], &wo))) {
		fprintf(stderr, "gen_trace_mem: cannot create %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	xpu_writer__meta(w, "cmdline", "mem-demo --steps 1");
	xpu_writer__meta(w, "hostname", "tui-test");
	xpu_writer__meta(w, "arch", "x86_64");
	xpu_writer__meta(w, "sample_freq", "1000");
	xpu_writer__meta(w, "call_graph", "fp");
	xpu_writer__meta(w, "clock", "monotonic");
	xpu_writer__meta(w, "gpu", "on");
	gen__comm(w, 300, 300, "mem-demo");
	gen__self(w, exe, t0);	/* MMAPs of pid 100: copied for 300 and 400 below */
	load_bias = (uint64_t)(uintptr_t)tui_demo_parse - fns[F_PARSE].addr;
	{
		struct xpu_fork a = { .time = t0, .pid = 300, .tid = 300, .ppid = 100, .ptid = 100 };
		struct xpu_fork b = { .time = t0, .pid = 400, .tid = 400, .ppid = 100, .ptid = 100 };

		xpu_writer__add(w, XPU_REC_FORK, &a, sizeof(a));
		xpu_writer__add(w, XPU_REC_FORK, &b, sizeof(b));
	}
	gen__comm(w, 300, 300, "mem-demo");
	gen__comm(w, 400, 400, "cuda-demo");
	mem__samples(w);
	mem__torch(w);
	mem__plain_cuda(w);
	xpu_writer__add(w, XPU_REC_FINISH, &fin, sizeof(fin));
	if (xpu_writer__close(w)) {
		fprintf(stderr, "gen_trace_mem: writing %s failed\n", argv[2]);
		return 1;
	}
	printf("gen_trace_mem: %s\n", argv[2]);
	return 0;
}
