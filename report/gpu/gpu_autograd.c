// SPDX-License-Identifier: MIT
/* Backward launches under their forward code: see gpu_autograd.h. */
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu_autograd.h"
#include "report/profile/profile.h"
#include "report/unwind/pyframes.h"
#include "report/session/session.h"

#define AG_EVAL_NAME "torch::autograd::Engine::evaluate_function("

struct ag_node {
	uint32_t pid;
	uint16_t nr;			/* Python frames, innermost first */
	struct xpu_py_frame *frames;
};

struct ag_eval {
	uint64_t time, seq;
};

struct ag_thread {
	struct ag_eval *evals;
	size_t nr, cap;
};

void gpu_autograd__init(struct gpu_autograd *a)
{
	memset(a, 0, sizeof(*a));
	bmap__init(&a->nodes);
	u64map__init(&a->threads);
	u64map__init(&a->eval_frames);
	u64map__init(&a->eval_at);
}

void gpu_autograd__exit(struct gpu_autograd *a)
{
	size_t it = 0;
	uint64_t k, v;

	while (u64map__next(&a->threads, &it, &k, &v)) {
		struct ag_thread *t = (struct ag_thread *)(uintptr_t)v;

		free(t->evals);
		free(t);
	}
	for (size_t i = 0; i < a->nr_node; i++)
		free(a->node[i].frames);
	free(a->node);
	free(a->py);
	bmap__exit(&a->nodes, NULL);
	u64map__exit(&a->threads);
	u64map__exit(&a->eval_frames);
	u64map__exit(&a->eval_at);
}

struct ag_node_key {
	uint64_t seq;
	uint32_t pid, zero;
};

static void ag__node(struct gpu_autograd *a, const struct xpu_autograd *r)
{
	struct ag_node_key key = { r->seq, r->pid, 0 };
	struct xpu_py_stack st;
	struct ag_node *n;
	bool found;
	void **slot = bmap__slot(&a->nodes, &key, sizeof(key), &found);

	if (found)
		return;		/* another output of the same node */
	a->node = xgrow(a->node, &a->node_cap, a->nr_node + 1, sizeof(*a->node));
	n = &a->node[a->nr_node++];
	*slot = (void *)(uintptr_t)a->nr_node;
	*n = (struct ag_node){ .pid = r->pid };
	a->stats.nodes++;
	/* its forward op's Python frames: the PY_STACK right before, of its
	 * thread and time */
	if (a->py_len < sizeof(st))
		return;
	memcpy(&st, a->py, sizeof(st));
	if (st.tid != r->tid || st.time != r->time || !st.nr_frames ||
	    (a->py_len - sizeof(st)) / sizeof(struct xpu_py_frame) < st.nr_frames)
		return;
	n->nr = st.nr_frames;
	n->frames = xmalloc(st.nr_frames * sizeof(*n->frames));
	memcpy(n->frames, a->py + sizeof(st), st.nr_frames * sizeof(*n->frames));
	a->stats.nodes_py++;
}

static void ag__eval(struct gpu_autograd *a, const struct xpu_autograd *r)
{
	uint64_t *slot = u64map__slot(&a->threads, (uint64_t)r->pid << 32 | r->tid);
	struct ag_thread *t = (struct ag_thread *)(uintptr_t)*slot;

	if (!t) {
		t = xzalloc(sizeof(*t));
		*slot = (uint64_t)(uintptr_t)t;
	}
	t->evals = xgrow(t->evals, &t->cap, t->nr + 1, sizeof(*t->evals));
	t->evals[t->nr++] = (struct ag_eval){ r->time, r->seq };
	a->stats.evals++;
}

void gpu_autograd__pass1(struct gpu_autograd *a, const struct xpu_record *rec)
{
	struct xpu_autograd r;

	if (rec->type == XPU_REC_PY_STACK) {
		a->py = xgrow(a->py, &a->py_cap, rec->body_size, 1);
		memcpy(a->py, rec->body, rec->body_size);
		a->py_len = rec->body_size;
		return;
	}
	if (rec->type != XPU_REC_AUTOGRAD || rec->body_size < sizeof(r))
		return;
	memcpy(&r, rec->body, sizeof(r));
	if (r.kind == XPU_AUTOGRAD_NODE)
		ag__node(a, &r);
	else if (r.kind == XPU_AUTOGRAD_EVAL)
		ag__eval(a, &r);
	a->py_len = 0;		/* a PY_STACK belongs to the record right after it */
}

static int ag_eval__cmp(const void *x, const void *y)
{
	const struct ag_eval *a = x, *b = y;

	return a->time < b->time ? -1 : a->time > b->time;
}

void gpu_autograd__prepare(struct gpu_autograd *a)
{
	size_t it = 0;
	uint64_t k, v;

	free(a->py);
	a->py = NULL;
	a->py_len = a->py_cap = 0;
	while (u64map__next(&a->threads, &it, &k, &v)) {
		struct ag_thread *t = (struct ag_thread *)(uintptr_t)v;

		xpu_qsort(t->evals, t->nr, sizeof(*t->evals), ag_eval__cmp);
	}
}

/* Whether frame id is torch::autograd::Engine::evaluate_function (cached). */
static bool ag__is_eval(struct gpu_autograd *a, const struct profile *p, uint32_t id)
{
	uint64_t *slot = u64map__slot(&a->eval_frames, id);

	if (!*slot) {
		const struct frame *f = profile__frame(p, id);

		*slot = 1 + (f->kind == FRAME_CPU_USER &&
			     !strncmp(f->name, AG_EVAL_NAME, strlen(AG_EVAL_NAME)));
	}
	return *slot == 2;
}

/* The node thread (pid, tid) began last at or before time, or NULL. */
static const struct ag_eval *ag__eval_at(struct gpu_autograd *a, uint32_t pid, uint32_t tid,
					 uint64_t time)
{
	uint64_t *slot = u64map__find(&a->threads, (uint64_t)pid << 32 | tid);
	const struct ag_thread *t;
	size_t lo = 0, hi;

	if (!slot)
		return NULL;
	t = (const struct ag_thread *)(uintptr_t)*slot;
	hi = t->nr;
	while (lo < hi) {		/* first eval after time */
		size_t mid = lo + (hi - lo) / 2;

		if (t->evals[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->evals[lo - 1] : NULL;
}

/* The node thread (pid, tid) was running at time, if its forward op had
 * Python frames; else NULL, with why in *no_eval or *no_node. */
static const struct ag_node *ag__node_at(struct gpu_autograd *a, uint32_t pid, uint32_t tid,
					 uint64_t time, uint64_t *no_eval, uint64_t *no_node)
{
	const struct ag_eval *ev = ag__eval_at(a, pid, tid, time);
	struct ag_node_key key;
	void *node;

	if (!ev) {
		(*no_eval)++;
		return NULL;
	}
	key = (struct ag_node_key){ ev->seq, pid, 0 };
	if (ev->seq == XPU_AUTOGRAD_SEQ_UNKNOWN || !(node = bmap__find(&a->nodes, &key, sizeof(key)))) {
		(*no_node)++;
		return NULL;
	}
	/* a node made by C++ code: its own stack is all there is */
	return a->node[(uintptr_t)node - 1].nr ? &a->node[(uintptr_t)node - 1] : NULL;
}

/* The "[autograd backward]" frame. */
static uint32_t ag__marker(struct gpu_autograd *a, struct profile *p)
{
	if (!a->marker)
		a->marker = profile__intern_frame(p, FRAME_MARKER, "[autograd]", "[autograd backward]", 0,
						  false) + 1;
	return a->marker - 1;
}

uint32_t gpu_autograd__stack(struct gpu_autograd *a, struct session *s, uint32_t pid, uint32_t tid,
			     uint64_t time, uint32_t base)
{
	struct profile *p = &s->profile;
	const struct ag_node *n;
	const uint32_t *fr;
	uint32_t *out, id, marker;
	uint64_t *slot;
	size_t nr, at, k = 0;

	if (!a->stats.evals || !base)
		return base;
	fr = profile__stack(p, base, &nr);
	slot = u64map__slot(&a->eval_at, base);	/* base -> its innermost evaluate_function + 1 */
	if (!*slot) {
		for (at = nr; at-- > 0 && !ag__is_eval(a, p, fr[at]); )
			;
		*slot = at < nr ? at + 2 : 1;
	}
	if (*slot == 1)
		return base;	/* not a backward op's launch */
	at = (size_t)*slot - 2;
	a->stats.launches++;
	if (!(n = ag__node_at(a, pid, tid, time, &a->stats.no_eval, &a->stats.no_node)))
		return base;
	marker = ag__marker(a, p);
	out = xmalloc((n->nr + 1 + nr - at) * sizeof(*out));
	for (size_t i = n->nr; i-- > 0; ) {
		uint32_t loc;

		out[k++] = pyframes__frame(&s->py, p, n->pid, &n->frames[i], &loc);
	}
	out[k++] = marker;
	fr = profile__stack(p, base, &nr);	/* interning frames may have moved it */
	memcpy(out + k, fr + at, (nr - at) * sizeof(*out));
	k += nr - at;
	id = profile__intern_stack(p, out, k);
	free(out);
	a->stats.moved++;
	return id;
}

/*
 * The same for CPU samples and off-CPU stacks (a session stack filter,
 * registered after pass 1 when the trace has EVAL records): the backward
 * thread's time in a node goes under the node's forward code too. A launch
 * stack moved by gpu_autograd__stack() has the marker already: left alone.
 */
static size_t gpu_autograd__filter(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				   uint32_t *frames, size_t n, size_t cap, void *priv)
{
	struct gpu_autograd *a = priv;
	const struct profile *p = &s->profile;
	const struct ag_node *n_;
	uint64_t no_eval = 0, no_node = 0;	/* counted for launches only */
	size_t at, npy, skip, dst;

	/* the node the thread ran last first (a thread that never ran one, or
	 * one made by C++ code: nothing to look for), then the frames */
	if (!(n_ = ag__node_at(a, pid, tid, time, &no_eval, &no_node)))
		return n;
	for (at = n; at-- > 0 && !ag__is_eval(a, p, frames[at]); )
		;
	if (at >= n)
		return n;
	for (size_t i = 0; a->marker && i < at; i++)
		if (frames[i] == a->marker - 1)
			return n;
	/* room: the outermost Python frames go first */
	npy = n_->nr;
	skip = npy + 1 + (n - at) > cap ? npy + 1 + (n - at) - cap : 0;
	if (skip >= npy)
		return n;	/* not one forward frame would fit */
	dst = npy - skip + 1;
	memmove(frames + dst, frames + at, (n - at) * sizeof(*frames));
	for (size_t i = 0; i + skip < npy; i++) {
		uint32_t loc;

		frames[i] = pyframes__frame(&s->py, &s->profile, n_->pid,
					    &n_->frames[npy - 1 - skip - i], &loc);
	}
	frames[dst - 1] = ag__marker(a, &s->profile);
	a->stats.cpu_moved++;
	return dst + (n - at);
}

void gpu_autograd__add_filter(struct gpu_autograd *a, struct session *s)
{
	if (a->stats.evals)
		session__add_stack_filter(s, gpu_autograd__filter, a);
}
