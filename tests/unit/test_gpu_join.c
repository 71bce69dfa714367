// SPDX-License-Identifier: MIT
/*
 * The CPU->GPU join (report/gpu/gpu_join.c) on traces built with the format
 * writer: MMAPs of this test binary (plus a file-less "libcuda.so.1"
 * mapping), fp-mode GPU_CORR and SAMPLE stacks made of real functions of
 * this binary, GPU activity, STRING and API records. Each case runs the real
 * session with the join tool and checks the folded output and the counts.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "common/exitcodes.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_graph.h"
#include "report/output/output.h"
#include "report/session/session.h"

/* Call-chain functions, distinct bodies so the compiler cannot fold them. */
volatile int tj_sink;
__attribute__((noinline, used)) void app_main(void) { tj_sink = 1; }
__attribute__((noinline, used)) void app_launch_a(void) { tj_sink = 2; }
__attribute__((noinline, used)) void app_launch_b(void) { tj_sink = 3; }
__attribute__((noinline, used)) void app_graph(void) { tj_sink = 4; }
__attribute__((noinline, used)) void app_copy(void) { tj_sink = 5; }
__attribute__((noinline, used)) void app_waiter(void) { tj_sink = 6; }
__attribute__((noinline, used)) void app_other(void) { tj_sink = 7; }
/* A CUDA API entry point by name (static cudart is linked into apps). */
__attribute__((noinline, used)) void cudaLaunchKernel(void) { tj_sink = 8; }

#define CBID_RT_LAUNCH		211	/* cudaLaunchKernel */
#define CBID_RT_GRAPH		311	/* cudaGraphLaunch */
#define CBID_RT_MEMCPY_ASYNC	41	/* cudaMemcpyAsync */
#define CBID_DRV_LAUNCH		307	/* cuLaunchKernel */
#define FAKE_CUDA_BASE		0x7e0000000000ull
#define FREQ			997	/* Hz: not a round number on purpose */

static char tj_path[] = "/tmp/xpu-test-gpu-join-XXXXXX";
static struct xpu_writer *w;
static uint64_t T0;
static uint32_t PID_A, PID_B;

/* ---- trace building ---------------------------------------------------------- */

static uint64_t fn(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 1;	/* a return address inside f */
}

static void tj_maps(uint32_t pid, const char *comm)
{
	struct xpu_mmap cuda = { .time = T0, .pid = pid, .tid = pid,
				 .start = FAKE_CUDA_BASE, .len = 0x100000, .prot = 5 };
	const char *cuda_path = "/nonexistent/libcuda.so.1";
	struct iovec iov[2];

	rt_write_maps_as(w, pid, T0, comm);
	iov[0] = (struct iovec){ &cuda, sizeof(cuda) };
	iov[1] = (struct iovec){ (void *)cuda_path, strlen(cuda_path) + 1 };
	xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
}

static void tj_open(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
						 XPU_FEAT_GPU };
	int fd;

	strcpy(tj_path, "/tmp/xpu-test-gpu-join-XXXXXX");
	fd = mkstemp(tj_path);
	if (fd >= 0)
		close(fd);
	w = xpu_writer__open(tj_path, &wo);
	T0 = rt_now();
	PID_A = (uint32_t)getpid();
	PID_B = PID_A + 1000000;	/* a second, made-up process */
	xpu_writer__meta(w, "sample_freq", "997");
	tj_maps(PID_A, "appA");
	tj_maps(PID_B, "appB");
}

/* A stack record part (fp mode): ips innermost first, 0-terminated list. */
static void tj_stack(uint16_t type, const void *fixed, size_t fixed_len, const uint64_t *ips)
{
	size_t n = 0;
	struct iovec iov[2];

	while (ips[n])
		n++;
	iov[0] = (struct iovec){ (void *)fixed, fixed_len };
	iov[1] = (struct iovec){ (void *)ips, n * sizeof(*ips) };
	xpu_writer__addv(w, type, 0, iov, 2);
}

static void tj_corr(uint64_t t, uint32_t pid, uint32_t tid, uint64_t corr, uint32_t domain,
		    uint32_t cbid, const uint64_t *ips)
{
	struct xpu_gpu_corr c = { .time = T0 + t, .pid = pid, .tid = tid, .domain = domain,
				  .correlation_id = corr, .cbid = cbid };
	size_t n = 0;

	while (ips[n])
		n++;
	c.stack.nr_user_ips = (uint16_t)n;
	tj_stack(XPU_REC_GPU_CORR, &c, sizeof(c), ips);
}

static void tj_sample(uint64_t t, uint32_t pid, uint32_t tid, const uint64_t *ips)
{
	struct xpu_sample s = { .time = T0 + t, .pid = pid, .tid = tid, .weight = 1 };
	size_t n = 0;

	while (ips[n])
		n++;
	s.stack.nr_user_ips = (uint16_t)n;
	tj_stack(XPU_REC_SAMPLE, &s, sizeof(s), ips);
}

static void tj_string(uint32_t pid, uint32_t id, const char *str)
{
	struct xpu_string s = { .pid = pid, .id = id };
	struct iovec iov[2] = { { &s, sizeof(s) }, { (void *)str, strlen(str) + 1 } };

	xpu_writer__addv(w, XPU_REC_STRING, 0, iov, 2);
}

static void tj_kernel(uint32_t pid, uint64_t corr, uint32_t name_id, uint64_t start,
		      uint64_t dur)
{
	struct xpu_gpu_kernel k = { .start = T0 + start, .end = T0 + start + dur,
				    .correlation_id = corr, .pid = pid, .name_id = name_id };

	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

static void tj_api(uint32_t pid, uint32_t tid, uint64_t corr, uint32_t domain, uint32_t cbid,
		   uint64_t start, uint64_t end)
{
	struct xpu_gpu_api a = { .start = T0 + start, .end = T0 + end, .correlation_id = corr,
				 .pid = pid, .tid = tid, .domain = domain, .cbid = cbid };

	xpu_writer__add(w, XPU_REC_GPU_API, &a, sizeof(a));
}

/* ---- running the report -------------------------------------------------------- */

struct tj_report {
	struct session s;
	struct gpu_join *g;
	const struct gpu_join_stats *st;
};

static int tj_graph_attr;		/* --graph-attribution of the next tj_run() */

static int tj_run(struct tj_report *r, const struct filter *f)
{
	if (xpu_writer__close(w))
		return -1;
	w = NULL;
	if (session__open(&r->s, tj_path))
		return -1;
	if (f)
		r->s.filter = *f;
	r->g = gpu_join__attach(&r->s);
	gpu_join__set_graph_attribution(r->g, tj_graph_attr);
	if (session__pass1(&r->s) || session__pass2(&r->s))
		return -1;
	r->st = gpu_join__stats(r->g);
	return 0;
}

static void tj_done(struct tj_report *r)
{
	if (r->s.reader) {
		memset(&r->s.filter, 0, sizeof(r->s.filter));	/* owned by the caller */
		session__close(&r->s);
	}
	unlink(tj_path);
}

static char *tj_folded(struct tj_report *r, enum profile_view view, bool comm)
{
	struct folded_opts o = { .view = view, .comm = comm };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	output__folded(&r->s.profile, fp, &o);
	fclose(fp);
	return buf;
}

/* Weight of the GPU entries whose stack, printed folded, is exactly want. */
static double tj_weight(struct tj_report *r, const char *want, enum entry_origin origin)
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

#define NS_TO_SAMPLES(ns) ((double)(ns) * FREQ / 1e9)
#define TEST_ASSERT_NEAR(a, b) TEST_ASSERT(fabs((double)(a) - (double)(b)) <= 1e-9 * (1 + fabs((double)(b))))

static const char *STACK_A = "app_main;app_launch_a;cudaLaunchKernel";
static const char *STACK_B = "app_main;app_launch_b;cudaLaunchKernel";

/* ---- cases ---------------------------------------------------------------------- */

/* Kernels and their STRING come before the correlation record in the file;
 * the join happens after pass 2, so order does not matter. The stack is
 * cut at the outermost CUDA frame (here cudaLaunchKernel, by name, above
 * it libcuda by module) and the API frame comes from the cbid. */
static void test_join_by_id_out_of_order(void)
{
	struct tj_report r = { 0 };
	char want[512];

	tj_open();
	tj_kernel(PID_A, 5, 1, 2000, 1234567);		/* before STRING and CORR */
	tj_string(PID_A, 1, "_ZN2ns4gemmEi");
	tj_kernel(PID_A, 6, 1, 5000, 1000);
	tj_corr(1000, PID_A, PID_A, 5, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x1234, FAKE_CUDA_BASE + 0x5678, fn(cudaLaunchKernel),
		fn(app_launch_a), fn(app_main), 0 });
	tj_corr(4000, PID_A, PID_A, 6, XPU_API_DRIVER, CBID_DRV_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x1234, fn(app_launch_b), fn(app_main), 0 });
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);

	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_id, 2);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_time, 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].unmatched, 0);
	snprintf(want, sizeof(want), "%s;[GPU_Kernel]ns::gemm(int)", STACK_A);
	/* weight: ns * Hz / 1e9 exactly, not rounded */
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), NS_TO_SAMPLES(1234567));
	TEST_ASSERT_NEAR(tj_weight(&r, "app_main;app_launch_b;cuLaunchKernel;"
				   "[GPU_Kernel]ns::gemm(int)", ORIGIN_GPU), NS_TO_SAMPLES(1000));
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU], NS_TO_SAMPLES(1235567));
	/* the launching thread's comm */
	{
		char *out = tj_folded(&r, VIEW_GPU, true);

		TEST_ASSERT(strstr(out, "appA;app_main;app_launch_a;cudaLaunchKernel;"
				   "[GPU_Kernel]ns::gemm(int) 1\n") != NULL);
		free(out);
	}
	tj_done(&r);
}

/* All kernels of one cudaGraphLaunch share its correlation ID. */
static void test_join_graph(void)
{
	struct tj_report r = { 0 };
	char *out;

	tj_open();
	tj_string(PID_A, 1, "k_first");
	tj_string(PID_A, 2, "k_second");
	tj_corr(1000, PID_A, PID_A, 77, XPU_API_RUNTIME, CBID_RT_GRAPH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_graph), fn(app_main), 0 });
	for (int i = 0; i < 3; i++)
		tj_kernel(PID_A, 77, 1 + (i == 2), 10000 + i * 3000000ull, 3000000);
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_id, 3);
	out = tj_folded(&r, VIEW_GPU, false);
	/* 2 x 3 ms and 3 ms at 997 Hz: 5.982 and 2.991 samples */
	TEST_ASSERT(!strcmp(out, "app_main;app_graph;cudaGraphLaunch;[GPU_Kernel]k_first 6\n"
				 "app_main;app_graph;cudaGraphLaunch;[GPU_Kernel]k_second 3\n"));
	free(out);
	tj_done(&r);
}

static void tj_graph_node(uint64_t node, uint64_t orig, uint64_t api_corr, uint32_t flags)
{
	struct xpu_gpu_graph_node n = { .time = T0 + 50, .node_id = node, .orig_node_id = orig,
					.api_correlation_id = api_corr, .pid = PID_A,
					.tid = PID_A, .graph_id = orig ? 2 : 1, .flags = flags };

	xpu_writer__add(w, XPU_REC_GPU_GRAPH_NODE, &n, sizeof(n));
}

static void tj_graph_kernel(uint64_t corr, uint64_t node, uint64_t start)
{
	struct xpu_gpu_kernel k = { .start = T0 + start, .end = T0 + start + 3000000,
				    .correlation_id = corr, .pid = PID_A, .name_id = 1,
				    .graph_id = 2, .graph_node_id = node };

	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

/*
 * Replayed graph kernels and their capture sites (--graph-attribution):
 * node 0x200 is a clone of 0x100, created in the captured launch corr 10
 * (app_launch_a); 0x201 of 0x101, created outside a marked call with its
 * own stack (app_launch_b); 0x300/0x301 clone each other (a damaged trace:
 * no hang, no site); 0x400's original was never recorded. All replayed by
 * the cudaGraphLaunch corr 77 in app_graph.
 */
static void tj_graph_trace(void)
{
	tj_open();
	tj_string(PID_A, 1, "k_first");
	tj_corr(100, PID_A, PID_A, 10, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		fn(cudaLaunchKernel), fn(app_launch_a), fn(app_main), 0 });
	tj_graph_node(0x100, 0, 10, 0);
	tj_corr(200, PID_A, PID_A, 0x101, XPU_API_GRAPH_NODE, 0, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_launch_b), fn(app_main), 0 });
	tj_graph_node(0x101, 0, 0, XPU_GRAPH_NODE_STACK);
	tj_graph_node(0x200, 0x100, 0, XPU_GRAPH_NODE_CLONED);
	tj_graph_node(0x201, 0x101, 0, XPU_GRAPH_NODE_CLONED);
	tj_graph_node(0x300, 0x301, 0, XPU_GRAPH_NODE_CLONED);
	tj_graph_node(0x301, 0x300, 0, XPU_GRAPH_NODE_CLONED);
	tj_graph_node(0x400, 0x999, 0, XPU_GRAPH_NODE_CLONED);
	tj_corr(1000, PID_A, PID_A, 77, XPU_API_RUNTIME, CBID_RT_GRAPH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_graph), fn(app_main), 0 });
	tj_graph_kernel(77, 0x200, 10000);
	tj_graph_kernel(77, 0x201, 3010000);
	tj_graph_kernel(77, 0x300, 6010000);
	tj_graph_kernel(77, 0x400, 9010000);
}

static void test_join_graph_sites(void)
{
	const char *launch = "app_main;app_graph;cudaGraphLaunch";
	const char *k = "[GPU_Kernel]k_first";
	const double one = NS_TO_SAMPLES(3000000);
	struct tj_report r = { 0 };
	const struct gpu_graph_stats *st;
	char want[512];

	tj_graph_attr = GPU_GRAPH_BOTH;
	tj_graph_trace();
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	snprintf(want, sizeof(want), "%s;[graph replay];%s;%s", launch, STACK_A, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), one);
	snprintf(want, sizeof(want), "%s;[graph replay];app_main;app_launch_b;[graph node];%s",
		 launch, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), one);
	snprintf(want, sizeof(want), "%s;[graph replay];[unknown capture site];%s", launch, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), 2 * one);
	st = gpu_join__graph_stats(r.g);
	TEST_ASSERT_EQ(st->created, 2);
	TEST_ASSERT_EQ(st->cloned, 5);
	TEST_ASSERT_EQ(st->replayed, 4);
	TEST_ASSERT_EQ(st->with_site, 2);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_id, 4);
	tj_done(&r);

	tj_graph_attr = GPU_GRAPH_CAPTURE;
	tj_graph_trace();
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	snprintf(want, sizeof(want), "%s;[graph replay];%s", STACK_A, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), one);
	snprintf(want, sizeof(want), "app_main;app_launch_b;[graph node];[graph replay];%s", k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), one);
	snprintf(want, sizeof(want), "%s;[graph replay];[unknown capture site];%s", launch, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), 2 * one);
	tj_done(&r);

	tj_graph_attr = GPU_GRAPH_LAUNCH;
	tj_graph_trace();
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	snprintf(want, sizeof(want), "%s;%s", launch, k);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), 4 * one);
	TEST_ASSERT_EQ(gpu_join__graph_stats(r.g)->with_site, 0);
	tj_done(&r);
	tj_graph_attr = GPU_GRAPH_BOTH;
}

/* No correlation records: the API record gives the thread and interval; the
 * CPU samples of that thread inside [start, end] (edges included) give the
 * stack, the latest one that reaches into CUDA. */
static void test_join_by_time(void)
{
	struct tj_report r = { 0 };
	uint32_t tid2 = PID_A + 1;
	char want[512];

	tj_open();
	tj_string(PID_A, 1, "k");
	/* call 1 on tid2: [100000, 200000] */
	tj_api(PID_A, tid2, 1, XPU_API_RUNTIME, CBID_RT_LAUNCH, 100000, 200000);
	tj_sample(99999, PID_A, tid2, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	tj_sample(100000, PID_A, tid2, (uint64_t[]){ FAKE_CUDA_BASE + 1, fn(cudaLaunchKernel),
		fn(app_launch_b), fn(app_main), 0 });		/* exactly at start */
	tj_sample(200000, PID_A, tid2, (uint64_t[]){ FAKE_CUDA_BASE + 1, fn(cudaLaunchKernel),
		fn(app_launch_a), fn(app_main), 0 });		/* exactly at end: latest */
	tj_sample(200001, PID_A, tid2, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	tj_sample(150000, PID_A, PID_A, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	tj_kernel(PID_A, 1, 1, 300000, 1000000);
	/* call 2: only a sample exactly at its start */
	tj_api(PID_A, tid2, 2, XPU_API_RUNTIME, CBID_RT_LAUNCH, 500000, 600000);
	tj_sample(500000, PID_A, tid2, (uint64_t[]){ FAKE_CUDA_BASE + 1, fn(app_launch_b),
		fn(app_main), 0 });
	tj_kernel(PID_A, 2, 1, 700000, 2000000);
	/* call 3: no sample inside (one on another thread at the same time) */
	tj_api(PID_A, tid2, 3, XPU_API_RUNTIME, CBID_RT_MEMCPY_ASYNC, 800000, 900000);
	tj_sample(850000, PID_A, PID_A, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	tj_kernel(PID_A, 3, 1, 950000, 4000000);
	/* call 4: neither a correlation nor an API record */
	tj_kernel(PID_A, 4, 1, 990000, 8000000);
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);

	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_id, 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_time, 2);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].unmatched, 2);
	TEST_ASSERT_EQ(r.st->ts_samples, 3);	/* only samples inside the intervals */
	snprintf(want, sizeof(want), "%s;[GPU_Kernel]k", STACK_A);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), NS_TO_SAMPLES(1000000));
	snprintf(want, sizeof(want), "%s;[GPU_Kernel]k", STACK_B);
	TEST_ASSERT_NEAR(tj_weight(&r, want, ORIGIN_GPU), NS_TO_SAMPLES(2000000));
	TEST_ASSERT_NEAR(tj_weight(&r, "[unknown CPU stack];cudaMemcpyAsync;[GPU_Kernel]k",
				   ORIGIN_GPU), NS_TO_SAMPLES(4000000));
	TEST_ASSERT_NEAR(tj_weight(&r, "[unknown CPU stack];[GPU_Kernel]k", ORIGIN_GPU),
			 NS_TO_SAMPLES(8000000));
	/* the CPU samples themselves are all still CPU entries */
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_CPU], 7);
	tj_done(&r);
}

/* Two processes use the same correlation IDs and string ids. */
static void test_join_two_processes(void)
{
	struct tj_report r = { 0 };
	struct filter f = { 0 };
	char *out;

	tj_open();
	tj_string(PID_A, 1, "kernel_of_a");
	tj_string(PID_B, 1, "kernel_of_b");
	tj_kernel(PID_B, 1, 1, 1000, 2000000);
	tj_kernel(PID_A, 1, 1, 1000, 1000000);
	tj_corr(500, PID_A, PID_A, 1, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_launch_a), fn(app_main), 0 });
	tj_corr(500, PID_B, PID_B, 1, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_launch_b), fn(app_main), 0 });
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].by_id, 2);
	out = tj_folded(&r, VIEW_GPU, true);
	TEST_ASSERT(!strcmp(out,
		"appA;app_main;app_launch_a;cudaLaunchKernel;[GPU_Kernel]kernel_of_a 1\n"
		"appB;app_main;app_launch_b;cudaLaunchKernel;[GPU_Kernel]kernel_of_b 2\n"));
	free(out);
	tj_done(&r);

	/* --pid keeps the GPU work launched by that process only */
	tj_open();
	tj_string(PID_A, 1, "kernel_of_a");
	tj_string(PID_B, 1, "kernel_of_b");
	tj_kernel(PID_B, 1, 1, 1000, 2000000);
	tj_kernel(PID_A, 1, 1, 1000, 1000000);
	TEST_ASSERT_EQ(filter__parse_ids(&f.pids, &f.nr_pids, "1"), 0);
	f.pids[0] = PID_B;
	TEST_ASSERT_EQ(tj_run(&r, &f), 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_KERNEL].filtered, 1);
	out = tj_folded(&r, VIEW_GPU, false);
	TEST_ASSERT(!strcmp(out, "[unknown CPU stack];[GPU_Kernel]kernel_of_b 2\n"));
	free(out);
	tj_done(&r);
	filter__exit(&f);
}

/* memcpy / memset / sync leaves, unknown cbids, and the three views. */
static void test_join_kinds_and_views(void)
{
	struct tj_report r = { 0 };
	struct xpu_gpu_memcpy mc = { .start = 0, .end = 0, .correlation_id = 10,
				     .copy_kind = XPU_MEMCPY_HTOD };
	struct xpu_gpu_memset ms = { .correlation_id = 11 };
	struct xpu_gpu_sync sy = { .correlation_id = 12, .type = 3 };
	char *out;
	FILE *fp;
	char *hdr = NULL;
	size_t len = 0;

	tj_open();
	mc.start = T0 + 1000, mc.end = T0 + 1000 + 4000000, mc.pid = PID_A;
	ms.start = T0 + 2000, ms.end = T0 + 2000 + 3000000, ms.pid = PID_A;
	sy.start = T0 + 3000, sy.end = T0 + 3000 + 2000000, sy.pid = PID_A;
	xpu_writer__add(w, XPU_REC_GPU_MEMCPY, &mc, sizeof(mc));
	xpu_writer__add(w, XPU_REC_GPU_MEMSET, &ms, sizeof(ms));
	xpu_writer__add(w, XPU_REC_GPU_SYNC, &sy, sizeof(sy));
	tj_corr(500, PID_A, PID_A, 10, XPU_API_RUNTIME, CBID_RT_MEMCPY_ASYNC, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_copy), fn(app_main), 0 });
	tj_corr(600, PID_A, PID_A, 11, XPU_API_RUNTIME, 99999, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_copy), fn(app_main), 0 });
	tj_corr(700, PID_A, PID_A, 12, XPU_API_DRIVER, 99999, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_waiter), fn(app_main), 0 });
	tj_corr(800, PID_A, PID_A, 13, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_waiter), fn(app_main), 0 });	/* unused */
	for (int i = 0; i < 5; i++)
		tj_sample(1000 + i, PID_A, PID_A, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	TEST_ASSERT_EQ(tj_run(&r, NULL), 0);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_MEMCPY].by_id, 1);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_MEMSET].by_id, 1);
	TEST_ASSERT_EQ(r.st->kind[GPU_KIND_SYNC].by_id, 1);
	TEST_ASSERT_EQ(r.st->corr_unused, 1);

	out = tj_folded(&r, VIEW_MERGED, false);
	TEST_ASSERT(!strcmp(out,
		"app_main;app_copy;cudaMemcpyAsync;[GPU_Memcpy HtoD] 4\n"
		"app_main;app_copy;cuda_api_99999;[GPU_Memset] 3\n"
		"app_main;app_other 5\n"
		"app_main;app_waiter;cuda_driver_api_99999;[GPU_Sync]StreamSynchronize 2\n"));
	free(out);
	out = tj_folded(&r, VIEW_CPU, false);
	TEST_ASSERT(!strcmp(out, "app_main;app_other 5\n"));
	free(out);
	out = tj_folded(&r, VIEW_GPU, false);
	TEST_ASSERT(strstr(out, "app_other") == NULL && strstr(out, "[GPU_Memset] 3\n"));
	free(out);
	TEST_ASSERT_NEAR(profile__total(&r.s.profile, VIEW_GPU), NS_TO_SAMPLES(9000000));
	TEST_ASSERT_NEAR(profile__total(&r.s.profile, VIEW_MERGED), 5 + NS_TO_SAMPLES(9000000));

	fp = open_memstream(&hdr, &len);
	TEST_ASSERT_EQ(gpu__header(&r.s, fp), 0);
	fclose(fp);
	TEST_ASSERT(strstr(hdr, "#   memcpy            1: by id 1 (100.0%), by time 0 (0.0%), "
			   "unmatched 0 (0.0%), 4.000 ms\n") != NULL);
	TEST_ASSERT(strstr(hdr, "without GPU activity 1)") != NULL);
	TEST_ASSERT(strstr(hdr, "#   subscriber conflict: none\n") != NULL);
	free(hdr);
	tj_done(&r);
}

/* ---- the output table: a throw-away output sees the joined events and the profile */

struct tj_seen {
	size_t prepared, runs, events, by_id, unmatched;
	double weight;			/* sum of the events' weights */
	double profile_gpu, profile_cpu;
	struct gpu_event kernel;	/* the one kernel with a stack */
	struct gpu_event copy;
	char kernel_stack[512];
	char kernel_name[64];		/* ev->name lives as long as the session */
};

static void tj_on_event(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct tj_seen *seen = priv;
	size_t n, len = 0;
	const uint32_t *fr;
	char buf[256];

	seen->events++;
	seen->weight += ev->weight;
	seen->by_id += ev->match == GPU_MATCH_ID;
	seen->unmatched += ev->match == GPU_MATCH_NONE;
	if (ev->kind == GPU_KIND_MEMCPY)
		seen->copy = *ev;
	if (ev->kind != GPU_KIND_KERNEL || ev->match != GPU_MATCH_ID)
		return;
	seen->kernel = *ev;
	snprintf(seen->kernel_name, sizeof(seen->kernel_name), "%s", ev->name ? ev->name : "");
	fr = profile__stack(&s->profile, ev->stack, &n);
	for (size_t j = 0; j < n; j++) {
		folded__frame(profile__frame(&s->profile, fr[j]), buf, sizeof(buf));
		len += (size_t)snprintf(seen->kernel_stack + len, sizeof(seen->kernel_stack) - len,
					"%s%s", j ? ";" : "", buf);
	}
}

static struct tj_seen tj_seen;

static int tj_out_prepare(struct session *s, const struct report_opts *o)
{
	tj_seen.prepared++;
	gpu_join__subscribe(gpu_join__find(s), tj_on_event, &tj_seen);
	return 0;
}

static int tj_out_run(struct session *s, const struct report_opts *o, FILE *fp)
{
	tj_seen.runs++;
	tj_seen.profile_gpu = s->profile.total[ORIGIN_GPU];
	tj_seen.profile_cpu = s->profile.total[ORIGIN_CPU];
	return fprintf(fp, "throw-away output ran\n") < 0 ? -EIO : 0;
}

static const struct report_output tj_output = {
	.name = "throw-away",
	.help = "a test output",
	.needs = OUTPUT_NEEDS_PROFILE,
	.prepare = tj_out_prepare,
	.run = tj_out_run,
};

static void test_output_table(void)
{
	struct xpu_gpu_kernel k = { .correlation_id = 5, .name_id = 1, .device = 3, .stream = 7,
				    .graph_id = 9, .graph_node_id = 42 };
	struct xpu_gpu_memcpy mc = { .correlation_id = 6, .bytes = 1 << 20, .device = 3,
				     .stream = 8, .copy_kind = XPU_MEMCPY_DTOH };
	struct report_opts o = { .view = VIEW_MERGED };
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	/* every row of the table has a name, help and run; names are unique */
	for (size_t i = 0; report_outputs[i]; i++) {
		TEST_ASSERT(report_outputs[i]->name && report_outputs[i]->help &&
			    report_outputs[i]->run);
		TEST_ASSERT(report_output__find(report_outputs[i]->name) == report_outputs[i]);
	}
	TEST_ASSERT(report_output__find("folded") == &output_folded);
	TEST_ASSERT(report_output__find("no-such-output") == NULL);

	tj_open();
	tj_string(PID_A, 1, "_Z6kernelv");
	k.start = T0 + 1000, k.end = T0 + 1000 + 2000000, k.pid = PID_A;
	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
	mc.start = T0 + 5000, mc.end = T0 + 5000 + 1000000, mc.pid = PID_A;
	xpu_writer__add(w, XPU_REC_GPU_MEMCPY, &mc, sizeof(mc));	/* no stack: unmatched */
	tj_corr(500, PID_A, PID_A, 5, XPU_API_RUNTIME, CBID_RT_LAUNCH, (uint64_t[]){
		FAKE_CUDA_BASE + 0x10, fn(app_launch_a), fn(app_main), 0 });
	for (int i = 0; i < 3; i++)
		tj_sample(1000 + i, PID_A, PID_A, (uint64_t[]){ fn(app_other), fn(app_main), 0 });
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	w = NULL;

	memset(&tj_seen, 0, sizeof(tj_seen));
	o.input = tj_path;
	fp = open_memstream(&out, &len);
	TEST_ASSERT_EQ(report__run(&tj_output, &o, fp), XPU_EXIT_OK);
	fclose(fp);
	TEST_ASSERT(!strcmp(out, "throw-away output ran\n"));
	free(out);
	TEST_ASSERT_EQ(tj_seen.prepared, 1);
	TEST_ASSERT_EQ(tj_seen.runs, 1);
	TEST_ASSERT_EQ(tj_seen.events, 2);
	TEST_ASSERT_EQ(tj_seen.by_id, 1);
	TEST_ASSERT_EQ(tj_seen.unmatched, 1);
	/* the profile the output reads holds what the events carried */
	TEST_ASSERT_NEAR(tj_seen.profile_cpu, 3);
	TEST_ASSERT_NEAR(tj_seen.profile_gpu, NS_TO_SAMPLES(3000000));
	TEST_ASSERT_NEAR(tj_seen.weight, tj_seen.profile_gpu);
	/* the event's fields: time, ids, device, stream, graph, stack */
	TEST_ASSERT_EQ(tj_seen.kernel.pid, PID_A);
	TEST_ASSERT_EQ(tj_seen.kernel.tid, PID_A);
	TEST_ASSERT_EQ(tj_seen.kernel.start, T0 + 1000);
	TEST_ASSERT_EQ(tj_seen.kernel.end, T0 + 1000 + 2000000);
	TEST_ASSERT_EQ(tj_seen.kernel.launch_time, T0 + 500);
	TEST_ASSERT_EQ(tj_seen.kernel.correlation_id, 5);
	TEST_ASSERT_EQ(tj_seen.kernel.device, 3);
	TEST_ASSERT_EQ(tj_seen.kernel.stream, 7);
	TEST_ASSERT_EQ(tj_seen.kernel.graph_id, 9);
	TEST_ASSERT_EQ(tj_seen.kernel.graph_node_id, 42);
	TEST_ASSERT(!strcmp(tj_seen.kernel_name, "_Z6kernelv"));
	TEST_ASSERT(!strcmp(tj_seen.kernel_stack,
			    "app_main;app_launch_a;cudaLaunchKernel;[GPU_Kernel]kernel()"));
	TEST_ASSERT_EQ(tj_seen.copy.bytes, 1 << 20);
	TEST_ASSERT_EQ(tj_seen.copy.stream, 8);
	TEST_ASSERT_EQ(tj_seen.copy.sub, XPU_MEMCPY_DTOH);
	TEST_ASSERT_EQ(tj_seen.copy.launch_time, 0);
	unlink(tj_path);
}

/* Where stacks are cut: by module (libcuda, our library, the marker's
 * module) or API name; nothing cut when no CUDA frame is there. */
static void test_stack_cut(void)
{
	struct profile p;
	struct gpu_api_names names;
	uint32_t fr[5];

	profile__init(&p);
	gpu_api_names__init(&names);
	fr[0] = profile__intern_frame(&p, FRAME_CPU_USER, "app", "main", 0, false);
	fr[1] = profile__intern_frame(&p, FRAME_CPU_USER, "libtorch_cuda.so", "at::launch", 0, false);
	fr[2] = profile__intern_frame(&p, FRAME_CPU_USER, "libcudart.so.13", "cudaLaunchKernel", 0,
				      false);
	fr[3] = profile__intern_frame(&p, FRAME_CPU_USER, "libcuda.so.1", "libcuda.so.1+0x10", 0x10,
				      true);
	fr[4] = profile__intern_frame(&p, FRAME_CPU_USER, "libfake_cupti.so", "xpu_cupti_marker",
				      0, false);
	TEST_ASSERT_EQ(gpu__stack_cut(&p, &names, fr, 5), 2);
	TEST_ASSERT_EQ(gpu__stack_cut(&p, &names, fr, 2), 2);
	/* the marker's own module counts, whatever its name */
	TEST_ASSERT_EQ(gpu__stack_cut(&p, &names, (uint32_t[]){ fr[0], fr[1], fr[4] }, 3), 2);
	fr[2] = profile__intern_frame(&p, FRAME_CPU_USER, "app",
				      "cudaError cudaLaunchKernel<char>(char const*, dim3)", 0, false);
	TEST_ASSERT_EQ(gpu__stack_cut(&p, &names, fr, 3), 2);
	TEST_ASSERT(gpu_cbid__is_api(&names, "cuMemcpyHtoDAsync"));
	TEST_ASSERT(!gpu_cbid__is_api(&names, "cudaLaunchKernelFoo"));
	TEST_ASSERT(!gpu_cbid__is_api(&names, "cublasSgemm"));
	TEST_ASSERT(!strcmp(gpu_cbid__name(XPU_API_RUNTIME, 211), "cudaLaunchKernel"));
	TEST_ASSERT(!strcmp(gpu_cbid__name(XPU_API_DRIVER, 307), "cuLaunchKernel"));
	TEST_ASSERT(gpu_cbid__name(XPU_API_DRIVER, 1u << 20) == NULL);
	gpu_api_names__exit(&names);
	profile__exit(&p);
}

int main(void)
{
	TEST_RUN(test_stack_cut);
	TEST_RUN(test_join_by_id_out_of_order);
	TEST_RUN(test_join_graph);
	TEST_RUN(test_join_graph_sites);
	TEST_RUN(test_join_by_time);
	TEST_RUN(test_join_two_processes);
	TEST_RUN(test_join_kinds_and_views);
	TEST_RUN(test_output_table);
	TEST_EXIT();
}
