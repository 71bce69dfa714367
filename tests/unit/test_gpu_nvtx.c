// SPDX-License-Identifier: MIT
/*
 * NVTX ranges in the report (report/gpu/gpu_nvtx.c) on traces built with the
 * format writer, like test_gpu_join.c: MMAPs of this test binary plus a
 * file-less "libcuda.so.1", fp-mode stacks made of real functions of this
 * binary. Push stacks are GPU_CORR records of domain XPU_API_NVTX ending in
 * libcuda and an nvtxRangePushA frame, as a real push's would end in CUPTI.
 * Each case runs the real session with the join and the NVTX tool and checks
 * where the [nvtx] frames land in CPU, off-CPU and GPU stacks.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "common/exitcodes.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/gpu/gpu_sync_wait.h"
#include "report/output/output.h"
#include "report/session/session.h"

volatile int tn_sink;
__attribute__((noinline, used)) void app_main(void) { tn_sink = 1; }
__attribute__((noinline, used)) void app_outer(void) { tn_sink = 2; }
__attribute__((noinline, used)) void app_inner(void) { tn_sink = 3; }
__attribute__((noinline, used)) void app_work(void) { tn_sink = 4; }
__attribute__((noinline, used)) void app_other(void) { tn_sink = 5; }
/* NVTX's inline function as it appears in a push stack, and a CUDA API */
__attribute__((noinline, used)) void nvtxRangePushA(void) { tn_sink = 6; }
__attribute__((noinline, used)) void cudaLaunchKernel(void) { tn_sink = 7; }

#define CBID_RT_LAUNCH		211
#define CBID_RT_STREAM_SYNC	131	/* cudaStreamSynchronize */
#define CBID_NVTX_PUSH		8
#define FAKE_CUDA_BASE		0x7e0000000000ull
#define FREQ			1000

static char tn_path[] = "/tmp/xpu-test-gpu-nvtx-XXXXXX";
static struct xpu_writer *w;
static uint64_t T0;
static uint32_t PID, TID2;

static uint64_t fn(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 1;
}

static void tn_open(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
						 XPU_FEAT_GPU | XPU_FEAT_NVTX };
	struct xpu_mmap cuda = { .start = FAKE_CUDA_BASE, .len = 0x100000, .prot = 5 };
	const char *cuda_path = "/nonexistent/libcuda.so.1";
	struct iovec iov[2];
	int fd;

	strcpy(tn_path, "/tmp/xpu-test-gpu-nvtx-XXXXXX");
	fd = mkstemp(tn_path);
	if (fd >= 0)
		close(fd);
	w = xpu_writer__open(tn_path, &wo);
	T0 = rt_now();
	PID = (uint32_t)getpid();
	TID2 = PID + 1;
	xpu_writer__meta(w, "sample_freq", "1000");
	rt_write_maps(w, T0, "nvtxapp");
	cuda.time = T0;
	cuda.pid = cuda.tid = PID;
	iov[0] = (struct iovec){ &cuda, sizeof(cuda) };
	iov[1] = (struct iovec){ (void *)cuda_path, strlen(cuda_path) + 1 };
	xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
}

static size_t tn_nr(const uint64_t *ips)
{
	size_t n = 0;

	while (ips[n])
		n++;
	return n;
}

static void tn_sample(uint64_t t, uint32_t tid, const uint64_t *ips)
{
	struct xpu_sample s = { .time = T0 + t, .pid = PID, .tid = tid, .weight = 1 };
	struct iovec iov[2] = { { &s, sizeof(s) }, { (void *)ips, tn_nr(ips) * 8 } };

	s.stack.nr_user_ips = (uint16_t)tn_nr(ips);
	xpu_writer__addv(w, XPU_REC_SAMPLE, 0, iov, 2);
}

static void tn_offcpu(uint64_t t, uint64_t dur, uint32_t tid, const uint64_t *ips)
{
	struct xpu_offcpu o = { .start = T0 + t, .end = T0 + t + dur, .off_ns = dur, .pid = PID,
				.tid = tid, .syscall = -1 };
	struct iovec iov[2] = { { &o, sizeof(o) }, { (void *)ips, tn_nr(ips) * 8 } };

	o.stack.nr_user_ips = (uint16_t)tn_nr(ips);
	xpu_writer__addv(w, XPU_REC_OFFCPU, 0, iov, 2);
}

/* Preempted in the function at leaf_ip, registers only: the report borrows
 * the callers from the thread's latest sample. */
static void tn_offcpu_leaf(uint64_t t, uint64_t dur, uint32_t tid, uint64_t leaf_ip)
{
	struct xpu_offcpu o = { .start = T0 + t, .end = T0 + t + dur, .off_ns = dur, .pid = PID,
				.tid = tid, .syscall = -1,
				.flags = XPU_OFFCPU_PREEMPTED | XPU_OFFCPU_LEAF_ONLY };
	uint64_t regs[XPU_X86_NR_REGS] = { 0 };
	struct iovec iov[2] = { { &o, sizeof(o) }, { regs, sizeof(regs) } };

	o.stack.arch = XPU_ARCH_X86_64;
	o.stack.nr_regs = XPU_X86_NR_REGS;
	o.stack.flags = XPU_STACK_KERNEL_MODE;
	regs[XPU_X86_RIP] = leaf_ip;
	regs[XPU_X86_RSP] = 0x7ffc00000000ull;
	xpu_writer__addv(w, XPU_REC_OFFCPU, 0, iov, 2);
}

static void tn_corr(uint64_t t, uint32_t tid, uint64_t id, uint32_t domain, uint32_t cbid,
		    const uint64_t *ips)
{
	struct xpu_gpu_corr c = { .time = T0 + t, .pid = PID, .tid = tid, .domain = domain,
				  .correlation_id = id, .cbid = cbid };
	struct iovec iov[2] = { { &c, sizeof(c) }, { (void *)ips, tn_nr(ips) * 8 } };

	c.stack.nr_user_ips = (uint16_t)tn_nr(ips);
	xpu_writer__addv(w, XPU_REC_GPU_CORR, 0, iov, 2);
}

static void tn_string(uint32_t id, const char *str)
{
	struct xpu_string s = { .pid = PID, .id = id };
	struct iovec iov[2] = { { &s, sizeof(s) }, { (void *)str, strlen(str) + 1 } };

	xpu_writer__addv(w, XPU_REC_STRING, 0, iov, 2);
}

/* A range; end 0: never closed. */
static void tn_range(uint32_t tid, uint64_t id, uint64_t start, uint64_t end, uint32_t msg,
		     uint32_t dom, uint32_t flags, uint32_t depth)
{
	struct xpu_gpu_nvtx n = { .start = T0 + start, .end = end ? T0 + end : 0, .range_id = id,
				  .pid = PID, .tid = tid, .end_tid = tid, .domain_id = dom,
				  .message_id = msg, .flags = flags, .depth = depth };

	xpu_writer__add(w, XPU_REC_GPU_NVTX, &n, sizeof(n));
}

/* The push stack of a range pushed from the functions in ips (innermost
 * first), as the uprobe sees it: CUPTI (here libcuda) above nvtxRangePushA. */
static void tn_push(uint64_t t, uint32_t tid, uint64_t id, const uint64_t *ips)
{
	uint64_t all[16] = { FAKE_CUDA_BASE + 0x40, FAKE_CUDA_BASE + 0x80, fn(nvtxRangePushA) };
	size_t n = tn_nr(ips);

	memcpy(all + 3, ips, (n + 1) * sizeof(*ips));
	tn_corr(t, tid, id, XPU_API_NVTX, CBID_NVTX_PUSH, all);
}

static void tn_kernel(uint64_t corr, uint32_t name_id, uint64_t start, uint64_t dur)
{
	struct xpu_gpu_kernel k = { .start = T0 + start, .end = T0 + start + dur,
				    .correlation_id = corr, .pid = PID, .name_id = name_id };

	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

struct tn_report {
	struct session s;
	struct gpu_nvtx *nv;
};

static int tn_run(struct tn_report *r, bool frames)
{
	if (xpu_writer__close(w))
		return -1;
	w = NULL;
	if (session__open(&r->s, tn_path))
		return -1;
	gpu_join__attach(&r->s);
	r->nv = gpu_nvtx__attach(&r->s, frames);
	if (session__pass1(&r->s) || session__pass2(&r->s))
		return -1;
	return 0;
}

static void tn_done(struct tn_report *r)
{
	if (r->s.reader)
		session__close(&r->s);
	unlink(tn_path);
}

/* Weight of the entries of origin whose stack, folded, is exactly want. */
static double tn_weight(struct tn_report *r, const char *want, enum entry_origin origin)
{
	const struct profile *p = &r->s.profile;
	double sum = 0;
	char text[4096], buf[1024];

	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		size_t n, len = 0;
		const uint32_t *fr = profile__stack(p, e->stack, &n);

		if (e->origin != origin)
			continue;
		text[0] = '\0';
		for (size_t j = 0; j < n; j++) {
			folded__frame(profile__frame(p, fr[j]), buf, sizeof(buf));
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
						j ? ";" : "", buf);
		}
		if (!strcmp(text, want))
			sum += e->weight;
	}
	return sum;
}

#define TEST_ASSERT_NEAR(a, b) TEST_ASSERT(fabs((double)(a) - (double)(b)) <= 1e-9 * (1 + fabs((double)(b))))

/* Two nested ranges of one thread: "outer" pushed in app_outer, "inner" in
 * app_inner. The frames go where each was pushed, only while it is open,
 * only on its thread; GPU work goes by its launch. */
static void build_nested(void)
{
	tn_open();
	tn_string(1, "outer");
	tn_string(2, "inner");
	tn_string(3, "k");
	/* the ranges come late (written at the pop), the push stacks early */
	tn_push(1000, PID, 1, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_push(2000, PID, 2, (uint64_t[]){ fn(app_inner), fn(app_outer), fn(app_main), 0 });
	/* outside any range */
	tn_sample(500, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* in both: 2 samples */
	tn_sample(2000, PID, (uint64_t[]){ fn(app_work), fn(app_inner), fn(app_outer),
		fn(app_main), 0 });
	tn_sample(3000, PID, (uint64_t[]){ fn(app_work), fn(app_inner), fn(app_outer),
		fn(app_main), 0 });
	/* the same time on another thread: no range there */
	tn_sample(3000, TID2, (uint64_t[]){ fn(app_work), fn(app_inner), fn(app_outer),
		fn(app_main), 0 });
	/* in outer only (inner ended at 5000, exclusive) */
	tn_sample(5000, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* preempted in app_work: callers borrowed from that sample, then one
	 * [nvtx] frame (the borrowed callers are the sample's own, not its
	 * rewritten stack) */
	tn_offcpu_leaf(5500, 2000000, PID, (uint64_t)(uintptr_t)app_work + 4);
	/* in app_outer itself: the frame becomes the leaf */
	tn_sample(6000, PID, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	/* at outer's end: outside */
	tn_sample(9000, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* blocked inside outer: off-CPU stacks get the frame before the reason */
	tn_offcpu(7000, 1000000, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* a kernel whose CUDA correlation id equals a range id: the join must
	 * take the launch's GPU_CORR, not the push stack of range 2 */
	tn_corr(3500, PID, 2, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){ FAKE_CUDA_BASE + 0x10,
		fn(cudaLaunchKernel), fn(app_inner), fn(app_outer), fn(app_main), 0 });
	tn_kernel(2, 3, 100000, 2000000);
	/* launched from thread 2 inside the range's time: no frame */
	tn_corr(3600, TID2, 7, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){ FAKE_CUDA_BASE + 0x10,
		fn(app_other), fn(app_main), 0 });
	tn_kernel(7, 3, 200000, 3000000);
	tn_range(PID, 2, 2000, 5000, 2, 0, XPU_NVTX_PUSHPOP, 1);
	tn_range(PID, 1, 1000, 9000, 1, 0, XPU_NVTX_PUSHPOP, 0);
}

static void test_nested(void)
{
	struct tn_report r = { 0 };
	const struct gpu_nvtx_stats *st;

	build_nested();
	TEST_ASSERT_EQ(tn_run(&r, true), 0);
	st = gpu_nvtx__stats(r.nv);
	TEST_ASSERT_EQ(st->pushpop, 2);
	TEST_ASSERT_EQ(st->push_records, 2);
	TEST_ASSERT_EQ(st->push_stacks, 2);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_work", ORIGIN_CPU), 2);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_inner;[nvtx]inner;"
				   "app_work", ORIGIN_CPU), 2);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_inner;app_work", ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_work", ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer", ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_work;[off-cpu]",
				   ORIGIN_OFFCPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_work;"
				   "[off-cpu] preempted", ORIGIN_OFFCPU), 2);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_inner;[nvtx]inner;"
				   "cudaLaunchKernel;[GPU_Kernel]k", ORIGIN_GPU), 2);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_other;cudaLaunchKernel;[GPU_Kernel]k",
				   ORIGIN_GPU), 3);
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_CPU], 7);
	TEST_ASSERT_EQ(gpu_join__stats(gpu_join__find(&r.s))->kind[GPU_KIND_KERNEL].by_id, 2);
	tn_done(&r);

	/* frames off (--no-nvtx): the same weights under the plain stacks */
	build_nested();
	TEST_ASSERT_EQ(tn_run(&r, false), 0);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_inner;app_work", ORIGIN_CPU), 3);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_work", ORIGIN_CPU), 3);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_inner;cudaLaunchKernel;"
				   "[GPU_Kernel]k", ORIGIN_GPU), 2);
	TEST_ASSERT_EQ(gpu_nvtx__stats(r.nv)->push_stacks, 0);	/* not even resolved */
	tn_done(&r);
}

/* The sync-wait view takes the call's correlation stack from the join:
 * the [nvtx] frame is in it, as in the launch stacks. */
static void test_sync_wait(void)
{
	struct tn_report r = { 0 };
	struct xpu_gpu_kernel k = { .correlation_id = 1, .pid = 0, .name_id = 3, .context = 1,
				    .stream = 7 };
	struct xpu_gpu_sync y = { .correlation_id = 2, .type = 3, .context = 1, .stream = 7,
				  .event = UINT32_MAX };
	struct xpu_gpu_api a = { .correlation_id = 2, .domain = XPU_API_RUNTIME,
				 .cbid = CBID_RT_STREAM_SYNC };

	tn_open();
	tn_string(1, "outer");
	tn_string(3, "k");
	tn_push(1000, PID, 1, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 1, 1000, 9000000, 1, 0, XPU_NVTX_PUSHPOP, 0);
	tn_corr(1500, PID, 1, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){ FAKE_CUDA_BASE + 0x10,
		fn(app_inner), fn(app_outer), fn(app_main), 0 });
	k.pid = PID, k.start = T0 + 2000, k.end = T0 + 3002000;		/* 3 ms */
	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
	/* the thread waits from 2000 to 4002000: 3 ms on the kernel, 1 ms idle */
	tn_corr(2000, PID, 2, XPU_API_RUNTIME, CBID_RT_STREAM_SYNC, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_work), fn(app_outer), fn(app_main), 0 });
	a.pid = PID, a.tid = PID, a.start = T0 + 2000, a.end = T0 + 4002000;
	xpu_writer__add(w, XPU_REC_GPU_API, &a, sizeof(a));
	y.pid = PID, y.start = T0 + 2100, y.end = T0 + 4001900;
	xpu_writer__add(w, XPU_REC_GPU_SYNC, &y, sizeof(y));
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	w = NULL;
	TEST_ASSERT_EQ(session__open(&r.s, tn_path), 0);
	gpu_join__attach(&r.s);
	gpu_sync_wait__attach(&r.s);
	r.nv = gpu_nvtx__attach(&r.s, true);
	TEST_ASSERT_EQ(session__pass1(&r.s), 0);
	TEST_ASSERT_EQ(session__pass2(&r.s), 0);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_work;"
				   "cudaStreamSynchronize;[waits on] k", ORIGIN_SYNC_WAIT), 3);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_work;"
				   "cudaStreamSynchronize;[waits on] nothing (GPU idle)",
				   ORIGIN_SYNC_WAIT), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]outer;app_inner;"
				   "cudaLaunchKernel;[GPU_Kernel]k", ORIGIN_GPU), 3);
	tn_done(&r);
}

/* Where frames go when push points disagree with nesting, when two ranges
 * were pushed in one function, and without a push stack; start/end ranges
 * stay out of stacks; a range never closed lasts to the end. */
static void test_placement(void)
{
	struct tn_report r = { 0 };

	tn_open();
	tn_string(1, "A");
	tn_string(2, "B");
	tn_string(3, "nopush");
	tn_string(4, "se");
	tn_string(5, "late");
	/* A (outer) pushed in app_inner, B (inner) pushed higher, in app_outer:
	 * B must not go above A */
	tn_push(100, PID, 1, (uint64_t[]){ fn(app_inner), fn(app_outer), fn(app_main), 0 });
	tn_push(200, PID, 2, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 1, 100, 1000, 1, 0, XPU_NVTX_PUSHPOP, 0);
	tn_range(PID, 2, 200, 900, 2, 0, XPU_NVTX_PUSHPOP, 1);
	tn_sample(500, PID, (uint64_t[]){ fn(app_work), fn(app_inner), fn(app_outer),
		fn(app_main), 0 });
	/* two ranges pushed from app_outer, at the same point */
	tn_push(2000, PID, 3, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_push(2100, PID, 4, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 3, 2000, 3000, 1, 0, XPU_NVTX_PUSHPOP, 0);
	tn_range(PID, 4, 2100, 2900, 2, 0, XPU_NVTX_PUSHPOP, 1);
	tn_sample(2500, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* no push stack recorded: after the root */
	tn_range(PID, 5, 4000, 5000, 3, 0, XPU_NVTX_PUSHPOP, 0);
	tn_sample(4500, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* a start/end range is not a thread's: not in stacks */
	tn_push(6000, PID, 6, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 6, 6000, 7000, 4, 0, XPU_NVTX_STARTEND, 0);
	tn_sample(6500, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	/* never closed: open until the end */
	tn_push(8000, PID, 7, (uint64_t[]){ fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 7, 8000, 0, 5, 0, XPU_NVTX_PUSHPOP, 0);
	tn_sample(900000000, PID, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	TEST_ASSERT_EQ(tn_run(&r, true), 0);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_inner;[nvtx]A;[nvtx]B;app_work",
				   ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]A;[nvtx]B;app_work", ORIGIN_CPU),
			 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;[nvtx]nopush;app_outer;app_work", ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_work", ORIGIN_CPU), 1);
	TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;[nvtx]late;app_work", ORIGIN_CPU), 1);
	TEST_ASSERT_EQ(gpu_nvtx__stats(r.nv)->never_closed, 1);
	TEST_ASSERT_EQ(gpu_nvtx__stats(r.nv)->startend, 1);
	TEST_ASSERT_EQ(gpu_nvtx__stats(r.nv)->push_stacks, 5);
	tn_done(&r);
}

/* Ranges whose end was not recorded (issue 31: NCCL's pops through NVTX's
 * payload extension): with a push stack, only on stacks still inside the
 * code that pushed them; without, cut where their thread next pushed in
 * their domain (another domain's push does not cut), else open to the end;
 * --header counts and names them, with or without the frames. */
static void tn_unclosed_trace(void)
{
	tn_open();
	tn_string(1, "NCCL");
	tn_string(2, "ncclCommInitRankConfig");
	tn_string(3, "AllReduce");
	tn_string(4, "nopush");
	tn_string(5, "open");
	tn_string(6, "phase");
	/* PID: ncclCommInitRankConfig pushed in app_inner, its pop never seen */
	tn_push(100, PID, 1, (uint64_t[]){ fn(app_inner), fn(app_outer), fn(app_main), 0 });
	tn_range(PID, 1, 100, 0, 2, 1, XPU_NVTX_PUSHPOP, 0);
	tn_sample(150, PID, (uint64_t[]){ fn(app_work), fn(app_inner), fn(app_outer),
		fn(app_main), 0 });
	tn_push(1000, PID, 2, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	tn_range(PID, 2, 1000, 2000, 3, 1, XPU_NVTX_PUSHPOP, 1);
	tn_sample(1500, PID, (uint64_t[]){ fn(app_work), fn(app_other), fn(app_main), 0 });
	tn_sample(3000, PID, (uint64_t[]){ fn(app_work), fn(app_main), 0 });
	/* TID2, no push stacks: "nopush" (default domain) ends where "phase"
	 * begins; NCCL:open has no later push in its domain */
	tn_range(TID2, 3, 100, 0, 4, 0, XPU_NVTX_PUSHPOP, 0);
	tn_range(TID2, 4, 150, 0, 5, 1, XPU_NVTX_PUSHPOP, 0);
	tn_range(TID2, 5, 2000, 4000, 6, 0, XPU_NVTX_PUSHPOP, 1);
	tn_sample(500, TID2, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	tn_sample(3000, TID2, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
	tn_sample(900000000, TID2, (uint64_t[]){ fn(app_work), fn(app_outer), fn(app_main), 0 });
}

static void test_unclosed(void)
{
	static const char want[] =
		"#   never closed: 3 push/pop, 0 start/end (their end was not recorded): "
		"NCCL:ncclCommInitRankConfig 1, NCCL:open 1, nopush 1\n"
		"#     push/pop ones: 1 only on stacks inside the code that pushed them, "
		"1 cut where their thread next pushed in their domain, 1 open to the end\n";
	struct tn_report r = { 0 };
	char *hdr = NULL;
	size_t len = 0;
	FILE *fp;

	for (int frames = 1; frames >= 0; frames--) {
		tn_unclosed_trace();
		TEST_ASSERT_EQ(tn_run(&r, frames), 0);
		if (frames) {
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_outer;app_inner;"
				"[nvtx]NCCL:ncclCommInitRankConfig;app_work", ORIGIN_CPU), 1);
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_other;[nvtx]NCCL:AllReduce;"
				"app_work", ORIGIN_CPU), 1);
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;app_work", ORIGIN_CPU), 1);
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;[nvtx]nopush;[nvtx]NCCL:open;"
				"app_outer;app_work", ORIGIN_CPU), 1);
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;[nvtx]NCCL:open;[nvtx]phase;"
				"app_outer;app_work", ORIGIN_CPU), 1);
			TEST_ASSERT_NEAR(tn_weight(&r, "app_main;[nvtx]NCCL:open;app_outer;app_work",
				ORIGIN_CPU), 1);
		}
		TEST_ASSERT_EQ(gpu_nvtx__stats(r.nv)->never_closed, 3);
		fp = open_memstream(&hdr, &len);
		TEST_ASSERT_EQ(gpu_nvtx__header(&r.s, fp), 0);
		fclose(fp);
		TEST_ASSERT(strstr(hdr, want) != NULL);
		/* the closed ones are listed as before, the others not */
		TEST_ASSERT(strstr(hdr, "  NCCL:AllReduce\n") && strstr(hdr, "  phase\n"));
		TEST_ASSERT(!strstr(hdr, "  nopush\n"));
		free(hdr);
		hdr = NULL;
		tn_done(&r);
		memset(&r, 0, sizeof(r));
	}
}

/* The --header table: per name (domain:message, PyTorch's details cut),
 * count, total, mean, max; marks and ranges never closed counted apart. */
static void test_header(void)
{
	struct tn_report r = { 0 };
	const struct gpu_nvtx_row *rows;
	char *hdr = NULL, label[64];
	size_t len = 0, nr;
	FILE *fp;

	gpu_nvtx__label(NULL, "aten::mm, seq = 12, op_id = 3, sizes = [[2, 3]]", label,
			sizeof(label));
	TEST_ASSERT(!strcmp(label, "aten::mm"));
	gpu_nvtx__label("NCCL", "AllReduce", label, sizeof(label));
	TEST_ASSERT(!strcmp(label, "NCCL:AllReduce"));

	tn_open();
	tn_string(1, "step");
	tn_string(2, "aten::mm, seq = 1, op_id = 1");
	tn_string(3, "aten::mm, seq = 2, op_id = 2");
	tn_string(4, "NCCL");
	tn_string(5, "AllReduce");
	for (int i = 0; i < 3; i++)
		tn_range(PID, 1 + i, 1000000ull * i, 1000000ull * i + 2000000ull * (i + 1), 1, 0,
			 XPU_NVTX_PUSHPOP, 0);
	tn_range(PID, 10, 100, 1100, 2, 0, XPU_NVTX_PUSHPOP, 1);
	tn_range(PID, 11, 200, 3200, 3, 0, XPU_NVTX_PUSHPOP, 1);
	tn_range(TID2, 12, 0, 50000000, 5, 4, XPU_NVTX_STARTEND, 0);
	tn_range(PID, 13, 500, 0, 1, 0, XPU_NVTX_PUSHPOP, 0);		/* never closed */
	tn_range(PID, 14, 700, 700, 5, 0, XPU_NVTX_MARK, 0);
	tn_sample(1000, PID, (uint64_t[]){ fn(app_work), fn(app_main), 0 });
	TEST_ASSERT_EQ(tn_run(&r, true), 0);
	rows = gpu_nvtx__rows(r.nv, &nr);
	TEST_ASSERT_EQ(nr, 3);
	TEST_ASSERT(!strcmp(rows[0].name, "NCCL:AllReduce"));
	TEST_ASSERT_EQ(rows[0].count, 1);
	TEST_ASSERT_EQ(rows[0].total_ns, 50000000);
	TEST_ASSERT(!strcmp(rows[1].name, "step"));
	TEST_ASSERT_EQ(rows[1].count, 3);
	TEST_ASSERT_EQ(rows[1].total_ns, 12000000);
	TEST_ASSERT_EQ(rows[1].max_ns, 6000000);
	TEST_ASSERT(!strcmp(rows[2].name, "aten::mm"));
	TEST_ASSERT_EQ(rows[2].count, 2);
	TEST_ASSERT_EQ(rows[2].total_ns, 4000);
	fp = open_memstream(&hdr, &len);
	TEST_ASSERT_EQ(gpu_nvtx__header(&r.s, fp), 0);
	fclose(fp);
	TEST_ASSERT(strstr(hdr, "#   push/pop 6, start/end 1, marks 1, never closed 1, "
			   "malformed 0\n") != NULL);
	TEST_ASSERT(strstr(hdr, "#    50.0ms        1   50.0ms   50.0ms  NCCL:AllReduce\n") != NULL);
	TEST_ASSERT(strstr(hdr, "#    12.0ms        3    4.0ms    6.0ms  step\n") != NULL);
	TEST_ASSERT(strstr(hdr, "#     4.0us        2    2.0us    3.0us  aten::mm\n") != NULL);
	free(hdr);
	tn_done(&r);
}

/* NVTX ranges the library dropped are named in the lost-events warning. */
static void test_lost_warning(void)
{
	struct tn_report r = { 0 };
	struct xpu_lost l = { .source = XPU_LOST_NVTX, .count = 3 };
	char err[] = "/tmp/xpu-test-gpu-nvtx-err-XXXXXX", text[512] = "";
	int fd = mkstemp(err), saved = dup(2);
	ssize_t n;

	tn_open();
	l.time = T0, l.pid = PID;
	xpu_writer__add(w, XPU_REC_LOST, &l, sizeof(l));
	tn_sample(1000, PID, (uint64_t[]){ fn(app_work), fn(app_main), 0 });
	TEST_ASSERT_EQ(tn_run(&r, true), 0);
	fflush(stderr);
	dup2(fd, 2);
	session__warn(&r.s);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	unlink(err);
	tn_done(&r);
	TEST_ASSERT(n > 0 && strstr(text, "3 events were lost while recording (nvtx 3)") != NULL);
}

/* xpu-report's path: report__run attaches the frames for stack outputs,
 * --no-nvtx (report_opts.no_nvtx) leaves them out. */
static void test_report_run(void)
{
	struct report_opts o = { .view = VIEW_CPU };
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	for (int no_nvtx = 0; no_nvtx < 2; no_nvtx++) {
		build_nested();
		TEST_ASSERT_EQ(xpu_writer__close(w), 0);
		w = NULL;
		o.input = tn_path;
		o.no_nvtx = no_nvtx;
		o.no_comm = true;
		fp = open_memstream(&out, &len);
		TEST_ASSERT_EQ(report__run(&output_folded, &o, fp), XPU_EXIT_OK);
		fclose(fp);
		TEST_ASSERT_EQ(strstr(out, "app_main;app_outer;[nvtx]outer;app_inner;[nvtx]inner;"
				      "app_work 2\n") != NULL, !no_nvtx);
		TEST_ASSERT_EQ(strstr(out, "[nvtx]") == NULL, no_nvtx);
		free(out);
		out = NULL;
		unlink(tn_path);
	}
}

#ifdef HAVE_PROTOBUF_C
#include "perfetto_trace.pb-c.h"

static void tn_api(uint64_t start, uint64_t end, uint32_t tid, uint64_t corr, uint32_t cbid)
{
	struct xpu_gpu_api a = { .start = T0 + start, .end = T0 + end, .correlation_id = corr,
				 .pid = PID, .tid = tid, .domain = XPU_API_RUNTIME, .cbid = cbid };

	xpu_writer__add(w, XPU_REC_GPU_API, &a, sizeof(a));
}

/* --timeline on the nested trace: NVTX ranges nest on the thread's NVTX
 * track, off-CPU blocks are named by reason, API calls that overlap without
 * nesting go to a second lane, a launch with two kernels starts two flows. */
static void test_timeline(void)
{
	struct report_opts o = { .view = VIEW_MERGED };
	Perfetto__Protos__Trace *t;
	char *out = NULL, *names[64] = { 0 };
	size_t len = 0, nr_names = 0, nr_flows = 0, nr_term = 0;
	uint64_t uuid_of[4] = { 0 };	/* NVTX, CUDA API, CUDA API (2), off-CPU */
	uint64_t streams[8];		/* stream 0 and its lanes */
	size_t nr_streams = 0;
	const char *seq[16];
	size_t nr_seq = 0, per[8] = { 0 };
	FILE *fp;

	build_nested();
	tn_api(3400, 3700, PID, 2, CBID_RT_LAUNCH);
	tn_api(3550, 3800, TID2, 7, CBID_RT_LAUNCH);
	tn_kernel(2, 3, 2200000, 1000);		/* the launch of corr 2 made two kernels */
	tn_api(10000, 20000, PID, 90, CBID_RT_STREAM_SYNC);
	tn_api(15000, 25000, PID, 91, CBID_RT_STREAM_SYNC);	/* overlaps, does not nest */
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	w = NULL;
	o.input = tn_path;
	fp = open_memstream(&out, &len);
	TEST_ASSERT_EQ(report__run(&output_timeline, &o, fp), XPU_EXIT_OK);
	fclose(fp);
	unlink(tn_path);
	TEST_ASSERT(len > 2 && out[0] == 0x0a);		/* Trace.packet */
	t = perfetto__protos__trace__unpack(NULL, len, (const uint8_t *)out);
	TEST_ASSERT(t != NULL);
	for (size_t i = 0; t && i < t->n_packet; i++) {
		const Perfetto__Protos__TracePacket *p = t->packet[i];
		const Perfetto__Protos__TrackDescriptor *d = p->track_descriptor;
		const Perfetto__Protos__TrackEvent *ev = p->track_event;

		TEST_ASSERT_EQ(p->trusted_packet_sequence_id, 1);
		for (size_t k = 0; p->interned_data && k < p->interned_data->n_event_names; k++) {
			const Perfetto__Protos__EventName *en = p->interned_data->event_names[k];

			TEST_ASSERT(en->iid < 64 && !names[en->iid]);
			names[en->iid] = en->name;
			nr_names++;
		}
		if (d && d->name && d->parent_uuid) {
			static const char *const want[] = { "NVTX", "CUDA API", "CUDA API (2)",
							    "off-CPU" };

			for (int k = 0; k < 4; k++)
				if (!strcmp(d->name, want[k]) && !uuid_of[k])
					uuid_of[k] = d->uuid;
			if (!strncmp(d->name, "stream 0: ", 10) && nr_streams < 8)
				streams[nr_streams++] = d->uuid;	/* and its lanes */
		}
		if (!ev)
			continue;
		for (int k = 0; k < 4; k++)
			if (ev->track_uuid == uuid_of[k] &&
			    ev->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
				per[k]++;
		for (size_t k = 0; k < nr_streams; k++)
			if (ev->track_uuid == streams[k] &&
			    ev->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
				per[4]++;
		nr_flows += ev->n_flow_ids;
		nr_term += ev->n_terminating_flow_ids;
		if (ev->track_uuid == uuid_of[0] && nr_seq < 16)	/* NVTX, in file order */
			seq[nr_seq++] = ev->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END ?
					"end" : names[ev->name_iid];
		if (ev->track_uuid == uuid_of[3] && ev->has_name_iid)	/* off-CPU names */
			TEST_ASSERT(!strcmp(names[ev->name_iid], "preempted") ||
				    !strcmp(names[ev->name_iid], "off-CPU"));
	}
	TEST_ASSERT(nr_names > 0);
	/* the push/pop ranges of the thread, inner inside outer */
	TEST_ASSERT_EQ(per[0], 2);
	TEST_ASSERT_EQ(nr_seq, 4);
	TEST_ASSERT(nr_seq == 4 && !strcmp(seq[0], "outer") && !strcmp(seq[1], "inner") &&
		    !strcmp(seq[2], "end") && !strcmp(seq[3], "end"));
	/* the main thread's calls: the launch and the first sync on lane 1,
	 * the sync that overlaps it on lane 2 */
	TEST_ASSERT_EQ(per[1], 2);
	TEST_ASSERT_EQ(per[2], 1);
	TEST_ASSERT_EQ(per[3], 2);		/* preempted, and a block with no reason */
	TEST_ASSERT_EQ(per[4], 3);		/* three kernels on stream 0 (two lanes) */
	TEST_ASSERT_EQ(nr_streams, 2);
	/* corr 2 started two flows, corr 7 one; each ends on a kernel */
	TEST_ASSERT_EQ(nr_flows, 3);
	TEST_ASSERT_EQ(nr_term, 3);
	perfetto__protos__trace__free_unpacked(t, NULL);
	free(out);
}
#endif

int main(void)
{
	TEST_RUN(test_nested);
	TEST_RUN(test_placement);
	TEST_RUN(test_sync_wait);
	TEST_RUN(test_header);
	TEST_RUN(test_unclosed);
	TEST_RUN(test_lost_warning);
	TEST_RUN(test_report_run);
#ifdef HAVE_PROTOBUF_C
	TEST_RUN(test_timeline);
#endif
	TEST_EXIT();
}
