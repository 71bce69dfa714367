// SPDX-License-Identifier: MIT
/*
 * The reader thread: one epoll over the BPF ring buffers, the perf sideband
 * rings and the GPU socket. Wakes at least every 100 ms to drain the
 * sideband (its rings wake us only when a quarter full) and flushes the
 * writer every second, so a recorder killed with SIGKILL leaves a file
 * readable up to the last second.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "record/record.h"

struct drain {
	pthread_t thread;
	atomic_bool stop;
	int epfd;
	struct xpu_writer *w;
	struct record_bpf *b;
	struct sideband *sb;
	struct channel *ch;
};

static double drain__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* record_bpf's side-band sync: in the drain thread, like every drain. */
static void drain__sync(void *ctx)
{
	sideband__drain(ctx);
}

static void *drain__run(void *arg)
{
	struct drain *d = arg;
	int ring_fd = record_bpf__ring_fd(d->b);
	double last_flush = drain__now();

	while (!atomic_load(&d->stop)) {
		struct epoll_event ev[16];
		/* Rings wake us only when a quarter full; poll them often. */
		int n = epoll_wait(d->epfd, ev, 16, 20);

		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == ring_fd)
				record_bpf__consume(d->b);
			else if (d->ch && channel__owns(d->ch, fd))
				channel__handle(d->ch, fd);
		}
		record_bpf__consume(d->b);
		sideband__drain(d->sb);
		if (drain__now() - last_flush >= 1.0) {
			xpu_writer__flush(d->w);
			last_flush = drain__now();
		}
	}
	/* Final drain: everything the kernel and the GPU clients still hold. */
	record_bpf__consume(d->b);
	sideband__drain(d->sb);
	if (d->ch)
		channel__drain_all(d->ch);
	{
		/* what recording cost in this thread: reading the rings,
		 * pruning and coding stacks, compressing chunks (bench) */
		struct timespec cpu;

		if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu))
			debug(1, "drain thread: %.3f s CPU", cpu.tv_sec + cpu.tv_nsec / 1e9);
	}
	return NULL;
}

static int drain__add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int drain__start(struct drain **out, struct xpu_writer *w, struct record_bpf *b,
		 struct sideband *sb, struct channel *ch)
{
	struct drain *d = xzalloc(sizeof(*d));
	int ret;

	d->w = w;
	d->b = b;
	d->sb = sb;
	d->ch = ch;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		goto out_err;
	if ((ret = drain__add(d->epfd, record_bpf__ring_fd(b))))
		goto out_ret;
	for (int i = 0; i < sideband__nr_fds(sb); i++)
		if ((ret = drain__add(d->epfd, sideband__fd(sb, i))))
			goto out_ret;
	if (ch) {
		if ((ret = drain__add(d->epfd, channel__fd(ch))))
			goto out_ret;
		channel__set_epoll(ch, d->epfd);
	}
	record_bpf__set_sync(b, drain__sync, sb);
	ret = -pthread_create(&d->thread, NULL, drain__run, d);
	if (ret)
		goto out_ret;
	*out = d;
	return 0;
out_err:
	ret = -errno;
out_ret:
	if (d->epfd >= 0)
		close(d->epfd);
	free(d);
	return ret;
}

void drain__stop(struct drain *d)
{
	if (!d)
		return;
	atomic_store(&d->stop, true);
	pthread_join(d->thread, NULL);
	close(d->epfd);
	free(d);
}
