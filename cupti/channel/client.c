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
	c->rules_fd = -1;
	c->pid = pid;
	c->max = max ? max : XPU_CLIENT_DEFAULT_CAP;
	return 0;
}

void xpu_client__exit(struct xpu_client *c)
{
	xpu_client__disconnect(c);
	free(c->buf);
	free(c->out);
	free(c->wire);
	c->buf = c->out = c->wire = NULL;
	c->len = c->cap = c->out_cap = 0;
	c->wire_len = c->wire_off = c->wire_cap = 0;
	c->wire_records = 0;
}

/* The recorder's XPU_CHANNEL_READY (wire.h), the launch-rule table's fd
 * that may come with it and the config that may follow it (*flush_ms and
 * *flags, else 0); without the byte (an older recorder, one too busy) the client
 * goes on after the wait. Returns that fd or -1. */
static int xpu_client__wait_ready(int fd, uint32_t *flush_ms, uint32_t *flags)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct { char ready; struct xpu_channel_config cfg; } __attribute__((packed)) m;
	struct iovec iov = { &m, sizeof(m) };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;
	int rfd = -1;

	*flush_ms = *flags = 0;
	if (poll(&p, 1, XPU_CHANNEL_READY_MS) != 1 || !(p.revents & POLLIN) ||
	    (n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 1)
		return -1;
	if ((n == (ssize_t)sizeof(m) || n == 1 + XPU_CHANNEL_CONFIG_V1_SIZE) &&
	    m.cfg.magic == XPU_CHANNEL_CONFIG_MAGIC) {
		*flush_ms = m.cfg.flush_ms;
		*flags = n == (ssize_t)sizeof(m) ? m.cfg.flags : 0;
	}
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)) && rfd < 0)
			memcpy(&rfd, CMSG_DATA(cm), sizeof(int));
	return rfd;
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
	c->rules_fd = xpu_client__wait_ready(fd, &c->flush_ms, &c->flags);
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
	if (c->rules_fd >= 0)
		close(c->rules_fd);
	c->rules_fd = -1;
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

int xpu_client__add_pair(struct xpu_client *c, uint16_t type1, const void *body1, size_t len1,
			 uint16_t type2, const void *body2, size_t len2)
{
	struct iovec a = { (void *)body1, len1 }, b = { (void *)body2, len2 };
	int err;

	pthread_mutex_lock(&c->lock);
	err = client__append(c, type1, &a, 1, c->max);
	if (!err && (err = client__append(c, type2, &b, 1, c->max))) {
		/* not the first without the second: take it back */
		c->len -= xpu_record__encoded_size(&a, 1);
		c->nr_queued--;
	}
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

/* Writes buf[*off..len), polling up to timeout_ms whenever the socket is
 * full; *off advances by what was written. Returns 0 or -errno. */
static int client__write(int fd, const uint8_t *buf, size_t len, size_t *off, int timeout_ms)
{
	while (*off < len) {
		ssize_t r = send(fd, buf + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);

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
		*off += (size_t)r;
	}
	return 0;
}

/* Frames buf[0..len) into c->wire as messages of at most XPU_CHANNEL_MAX_MSG
 * bytes, cut at record boundaries. Returns 0 or -ENOMEM. */
static int client__frame(struct xpu_client *c, const uint8_t *buf, size_t len)
{
	size_t off = 0, need = len + sizeof(struct xpu_channel_msg) * (len / XPU_CHANNEL_MAX_MSG + 2);

	if (need > c->wire_cap) {
		uint8_t *w = realloc(c->wire, need);

		if (!w)
			return -ENOMEM;
		c->wire = w;
		c->wire_cap = need;
	}
	c->wire_len = c->wire_off = 0;
	while (off < len) {
		struct xpu_record_header hdr;
		struct xpu_channel_msg msg = { .magic = XPU_CHANNEL_MAGIC };
		size_t end = off;

		while (end + sizeof(hdr) <= len) {
			memcpy(&hdr, buf + end, sizeof(hdr));
			if (end + hdr.size - off > XPU_CHANNEL_MAX_MSG && end > off)
				break;
			end += hdr.size;
		}
		msg.len = (uint32_t)(end - off);
		if (c->wire_len + sizeof(msg) + msg.len > c->wire_cap)
			return -ENOMEM;		/* cannot happen: sized above */
		memcpy(c->wire + c->wire_len, &msg, sizeof(msg));
		memcpy(c->wire + c->wire_len + sizeof(msg), buf + off, msg.len);
		c->wire_len += sizeof(msg) + msg.len;
		off = end;
	}
	return 0;
}

/* Caller holds send_lock. The connection is lost: what was not written
 * counts as dropped. */
static void client__lost(struct xpu_client *c, uint64_t unsent)
{
	xpu_client__disconnect(c);
	pthread_mutex_lock(&c->lock);
	c->nr_dropped += unsent;
	pthread_mutex_unlock(&c->lock);
	c->wire_len = c->wire_off = 0;
	c->wire_records = 0;
}

/* Caller holds send_lock: writes the rest of c->wire. */
static int client__send_wire(struct xpu_client *c, int timeout_ms)
{
	int err;

	if (c->wire_off == c->wire_len)
		return 0;
	err = client__write(c->fd, c->wire, c->wire_len, &c->wire_off, timeout_ms);
	if (err == -ETIMEDOUT)
		return err;		/* the rest waits: the stream stays whole */
	if (err) {
		client__lost(c, c->wire_records);
		return err;
	}
	c->nr_sent += c->wire_records;
	c->wire_len = c->wire_off = 0;
	c->wire_records = 0;
	return 0;
}

int xpu_client__flush(struct xpu_client *c, int timeout_ms)
{
	uint8_t *tmp;
	size_t tmp_cap, out_len;
	uint64_t nr;
	int err;

	pthread_mutex_lock(&c->send_lock);
	if (c->fd >= 0 && (err = client__send_wire(c, timeout_ms)))
		goto out;		/* still behind: new records wait in the queue */
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

	err = 0;
	if (!out_len)
		goto out;
	nr = xpu_client__count_records(c->out, out_len);
	if (c->fd < 0) {
		err = -ENOTCONN;
		client__lost(c, nr);
	} else if (client__frame(c, c->out, out_len)) {
		err = -ENOMEM;
		pthread_mutex_lock(&c->lock);
		c->nr_dropped += nr;
		c->dropped_unreported += nr;
		pthread_mutex_unlock(&c->lock);
	} else {
		c->wire_records = nr;
		err = client__send_wire(c, timeout_ms);
	}
out:
	pthread_mutex_unlock(&c->send_lock);
	return err;
}

uint64_t xpu_client__close(struct xpu_client *c)
{
	uint64_t unsent;

	pthread_mutex_lock(&c->send_lock);
	pthread_mutex_lock(&c->lock);
	unsent = c->wire_records + xpu_client__count_records(c->buf, c->len);
	c->nr_dropped += unsent;
	c->len = 0;
	pthread_mutex_unlock(&c->lock);
	c->wire_len = c->wire_off = 0;
	c->wire_records = 0;
	xpu_client__disconnect(c);
	pthread_mutex_unlock(&c->send_lock);
	return unsent;
}
