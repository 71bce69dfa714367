/* SPDX-License-Identifier: MIT */
/*
 * The recorder's end of the GPU channel, for the CUPTI library tests: a
 * listening Unix socket, and a reader that collects every framed message's
 * records into one buffer and checks the framing on the way.
 */
#ifndef XPU_TESTS_CUPTI_SERVER_H
#define XPU_TESTS_CUPTI_SERVER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/channel/wire.h"

struct test_server {
	char path[108];
	int lfd;
	uint8_t *data;			/* records of all messages, concatenated */
	size_t len, cap;
	int nr_msgs;
	int bad_frames;
};

static inline int test_server__open(struct test_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "/tmp/xpu-cupti-test.%d.%d", getpid(), rand());
	strcpy(sa.sun_path, s->path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s->lfd, 4))
		return -1;
	return 0;
}

static inline void test_server__close(struct test_server *s)
{
	if (s->lfd >= 0)
		close(s->lfd);
	unlink(s->path);
	free(s->data);
	s->data = NULL;
}

static inline int test__read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = read(fd, (uint8_t *)buf + off, len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return off ? -1 : 0;	/* 0: clean EOF at a boundary */
		off += r;
	}
	return 1;
}

/* Reads messages from fd until EOF (or max_msgs messages when > 0). */
static inline void test_server__drain(struct test_server *s, int fd, int max_msgs)
{
	struct xpu_channel_msg m;

	while (max_msgs <= 0 || s->nr_msgs < max_msgs) {
		int r = test__read_full(fd, &m, sizeof(m));

		if (r <= 0) {
			s->bad_frames += r < 0;
			return;
		}
		if (m.magic != XPU_CHANNEL_MAGIC || m.len > XPU_CHANNEL_MAX_MSG) {
			s->bad_frames++;
			return;
		}
		if (s->len + m.len > s->cap) {
			s->cap = (s->len + m.len) * 2;
			s->data = realloc(s->data, s->cap);
		}
		if (test__read_full(fd, s->data + s->len, m.len) != 1) {
			s->bad_frames++;
			return;
		}
		s->len += m.len;
		s->nr_msgs++;
	}
}

/* Iterates records in buf: for (off = 0; test__next(buf, len, &off, &hdr, &body);) */
static inline int test__next(const uint8_t *buf, size_t len, size_t *off,
		      struct xpu_record_header *hdr, const uint8_t **body)
{
	if (*off + sizeof(*hdr) > len)
		return 0;
	memcpy(hdr, buf + *off, sizeof(*hdr));
	if (hdr->size < sizeof(*hdr) || hdr->size % 8 || hdr->size > len - *off)
		return 0;
	*body = buf + *off + sizeof(*hdr);
	*off += hdr->size;
	return 1;
}

#endif
