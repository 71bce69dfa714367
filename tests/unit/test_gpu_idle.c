// SPDX-License-Identifier: MIT
/*
 * The GPU-idle and sync-wait views (report/gpu/gpu_idle.c, gpu_sync_wait.c)
 * on traces built with the format writer: MMAPs of this test binary plus a
 * file-less "libcuda.so.1", fp-mode stacks of real functions of this binary,
 * GPU activity on two devices and several streams, correlation and API
 * records, CPU samples and OFFCPU records of several threads. Each case runs
 * the real session with the join and both tools and checks exact weights:
 * at 1000 Hz one sample is 1 ms, so every expected weight below is a number
 * of milliseconds.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "common/exitcodes.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_idle.h"
#include "report/gpu/gpu_sync_wait.h"
#include "report/output/output.h"
#include "report/session/session.h"

volatile int gi_sink;
__attribute__((noinline, used)) void gi_main(void) { gi_sink = 1; }
__attribute__((noinline, used)) void gi_load(void) { gi_sink = 2; }
__attribute__((noinline, used)) void gi_wait(void) { gi_sink = 3; }
__attribute__((noinline, used)) void gi_other(void) { gi_sink = 4; }
__attribute__((noinline, used)) void gi_launch_a(void) { gi_sink = 5; }
__attribute__((noinline, used)) void gi_launch_b(void) { gi_sink = 6; }
__attribute__((noinline, used)) void gi_bystander(void) { gi_sink = 7; }
__attribute__((noinline, used)) void gi_step(void) { gi_sink = 8; }
__attribute__((noinline, used)) void gi_copy(void) { gi_sink = 9; }

#define CBID_RT_LAUNCH		211	/* cudaLaunchKernel */
#define CBID_RT_MEMCPY		31	/* cudaMemcpy */
#define CBID_RT_STREAM_SYNC	131	/* cudaStreamSynchronize */
#define CBID_RT_EVENT_SYNC	137	/* cudaEventSynchronize */
#define CBID_RT_EVENT_QUERY	138	/* cudaEventQuery */
#define CBID_RT_WAIT_EVENT	147	/* cudaStreamWaitEvent */
#define CBID_RT_DEVICE_SYNC	165	/* cudaDeviceSynchronize */
#define CBID_DRV_STREAM_SYNC	126	/* cuStreamSynchronize */
#define FAKE_CUDA_BASE		0x7e0000000000ull
#define MS			1000000ull
#define T0			(100 * 1000 * MS)	/* 100 s: times below are ms after it */

static char gi_path[] = "/tmp/xpu-test-gpu-idle-XXXXXX";
static struct xpu_writer *w;
static uint32_t PID, T2, T3, PID_B;

/* ---- trace building ---------------------------------------------------------- */

static uint64_t fn(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 1;	/* a return address inside f */
}

static uint64_t at(double ms)
{
	return (uint64_t)((double)T0 + ms * (double)MS);
}

static void gi_maps(uint32_t pid, const char *comm)
{
	struct xpu_mmap cuda = { .time = T0 - 1000 * MS, .pid = pid, .tid = pid,
				 .start = FAKE_CUDA_BASE, .len = 0x100000, .prot = 5 };
	const char *cuda_path = "/nonexistent/libcuda.so.1";
	struct iovec iov[2];

	rt_write_maps_as(w, pid, T0 - 1000 * MS, comm);
	iov[0] = (struct iovec){ &cuda, sizeof(cuda) };
	iov[1] = (struct iovec){ (void *)cuda_path, strlen(cuda_path) + 1 };
	xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
}

static void gi_open(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
						 XPU_FEAT_GPU | XPU_FEAT_OFF_CPU };
	int fd;

	strcpy(gi_path, "/tmp/xpu-test-gpu-idle-XXXXXX");
	fd = mkstemp(gi_path);
	if (fd >= 0)
		close(fd);
	w = xpu_writer__open(gi_path, &wo);
	PID = (uint32_t)getpid();
	T2 = PID + 1000001;
	T3 = PID + 1000002;
	PID_B = PID + 2000000;
	xpu_writer__meta(w, "sample_freq", "1000");
	gi_maps(PID, "appA");
	gi_maps(PID_B, "appB");
}

/* A record with a stack part (fp mode): ips innermost first, 0-terminated. */
static void gi_stack(uint16_t type, void *fixed, size_t fixed_len, struct xpu_stack *st,
		     const uint64_t *ips)
{
	size_t n = 0;
	struct iovec iov[2];

	while (ips[n])
		n++;
	st->nr_user_ips = (uint16_t)n;
	iov[0] = (struct iovec){ fixed, fixed_len };
	iov[1] = (struct iovec){ (void *)ips, n * sizeof(*ips) };
	xpu_writer__addv(w, type, 0, iov, 2);
}

static void gi_sample(double ms, uint32_t pid, uint32_t tid, const uint64_t *ips)
{
	struct xpu_sample s = { .time = at(ms), .pid = pid, .tid = tid, .weight = 1 };

	gi_stack(XPU_REC_SAMPLE, &s, sizeof(s), &s.stack, ips);
}

/* Off CPU from `from` to `to` ms, off_ms of it blocked in futex(). */
static void gi_offcpu(double from, double to, double off_ms, uint32_t pid, uint32_t tid,
		      const uint64_t *ips)
{
	struct xpu_offcpu o = { .start = at(from), .end = at(to),
				.off_ns = (uint64_t)(off_ms * (double)MS), .pid = pid, .tid = tid,
				.state = 1, .flags = XPU_OFFCPU_SYSCALL, .syscall = 202 };

	gi_stack(XPU_REC_OFFCPU, &o, sizeof(o), &o.stack, ips);
}

static void gi_corr(double ms, uint32_t pid, uint32_t tid, uint64_t corr, uint32_t cbid,
		    const uint64_t *ips)
{
	struct xpu_gpu_corr c = { .time = at(ms), .pid = pid, .tid = tid,
				  .domain = XPU_API_RUNTIME, .correlation_id = corr, .cbid = cbid };
	uint64_t full[16] = { FAKE_CUDA_BASE + 0x10 };	/* inside libcuda: cut there */
	size_t n = 0;

	while (ips[n] && n < 14) {
		full[n + 1] = ips[n];
		n++;
	}
	gi_stack(XPU_REC_GPU_CORR, &c, sizeof(c), &c.stack, full);
}

static void gi_api(uint32_t pid, uint32_t tid, uint64_t corr, uint32_t domain, uint32_t cbid,
		   double from, double to)
{
	struct xpu_gpu_api a = { .start = at(from), .end = at(to), .correlation_id = corr,
				 .pid = pid, .tid = tid, .domain = domain, .cbid = cbid };

	xpu_writer__add(w, XPU_REC_GPU_API, &a, sizeof(a));
}

static void gi_string(uint32_t pid, uint32_t id, const char *str)
{
	struct xpu_string s = { .pid = pid, .id = id };
	struct iovec iov[2] = { { &s, sizeof(s) }, { (void *)str, strlen(str) + 1 } };

	xpu_writer__addv(w, XPU_REC_STRING, 0, iov, 2);
}

static void gi_kernel(uint32_t pid, uint64_t corr, uint32_t name_id, uint32_t device,
		      uint32_t context, uint32_t stream, double from, double to)
{
	struct xpu_gpu_kernel k = { .start = at(from), .end = at(to), .correlation_id = corr,
				    .pid = pid, .name_id = name_id, .device = device,
				    .context = context, .stream = stream };

	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

static void gi_memcpy(uint32_t pid, uint64_t corr, uint32_t device, uint32_t context,
		      uint32_t stream, uint32_t kind, double from, double to)
{
	struct xpu_gpu_memcpy m = { .start = at(from), .end = at(to), .correlation_id = corr,
				    .bytes = 4096, .pid = pid, .device = device,
				    .context = context, .stream = stream, .copy_kind = kind };

	xpu_writer__add(w, XPU_REC_GPU_MEMCPY, &m, sizeof(m));
}

static void gi_sync(uint32_t pid, uint64_t corr, uint32_t type, uint32_t context,
		    uint32_t stream, double from, double to)
{
	struct xpu_gpu_sync y = { .start = at(from), .end = at(to), .correlation_id = corr,
				  .pid = pid, .type = type, .context = context, .stream = stream,
				  .event = UINT32_MAX };

	xpu_writer__add(w, XPU_REC_GPU_SYNC, &y, sizeof(y));
}

/* ---- running the report -------------------------------------------------------- */

struct gi_report {
	struct session s;
	struct gpu_idle *gi;
	struct gpu_sync_wait *sw;
};

static int gi_run(struct gi_report *r, bool from_start, const struct filter *f)
{
	if (xpu_writer__close(w))
		return -1;
	w = NULL;
	if (session__open(&r->s, gi_path))
		return -1;
	if (f)
		r->s.filter = *f;
	gpu_join__attach(&r->s);
	r->gi = gpu_idle__attach(&r->s, from_start);
	r->sw = gpu_sync_wait__attach(&r->s);
	if (session__pass1(&r->s) || session__pass2(&r->s))
		return -1;
	return 0;
}

static void gi_done(struct gi_report *r)
{
	if (r->s.reader) {
		memset(&r->s.filter, 0, sizeof(r->s.filter));	/* owned by the caller */
		session__close(&r->s);
	}
	unlink(gi_path);
}

/* The folded text of a stack (no comm). */
static void gi_text(const struct profile *p, uint32_t stack, char *text, size_t size)
{
	size_t n, len = 0;
	const uint32_t *fr = profile__stack(p, stack, &n);
	char buf[1024];

	text[0] = '\0';
	for (size_t j = 0; j < n; j++) {
		folded__frame(profile__frame(p, fr[j]), buf, sizeof(buf));
		len += (size_t)snprintf(text + len, size - len, "%s%s", j ? ";" : "", buf);
	}
}

/* Weight of the entries of origin whose folded stack is want (tid ~0u: any). */
static double gi_weight(struct gi_report *r, const char *want, enum entry_origin origin,
			uint32_t tid)
{
	const struct profile *p = &r->s.profile;
	double sum = 0;
	char text[4096];

	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];

		if (e->origin != origin || (tid != ~0u && e->tid != tid))
			continue;
		gi_text(p, e->stack, text, sizeof(text));
		if (!strcmp(text, want))
			sum += e->weight;
	}
	return sum;
}

/* Weight of the entries of origin, of thread tid (~0u: any), whose stack
 * starts with prefix. */
static double gi_weight_prefix(struct gi_report *r, const char *prefix,
			       enum entry_origin origin, uint32_t tid)
{
	const struct profile *p = &r->s.profile;
	double sum = 0;
	char text[4096];

	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];

		if (e->origin != origin || (tid != ~0u && e->tid != tid))
			continue;
		gi_text(p, e->stack, text, sizeof(text));
		if (!strncmp(text, prefix, strlen(prefix)))
			sum += e->weight;
	}
	return sum;
}

static char *gi_header(struct gi_report *r, int (*print)(const struct session *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	print(&r->s, fp);
	fclose(fp);
	return buf;
}

#define TEST_ASSERT_NEAR(a, b) TEST_ASSERT(fabs((double)(a) - (double)(b)) <= 1e-6 * (1 + fabs((double)(b))))

static const uint64_t *ips_load, *ips_wait, *ips_other, *ips_a, *ips_b, *ips_by, *ips_step;

static void gi_stacks(void)
{
	static uint64_t load[3], wait[3], other[3], a[3], b[3], by[3], step[3];

	load[0] = fn(gi_load), load[1] = fn(gi_main);
	wait[0] = fn(gi_wait), wait[1] = fn(gi_main);
	other[0] = fn(gi_other), other[1] = fn(gi_main);
	a[0] = fn(gi_launch_a), a[1] = fn(gi_main);
	b[0] = fn(gi_launch_b), b[1] = fn(gi_main);
	by[0] = fn(gi_bystander), by[1] = fn(gi_main);
	step[0] = fn(gi_step), step[1] = fn(gi_main);
	ips_load = load, ips_wait = wait, ips_other = other, ips_a = a, ips_b = b;
	ips_by = by, ips_step = step;
}

/*
 * Device 0 (all launched by PID), ms: kernels [0,10) and [5,12) overlapping,
 * [20,25), a copy [30,31), kernels [40,45), [50,52): busy 25 of 52, gaps
 * [12,20) [25,30) [31,40) [45,50). Device 1: [0,2) launched by T2, [10,12)
 * by PID: gap [2,10).
 */
static void gi_idle_trace(void)
{
	gi_open();
	gi_string(PID, 1, "_Z4gemmv");
	gi_string(PID, 2, "_Z4reluv");
	gi_corr(-1, PID, PID, 1, CBID_RT_LAUNCH, ips_a);
	gi_corr(-1, PID, PID, 2, CBID_RT_LAUNCH, ips_a);
	gi_corr(-1, PID, PID, 3, CBID_RT_LAUNCH, ips_a);
	gi_corr(-1, PID, PID, 4, CBID_RT_MEMCPY, ips_a);
	gi_corr(-1, PID, PID, 5, CBID_RT_LAUNCH, ips_a);
	gi_corr(-1, PID, PID, 6, CBID_RT_LAUNCH, ips_a);
	gi_corr(-1, PID, T2, 7, CBID_RT_LAUNCH, ips_b);
	gi_corr(-1, PID, PID, 8, CBID_RT_LAUNCH, ips_a);
	gi_kernel(PID, 1, 1, 0, 1, 7, 0, 10);
	gi_kernel(PID, 2, 2, 0, 1, 7, 5, 12);
	gi_kernel(PID, 3, 1, 0, 1, 7, 20, 25);
	gi_memcpy(PID, 4, 0, 1, 7, XPU_MEMCPY_HTOD, 30, 31);
	gi_kernel(PID, 5, 1, 0, 1, 7, 40, 45);
	gi_kernel(PID, 6, 2, 0, 1, 7, 50, 52);
	gi_kernel(PID, 7, 1, 1, 2, 9, 0, 2);
	gi_kernel(PID, 8, 1, 1, 2, 9, 10, 12);
	/* T3 calls CUDA (a sync) but launches nothing: never charged */
	gi_api(PID, T3, 99, XPU_API_RUNTIME, CBID_RT_STREAM_SYNC, 60, 61);

	/* device 1's gap [2,10): PID on CPU in [2,6), T2 in [2,10) */
	for (int t = 3; t <= 6; t++)
		gi_sample(t, PID, PID, ips_a);
	for (int t = 3; t <= 10; t++)
		gi_sample(t, PID, T2, ips_b);
	/* device 0: [12,20) on CPU loading; [25,30) inside an off-CPU block
	 * [24,31]; [31,40) two samples [32,34); [45,50) nothing at all */
	for (int t = 13; t <= 20; t++) {
		gi_sample(t, PID, PID, ips_load);
		gi_sample(t, PID, T3, ips_by);		/* not a launcher */
	}
	for (int t = 13; t <= 15; t++)
		gi_sample(t, PID, T2, ips_b);		/* launcher of device 1 only */
	gi_offcpu(24, 31, 7, PID, PID, ips_wait);
	for (int t = 26; t <= 29; t++)
		gi_sample(t, PID, T3, ips_by);
	gi_sample(33, PID, PID, ips_other);
	gi_sample(34, PID, PID, ips_other);
}

static void test_idle_charging(void)
{
	struct gi_report r = { 0 };
	const struct gpu_idle_device *d0, *d1;
	char *hdr;

	gi_idle_trace();
	TEST_ASSERT_EQ(gi_run(&r, false, NULL), 0);
	TEST_ASSERT_EQ(gpu_idle__nr_devices(r.gi), 2);
	d0 = gpu_idle__device(r.gi, 0);
	d1 = gpu_idle__device(r.gi, 1);
	TEST_ASSERT_EQ(d0->device, 0);
	TEST_ASSERT_EQ(d0->busy_ns, 25 * MS);
	TEST_ASSERT_EQ(d0->idle_ns, 27 * MS);
	TEST_ASSERT_EQ(d0->nr_gaps, 4);
	TEST_ASSERT_EQ(d0->nr_launchers, 1);
	TEST_ASSERT_NEAR(d0->charged_ns, 15 * MS);
	TEST_ASSERT_NEAR(d0->unexplained_ns, 12 * MS);
	TEST_ASSERT_EQ(d1->device, 1);
	TEST_ASSERT_EQ(d1->busy_ns, 4 * MS);
	TEST_ASSERT_EQ(d1->idle_ns, 8 * MS);
	TEST_ASSERT_EQ(d1->nr_launchers, 2);

	/* [12,20): the 8 samples' periods cover it exactly */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_load", ORIGIN_GPU_IDLE, PID), 8);
	/* [25,30) inside the off-CPU block: its overlap */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_wait;[off-cpu] sys_futex",
				   ORIGIN_GPU_IDLE, PID), 5);
	/* [31,40): [32,34) sampled, the rest and all of [45,50) unexplained */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_other", ORIGIN_GPU_IDLE, PID), 2);
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];[no CPU activity recorded]",
				   ORIGIN_GPU_IDLE, 0), 12);
	/* device 1's [2,10), ended by PID's launch (the critical path): [2,6)
	 * PID's alone though T2 ran too, [6,10) T2's (PID has no event there) */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev1];gi_main;gi_launch_a", ORIGIN_GPU_IDLE, PID), 4);
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev1];gi_main;gi_launch_b", ORIGIN_GPU_IDLE, T2), 4);
	TEST_ASSERT_NEAR(gi_weight_prefix(&r, "[GPU idle dev1];[no", ORIGIN_GPU_IDLE, ~0u), 0);
	/* the bystander T3 and T2 outside device 1 get nothing */
	TEST_ASSERT_NEAR(gi_weight_prefix(&r, "", ORIGIN_GPU_IDLE, T3), 0);
	TEST_ASSERT_NEAR(gi_weight_prefix(&r, "[GPU idle dev0]", ORIGIN_GPU_IDLE, T2), 0);
	/* every idle ms is charged exactly once */
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU_IDLE], 27 + 8);
	TEST_ASSERT_NEAR(profile__total(&r.s.profile, VIEW_GPU_IDLE), 35);
	/* the samples themselves are untouched */
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_CPU], 4 + 8 + 16 + 3 + 4 + 2);

	hdr = gi_header(&r, gpu_idle__header);
	TEST_ASSERT(strstr(hdr, "device 0: busy 48.1% of 52.000 ms, idle 27.000 ms, 4 gaps\n"
			   "#     idle causes (what its 1 launching thread did):\n") != NULL);
	TEST_ASSERT(strstr(hdr, "device 1: busy 33.3% of 12.000 ms, idle 8.000 ms, 1 gaps\n"
			   "#     idle causes (what its 2 launching threads did):\n") != NULL);
	/* causes by leaf, heaviest first, in % of the charged idle time */
	TEST_ASSERT(strstr(hdr, "#      44.4%     12.000 ms  [no CPU activity recorded]\n"
			   "#      29.6%      8.000 ms  gi_load  ") != NULL);
	TEST_ASSERT(strstr(hdr, "#      18.5%      5.000 ms  [off-cpu] sys_futex\n"
			   "#       7.4%      2.000 ms  gi_other  ") != NULL);
	TEST_ASSERT(strstr(hdr, "#      50.0%      4.000 ms  gi_launch_b  ") != NULL);
	free(hdr);
	gi_done(&r);
}

/* Work CUPTI had not timed when its buffers were flushed (a detach's forced
 * flush on the GPU machine): a start of 0 or ~0 made device 0 "busy 0.0% of
 * 18446744073709.551 ms" (from 0 to ~0). Such records are left out, counted
 * in --header; the device's numbers are those of the timed work. */
static void test_idle_untimed(void)
{
	struct gi_report r = { 0 };
	const struct gpu_idle_device *d0;
	struct xpu_gpu_kernel k = { .correlation_id = 1, .pid = 0, .name_id = 1, .device = 0,
				    .context = 1, .stream = 7 };
	char *hdr;

	gi_idle_trace();
	k.pid = PID;
	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));		/* 0 .. 0 */
	k.start = k.end = UINT64_MAX;
	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));		/* ~0 .. ~0 */
	k.start = at(60), k.end = UINT64_MAX;
	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));		/* started, never ended */
	TEST_ASSERT_EQ(gi_run(&r, false, NULL), 0);
	d0 = gpu_idle__device(r.gi, 0);
	TEST_ASSERT_EQ(d0->busy_ns, 25 * MS);
	TEST_ASSERT_EQ(d0->idle_ns, 27 * MS);
	TEST_ASSERT_EQ(gpu_join__stats(gpu_join__find(&r.s))->acts_no_time, 3);
	hdr = gi_header(&r, gpu__header);
	TEST_ASSERT(strstr(hdr, "left out: 3\n") != NULL);
	free(hdr);
	hdr = gi_header(&r, gpu_idle__header);
	TEST_ASSERT(strstr(hdr, "device 0: busy 48.1% of 52.000 ms, idle 27.000 ms, 4 gaps\n"));
	free(hdr);
	gi_done(&r);
}

/* --tid keeps the chosen thread's share; --time clips the gaps. */
static void test_idle_filters(void)
{
	struct gi_report r = { 0 };
	struct filter f = { 0 };

	gi_idle_trace();
	TEST_ASSERT_EQ(filter__parse_ids(&f.tids, &f.nr_tids, "1"), 0);
	f.tids[0] = T2;
	TEST_ASSERT_EQ(gi_run(&r, false, &f), 0);
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev1];gi_main;gi_launch_b", ORIGIN_GPU_IDLE, T2), 8);
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU_IDLE], 8);	/* no tid 0 entries */
	/* the devices' numbers do not depend on the filters */
	TEST_ASSERT_EQ(gpu_idle__device(r.gi, 0)->idle_ns, 27 * MS);
	gi_done(&r);
	filter__exit(&f);

	/* --time 100.014,100.028: s after the first record, which is at -1000 ms */
	memset(&f, 0, sizeof(f));
	gi_idle_trace();
	TEST_ASSERT_EQ(filter__parse_time(&f, "1.014,1.028"), 0);
	TEST_ASSERT_EQ(gi_run(&r, false, &f), 0);
	/* [14,20) of the samples at 15..20 (the one at 14 covers [13,14)) */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_load", ORIGIN_GPU_IDLE, PID), 6);
	/* [25,28) of the off-CPU block [24,31] (kept: it starts in the window) */
	TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_wait;[off-cpu] sys_futex",
				   ORIGIN_GPU_IDLE, PID), 3);
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU_IDLE], 9);
	gi_done(&r);
	filter__exit(&f);
}

/*
 * Within one thread, events that cover the same instant share it by density:
 * a coalesced off-CPU record [1,11] with 5 of its 10 ms off CPU (density 0.5)
 * and samples covering [1,6). --idle-from-start adds [first CPU event, first
 * GPU work).
 */
static void test_idle_density_and_from_start(void)
{
	for (int from_start = 0; from_start < 2; from_start++) {
		struct gi_report r = { 0 };

		gi_open();
		gi_string(PID_B, 1, "k");
		gi_corr(-10, PID_B, PID_B, 1, CBID_RT_LAUNCH, ips_a);
		gi_corr(-10, PID_B, PID_B, 2, CBID_RT_LAUNCH, ips_a);
		gi_kernel(PID_B, 1, 1, 0, 1, 7, 0, 1);
		gi_kernel(PID_B, 2, 1, 0, 1, 7, 11, 12);
		gi_sample(-3, PID_B, PID_B, ips_other);	/* first CPU event: covers [-4,-3) */
		gi_sample(-1, PID_B, PID_B, ips_other);	/* covers [-2,-1) */
		gi_offcpu(1, 11, 5, PID_B, PID_B, ips_wait);
		for (int t = 2; t <= 6; t++)
			gi_sample(t, PID_B, PID_B, ips_load);
		TEST_ASSERT_EQ(gi_run(&r, from_start, NULL), 0);
		/* [1,6): sample 1 : off-CPU 0.5 -> 2/3 and 1/3 of 5 ms; [6,11) off-CPU */
		TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_load", ORIGIN_GPU_IDLE,
					   PID_B), 10.0 / 3);
		TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_wait;[off-cpu] sys_futex",
					   ORIGIN_GPU_IDLE, PID_B), 5 + 5.0 / 3);
		if (!from_start) {
			TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU_IDLE], 10);
			TEST_ASSERT_EQ(gpu_idle__device(r.gi, 0)->idle_ns, 10 * MS);
		} else {
			/* [-3,0): [-2,-1) sampled, 2 ms unexplained */
			TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];gi_main;gi_other",
						   ORIGIN_GPU_IDLE, PID_B), 1);
			TEST_ASSERT_NEAR(gi_weight(&r, "[GPU idle dev0];[no CPU activity recorded]",
						   ORIGIN_GPU_IDLE, 0), 2);
			TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_GPU_IDLE], 13);
			TEST_ASSERT_EQ(gpu_idle__device(r.gi, 0)->idle_ns, 13 * MS);
			TEST_ASSERT_EQ(gpu_idle__device(r.gi, 0)->nr_gaps, 2);
		}
		gi_done(&r);
	}
}

/*
 * Sync waits of one thread (ms):
 *  [100,110) cudaStreamSynchronize on stream 7: kernel a [95,104), b [104,107)
 *            on it, c [100,110) on stream 8 (not waited on): a 4, b 3, nothing 3
 *  [120,130) cudaDeviceSynchronize (context 1 = device 0): d [118,126) and e
 *            [122,124) on device 0, f [120,130) on device 1: d 5, e 1, nothing 4
 *  [140,145) cudaEventSynchronize, nothing runs: nothing 5
 *  [150,154) cudaMemcpy DtoH, its copy [152,154) after kernel g [149,152):
 *            g 2, copy 2
 *  [160,165) cudaStreamSynchronize with a nested cuStreamSynchronize of
 *            another id [160.5,164.5): once, nothing 5
 *  [170,171) cudaStreamWaitEvent and cudaEventQuery: not waits
 *  [180,182) a sync record (StreamSynchronize) with a correlation record but
 *            no API record: nothing 2
 */
static void gi_sync_trace(void)
{
	gi_open();
	for (uint32_t i = 1; i <= 7; i++) {
		static const char *const names[] = { "", "_Z1av", "_Z1bv", "_Z1cv", "_Z1dv", "_Z1ev",
						     "_Z1fv", "_Z1gv" };

		gi_string(PID, i, names[i]);
	}
	gi_kernel(PID, 1, 1, 0, 1, 7, 95, 104);
	gi_kernel(PID, 2, 2, 0, 1, 7, 104, 107);
	gi_kernel(PID, 3, 3, 0, 1, 8, 100, 110);
	gi_api(PID, PID, 20, XPU_API_RUNTIME, CBID_RT_STREAM_SYNC, 100, 110);
	gi_sync(PID, 20, 3, 1, 7, 100.1, 109.9);
	gi_corr(100, PID, PID, 20, CBID_RT_STREAM_SYNC, ips_step);

	gi_kernel(PID, 4, 4, 0, 1, 7, 118, 126);
	gi_kernel(PID, 5, 5, 0, 1, 8, 122, 124);
	gi_kernel(PID, 6, 6, 1, 2, 9, 120, 130);
	gi_api(PID, PID, 30, XPU_API_RUNTIME, CBID_RT_DEVICE_SYNC, 120, 130);
	gi_sync(PID, 30, 4, 1, UINT32_MAX, 120.1, 129.9);
	gi_corr(120, PID, PID, 30, CBID_RT_DEVICE_SYNC, ips_step);

	gi_api(PID, PID, 40, XPU_API_RUNTIME, CBID_RT_EVENT_SYNC, 140, 145);
	gi_sync(PID, 40, 1, 1, UINT32_MAX, 140.1, 144.9);
	gi_corr(140, PID, PID, 40, CBID_RT_EVENT_SYNC, ips_step);

	gi_kernel(PID, 7, 7, 0, 1, 7, 149, 152);
	gi_api(PID, PID, 50, XPU_API_RUNTIME, CBID_RT_MEMCPY, 150, 154);
	gi_memcpy(PID, 50, 0, 1, 7, XPU_MEMCPY_DTOH, 152, 154);
	gi_corr(150, PID, PID, 50, CBID_RT_MEMCPY, ips_step);

	gi_api(PID, PID, 60, XPU_API_RUNTIME, CBID_RT_STREAM_SYNC, 160, 165);
	gi_api(PID, PID, 61, XPU_API_DRIVER, CBID_DRV_STREAM_SYNC, 160.5, 164.5);
	gi_sync(PID, 61, 3, 1, 7, 160.6, 164.4);
	gi_corr(160, PID, PID, 60, CBID_RT_STREAM_SYNC, ips_step);
	gi_corr(160.5, PID, PID, 61, CBID_RT_STREAM_SYNC, ips_step);

	gi_api(PID, PID, 70, XPU_API_RUNTIME, CBID_RT_WAIT_EVENT, 170, 171);
	gi_sync(PID, 70, 2, 1, 7, 170.1, 170.9);
	gi_corr(170, PID, PID, 70, CBID_RT_WAIT_EVENT, ips_step);
	gi_api(PID, PID, 71, XPU_API_RUNTIME, CBID_RT_EVENT_QUERY, 170, 171);
	gi_sync(PID, 71, 1, 1, UINT32_MAX, 170.1, 170.9);
	gi_corr(170, PID, PID, 71, CBID_RT_EVENT_QUERY, ips_step);

	gi_sync(PID, 80, 3, 1, 7, 180, 182);
	gi_corr(180, PID, PID, 80, CBID_RT_STREAM_SYNC, ips_step);
}

static void test_sync_wait(void)
{
	struct gi_report r = { 0 };
	const struct gpu_sync_wait_stats *st;
	char want[512], *hdr;

	gi_sync_trace();
	TEST_ASSERT_EQ(gi_run(&r, false, NULL), 0);
	st = gpu_sync_wait__stats(r.sw);

#define W(api, leaf) (snprintf(want, sizeof(want), "gi_main;gi_step;%s;[waits on] %s", api, leaf), \
		      gi_weight(&r, want, ORIGIN_SYNC_WAIT, PID))
	TEST_ASSERT_NEAR(W("cudaStreamSynchronize", "a()"), 4);
	TEST_ASSERT_NEAR(W("cudaStreamSynchronize", "b()"), 3);
	TEST_ASSERT_NEAR(W("cudaStreamSynchronize", "c()"), 0);
	/* 3 of the first call, 5 of the nested pair, 2 of the record-only one */
	TEST_ASSERT_NEAR(W("cudaStreamSynchronize", "nothing (GPU idle)"), 3 + 5 + 2);
	TEST_ASSERT_NEAR(W("cudaDeviceSynchronize", "d()"), 5);
	TEST_ASSERT_NEAR(W("cudaDeviceSynchronize", "e()"), 1);
	TEST_ASSERT_NEAR(W("cudaDeviceSynchronize", "f()"), 0);
	TEST_ASSERT_NEAR(W("cudaDeviceSynchronize", "nothing (GPU idle)"), 4);
	TEST_ASSERT_NEAR(W("cudaEventSynchronize", "nothing (GPU idle)"), 5);
	TEST_ASSERT_NEAR(W("cudaMemcpy", "g()"), 2);
	TEST_ASSERT_NEAR(W("cudaMemcpy", "[GPU_Memcpy DtoH]"), 2);
	TEST_ASSERT_NEAR(W("cudaMemcpy", "nothing (GPU idle)"), 0);
#undef W
	/* per call the weights sum to its duration: 10 + 10 + 5 + 4 + 5 + 2 */
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_SYNC_WAIT], 36);
	TEST_ASSERT_EQ(st->calls, 6);
	TEST_ASSERT_EQ(st->ns, 36 * MS);
	TEST_ASSERT_NEAR(st->work_ns, 17 * MS);
	TEST_ASSERT_NEAR(st->idle_ns, 19 * MS);
	TEST_ASSERT_EQ(st->nested, 1);
	TEST_ASSERT_EQ(st->from_sync_records, 1);
	TEST_ASSERT_EQ(st->sync_records, 7);
	TEST_ASSERT_EQ(st->sync_unmatched, 0);
	/* nothing else in the view: not the wait-event, the query, the launches */
	TEST_ASSERT_NEAR(profile__total(&r.s.profile, VIEW_SYNC_WAIT), 36);

	hdr = gi_header(&r, gpu_sync_wait__header);
	TEST_ASSERT(strstr(hdr, "#   6 calls, 36.000 ms: on GPU work 17.000 ms (47.2%), GPU idle "
			   "19.000 ms (52.8%)\n") != NULL);
	TEST_ASSERT(strstr(hdr, "#   cudaStreamSynchronize               2 calls       15.000 ms\n"
			   "#   cudaDeviceSynchronize               1 calls       10.000 ms\n")
		    != NULL);
	TEST_ASSERT(strstr(hdr, "#   (from sync records)                 1 calls        2.000 ms\n")
		    != NULL);
	TEST_ASSERT(strstr(hdr, "#   nested calls (counted once, in the outer call): 1\n") != NULL);
	TEST_ASSERT(strstr(hdr, "#   sync records without a CPU stack: 0 of 7\n") != NULL);
	free(hdr);
	gi_done(&r);
}

/* Sync records the join cannot give a stack: what --header says about them. */
static void test_sync_unmatched(void)
{
	struct gi_report r = { 0 };
	const struct gpu_sync_wait_stats *st;
	char *hdr;

	gi_open();
	gi_sync(PID, 90, 3, 1, 7, 10, 11);		/* nothing names it */
	gi_sync(PID, 0, 1, 1, UINT32_MAX, 12, 12.5);	/* correlation id 0 */
	gi_sync(PID, 91, 1, 1, UINT32_MAX, 13, 13.5);	/* a query, API record only */
	gi_api(PID, PID, 91, XPU_API_RUNTIME, CBID_RT_EVENT_QUERY, 13, 13.5);
	gi_sync(PID, 92, 1, 1, UINT32_MAX, 14, 14.5);
	gi_api(PID, PID, 92, XPU_API_RUNTIME, CBID_RT_EVENT_QUERY, 14, 14.5);
	TEST_ASSERT_EQ(gi_run(&r, false, NULL), 0);
	st = gpu_sync_wait__stats(r.sw);
	TEST_ASSERT_EQ(st->sync_records, 4);
	TEST_ASSERT_EQ(st->sync_unmatched, 4);
	TEST_ASSERT_EQ(st->unmatched_type[3], 1);
	TEST_ASSERT_EQ(st->unmatched_type[1], 3);
	TEST_ASSERT_EQ(st->unmatched_corr0, 1);
	TEST_ASSERT_EQ(st->unmatched_no_api, 2);
	TEST_ASSERT_EQ(st->nr_unmatched_apis, 1);
	/* the two with no API: waits of unknown callers; the queries: not waits */
	TEST_ASSERT_NEAR(gi_weight(&r, "[unknown CPU stack];[waits on] nothing (GPU idle)",
				   ORIGIN_SYNC_WAIT, 0), 1.5);
	TEST_ASSERT_NEAR(r.s.profile.total[ORIGIN_SYNC_WAIT], 1.5);
	hdr = gi_header(&r, gpu_sync_wait__header);
	TEST_ASSERT(strstr(hdr, "#   sync records without a CPU stack: 4 of 4 (EventSynchronize 3, "
			   "StreamSynchronize 1); correlation id 0: 1; API: cudaEventQuery 2, "
			   "no API record 2\n") != NULL);
	free(hdr);
	gi_done(&r);
}

/* The options through report__run(): the tools are attached for their view
 * only, and --header always. */
static void test_report_run(void)
{
	struct report_opts o = { .view = VIEW_SYNC_WAIT };
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	gi_sync_trace();
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	w = NULL;
	o.input = gi_path;
	o.no_comm = true;
	fp = open_memstream(&out, &len);
	TEST_ASSERT_EQ(report__run(&output_folded, &o, fp), XPU_EXIT_OK);
	fclose(fp);
	TEST_ASSERT(!strcmp(out,
		"gi_main;gi_step;cudaDeviceSynchronize;[waits on] d() 5\n"
		"gi_main;gi_step;cudaDeviceSynchronize;[waits on] e() 1\n"
		"gi_main;gi_step;cudaDeviceSynchronize;[waits on] nothing (GPU idle) 4\n"
		"gi_main;gi_step;cudaEventSynchronize;[waits on] nothing (GPU idle) 5\n"
		"gi_main;gi_step;cudaMemcpy;[waits on] [GPU_Memcpy DtoH] 2\n"
		"gi_main;gi_step;cudaMemcpy;[waits on] g() 2\n"
		"gi_main;gi_step;cudaStreamSynchronize;[waits on] a() 4\n"
		"gi_main;gi_step;cudaStreamSynchronize;[waits on] b() 3\n"
		"gi_main;gi_step;cudaStreamSynchronize;[waits on] nothing (GPU idle) 10\n"));
	free(out);
	unlink(gi_path);

	gi_idle_trace();
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	w = NULL;
	o = (struct report_opts){ .view = VIEW_GPU_IDLE, .input = gi_path };
	out = NULL;
	fp = open_memstream(&out, &len);
	TEST_ASSERT_EQ(report__run(&output_folded, &o, fp), XPU_EXIT_OK);
	fclose(fp);
	TEST_ASSERT(!strcmp(out,
		"appA;[GPU idle dev0];[no CPU activity recorded] 12\n"
		"appA;[GPU idle dev0];gi_main;gi_load 8\n"
		"appA;[GPU idle dev0];gi_main;gi_other 2\n"
		"appA;[GPU idle dev0];gi_main;gi_wait;[off-cpu] sys_futex 5\n"
		"appA;[GPU idle dev1];gi_main;gi_launch_a 4\n"
		"appA;[GPU idle dev1];gi_main;gi_launch_b 4\n"));
	free(out);
	unlink(gi_path);
}

int main(void)
{
	gi_stacks();
	TEST_RUN(test_idle_charging);
	TEST_RUN(test_idle_untimed);
	TEST_RUN(test_idle_filters);
	TEST_RUN(test_idle_density_and_from_start);
	TEST_RUN(test_sync_wait);
	TEST_RUN(test_sync_unmatched);
	TEST_RUN(test_report_run);
	TEST_EXIT();
}
