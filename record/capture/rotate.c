// SPDX-License-Identifier: MIT
/*
 * Bounded capture (rotate.h, Documentation/xpu-record.md "Bounded capture").
 *
 * The recorder's writer makes chunks as always, but hands each finished
 * one (compressed) to rotate__sink() instead of a file:
 *
 *   --switch-output   the sink appends it to the current file of the
 *                     series (series.c); a switch cuts at its time and is
 *                     done once the late records of before it came (the
 *                     lag: rotate__lag());
 *   --flight-recorder the sink keeps it in the ring (flight.c); a window
 *                     (SIGUSR2, the end, a trigger: trigger.c) ends at its
 *                     time and is written after the lag.
 *
 * Every record passes rotate__tap() first: the state keeps what describes
 * the processes, triggers look at NVTX ranges and GPU activity, --activate
 * drops events before its instant, and the recorder's own lost counts and
 * FINISH (written at the end for the whole recording) are replaced by each
 * file's own, and the kernel IPs of stacks are noted so that each file gets
 * the kernel symbols (KSYM) of the kernel frames seen so far.
 *
 * A thread of ours does the switches and writes (the writer's thread and
 * the drain thread never wait for a file) and, for the flight recorder,
 * seals the open chunk every FLIGHT_SEAL_MS so the ring is cut finely.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "record/gpu/channel.h"
#include "record/kernel/ksyms.h"
#include "record/clock.h"
#include "record/capture/state.h"
#include "record/capture/rotate.h"
#include "record/capture/flight.h"
#include "record/capture/rotate_impl.h"
#include "record/capture/series.h"
#include "record/capture/trigger.h"
#include "record/capture/window.h"

#define ROTATE_TICK_MS		20

static uint64_t rotate__clock(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static atomic_int rotate_sigusr2;

static void rotate__on_sigusr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&rotate_sigusr2, 1);
}

/* ---- the writer's tap and sink ---------------------------------------------------- */

static bool rotate__is_state(uint16_t type)
{
	switch (type) {
	case XPU_REC_META: case XPU_REC_COMM: case XPU_REC_FORK: case XPU_REC_EXIT:
	case XPU_REC_MMAP: case XPU_REC_KSYM: case XPU_REC_PERF_MAP: case XPU_REC_STRING:
	case XPU_REC_PY_CODE: case XPU_REC_PROC_ENV: case XPU_REC_GPU_DEVICE:
	case XPU_REC_GPU_GRAPH_NODE:
		return true;
	}
	return false;
}

/* The kernel IPs of a SAMPLE or OFFCPU record (they follow the fixed part,
 * as record/kernel/bpf.c notes them for the end's KSYM). */
static void rotate__note_kips(struct rotate *r, uint16_t type, const struct iovec *iov)
{
	size_t fixed = type == XPU_REC_SAMPLE ? sizeof(struct xpu_sample) :
		       type == XPU_REC_OFFCPU ? sizeof(struct xpu_offcpu) : 0;
	struct xpu_stack st;

	if (!fixed || iov->iov_len < fixed)
		return;
	memcpy(&st, (const char *)iov->iov_base + fixed - sizeof(st), sizeof(st));
	if (!st.nr_kernel_ips || st.nr_kernel_ips > (iov->iov_len - fixed) / 8)
		return;
	pthread_mutex_lock(&r->klock);
	ksyms__note(&r->kips, (const uint64_t *)((const char *)iov->iov_base + fixed),
		    st.nr_kernel_ips);
	pthread_mutex_unlock(&r->klock);
}

static bool rotate__tap(void *ctx, uint16_t type, uint16_t flags, const struct iovec *iov, int n)
{
	struct rotate *r = ctx;
	uint64_t t;

	if (n < 1 || !iov[0].iov_len)
		return false;
	if (r->act_mono && !rotate__is_state(type) && xpu_rectype__is(type, XPU_RECF_TIME) &&
	    iov[0].iov_len >= sizeof(t)) {
		memcpy(&t, iov[0].iov_base, sizeof(t));
		if (t < r->act_mono)
			return true;	/* before --activate */
	}
	if (rotate_opts__files(&r->o)) {
		/* the whole recording's counts, written at the end: each file
		 * has its own (series__finish_file) */
		if (type == XPU_REC_FINISH)
			return true;
		if (type == XPU_REC_LOST && n == 1 && iov[0].iov_len >= sizeof(struct xpu_lost)) {
			const struct xpu_lost *l = iov[0].iov_base;

			if (!l->pid && l->source != XPU_LOST_CUPTI && l->source != XPU_LOST_NVTX)
				return true;
		}
		state__note(r->state, type, flags, iov, n);
		if (n == 1)
			rotate__note_kips(r, type, &iov[0]);
		if (type >= XPU_REC_GPU_KERNEL && type <= XPU_REC_GPU_API &&
		    iov[0].iov_len >= sizeof(t)) {
			uint64_t seen = atomic_load(&r->gpu_newest);

			memcpy(&t, iov[0].iov_base, sizeof(t));
			while (t > seen && !atomic_compare_exchange_weak(&r->gpu_newest, &seen, t))
				;
		}
	}
	if (!r->o.nr_triggers || n != 1)
		return false;
	trigger__tap(&r->trig, type, &iov[0]);
	return false;
}

static int rotate__sink(void *ctx, const void *chunk, size_t len, const struct xpu_writer_chunk *info)
{
	struct rotate *r = ctx;
	int err = 0;

	if (r->w)
		atomic_store(&r->features, xpu_writer__features(r->w));
	pthread_mutex_lock(&r->lock);
	r->chunks_in++;
	if (r->o.flight_secs)
		flight__push(r, chunk, len, info);
	else
		err = series__append(r, chunk, len, info);
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* ---- the thread ---------------------------------------------------------------- */

/* How long a cut waits for its records: a GPU flush period's lag once a
 * CUDA process connected, the rings' drain otherwise. */
static uint64_t rotate__lag(struct rotate *r)
{
	return r->ch && channel__accepted(r->ch) ? ROTATE_LAG_GPU_NS : ROTATE_LAG_CPU_NS;
}

/* A window (or switch) cut at cut, done once its late records came. */
static void rotate__pend(struct rotate *r, uint64_t cut, const char *why, bool trig)
{
	r->pend.on = true;
	r->pend.cut = cut;
	r->pend.due = cut + rotate__lag(r);
	r->pend_trig = trig;
	snprintf(r->pend.why, sizeof(r->pend.why), "%s", why);
}

/* --switch-output with --trigger: a fired trigger switches the file at
 * its due time (a switch that waits already goes first); the trigger is
 * cleared once its switch is done (rotate__thread). */
static void rotate__switch_trigger(struct rotate *r, uint64_t now)
{
	char why[sizeof(r->pend.why)];
	uint64_t due;

	if (!r->o.nr_triggers || !(due = trigger__due(&r->trig, now, why, sizeof(why))))
		return;
	if (r->pend.on)		/* after this one: the event may be past its cut */
		return;
	if (!xpu_quiet)
		fprintf(stderr, "xpu-record: switch-output: %s: the file switches\n", why);
	series__cut(r);
	rotate__pend(r, due, why, true);
}

static void *rotate__thread(void *arg)
{
	struct rotate *r = arg;
	int seen_usr2 = atomic_load(&rotate_sigusr2);
	uint64_t next_switch = record__now_ns() + (uint64_t)(r->o.switch_secs * 1e9);
	uint64_t next_seal = record__now_ns() + FLIGHT_SEAL_MS * 1000000ull;

	while (!atomic_load(&r->stop)) {
		struct timespec ts = { 0, ROTATE_TICK_MS * 1000000L };
		uint64_t now;
		int usr2;

		nanosleep(&ts, NULL);
		now = record__now_ns();
		usr2 = atomic_load(&rotate_sigusr2);
		if (r->o.switch_mode) {
			bool go = false;

			if (usr2 != seen_usr2 && r->o.switch_mode == ROTATE_SWITCH_SIGNAL)
				go = true;
			if (r->o.switch_mode == ROTATE_SWITCH_TIME && now >= next_switch) {
				go = true;
				next_switch += (uint64_t)(r->o.switch_secs * 1e9);
				if (next_switch <= now)	/* a slow switch: no catching up */
					next_switch = now + (uint64_t)(r->o.switch_secs * 1e9);
			}
			if (atomic_load(&r->size_full) && !r->pend.on)
				go = true;
			if (go && !r->pend.on) {
				series__cut(r);
				rotate__pend(r, now, "switch", false);
			} else if (go) {
				r->again = now;
			}
			rotate__switch_trigger(r, now);
			if (r->pend.on && now >= r->pend.due) {
				series__switch(r, r->pend.cut, true);
				r->pend.on = false;
				if (r->pend_trig)
					trigger__clear(&r->trig);
				if (r->again) {	/* asked while this one waited: cut now */
					series__cut(r);
					rotate__pend(r, now, "switch", false);
				}
				r->again = 0;
			}
		}
		if (r->o.flight_secs) {
			char why[sizeof(r->pend.why)];
			uint64_t due;

			if (now >= next_seal) {
				xpu_writer__handoff(r->w);	/* the ring's resolution */
				next_seal = now + FLIGHT_SEAL_MS * 1000000ull;
			}
			if (usr2 != seen_usr2 && !r->pend.on)
				rotate__pend(r, now, "SIGUSR2", false);
			else if (usr2 != seen_usr2 && !r->again)
				r->again = now;
			if (!r->pend.on && (due = trigger__due(&r->trig, now, why, sizeof(why))))
				rotate__pend(r, due, why, true);
			if (r->pend.on && now >= r->pend.due) {
				flight__write(r, r->pend.why, r->pend.cut, true);
				r->pend.on = false;
				if (r->pend_trig)
					trigger__clear(&r->trig);
				if (r->again)	/* a SIGUSR2 while it waited: its window */
					rotate__pend(r, r->again, "SIGUSR2", false);
				r->again = 0;
			}
		}
		seen_usr2 = usr2;
	}
	return NULL;
}

struct rotate *rotate__new(const struct rotate_opts *ro, const char *path,
			   struct xpu_writer_opts *wo)
{
	struct rotate *r = xcalloc(1, sizeof(*r));

	r->o = *ro;
	r->path = path;
	r->state = state__new();
	pthread_mutex_init(&r->lock, NULL);
	trigger__init(&r->trig, &r->o);
	pthread_mutex_init(&r->klock, NULL);
	u64map__init(&r->kips);
	atomic_store(&r->features, wo->features);
	if (ro->activate) {
		uint64_t rt = rotate__clock(CLOCK_REALTIME), mono = rotate__clock(CLOCK_MONOTONIC);

		r->act_mono = ro->activate_ns > rt ? mono + (ro->activate_ns - rt) : mono;
	}
	wo->tap = rotate__tap;
	wo->tap_ctx = r;
	if (rotate_opts__files(ro)) {
		wo->sink = rotate__sink;
		wo->sink_ctx = r;
		/* background compression: the writer's thread hands chunks
		 * over; the switch waits for it (xpu_writer__flush) */
	}
	return r;
}

int rotate__start(struct rotate *r, struct xpu_writer *w, struct record_bpf *b,
		  struct sideband *sb, struct channel *ch)
{
	struct sigaction sa = { .sa_handler = rotate__on_sigusr2 };
	char id[40];
	int err;

	r->w = w;
	r->b = b;
	r->sb = sb;
	r->ch = ch;
	r->start_mono = r->last_cut = record__now_ns();
	/* the files of one recording share its processes: xpu-report -i DIR
	 * merges them as one (report/session/session.c) */
	snprintf(id, sizeof(id), "%d-%llu", (int)getpid(),
		 (unsigned long long)rotate__clock(CLOCK_REALTIME));
	xpu_writer__meta(w, XPU_META_RECORDING_ID, id);
	if (!rotate_opts__files(&r->o))
		return 0;
	if (r->o.switch_mode && series__start(r))
		return -EIO;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (r->o.switch_mode == ROTATE_SWITCH_SIGNAL || r->o.flight_secs)
		sigaction(SIGUSR2, &sa, NULL);
	err = pthread_create(&r->thread, NULL, rotate__thread, r);
	if (err)
		return -err;
	r->started = true;
	return 0;
}

void rotate__stop(struct rotate *r)
{
	if (!r || !r->started)
		return;
	r->stop_mono = record__now_ns();	/* the end of the last window */
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	r->started = false;
}

int rotate__end(struct rotate *r, bool quiet)
{
	char why[sizeof(r->pend.why)];
	size_t recs, bytes;

	if (!r || r->ended)
		return 0;
	rotate__stop(r);
	r->ended = true;
	if (!rotate_opts__files(&r->o) || !r->w)
		return 0;
	/* the recorder's writer is closed: no sink call any more */
	if (r->pend.on && r->o.switch_mode)	/* a switch that waited for these records */
		series__switch(r, r->pend.cut, false);
	else if (r->pend.on)			/* a window that waited for them */
		flight__write(r, r->pend.why, r->pend.cut, false);
	if (r->pend.on && r->pend_trig)
		trigger__clear(&r->trig);
	r->pend.on = false;
	/* a trigger that fired less than its second before the end: the last
	 * file or window holds its event, and is named for it */
	if (!r->o.nr_triggers || !trigger__due(&r->trig, UINT64_MAX, why, sizeof(why)))
		snprintf(why, sizeof(why), "end of the recording");
	else if (r->o.switch_mode && !quiet)
		fprintf(stderr, "xpu-record: switch-output: %s: the last file holds it\n", why);
	if (r->o.switch_mode)
		series__end(r);
	else
		flight__write(r, why, WINDOW_END_OPEN, false);
	state__size(r->state, &recs, &bytes);
	debug(1, "bounded capture: state of %zu records, %.1f KB; %llu chunks in; flight ring peak "
	      "%.1f KB (%llu chunks dropped for its byte limit); triggers fired %llu (%llu more "
	      "inside a window already due)", recs, bytes / 1024.0,
	      (unsigned long long)r->chunks_in, r->ring_peak / 1024.0,
	      (unsigned long long)r->ring_dropped, (unsigned long long)r->trig.nr_fired,
	      (unsigned long long)r->trig.nr_merged);
	if (!quiet)
		fprintf(stderr, "xpu-record: %zu file%s written%s (%zu kept%s), the last %s\n",
			r->nr_written, r->nr_written == 1 ? "" : "s",
			r->o.flight_secs ? " by the flight recorder" : "", r->nr_done,
			r->nr_removed ? " by --switch-max-files" : "",
			r->nr_done ? r->done[r->nr_done - 1].name : "none");
	return 0;
}

void rotate__free(struct rotate *r)
{
	if (!r)
		return;
	rotate__stop(r);
	flight__free(r);
	series__free(r);
	state__free(r->state);
	pthread_mutex_destroy(&r->lock);
	trigger__exit(&r->trig);
	pthread_mutex_destroy(&r->klock);
	u64map__exit(&r->kips);
	free(r);
}
