// SPDX-License-Identifier: MIT
/*
 * The flight recorder's triggers (trigger.h, Documentation/xpu-record.md
 * "--trigger"): the writer's tap hands each record here; a STRING names
 * what an nvtx trigger waits for, a closed NVTX range, a GPU's idle second
 * or a failed allocation (GPU_OOM) fires one, and the window (or the
 * switch of --switch-output) is due TRIGGER_AFTER_S after the event.
 * The tap runs in several threads: all is under tr->lock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "common/log.h"
#include "format/xpu_format.h"
#include "record/clock.h"
#include "record/capture/trigger.h"

#define TRIGGER_AFTER_S		1.0	/* seconds written after a trigger's event */
#define GPU_IDLE_WINDOW_NS	1000000000ull	/* gpu-idle: per device, one second */

void trigger__init(struct trigger *tr, const struct rotate_opts *o)
{
	memset(tr, 0, sizeof(*tr));
	tr->o = o;
	pthread_mutex_init(&tr->lock, NULL);
}

void trigger__exit(struct trigger *tr)
{
	pthread_mutex_destroy(&tr->lock);
}

/* A trigger's event at monotonic time t: the window is written TRIGGER_AFTER_S
 * later (or as soon as the records came, if they came late). tr->lock held. */
static void trigger__fire(struct trigger *tr, uint64_t t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void trigger__fire(struct trigger *tr, uint64_t t, const char *fmt, ...)
{
	/* --switch-output (no ring): the file switches TRIGGER_AFTER_S after */
	double after = tr->o->flight_secs && tr->o->flight_secs / 4 < TRIGGER_AFTER_S ?
		       tr->o->flight_secs / 4 : TRIGGER_AFTER_S;
	uint64_t now = record__now_ns(), due = (t > now ? t : now) + (uint64_t)(after * 1e9);
	va_list ap;

	if (tr->due) {	/* in the window that will be written */
		tr->nr_merged++;
		return;
	}
	tr->nr_fired++;
	tr->due = due;
	va_start(ap, fmt);
	vsnprintf(tr->why, sizeof(tr->why), fmt, ap);
	va_end(ap);
	debug(1, "trigger: %s", tr->why);
}

/* A STRING: the id, in its process, of a name an nvtx trigger waits for. */
static void trigger__string(struct trigger *tr, const struct iovec *iov)
{
	const struct xpu_string *s;
	const char *txt;

	if (iov->iov_len <= sizeof(*s))
		return;
	s = iov->iov_base;
	txt = (const char *)(s + 1);
	if (!memchr(txt, 0, iov->iov_len - sizeof(*s)))
		return;
	for (int i = 0; i < tr->o->nr_triggers; i++) {
		if (tr->o->triggers[i].kind != ROTATE_TRIG_NVTX ||
		    strcmp(txt, tr->o->triggers[i].name))
			continue;
		if (tr->nr_str == TRIGGER_STRINGS)
			memmove(tr->str, tr->str + 1, --tr->nr_str * sizeof(tr->str[0]));
		tr->str[tr->nr_str].pid = s->pid;
		tr->str[tr->nr_str].id = s->id;
		tr->str[tr->nr_str++].trig = i;
	}
}

/* A closed NVTX range: one longer than its nvtx trigger asks fires it. */
static void trigger__nvtx(struct trigger *tr, const struct xpu_gpu_nvtx *nv)
{
	if (!nv->end || nv->end < nv->start || !nv->message_id)
		return;
	for (int i = 0; i < tr->nr_str; i++) {
		const struct rotate_trigger *t = &tr->o->triggers[tr->str[i].trig];

		if (tr->str[i].pid != nv->pid || tr->str[i].id != nv->message_id ||
		    (nv->end - nv->start) / 1e6 <= t->ms)
			continue;
		trigger__fire(tr, nv->end, "nvtx:%s>%g: a range of pid %u took %.1f ms", t->name,
			      t->ms, nv->pid, (nv->end - nv->start) / 1e6);
		return;
	}
}

/*
 * gpu-idle: per device (pid and ordinal: a process's view of it), one-second
 * windows from the first activity on; the busy time in a window is the
 * union of its kernels', copies' and memsets' intervals as they come
 * (CUPTI hands them over in order per stream: overlapping streams may count
 * a little twice, which only lowers the idle share). A window closes when
 * activity after it comes; idle more than PCT of it fires. A device that
 * does nothing at all has no windows: the trigger is for a device that
 * works, with gaps.
 */
static void trigger__gpu(struct trigger *tr, uint32_t pid, uint32_t dev, uint64_t start,
			 uint64_t end)
{
	struct gpu_idle_dev *d = NULL;
	double pct = -1;

	if (end <= start)
		return;
	for (int i = 0; i < tr->o->nr_triggers; i++)
		if (tr->o->triggers[i].kind == ROTATE_TRIG_GPU_IDLE &&
		    (pct < 0 || tr->o->triggers[i].pct < pct))
			pct = tr->o->triggers[i].pct;
	if (pct < 0)
		return;
	for (int i = 0; i < GPU_IDLE_DEVICES && !d; i++)
		if (!tr->dev[i].used || (tr->dev[i].pid == pid && tr->dev[i].id == dev))
			d = &tr->dev[i];
	if (!d)
		return;
	if (!d->used) {
		*d = (struct gpu_idle_dev){ .pid = pid, .id = dev, .used = true, .win_start = start };
	}
	if (start >= d->win_start + GPU_IDLE_WINDOW_NS) {
		uint64_t we = d->win_start + GPU_IDLE_WINDOW_NS;
		double idle;

		if (d->covered > we)
			d->busy -= d->covered - we;
		idle = 100.0 * (1.0 - (double)d->busy / GPU_IDLE_WINDOW_NS);
		if (idle > pct)
			trigger__fire(tr, we, "gpu-idle>%g: device %u of pid %u idle %.0f%% of a "
				      "second", pct, dev, pid, idle);
		/* the next window: the one this activity falls in */
		d->win_start += (start - d->win_start) / GPU_IDLE_WINDOW_NS * GPU_IDLE_WINDOW_NS;
		d->busy = d->covered > d->win_start ? d->covered - d->win_start : 0;
	}
	if (end > d->covered) {
		d->busy += end - (start > d->covered ? start : d->covered);
		d->covered = end;
	}
}

/* An allocation that failed for want of memory: the oom trigger fires. */
static void trigger__oom(struct trigger *tr, const struct xpu_gpu_oom *o)
{
	for (int i = 0; i < tr->o->nr_triggers; i++) {
		if (tr->o->triggers[i].kind != ROTATE_TRIG_OOM)
			continue;
		trigger__fire(tr, o->time, "oom: pid %u asked for %llu bytes (%s, correlation %llu)",
			      o->pid, (unsigned long long)o->bytes, o->source == XPU_OOM_CUDA ?
			      "a CUDA call" : "the caching allocator",
			      (unsigned long long)o->correlation_id);
		return;
	}
}

void trigger__tap(struct trigger *tr, uint16_t type, const struct iovec *iov)
{
	switch (type) {
	case XPU_REC_GPU_OOM:
		if (iov->iov_len >= sizeof(struct xpu_gpu_oom)) {
			struct xpu_gpu_oom o;

			memcpy(&o, iov->iov_base, sizeof(o));
			pthread_mutex_lock(&tr->lock);
			trigger__oom(tr, &o);
			pthread_mutex_unlock(&tr->lock);
		}
		break;
	case XPU_REC_STRING:
		pthread_mutex_lock(&tr->lock);
		trigger__string(tr, iov);
		pthread_mutex_unlock(&tr->lock);
		break;
	case XPU_REC_GPU_NVTX:
		if (iov->iov_len >= sizeof(struct xpu_gpu_nvtx)) {
			struct xpu_gpu_nvtx nv;

			memcpy(&nv, iov->iov_base, sizeof(nv));
			pthread_mutex_lock(&tr->lock);
			trigger__nvtx(tr, &nv);
			pthread_mutex_unlock(&tr->lock);
		}
		break;
	case XPU_REC_GPU_KERNEL:
		if (iov->iov_len >= sizeof(struct xpu_gpu_kernel)) {
			struct xpu_gpu_kernel k;

			memcpy(&k, iov->iov_base, sizeof(k));
			pthread_mutex_lock(&tr->lock);
			trigger__gpu(tr, k.pid, k.device, k.start, k.end);
			pthread_mutex_unlock(&tr->lock);
		}
		break;
	case XPU_REC_GPU_MEMCPY:
		if (iov->iov_len >= sizeof(struct xpu_gpu_memcpy)) {
			struct xpu_gpu_memcpy m;

			memcpy(&m, iov->iov_base, sizeof(m));
			pthread_mutex_lock(&tr->lock);
			trigger__gpu(tr, m.pid, m.device, m.start, m.end);
			pthread_mutex_unlock(&tr->lock);
		}
		break;
	}
}

uint64_t trigger__due(struct trigger *tr, uint64_t now, char *why, size_t len)
{
	uint64_t due;

	pthread_mutex_lock(&tr->lock);
	due = tr->due;
	if (due && now >= due)
		snprintf(why, len, "%s", tr->why);
	else
		due = 0;
	pthread_mutex_unlock(&tr->lock);
	return due;
}

void trigger__clear(struct trigger *tr)
{
	pthread_mutex_lock(&tr->lock);
	tr->due = 0;
	pthread_mutex_unlock(&tr->lock);
}
