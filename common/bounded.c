// SPDX-License-Identifier: MIT
/*
 * Work with a time bound in a thread that can be left behind
 * (common/bounded.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/bounded.h"

/* Enough for libelf and libdw reading a file, a fraction of the default
 * 8 MiB a thread left behind would keep. */
#define BOUNDED_STACK	(1 << 20)

struct bounded_job {
	int (*fn)(void *job);
	void (*drop)(void *job);
	int ret;
	bool done;		/* fn returned: ret is set */
	bool abandoned;		/* the caller stopped waiting: the thread frees */
	_Alignas(16) unsigned char data[];
};

static pthread_mutex_t bounded_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bounded_cond;
static pthread_once_t bounded_once = PTHREAD_ONCE_INIT;
static struct bounded_stats bounded_st;	/* under bounded_lock */
static unsigned bounded_ms;

static void bounded__init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bounded_cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void *bounded__thread(void *arg)
{
	struct bounded_job *j = arg;
	int ret = j->fn(j->data);
	bool abandoned;

	pthread_mutex_lock(&bounded_lock);
	j->ret = ret;
	j->done = true;
	abandoned = j->abandoned;
	if (abandoned)
		bounded_st.left--;
	else
		pthread_cond_broadcast(&bounded_cond);	/* the caller frees j */
	pthread_mutex_unlock(&bounded_lock);
	if (abandoned) {
		if (j->drop)
			j->drop(j->data);
		free(j);
	}
	return NULL;
}

unsigned bounded__timeout_ms(void)
{
	return bounded_ms ? bounded_ms : BOUNDED_TIMEOUT_MS;
}

void bounded__set_timeout_ms(unsigned ms)
{
	bounded_ms = ms;
}

int bounded__call(int (*fn)(void *job), void (*drop)(void *job), void *job, size_t size)
{
	unsigned ms = bounded__timeout_ms();
	struct bounded_job *j;
	pthread_attr_t attr;
	struct timespec end;
	pthread_t t;
	int ret;

	pthread_once(&bounded_once, bounded__init);
	pthread_mutex_lock(&bounded_lock);
	if (bounded_st.left >= BOUNDED_MAX_LEFT) {
		bounded_st.refused++;
		pthread_mutex_unlock(&bounded_lock);
		return -EBUSY;
	}
	bounded_st.calls++;
	pthread_mutex_unlock(&bounded_lock);

	j = calloc(1, sizeof(*j) + size);
	if (!j)
		return -ENOMEM;
	j->fn = fn;
	j->drop = drop;
	memcpy(j->data, job, size);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, BOUNDED_STACK);
	ret = -pthread_create(&t, &attr, bounded__thread, j);
	pthread_attr_destroy(&attr);
	if (ret) {
		free(j);
		return ret;
	}

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&bounded_lock);
	while (!j->done)
		if (pthread_cond_timedwait(&bounded_cond, &bounded_lock, &end) == ETIMEDOUT)
			break;
	if (!j->done) {
		j->abandoned = true;
		bounded_st.timed_out++;
		bounded_st.left++;
		pthread_mutex_unlock(&bounded_lock);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&bounded_lock);
	memcpy(job, j->data, size);
	ret = j->ret;
	free(j);
	return ret;
}

struct bounded_read {
	int fd;
	size_t len;
	uint64_t off;
	long n;
	unsigned char buf[BOUNDED_READ_MAX];
};

static int bounded__read_job(void *arg)
{
	struct bounded_read *r = arg;

	r->n = pread(r->fd, r->buf, r->len, (off_t)r->off);
	if (r->n < 0)
		r->n = -errno;
	close(r->fd);
	return 0;
}

long bounded__pread(int fd, void *buf, size_t len, uint64_t off)
{
	struct bounded_read *r = malloc(sizeof(*r));
	long n;
	int ret;

	if (!r)
		return -ENOMEM;
	r->len = len < BOUNDED_READ_MAX ? len : BOUNDED_READ_MAX;
	r->off = off;
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* the caller may close fd while it runs */
	if (r->fd < 0) {
		n = -errno;
		goto out;
	}
	ret = bounded__call(bounded__read_job, NULL, r, sizeof(*r));
	if (ret) {
		n = ret;
		if (ret != -ETIMEDOUT)
			close(r->fd);	/* the work never ran */
		goto out;
	}
	n = r->n;
	if (n > 0)
		memcpy(buf, r->buf, (size_t)n);
out:
	free(r);
	return n;
}

void bounded__stats(struct bounded_stats *st)
{
	pthread_mutex_lock(&bounded_lock);
	*st = bounded_st;
	pthread_mutex_unlock(&bounded_lock);
}
