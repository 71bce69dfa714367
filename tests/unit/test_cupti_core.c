// SPDX-License-Identifier: MIT
/*
 * The CUPTI library's parts that need no CUPTI: API selection, the channel
 * client (framing, message splitting, drop counting, dead and stalled peers),
 * name interning, NVTX range tracking, and the fake CUPTI library end to end
 * over a real socket.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "test.h"
#include "common/xalloc.h"
#include "test_cupti_server.h"
#include "cupti/walk/apis.h"
#include "cupti/activity/bufsize.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/nvtx/nvtx.h"
#include "cupti/nvtx/nvtx_ext.h"

static void test_apis_normalize(void)
{
	char out[64];

	xpu_apis__normalize("cudaLaunchKernel_v7000", out, sizeof(out));
	TEST_ASSERT(!strcmp(out, "cudaLaunchKernel"));
	xpu_apis__normalize("cudaLaunchKernel_ptsz_v7000", out, sizeof(out));
	TEST_ASSERT(!strcmp(out, "cudaLaunchKernel"));
	xpu_apis__normalize("cuMemcpyHtoDAsync_v2_ptsz", out, sizeof(out));
	TEST_ASSERT(!strcmp(out, "cuMemcpyHtoDAsync"));
	xpu_apis__normalize("cuLaunchKernel", out, sizeof(out));
	TEST_ASSERT(!strcmp(out, "cuLaunchKernel"));
	/* "_v" not followed only by digits is part of the name. */
	xpu_apis__normalize("cuFoo_vx", out, sizeof(out));
	TEST_ASSERT(!strcmp(out, "cuFoo_vx"));
	xpu_apis__normalize("cudaMemcpy_v3020", out, 5);
	TEST_ASSERT(!strcmp(out, "cuda"));
}

static void test_apis_default(void)
{
	static const char *yes[] = {
		"cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000",
		"cudaLaunchCooperativeKernel_v9000", "cudaLaunchKernelExC_v11060",
		"cudaGraphLaunch_v10000", "cudaMemcpy_v3020", "cudaMemcpyAsync_v3020",
		"cudaMemsetAsync_v3020", "cudaDeviceSynchronize_v3020",
		"cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
		"cudaStreamWaitEvent_v3020", "cuLaunchKernel", "cuLaunchKernelEx",
		"cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch", "cuMemcpyHtoD_v2",
		"cuMemsetD8_v2", "cuCtxSynchronize", "cuStreamSynchronize",
		/* queries: their completed calls have sync records (issue 9) */
		"cudaEventQuery_v3020", "cudaStreamQuery_v3020", "cuEventQuery",
		"cuStreamQuery_ptsz",
	};
	static const char *no[] = {
		"cudaMalloc_v3020", "cudaGetDevice_v3020", "cudaFree_v3020",
		"cuCtxGetCurrent", "cuMemAlloc_v2", "cudaStreamIsCapturing_v10000",
		"cudaEventRecord_v3020",
	};
	struct xpu_apis a;

	TEST_ASSERT_EQ(xpu_apis__parse(&a, NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!xpu_apis__match(&a, yes[i]))
			fprintf(stderr, "  not matched: %s\n", yes[i]);
		TEST_ASSERT(xpu_apis__match(&a, yes[i]));
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++) {
		if (xpu_apis__match(&a, no[i]))
			fprintf(stderr, "  matched: %s\n", no[i]);
		TEST_ASSERT(!xpu_apis__match(&a, no[i]));
	}
}

/* Queries are marked at their exit, when they succeed; nothing else is. */
static void test_apis_mark_at_exit(void)
{
	static const char *yes[] = { "cudaEventQuery_v3020", "cudaStreamQuery_ptsz_v7000",
				     "cuEventQuery", "cuStreamQuery_ptsz", "cuStreamQuery" };
	static const char *no[] = { "cudaEventSynchronize_v3020", "cudaStreamSynchronize_v3020",
				    "cudaLaunchKernel_v7000", "cuStreamWaitEvent",
				    "cudaEventQueryX", "cuCtxSynchronize" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		TEST_ASSERT(xpu_apis__mark_at_exit(yes[i]));
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		TEST_ASSERT(!xpu_apis__mark_at_exit(no[i]));
}

/* Graph node copies: instantiation, clone, exec update; not construction. */
static void test_apis_copies_graph(void)
{
	static const char *yes[] = { "cudaGraphInstantiate_v10000", "cudaGraphInstantiateWithFlags_v11040",
				     "cudaGraphClone_v10000", "cudaGraphExecUpdate_v10020",
				     "cuGraphInstantiateWithParams_ptsz", "cuGraphClone",
				     "cuGraphExecUpdate_v2" };
	static const char *no[] = { "cudaGraphAddKernelNode_v10000", "cudaGraphLaunch_v10000",
				    "cudaStreamBeginCapture_v10000", "cuGraphAddMemcpyNode",
				    "cudaLaunchKernel_v7000" };
	struct xpu_apis a;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		TEST_ASSERT(xpu_apis__copies_graph(yes[i]));
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		TEST_ASSERT(!xpu_apis__copies_graph(no[i]));
	/* graph construction is marked by default: its stack is the capture site */
	TEST_ASSERT_EQ(xpu_apis__parse(&a, NULL), 0);
	TEST_ASSERT(xpu_apis__match(&a, "cudaGraphAddKernelNode_v10000"));
	TEST_ASSERT(xpu_apis__match(&a, "cuGraphAddMemsetNode"));
	TEST_ASSERT(!xpu_apis__match(&a, "cudaGraphInstantiate_v10000"));
}

static void test_apis_custom(void)
{
	struct xpu_apis a;
	char big[XPU_APIS_SPEC_MAX + 10];

	TEST_ASSERT_EQ(xpu_apis__parse(&a, "cudaLaunchKernel, cuMemcpy*"), 0);
	TEST_ASSERT_EQ(a.n, 2);
	TEST_ASSERT(xpu_apis__match(&a, "cudaLaunchKernel_v7000"));
	TEST_ASSERT(!xpu_apis__match(&a, "cudaLaunchKernelExC_v11060"));
	TEST_ASSERT(xpu_apis__match(&a, "cuMemcpyDtoH_v2"));
	TEST_ASSERT(!xpu_apis__match(&a, "cudaMemcpy_v3020"));
	TEST_ASSERT_EQ(xpu_apis__parse(&a, ""), 0);
	TEST_ASSERT_EQ(a.n, 0);
	TEST_ASSERT(!xpu_apis__match(&a, "cudaLaunchKernel_v7000"));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	TEST_ASSERT(xpu_apis__parse(&a, big) < 0);
}

static int connect_pair(struct test_server *s, struct xpu_client *c, size_t max)
{
	int fd;

	if (test_server__open(s))
		return -1;
	xpu_client__init(c, 4242, max);
	if (xpu_client__connect(c, s->path))
		return -1;
	fd = accept(s->lfd, NULL, NULL);
	return fd;
}

static void test_client_roundtrip(void)
{
	struct test_server s;
	struct xpu_client c;
	struct xpu_record_header h;
	const uint8_t *body;
	uint64_t v = 0x1122334455667788ull;
	size_t off = 0;
	int fd = connect_pair(&s, &c, 0), n = 0;

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(xpu_client__meta(&c, "cupti.version", "130001"), 0);
	TEST_ASSERT_EQ(xpu_client__add(&c, XPU_REC_GPU_API, &v, 3), 0);	/* padded */
	TEST_ASSERT_EQ(xpu_client__flush(&c, 1000), 0);
	xpu_client__disconnect(&c);
	test_server__drain(&s, fd, 0);
	close(fd);
	TEST_ASSERT_EQ(s.bad_frames, 0);
	TEST_ASSERT_EQ(s.nr_msgs, 1);
	while (test__next(s.data, s.len, &off, &h, &body)) {
		if (n == 0) {
			TEST_ASSERT_EQ(h.type, XPU_REC_META);
			TEST_ASSERT(!strcmp((const char *)body, "cupti.version"));
			TEST_ASSERT(!strcmp((const char *)body + 14, "130001"));
		} else {
			TEST_ASSERT_EQ(h.type, XPU_REC_GPU_API);
			TEST_ASSERT_EQ(h.size, 16);
			TEST_ASSERT(!memcmp(body, &v, 3));
			TEST_ASSERT_EQ(body[3] | body[4] | body[7], 0);
		}
		n++;
	}
	TEST_ASSERT_EQ(n, 2);
	TEST_ASSERT_EQ(off, s.len);
	TEST_ASSERT_EQ(c.nr_sent, 2);
	TEST_ASSERT_EQ(c.nr_dropped, 0);
	xpu_client__exit(&c);
	test_server__close(&s);
}

/* More than XPU_CHANNEL_MAX_MSG queued: several messages, cut at records. */
static void test_client_split(void)
{
	struct test_server s;
	struct xpu_client c;
	struct xpu_gpu_kernel k = { 0 };
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	uint64_t n = 0, want = 3 * XPU_CHANNEL_MAX_MSG / (sizeof(k) + 8);
	int fd = connect_pair(&s, &c, 0);
	pid_t pid;

	TEST_ASSERT(fd >= 0);
	for (uint64_t i = 0; i < want; i++) {
		k.correlation_id = i;
		TEST_ASSERT_EQ(xpu_client__add(&c, XPU_REC_GPU_KERNEL, &k, sizeof(k)), 0);
	}
	/* The socket buffer is far smaller than 12 MiB: read concurrently. */
	fflush(NULL);	/* the child must not repeat our buffered output */
	pid = fork();
	if (pid == 0) {
		xpu_client__flush(&c, 5000);
		_exit(0);
	}
	xpu_client__disconnect(&c);
	test_server__drain(&s, fd, 0);
	close(fd);
	waitpid(pid, NULL, 0);
	TEST_ASSERT_EQ(s.bad_frames, 0);
	TEST_ASSERT(s.nr_msgs >= 3);
	while (test__next(s.data, s.len, &off, &h, &body)) {
		struct xpu_gpu_kernel got;

		TEST_ASSERT_EQ(h.type, XPU_REC_GPU_KERNEL);
		memcpy(&got, body, sizeof(got));
		TEST_ASSERT_EQ(got.correlation_id, n);
		n++;
	}
	TEST_ASSERT_EQ(n, want);
	xpu_client__exit(&c);
	test_server__close(&s);
}

/* A full queue drops and counts; the next flush reports the drops. */
static void test_client_drops(void)
{
	struct test_server s;
	struct xpu_client c;
	struct xpu_gpu_memset m = { 0 };
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int fd = connect_pair(&s, &c, 10 * (sizeof(m) + 8));
	int ok = 0, lost = 0, n_memset = 0;

	TEST_ASSERT(fd >= 0);
	for (int i = 0; i < 25; i++)
		ok += xpu_client__add(&c, XPU_REC_GPU_MEMSET, &m, sizeof(m)) == 0;
	TEST_ASSERT_EQ(ok, 10);
	TEST_ASSERT_EQ(c.nr_dropped, 15);
	TEST_ASSERT_EQ(xpu_client__flush(&c, 1000), 0);
	xpu_client__disconnect(&c);
	test_server__drain(&s, fd, 0);
	close(fd);
	while (test__next(s.data, s.len, &off, &h, &body)) {
		if (h.type == XPU_REC_LOST) {
			struct xpu_lost l;

			memcpy(&l, body, sizeof(l));
			TEST_ASSERT_EQ(l.source, XPU_LOST_GPU_CHANNEL);
			TEST_ASSERT_EQ(l.count, 15);
			TEST_ASSERT_EQ(l.pid, 4242);
			lost++;
		} else {
			n_memset += h.type == XPU_REC_GPU_MEMSET;
		}
	}
	TEST_ASSERT_EQ(lost, 1);
	TEST_ASSERT_EQ(n_memset, 10);
	TEST_ASSERT_EQ(c.dropped_unreported, 0);
	xpu_client__exit(&c);
	test_server__close(&s);
}

/* Recorder gone: flush fails without SIGPIPE, records are counted as dropped,
 * later adds and flushes stay harmless. */
static void test_client_dead_peer(void)
{
	struct test_server s;
	struct xpu_client c;
	uint64_t v = 1;
	int fd = connect_pair(&s, &c, 0);

	TEST_ASSERT(fd >= 0);
	close(fd);
	test_server__close(&s);
	signal(SIGPIPE, SIG_DFL);	/* a SIGPIPE would kill the test */
	for (int i = 0; i < 5; i++)
		xpu_client__add(&c, XPU_REC_GPU_API, &v, sizeof(v));
	TEST_ASSERT(xpu_client__flush(&c, 100) < 0);
	TEST_ASSERT_EQ(c.fd, -1);
	TEST_ASSERT_EQ(c.nr_dropped, 5);
	xpu_client__add(&c, XPU_REC_GPU_API, &v, sizeof(v));
	TEST_ASSERT(xpu_client__flush(&c, 100) < 0);
	TEST_ASSERT_EQ(c.nr_dropped, 6);
	xpu_client__exit(&c);
}

/* Recorder alive but not reading: the flush gives up after its timeout
 * instead of hanging the process, keeps the connection and loses nothing;
 * once the peer reads again, later flushes go on from the byte where the
 * first stopped (inside a message) and every record arrives in order. */
static void test_client_stalled_peer(void)
{
	struct test_server s;
	struct xpu_client c;
	struct xpu_gpu_kernel k = { 0 };
	struct xpu_record_header h;
	const uint8_t *body;
	struct timespec t0, t1;
	size_t off = 0;
	uint64_t n = 0;
	int fd = connect_pair(&s, &c, 0), rc;
	double ms;
	pid_t pid;

	TEST_ASSERT(fd >= 0);
	for (int i = 0; i < 100000; i++) {
		k.correlation_id = (uint64_t)i;
		xpu_client__add(&c, XPU_REC_GPU_KERNEL, &k, sizeof(k));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TEST_ASSERT_EQ(xpu_client__flush(&c, 100), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	TEST_ASSERT(ms < 2000);
	TEST_ASSERT(c.fd >= 0);
	TEST_ASSERT_EQ(c.nr_dropped, 0);
	TEST_ASSERT(c.wire_off > 0 && c.wire_off < c.wire_len);
	k.correlation_id = 100000;	/* queued while the first batch waits */
	xpu_client__add(&c, XPU_REC_GPU_KERNEL, &k, sizeof(k));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {		/* the client goes on; the parent reads */
		while ((rc = xpu_client__flush(&c, 1000)) == -ETIMEDOUT || c.len)
			;
		_exit(rc == 0 && c.nr_sent == 100001 && c.nr_dropped == 0 ? 0 : 1);
	}
	xpu_client__disconnect(&c);
	test_server__drain(&s, fd, 0);
	close(fd);
	TEST_ASSERT_EQ(waitpid(pid, &rc, 0), pid);
	TEST_ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
	TEST_ASSERT_EQ(s.bad_frames, 0);
	while (test__next(s.data, s.len, &off, &h, &body)) {
		struct xpu_gpu_kernel got;

		TEST_ASSERT_EQ(h.type, XPU_REC_GPU_KERNEL);
		memcpy(&got, body, sizeof(got));
		TEST_ASSERT_EQ(got.correlation_id, n);
		n++;
	}
	TEST_ASSERT_EQ(n, 100001);
	/* closing with records unsent counts them as dropped: this copy of
	 * the client (the child sent them) still holds the first batch and
	 * the one queued after it, and one more */
	xpu_client__add(&c, XPU_REC_GPU_KERNEL, &k, sizeof(k));
	TEST_ASSERT_EQ(xpu_client__close(&c), 100002);
	TEST_ASSERT_EQ(c.nr_dropped, 100002);
	TEST_ASSERT_EQ(c.fd, -1);
	xpu_client__exit(&c);
	test_server__close(&s);
}

/* The recorder's side of the ready message: the byte, then the flush
 * period when cfg_ms (bounded capture, wire.h). */
static int cfg_ms;
static void *send_ready(void *arg)
{
	struct test_server *s = arg;
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m = {
		XPU_CHANNEL_READY, { XPU_CHANNEL_CONFIG_MAGIC, (uint32_t)cfg_ms },
	};
	int fd = accept(s->lfd, NULL, NULL);

	if (fd >= 0 && send(fd, &m, cfg_ms ? sizeof(m) : 1, 0) < 0)
		perror("send");
	return (void *)(intptr_t)fd;
}

static void test_client_flush_config(void)
{
	for (int i = 0; i < 2; i++) {
		struct test_server s;
		struct xpu_client c;
		pthread_t t;
		void *fd;

		cfg_ms = i ? 250 : 0;
		TEST_ASSERT_EQ(test_server__open(&s), 0);
		TEST_ASSERT_EQ(pthread_create(&t, NULL, send_ready, &s), 0);
		xpu_client__init(&c, 4242, 0);
		TEST_ASSERT_EQ(xpu_client__connect(&c, s.path), 0);
		pthread_join(t, &fd);
		TEST_ASSERT_EQ(c.flush_ms, (uint32_t)cfg_ms);	/* the byte alone: none */
		close((int)(intptr_t)fd);
		xpu_client__exit(&c);
		test_server__close(&s);
	}
}

/* CUPTI's buffers: 4 MB without a period; with one, sized by the rate to
 * fill within it, from 16 KB to 4 MB. */
static void test_bufsize(void)
{
	struct xpu_bufsize b;
	uint64_t t = 1000000000ull;

	xpu_bufsize__init(&b, 0);
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), XPU_BUFSIZE_MAX);
	xpu_bufsize__done(&b, 100, t);
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), XPU_BUFSIZE_MAX);

	xpu_bufsize__init(&b, 200);
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), XPU_BUFSIZE_MIN);	/* no rate yet */
	xpu_bufsize__done(&b, 16384, t);
	xpu_bufsize__done(&b, 1000000, t + 200000000ull);	/* 5 MB/s */
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), 1000000u & ~7u);	/* a period's worth */
	xpu_bufsize__done(&b, 400000000, t + 400000000ull);	/* a burst: 2 GB/s */
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), XPU_BUFSIZE_MAX);
	xpu_bufsize__init(&b, 200);
	xpu_bufsize__done(&b, 16, t);
	xpu_bufsize__done(&b, 16, t + 300000000ull);		/* a trickle */
	TEST_ASSERT_EQ(xpu_bufsize__next(&b), XPU_BUFSIZE_MIN);
}

static void test_names(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int strings = 0;
	char name[64];

	xpu_client__init(&c, 7, 0);
	xpu_names__init(&n, 7);
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z1av"), 1);
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z1bv"), 2);
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z1av"), 1);
	/* Many names: the table grows and keeps every id. */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "kernel_%d", i);
		TEST_ASSERT_EQ(xpu_names__intern(&n, &c, name), i + 3);
	}
	for (int i = 0; i < 1000; i += 97) {
		snprintf(name, sizeof(name), "kernel_%d", i);
		TEST_ASSERT_EQ(xpu_names__intern(&n, &c, name), i + 3);
	}
	while (test__next(c.buf, c.len, &off, &h, &body)) {
		struct xpu_string s;

		TEST_ASSERT_EQ(h.type, XPU_REC_STRING);
		memcpy(&s, body, sizeof(s));
		TEST_ASSERT_EQ(s.pid, 7);
		TEST_ASSERT_EQ(s.id, strings + 1);
		if (s.id == 2)
			TEST_ASSERT(!strcmp((const char *)body + sizeof(s), "_Z1bv"));
		strings++;
	}
	TEST_ASSERT_EQ(strings, 1002);
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* A STRING dropped by a full queue is sent again with the next use. */
static void test_names_resend(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	uint64_t fill = 0;
	int strings = 0;

	xpu_client__init(&c, 7, 64);
	xpu_names__init(&n, 7);
	for (int i = 0; i < 4; i++)
		xpu_client__add(&c, XPU_REC_GPU_API, &fill, sizeof(fill));	/* 64 bytes: full */
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z6kernelv"), 1);
	TEST_ASSERT_EQ(c.nr_dropped, 1);
	c.len = 0;				/* as if flushed */
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z6kernelv"), 1);
	TEST_ASSERT_EQ(xpu_names__intern(&n, &c, "_Z6kernelv"), 1);
	while (test__next(c.buf, c.len, &off, &h, &body))
		strings += h.type == XPU_REC_STRING;
	TEST_ASSERT_EQ(strings, 1);
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* ---- NVTX range tracking (cupti/nvtx/nvtx.c) ------------------------------------ */

static struct { uint64_t id; uint32_t cbid, domain; } marks[256];
static int nr_marks;

static void test_marker(uint64_t id, uint32_t cbid, uint32_t domain)
{
	if (nr_marks < (int)ARRAY_SIZE(marks))
		marks[nr_marks] = (typeof(marks[0])){ id, cbid, domain };
	nr_marks++;
}

struct nv_rig {
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_nvtx nv;
};

static void nv_rig__init(struct nv_rig *r)
{
	xpu_client__init(&r->c, 7, 0);
	xpu_names__init(&r->n, 7);
	xpu_nvtx__init(&r->nv, &r->c, &r->n, 7, test_marker);
	nr_marks = 0;
}

static void nv_rig__exit(struct nv_rig *r)
{
	xpu_nvtx__exit(&r->nv);
	xpu_names__exit(&r->n);
	xpu_client__exit(&r->c);
}

/* The queued GPU_NVTX records in order (at most max), the STRING texts by id
 * (strs[id], up to 64) and the LOST counts of XPU_LOST_NVTX. */
static int nv_rig__records(struct nv_rig *r, struct xpu_gpu_nvtx *out, int max,
			   const char **strs, uint64_t *lost)
{
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int n = 0;

	if (lost)
		*lost = 0;
	while (test__next(r->c.buf, r->c.len, &off, &h, &body)) {
		if (h.type == XPU_REC_GPU_NVTX && n < max) {
			memcpy(&out[n++], body, sizeof(*out));
		} else if (h.type == XPU_REC_STRING && strs) {
			struct xpu_string st;

			memcpy(&st, body, sizeof(st));
			if (st.id < 64)
				strs[st.id] = (const char *)body + sizeof(st);
		} else if (h.type == XPU_REC_LOST && lost) {
			struct xpu_lost l;

			memcpy(&l, body, sizeof(l));
			if (l.source == XPU_LOST_NVTX)
				*lost += l.count;
		}
	}
	return n;
}

static struct xpu_nvtx_event nv_ev(struct nv_rig *r, uint64_t time, uint64_t domain,
				   const char *msg)
{
	return (struct xpu_nvtx_event){
		.time = time, .domain = domain, .domain_id = xpu_nvtx__domain_id(&r->nv, domain),
		.message_id = xpu_nvtx__intern(&r->nv, msg), .color = 0xff00ff00, .cbid = 8,
	};
}

/* Push/pop nest per thread and per domain; the marker gets every push. */
static void test_nvtx_nesting(void)
{
	struct nv_rig r;
	struct xpu_nvtx_thread *t;
	struct xpu_gpu_nvtx rec[8];
	struct xpu_nvtx_event ev;
	const char *strs[64] = { 0 };
	uint64_t outer, inner, x, y;

	nv_rig__init(&r);
	t = xpu_nvtx__thread_new(&r.nv, 100);
	TEST_ASSERT(t != NULL);
	ev = nv_ev(&r, 10, 0, "outer");
	outer = xpu_nvtx__push(t, &ev);
	ev = nv_ev(&r, 20, 0, "inner");
	inner = xpu_nvtx__push(t, &ev);
	TEST_ASSERT(outer && inner && inner != outer);
	TEST_ASSERT_EQ(nr_marks, 2);
	TEST_ASSERT_EQ(marks[1].id, inner);
	TEST_ASSERT_EQ(marks[1].cbid, 8);
	TEST_ASSERT_EQ(marks[1].domain, XPU_API_NVTX);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 30, 0), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 40, 0), 0);
	/* a pop with nothing open: pushed before we were called */
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 50, 0), -ENOENT);
	TEST_ASSERT_EQ(r.nv.nr_unmatched, 1);

	/* a domain's pop closes that domain's innermost push, not the top */
	xpu_nvtx__add_domain(&r.nv, 0xd1, "mydomain");
	ev = nv_ev(&r, 60, 0xd1, "x");
	TEST_ASSERT(ev.domain_id != 0);
	x = xpu_nvtx__push(t, &ev);
	ev = nv_ev(&r, 70, 0, "y");
	y = xpu_nvtx__push(t, &ev);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 80, 0xd1), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 90, 0), 0);

	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 8, strs, NULL), 4);
	TEST_ASSERT_EQ(rec[0].range_id, inner);
	TEST_ASSERT_EQ(rec[0].start, 20);
	TEST_ASSERT_EQ(rec[0].end, 30);
	TEST_ASSERT_EQ(rec[0].depth, 1);
	TEST_ASSERT_EQ(rec[0].flags, XPU_NVTX_PUSHPOP);
	TEST_ASSERT_EQ(rec[0].pid, 7);
	TEST_ASSERT_EQ(rec[0].tid, 100);
	TEST_ASSERT_EQ(rec[0].end_tid, 100);
	TEST_ASSERT_EQ(rec[0].color, 0xff00ff00);
	TEST_ASSERT(strs[rec[0].message_id] && !strcmp(strs[rec[0].message_id], "inner"));
	TEST_ASSERT_EQ(rec[1].range_id, outer);
	TEST_ASSERT_EQ(rec[1].depth, 0);
	TEST_ASSERT_EQ(rec[1].end, 40);
	TEST_ASSERT(!strcmp(strs[rec[1].message_id], "outer"));
	TEST_ASSERT_EQ(rec[2].range_id, x);
	TEST_ASSERT_EQ(rec[2].end, 80);
	TEST_ASSERT(!strcmp(strs[rec[2].domain_id], "mydomain"));
	TEST_ASSERT_EQ(rec[3].range_id, y);
	TEST_ASSERT_EQ(rec[3].domain_id, 0);
	TEST_ASSERT_EQ(rec[3].depth, 0);	/* depth counts its own domain */
	xpu_nvtx__thread_exit(t);
	nv_rig__exit(&r);
}

/* Past XPU_NVTX_MAX_DEPTH pushes are dropped and counted; their pops are
 * consumed first, so the ranges kept stay paired. */
static void test_nvtx_overflow(void)
{
	struct nv_rig r;
	struct xpu_nvtx_thread *t;
	struct xpu_gpu_nvtx rec[4];
	struct xpu_nvtx_event ev;
	uint64_t lost, kept = 0;

	nv_rig__init(&r);
	t = xpu_nvtx__thread_new(&r.nv, 5);
	ev = nv_ev(&r, 1, 0, "deep");
	for (int i = 0; i < XPU_NVTX_MAX_DEPTH + 3; i++)
		kept += xpu_nvtx__push(t, &ev) != 0;
	TEST_ASSERT_EQ(kept, XPU_NVTX_MAX_DEPTH);
	TEST_ASSERT_EQ(nr_marks, XPU_NVTX_MAX_DEPTH);
	TEST_ASSERT_EQ(r.nv.nr_lost, 3);
	for (int i = 0; i < 3; i++)
		TEST_ASSERT_EQ(xpu_nvtx__pop(t, 2, 0), 0);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 3, 0), 0);	/* the innermost kept one */
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 1);
	TEST_ASSERT_EQ(rec[0].depth, XPU_NVTX_MAX_DEPTH - 1);
	xpu_nvtx__report_lost(&r.nv);
	nv_rig__records(&r, rec, 4, NULL, &lost);
	TEST_ASSERT_EQ(lost, 3);
	xpu_nvtx__report_lost(&r.nv);			/* reported once */
	nv_rig__records(&r, rec, 4, NULL, &lost);
	TEST_ASSERT_EQ(lost, 3);
	xpu_nvtx__thread_exit(t);
	nv_rig__exit(&r);
}

/* Past the depth, a dropped push keeps its domain: another domain's pop
 * closes that domain's innermost kept push instead of consuming it (a pop
 * closes the innermost push of its own domain, as in NVTX); pushes while
 * one is dropped are dropped too, so LIFO holds. */
static void test_nvtx_overflow_domains(void)
{
	struct nv_rig r;
	struct xpu_nvtx_thread *t;
	struct xpu_gpu_nvtx rec[4];
	struct xpu_nvtx_event ev;

	nv_rig__init(&r);
	t = xpu_nvtx__thread_new(&r.nv, 5);
	xpu_nvtx__add_domain(&r.nv, 0xd1, "NCCL");
	ev = nv_ev(&r, 1, 0, "deep");
	for (int i = 0; i < XPU_NVTX_MAX_DEPTH; i++)
		TEST_ASSERT(xpu_nvtx__push(t, &ev) != 0);
	ev = nv_ev(&r, 2, 0xd1, "dropped");
	TEST_ASSERT_EQ(xpu_nvtx__push(t, &ev), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 3, 0), 0);	/* the innermost default one */
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 1);
	TEST_ASSERT_EQ(rec[0].end, 3);
	TEST_ASSERT_EQ(rec[0].domain_id, 0);
	/* room again, but a push newer than a dropped one is dropped too */
	ev = nv_ev(&r, 3, 0xd1, "after");
	TEST_ASSERT_EQ(xpu_nvtx__push(t, &ev), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 4, 0xd1), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 4, 0xd1), 0);	/* the dropped ones: nothing sent */
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 1);
	TEST_ASSERT_EQ(r.nv.nr_unmatched, 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 5, 0), 0);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 2);
	TEST_ASSERT_EQ(rec[1].end, 5);
	xpu_nvtx__thread_exit(t);
	nv_rig__exit(&r);
}

/* Start/end by NVTX's key, ended on another thread; marks are instants
 * without a marker call. */
static void test_nvtx_start_end_mark(void)
{
	struct nv_rig r;
	struct xpu_nvtx_thread *t1, *t2;
	struct xpu_gpu_nvtx rec[4];
	struct xpu_nvtx_event ev;
	uint64_t id;

	nv_rig__init(&r);
	t1 = xpu_nvtx__thread_new(&r.nv, 11);
	t2 = xpu_nvtx__thread_new(&r.nv, 22);
	ev = nv_ev(&r, 100, 0, "load");
	id = xpu_nvtx__start(t1, 555, &ev);
	TEST_ASSERT(id != 0);
	TEST_ASSERT_EQ(nr_marks, 1);
	TEST_ASSERT_EQ(marks[0].id, id);
	TEST_ASSERT_EQ(xpu_nvtx__end(t2, 150, 999), -ENOENT);
	TEST_ASSERT_EQ(xpu_nvtx__end(t2, 200, 555), 0);
	TEST_ASSERT_EQ(xpu_nvtx__end(t2, 201, 555), -ENOENT);	/* once */
	ev = nv_ev(&r, 300, 0, "tick");
	xpu_nvtx__mark(t2, &ev);
	TEST_ASSERT_EQ(nr_marks, 1);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 2);
	TEST_ASSERT_EQ(rec[0].range_id, id);
	TEST_ASSERT_EQ(rec[0].flags, XPU_NVTX_STARTEND);
	TEST_ASSERT_EQ(rec[0].tid, 11);
	TEST_ASSERT_EQ(rec[0].end_tid, 22);
	TEST_ASSERT_EQ(rec[0].start, 100);
	TEST_ASSERT_EQ(rec[0].end, 200);
	TEST_ASSERT_EQ(rec[1].flags, XPU_NVTX_MARK);
	TEST_ASSERT_EQ(rec[1].start, 300);
	TEST_ASSERT_EQ(rec[1].end, 300);
	TEST_ASSERT(rec[1].range_id != id);
	TEST_ASSERT_EQ(r.nv.nr_unmatched, 2);
	xpu_nvtx__thread_exit(t1);
	xpu_nvtx__thread_exit(t2);
	nv_rig__exit(&r);
}

static void *nvtx_thread_main(void *arg)
{
	struct nv_rig *r = arg;
	struct xpu_nvtx_thread *t = xpu_nvtx__self(&r->nv);
	struct xpu_nvtx_event ev = nv_ev(r, 7, 0, "left open by a thread");

	xpu_nvtx__push(t, &ev);
	return (void *)(uintptr_t)t->tid;	/* exits with the range open */
}

/* Ranges never closed go out with end 0: at thread exit (its own state,
 * made on first use) and at finish; nothing after finish. */
static void test_nvtx_never_closed(void)
{
	struct nv_rig r;
	struct xpu_nvtx_thread *t;
	struct xpu_gpu_nvtx rec[4];
	struct xpu_nvtx_event ev;
	pthread_t th;
	void *tid;

	nv_rig__init(&r);
	TEST_ASSERT_EQ(pthread_create(&th, NULL, nvtx_thread_main, &r), 0);
	pthread_join(th, &tid);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 1);
	TEST_ASSERT_EQ(rec[0].end, 0);
	TEST_ASSERT_EQ(rec[0].start, 7);
	TEST_ASSERT_EQ(rec[0].tid, (uint32_t)(uintptr_t)tid);
	TEST_ASSERT(rec[0].tid != (uint32_t)getpid());
	TEST_ASSERT(r.nv.threads == NULL);		/* freed and unlinked */

	t = xpu_nvtx__thread_new(&r.nv, 33);
	ev = nv_ev(&r, 10, 0, "a");
	xpu_nvtx__push(t, &ev);
	ev = nv_ev(&r, 20, 0, "b");
	xpu_nvtx__start(t, 1, &ev);
	xpu_nvtx__finish(&r.nv);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 3);
	TEST_ASSERT_EQ(rec[1].end, 0);
	TEST_ASSERT_EQ(rec[1].flags, XPU_NVTX_PUSHPOP);
	TEST_ASSERT_EQ(rec[2].end, 0);
	TEST_ASSERT_EQ(rec[2].flags, XPU_NVTX_STARTEND);
	TEST_ASSERT_EQ(xpu_nvtx__push(t, &ev), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 30, 0), 0);
	xpu_nvtx__finish(&r.nv);
	xpu_nvtx__thread_exit(t);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 4, NULL, NULL), 3);
	nv_rig__exit(&r);
}

typedef int (*ext_pushpop_fn)(const void *, const void *, size_t);
typedef uint64_t (*ext_start_fn)(const void *, const void *, size_t);
typedef void (*ext_end_fn)(const void *, uint64_t, const void *, size_t);

static intptr_t ext_slots[63];

static void nvtx_ext_calls(struct nv_rig *r)
{
	intptr_t *slots = ext_slots;
	struct xpu_nvtx_thread *t = xpu_nvtx__self(&r->nv);
	struct xpu_nvtx_event ev;
	uint64_t key;

	/* NCCL: pushed by nvtxDomainRangePushEx (CUPTI), then a default-domain
	 * range inside, popped by nvtxRangePopPayload */
	ev = nv_ev(r, 10, 0xd1, "ncclCommInitRankConfig");
	TEST_ASSERT(xpu_nvtx__push(t, &ev) != 0);
	ev = nv_ev(r, 20, 0, "inner");
	xpu_nvtx__push(t, &ev);
	TEST_ASSERT_EQ(((ext_pushpop_fn)slots[XPU_NVTX_EXT_POP])((void *)0xd1, NULL, 0), 0);
	TEST_ASSERT_EQ(xpu_nvtx__pop(t, 40, 0), 0);
	/* a payload push in the domain, its marker call, a payload pop */
	nr_marks = 0;
	((ext_pushpop_fn)slots[XPU_NVTX_EXT_PUSH])((void *)0xd1, NULL, 0);
	TEST_ASSERT_EQ(nr_marks, 1);
	TEST_ASSERT_EQ(marks[0].cbid, XPU_NVTX_EXT_CBID_PUSH);
	((ext_pushpop_fn)slots[XPU_NVTX_EXT_POP])((void *)0xd1, NULL, 0);
	key = ((ext_start_fn)slots[XPU_NVTX_EXT_START])((void *)0xd1, NULL, 0);
	TEST_ASSERT(key & XPU_NVTX_EXT_KEY_BIT);
	((ext_end_fn)slots[XPU_NVTX_EXT_END])((void *)0xd1, key, NULL, 0);
	TEST_ASSERT_EQ(r->nv.nr_unmatched, 0);
	TEST_ASSERT_EQ(r->nv.nr_started, 0);
}

static void *nvtx_ext_thread(void *arg)
{
	nvtx_ext_calls(arg);
	return NULL;
}

/* NVTX's payload extension: InitializeInjectionNvtxExtension fills the
 * payload module's push, pop, start and end slots (those its version has),
 * no other module's; the handlers do nothing until attached, then a payload
 * pop closes the innermost push of its domain on the calling thread (what
 * NCCL's nvtxRangePopPayload needs), and a payload start/end pair by the
 * id the start returned. */
static void test_nvtx_ext(void)
{
	intptr_t *slots = ext_slots, old[2] = { 0 }, other[8] = { 0 };
	struct xpu_nvtx_ext_segment seg = { 0, 63, slots };
	struct xpu_nvtx_ext_module m = { 3, sizeof(m), XPU_NVTX_EXT_PAYLOAD_MODULE, 0x0104, 1,
					 &seg, NULL, NULL };
	struct xpu_nvtx_ext_segment seg_old = { 0, 2, old }, seg_other = { 0, 8, other };
	struct xpu_nvtx_ext_module m_old = m, m_other = m;
	struct xpu_gpu_nvtx rec[8];
	const char *strs[64] = { 0 };
	struct nv_rig r;
	pthread_t th;

	TEST_ASSERT_EQ(xpu_nvtx_ext__init(&m), 1);
	for (int i = 0; i < 63; i++)
		TEST_ASSERT_EQ(slots[i] != 0, i >= XPU_NVTX_EXT_PUSH && i <= XPU_NVTX_EXT_END);
	m_old.segments = &seg_old;
	TEST_ASSERT_EQ(xpu_nvtx_ext__init(&m_old), 1);
	TEST_ASSERT(!old[0] && !old[1]);
	m_other.module_id = 3;		/* another extension: left alone */
	m_other.segments = &seg_other;
	TEST_ASSERT_EQ(xpu_nvtx_ext__init(&m_other), 1);
	for (int i = 0; i < 8; i++)
		TEST_ASSERT_EQ(other[i], 0);
	TEST_ASSERT_EQ(xpu_nvtx_ext__init(NULL), 0);

	nv_rig__init(&r);
	/* not attached: nothing recorded */
	((ext_pushpop_fn)slots[XPU_NVTX_EXT_PUSH])((void *)0xd1, NULL, 0);
	((ext_pushpop_fn)slots[XPU_NVTX_EXT_POP])((void *)0xd1, NULL, 0);
	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 8, NULL, NULL), 0);
	TEST_ASSERT_EQ(r.nv.nr_unmatched, 0);

	xpu_nvtx_ext__attach(&r.nv);
	xpu_nvtx__add_domain(&r.nv, 0xd1, "NCCL");
	/* on a thread of its own: its state goes with it */
	TEST_ASSERT_EQ(pthread_create(&th, NULL, nvtx_ext_thread, &r), 0);
	pthread_join(th, NULL);
	TEST_ASSERT_EQ(r.nv.nr_unmatched, 0);
	TEST_ASSERT_EQ(r.nv.nr_started, 0);
	xpu_nvtx_ext__attach(NULL);

	TEST_ASSERT_EQ(nv_rig__records(&r, rec, 8, strs, NULL), 4);
	TEST_ASSERT(!strcmp(strs[rec[0].message_id], "ncclCommInitRankConfig"));
	TEST_ASSERT(rec[0].end >= rec[0].start && rec[0].end != 0);
	TEST_ASSERT(!strcmp(strs[rec[0].domain_id], "NCCL"));
	TEST_ASSERT(!strcmp(strs[rec[1].message_id], "inner"));
	TEST_ASSERT_EQ(rec[1].end, 40);
	TEST_ASSERT(!strcmp(strs[rec[2].domain_id], "NCCL"));
	TEST_ASSERT_EQ(rec[2].message_id, 0);
	TEST_ASSERT(rec[2].end != 0);
	TEST_ASSERT_EQ(rec[2].flags, XPU_NVTX_PUSHPOP);
	TEST_ASSERT_EQ(rec[3].flags, XPU_NVTX_STARTEND);
	TEST_ASSERT(rec[3].end != 0);
	nv_rig__exit(&r);
}

/* Past the bound, new names get a fresh id and STRING each use. */
static void test_names_bounded(void)
{
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;
	int strings = 0;

	xpu_client__init(&c, 7, 0);
	xpu_names__init(&n, 7);
	TEST_ASSERT_EQ(xpu_names__intern_max(&n, &c, "a", 2), 1);
	TEST_ASSERT_EQ(xpu_names__intern_max(&n, &c, "b", 2), 2);
	TEST_ASSERT_EQ(xpu_names__intern_max(&n, &c, "step 1", 2), 3);
	TEST_ASSERT_EQ(xpu_names__intern_max(&n, &c, "step 1", 2), 4);
	TEST_ASSERT_EQ(xpu_names__intern_max(&n, &c, "a", 2), 1);
	TEST_ASSERT_EQ(n.len, 2);
	while (test__next(c.buf, c.len, &off, &h, &body))
		strings += h.type == XPU_REC_STRING;
	TEST_ASSERT_EQ(strings, 4);
	xpu_names__exit(&n);
	xpu_client__exit(&c);
}

/* The fake CUPTI library, loaded like libcuda loads the real one, over the
 * real channel: N markers-worth of kernels with IDs 1..N, flushed at exit. */
static void test_fake_library(void)
{
	const char *build = getenv("XPU_BUILD");
	struct test_server s;
	struct xpu_record_header h;
	const uint8_t *body;
	char lib[4096];
	size_t off = 0;
	int fd, status, kernels = 0, apis = 0, strings = 0, meta = 0, devices = 0;
	pid_t pid;
	const int N = 50;

	snprintf(lib, sizeof(lib), "%s/tests/workloads/libfake_cupti.so", build ? build : "build");
	TEST_ASSERT(access(lib, R_OK) == 0);
	TEST_ASSERT_EQ(test_server__open(&s), 0);
	fflush(NULL);	/* the child must not repeat our buffered output */
	pid = fork();
	if (pid == 0) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		int (*init)(void);
		void (*launch)(int);

		setenv(XPU_CUPTI_SOCKET_ENV, s.path, 1);
		if (!h)
			_exit(3);
		init = (int (*)(void))dlsym(h, "InitializeInjection");
		launch = (void (*)(int))dlsym(h, "xpu_fake_launch");
		if (!init || !launch || !dlsym(h, XPU_CUPTI_MARKER_SYMBOL) || init() != 1 || init() != 1)
			_exit(4);
		for (int i = 0; i < N; i++)
			launch(i);
		exit(0);	/* atexit: final flush */
	}
	fd = accept(s.lfd, NULL, NULL);
	TEST_ASSERT(fd >= 0);
	test_server__drain(&s, fd, 0);
	close(fd);
	waitpid(pid, &status, 0);
	TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	TEST_ASSERT_EQ(s.bad_frames, 0);
	while (test__next(s.data, s.len, &off, &h, &body)) {
		if (h.type == XPU_REC_GPU_KERNEL) {
			struct xpu_gpu_kernel k;

			memcpy(&k, body, sizeof(k));
			TEST_ASSERT_EQ(k.correlation_id, kernels + 1);
			TEST_ASSERT_EQ(k.pid, pid);
			TEST_ASSERT_EQ(k.name_id, 1);
			TEST_ASSERT_EQ(k.end - k.start, 100000);
			TEST_ASSERT_EQ(k.grid[0], kernels + 1);
			kernels++;
		} else if (h.type == XPU_REC_GPU_API) {
			struct xpu_gpu_api a;

			memcpy(&a, body, sizeof(a));
			TEST_ASSERT_EQ(a.correlation_id, apis + 1);
			TEST_ASSERT(a.end >= a.start);
			apis++;
		} else if (h.type == XPU_REC_STRING) {
			TEST_ASSERT_EQ(kernels, 0);	/* defined before use */
			TEST_ASSERT(!strcmp((const char *)body + 8, "_Z11fake_kerneli"));
			strings++;
		} else if (h.type == XPU_REC_META) {
			meta++;
		} else if (h.type == XPU_REC_GPU_DEVICE) {
			devices++;
		}
	}
	TEST_ASSERT_EQ(kernels, N);
	TEST_ASSERT_EQ(apis, N);
	TEST_ASSERT_EQ(strings, 1);
	TEST_ASSERT_EQ(devices, 1);
	TEST_ASSERT(meta >= 3);
	test_server__close(&s);
}

int main(void)
{
	srand(time(NULL) ^ getpid());
	TEST_RUN(test_apis_normalize);
	TEST_RUN(test_apis_default);
	TEST_RUN(test_apis_mark_at_exit);
	TEST_RUN(test_apis_copies_graph);
	TEST_RUN(test_apis_custom);
	TEST_RUN(test_client_roundtrip);
	TEST_RUN(test_client_split);
	TEST_RUN(test_client_drops);
	TEST_RUN(test_client_dead_peer);
	TEST_RUN(test_client_stalled_peer);
	TEST_RUN(test_client_flush_config);
	TEST_RUN(test_bufsize);
	TEST_RUN(test_names);
	TEST_RUN(test_names_resend);
	TEST_RUN(test_names_bounded);
	TEST_RUN(test_nvtx_nesting);
	TEST_RUN(test_nvtx_overflow);
	TEST_RUN(test_nvtx_overflow_domains);
	TEST_RUN(test_nvtx_start_end_mark);
	TEST_RUN(test_nvtx_never_closed);
	TEST_RUN(test_nvtx_ext);
	TEST_RUN(test_fake_library);
	TEST_EXIT();
}
