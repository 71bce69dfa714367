// SPDX-License-Identifier: MIT
/*
 * Queue + Unix socket client for the GPU channel. The app's threads (through
 * CUPTI's buffer callbacks) append; the flush thread swaps the queue out
 * under the lock and sends it without the lock held, so appends never wait
 * for the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "format/encode.h"
#include "format/xpu_format.h"
#include "wire.h"
#include "client.h"

/* Room kept beyond the bound for the LOST record that reports drops. */
#define CLIENT_RESERVE	64

int xpu_client__init(struct xpu_client *c, uint32_t pid, size_t max)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->send_lock, NULL);
	c->fd = -1;
	c->pid = pid;
	c->max = max ? max : XPU_CLIENT_DEFAULT_CAP;
	return 0;
}

void xpu_client__exit(struct xpu_client *c)
{
	xpu_client__disconnect(c);
	free(c->buf);
	free(c->out);
	c->buf = c->out = NULL;
	c->len = c->cap = c->out_cap = 0;
}

int xpu_client__connect(struct xpu_client *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/* CLOEXEC: an exec'd child reconnects with its own library instance. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Non-blocking from here on: the flush polls with a timeout. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	c->fd = fd;
	return 0;
}

void xpu_client__disconnect(struct xpu_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Caller holds c->lock. Makes room for need more bytes within limit. */
static int client__reserve(struct xpu_client *c, size_t need, size_t limit)
{
	size_t ncap;
	uint8_t *nbuf;

	if (c->len + need > limit)
		return -ENOSPC;
	if (c->len + need <= c->cap)
		return 0;
	ncap = c->cap ? c->cap : 64 * 1024;
	while (ncap < c->len + need)
		ncap *= 2;
	if (ncap > limit)
		ncap = limit;
	nbuf = realloc(c->buf, ncap);
	if (!nbuf)
		return -ENOSPC;	/* counted as a drop like a full queue */
	c->buf = nbuf;
	c->cap = ncap;
	return 0;
}

/* Caller holds c->lock. */
static int client__append(struct xpu_client *c, uint16_t type, const struct iovec *iov,
			  int n, size_t limit)
{
	size_t size = xpu_record__encoded_size(iov, n);

	if (!size || client__reserve(c, size, limit))
		return -ENOSPC;
	xpu_record__encode(c->buf + c->len, size, type, 0, iov, n);
	c->len += size;
	c->nr_queued++;
	return 0;
}

int xpu_client__addv(struct xpu_client *c, uint16_t type, const struct iovec *iov, int n)
{
	int err;

	pthread_mutex_lock(&c->lock);
	err = client__append(c, type, iov, n, c->max);
	if (err) {
		c->nr_dropped++;
		c->dropped_unreported++;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

int xpu_client__add(struct xpu_client *c, uint16_t type, const void *body, size_t len)
{
	struct iovec iov = { (void *)body, len };

	return xpu_client__addv(c, type, &iov, 1);
}

int xpu_client__add_str(struct xpu_client *c, uint16_t type, const void *body,
			size_t len, const char *str)
{
	struct iovec iov[2] = {
		{ (void *)body, len },
		{ (void *)str, strlen(str) + 1 },
	};

	return xpu_client__addv(c, type, iov, 2);
}

int xpu_client__meta(struct xpu_client *c, const char *key, const char *value)
{
	struct iovec iov[2] = {
		{ (void *)key, strlen(key) + 1 },
		{ (void *)value, strlen(value) + 1 },
	};

	return xpu_client__addv(c, XPU_REC_META, iov, 2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int xpu_client__lost(struct xpu_client *c, uint32_t source, uint64_t count)
{
	struct xpu_lost l = {
		.time = now_ns(), .source = source, .pid = c->pid, .count = count,
	};

	return xpu_client__add(c, XPU_REC_LOST, &l, sizeof(l));
}

uint64_t xpu_client__count_records(const uint8_t *buf, size_t len)
{
	struct xpu_record_header hdr;
	uint64_t n = 0;
	size_t off = 0;

	while (off + sizeof(hdr) <= len) {
		memcpy(&hdr, buf + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > len - off)
			break;
		off += hdr.size;
		n++;
	}
	return n;
}

/* Writes all of iov, polling up to timeout_ms whenever the socket is full. */
static int client__write_all(int fd, struct iovec *iov, int n, int timeout_ms)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };

	while (mh.msg_iovlen) {
		ssize_t r = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r < 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			r = poll(&pfd, 1, timeout_ms);
			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		while (r > 0 && mh.msg_iovlen) {
			if ((size_t)r >= mh.msg_iov->iov_len) {
				r -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base = (uint8_t *)mh.msg_iov->iov_base + r;
				mh.msg_iov->iov_len -= r;
				r = 0;
			}
		}
	}
	return 0;
}

/* Sends buf[0..len) as messages of at most XPU_CHANNEL_MAX_MSG bytes, cut at
 * record boundaries. Returns 0 or -errno; *sent counts delivered records. */
static int client__send(struct xpu_client *c, const uint8_t *buf, size_t len,
			int timeout_ms, uint64_t *sent)
{
	size_t off = 0;

	*sent = 0;
	while (off < len) {
		struct xpu_record_header hdr;
		struct xpu_channel_msg msg = { .magic = XPU_CHANNEL_MAGIC };
		struct iovec iov[2];
		size_t end = off;
		uint64_t nr = 0;
		int err;

		while (end + sizeof(hdr) <= len) {
			memcpy(&hdr, buf + end, sizeof(hdr));
			if (end + hdr.size - off > XPU_CHANNEL_MAX_MSG && nr)
				break;
			end += hdr.size;
			nr++;
		}
		msg.len = (uint32_t)(end - off);
		iov[0] = (struct iovec){ &msg, sizeof(msg) };
		iov[1] = (struct iovec){ (void *)(buf + off), end - off };
		err = client__write_all(c->fd, iov, 2, timeout_ms);
		if (err)
			return err;
		*sent += nr;
		off = end;
	}
	return 0;
}

int xpu_client__flush(struct xpu_client *c, int timeout_ms)
{
	uint8_t *tmp;
	size_t tmp_cap, out_len;
	uint64_t sent = 0, nr;
	int err = 0;

	pthread_mutex_lock(&c->send_lock);
	pthread_mutex_lock(&c->lock);
	if (c->dropped_unreported && c->fd >= 0) {
		struct xpu_lost l = {
			.time = now_ns(), .source = XPU_LOST_GPU_CHANNEL,
			.pid = c->pid, .count = c->dropped_unreported,
		};
		struct iovec iov = { &l, sizeof(l) };

		if (!client__append(c, XPU_REC_LOST, &iov, 1, c->max + CLIENT_RESERVE))
			c->dropped_unreported = 0;
	}
	tmp = c->out;
	tmp_cap = c->out_cap;
	c->out = c->buf;
	c->out_cap = c->cap;
	out_len = c->len;
	c->buf = tmp;
	c->cap = tmp_cap;
	c->len = 0;
	pthread_mutex_unlock(&c->lock);

	if (!out_len)
		goto out;
	nr = xpu_client__count_records(c->out, out_len);
	if (c->fd < 0)
		err = -ENOTCONN;
	else
		err = client__send(c, c->out, out_len, timeout_ms, &sent);
	if (err) {
		/* A message may be half written: the stream cannot be resynced. */
		xpu_client__disconnect(c);
		pthread_mutex_lock(&c->lock);
		c->nr_dropped += nr - sent;
		pthread_mutex_unlock(&c->lock);
	}
	c->nr_sent += sent;
out:
	pthread_mutex_unlock(&c->send_lock);
	return err;
}
