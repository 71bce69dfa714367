// SPDX-License-Identifier: MIT
/* The GPU memory tool: the trace's memory records into the live-set
 * computation and the profile (gpu_memory_tool.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "format/record_view.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_memory_tool.h"
#include "report/unwind/callchain.h"

struct gm_key {				/* an XPU_API_ALLOC stack: (pid, its id) */
	uint64_t id;
	uint32_t pid, pad;
};

struct gm_stack {			/* what the key's GPU_CORR resolved to */
	uint32_t stack, tid;
	bool resolved;
};

struct gm_oom {
	struct xpu_gpu_oom r;
};

struct gpu_memory {
	struct session_tool tool;
	struct gpu_memory_opts o;
	struct gpu_mem m;
	uint64_t *corr;			/* per event added (before sorting): CUDA-level:
					 * the API's correlation id; block: its stack id */
	size_t corr_cap;
	struct bmap stacks;		/* struct gm_key -> struct gm_stack * */
	struct gm_oom *ooms;
	size_t nr_ooms, ooms_cap;
	uint64_t bad;			/* records with values out of range */
	uint64_t records;		/* memory records read */
	bool done;
	struct u64map dev_frames;	/* device -> frame + 1 */
	struct u64map memo;		/* profile__prepend's */
};

static int gpu_memory__record(struct session *s, const struct xpu_record *rec, int pass,
			      void *priv);
static int gpu_memory__pass1_done(struct session *s, void *priv);
static int gpu_memory__finish(struct session *s, void *priv);
static void gpu_memory__delete(void *priv);

struct gpu_memory *gpu_memory__find(const struct session *s)
{
	return session__tool(s, GPU_MEMORY_TOOL);
}

struct gpu_memory *gpu_memory__attach(struct session *s, const struct gpu_memory_opts *o)
{
	struct gpu_memory *gm = gpu_memory__find(s);

	if (gm)
		return gm;
	/* after the join: its finish resolves the API stacks ours reads */
	BUG_ON(!gpu_join__find(s));
	gm = xzalloc(sizeof(*gm));
	if (o)
		gm->o = *o;
	gm->tool = (struct session_tool){ .name = GPU_MEMORY_TOOL, .record = gpu_memory__record,
					  .pass1_done = gpu_memory__pass1_done,
					  .finish = gpu_memory__finish, .exit = gpu_memory__delete,
					  .priv = gm };
	gpu_mem__init(&gm->m);
	bmap__init(&gm->stacks);
	u64map__init(&gm->dev_frames);
	u64map__init(&gm->memo);
	session__add_tool(s, &gm->tool);
	return gm;
}

static void gpu_memory__delete(void *priv)
{
	struct gpu_memory *gm = priv;

	gpu_mem__exit(&gm->m);
	free(gm->corr);
	free(gm->ooms);
	bmap__exit(&gm->stacks, free);
	u64map__exit(&gm->dev_frames);
	u64map__exit(&gm->memo);
	free(gm);
}

bool gpu_memory__active(const struct gpu_memory *gm)
{
	return gm && gm->records;
}

const struct gpu_mem *gpu_memory__result(const struct gpu_memory *gm)
{
	return gm && gm->done ? &gm->m : NULL;
}

uint64_t gpu_memory__bad_records(const struct gpu_memory *gm)
{
	return gm ? gm->bad : 0;
}

const struct gpu_memory_opts *gpu_memory__opts(const struct gpu_memory *gm)
{
	return &gm->o;
}

/* An XPU_API_ALLOC stack wanted (pass 1). */
static void gpu_memory__want(struct gpu_memory *gm, uint32_t pid, uint64_t id)
{
	struct gm_key k = { .id = id, .pid = pid };
	bool found;
	void **slot;

	if (!id)
		return;
	slot = bmap__slot(&gm->stacks, &k, sizeof(k), &found);
	if (!found)
		*slot = xzalloc(sizeof(struct gm_stack));
}

static void gpu_memory__add(struct gpu_memory *gm, const struct gpu_mem_ev *ev, uint64_t corr)
{
	gm->corr = xgrow(gm->corr, &gm->corr_cap, gm->m.nr_evs + 1, sizeof(*gm->corr));
	gm->corr[gm->m.nr_evs] = corr;
	gpu_mem__add(&gm->m, ev);
}

static void gpu_memory__block(struct gpu_memory *gm, const struct xpu_record *rec)
{
	struct xpu_gpu_block b;

	memcpy(&b, rec->body, sizeof(b));
	if ((b.op != XPU_BLOCK_MALLOC && b.op != XPU_BLOCK_FREE) ||
	    (b.op == XPU_BLOCK_MALLOC && (!b.size || b.device < 0))) {
		gm->bad++;
		return;
	}
	if (b.op == XPU_BLOCK_MALLOC)
		gpu_memory__want(gm, b.pid, b.stack_id);
	gpu_memory__add(gm, &(struct gpu_mem_ev){
		.time = b.time, .addr = b.ptr, .bytes = b.size, .pid = b.pid, .tid = b.tid,
		.device = b.device, .layer = GPU_MEM_BLOCK,
		.op = b.op == XPU_BLOCK_MALLOC ? GPU_MEM_ALLOC : GPU_MEM_FREE,
	}, b.op == XPU_BLOCK_MALLOC ? b.stack_id : 0);
}

static void gpu_memory__cuda(struct gpu_memory *gm, const struct xpu_gpu_memory *r)
{
	if ((r->op != XPU_MEMORY_ALLOC && r->op != XPU_MEMORY_RELEASE) ||
	    r->memory_kind >= GPU_MEM_NR_KINDS || (r->op == XPU_MEMORY_ALLOC && !r->bytes) ||
	    r->device > INT32_MAX) {
		gm->bad++;
		return;
	}
	gpu_memory__add(gm, &(struct gpu_mem_ev){
		.time = r->time, .addr = r->address, .bytes = r->bytes, .pid = r->pid,
		.device = (int32_t)r->device, .layer = GPU_MEM_CUDA, .kind = r->memory_kind,
		.op = r->op == XPU_MEMORY_ALLOC ? GPU_MEM_ALLOC : GPU_MEM_FREE,
	}, r->correlation_id);
}

static void gpu_memory__pass1(struct gpu_memory *gm, const struct xpu_record *rec)
{
	switch (rec->type) {
	case XPU_REC_GPU_BLOCK:
		gpu_memory__block(gm, rec);
		break;
	case XPU_REC_GPU_MEMORY: {
		struct xpu_gpu_memory r;

		memcpy(&r, rec->body, sizeof(r));
		gpu_memory__cuda(gm, &r);
		break;
	}
	case XPU_REC_GPU_MEM_STATE: {
		struct xpu_gpu_mem_state st;

		memcpy(&st, rec->body, sizeof(st));
		if (st.free > st.total || st.used_before > st.total) {
			gm->bad++;
			break;
		}
		gpu_mem__baseline(&gm->m, st.pid, st.device, st.time, st.used_before,
				  st.flags & XPU_MEM_STATE_ATTACH);
		break;
	}
	case XPU_REC_GPU_OOM: {
		struct gm_oom o;

		memcpy(&o.r, rec->body, sizeof(o.r));
		if (o.r.source != XPU_OOM_CUDA && o.r.source != XPU_OOM_ALLOCATOR) {
			gm->bad++;
			break;
		}
		if (o.r.source == XPU_OOM_ALLOCATOR)
			gpu_memory__want(gm, o.r.pid, o.r.correlation_id);
		gm->ooms = xgrow(gm->ooms, &gm->ooms_cap, gm->nr_ooms + 1, sizeof(*gm->ooms));
		gm->ooms[gm->nr_ooms++] = o;
		break;
	}
	default:
		return;
	}
	gm->records++;
}

/* An XPU_API_ALLOC stack that a block or OOM names: resolved here. */
static void gpu_memory__alloc_stack(struct gpu_memory *gm, struct session *s,
				    const struct xpu_record *rec)
{
	uint32_t frames[CALLCHAIN_MAX];
	struct xpu_stack_view v;
	struct xpu_gpu_corr c;
	struct gm_stack *st;
	struct gm_key k;
	size_t n, off = offsetof(struct xpu_gpu_corr, stack);

	memcpy(&c, rec->body, sizeof(c));
	if (c.domain != XPU_API_ALLOC)
		return;
	k = (struct gm_key){ .id = c.correlation_id, .pid = c.pid };
	st = bmap__find(&gm->stacks, &k, sizeof(k));
	if (!st || st->resolved)
		return;
	if (xpu_stack__parse((const uint8_t *)rec->body + off, rec->body_size - off, &v)) {
		gm->bad++;
		return;
	}
	n = callchain__resolve(&s->callchain, c.pid, c.tid, c.time, &v, frames, CALLCHAIN_MAX,
			       NULL);
	st->stack = profile__intern_stack(&s->profile, frames, n);
	st->stack = session__filter_stack_id(s, c.pid, c.tid, c.time, st->stack);
	st->tid = c.tid;
	st->resolved = true;
}

static int gpu_memory__record(struct session *s, const struct xpu_record *rec, int pass,
			      void *priv)
{
	if (pass == 1)
		gpu_memory__pass1(priv, rec);
	else if (rec->type == XPU_REC_GPU_CORR)
		gpu_memory__alloc_stack(priv, s, rec);
	return 0;
}

static int gpu_memory__pass1_done(struct session *s, void *priv)
{
	struct gpu_memory *gm = priv;
	struct gpu_join *g = gpu_join__find(s);

	for (size_t i = 0; i < gm->m.nr_evs; i++)
		if (gm->m.evs[i].layer == GPU_MEM_CUDA && gm->m.evs[i].op == GPU_MEM_ALLOC &&
		    gm->corr[i])
			gpu_join__want_corr(g, gm->m.evs[i].pid, gm->corr[i]);
	for (size_t i = 0; i < gm->nr_ooms; i++)
		if (gm->ooms[i].r.source == XPU_OOM_CUDA)
			gpu_join__want_corr(g, gm->ooms[i].r.pid, gm->ooms[i].r.correlation_id);
	return 0;
}

/* The stack of an allocation: its block's ALLOC stack or its API call's;
 * "[unknown CPU stack]" when the trace has neither. */
static uint32_t gpu_memory__stack_of(struct gpu_memory *gm, struct session *s, uint32_t pid,
				     enum gpu_mem_layer layer, uint64_t id, uint32_t *tid)
{
	struct gm_key k = { .id = id, .pid = pid };
	const struct gm_stack *st;
	uint32_t stack, unknown;

	if (layer == GPU_MEM_BLOCK) {
		st = id ? bmap__find(&gm->stacks, &k, sizeof(k)) : NULL;
		if (st && st->resolved && st->stack) {
			if (!*tid)
				*tid = st->tid;
			return st->stack;
		}
	} else if (id && gpu_join__call_stack(gpu_join__find(s), pid, id, &stack, tid)) {
		return stack;
	}
	unknown = gpu__unknown_frame(&s->profile);
	return profile__intern_stack(&s->profile, &unknown, 1);
}

uint32_t gpu_memory__device_frame(struct session *s, uint32_t device)
{
	struct gpu_memory *gm = gpu_memory__find(s);
	uint64_t *slot = u64map__slot(&gm->dev_frames, device);
	char name[48];

	if (!*slot) {
		snprintf(name, sizeof(name), "[GPU memory dev%u]", device);
		*slot = (uint64_t)profile__intern_frame(&s->profile, FRAME_MARKER,
							GPU_MEMORY_MODULE, name, 0, false) + 1;
	}
	return (uint32_t)(*slot - 1);
}

/* The query of the options and the session's --time window. */
static void gpu_memory__query(const struct gpu_memory *gm, const struct session *s,
			      struct gpu_mem_query *q)
{
	const struct filter *f = &s->filter;

	*q = (struct gpu_mem_query){ .mode = gm->o.mode, .end = s->last_time };
	if (f->has_start)
		q->start = f->time_base + (uint64_t)(f->start * 1e9);
	if (f->has_end && f->time_base + (uint64_t)(f->end * 1e9) < q->end)
		q->end = f->time_base + (uint64_t)(f->end * 1e9);
	if (gm->o.at_given) {
		q->mode = GPU_MEM_AT;
		q->at = f->time_base + (uint64_t)(gm->o.at * 1e9);
	}
	q->oom_first = q->mode == GPU_MEM_PEAK && !gm->o.mode_given;
}

/* The computed rows as profile entries: bytes, a count per block. */
static void gpu_memory__entries(struct gpu_memory *gm, struct session *s)
{
	for (size_t i = 0; i < gm->m.nr_rows; i++) {
		const struct gpu_mem_row *r = &gm->m.rows[i];
		const struct gpu_mem_space *sp = &gm->m.spaces[r->space];
		uint32_t comm = machine__comm(&s->machine, sp->pid, r->tid ? r->tid : sp->pid,
					      r->oldest);
		uint32_t stack;

		if (!filter__match_task(&s->filter, sp->pid, r->tid, FILTER_NO_TIME) ||
		    !filter__match_comm(&s->filter, profile__str(&s->profile, comm)) ||
		    !filter__match_device(&s->filter, sp->device))
			continue;
		stack = profile__prepend(&s->profile, &gm->memo,
					 gpu_memory__device_frame(s, sp->device), r->stack);
		profile__add_n(&s->profile, stack, sp->pid, r->tid, comm, ORIGIN_GPU_MEM,
			       (double)r->bytes, r->count);
	}
}

static int gpu_memory__finish(struct session *s, void *priv)
{
	struct gpu_memory *gm = priv;
	struct gpu_mem_query q;

	if (!gm->records) {
		gm->done = true;
		return 0;
	}
	for (size_t i = 0; i < gm->m.nr_evs; i++) {
		struct gpu_mem_ev *ev = &gm->m.evs[i];

		if (ev->op == GPU_MEM_ALLOC)
			ev->stack = gpu_memory__stack_of(gm, s, ev->pid, ev->layer, gm->corr[i],
							 &ev->tid);
	}
	for (size_t i = 0; i < gm->nr_ooms; i++) {
		const struct xpu_gpu_oom *o = &gm->ooms[i].r;
		uint32_t tid = o->tid;
		uint32_t stack = gpu_memory__stack_of(gm, s, o->pid, o->source == XPU_OOM_CUDA ?
						      GPU_MEM_CUDA : GPU_MEM_BLOCK,
						      o->correlation_id, &tid);

		gpu_mem__oom(&gm->m, o->pid, o->device, o->time, o->bytes, stack, tid);
	}
	gpu_memory__query(gm, s, &q);
	gpu_mem__compute(&gm->m, &q);
	gm->done = true;
	gpu_memory__entries(gm, s);
	return 0;
}

int gpu_memory__header_prepare(struct session *s)
{
	if (gpu_join__find(s))
		gpu_memory__attach(s, NULL);
	return 0;
}
