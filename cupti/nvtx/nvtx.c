// SPDX-License-Identifier: MIT
/* NVTX range tracking of one process; see nvtx.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "nvtx.h"

/* The calling thread's state (xpu_nvtx__self). */
static __thread struct xpu_nvtx_thread *nvtx__self;

static void nvtx__thread_destructor(void *arg)
{
	/* an NVTX call from a later destructor of this thread makes a new one */
	if (nvtx__self == arg)
		nvtx__self = NULL;
	xpu_nvtx__thread_exit(arg);
}

int xpu_nvtx__init(struct xpu_nvtx *nv, struct xpu_client *c, struct xpu_names *names,
		   uint32_t pid, xpu_nvtx_marker_fn marker)
{
	memset(nv, 0, sizeof(*nv));
	nv->client = c;
	nv->names = names;
	nv->pid = pid;
	nv->marker = marker;
	atomic_init(&nv->next_id, 1);
	pthread_mutex_init(&nv->lock, NULL);
	if (pthread_key_create(&nv->key, nvtx__thread_destructor))
		return -EAGAIN;
	nv->have_key = true;
	return 0;
}

void xpu_nvtx__exit(struct xpu_nvtx *nv)
{
	struct xpu_nvtx_thread *t, *next;

	if (nv->have_key)
		pthread_key_delete(nv->key);
	nv->have_key = false;
	for (t = nv->threads; t; t = next) {
		next = t->next;
		free(t);
	}
	nv->threads = NULL;
	free(nv->started);
	nv->started = NULL;
}

/* Caller holds nv->lock. */
static void nvtx__lost(struct xpu_nvtx *nv, uint64_t n)
{
	nv->nr_lost += n;
	nv->lost_unreported += n;
}

static void nvtx__count_lost(struct xpu_nvtx *nv)
{
	pthread_mutex_lock(&nv->lock);
	nvtx__lost(nv, 1);
	pthread_mutex_unlock(&nv->lock);
}

struct xpu_nvtx_thread *xpu_nvtx__thread_new(struct xpu_nvtx *nv, uint32_t tid)
{
	struct xpu_nvtx_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->nv = nv;
	t->tid = tid;
	pthread_mutex_lock(&nv->lock);
	t->next = nv->threads;
	if (nv->threads)
		nv->threads->prev = t;
	nv->threads = t;
	pthread_mutex_unlock(&nv->lock);
	return t;
}

struct xpu_nvtx_thread *xpu_nvtx__self(struct xpu_nvtx *nv)
{
	struct xpu_nvtx_thread *t = nvtx__self;

	if (t && t->nv == nv)
		return t;
	t = xpu_nvtx__thread_new(nv, (uint32_t)gettid());
	if (t && nv->have_key)
		pthread_setspecific(nv->key, t);	/* frees it at thread exit */
	nvtx__self = t;
	return t;
}

/* Queues the GPU_NVTX record of r, closed at end by end_tid (end 0: never). */
static void nvtx__send(struct xpu_nvtx *nv, const struct xpu_nvtx_range *r, uint64_t end,
		       uint32_t end_tid, uint32_t flags)
{
	struct xpu_gpu_nvtx rec = {
		.start = r->ev.time, .end = end, .range_id = r->range_id,
		.pid = nv->pid, .tid = r->tid, .end_tid = end_tid,
		.domain_id = r->ev.domain_id, .message_id = r->ev.message_id,
		.flags = flags, .depth = r->depth, .color = r->ev.color,
	};

	/* a full queue counts it as a channel drop (XPU_LOST_GPU_CHANNEL) */
	xpu_client__add(nv->client, XPU_REC_GPU_NVTX, &rec, sizeof(rec));
	atomic_fetch_add(&nv->nr_sent, 1);
}

/* The thread's open ranges as never closed. Caller holds t->lock. */
static void nvtx__thread_flush(struct xpu_nvtx_thread *t)
{
	for (uint32_t i = 0; i < t->nr; i++)
		nvtx__send(t->nv, &t->stack[i], 0, 0, XPU_NVTX_PUSHPOP);
	t->nr = 0;
	t->nr_dropped = 0;
	t->overflow = 0;
}

void xpu_nvtx__thread_exit(struct xpu_nvtx_thread *t)
{
	struct xpu_nvtx *nv;

	if (!t)
		return;
	nv = t->nv;
	pthread_mutex_lock(&nv->lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		nv->threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&nv->lock);
	pthread_mutex_lock(&t->lock);
	if (!atomic_load(&nv->finished))
		nvtx__thread_flush(t);
	pthread_mutex_unlock(&t->lock);
	free(t);
}

uint32_t xpu_nvtx__intern(struct xpu_nvtx *nv, const char *text)
{
	if (!text)
		return 0;
	return xpu_names__intern_max(nv->names, nv->client, text, XPU_NVTX_MAX_NAMES);
}

/* Caller holds nv->lock. */
static void nvtx__handle_set(struct xpu_nvtx_handle *tab, uint32_t *nr, uint64_t handle,
			     uint32_t id)
{
	for (uint32_t i = 0; i < *nr; i++) {
		if (tab[i].handle == handle) {
			tab[i].id = id;
			return;
		}
	}
	if (*nr < XPU_NVTX_MAX_HANDLES)
		tab[(*nr)++] = (struct xpu_nvtx_handle){ handle, id };
}

static uint32_t nvtx__handle_get(struct xpu_nvtx *nv, const struct xpu_nvtx_handle *tab,
				 const uint32_t *nr, uint64_t handle)
{
	uint32_t id = 0;

	if (!handle)
		return 0;
	pthread_mutex_lock(&nv->lock);
	for (uint32_t i = 0; i < *nr; i++) {
		if (tab[i].handle == handle) {
			id = tab[i].id;
			break;
		}
	}
	pthread_mutex_unlock(&nv->lock);
	return id;
}

void xpu_nvtx__add_domain(struct xpu_nvtx *nv, uint64_t handle, const char *name)
{
	uint32_t id = xpu_nvtx__intern(nv, name);

	if (!handle || !id)
		return;
	pthread_mutex_lock(&nv->lock);
	nvtx__handle_set(nv->domains, &nv->nr_domains, handle, id);
	pthread_mutex_unlock(&nv->lock);
}

void xpu_nvtx__add_string(struct xpu_nvtx *nv, uint64_t handle, const char *text)
{
	uint32_t id = xpu_nvtx__intern(nv, text);

	if (!handle || !id)
		return;
	pthread_mutex_lock(&nv->lock);
	nvtx__handle_set(nv->strings, &nv->nr_strings, handle, id);
	pthread_mutex_unlock(&nv->lock);
}

uint32_t xpu_nvtx__domain_id(struct xpu_nvtx *nv, uint64_t handle)
{
	return nvtx__handle_get(nv, nv->domains, &nv->nr_domains, handle);
}

uint32_t xpu_nvtx__string_id(struct xpu_nvtx *nv, uint64_t handle)
{
	return nvtx__handle_get(nv, nv->strings, &nv->nr_strings, handle);
}

uint64_t xpu_nvtx__push(struct xpu_nvtx_thread *t, const struct xpu_nvtx_event *ev)
{
	struct xpu_nvtx *nv = t->nv;
	struct xpu_nvtx_range *r;
	uint32_t depth = 0;
	uint64_t id;

	pthread_mutex_lock(&t->lock);
	if (atomic_load(&nv->finished)) {
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	if (t->nr == XPU_NVTX_MAX_DEPTH || t->nr_dropped || t->overflow) {
		/* its pop is consumed, LIFO: by a pop of its domain while known;
		 * dropped while others are, so every dropped push is newer than
		 * every kept one */
		if (!t->overflow && t->nr_dropped < XPU_NVTX_MAX_DEPTH)
			t->dropped[t->nr_dropped++] = ev->domain;
		else
			t->overflow++;
		pthread_mutex_unlock(&t->lock);
		nvtx__count_lost(nv);
		return 0;
	}
	for (uint32_t i = 0; i < t->nr; i++)
		depth += t->stack[i].ev.domain == ev->domain;
	id = atomic_fetch_add(&nv->next_id, 1);
	r = &t->stack[t->nr++];
	*r = (struct xpu_nvtx_range){ .ev = *ev, .range_id = id, .tid = t->tid, .depth = depth };
	pthread_mutex_unlock(&t->lock);
	/* outside the lock: the uprobe takes microseconds */
	if (nv->marker)
		nv->marker(id, ev->cbid, XPU_API_NVTX);
	return id;
}

int xpu_nvtx__pop(struct xpu_nvtx_thread *t, uint64_t time, uint64_t domain)
{
	struct xpu_nvtx *nv = t->nv;
	int ret = -ENOENT;

	pthread_mutex_lock(&t->lock);
	if (atomic_load(&nv->finished)) {
		ret = 0;
	} else if (t->overflow) {
		t->overflow--;
		ret = 0;
	} else {
		/* the dropped pushes are newer than every kept one */
		for (uint32_t i = t->nr_dropped; i-- > 0; ) {
			if (t->dropped[i] != domain)
				continue;
			memmove(&t->dropped[i], &t->dropped[i + 1],
				(t->nr_dropped - i - 1) * sizeof(t->dropped[0]));
			t->nr_dropped--;
			ret = 0;
			break;
		}
		for (uint32_t i = t->nr; ret && i-- > 0; ) {
			struct xpu_nvtx_range r = t->stack[i];

			if (r.ev.domain != domain)
				continue;
			memmove(&t->stack[i], &t->stack[i + 1], (t->nr - i - 1) * sizeof(r));
			t->nr--;
			nvtx__send(nv, &r, time, t->tid, XPU_NVTX_PUSHPOP);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (ret) {
		/* pushed before CUPTI called us (before cuInit), or a program bug */
		pthread_mutex_lock(&nv->lock);
		nv->nr_unmatched++;
		pthread_mutex_unlock(&nv->lock);
	}
	return ret;
}

uint64_t xpu_nvtx__start(struct xpu_nvtx_thread *t, uint64_t key, const struct xpu_nvtx_event *ev)
{
	struct xpu_nvtx *nv = t->nv;
	uint64_t id = 0;

	pthread_mutex_lock(&nv->lock);
	if (atomic_load(&nv->finished))
		goto out;
	if (!nv->started)
		nv->started = calloc(XPU_NVTX_MAX_STARTED, sizeof(*nv->started));
	if (!nv->started || nv->nr_started == XPU_NVTX_MAX_STARTED) {
		nvtx__lost(nv, 1);
		goto out;
	}
	id = atomic_fetch_add(&nv->next_id, 1);
	nv->started[nv->nr_started++] = (struct xpu_nvtx_range){
		.ev = *ev, .range_id = id, .key = key, .tid = t->tid,
	};
out:
	pthread_mutex_unlock(&nv->lock);
	if (id && nv->marker)
		nv->marker(id, ev->cbid, XPU_API_NVTX);
	return id;
}

int xpu_nvtx__end(struct xpu_nvtx_thread *t, uint64_t time, uint64_t key)
{
	struct xpu_nvtx *nv = t->nv;
	int ret = -ENOENT;

	pthread_mutex_lock(&nv->lock);
	if (atomic_load(&nv->finished)) {
		ret = 0;
		goto out;
	}
	/* newest first: the range just started is the likeliest to end */
	for (uint32_t i = nv->nr_started; i-- > 0; ) {
		if (nv->started[i].key != key)
			continue;
		nvtx__send(nv, &nv->started[i], time, t->tid, XPU_NVTX_STARTEND);
		nv->started[i] = nv->started[--nv->nr_started];
		ret = 0;
		break;
	}
	if (ret)
		nv->nr_unmatched++;
out:
	pthread_mutex_unlock(&nv->lock);
	return ret;
}

void xpu_nvtx__mark(struct xpu_nvtx_thread *t, const struct xpu_nvtx_event *ev)
{
	struct xpu_nvtx_range r = {
		.ev = *ev, .range_id = atomic_fetch_add(&t->nv->next_id, 1), .tid = t->tid,
	};

	if (!atomic_load(&t->nv->finished))
		nvtx__send(t->nv, &r, ev->time, t->tid, XPU_NVTX_MARK);
}

void xpu_nvtx__report_lost(struct xpu_nvtx *nv)
{
	uint64_t n;

	pthread_mutex_lock(&nv->lock);
	n = nv->lost_unreported;
	nv->lost_unreported = 0;
	pthread_mutex_unlock(&nv->lock);
	if (n && xpu_client__lost(nv->client, XPU_LOST_NVTX, n)) {
		pthread_mutex_lock(&nv->lock);
		nv->lost_unreported += n;	/* queue full: the next report retries */
		pthread_mutex_unlock(&nv->lock);
	}
}

void xpu_nvtx__finish(struct xpu_nvtx *nv)
{
	struct xpu_nvtx_thread *t;

	pthread_mutex_lock(&nv->lock);
	if (atomic_load(&nv->finished)) {
		pthread_mutex_unlock(&nv->lock);
		return;
	}
	for (t = nv->threads; t; t = t->next) {
		pthread_mutex_lock(&t->lock);
		nvtx__thread_flush(t);
		pthread_mutex_unlock(&t->lock);
	}
	for (uint32_t i = 0; i < nv->nr_started; i++)
		nvtx__send(nv, &nv->started[i], 0, 0, XPU_NVTX_STARTEND);
	nv->nr_started = 0;
	atomic_store(&nv->finished, true);
	pthread_mutex_unlock(&nv->lock);
	xpu_nvtx__report_lost(nv);
}
