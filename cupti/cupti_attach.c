// SPDX-License-Identifier: MIT
/* Attach and detach; see cupti_attach.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "cupti/pcsamp/cupti_pcsamp.h"
#include "cupti/walk/walk_probe.h"
#include "cupti_state.h"
#include "cupti_devices.h"
#include "cupti_callbacks.h"
#include "cupti_flush.h"
#include "cupti_start.h"
#include "cupti_attach.h"

#define INJECT_FINALIZE_WAIT_MS	2000

static struct {
	pthread_mutex_t lock;		/* held by the attach's start and detach */
	_Atomic int attaching;		/* an attach thread runs */
	_Atomic int live;		/* it records: not yet ending */
} att = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* cuptiFinalize() in the next API exit callback (cupti_callbacks.h); a
 * process that makes no runtime or driver call within
 * INJECT_FINALIZE_WAIT_MS is idle in CUDA: then from this thread, after
 * the callbacks are off and we unsubscribed. */
static void inject__finalize(void)
{
	if (inject__finalize_at_exit(INJECT_FINALIZE_WAIT_MS))
		return;
	/* no application thread is in CUDA: ours to do */
	if (inject__pcs_attach_end())
		xpu_cupti_pcsamp__finish();
	cuptiEnableAllDomains(0, inj.sub);
	cuptiUnsubscribe(inj.sub);
	cuptiFinalize();
}

/* Everything a recording set up, undone: what CUPTI holds flushed and
 * sent, activity and callbacks off, unsubscribed, CUPTI finalized (it
 * leaves the process's CUDA calls alone again), the socket closed. The
 * state stays off until the per-recording state is reset. Caller holds
 * att.lock. */
static void inject__detach(bool finalize)
{
	if (atomic_load(&inj.state) == INJECT_NONE)
		return;
	if (inj.subscribed) {
		/* records of the window still in CUPTI's buffers: converted
		 * while the state is off but not none */
		atomic_store(&inj.state, INJECT_OFF);
		/* an attach's PC sampling ends in the finalize (see
		 * inject__pcs_attach()); the process's exit (!finalize) ends it here */
		if (!finalize && inject__pcs_attach_end())
			xpu_cupti_pcsamp__finish();
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		inject__report_dropped(NULL, 0);
		inject__disable_kinds();
		if (finalize)
			inject__finalize();
		inj.subscribed = 0;
	}
	atomic_store(&inj.state, INJECT_OFF);
	if (inj.nvtx_on)
		xpu_nvtx__finish(&inj.nvtx);
	if (inj.walk_probe)
		xpu_walk_probe__finish(&inj.client);
	if (xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS) == -ETIMEDOUT ||
	    inj.client.len)
		xpu_client__flush(&inj.client, INJECT_EXIT_TIMEOUT_MS);
	xpu_client__close(&inj.client);
}

/* What one recording set up per process, back to nothing, for the next
 * attach. The NVTX tracking and the walk's table of the last one are left
 * (a callback may still be reading them): a few KB per attach. */
static void inject__reset(void)
{
	atomic_flag_clear(&inj.devices_done);
	atomic_flag_clear(&inj.nested_noted);
	atomic_flag_clear(&inj.finished);
	inject__reset_marking();
	inj.nvtx_on = inj.no_marker = inj.unw_probe = inj.walk_probe = inj.gpu_memory = false;
	inj.subscribed = 0;
	xpu_client__exit(&inj.client);
}

/* The process exits while attached: the recording's end as the recorder
 * would have asked for it. */
static void inject__attach_atexit(void)
{
	pthread_mutex_lock(&att.lock);
	if (atomic_load(&att.attaching))
		inject__detach(false);	/* the process ends: no finalize to wait for */
	pthread_mutex_unlock(&att.lock);
}

static void *inject__attach_thread(void *arg)
{
	int err;

	pthread_mutex_lock(&att.lock);
	err = inject__start(true);
	pthread_mutex_unlock(&att.lock);
	/* recording until the recorder shuts its side down or dies */
	while (!err && !xpu_attach__ended(inj.client.fd, inject__flush_ms())) {
		if (atomic_load(&inj.state) == INJECT_ACTIVE) {
			if (inject__pcs_attached())
				inject__pcs_fetch();	/* the next API exit */
			cuptiActivityFlushAll(0);
		}
		if (inj.nvtx_on)
			xpu_nvtx__report_lost(&inj.nvtx);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
	}
	atomic_store(&att.live, 0);	/* ending: a next attach waits */
	pthread_mutex_lock(&att.lock);
	inject__detach(true);
	inject__reset();
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&att.attaching, 0);
	pthread_mutex_unlock(&att.lock);
	return arg;
}

__attribute__((visibility("default")))
int xpu_cupti_attach(const char *config)
{
	static atomic_flag atexit_done = ATOMIC_FLAG_INIT;
	int expect = INJECT_NONE, err;

	/* one attach at a time: -EISCONN, one records (another recorder's:
	 * refused at once); -EALREADY, the last one still ends (tried again);
	 * a launched process records already (-EBUSY) */
	if (atomic_exchange(&att.attaching, 1))
		return atomic_load(&att.live) ? -EISCONN : -EALREADY;
	if (!atomic_compare_exchange_strong(&inj.state, &expect, INJECT_ACTIVE)) {
		atomic_store(&att.attaching, 0);
		return -EBUSY;
	}
	if (xpu_attach_cfg__parse(&inj.cfg, config)) {
		err = -EINVAL;
		goto out_off;
	}
	if (!atomic_flag_test_and_set(&atexit_done)) {
		pthread_atfork(NULL, NULL, inject__atfork_child);
		atexit(inject__attach_atexit);
	}
	atomic_store(&att.live, 1);
	err = xpu_attach__thread(inject__attach_thread, NULL);
	if (!err)
		return 0;
	atomic_store(&att.live, 0);
out_off:
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&att.attaching, 0);
	return err;
}

bool inject__attaching(void)
{
	return atomic_load(&att.attaching);
}

/* A forked child shares our socket: writing to it would interleave with the
 * parent's messages. The child stays silent (CUDA does not work across fork
 * anyway; an exec'd child loads its own copy of the library). */
void inject__atfork_child(void)
{
	atomic_store(&inj.state, INJECT_NONE);
	atomic_store(&att.attaching, 0);	/* the attach thread is not in the child */
	atomic_store(&att.live, 0);
	inject__forget_flusher();
	if (inj.client.fd >= 0)
		close(inj.client.fd);
	inj.client.fd = -1;
}
