// SPDX-License-Identifier: MIT
/*
 * The GPU records socket (protocol in cupti/channel/wire.h): a Unix stream socket
 * every CUDA process of the tree connects to once, sending framed batches
 * of encoded records.
 *
 * Who may connect. The command may change its uid (sudo -u USER, setpriv,
 * su) before its CUDA processes start, so the socket is open to every uid:
 * mode 0666, named by 128 random bits in a 0711 directory under /tmp,
 * which nobody but root can list. Its path is in the command's environment
 * only (XPU_CUPTI_SOCKET_ENV), which other users cannot read. Each
 * connection is then checked with SO_PEERCRED: a peer whose process is
 * not in the recorded tree (channel__set_peer_check) is closed before it
 * may send anything, and counted (channel__refused).
 *
 * Who could not connect. A CUDA process whose library cannot reach the
 * socket (another /tmp, a sandbox that denies it, XPU_CUPTI_SOCKET_ENV
 * gone from its environment, a peer refused above) sends nothing, so the
 * socket cannot tell: the side band can. Every load of the library by a
 * tracked process is an executable MMAP of it (channel__mapped, by
 * build-id or path), and every library that loads connects once; a pid
 * with more loads than accepted connections at the end is a CUDA process
 * whose GPU records are missing (channel__unconnected: xpu-record warns,
 * and writes XPU_LOST_GPU_UNCONNECTED). Counting makes the order of the
 * two, which come through different rings, irrelevant, and an exec'd or
 * recycled pid that loads it again counts again.
 *
 * What a peer may send. Each batch is checked before anything of it is
 * written: what a CUDA process may send at all
 * (channel__check_batch_from: with the launch walk, a process handed a
 * rule table may send its walk's GPU_CORR and PY_STACK records), then the
 * records' structure (xpu_writer__add_encoded). A protocol error drops
 * that client and is counted as XPU_LOST_GPU_CHANNEL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <stdatomic.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "cupti/channel/wire.h"
#include "format/record_types.h"
#include "record/unwind/launch_rules.h"
#include "record/gpu/channel.h"

struct channel_client {
	int fd;
	uint32_t walk_pid;		/* handed a rule table: its pid may send walk GPU_CORRs */
	uint8_t *buf;
	size_t have, cap;
};

struct channel {
	struct xpu_writer *w;
	_Atomic int nr_connected;	/* nr_clients, for other threads */
	int lfd, epfd;
	char dir[32];
	char path[108];		/* sun_path's size */
	struct channel_client *clients;
	int nr_clients;
	size_t clients_cap;
	uint64_t lost, records;
	_Atomic uint64_t accepted;	/* CUDA processes that connected (read by rotate.c too) */
	void (*on_accept)(void *ctx);	/* before a client is told it may go on */
	void *on_accept_ctx;
	bool (*peer_ok)(void *ctx, pid_t pid);	/* NULL: every peer refused */
	void *peer_ctx;
	uint64_t refused;		/* connections from outside the tree */
	char *lib_path;			/* the library as MMAP records name it, or NULL */
	uint8_t lib_bid[XPU_MMAP_BUILD_ID_MAX], lib_bid_size;
	struct u64map loads;		/* pid -> loads << 32 | accepted connections */
	uint64_t nvtx;			/* GPU_NVTX records */
	uint64_t mem[4];		/* --gpu-memory: GPU_MEMORY, _MEMPOOL, _MEM_STATE, _OOM */
	bool warned_conflict;
	bool warned_attach;		/* an attach that stopped (cupti/attach.h) */
	struct launch_rules *rules;	/* NULL: no rule tables handed out */
	uint32_t peer_walk_pid;		/* the client being read's walk_pid */
	uint32_t flush_ms;		/* told each client with the ready byte (wire.h); 0: not */
	uint32_t cfg_flags;		/* ... and these (XPU_CHANNEL_*, wire.h) */
	void (*py)(void *arg, const void *body, size_t len);	/* walk PY_STACKs, or NULL */
	void *py_arg;
};

/* The socket's name: 32 hex digits from getrandom(), so that a user who
 * may enter the directory (0711) cannot guess it. */
static int channel__name(char *hex, size_t size)
{
	uint8_t r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r) && 2 * i + 2 < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int channel__open(struct channel **out, struct xpu_writer *w)
{
	struct channel *ch = xzalloc(sizeof(*ch));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char name[33];
	int ret;

	*out = ch;
	ch->w = w;
	ch->lfd = -1;
	ch->epfd = -1;
	if ((ret = channel__name(name, sizeof(name))))
		return ret;
	snprintf(ch->dir, sizeof(ch->dir), "/tmp/xpu-record.XXXXXX");
	if (!mkdtemp(ch->dir)) {	/* mode 0700 */
		ch->dir[0] = 0;
		return -errno;
	}
	/* every uid may enter, none but root list it */
	if (chmod(ch->dir, 0711))
		return -errno;
	snprintf(ch->path, sizeof(ch->path), "%s/%s.sock", ch->dir, name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ch->path);
	ch->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ch->lfd < 0)
		return -errno;
	if (bind(ch->lfd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		ch->path[0] = 0;	/* nothing of ours to unlink */
		return ret;
	}
	/* connecting takes write permission, whatever uid the command has
	 * become: who it is, is the peer check's (channel__accept) */
	if (chmod(ch->path, 0666) || listen(ch->lfd, 64))
		return -errno;
	return 0;
}

const char *channel__path(struct channel *ch)
{
	return ch->path;
}

int channel__fd(struct channel *ch)
{
	return ch->lfd;
}

void channel__set_epoll(struct channel *ch, int epfd)
{
	ch->epfd = epfd;
}

uint64_t channel__lost(struct channel *ch)
{
	return ch->lost;
}

uint64_t channel__accepted(struct channel *ch)
{
	return atomic_load(&ch->accepted);
}

uint64_t channel__records(struct channel *ch)
{
	return ch->records;
}

uint64_t channel__nvtx_records(struct channel *ch)
{
	return ch->nvtx;
}

bool channel__owns(struct channel *ch, int fd)
{
	if (fd == ch->lfd)
		return true;
	for (int i = 0; i < ch->nr_clients; i++)
		if (ch->clients[i].fd == fd)
			return true;
	return false;
}

static void channel__drop(struct channel *ch, int i)
{
	struct channel_client *c = &ch->clients[i];

	if (ch->epfd >= 0)
		epoll_ctl(ch->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	ch->clients[i] = ch->clients[--ch->nr_clients];
	atomic_store(&ch->nr_connected, ch->nr_clients);
}

void channel__shutdown_clients(struct channel *ch)
{
	for (int i = 0; i < ch->nr_clients; i++)
		shutdown(ch->clients[i].fd, SHUT_WR);
}

int channel__nr_clients(struct channel *ch)
{
	return atomic_load(&ch->nr_connected);
}

/* META keys a CUDA process may set: its own, never the recorder's. */
static const char *const peer_meta_prefixes[] = { "cupti.", "gpu.", "cuda." };

/*
 * A GPU_CORR record of the launch walk (cupti/walk/walk_probe.c) from the process
 * pid, which was handed a rule table: a runtime or driver call of that
 * process, frames only (XPU_STACK_UNWOUND, as xpu-record writes the
 * marker's), no kernel frames, registers or stack bytes.
 */
static bool channel__walk_corr_ok(const uint8_t *body, size_t len, uint32_t pid)
{
	struct xpu_gpu_corr c;

	if (!pid || len < sizeof(c))
		return false;
	memcpy(&c, body, sizeof(c));
	return c.pid == pid && (c.domain == XPU_API_RUNTIME || c.domain == XPU_API_DRIVER) &&
	       c.stack.nr_kernel_ips == 0 && c.stack.nr_regs == 0 && c.stack.stack_size == 0 &&
	       c.stack.nr_user_ips >= 1 && c.stack.nr_user_ips <= XPU_UNWOUND_MAX &&
	       c.stack.arch == XPU_ARCH_X86_64 &&
	       c.stack.flags == (XPU_STACK_UNWOUND | XPU_STACK_PRUNED | XPU_STACK_PRUNED_CFI) &&
	       len == sizeof(c) + (size_t)c.stack.nr_user_ips * 8;
}

/* A PY_STACK of the launch walk (cupti/walk/walk_python.c) from the process
 * pid: its own, 1 to 128 frames, the body that many frames long. */
static bool channel__walk_py_ok(const uint8_t *body, size_t len, uint32_t pid)
{
	struct xpu_py_stack st;

	if (!pid || len < sizeof(st))
		return false;
	memcpy(&st, body, sizeof(st));
	return st.pid == pid && st.nr_frames >= 1 && st.nr_frames <= XPU_WALK_PY_FRAMES &&
	       !(st.flags & ~(XPU_PY_STACK_TRUNCATED | XPU_PY_STACK_BAD_FRAME)) &&
	       len == sizeof(st) + (size_t)st.nr_frames * sizeof(struct xpu_py_frame);
}

/*
 * --gpu-memory's records (cupti/memory/), each well formed: the values the
 * format gives its fields, reserved bits zero. An out-of-memory record
 * of a CUDA process is a CUDA call's (source XPU_OOM_CUDA, a runtime or
 * driver call); the caching allocator's are the recorder's probes'.
 */
static bool channel__memory_ok(uint16_t type, const uint8_t *body, size_t len)
{
	union {
		struct xpu_gpu_memory m;
		struct xpu_gpu_mempool p;
		struct xpu_gpu_mem_state s;
		struct xpu_gpu_oom o;
	} u;

	switch (type) {
	case XPU_REC_GPU_MEMORY:
		if (len < sizeof(u.m))
			return false;
		memcpy(&u.m, body, sizeof(u.m));
		return (u.m.op == XPU_MEMORY_ALLOC || u.m.op == XPU_MEMORY_RELEASE) &&
		       u.m.memory_kind < XPU_MEMKIND_MAX && u.m.pool_type <= 2 && !u.m.reserved &&
		       !(u.m.flags & ~XPU_GPU_MEMORY_ASYNC);
	case XPU_REC_GPU_MEMPOOL:
		if (len < sizeof(u.p))
			return false;
		memcpy(&u.p, body, sizeof(u.p));
		return u.p.op >= XPU_MEMPOOL_CREATED && u.p.op <= XPU_MEMPOOL_TRIMMED &&
		       u.p.pool_type <= 2 && !u.p.reserved && !u.p.flags;
	case XPU_REC_GPU_MEM_STATE:
		if (len < sizeof(u.s))
			return false;
		memcpy(&u.s, body, sizeof(u.s));
		return u.s.free <= u.s.total && u.s.used_before == u.s.total - u.s.free &&
		       !(u.s.flags & ~XPU_MEM_STATE_ATTACH) && !u.s.reserved;
	case XPU_REC_GPU_OOM:
		if (len < sizeof(u.o))
			return false;
		memcpy(&u.o, body, sizeof(u.o));
		return u.o.source == XPU_OOM_CUDA &&
		       (u.o.domain == XPU_API_RUNTIME || u.o.domain == XPU_API_DRIVER) &&
		       !u.o.reserved;
	}
	return false;
}

static bool channel__peer_may_send(uint16_t type, const uint8_t *body, size_t len,
				   uint32_t walk_pid)
{
	switch (type) {
	case XPU_REC_GPU_MEMORY:
	case XPU_REC_GPU_MEMPOOL:
	case XPU_REC_GPU_MEM_STATE:
	case XPU_REC_GPU_OOM:
		return channel__memory_ok(type, body, len);
	case XPU_REC_STRING:
	case XPU_REC_GPU_KERNEL:
	case XPU_REC_GPU_MEMCPY:
	case XPU_REC_GPU_MEMSET:
	case XPU_REC_GPU_SYNC:
	case XPU_REC_GPU_API:
	case XPU_REC_GPU_DEVICE:
	case XPU_REC_GPU_NVTX:
	case XPU_REC_GPU_GRAPH_NODE:
	case XPU_REC_GPU_PC_SAMPLE:
	case XPU_REC_GPU_STALL_REASON:
	case XPU_REC_GPU_CUBIN:
	case XPU_REC_GPU_PC_RANGE:
		return true;
	case XPU_REC_LOST: {
		struct xpu_lost l;

		if (len < sizeof(l))
			return false;
		memcpy(&l, body, sizeof(l));
		return l.source == XPU_LOST_CUPTI || l.source == XPU_LOST_GPU_CHANNEL ||
		       l.source == XPU_LOST_NVTX || l.source == XPU_LOST_PC_SAMPLES;
	}
	case XPU_REC_META:
		if (!memchr(body, 0, len))
			return false;
		for (size_t i = 0; i < sizeof(peer_meta_prefixes) / sizeof(peer_meta_prefixes[0]); i++)
			if (!strncmp((const char *)body, peer_meta_prefixes[i], strlen(peer_meta_prefixes[i])))
				return true;
		return false;
	case XPU_REC_GPU_CORR:	/* the uprobe's, but for a walking process's launches */
		return channel__walk_corr_ok(body, len, walk_pid);
	case XPU_REC_PY_STACK:	/* the BPF walk's, but for a walking process's launches */
		return channel__walk_py_ok(body, len, walk_pid);
	default:		/* samples, sideband, KSYM, FINISH, correlation records
				 * (also NVTX push stacks, domain 3): ours */
		return false;
	}
}

int channel__check_batch_from(const void *data, size_t len, uint32_t walk_pid)
{
	struct xpu_record rec;
	size_t off = 0;
	int ret;

	while ((ret = xpu_batch__next(data, len, &off, &rec)) == 1)
		if (!channel__peer_may_send(rec.type, rec.body, rec.body_size, walk_pid))
			return -EPERM;
	return ret;
}

int channel__check_batch(const void *data, size_t len)
{
	return channel__check_batch_from(data, len, 0);
}

/* Counts the records of a validated batch and notices a CUPTI subscriber
 * conflict so the user hears of it now, not only in the report. */
static void channel__scan(struct channel *ch, const uint8_t *p, size_t len)
{
	struct xpu_record rec;
	const char *key, *val;
	size_t off = 0;

	while (xpu_batch__next(p, len, &off, &rec) == 1) {
		if (xpu_rectype__is(rec.type, XPU_RECF_GPU) && rec.type != XPU_REC_GPU_CORR)
			ch->records++;
		ch->nvtx += rec.type == XPU_REC_GPU_NVTX;
		if (rec.type == XPU_REC_GPU_MEMORY || rec.type == XPU_REC_GPU_MEMPOOL ||
		    rec.type == XPU_REC_GPU_MEM_STATE || rec.type == XPU_REC_GPU_OOM)
			ch->mem[rec.type == XPU_REC_GPU_MEMORY ? 0 : rec.type == XPU_REC_GPU_MEMPOOL ? 1 :
				rec.type == XPU_REC_GPU_MEM_STATE ? 2 : 3]++;
		if (rec.type == XPU_REC_META && !ch->warned_conflict &&
		    !xpu_record__meta(&rec, &key, &val) &&
		    !strcmp(key, XPU_META_GPU_SUBSCRIBER_CONFLICT)) {
			warn("another CUPTI subscriber holds the GPU callbacks (%s): GPU activity is not "
			     "recorded, CPU profiling goes on; stop torch.profiler/Nsight/compute-sanitizer "
			     "to get GPU data", val);
			ch->warned_conflict = true;
		}
		if (rec.type == XPU_REC_META && !ch->warned_attach &&
		    !xpu_record__meta(&rec, &key, &val) && !strcmp(key, XPU_META_CUPTI_ATTACH) &&
		    !strncmp(val, "not attached", 12)) {
			warn("%s; CPU profiling goes on", val);
			ch->warned_attach = true;
		}
	}
}

/* The code objects the walk's PY_STACK records name, read now and written
 * (PY_CODE) before the batch, as for the BPF walk's (record/kernel/bpf.c). */
static void channel__python(struct channel *ch, const uint8_t *p, size_t len)
{
	struct xpu_record rec;
	size_t off = 0;

	while (ch->py && xpu_batch__next(p, len, &off, &rec) == 1)
		if (rec.type == XPU_REC_PY_STACK)
			ch->py(ch->py_arg, rec.body, rec.body_size);
}

int channel__receive(struct channel *ch, const uint8_t *buf, size_t have, size_t *used)
{
	*used = 0;
	while (have - *used >= sizeof(struct xpu_channel_msg)) {
		struct xpu_channel_msg m;
		const uint8_t *recs = buf + *used + sizeof(m);

		memcpy(&m, buf + *used, sizeof(m));
		if (m.magic != XPU_CHANNEL_MAGIC || m.len > XPU_CHANNEL_MAX_MSG) {
			debug(1, "GPU channel: bad message header (magic %#x, len %u): client dropped",
			      m.magic, m.len);
			return -EPROTO;
		}
		if (have - *used - sizeof(m) < m.len)
			break;		/* the rest comes with a later read */
		if (channel__check_batch_from(recs, m.len, ch->peer_walk_pid)) {
			debug(1, "GPU channel: invalid or forbidden records in a %u-byte message: "
			      "client dropped", m.len);
			return -EBADMSG;
		}
		if (ch->peer_walk_pid)
			channel__python(ch, recs, m.len);
		if (xpu_writer__add_encoded(ch->w, recs, m.len)) {
			debug(1, "GPU channel: invalid or forbidden records in a %u-byte message: "
			      "client dropped", m.len);
			return -EBADMSG;
		}
		channel__scan(ch, recs, m.len);
		*used += sizeof(m) + m.len;
	}
	return 0;
}

/* Reads what the client has; returns false when the client was dropped. */
static bool channel__read_client(struct channel *ch, int i)
{
	struct channel_client *c = &ch->clients[i];

	for (;;) {
		size_t used;
		int ret;
		ssize_t n;

		if (c->cap - c->have < 65536)
			c->buf = xgrow(c->buf, &c->cap, c->have + 65536, 1);
		n = read(c->fd, c->buf + c->have, c->cap - c->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0) {	/* EOF or error: a partial message is lost */
			if (c->have)
				ch->lost++;
			channel__drop(ch, i);
			return false;
		}
		c->have += n;
		ch->peer_walk_pid = c->walk_pid;
		ret = channel__receive(ch, c->buf, c->have, &used);
		ch->peer_walk_pid = 0;
		if (ret) {
			ch->lost++;
			channel__drop(ch, i);
			return false;
		}
		memmove(c->buf, c->buf + used, c->have - used);
		c->have -= used;
	}
}

void channel__set_rules(struct channel *ch, struct launch_rules *rules)
{
	ch->rules = rules;
}

void channel__set_python(struct channel *ch, void (*fn)(void *arg, const void *body, size_t len),
			 void *arg)
{
	ch->py = fn;
	ch->py_arg = arg;
}

/*
 * The ready byte (wire.h), with the client's rule table (launch_rules.c)
 * as SCM_RIGHTS when there is one: a client that reads it with read() gets
 * the byte, and the kernel closes the fd it did not take. With bounded
 * capture or config flags (--gpu-memory) the config follows the byte in
 * the same message.
 */
static uint32_t channel__send_ready(struct channel *ch, int fd, pid_t pid)
{
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m = {
		.ready = XPU_CHANNEL_READY,
		.cfg = { .magic = XPU_CHANNEL_CONFIG_MAGIC, .flush_ms = ch->flush_ms,
			 .flags = ch->cfg_flags },
	};
	size_t mlen = ch->flush_ms || ch->cfg_flags ? sizeof(m) : 1;
	struct iovec iov = { &m, mlen };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int rfd = -1;

	if (ch->rules) {
		rfd = launch_rules__attach(ch->rules, (uint32_t)pid);
		if (rfd < 0)
			debug(1, "GPU channel: no rule table for pid %d: %s", pid, strerror(-rfd));
	}
	if (rfd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &rfd, sizeof(int));
	}
	if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)mlen) {
		debug(1, "GPU channel: cannot tell the client to go on: %s", strerror(errno));
		if (rfd >= 0)
			close(rfd);
		return 0;
	}
	if (rfd < 0)
		return 0;
	close(rfd);
	return (uint32_t)pid;
}

void channel__set_flush_ms(struct channel *ch, uint32_t ms)
{
	ch->flush_ms = ms;
}

void channel__set_config_flags(struct channel *ch, uint32_t flags)
{
	ch->cfg_flags = flags;
}

void channel__set_on_accept(struct channel *ch, void (*fn)(void *ctx), void *ctx)
{
	ch->on_accept = fn;
	ch->on_accept_ctx = ctx;
}

void channel__set_peer_check(struct channel *ch, bool (*fn)(void *ctx, pid_t pid), void *ctx)
{
	ch->peer_ok = fn;
	ch->peer_ctx = ctx;
}

uint64_t channel__refused(struct channel *ch)
{
	return ch->refused;
}

/* The process behind a connection, if it is one of ours: else 0. The pid
 * is the connecting process's at connect() (SO_PEERCRED); the library
 * waits for the ready byte (wire.h) after it, so the process is still
 * there when it is checked, unless it gave up waiting and exited: then it
 * is refused, and counts as a process that could not connect. */
static pid_t channel__peer(struct channel *ch, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		debug(1, "GPU channel: a connection without credentials refused: %s",
		      strerror(errno));
		return 0;
	}
	if (len != sizeof(cred) || cred.pid <= 0) {
		debug(1, "GPU channel: a connection without a pid refused");
		return 0;
	}
	if (!ch->peer_ok || !ch->peer_ok(ch->peer_ctx, cred.pid)) {
		debug(1, "GPU channel: pid %d (uid %u) is not in the recorded process tree: "
		      "refused", cred.pid, cred.uid);
		return 0;
	}
	return cred.pid;
}

void channel__set_library(struct channel *ch, const char *path, const uint8_t *bid,
			  size_t bid_size)
{
	free(ch->lib_path);
	ch->lib_path = path ? xstrdup(path) : NULL;
	ch->lib_bid_size = bid_size <= sizeof(ch->lib_bid) ? (uint8_t)bid_size : 0;
	memcpy(ch->lib_bid, bid, ch->lib_bid_size);
}

/* A copy elsewhere (a container's, a memfd's) is the library by its
 * build-id; without one on either side, by the path. */
static bool channel__is_library(struct channel *ch, const char *path, const uint8_t *bid,
				size_t bid_size)
{
	if (ch->lib_bid_size && bid_size)
		return bid_size == ch->lib_bid_size && !memcmp(bid, ch->lib_bid, bid_size);
	return ch->lib_path && path && !strcmp(path, ch->lib_path);
}

void channel__mapped(struct channel *ch, pid_t pid, const char *path, const uint8_t *bid,
		     size_t bid_size)
{
	if (!ch || !channel__is_library(ch, path, bid, bid_size))
		return;
	*u64map__slot(&ch->loads, (uint64_t)pid) += 1ull << 32;
	debug(1, "GPU channel: pid %d loaded the library", pid);
}

int channel__unconnected(struct channel *ch, uint32_t **pids)
{
	uint64_t pid, v;
	size_t iter = 0, cap = 0;
	int n = 0;

	*pids = NULL;
	while (u64map__next(&ch->loads, &iter, &pid, &v)) {
		uint32_t loads = (uint32_t)(v >> 32), conns = (uint32_t)v;

		for (uint32_t i = conns; i < loads; i++) {
			*pids = xgrow(*pids, &cap, (size_t)n + 1, sizeof(**pids));
			(*pids)[n++] = (uint32_t)pid;
		}
	}
	return n;
}

static void channel__accept(struct channel *ch)
{
	int fd;

	while ((fd = accept4(ch->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		pid_t pid = channel__peer(ch, fd);

		if (!pid) {	/* before it may send anything: nothing of it is read */
			ch->refused++;
			close(fd);
			continue;
		}
		ch->clients = xgrow(ch->clients, &ch->clients_cap, ch->nr_clients + 1,
				    sizeof(*ch->clients));
		ch->clients[ch->nr_clients++] = (struct channel_client){ .fd = fd };
		atomic_store(&ch->nr_connected, ch->nr_clients);
		ch->accepted++;
		*u64map__slot(&ch->loads, (uint64_t)pid) += 1;
		if (ch->epfd >= 0)
			epoll_ctl(ch->epfd, EPOLL_CTL_ADD, fd, &ev);
		debug(1, "GPU channel: pid %d connected", pid);
		if (ch->on_accept)
			ch->on_accept(ch->on_accept_ctx);
		/* the client waits for this before its first launch (wire.h) */
		ch->clients[ch->nr_clients - 1].walk_pid = channel__send_ready(ch, fd, pid);
	}
}

void channel__handle(struct channel *ch, int fd)
{
	if (fd == ch->lfd) {
		channel__accept(ch);
		return;
	}
	for (int i = 0; i < ch->nr_clients; i++) {
		if (ch->clients[i].fd == fd) {
			channel__read_client(ch, i);
			return;
		}
	}
}

void channel__drain_all(struct channel *ch)
{
	channel__accept(ch);
	for (int i = ch->nr_clients - 1; i >= 0; i--)
		channel__read_client(ch, i);
}

void channel__close(struct channel *ch)
{
	if (!ch)
		return;
	if (ch->mem[0] || ch->mem[1] || ch->mem[2] || ch->mem[3])
		debug(1, "GPU channel: memory records: %llu allocations and releases, %llu pool "
		      "events, %llu device states, %llu out-of-memory", (unsigned long long)ch->mem[0],
		      (unsigned long long)ch->mem[1], (unsigned long long)ch->mem[2],
		      (unsigned long long)ch->mem[3]);
	while (ch->nr_clients)
		channel__drop(ch, ch->nr_clients - 1);
	free(ch->clients);
	free(ch->lib_path);
	u64map__exit(&ch->loads);
	if (ch->lfd >= 0)
		close(ch->lfd);
	if (ch->path[0])
		unlink(ch->path);
	if (ch->dir[0])
		rmdir(ch->dir);
	free(ch);
}
