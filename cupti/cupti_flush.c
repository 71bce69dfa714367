// SPDX-License-Identifier: MIT
/* Activity buffers, the flush thread, the final flush; see cupti_flush.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "format/xpu_format.h"
#include "cupti/pcsamp/cupti_pcsamp.h"
#include "cupti/walk/walk_probe.h"
#include "cupti_state.h"
#include "cupti_flush.h"

#define INJECT_FLUSH_MS		200

static struct {				/* the flush thread */
	pthread_t thread;
	int started;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	int stop;
} fl = {
	.stop_lock = PTHREAD_MUTEX_INITIALIZER,
	.stop_cond = PTHREAD_COND_INITIALIZER,
};

void CUPTIAPI inject__buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	size_t want = xpu_bufsize__next(&inj.bufsize);

	*buf = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, want);
	*size = *buf ? want : 0;	/* 0: CUPTI drops and counts */
	*max_records = 0;
}

static int inject__next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	return cuptiActivityGetNextRecord(buf, valid, rec) != CUPTI_SUCCESS;
}

void inject__report_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;

	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		xpu_client__lost(&inj.client, XPU_LOST_CUPTI, dropped);
}

void CUPTIAPI inject__buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
				       size_t size, size_t valid)
{
	/* Convert even when turned off: records already collected are real. */
	if (atomic_load(&inj.state) != INJECT_NONE)
		xpu_convert__buffer(&inj.conv, buf, valid, inject__next);
	free(buf);
	xpu_bufsize__done(&inj.bufsize, valid, inject__timestamp());
	inject__report_dropped(ctx, stream);
}

int inject__flush_ms(void)
{
	uint32_t ms = inj.client.flush_ms;

	return !ms ? INJECT_FLUSH_MS : ms < 10 ? 10 : ms > 1000 ? 1000 : (int)ms;
}

static void *inject__flush_thread(void *arg)
{
	struct timespec ts;

	long period_ms = inject__flush_ms();

	pthread_mutex_lock(&fl.stop_lock);
	while (!fl.stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += period_ms * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&fl.stop_cond, &fl.stop_lock, &ts);
		if (fl.stop)
			break;
		pthread_mutex_unlock(&fl.stop_lock);
		if (atomic_load(&inj.state) == INJECT_ACTIVE) {
			xpu_cupti_pcsamp__flush();
			cuptiActivityFlushAll(0);
		}
		if (inj.nvtx_on)
			xpu_nvtx__report_lost(&inj.nvtx);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
		pthread_mutex_lock(&fl.stop_lock);
	}
	pthread_mutex_unlock(&fl.stop_lock);
	return NULL;
}

void inject__finish(void)
{
	if (atomic_load(&inj.state) == INJECT_NONE || atomic_flag_test_and_set(&inj.finished))
		return;
	if (fl.started) {
		pthread_mutex_lock(&fl.stop_lock);
		fl.stop = 1;
		pthread_cond_signal(&fl.stop_cond);
		pthread_mutex_unlock(&fl.stop_lock);
		pthread_join(fl.thread, NULL);
		fl.started = 0;
	}
	if (inj.subscribed) {
		xpu_cupti_pcsamp__finish();
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		inject__report_dropped(NULL, 0);
	}
	atomic_store(&inj.state, INJECT_OFF);
	if (inj.nvtx_on)
		xpu_nvtx__finish(&inj.nvtx);	/* ranges still open: end 0 */
	if (inj.walk_probe)
		xpu_walk_probe__finish(&inj.client);
	/* the rest of an earlier flush, then the queue: two tries at most, so
	 * a recorder that stopped reading delays the exit by 2 x the timeout */
	if (xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS) == -ETIMEDOUT ||
	    inj.client.len)
		xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS);
	xpu_client__close(&inj.client);
	if (inj.client.nr_dropped)
		inject__warn("pid %u: %llu GPU records could not be sent to xpu-record",
			     inj.pid, (unsigned long long)inj.client.nr_dropped);
}

int inject__start_flusher(void)
{
	sigset_t all, old;
	int err;

	/* The app's signal handlers must not run on our thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fl.thread, NULL, inject__flush_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	fl.started = 1;
	return 0;
}

void inject__forget_flusher(void)
{
	fl.started = 0;
}
