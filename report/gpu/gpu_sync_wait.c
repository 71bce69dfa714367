// SPDX-License-Identifier: MIT
/* Time in synchronizing CUDA calls, charged to what the GPU ran meanwhile:
 * see gpu_sync_wait.h and Documentation/design-gpu-idle.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_sync_wait.h"

#define SW_ANY		UINT32_MAX	/* no device / stream constraint */

struct sw_call {			/* one synchronizing call */
	uint64_t start, end;
	uint64_t corr;
	uint32_t pid, tid;
	uint32_t domain, cbid;		/* 0, 0: known from a GPU_SYNC record only */
	uint32_t stack;			/* CPU stack + API frame (finish) */
	enum sw_scope scope;
	uint32_t stream;		/* sync-record calls: the record's stream */
};

struct sw_sync {			/* the first GPU_SYNC record of a (pid, id) */
	uint32_t type, context, stream;
};

struct sw_work {			/* a kernel, copy or memset a call may wait on */
	uint64_t start, end;
	uint32_t pid, device, stream;
	uint32_t leaf;			/* the join's leaf frame */
};

struct sw_event {			/* a joined GPU_SYNC record */
	uint64_t start, end, corr;
	uint32_t pid, tid, type, stream, cpu_stack;
};

struct sw_point {
	uint64_t x;
	uint32_t w;			/* index into the call's work list */
	bool end;
};

struct gpu_sync_wait {
	struct session_tool tool;
	struct gpu_sync_wait_stats st;
	struct sw_call *calls;
	size_t nr_calls, calls_cap;
	struct u64map call_idx;		/* pid << 32 | id -> calls index + 1 (API records) */
	struct sw_sync *syncs;
	size_t nr_syncs, syncs_cap;
	struct u64map sync_idx;		/* pid << 32 | id -> syncs index + 1 */
	struct u64map ctx_dev;		/* pid << 32 | context -> device + 1 */
	struct u64map copy_dev;		/* pid << 32 | id -> device + 1 of a copy */
	struct u64map act_stack;	/* pid << 32 | id -> (stack + 1) << 32 | tid, from the
					 * join's sync and copy events */
	struct sw_work *work;
	size_t nr_work, work_cap;
	struct sw_event *events;
	size_t nr_events, events_cap;
	struct u64map api_idx;		/* domain << 32 | cbid -> st.apis index + 1 */
	size_t apis_cap;
	struct u64map unmatched_idx;	/* frame -> st.unmatched_apis index + 1 */
	size_t unmatched_cap;
	struct u64map waits;		/* leaf frame -> "[waits on]" frame + 1 */
	struct u64map appended;		/* stack << 32 | frame -> stack + 1 */
	/* scratch of one call */
	uint32_t *in;			/* work indices in scope */
	double *charge;
	bool *on;
	size_t in_cap;
	struct sw_point *pts;
	size_t pts_cap;
};

static int sw__record(struct session *s, const struct xpu_record *rec, int pass, void *priv);
static int sw__pass1_done(struct session *s, void *priv);
static int sw__finish(struct session *s, void *priv);
static void sw__delete(void *priv);
static void sw__gpu(struct session *s, const struct gpu_event *ev, void *priv);

enum sw_scope gpu_sync_wait__scope(const char *name)
{
	if (!name)
		return SW_NONE;
	if (!strcmp(name, "cudaStreamSynchronize") || !strcmp(name, "cuStreamSynchronize"))
		return SW_STREAM;
	if (!strcmp(name, "cudaDeviceSynchronize") || !strcmp(name, "cudaThreadSynchronize") ||
	    !strcmp(name, "cuCtxSynchronize"))
		return SW_DEVICE;
	if (!strcmp(name, "cudaEventSynchronize") || !strcmp(name, "cuEventSynchronize"))
		return SW_EVENT;
	/* cudaMemcpy, cudaMemcpy2D, cuMemcpyDtoH, ...: every copy call without
	 * "Async" returns when its copy is done */
	if ((!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8) ||
	     !strncmp(name, "cu64Memcpy", 10)) && !strstr(name, "Async"))
		return SW_COPY;
	return SW_NONE;
}

struct gpu_sync_wait *gpu_sync_wait__find(const struct session *s)
{
	return session__tool(s, GPU_SYNC_WAIT_TOOL);
}

const struct gpu_sync_wait_stats *gpu_sync_wait__stats(const struct gpu_sync_wait *sw)
{
	return &sw->st;
}

struct gpu_sync_wait *gpu_sync_wait__attach(struct session *s)
{
	struct gpu_join *g = gpu_join__find(s);
	struct gpu_sync_wait *sw = gpu_sync_wait__find(s);

	if (sw)
		return sw;
	BUG_ON(!g);		/* registered first, so it finishes first */
	sw = xzalloc(sizeof(*sw));
	sw->tool = (struct session_tool){ .name = GPU_SYNC_WAIT_TOOL, .record = sw__record,
					  .pass1_done = sw__pass1_done, .finish = sw__finish,
					  .exit = sw__delete, .priv = sw };
	u64map__init_seq(&sw->call_idx);
	u64map__init_seq(&sw->sync_idx);
	u64map__init(&sw->ctx_dev);
	u64map__init_seq(&sw->copy_dev);
	u64map__init_seq(&sw->act_stack);
	u64map__init(&sw->api_idx);
	u64map__init(&sw->unmatched_idx);
	u64map__init(&sw->waits);
	u64map__init(&sw->appended);
	session__add_tool(s, &sw->tool);
	gpu_join__subscribe_all(g, sw__gpu, sw);
	return sw;
}

static void sw__delete(void *priv)
{
	struct gpu_sync_wait *sw = priv;

	free(sw->calls);
	free(sw->syncs);
	free(sw->work);
	free(sw->events);
	free(sw->st.apis);
	free(sw->st.unmatched_apis);
	free(sw->in);
	free(sw->charge);
	free(sw->on);
	free(sw->pts);
	u64map__exit(&sw->call_idx);
	u64map__exit(&sw->sync_idx);
	u64map__exit(&sw->ctx_dev);
	u64map__exit(&sw->copy_dev);
	u64map__exit(&sw->act_stack);
	u64map__exit(&sw->api_idx);
	u64map__exit(&sw->unmatched_idx);
	u64map__exit(&sw->waits);
	u64map__exit(&sw->appended);
	free(sw);
}

/* ---- pass 1 -------------------------------------------------------------------------- */

static bool sw__key(uint32_t pid, uint64_t id, uint64_t *key)
{
	if (id > UINT32_MAX)
		return false;
	*key = (uint64_t)pid << 32 | id;
	return true;
}

static void sw__api(struct gpu_sync_wait *sw, const struct xpu_gpu_api *a)
{
	enum sw_scope scope = gpu_sync_wait__scope(gpu_cbid__name(a->domain, a->cbid));
	struct sw_call c = { .start = a->start, .end = a->end >= a->start ? a->end : a->start,
			     .corr = a->correlation_id, .pid = a->pid, .tid = a->tid,
			     .domain = a->domain, .cbid = a->cbid, .scope = scope,
			     .stream = UINT32_MAX };
	uint64_t key, *slot;

	if (scope == SW_NONE || !sw__key(a->pid, a->correlation_id, &key))
		return;
	slot = u64map__slot(&sw->call_idx, key);
	if (*slot) {
		/* the runtime call and the driver call nested in it share the id:
		 * the runtime one is the call the user made (as in the join) */
		if (a->domain == XPU_API_RUNTIME && sw->calls[*slot - 1].domain != XPU_API_RUNTIME)
			sw->calls[*slot - 1] = c;
		return;
	}
	sw->calls = xgrow(sw->calls, &sw->calls_cap, sw->nr_calls + 1, sizeof(*sw->calls));
	sw->calls[sw->nr_calls++] = c;
	*slot = sw->nr_calls;
}

static void sw__device_of(struct gpu_sync_wait *sw, uint32_t pid, uint32_t context,
			  uint32_t device)
{
	uint64_t *slot = u64map__slot(&sw->ctx_dev, (uint64_t)pid << 32 | context);

	if (!*slot)
		*slot = (uint64_t)device + 1;
}

static int sw__record(struct session *s, const struct xpu_record *rec, int pass, void *priv)
{
	struct gpu_sync_wait *sw = priv;
	uint64_t key, *slot;

	if (pass != 1)
		return 0;
	switch (rec->type) {
	case XPU_REC_GPU_API: {
		struct xpu_gpu_api a;

		memcpy(&a, rec->body, sizeof(a));
		sw__api(sw, &a);
		break;
	}
	case XPU_REC_GPU_SYNC: {
		struct xpu_gpu_sync y;

		memcpy(&y, rec->body, sizeof(y));
		if (!sw__key(y.pid, y.correlation_id, &key))
			break;
		slot = u64map__slot(&sw->sync_idx, key);
		if (*slot)
			break;
		sw->syncs = xgrow(sw->syncs, &sw->syncs_cap, sw->nr_syncs + 1, sizeof(*sw->syncs));
		sw->syncs[sw->nr_syncs++] = (struct sw_sync){ y.type, y.context, y.stream };
		*slot = sw->nr_syncs;
		break;
	}
	case XPU_REC_GPU_KERNEL: {
		struct xpu_gpu_kernel k;

		memcpy(&k, rec->body, sizeof(k));
		sw__device_of(sw, k.pid, k.context, k.device);
		break;
	}
	case XPU_REC_GPU_MEMSET: {
		struct xpu_gpu_memset m;

		memcpy(&m, rec->body, sizeof(m));
		sw__device_of(sw, m.pid, m.context, m.device);
		break;
	}
	case XPU_REC_GPU_MEMCPY: {
		struct xpu_gpu_memcpy m;

		memcpy(&m, rec->body, sizeof(m));
		sw__device_of(sw, m.pid, m.context, m.device);
		if (sw__key(m.pid, m.correlation_id, &key) && !*(slot = u64map__slot(&sw->copy_dev, key)))
			*slot = (uint64_t)m.device + 1;
		break;
	}
	}
	return 0;
}

/* The join resolves only correlation records GPU work refers to; a sync
 * call's may have none (no sync record: an error return, or a copy whose
 * record carries the nested driver call's id). */
static int sw__pass1_done(struct session *s, void *priv)
{
	struct gpu_sync_wait *sw = priv;
	struct gpu_join *g = gpu_join__find(s);

	for (size_t i = 0; i < sw->nr_calls; i++)
		gpu_join__want_corr(g, sw->calls[i].pid, sw->calls[i].corr);
	return 0;
}

/* ---- the join's events ------------------------------------------------------------------ */

static void sw__count_unmatched(struct gpu_sync_wait *sw, const struct session *s,
				const struct gpu_event *ev)
{
	const struct profile *p = &s->profile;
	const uint32_t *fr;
	size_t n;
	uint64_t *slot;

	sw->st.sync_unmatched++;
	sw->st.unmatched_type[ev->sub < 5 ? ev->sub : 0]++;
	sw->st.unmatched_corr0 += ev->correlation_id == 0;
	fr = profile__stack(p, ev->cpu_stack, &n);
	if (!n || profile__frame(p, fr[n - 1])->kind != FRAME_GPU_API) {
		sw->st.unmatched_no_api++;
		return;
	}
	slot = u64map__slot(&sw->unmatched_idx, fr[n - 1]);
	if (!*slot) {
		sw->st.unmatched_apis = xgrow(sw->st.unmatched_apis, &sw->unmatched_cap,
					      sw->st.nr_unmatched_apis + 1,
					      sizeof(*sw->st.unmatched_apis));
		sw->st.unmatched_apis[sw->st.nr_unmatched_apis++] =
			(struct gpu_sync_frame_count){ fr[n - 1], 0 };
		*slot = sw->st.nr_unmatched_apis;
	}
	sw->st.unmatched_apis[*slot - 1].count++;
}

static void sw__gpu(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct gpu_sync_wait *sw = priv;
	uint64_t key, *slot;

	if ((ev->kind == GPU_KIND_SYNC || ev->kind == GPU_KIND_MEMCPY) &&
	    sw__key(ev->pid, ev->correlation_id, &key) &&
	    !*(slot = u64map__slot(&sw->act_stack, key)))
		*slot = ((uint64_t)ev->cpu_stack + 1) << 32 | ev->tid;
	if (ev->kind == GPU_KIND_SYNC) {
		sw->st.sync_records++;
		if (ev->match == GPU_MATCH_NONE)
			sw__count_unmatched(sw, s, ev);
		sw->events = xgrow(sw->events, &sw->events_cap, sw->nr_events + 1,
				   sizeof(*sw->events));
		sw->events[sw->nr_events++] = (struct sw_event){
			.start = ev->start, .end = ev->end, .corr = ev->correlation_id,
			.pid = ev->pid, .tid = ev->tid, .type = ev->sub, .stream = ev->stream,
			.cpu_stack = ev->cpu_stack };
		return;
	}
	sw->work = xgrow(sw->work, &sw->work_cap, sw->nr_work + 1, sizeof(*sw->work));
	sw->work[sw->nr_work++] = (struct sw_work){ ev->start, ev->end, ev->pid, ev->device,
						    ev->stream, ev->leaf };
}

/* ---- finish ------------------------------------------------------------------------------ */

static int work__cmp(const void *a, const void *b)
{
	const struct sw_work *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start ? 1 :
	       (x->end < y->end ? -1 : x->end > y->end);
}

/* Per thread by start, the longer first: a call nested in another follows it. */
static int call__cmp(const void *a, const void *b)
{
	const struct sw_call *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int point__cmp(const void *a, const void *b)
{
	const struct sw_point *x = a, *y = b;

	return x->x < y->x ? -1 : x->x > y->x;
}

static int api_stat__cmp(const void *a, const void *b)
{
	const struct gpu_sync_api_stat *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->cbid < y->cbid ? -1 : x->cbid > y->cbid ? 1 :
	       (x->domain < y->domain ? -1 : x->domain > y->domain);
}

static int frame_count__cmp(const void *a, const void *b)
{
	const struct gpu_sync_frame_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static uint32_t sw__append(struct gpu_sync_wait *sw, struct profile *p, uint32_t stack,
			   uint32_t frame)
{
	return profile__append(p, &sw->appended, stack, frame);
}

/* "[waits on] NAME" for a GPU leaf frame: the kernel's name, or the leaf as
 * it is ("[GPU_Memcpy DtoH]"). */
static uint32_t sw__waits_frame(struct gpu_sync_wait *sw, struct profile *p, uint32_t leaf)
{
	uint64_t *slot = u64map__slot(&sw->waits, leaf);
	const char *name = profile__frame(p, leaf)->name, *pfx = "[GPU_Kernel]";
	char buf[4096];

	if (*slot)
		return (uint32_t)(*slot - 1);
	if (!strncmp(name, pfx, strlen(pfx)))
		name += strlen(pfx);
	snprintf(buf, sizeof(buf), "[waits on] %s", name);
	*slot = (uint64_t)profile__intern_frame(p, FRAME_MARKER, GPU_SYNC_WAIT_MODULE, buf, 0,
						false) + 1;
	return (uint32_t)(*slot - 1);
}

/* The calls known only from a GPU_SYNC record (no API record: recorded with
 * XPU_CUPTI_API_ACTIVITY=none): blocking types only, and not when the
 * join's stack names a call that does not block (a query). */
static void sw__calls_from_syncs(struct gpu_sync_wait *sw, const struct session *s)
{
	const struct profile *p = &s->profile;

	for (size_t i = 0; i < sw->nr_events; i++) {
		const struct sw_event *e = &sw->events[i];
		static const enum sw_scope by_type[5] = { SW_NONE, SW_EVENT, SW_NONE, SW_STREAM,
							  SW_DEVICE };
		enum sw_scope scope = e->type < 5 ? by_type[e->type] : SW_NONE;
		const uint32_t *fr;
		size_t n;
		uint64_t key;

		/* id 0 is no id: such records are never one call */
		if (scope == SW_NONE || !sw__key(e->pid, e->corr, &key) ||
		    (e->corr && u64map__find(&sw->call_idx, key)))
			continue;
		fr = profile__stack(p, e->cpu_stack, &n);
		if (n && profile__frame(p, fr[n - 1])->kind == FRAME_GPU_API &&
		    gpu_sync_wait__scope(profile__frame(p, fr[n - 1])->name) == SW_NONE)
			continue;
		if (e->corr)
			*u64map__slot(&sw->call_idx, key) = sw->nr_calls + 1;
		sw->calls = xgrow(sw->calls, &sw->calls_cap, sw->nr_calls + 1, sizeof(*sw->calls));
		sw->calls[sw->nr_calls++] = (struct sw_call){
			.start = e->start, .end = e->end, .corr = e->corr, .pid = e->pid,
			.tid = e->tid, .stack = e->cpu_stack, .scope = scope, .stream = e->stream };
		sw->st.from_sync_records++;
	}
}

/* The CPU stack + API frame of an API-record call: its correlation record,
 * else the join's stack for the sync or copy record of the same id (found by
 * time, or unknown), else "[unknown CPU stack];API". */
static void sw__call_stack(struct gpu_sync_wait *sw, struct session *s, struct sw_call *c)
{
	struct profile *p = &s->profile;
	const uint64_t *v;
	uint32_t tid;
	uint64_t key;

	if (gpu_join__call_stack(gpu_join__find(s), c->pid, c->corr, &c->stack, &tid))
		return;
	if (sw__key(c->pid, c->corr, &key) && (v = u64map__find(&sw->act_stack, key))) {
		c->stack = (uint32_t)((*v >> 32) - 1);
		return;
	}
	c->stack = sw__append(sw, p, sw__append(sw, p, 0, gpu__unknown_frame(p)),
			      gpu__api_frame(p, c->domain, c->cbid));
}

/* The (device, stream) a call waits on; SW_ANY where unknown. */
static void sw__scope_of(const struct gpu_sync_wait *sw, const struct sw_call *c,
			 uint32_t *device, uint32_t *stream)
{
	const uint64_t *slot;
	const struct sw_sync *y = NULL;
	uint64_t key;

	*device = *stream = SW_ANY;
	if (!sw__key(c->pid, c->corr, &key))
		return;
	slot = c->corr ? u64map__find(&sw->sync_idx, key) : NULL;
	if (slot)
		y = &sw->syncs[*slot - 1];
	switch (c->scope) {
	case SW_STREAM:
		if (!c->domain)		/* known from its own sync record */
			*stream = c->stream;
		else if (y)
			*stream = y->stream;
		break;
	case SW_DEVICE:
		if (y && (slot = u64map__find(&sw->ctx_dev, (uint64_t)c->pid << 32 | y->context)))
			*device = (uint32_t)(*slot - 1);
		break;
	case SW_COPY:
		if ((slot = u64map__find(&sw->copy_dev, key)))
			*device = (uint32_t)(*slot - 1);
		break;
	default:
		break;
	}
}

static void sw__api_stat(struct gpu_sync_wait *sw, const struct sw_call *c)
{
	uint64_t *slot = u64map__slot(&sw->api_idx, (uint64_t)c->domain << 32 | c->cbid);

	if (!*slot) {
		sw->st.apis = xgrow(sw->st.apis, &sw->apis_cap, sw->st.nr_apis + 1,
				    sizeof(*sw->st.apis));
		sw->st.apis[sw->st.nr_apis++] = (struct gpu_sync_api_stat){ c->domain, c->cbid };
		*slot = sw->st.nr_apis;
	}
	sw->st.apis[*slot - 1].calls++;
	sw->st.apis[*slot - 1].ns += c->end - c->start;
}

/* Splits one call's [start, end) among the work in scope: each instant
 * equally among the pieces of work running then, "nothing" when none is. */
static void sw__charge(struct gpu_sync_wait *sw, struct session *s, const struct sw_call *c,
		       const struct sw_work *lo, const struct sw_work *hi, uint64_t max_dur)
{
	struct profile *p = &s->profile;
	uint32_t device, stream, comm = machine__comm(&s->machine, c->pid, c->tid ? c->tid : c->pid,
						      c->start);
	size_t nin = 0, np = 0, lo_i = 0, hi_i = (size_t)(hi - lo);
	uint64_t from = c->start > max_dur ? c->start - max_dur : 0, prev = c->start;
	double nothing = 0;

	if (!filter__match(&s->filter, c->pid, c->tid, c->start, profile__str(p, comm))) {
		sw->st.filtered++;
		return;
	}
	sw__scope_of(sw, c, &device, &stream);
	while (lo_i < hi_i) {		/* the first work starting at or after from */
		size_t mid = lo_i + (hi_i - lo_i) / 2;

		if (lo[mid].start < from)
			lo_i = mid + 1;
		else
			hi_i = mid;
	}
	for (const struct sw_work *w = lo + lo_i; w < hi && w->start < c->end; w++) {
		if (w->end <= c->start || (device != SW_ANY && w->device != device) ||
		    (stream != SW_ANY && w->stream != stream))
			continue;
		if (nin + 1 > sw->in_cap) {
			size_t cap = sw->in_cap;

			sw->in = xgrow(sw->in, &cap, nin + 1, sizeof(*sw->in));
			sw->charge = xrealloc(sw->charge, cap * sizeof(*sw->charge));
			sw->on = xrealloc(sw->on, cap * sizeof(*sw->on));
			sw->in_cap = cap;
		}
		sw->in[nin] = (uint32_t)(w - lo);
		sw->charge[nin] = 0;
		sw->on[nin++] = false;
	}
	sw->pts = xgrow(sw->pts, &sw->pts_cap, 2 * nin + 1, sizeof(*sw->pts));
	for (size_t i = 0; i < nin; i++) {
		const struct sw_work *w = &lo[sw->in[i]];

		sw->pts[np++] = (struct sw_point){ w->start > c->start ? w->start : c->start,
						   (uint32_t)i, false };
		sw->pts[np++] = (struct sw_point){ w->end < c->end ? w->end : c->end,
						   (uint32_t)i, true };
	}
	xpu_qsort(sw->pts, np, sizeof(*sw->pts), point__cmp);
	for (size_t i = 0, running = 0; i <= np; i++) {
		uint64_t x = i < np ? sw->pts[i].x : c->end;

		if (x > prev) {
			double dt = (double)(x - prev);

			if (!running)
				nothing += dt;
			for (size_t k = 0; running && k < nin; k++)
				if (sw->on[k])
					sw->charge[k] += dt / (double)running;
			prev = x;
		}
		if (i < np) {
			bool *on = &sw->on[sw->pts[i].w];

			if (!sw->pts[i].end && !*on)
				running++;
			else if (sw->pts[i].end && *on)
				running--;
			*on = !sw->pts[i].end;
		}
	}
	for (size_t i = 0; i < nin; i++)
		if (sw->charge[i] > 0) {
			sw->st.work_ns += sw->charge[i];
			profile__add(p, sw__append(sw, p, c->stack,
						   sw__waits_frame(sw, p, lo[sw->in[i]].leaf)),
				     c->pid, c->tid, comm, ORIGIN_SYNC_WAIT,
				     sw->charge[i] * s->sample_freq / 1e9);
		}
	if (nothing > 0) {
		sw->st.idle_ns += nothing;
		profile__add(p, sw__append(sw, p, c->stack,
					   profile__intern_frame(p, FRAME_MARKER, GPU_SYNC_WAIT_MODULE,
								 GPU_SYNC_WAIT_NOTHING, 0, false)),
			     c->pid, c->tid, comm, ORIGIN_SYNC_WAIT, nothing * s->sample_freq / 1e9);
	}
	sw->st.calls++;
	sw->st.ns += c->end - c->start;
	sw__api_stat(sw, c);
}

static int sw__finish(struct session *s, void *priv)
{
	struct gpu_sync_wait *sw = priv;
	size_t w0 = 0, w1 = 0;
	uint64_t max_dur = 0;
	const struct sw_call *outer = NULL;

	for (size_t i = 0; i < sw->nr_calls; i++)
		sw__call_stack(sw, s, &sw->calls[i]);
	sw__calls_from_syncs(sw, s);
	xpu_qsort(sw->calls, sw->nr_calls, sizeof(*sw->calls), call__cmp);
	xpu_qsort(sw->work, sw->nr_work, sizeof(*sw->work), work__cmp);
	for (size_t i = 0; i < sw->nr_calls; i++) {
		const struct sw_call *c = &sw->calls[i];

		/* a driver call nested in a runtime one with its own id is the
		 * same wait: keep the outermost */
		if (outer && outer->pid == c->pid && outer->tid == c->tid &&
		    c->start >= outer->start && c->end <= outer->end) {
			sw->st.nested++;
			continue;
		}
		outer = c;
		if (w0 == w1 || sw->work[w0].pid != c->pid) {	/* the process's work */
			while (w0 < sw->nr_work && sw->work[w0].pid < c->pid)
				w0++;
			max_dur = 0;
			for (w1 = w0; w1 < sw->nr_work && sw->work[w1].pid == c->pid; w1++)
				if (sw->work[w1].end - sw->work[w1].start > max_dur)
					max_dur = sw->work[w1].end - sw->work[w1].start;
		}
		sw__charge(sw, s, c, sw->work + w0, sw->work + w1, max_dur);
	}
	xpu_qsort(sw->st.apis, sw->st.nr_apis, sizeof(*sw->st.apis), api_stat__cmp);
	xpu_qsort(sw->st.unmatched_apis, sw->st.nr_unmatched_apis,
		  sizeof(*sw->st.unmatched_apis), frame_count__cmp);
	return 0;
}

/* ---- --header ------------------------------------------------------------------------------ */

int gpu_sync_wait__header_prepare(struct session *s)
{
	if (gpu_join__find(s))
		gpu_sync_wait__attach(s);
	return 0;
}

static double sw__pct(double part, double total)
{
	return total > 0 ? 100.0 * part / total : 0;
}

int gpu_sync_wait__header(const struct session *s, FILE *fp)
{
	const struct gpu_sync_wait *sw = gpu_sync_wait__find(s);
	const struct gpu_sync_wait_stats *st;
	static const char *const types[5] = { "Unknown", "EventSynchronize", "StreamWaitEvent",
					      "StreamSynchronize", "ContextSynchronize" };

	if (!sw || (!sw->st.calls && !sw->st.sync_records && !sw->st.filtered))
		return 0;
	st = &sw->st;
	fprintf(fp, "#\n# sync waits (time in synchronizing CUDA calls, by what the GPU ran "
		"meanwhile):\n");
	fprintf(fp, "#   %llu calls, %.3f ms: on GPU work %.3f ms (%.1f%%), GPU idle %.3f ms "
		"(%.1f%%)", (unsigned long long)st->calls, (double)st->ns / 1e6, st->work_ns / 1e6,
		sw__pct(st->work_ns, (double)st->ns), st->idle_ns / 1e6,
		sw__pct(st->idle_ns, (double)st->ns));
	if (st->filtered)
		fprintf(fp, ", %llu filtered out", (unsigned long long)st->filtered);
	fprintf(fp, "\n");
	for (size_t i = 0; i < st->nr_apis; i++) {
		const char *name = gpu_cbid__name(st->apis[i].domain, st->apis[i].cbid);

		fprintf(fp, "#   %-28s %8llu calls %12.3f ms\n",
			name ? name : st->apis[i].domain ? "?" : "(from sync records)",
			(unsigned long long)st->apis[i].calls, (double)st->apis[i].ns / 1e6);
	}
	if (st->nested)
		fprintf(fp, "#   nested calls (counted once, in the outer call): %llu\n",
			(unsigned long long)st->nested);
	if (!st->sync_records)
		return ferror(fp) ? -EIO : 0;
	fprintf(fp, "#   sync records without a CPU stack: %llu of %llu",
		(unsigned long long)st->sync_unmatched, (unsigned long long)st->sync_records);
	if (st->sync_unmatched) {
		const char *sep = " (";

		for (int t = 0; t < 5; t++)
			if (st->unmatched_type[t]) {
				fprintf(fp, "%s%s %llu", sep, types[t],
					(unsigned long long)st->unmatched_type[t]);
				sep = ", ";
			}
		fprintf(fp, "); correlation id 0: %llu; API: ",
			(unsigned long long)st->unmatched_corr0);
		for (size_t i = 0; i < st->nr_unmatched_apis; i++)
			fprintf(fp, "%s %llu, ",
				profile__frame(&s->profile, st->unmatched_apis[i].frame)->name,
				(unsigned long long)st->unmatched_apis[i].count);
		fprintf(fp, "no API record %llu", (unsigned long long)st->unmatched_no_api);
	}
	fprintf(fp, "\n");
	return ferror(fp) ? -EIO : 0;
}
