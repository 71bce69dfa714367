// SPDX-License-Identifier: MIT
/*
 * xpu-record's GPU records socket (record/gpu/channel.c) over a real Unix socket
 * in this process: framed batches are checked before anything of them is
 * written, a protocol error drops only that client and counts one loss, a
 * message cut by EOF is a loss, a peer cannot forge the recorder's records,
 * the trace holds exactly the accepted records, and a peer the check does
 * not accept is closed before anything of it is read. No root needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/log.h"
#include "cupti/channel/wire.h"
#include "format/encode.h"
#include "format/reader.h"
#include "record/gpu/channel.h"
#include "test.h"

static char tmpdir[64];

struct batch {
	uint8_t buf[8192];
	size_t len;
};

static void batch__add(struct batch *b, uint16_t type, const void *body, size_t len)
{
	struct iovec iov = { (void *)body, len };
	size_t n = xpu_record__encoded_size(&iov, 1);

	if (b->len + n > sizeof(b->buf))
		abort();
	xpu_record__encode(b->buf + b->len, n, type, 0, &iov, 1);
	b->len += n;
}

/* Adds a record whose header says size, followed by body_len bytes. */
static void batch__add_raw(struct batch *b, uint16_t type, uint32_t size, size_t body_len)
{
	struct xpu_record_header rh = { .type = type, .size = size };

	memcpy(b->buf + b->len, &rh, sizeof(rh));
	memset(b->buf + b->len + sizeof(rh), 0, body_len);
	b->len += sizeof(rh) + body_len;
}

static void batch__kernel(struct batch *b, uint64_t corr)
{
	struct xpu_gpu_kernel k = { .start = corr * 100, .end = corr * 100 + 50,
				    .correlation_id = corr, .pid = 4242 };

	batch__add(b, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

static void batch__meta(struct batch *b, const char *key, const char *value)
{
	char kv[256];
	size_t kl = strlen(key) + 1, vl = strlen(value) + 1;

	memcpy(kv, key, kl);
	memcpy(kv + kl, value, vl);
	batch__add(b, XPU_REC_META, kv, kl + vl);
}

struct rig {
	struct xpu_writer *w;
	struct channel *ch;
	char path[128];
};

/* The peer check: this process stands for the recorded tree. */
static pid_t tree_pid;

static bool in_tree(void *ctx, pid_t pid)
{
	(void)ctx;
	return pid == tree_pid;
}

static int rig__open(struct rig *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s/%s.data", tmpdir, name);
	r->w = xpu_writer__open(r->path, &(struct xpu_writer_opts){ .features = XPU_FEAT_GPU });
	if (!r->w)
		return -1;
	tree_pid = getpid();
	if (channel__open(&r->ch, r->w))
		return -1;
	channel__set_peer_check(r->ch, in_tree, NULL);
	return 0;
}

static uint64_t rig__written(struct rig *r, uint16_t type)
{
	struct xpu_writer_stats st;

	xpu_writer__stats(r->w, &st);
	return st.per_type[type];
}

/* Closes both; counts the records of each type in the trace into n[]. */
static int rig__close(struct rig *r, uint64_t n[XPU_REC_MAX])
{
	struct xpu_reader *rd;
	struct xpu_record rec;
	int err;

	channel__close(r->ch);
	if (xpu_writer__close(r->w))
		return -1;
	memset(n, 0, XPU_REC_MAX * sizeof(n[0]));
	rd = xpu_reader__open(r->path, &err);
	if (!rd)
		return -1;
	while (xpu_reader__next(rd, &rec) == 1)
		n[rec.type]++;
	err = xpu_reader__stats(rd)->chunks_bad ? -1 : 0;
	xpu_reader__close(rd);
	return err;
}

/* Connects a client and lets the channel accept it. */
static int client(struct rig *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", channel__path(r->ch));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	channel__handle(r->ch, channel__fd(r->ch));
	return fd;
}

static int send_all(int fd, const void *p, size_t len)
{
	return send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int send_msg(int fd, uint32_t magic, const struct batch *b)
{
	struct xpu_channel_msg m = { .magic = magic, .len = b ? b->len : 0 };

	if (send_all(fd, &m, sizeof(m)))
		return -1;
	return b && b->len ? send_all(fd, b->buf, b->len) : 0;
}

/* Whether the channel closed its end of this client. */
/* closed by the recorder (after its ready byte, wire.h) */
static bool dropped(int fd)
{
	ssize_t n;
	char c;

	while ((n = recv(fd, &c, 1, MSG_DONTWAIT)) == 1 && c == XPU_CHANNEL_READY)
		;
	return n == 0;
}

/* accepted: the recorder's one ready byte, then nothing until closed */
static bool told_ready(int fd)
{
	char c[2];

	return recv(fd, c, 2, MSG_DONTWAIT) == 1 && c[0] == XPU_CHANNEL_READY;
}

/* closed without a ready byte (ECONNRESET: with what it sent unread) */
static bool refused(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno == ECONNRESET);
}

static int accepts;

static void on_accept(void *ctx)
{
	(void)ctx;
	accepts++;
}

static void test_valid_batches(void)
{
	struct batch a = { 0 }, b = { 0 };
	struct xpu_gpu_api api = { .correlation_id = 7, .pid = 4242 };
	struct xpu_lost lost = { .source = XPU_LOST_CUPTI, .count = 3 };
	struct xpu_gpu_nvtx nvtx = { .start = 1, .end = 2, .range_id = 1, .pid = 4242,
				     .flags = XPU_NVTX_PUSHPOP };
	struct { struct xpu_string s; char name[8]; } str = { { 4242, 1 }, "kern" };
	uint64_t n[XPU_REC_MAX];
	struct xpu_channel_msg m;
	struct rig r;
	int fd;

	TEST_ASSERT_EQ(rig__open(&r, "valid"), 0);
	channel__set_on_accept(r.ch, on_accept, NULL);
	TEST_ASSERT((fd = client(&r)) >= 0);
	channel__drain_all(r.ch);	/* accepts: the hook, then the ready byte */
	TEST_ASSERT_EQ(accepts, 1);
	TEST_ASSERT(told_ready(fd));
	batch__meta(&a, "cupti.version", "130001");
	batch__add(&a, XPU_REC_STRING, &str, sizeof(str));
	batch__kernel(&a, 1);
	batch__kernel(&a, 2);
	batch__add(&a, XPU_REC_GPU_API, &api, sizeof(api));
	batch__add(&a, XPU_REC_LOST, &lost, sizeof(lost));
	batch__add(&a, XPU_REC_GPU_NVTX, &nvtx, sizeof(nvtx));
	TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &a), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(channel__records(r.ch), 4);	/* GPU records only */
	TEST_ASSERT_EQ(channel__nvtx_records(r.ch), 1);	/* for the nvtx feature bit */
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 2);
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_META), 1);

	/* a message in three pieces, the header itself cut: one batch */
	batch__kernel(&b, 3);
	batch__kernel(&b, 4);
	m = (struct xpu_channel_msg){ XPU_CHANNEL_MAGIC, b.len };
	TEST_ASSERT_EQ(send_all(fd, &m, 5), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(send_all(fd, (char *)&m + 5, sizeof(m) - 5), 0);
	TEST_ASSERT_EQ(send_all(fd, b.buf, 40), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 2);
	TEST_ASSERT_EQ(send_all(fd, b.buf + 40, b.len - 40), 0);
	/* an empty message is no error */
	TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, NULL), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 4);
	TEST_ASSERT_EQ(channel__records(r.ch), 6);
	TEST_ASSERT_EQ(channel__lost(r.ch), 0);
	TEST_ASSERT(!dropped(fd));

	/* a clean EOF between messages loses nothing */
	close(fd);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(channel__lost(r.ch), 0);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 4);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_API], 1);
	TEST_ASSERT_EQ(n[XPU_REC_STRING], 1);
	TEST_ASSERT_EQ(n[XPU_REC_LOST], 1);
	TEST_ASSERT_EQ(n[XPU_REC_META], 1);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_NVTX], 1);
}

/* A bad frame drops that client (what it sends later is never read) and
 * counts one loss; a client connected beside it goes on. */
static void test_bad_frames(void)
{
	struct batch k = { 0 };
	struct xpu_channel_msg big = { XPU_CHANNEL_MAGIC, XPU_CHANNEL_MAX_MSG + 1 };
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int a, b, c;

	batch__kernel(&k, 1);
	TEST_ASSERT_EQ(rig__open(&r, "frames"), 0);
	TEST_ASSERT((a = client(&r)) >= 0);
	TEST_ASSERT((b = client(&r)) >= 0);
	TEST_ASSERT((c = client(&r)) >= 0);
	TEST_ASSERT_EQ(send_msg(a, XPU_CHANNEL_MAGIC, &k), 0);
	TEST_ASSERT_EQ(send_msg(a, 0x314e4844, &k), 0);		/* "DHN1" */
	TEST_ASSERT_EQ(send_msg(b, XPU_CHANNEL_MAGIC, &k), 0);
	TEST_ASSERT_EQ(send_all(c, &big, sizeof(big)), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT(dropped(a));
	TEST_ASSERT(!dropped(b));
	TEST_ASSERT(dropped(c));
	TEST_ASSERT_EQ(channel__lost(r.ch), 2);
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 2);
	send_msg(a, XPU_CHANNEL_MAGIC, &k);	/* fails or goes nowhere */
	TEST_ASSERT_EQ(send_msg(b, XPU_CHANNEL_MAGIC, &k), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 3);
	TEST_ASSERT_EQ(channel__lost(r.ch), 2);
	close(a);
	close(b);
	close(c);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 3);
}

/* Every way a record inside a well-framed batch can be wrong: the whole
 * batch is refused (the good record before the bad one is not written),
 * the client is dropped, one loss is counted. */
static void test_invalid_records(void)
{
	struct xpu_gpu_kernel kern = { 0 };
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd;

	TEST_ASSERT_EQ(rig__open(&r, "records"), 0);
	for (int i = 0; i < 7; i++) {
		struct batch b = { 0 };

		batch__kernel(&b, 1);
		switch (i) {
		case 0:	/* size not a multiple of 8 */
			batch__add_raw(&b, XPU_REC_GPU_KERNEL, 8 + sizeof(kern) + 4, sizeof(kern) + 4);
			break;
		case 1:	/* smaller than its header */
			batch__add_raw(&b, XPU_REC_GPU_KERNEL, 0, 0);
			break;
		case 2:	/* larger than what the message holds */
			batch__add_raw(&b, XPU_REC_GPU_KERNEL, 8 + sizeof(kern) + 8, sizeof(kern));
			break;
		case 3:	/* an unknown type */
			batch__add_raw(&b, 20, 16, 8);
			break;
		case 4:	/* beyond the type table */
			batch__add_raw(&b, XPU_REC_MAX + 1, 16, 8);
			break;
		case 5:	/* shorter than its type's minimum */
			batch__add_raw(&b, XPU_REC_GPU_KERNEL, 16, 8);
			break;
		case 6:	/* a header cut short at the end of the message */
			batch__add_raw(&b, XPU_REC_GPU_KERNEL, 0, 0);
			b.len -= 4;
			break;
		}
		TEST_ASSERT((fd = client(&r)) >= 0);
		TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &b), 0);
		channel__drain_all(r.ch);
		if (!dropped(fd))
			fprintf(stderr, "  case %d\n", i);
		TEST_ASSERT(dropped(fd));
		TEST_ASSERT_EQ(channel__lost(r.ch), i + 1);
		TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), 0);
		close(fd);
	}
	TEST_ASSERT_EQ(channel__records(r.ch), 0);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 0);
}

/* The peer dies in the middle of a message: that message is one loss. */
static void test_cut_message(void)
{
	struct batch k = { 0 };
	struct xpu_channel_msg m;
	struct rig r;
	uint64_t n[XPU_REC_MAX];
	int fd;

	batch__kernel(&k, 1);
	TEST_ASSERT_EQ(rig__open(&r, "cut"), 0);
	for (int cut = 0; cut < 2; cut++) {	/* in the header, in the body */
		TEST_ASSERT((fd = client(&r)) >= 0);
		TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &k), 0);
		m = (struct xpu_channel_msg){ XPU_CHANNEL_MAGIC, k.len };
		TEST_ASSERT_EQ(send_all(fd, &m, cut ? sizeof(m) : 3), 0);
		if (cut)
			TEST_ASSERT_EQ(send_all(fd, k.buf, k.len - 8), 0);
		close(fd);
		channel__drain_all(r.ch);
		TEST_ASSERT_EQ(channel__lost(r.ch), cut + 1);
		TEST_ASSERT_EQ(rig__written(&r, XPU_REC_GPU_KERNEL), cut + 1);
	}
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 2);
}

static void test_subscriber_conflict_warns_once(void)
{
	struct batch b = { 0 };
	char path[128], out[2048] = "";
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd, errfd, saved;
	ssize_t len;

	batch__meta(&b, "gpu.subscriber_conflict", "torch.profiler");
	batch__meta(&b, "gpu.subscriber_conflict", "again");
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	errfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	TEST_ASSERT(errfd >= 0);
	TEST_ASSERT_EQ(rig__open(&r, "conflict"), 0);
	TEST_ASSERT((fd = client(&r)) >= 0);
	TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &b), 0);
	TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &b), 0);
	fflush(stderr);
	saved = dup(2);
	dup2(errfd, 2);
	channel__drain_all(r.ch);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	len = pread(errfd, out, sizeof(out) - 1, 0);
	close(errfd);
	TEST_ASSERT(len > 0);
	out[len] = 0;
	TEST_ASSERT(!strncmp(out, "test_record_channel: warning: another CUPTI subscriber holds the GPU "
			     "callbacks (torch.profiler): ", 89));
	TEST_ASSERT(strchr(out, '\n') == out + len - 1);	/* one line */
	TEST_ASSERT_EQ(channel__lost(r.ch), 0);
	close(fd);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_META], 4);
}

/* What a CUDA process may send (channel__check_batch), record by record. */
static void test_check_batch(void)
{
	struct xpu_sample sample = { 0 };
	struct xpu_finish fin = { 0 };
	struct xpu_fork fork_ = { 0 };
	struct xpu_comm comm = { 0 };
	struct xpu_gpu_memcpy cp = { 0 };
	struct xpu_gpu_memset ms = { 0 };
	struct xpu_gpu_sync sy = { 0 };
	struct xpu_gpu_device dev = { 0 };
	struct xpu_gpu_nvtx nvtx = { .range_id = 1, .flags = XPU_NVTX_PUSHPOP };
	struct xpu_lost lost = { .source = XPU_LOST_GPU_CHANNEL, .count = 1 };
	struct { struct xpu_mmap m; char path[8]; } mm = { .path = "/x" };
	struct batch ok = { 0 }, b;
	uint8_t corr[sizeof(struct xpu_gpu_corr) + sizeof(struct xpu_stack)] = { 0 };
	struct xpu_gpu_corr nvtx_corr = { .domain = XPU_API_NVTX, .correlation_id = 1 };
	const char key[8] = { 'g', 'p', 'u', '.', 'n', 'o', 'z', 'z' };	/* no NUL at all */

	batch__meta(&ok, "cupti.version", "1");
	batch__meta(&ok, "gpu.count", "2");
	batch__meta(&ok, "cuda.driver_version", "13000");
	batch__kernel(&ok, 9);
	batch__add(&ok, XPU_REC_GPU_MEMCPY, &cp, sizeof(cp));
	batch__add(&ok, XPU_REC_GPU_MEMSET, &ms, sizeof(ms));
	batch__add(&ok, XPU_REC_GPU_SYNC, &sy, sizeof(sy));
	batch__add(&ok, XPU_REC_GPU_DEVICE, &dev, sizeof(dev));
	batch__add(&ok, XPU_REC_LOST, &lost, sizeof(lost));
	lost.source = XPU_LOST_CUPTI;
	batch__add(&ok, XPU_REC_LOST, &lost, sizeof(lost));
	/* NVTX ranges and their losses (1.2) */
	batch__add(&ok, XPU_REC_GPU_NVTX, &nvtx, sizeof(nvtx));
	lost.source = XPU_LOST_NVTX;
	batch__add(&ok, XPU_REC_LOST, &lost, sizeof(lost));
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, ok.len), 0);
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, 0), 0);
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, ok.len - 8), -EINVAL);	/* overruns */
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, 4), -EINVAL);

#define FORBIDDEN(...) do {								b = ok;									__VA_ARGS__;								TEST_ASSERT_EQ(channel__check_batch(b.buf, b.len), -EPERM); 	} while (0)
	FORBIDDEN(batch__add(&b, XPU_REC_SAMPLE, &sample, sizeof(sample)));
	FORBIDDEN(batch__add(&b, XPU_REC_FINISH, &fin, sizeof(fin)));
	FORBIDDEN(batch__add(&b, XPU_REC_FORK, &fork_, sizeof(fork_)));
	FORBIDDEN(batch__add(&b, XPU_REC_COMM, &comm, sizeof(comm)));
	FORBIDDEN(batch__add(&b, XPU_REC_MMAP, &mm, sizeof(mm)));
	FORBIDDEN(batch__add(&b, XPU_REC_GPU_CORR, corr, sizeof(corr)));
	/* the push stacks of NVTX ranges are the uprobe's too, never the library's */
	memcpy(corr, &nvtx_corr, sizeof(nvtx_corr));
	FORBIDDEN(batch__add(&b, XPU_REC_GPU_CORR, corr, sizeof(corr)));
	lost.source = XPU_LOST_OFFCPU;
	FORBIDDEN(batch__add(&b, XPU_REC_LOST, &lost, sizeof(lost)));
	FORBIDDEN(batch__meta(&b, "sample_freq", "1"));
	FORBIDDEN(batch__meta(&b, "cmdline", "forged"));
	FORBIDDEN(batch__meta(&b, "gpu", "off"));
	FORBIDDEN(batch__add(&b, XPU_REC_META, key, sizeof(key)));
	lost.source = XPU_LOST_SAMPLES;
	FORBIDDEN(batch__add(&b, XPU_REC_LOST, &lost, sizeof(lost)));
	FORBIDDEN(batch__add(&b, XPU_REC_LOST, &lost, 8));	/* too short to tell */
	FORBIDDEN(batch__add_raw(&b, 20, 16, 8));
#undef FORBIDDEN
}

/* A launch walk's GPU_CORR (cupti/walk/walk_probe.c): only from the process
 * handed the rule table, its own runtime or driver calls, frames only. */
/* --gpu-memory's records (format 1.12): a CUDA process may send each well
 * formed; a field out of its range, a reserved bit, the allocator's OOM
 * (the recorder's probes') or the allocator's GPU_BLOCK are refused. */
static void test_check_memory(void)
{
	struct xpu_gpu_memory m = { .correlation_id = 5, .address = 0x1000, .bytes = 4096,
				    .op = XPU_MEMORY_ALLOC, .memory_kind = XPU_MEMKIND_DEVICE,
				    .stream = XPU_GPU_MEMORY_NO_STREAM };
	struct xpu_gpu_mempool p = { .op = XPU_MEMPOOL_TRIMMED, .pool_type = 1, .size = 1 << 20 };
	struct xpu_gpu_mem_state st = { .free = 100, .total = 400, .used_before = 300,
					.flags = XPU_MEM_STATE_ATTACH };
	struct xpu_gpu_oom o = { .bytes = 1ull << 40, .correlation_id = 6, .device = -1,
				 .source = XPU_OOM_CUDA, .domain = XPU_API_RUNTIME, .cbid = 20, .ret = 2 };
	struct xpu_gpu_block blk = { .op = XPU_BLOCK_MALLOC, .source = XPU_BLOCK_USDT };
	struct batch ok = { 0 }, b;

	batch__add(&ok, XPU_REC_GPU_MEMORY, &m, sizeof(m));
	m.op = XPU_MEMORY_RELEASE;
	m.flags = XPU_GPU_MEMORY_ASYNC;
	m.pool_type = 2;
	batch__add(&ok, XPU_REC_GPU_MEMORY, &m, sizeof(m));
	batch__add(&ok, XPU_REC_GPU_MEMPOOL, &p, sizeof(p));
	batch__add(&ok, XPU_REC_GPU_MEM_STATE, &st, sizeof(st));
	batch__add(&ok, XPU_REC_GPU_OOM, &o, sizeof(o));
	o.domain = XPU_API_DRIVER;
	batch__add(&ok, XPU_REC_GPU_OOM, &o, sizeof(o));
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, ok.len), 0);

#define REFUSED(type, rec, ...) do {							\
		__typeof__(rec) _r = rec;						\
		b = ok;									\
		__VA_ARGS__;								\
		batch__add(&b, type, &_r, sizeof(_r));					\
		TEST_ASSERT_EQ(channel__check_batch(b.buf, b.len), -EPERM);		\
	} while (0)
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.op = 0);
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.op = 3);
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.memory_kind = XPU_MEMKIND_MAX);
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.pool_type = 3);
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.reserved = 1);
	REFUSED(XPU_REC_GPU_MEMORY, m, _r.flags = 2);
	REFUSED(XPU_REC_GPU_MEMPOOL, p, _r.op = 0);
	REFUSED(XPU_REC_GPU_MEMPOOL, p, _r.op = 4);
	REFUSED(XPU_REC_GPU_MEMPOOL, p, _r.pool_type = 3);
	REFUSED(XPU_REC_GPU_MEMPOOL, p, _r.flags = 1);
	REFUSED(XPU_REC_GPU_MEMPOOL, p, _r.reserved = 1);
	REFUSED(XPU_REC_GPU_MEM_STATE, st, _r.free = 500);
	REFUSED(XPU_REC_GPU_MEM_STATE, st, _r.used_before = 1);
	REFUSED(XPU_REC_GPU_MEM_STATE, st, _r.flags = 2);
	REFUSED(XPU_REC_GPU_MEM_STATE, st, _r.reserved = 1);
	REFUSED(XPU_REC_GPU_OOM, o, _r.source = XPU_OOM_ALLOCATOR);
	REFUSED(XPU_REC_GPU_OOM, o, _r.domain = XPU_API_NVTX);
	REFUSED(XPU_REC_GPU_OOM, o, _r.reserved = 1);
	REFUSED(XPU_REC_GPU_BLOCK, blk, (void)0);
#undef REFUSED
	/* too short to tell */
	b = ok;
	batch__add(&b, XPU_REC_GPU_OOM, &o, 16);
	TEST_ASSERT_EQ(channel__check_batch(b.buf, b.len), -EPERM);
}

static void test_check_walk_corr(void)
{
	struct { struct xpu_gpu_corr c; uint64_t pcs[3]; } w = {
		.c = { .pid = 7, .tid = 7, .domain = XPU_API_RUNTIME, .correlation_id = 5, .cbid = 211,
		       .stack = { .nr_user_ips = 3, .arch = XPU_ARCH_X86_64,
				  .flags = XPU_STACK_UNWOUND | XPU_STACK_PRUNED | XPU_STACK_PRUNED_CFI } },
		.pcs = { 0x7f0000001000, 0x7f0000002005, 0x401234 },
	};
	struct batch ok = { 0 }, b;

	batch__add(&ok, XPU_REC_GPU_CORR, &w, sizeof(w));
	TEST_ASSERT_EQ(channel__check_batch_from(ok.buf, ok.len, 7), 0);
	TEST_ASSERT_EQ(channel__check_batch_from(ok.buf, ok.len, 0), -EPERM);	/* no table */
	TEST_ASSERT_EQ(channel__check_batch_from(ok.buf, ok.len, 8), -EPERM);	/* another pid's */
	TEST_ASSERT_EQ(channel__check_batch(ok.buf, ok.len), -EPERM);
#define REFUSED(field, value) do {							\
		typeof(w) f = w;							\
		f.field = value;							\
		b = (struct batch){ 0 };						\
		batch__add(&b, XPU_REC_GPU_CORR, &f, sizeof(f));			\
		TEST_ASSERT_EQ(channel__check_batch_from(b.buf, b.len, 7), -EPERM);	\
	} while (0)
	REFUSED(c.domain, XPU_API_NVTX);
	REFUSED(c.domain, XPU_API_GRAPH_NODE);
	REFUSED(c.stack.nr_regs, 17);
	REFUSED(c.stack.stack_size, 8);
	REFUSED(c.stack.nr_kernel_ips, 1);
	REFUSED(c.stack.nr_user_ips, 2);	/* the body says 3 */
	REFUSED(c.stack.nr_user_ips, 0);
	REFUSED(c.stack.flags, XPU_STACK_PRUNED);
	REFUSED(c.stack.arch, XPU_ARCH_AARCH64);
#undef REFUSED
	/* its Python frames (cupti/walk/walk_python.c), right before it */
	{
		struct { struct xpu_py_stack st; struct xpu_py_frame f[2]; } py = {
			.st = { .pid = 7, .tid = 7, .nr_frames = 2, .version = 0x030b },
			.f = { { .code = 0x7f0000100000 }, { .code = 0x7f0000200000 } },
		};
		struct batch pb = { 0 };

		batch__add(&pb, XPU_REC_PY_STACK, &py, sizeof(py));
		batch__add(&pb, XPU_REC_GPU_CORR, &w, sizeof(w));
		TEST_ASSERT_EQ(channel__check_batch_from(pb.buf, pb.len, 7), 0);
		TEST_ASSERT_EQ(channel__check_batch_from(pb.buf, pb.len, 0), -EPERM);
		py.st.pid = 8;
		pb = (struct batch){ 0 };
		batch__add(&pb, XPU_REC_PY_STACK, &py, sizeof(py));
		TEST_ASSERT_EQ(channel__check_batch_from(pb.buf, pb.len, 7), -EPERM);
		py.st.pid = 7;
		py.st.nr_frames = 3;		/* the body holds 2 */
		pb = (struct batch){ 0 };
		batch__add(&pb, XPU_REC_PY_STACK, &py, sizeof(py));
		TEST_ASSERT_EQ(channel__check_batch_from(pb.buf, pb.len, 7), -EPERM);
		py.st.nr_frames = 2;
		py.st.flags = 4;		/* no such flag */
		pb = (struct batch){ 0 };
		batch__add(&pb, XPU_REC_PY_STACK, &py, sizeof(py));
		TEST_ASSERT_EQ(channel__check_batch_from(pb.buf, pb.len, 7), -EPERM);
	}
	/* a walk's record among the usual ones */
	b = (struct batch){ 0 };
	batch__kernel(&b, 5);
	batch__add(&b, XPU_REC_GPU_CORR, &w, sizeof(w));
	TEST_ASSERT_EQ(channel__check_batch_from(b.buf, b.len, 7), 0);
}

/* A forged record over the socket: the batch is refused, the client dropped. */
static void test_forged_record_dropped(void)
{
	struct xpu_finish fin = { 0 };
	struct batch b = { 0 };
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd;

	batch__kernel(&b, 1);
	batch__add(&b, XPU_REC_FINISH, &fin, sizeof(fin));
	TEST_ASSERT_EQ(rig__open(&r, "forged"), 0);
	TEST_ASSERT((fd = client(&r)) >= 0);
	TEST_ASSERT_EQ(send_msg(fd, XPU_CHANNEL_MAGIC, &b), 0);
	channel__drain_all(r.ch);
	TEST_ASSERT(dropped(fd));
	TEST_ASSERT_EQ(channel__lost(r.ch), 1);
	close(fd);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 0);
	TEST_ASSERT_EQ(n[XPU_REC_FINISH], 0);
}

/* Open to every uid (the command may have changed its own), named so
 * that no one can guess it, removed at close. */
static void test_socket_modes(void)
{
	const char *path, *name;
	struct rig r, r2;
	char dir[128];
	struct stat st;

	TEST_ASSERT_EQ(rig__open(&r, "modes"), 0);
	TEST_ASSERT_EQ(rig__open(&r2, "modes2"), 0);
	path = channel__path(r.ch);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	TEST_ASSERT_EQ(stat(dir, &st), 0);
	TEST_ASSERT_EQ(st.st_mode & 07777, 0711);	/* enter, not list */
	TEST_ASSERT_EQ(stat(path, &st), 0);
	TEST_ASSERT(S_ISSOCK(st.st_mode));
	TEST_ASSERT_EQ(st.st_mode & 0777, 0666);
	name = strrchr(path, '/') + 1;
	TEST_ASSERT_EQ(strlen(name), 32 + strlen(".sock"));
	TEST_ASSERT_EQ(strspn(name, "0123456789abcdef"), 32);
	TEST_ASSERT(strcmp(name, strrchr(channel__path(r2.ch), '/') + 1));
	channel__close(r.ch);
	TEST_ASSERT(stat(dir, &st) && errno == ENOENT);	/* removed at close */
	xpu_writer__close(r.w);
	channel__close(r2.ch);
	xpu_writer__close(r2.w);
}

/* A peer outside the tree: closed at once, nothing it sends is written,
 * counted; with no check at all, every peer is. */
static void test_peer_refused(void)
{
	struct batch b = { 0 };
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd;

	batch__kernel(&b, 1);
	TEST_ASSERT_EQ(rig__open(&r, "refused"), 0);
	tree_pid = getpid() + 1;		/* not us */
	accepts = 0;
	channel__set_on_accept(r.ch, on_accept, NULL);
	TEST_ASSERT((fd = client(&r)) >= 0);
	send_msg(fd, XPU_CHANNEL_MAGIC, &b);	/* may fail: the peer is gone */
	channel__drain_all(r.ch);
	TEST_ASSERT(refused(fd));
	close(fd);
	TEST_ASSERT_EQ(channel__refused(r.ch), 1);
	TEST_ASSERT_EQ(channel__accepted(r.ch), 0);
	TEST_ASSERT_EQ(channel__lost(r.ch), 0);
	TEST_ASSERT_EQ(accepts, 0);
	channel__set_peer_check(r.ch, NULL, NULL);
	TEST_ASSERT((fd = client(&r)) >= 0);
	channel__drain_all(r.ch);
	TEST_ASSERT(refused(fd));
	close(fd);
	TEST_ASSERT_EQ(channel__refused(r.ch), 2);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
	TEST_ASSERT_EQ(n[XPU_REC_GPU_KERNEL], 0);
}

/* The library's loads without a connection: by build-id (a copy
 * elsewhere counts), by path where there is none, each load once; an
 * accepted connection of the pid takes one back. */
static void test_unconnected(void)
{
	static const uint8_t bid[3] = { 1, 2, 3 }, other[3] = { 1, 2, 4 };
	const char *lib = "/usr/lib/xpu-perf/libxpu-cupti.so";
	uint32_t *pids, me = (uint32_t)getpid();
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd, nr;

	TEST_ASSERT_EQ(rig__open(&r, "unconnected"), 0);
	channel__mapped(r.ch, 10, lib, bid, 3);		/* no library set: nothing */
	TEST_ASSERT_EQ(channel__unconnected(r.ch, &pids), 0);
	TEST_ASSERT(!pids);
	channel__set_library(r.ch, lib, bid, 3);
	channel__mapped(r.ch, 10, lib, bid, 3);
	channel__mapped(r.ch, 11, "/ctr/root/libxpu-cupti.so", bid, 3);	/* a copy */
	channel__mapped(r.ch, 12, lib, other, 3);		/* another build */
	channel__mapped(r.ch, 13, "/usr/lib/libc.so.6", NULL, 0);
	channel__mapped(r.ch, 14, lib, NULL, 0);		/* no build-id: the path */
	channel__mapped(r.ch, (pid_t)me, lib, bid, 3);	/* loaded, exec'd, loaded */
	channel__mapped(r.ch, (pid_t)me, lib, bid, 3);
	TEST_ASSERT((fd = client(&r)) >= 0);		/* one of them connects */
	channel__drain_all(r.ch);
	TEST_ASSERT(told_ready(fd));
	nr = channel__unconnected(r.ch, &pids);
	TEST_ASSERT_EQ(nr, 4);
	for (int i = 1; i < nr; i++)		/* sort */
		for (int j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
			uint32_t t = pids[j];

			pids[j] = pids[j - 1];
			pids[j - 1] = t;
		}
	TEST_ASSERT_EQ(pids[0], 10u);
	TEST_ASSERT_EQ(pids[1], 11u);
	TEST_ASSERT_EQ(pids[2], 14u);
	TEST_ASSERT_EQ(pids[3], me);
	free(pids);
	close(fd);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
}

/* bounded capture: the ready byte and the flush period, in one message */
static void test_flush_config(void)
{
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m;
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd;

	TEST_ASSERT_EQ(rig__open(&r, "config"), 0);
	channel__set_flush_ms(r.ch, 200);
	TEST_ASSERT((fd = client(&r)) >= 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(recv(fd, &m, sizeof(m) + 1, MSG_DONTWAIT), (ssize_t)sizeof(m));
	TEST_ASSERT_EQ(m.ready, XPU_CHANNEL_READY);
	TEST_ASSERT_EQ(m.cfg.magic, XPU_CHANNEL_CONFIG_MAGIC);
	TEST_ASSERT_EQ(m.cfg.flush_ms, 200u);
	TEST_ASSERT_EQ(m.cfg.flags, 0u);
	close(fd);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
}

/* --gpu-memory: the config goes with the flag, without bounded capture too
 * (an attach learns it the same way); without either, the byte alone */
static void test_config_flags(void)
{
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m;
	uint64_t n[XPU_REC_MAX];
	struct rig r;
	int fd;

	TEST_ASSERT_EQ(rig__open(&r, "flags"), 0);
	TEST_ASSERT((fd = client(&r)) >= 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(recv(fd, &m, sizeof(m) + 1, MSG_DONTWAIT), 1);
	close(fd);
	channel__set_config_flags(r.ch, XPU_CHANNEL_GPU_MEMORY);
	TEST_ASSERT((fd = client(&r)) >= 0);
	channel__drain_all(r.ch);
	TEST_ASSERT_EQ(recv(fd, &m, sizeof(m) + 1, MSG_DONTWAIT), (ssize_t)sizeof(m));
	TEST_ASSERT_EQ(m.ready, XPU_CHANNEL_READY);
	TEST_ASSERT_EQ(m.cfg.magic, XPU_CHANNEL_CONFIG_MAGIC);
	TEST_ASSERT_EQ(m.cfg.flush_ms, 0u);
	TEST_ASSERT_EQ(m.cfg.flags, XPU_CHANNEL_GPU_MEMORY);
	TEST_ASSERT_EQ(m.cfg.reserved, 0u);
	close(fd);
	TEST_ASSERT_EQ(rig__close(&r, n), 0);
}

int main(void)
{
	char cmd[128];
	int ret;

	xpu_log_init("test_record_channel");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_record_channel.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	TEST_RUN(test_valid_batches);
	TEST_RUN(test_bad_frames);
	TEST_RUN(test_invalid_records);
	TEST_RUN(test_cut_message);
	TEST_RUN(test_subscriber_conflict_warns_once);
	TEST_RUN(test_check_batch);
	TEST_RUN(test_check_memory);
	TEST_RUN(test_check_walk_corr);
	TEST_RUN(test_forged_record_dropped);
	TEST_RUN(test_socket_modes);
	TEST_RUN(test_peer_refused);
	TEST_RUN(test_unconnected);
	TEST_RUN(test_flush_config);
	TEST_RUN(test_config_flags);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ret = system(cmd);
	(void)ret;
	TEST_EXIT();
}
