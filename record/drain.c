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
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/drain.h"
#include "record/kernel/bpf.h"
#include "record/kernel/sideband.h"
#include "record/python/python.h"
#include "record/gpu/channel.h"
#include "record/clock.h"

#define DRAIN_NICE	(-20)

struct drain {
	pthread_t thread;
	atomic_bool stop;
	int epfd;
	int stop_fd;			/* eventfd: drain__stop() wakes the thread at once */
	struct xpu_writer *w;
	struct record_bpf *b;
	struct sideband *sb;
	struct channel *ch;
	struct drain_final fin;		/* what the final drain took */
	bool plain;			/* a CUDA process came: stacks no longer coded */
	bool keep_coding;		/* XPU_GPU_PLAIN=0: they still are */
	atomic_bool end_attaches;	/* drain__end_attaches() asked */
};

/*
 * A CUDA process connected: its marker stacks come in bursts of thousands
 * per second. Coded (STACK_DELTA, zstd 9) they cost the reader more CPU
 * than it has in a burst: a 2-rank DDP job on 2x H100 lost 4,197
 * correlation records coded, none pruned and not coded, in 4 runs
 * (bench/gpu_trace_modes.sh; with the address rule alone, before the CFI
 * reads, pruning lost records too, so stacks were written whole). So from
 * then on stacks are still pruned but not coded, at zstd level 3: the DDP
 * job's trace is 8 MB where whole it was 39.
 */
static void drain__plain(struct drain *d)
{
	d->plain = true;
	xpu_writer__plain(d->w);
	debug(1, "a CUDA process connected: stacks are no longer coded from now on "
	      "(pruned, no STACK_DELTA coding, zstd level 3)");
}

/* record_bpf's side-band sync: in the drain thread, like every drain. */
static void drain__sync(void *ctx)
{
	sideband__drain(ctx);
}

/* The first CUDA process connected: its correlation ring (once). */
static void drain__gpu_ring(void *ctx)
{
	record_bpf__gpu_ring(ctx);
}

static void *drain__run(void *arg)
{
	struct drain *d = arg;
	int ring_fd = record_bpf__ring_fd(d->b);
	double last_flush = record__now(), t;
	struct rusage ru;

	/*
	 * The reader is the only consumer of the rings: a program with more
	 * busy threads than CPUs starved it at nice 0 (a 32-thread stress at
	 * -F 999 lost 40-60% of its samples, with a 64 MiB ring too), and a
	 * full ring loses samples. At nice -20 it runs when it has work and
	 * lost under 1%; it takes no more CPU than before, only sooner.
	 * Without CAP_SYS_NICE it stays at the default.
	 */
	if (setpriority(PRIO_PROCESS, gettid(), DRAIN_NICE))
		debug(1, "the reader thread stays at nice %d: %s", getpriority(PRIO_PROCESS, gettid()),
		      strerror(errno));

	while (!atomic_load(&d->stop)) {
		struct epoll_event ev[16];
		/* Rings wake us only when a quarter full; poll them often (and
		 * every millisecond while a Python launcher's libpython is due) */
		int n = epoll_wait(d->epfd, ev, 16,
				   python__waiting(record_bpf__python(d->b)) ? 1 : 20);

		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == d->stop_fd) {
				eventfd_t v;

				eventfd_read(d->stop_fd, &v);	/* level-triggered: once */
				continue;
			}
			if (fd == ring_fd)
				record_bpf__consume(d->b);
			else if (d->ch && channel__owns(d->ch, fd))
				channel__handle(d->ch, fd);
		}
		if (d->ch && atomic_exchange(&d->end_attaches, false))
			channel__shutdown_clients(d->ch);
		if (!d->plain && !d->keep_coding && d->ch && channel__accepted(d->ch))
			drain__plain(d);
		record_bpf__consume(d->b);
		sideband__drain(d->sb);
		if (record__now() - last_flush >= 1.0) {
			xpu_writer__handoff(d->w);	/* compressed in the writer's thread */
			last_flush = record__now();
		}
	}
	/* Final drain: everything the kernel and the GPU clients still hold. */
	t = record__now();
	record_bpf__consume(d->b);
	d->fin.rings_s = record__now() - t;
	t = record__now();
	sideband__drain(d->sb);	/* mappings seen last: their build-ids */
	d->fin.sideband_s = record__now() - t;
	t = record__now();
	if (d->ch)
		channel__drain_all(d->ch);
	d->fin.gpu_s = record__now() - t;
	if (!getrusage(RUSAGE_THREAD, &ru))
		d->fin.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			       ru.ru_stime.tv_usec / 1e6;
	/* what recording cost in this thread: reading the rings, pruning and
	 * coding stacks, compressing chunks (bench/trace_size.sh reads it) */
	debug(1, "drain thread: %.3f s CPU", d->fin.cpu_s);
	return NULL;
}

static int drain__add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int drain__start(struct drain **out, struct xpu_writer *w, struct record_bpf *b,
		 struct sideband *sb, struct channel *ch, bool keep_coding)
{
	struct drain *d = xzalloc(sizeof(*d));
	int ret;

	d->w = w;
	d->b = b;
	d->sb = sb;
	d->ch = ch;
	/* XPU_GPU_PLAIN=0: CUDA processes' stacks stay coded, to
	 * measure what that costs the reader (bench/gpu_trace_modes.sh) */
	d->keep_coding = keep_coding;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->epfd < 0 || d->stop_fd < 0)
		goto out_err;
	if ((ret = drain__add(d->epfd, d->stop_fd)))
		goto out_ret;
	if ((ret = drain__add(d->epfd, record_bpf__ring_fd(b))))
		goto out_ret;
	for (int i = 0; i < sideband__nr_fds(sb); i++)
		if ((ret = drain__add(d->epfd, sideband__fd(sb, i))))
			goto out_ret;
	if (ch) {
		if ((ret = drain__add(d->epfd, channel__fd(ch))))
			goto out_ret;
		channel__set_epoll(ch, d->epfd);
		channel__set_on_accept(ch, drain__gpu_ring, b);
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
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	free(d);
	return ret;
}

void drain__stop(struct drain *d, struct drain_final *fin)
{
	if (!d)
		return;
	atomic_store(&d->stop, true);
	if (eventfd_write(d->stop_fd, 1))
		debug(1, "cannot wake the reader thread: %s: it stops within 20 ms", strerror(errno));
	pthread_join(d->thread, NULL);
	if (fin)
		*fin = d->fin;
	close(d->epfd);
	close(d->stop_fd);
	free(d);
}

int drain__end_attaches(struct drain *d, double timeout_s)
{
	double end = record__now() + timeout_s;

	if (!d || !d->ch)
		return 0;
	atomic_store(&d->end_attaches, true);
	eventfd_write(d->stop_fd, 1);
	while (channel__nr_clients(d->ch) && record__now() < end)
		usleep(10000);
	return channel__nr_clients(d->ch);
}
