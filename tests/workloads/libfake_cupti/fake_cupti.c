// SPDX-License-Identifier: MIT
/*
 * libfake_cupti.so: a stand-in for libxpu-cupti.so that CI can run without a
 * GPU. It is built from the real library's non-CUPTI parts (channel client,
 * name interning, the marker) plus this file, which plays CUPTI's role.
 *
 * Contract with tests/workloads/fake_cuda_app.c (written on the recorder
 * side): the app dlopen()s getenv("CUDA_INJECTION64_PATH"), calls
 * InitializeInjection(), then calls xpu_fake_launch(i) for each "launch".
 * Each call:
 *   - takes the next correlation ID (1, 2, 3, ... per process),
 *   - calls xpu_cupti_marker(id, FAKE_CBID_LAUNCH, XPU_API_RUNTIME), exactly
 *     as the real library does at cudaLaunchKernel enter,
 *   - queues an XPU_REC_GPU_API record (cudaLaunchKernel, the time of the
 *     call) and an XPU_REC_GPU_KERNEL record with the same correlation ID,
 *     named "_Z11fake_kerneli" (XPU_REC_STRING once), starting 1 us after the
 *     call and lasting XPU_FAKE_KERNEL_NS ns (default 100000), device
 *     XPU_FAKE_DEVICE (default 0; tests of --device and per-device lines),
 *     stream 7, grid (i+1,1,1), block (128,1,1).
 * Records reach xpu-record over the real channel (flush thread every 200 ms,
 * or the period xpu-record's bounded capture tells the library, as the real
 * one does; final flush at exit). XPU_FAKE_CUPTI_HOLD=1: the GPU_API and
 * GPU_KERNEL records wait in a "CUPTI buffer" that is handed over only when
 * full, as CUPTI does while the GPU is always busy (a buffer with a kernel
 * still running is not handed over), its size the real library's choice
 * (cupti/activity/bufsize.h: 4 MB, or under bounded capture one that fills within
 * the period): without bounded capture they come at exit. META "cupti.library" = "libfake_cupti" marks traces
 * made with it. XPU_FAKE_SUBSCRIBER_CONFLICT=TEXT also sends META
 * "gpu.subscriber_conflict" = TEXT, as the real library does when another
 * CUPTI subscriber holds the callbacks.
 *
 * The launch walk probe (cupti/walk/walk_probe.c), as the real library runs it:
 * with XPU_CUPTI_MARKER=walk or walk+ (which xpu-record's default
 * --launch-stacks=walk sets, with a rule table), a launch enters fake__mark, which notes rsp and rbp at its
 * entry, lets the probe walk from there, and jumps to the marker unless the
 * walk reached its end (walk); exactly the state the marker would have had.
 *
 * NVTX, as CUPTI would deliver it: InitializeInjectionNvtx2 is exported like
 * the real library's, and the app calls it when NVTX_INJECTION64_PATH names
 * this library (what an NVTX instance does). From then on
 * xpu_fake_nvtx_push(msg) / xpu_fake_nvtx_pop() run the real range tracking
 * (cupti/nvtx/nvtx.c) with the real marker, unless XPU_CUPTI_NVTX=off; before,
 * they do nothing, like NVTX without an injection. Open ranges go out with
 * end 0 at exit. A domain's calls, as CUPTI's nvtxDomainCreateA,
 * nvtxDomainRangePushEx and nvtxDomainRangePop callbacks give them:
 * xpu_fake_nvtx_domain_create(name) returns the domain's handle,
 * xpu_fake_nvtx_domain_push(domain, msg), xpu_fake_nvtx_domain_pop(domain).
 * NVTX's payload extension is the real library's (cupti/nvtx/nvtx_ext.c):
 * InitializeInjectionNvtxExtension is exported and fills the slots.
 *
 * CUDA graphs, as CUPTI's resource callbacks report them (cupti/activity/graphs.c
 * does the real work): xpu_fake_graph_capture(n) is a stream capture of n
 * kernel launches (each: a marked cudaLaunchKernel with its own
 * correlation ID and a node created inside it); xpu_fake_graph_add() adds
 * one kernel node outside any marked call (the marker runs with the node
 * id, XPU_API_GRAPH_NODE); xpu_fake_graph_instantiate() clones every node
 * into an executable graph; xpu_fake_graph_launch() is a cudaGraphLaunch
 * (marked, FAKE_CBID_GRAPH_LAUNCH) whose kernels, one per executable node,
 * carry the clone's node id and the launch's correlation ID.
 * XPU_FAKE_NO_GRAPH_NODES=1: no graph node records, as with a CUPTI that
 * gives no graph callbacks (or a trace from before format 1.4).
 *
 * Attach (xpu-record -p, cupti/attach.h): xpu_cupti_attach(config) is the
 * real library's entry. The process runs the fake libcuda.so.1
 * (tests/workloads/fake_cuda/fake_driver.c: fake_cuda_app with
 * FAKE_CUDA_DRIVER); the attach thread connects with the config's socket
 * and marker, subscribes to the fake driver (its launches then come to
 * xpu_fake_launch, as CUPTI's callbacks come to the real library once it
 * subscribed) and flushes every 200 ms until the recorder shuts its side of
 * the socket down or dies; then it unsubscribes, sends the rest and closes:
 * the next attach starts again. A driver that has a subscriber already
 * gives the subscriber-conflict META, as CUPTI's MULTIPLE_SUBSCRIBERS.
 *
 * GPU memory (xpu-record --gpu-memory, told with the ready byte as the real
 * library is): the fake app's cudaMalloc, cudaFree, cudaMallocAsync,
 * cudaFreeAsync and cudaMemPoolTrimTo, an out-of-memory failure and the
 * device's memory at the start, as fake_memory.c describes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/channel/wire.h"
#include "cupti/walk/walk_probe.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/nvtx/nvtx.h"
#include "cupti/nvtx/nvtx_ext.h"
#include "cupti/activity/graphs.h"
#include "cupti/attach.h"
#include "cupti/activity/bufsize.h"
#include "fake_pcsamp.h"
#include "fake_memory.h"
#include <dlfcn.h>
#include <pthread.h>

/* CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 in cupti_runtime_cbid.h and
 * CUPTI_CBID_NVTX_nvtxRangePushA in cupti_nvtx_cbid.h (not included: this
 * library builds without the CUDA toolkit). */
#define FAKE_CBID_LAUNCH	211
#define FAKE_CBID_NVTX_PUSH	8
#define FAKE_CBID_NVTX_DOMAIN_PUSH	33	/* CUPTI_CBID_NVTX_nvtxDomainRangePushEx */
#define FAKE_CBID_GRAPH_LAUNCH	311	/* cudaGraphLaunch_v10000 */
#define FAKE_GRAPH_MAX		64
#define FAKE_GRAPH_ID		5	/* the captured graph; its executable: 6 */
#define FAKE_FLUSH_MS		200

static struct {
	atomic_int started;
	atomic_ullong next_corr;
	struct xpu_client client;
	struct xpu_names names;
	struct xpu_nvtx nvtx;
	atomic_int nvtx_injected;	/* InitializeInjectionNvtx2 was called */
	int nvtx_on;			/* tracking set up (not XPU_CUPTI_NVTX=off) */
	uint64_t kernel_ns;
	uint32_t device;		/* XPU_FAKE_DEVICE */
	uint32_t pid;
	int active;
	int walk;			/* the walk probe is on */
	pthread_t flusher;
	atomic_int stop;
	uint64_t nodes[FAKE_GRAPH_MAX];		/* created nodes */
	uint64_t exec_nodes[FAKE_GRAPH_MAX];	/* their clones in the executable */
	int nr_nodes, nr_exec;
} fake;

static uint64_t fake__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* XPU_FAKE_CUPTI_HOLD=1: the activity buffer being filled */
static struct {
	pthread_mutex_t lock;
	int on;
	struct xpu_bufsize bs;
	size_t size, used;		/* its size, and the bytes of its records */
	uint8_t *buf;			/* the records: type, length, body */
	size_t len, cap;
} hold = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The held records to the client. With hold.lock. */
static void fake__hand_over(void)
{
	for (size_t off = 0; off < hold.len; ) {
		uint32_t hdr[2];

		memcpy(hdr, hold.buf + off, sizeof(hdr));
		xpu_client__add(&fake.client, (uint16_t)hdr[0], hold.buf + off + sizeof(hdr), hdr[1]);
		off += sizeof(hdr) + ((hdr[1] + 7) & ~7u);
	}
	xpu_bufsize__done(&hold.bs, hold.used, fake__now());
	hold.len = hold.used = 0;
	hold.size = xpu_bufsize__next(&hold.bs);
}

/* An activity record, as CUPTI's buffer completion would hand it over. */
static void fake__activity(uint16_t type, const void *body, uint32_t len)
{
	uint32_t hdr[2] = { type, len };
	size_t need = sizeof(hdr) + ((len + 7) & ~7u);

	if (!hold.on) {
		xpu_client__add(&fake.client, type, body, len);
		return;
	}
	pthread_mutex_lock(&hold.lock);
	if (hold.len + need > hold.cap) {
		size_t cap = hold.cap ? 2 * hold.cap : 65536;
		uint8_t *n;

		while (cap < hold.len + need)
			cap *= 2;
		n = realloc(hold.buf, cap);
		if (!n) {
			pthread_mutex_unlock(&hold.lock);
			return;
		}
		hold.buf = n;
		hold.cap = cap;
	}
	memcpy(hold.buf + hold.len, hdr, sizeof(hdr));
	memcpy(hold.buf + hold.len + sizeof(hdr), body, len);
	hold.len += need;
	hold.used += len + sizeof(struct xpu_record_header);
	if (hold.used >= hold.size)
		fake__hand_over();
	pthread_mutex_unlock(&hold.lock);
}

/* The end: CUPTI's forced flush hands over the buffer as it is. */
static void fake__hold_flush(void)
{
	pthread_mutex_lock(&hold.lock);
	if (hold.on && hold.len)
		fake__hand_over();
	pthread_mutex_unlock(&hold.lock);
}

static int fake__flush_ms(void)
{
	uint32_t ms = fake.client.flush_ms;

	return !ms ? FAKE_FLUSH_MS : ms < 10 ? 10 : ms > 1000 ? 1000 : (int)ms;
}

static void *fake__flush_thread(void *arg)
{
	while (!atomic_load(&fake.stop)) {
		usleep(fake__flush_ms() * 1000);
		fake_pcsamp__flush();
		xpu_client__flush(&fake.client, 200);
	}
	return NULL;
}

static void fake__finish(void)
{
	if (!fake.active)
		return;
	fake.active = 0;
	atomic_store(&fake.stop, 1);
	pthread_join(fake.flusher, NULL);
	fake_pcsamp__finish();
	fake_mem__finish();
	fake__hold_flush();
	if (fake.nvtx_on)
		xpu_nvtx__finish(&fake.nvtx);
	if (fake.walk)
		xpu_walk_probe__finish(&fake.client);
	if (xpu_client__flush(&fake.client, 2000) == -ETIMEDOUT || fake.client.len)
		xpu_client__flush(&fake.client, 2000);
	xpu_client__close(&fake.client);
}

static struct xpu_attach_cfg fake_cfg;	/* off: the environment says */
static atomic_int fake_attaching;
static atomic_int fake_attach_live;	/* an attach records: not yet ending */

/* The start of a recording: at "cuInit" (InitializeInjection) or in the
 * attach thread. Returns 0 when connected. */
static int fake__start(bool attach)
{
	const char *path = xpu_attach_cfg__get(&fake_cfg, XPU_CUPTI_SOCKET_ENV);
	const char *ns = getenv("XPU_FAKE_KERNEL_NS");
	const char *conflict = getenv("XPU_FAKE_SUBSCRIBER_CONFLICT");
	const char *device = getenv("XPU_FAKE_DEVICE");
	const char *nvtx, *marker = xpu_attach_cfg__get(&fake_cfg, XPU_CUPTI_MARKER_ENV);
	struct xpu_gpu_device dev = { .sm_count = 132, .cc_major = 9, .cc_minor = 0,
				      .global_memory = 80ull << 30 };
	int err;

	fake.pid = getpid();
	fake.kernel_ns = ns ? strtoull(ns, NULL, 0) : 100000;
	fake.device = device ? (uint32_t)strtoul(device, NULL, 0) : 0;
	xpu_client__init(&fake.client, fake.pid, 0);
	xpu_names__init(&fake.names, fake.pid);
	if (!path) {
		fprintf(stderr, "libfake_cupti: warning: %s is not set; not tracing\n",
			XPU_CUPTI_SOCKET_ENV);
		return -EINVAL;
	}
	err = xpu_client__connect(&fake.client, path);
	if (err) {
		fprintf(stderr, "libfake_cupti: warning: cannot connect to %s: %s\n",
			path, strerror(-err));
		return err;
	}
	xpu_bufsize__init(&hold.bs, fake.client.flush_ms);
	hold.size = xpu_bufsize__next(&hold.bs);
	hold.on = getenv("XPU_FAKE_CUPTI_HOLD") && !strcmp(getenv("XPU_FAKE_CUPTI_HOLD"), "1");
	xpu_client__meta(&fake.client, "cupti.library", "libfake_cupti");
	if (attach && xpu_attach__cuda_initialised())
		xpu_client__meta(&fake.client, XPU_META_CUPTI_ATTACH, "attached (libfake_cupti)");
	fake.walk = 0;
	switch (xpu_walk_probe__init(marker, &fake.client, fake.pid)) {
	case 1:
		fake.walk = 1;
		break;
	case -1:	/* the real library's words (cupti_inject.c) */
		fprintf(stderr, "libfake_cupti: warning: %s=%s: no rule table from xpu-record "
			"(--launch-stacks=marker or --call-graph fp?); the marker stays\n", XPU_CUPTI_MARKER_ENV,
			marker);
		break;
	}
	xpu_client__meta(&fake.client, "cupti.version", "0");
	xpu_client__meta(&fake.client, XPU_META_GPU_COUNT, "1");
	xpu_client__meta(&fake.client, "gpu.0.name", "Fake GPU");
	if (conflict)
		xpu_client__meta(&fake.client, XPU_META_GPU_SUBSCRIBER_CONFLICT, conflict);
	dev.pid = fake.pid;
	dev.id = fake.device;
	xpu_client__add_str(&fake.client, XPU_REC_GPU_DEVICE, &dev, sizeof(dev), "Fake GPU");
	nvtx = xpu_attach_cfg__get(&fake_cfg, XPU_CUPTI_NVTX_ENV);
	fake.nvtx_on = 0;
	if (!(nvtx && !strcmp(nvtx, "off")) &&
	    !xpu_nvtx__init(&fake.nvtx, &fake.client, &fake.names, fake.pid, xpu_cupti_marker))
		fake.nvtx_on = 1;
	if (fake.nvtx_on)
		xpu_nvtx_ext__attach(&fake.nvtx);
	xpu_client__meta(&fake.client, XPU_META_CUPTI_NVTX, fake.nvtx_on ? "on" : "off");
	fake_pcsamp__start(&fake.client, &fake.names, fake.pid, fake.device,
			   xpu_attach_cfg__get(&fake_cfg, XPU_CUPTI_PC_SAMPLING_ENV));
	fake_mem__start(&fake.client, fake.pid, fake.device,
			fake.client.flags & XPU_CHANNEL_GPU_MEMORY, attach, fake__now());
	xpu_client__flush(&fake.client, 200);
	return 0;
}

__attribute__((visibility("default")))
int InitializeInjection(void)
{
	if (atomic_load(&fake_attaching) || atomic_exchange(&fake.started, 1))
		return 1;
	if (fake__start(false))
		return 1;
	if (pthread_create(&fake.flusher, NULL, fake__flush_thread, NULL)) {
		xpu_client__disconnect(&fake.client);
		return 1;
	}
	fake.active = 1;
	atexit(fake__finish);
	return 1;
}

/* ---- attach (cupti/attach.h) ----------------------------------------------- */

typedef int (*fake_subscribe_fn)(void (*)(int));
typedef void (*fake_unsubscribe_fn)(void);

void xpu_fake_launch(int i);

static void *fake__attach_thread(void *arg)
{
	void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	fake_subscribe_fn sub = drv ? (fake_subscribe_fn)dlsym(drv, "xpu_fake_cuda_subscribe") : NULL;
	fake_unsubscribe_fn unsub = drv ? (fake_unsubscribe_fn)dlsym(drv, "xpu_fake_cuda_unsubscribe") : NULL;
	bool subscribed = false;

	if (!fake__start(true)) {
		fake.active = 1;
		if (!xpu_attach__cuda_initialised())
			xpu_client__meta(&fake.client, XPU_META_CUPTI_ATTACH, XPU_ATTACH_NOT_INITIALISED);
		else if (!sub || !unsub)
			xpu_client__meta(&fake.client, "cupti.attach", "no fake libcuda.so.1 in the process");
		else if (sub(xpu_fake_launch))
			xpu_client__meta(&fake.client, XPU_META_GPU_SUBSCRIBER_CONFLICT,
					 "the fake driver has a subscriber");
		else
			subscribed = true;
		while (subscribed && !xpu_attach__ended(fake.client.fd, fake__flush_ms())) {
			fake_pcsamp__flush();
			xpu_client__flush(&fake.client, 200);
		}
	}
	atomic_store(&fake_attach_live, 0);	/* ending: a next attach waits */
	if (subscribed) {
		unsub();
		usleep(20000);	/* a launch that took the hook before: done */
	}
	fake.active = 0;
	fake_pcsamp__finish();
	fake_mem__finish();
	fake__hold_flush();
	if (fake.nvtx_on)
		xpu_nvtx__finish(&fake.nvtx);
	if (fake.walk)
		xpu_walk_probe__finish(&fake.client);
	if (xpu_client__flush(&fake.client, 2000) == -ETIMEDOUT || fake.client.len)
		xpu_client__flush(&fake.client, 2000);
	xpu_client__close(&fake.client);
	xpu_client__exit(&fake.client);
	if (drv)
		dlclose(drv);
	atomic_store(&fake_attaching, 0);
	return arg;
}

__attribute__((visibility("default")))
int xpu_cupti_attach(const char *config)
{
	int err;

	/* XPU_FAKE_ATTACH_BLOCK=1: the entry never returns, as a loader
	 * stuck on a lock a dead thread held (record_attach_stuck.sh) */
	if (getenv("XPU_FAKE_ATTACH_BLOCK") && !strcmp(getenv("XPU_FAKE_ATTACH_BLOCK"), "1"))
		for (;;)
			pause();
	if (atomic_load(&fake.started))
		return -EBUSY;		/* started under xpu-record */
	if (atomic_exchange(&fake_attaching, 1))	/* another records, or the last still ends */
		return atomic_load(&fake_attach_live) ? -EISCONN : -EALREADY;
	if (xpu_attach_cfg__parse(&fake_cfg, config)) {
		atomic_store(&fake_attaching, 0);
		return -EINVAL;
	}
	atomic_store(&fake_attach_live, 1);
	err = xpu_attach__thread(fake__attach_thread, NULL);
	if (err) {
		atomic_store(&fake_attach_live, 0);
		atomic_store(&fake_attaching, 0);
	}
	/* a stray errno, as library calls leave one on success (stdio's
	 * isatty, a failed open on a search path): the injector must put the
	 * thread's own back (record_attach.sh) */
	errno = ENOTTY;
	return err;
}

/* The cbid of the runtime call being marked, when not a launch's
 * (fake__memory_call) */
static __thread uint32_t fake_tls_cbid;

/* fake__mark's C half: XPU_WALK_DONE, or the marker must run (no walk
 * probe, a miss, or walk+), XPU_WALK_MARKER_URGENT with the urgent bit in
 * its domain. Every fake call is a runtime one: cudaLaunchKernel, or
 * fake_tls_cbid's. */
__attribute__((used)) int fake__walk(uint64_t corr, uint64_t sp, uint64_t bp)
{
	uint32_t cbid = fake_tls_cbid ? fake_tls_cbid : FAKE_CBID_LAUNCH;

	fake_tls_cbid = 0;
	return fake.walk ? xpu_walk_probe__hit(corr, cbid, XPU_API_RUNTIME, sp, bp) :
			   XPU_WALK_MARKER;
}
_Static_assert(XPU_WALK_MARKER_URGENT == 2 && XPU_MARKER_URGENT == 0x80000000u, "fake__mark's asm");

/*
 * xpu_cupti_marker(corr, cbid, domain) with the walk probe first: rsp and
 * rbp at entry are the marker's own at its entry, since this ends in a jump
 * to it (the real library's callback ends in a tail call to it).
 */
void fake__mark(uint64_t corr, uint32_t cbid, uint32_t domain);
#if defined(__x86_64__)
__asm__(".text\n"
	".p2align 4\n"
	".type fake__mark, @function\n"
	"fake__mark:\n"
	"	.cfi_startproc\n"
	"	push %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	push %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	lea 24(%rsp), %rsi\n"
	"	mov %rbp, %rdx\n"
	"	call fake__walk\n"
	"	pop %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	test %eax, %eax\n"
	"	jz 1f\n"
	"	cmp $2, %eax\n"		/* XPU_WALK_MARKER_URGENT */
	"	jne 2f\n"
	"	or $0x80000000, %edx\n"	/* XPU_MARKER_URGENT */
	"2:	jmp xpu_cupti_marker@PLT\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	".size fake__mark, .-fake__mark\n");
#else
void fake__mark(uint64_t corr, uint32_t cbid, uint32_t domain)
{
	xpu_cupti_marker(corr, cbid, domain);
}
#endif

uint64_t fake__memory_call(uint32_t cbid)
{
	uint64_t corr = atomic_fetch_add(&fake.next_corr, 1) + 1;

	fake_tls_cbid = cbid;
	fake__mark(corr, cbid, XPU_API_RUNTIME);
	fake_tls_cbid = 0;
	return corr;
}

__attribute__((visibility("default")))
void xpu_fake_launch(int i)
{
	uint64_t corr = atomic_fetch_add(&fake.next_corr, 1) + 1;
	uint64_t t0 = fake__now(), t1;
	double inflate;
	struct xpu_gpu_api api = {
		.correlation_id = corr, .pid = fake.pid, .tid = gettid(),
		.domain = XPU_API_RUNTIME, .cbid = FAKE_CBID_LAUNCH,
	};
	struct xpu_gpu_kernel k = {
		.correlation_id = corr, .pid = fake.pid, .stream = 7, .device = fake.device,
		.grid = { (uint32_t)i + 1, 1, 1 }, .block = { 128, 1, 1 },
		.registers = 32,
	};

	fake__mark(corr, FAKE_CBID_LAUNCH, XPU_API_RUNTIME);
	if (!fake.active)
		return;
	inflate = fake_pcsamp__launch();
	t1 = fake__now();
	api.start = t0;
	api.end = t1;
	k.start = t1 + 1000;
	k.end = k.start + (uint64_t)((double)fake.kernel_ns * inflate);
	k.name_id = xpu_names__intern(&fake.names, &fake.client, "_Z11fake_kerneli");
	fake__activity(XPU_REC_GPU_API, &api, sizeof(api));
	fake__activity(XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

/* What an NVTX instance calls in its injection library; the export table
 * getter is not needed by the fake. */
__attribute__((visibility("default")))
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	atomic_store(&fake.nvtx_injected, 1);
	return 1;
}

static struct xpu_nvtx_thread *fake__nvtx_thread(void)
{
	if (!fake.active || !fake.nvtx_on || !atomic_load(&fake.nvtx_injected))
		return NULL;
	return xpu_nvtx__self(&fake.nvtx);
}

__attribute__((visibility("default")))
void xpu_fake_nvtx_push(const char *message)
{
	struct xpu_nvtx_thread *t = fake__nvtx_thread();
	struct xpu_nvtx_event ev = { .time = fake__now(), .cbid = FAKE_CBID_NVTX_PUSH };

	if (!t)
		return;
	ev.message_id = xpu_nvtx__intern(&fake.nvtx, message);
	xpu_nvtx__push(t, &ev);
}

__attribute__((visibility("default")))
void xpu_fake_nvtx_pop(void)
{
	struct xpu_nvtx_thread *t = fake__nvtx_thread();

	if (t)
		xpu_nvtx__pop(t, fake__now(), 0);
}

__attribute__((visibility("default")))
uint64_t xpu_fake_nvtx_domain_create(const char *name)
{
	static atomic_ullong next = 0xd0000;
	uint64_t handle = atomic_fetch_add(&next, 0x10);

	if (fake__nvtx_thread())
		xpu_nvtx__add_domain(&fake.nvtx, handle, name);
	return handle;
}

__attribute__((visibility("default")))
void xpu_fake_nvtx_domain_push(uint64_t domain, const char *message)
{
	struct xpu_nvtx_thread *t = fake__nvtx_thread();
	struct xpu_nvtx_event ev = {
		.time = fake__now(), .domain = domain, .cbid = FAKE_CBID_NVTX_DOMAIN_PUSH,
	};

	if (!t)
		return;
	ev.domain_id = xpu_nvtx__domain_id(&fake.nvtx, domain);
	ev.message_id = xpu_nvtx__intern(&fake.nvtx, message);
	xpu_nvtx__push(t, &ev);
}

__attribute__((visibility("default")))
void xpu_fake_nvtx_domain_pop(uint64_t domain)
{
	struct xpu_nvtx_thread *t = fake__nvtx_thread();

	if (t)
		xpu_nvtx__pop(t, fake__now(), domain);
}

/* NVTX's entry point for its extensions, as the real library's */
__attribute__((visibility("default")))
int InitializeInjectionNvtxExtension(struct xpu_nvtx_ext_module *module)
{
	return xpu_nvtx_ext__init(module);
}

/* ---- CUDA graphs ---------------------------------------------------------- */

static void fake__graph_node(uint64_t api_corr)
{
	struct xpu_graph_node_ev ev = {
		.time = fake__now(), .node_id = 0x1000 + (uint64_t)fake.nr_nodes,
		.api_corr = api_corr, .graph_id = FAKE_GRAPH_ID,
		.node_type = XPU_GRAPH_NODE_KERNEL,
	};

	if (fake.nr_nodes == FAKE_GRAPH_MAX)
		return;
	fake.nodes[fake.nr_nodes++] = ev.node_id;
	if (!getenv("XPU_FAKE_NO_GRAPH_NODES"))
		xpu_graphs__node(&fake.client, fake.pid, (uint32_t)gettid(), &ev);
}

__attribute__((visibility("default")))
void xpu_fake_graph_capture(int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t corr = atomic_fetch_add(&fake.next_corr, 1) + 1;
		struct xpu_gpu_api api = {
			.start = fake__now(), .correlation_id = corr, .pid = fake.pid,
			.tid = gettid(), .domain = XPU_API_RUNTIME, .cbid = FAKE_CBID_LAUNCH,
		};

		xpu_cupti_marker(corr, FAKE_CBID_LAUNCH, XPU_API_RUNTIME);
		if (!fake.active)
			continue;
		fake__graph_node(corr);		/* inside the captured launch */
		api.end = fake__now();
		xpu_client__add(&fake.client, XPU_REC_GPU_API, &api, sizeof(api));
	}
}

__attribute__((visibility("default")))
void xpu_fake_graph_add(void)
{
	if (fake.active)
		fake__graph_node(0);
}

__attribute__((visibility("default")))
void xpu_fake_graph_instantiate(void)
{
	for (int i = 0; fake.active && i < fake.nr_nodes; i++) {
		struct xpu_graph_node_ev ev = {
			.time = fake__now(), .node_id = 0x2000 + (uint64_t)i,
			.orig_node_id = fake.nodes[i], .graph_id = FAKE_GRAPH_ID + 1,
			.orig_graph_id = FAKE_GRAPH_ID, .node_type = XPU_GRAPH_NODE_KERNEL,
			.cloned = true,
		};

		fake.exec_nodes[fake.nr_exec++] = ev.node_id;
		if (!getenv("XPU_FAKE_NO_GRAPH_NODES"))
			xpu_graphs__node(&fake.client, fake.pid, (uint32_t)gettid(), &ev);
	}
}

__attribute__((visibility("default")))
void xpu_fake_graph_launch(void)
{
	uint64_t corr = atomic_fetch_add(&fake.next_corr, 1) + 1;
	uint64_t t0 = fake__now(), t;
	struct xpu_gpu_api api = {
		.correlation_id = corr, .pid = fake.pid, .tid = gettid(),
		.domain = XPU_API_RUNTIME, .cbid = FAKE_CBID_GRAPH_LAUNCH,
	};

	xpu_cupti_marker(corr, FAKE_CBID_GRAPH_LAUNCH, XPU_API_RUNTIME);
	if (!fake.active)
		return;
	api.start = t0;
	api.end = t = fake__now();
	xpu_client__add(&fake.client, XPU_REC_GPU_API, &api, sizeof(api));
	for (int i = 0; i < fake.nr_exec; i++) {
		struct xpu_gpu_kernel k = {
			.start = t + 1000, .end = t + 1000 + fake.kernel_ns,
			.correlation_id = corr, .graph_node_id = fake.exec_nodes[i],
			.pid = fake.pid, .device = fake.device, .stream = 7,
			.graph_id = FAKE_GRAPH_ID + 1, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
			.registers = 32,
		};

		k.name_id = xpu_names__intern(&fake.names, &fake.client, "_Z11fake_kerneli");
		xpu_client__add(&fake.client, XPU_REC_GPU_KERNEL, &k, sizeof(k));
		t = k.end;
	}
}
