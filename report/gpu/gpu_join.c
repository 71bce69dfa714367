// SPDX-License-Identifier: MIT
/* The CPU->GPU join as a session tool; see report/gpu/gpu.h for the passes. The
 * joined events go to subscribers; the profile is the first of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_fatbin.h"
#include "report/gpu/gpu_pcsamp.h"
#include "report/gpu/gpu_autograd.h"
#include "report/gpu/gpu_graph.h"
#include "report/symbols/demangle.h"

/* Memory bound of the timestamp fallback: CPU samples kept (16 bytes each). */
#define GPU_TS_SAMPLES_MAX	(1u << 22)

struct gpu_act {			/* one kernel / memcpy / memset / sync */
	uint64_t corr;
	uint64_t start, end;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t pid;
	uint32_t sub;			/* kernel: name id; memcpy: copy kind; sync: type */
	uint32_t device, stream;
	uint32_t graph_id;
	uint32_t kind;			/* enum gpu_kind */
};

struct gpu_subscriber {
	gpu_event_fn fn;
	void *priv;
	bool all;			/* also work the filters leave out */
};

struct gpu_corr {			/* the first correlation record of a (pid, id) */
	uint64_t time;
	uint32_t tid;
	uint32_t stack;			/* trimmed CPU stack + API frame, when resolved */
	uint32_t raw;			/* the same before the stack filters (graph capture sites) */
	uint32_t cbid, domain;
	bool resolved, used;
};

struct gpu_api {			/* an API call interval */
	uint64_t start, end;
	uint32_t tid, cbid, domain;
};

struct gpu_ts_sample {
	uint64_t time;
	uint32_t base;			/* CPU stack below the CUDA entry point */
	uint32_t has_cut;		/* the stack did reach into CUDA */
};

struct gpu_thread {			/* timestamp fallback state of one (pid, tid) */
	uint64_t (*ivals)[2];		/* API intervals lacking a correlation record */
	size_t nr_ivals, ivals_cap;	/* sorted and merged after pass 1 */
	struct gpu_ts_sample *samples;
	size_t nr_samples, samples_cap;
};

struct gpu_device {
	struct xpu_gpu_device d;
	char *name;
};

struct gpu_join {
	struct session_tool tool;
	struct gpu_join_stats stats;
	struct gpu_subscriber *subs;
	size_t nr_subs, subs_cap;

	struct gpu_act *acts;
	size_t nr_acts, acts_cap;
	size_t nr_wanted;		/* gpu_join__want_corr: stacks to resolve anyway */
	struct gpu_corr *corrs;
	size_t nr_corrs, corrs_cap;
	struct u64map corr_idx;		/* (pid, id) -> corrs index + 1 */
	struct gpu_api *apis;
	size_t nr_apis, apis_cap;
	struct u64map api_idx;		/* (pid, id) -> apis index + 1 */
	char **strs;
	size_t nr_strs, strs_cap;
	struct u64map str_idx;		/* (pid, string id) -> strs index + 1 */
	struct u64map threads;		/* (pid, tid) -> struct gpu_thread * */
	struct gpu_device *devices;
	size_t nr_devices, devices_cap;

	struct u64map appended;		/* (stack, frame) -> stack + 1 */
	struct u64map kernel_frames;	/* (pid, name id) -> frame + 1 */
	/* pure functions of their key, worked out once (speed only) */
	struct bmap cuts;		/* resolved frames -> gpu__stack_cut() + 1 */
	struct gpu_api_names api_names;
	struct u64map api_frames;	/* domain << 32 | cbid -> gpu__api_frame() + 1 */

	struct gpu_graphs graphs;	/* graph nodes: capture sites of replayed work */
	struct gpu_autograd autograd;	/* backward launches under their forward code */
	struct gpu_pcsamp pcsamp;	/* PC samples: kernels' leaves split by line and stall */
	struct gpu_fatbin fatbin;	/* their lines where the trace has no cubin */
	struct session *s;
	bool no_autograd;		/* --no-autograd: they keep their own stacks */
	enum gpu_graph_attr graph_attr;
	bool no_graph_nodes;		/* the trace has none: launch attribution */
};

static int gpu_join__record(struct session *s, const struct xpu_record *rec, int pass,
			    void *priv);
static int gpu_join__prepare(struct session *s, void *priv);
static int gpu_join__finish(struct session *s, void *priv);
static void gpu_join__delete(void *priv);
static void gpu_event__to_profile(struct session *s, const struct gpu_event *ev, void *priv);

/* (pid, correlation id) as one map key; CUPTI's ids are 32-bit. */
static bool gpu__key(uint32_t pid, uint64_t id, uint64_t *key)
{
	if (id > UINT32_MAX)
		return false;
	*key = (uint64_t)pid << 32 | id;
	return true;
}

/* gpu_pcsamp's find_line: the device's SM architecture from its GPU_DEVICE
 * record (any when none says), then the mapped files' fat binaries */
static int gpu_join__fatbin_line(void *ctx, uint32_t pid, uint32_t device, uint64_t time,
				 const char *mangled, uint64_t pc, const char **file,
				 uint32_t *line)
{
	struct gpu_join *g = ctx;
	unsigned sm = 0;

	for (size_t i = 0; i < g->nr_devices; i++)
		if (g->devices[i].d.id == device) {
			sm = g->devices[i].d.cc_major * 10 + g->devices[i].d.cc_minor;
			break;
		}
	return gpu_fatbin__line(&g->fatbin, &g->s->machine, pid, time, sm, mangled, pc, file, line);
}

struct gpu_join *gpu_join__attach(struct session *s)
{
	struct gpu_join *g = xzalloc(sizeof(*g));

	g->tool = (struct session_tool){ .name = GPU_JOIN_TOOL, .record = gpu_join__record,
					 .pass1_done = gpu_join__prepare,
					 .finish = gpu_join__finish, .exit = gpu_join__delete,
					 .priv = g };
	u64map__init_seq(&g->corr_idx);	/* keys: pid << 32 | correlation ID */
	u64map__init_seq(&g->api_idx);
	u64map__init(&g->str_idx);
	u64map__init(&g->threads);
	u64map__init(&g->appended);
	u64map__init(&g->kernel_frames);
	bmap__init(&g->cuts);
	gpu_autograd__init(&g->autograd);
	gpu_api_names__init(&g->api_names);
	u64map__init(&g->api_frames);
	gpu_graphs__init(&g->graphs);
	gpu_pcsamp__init(&g->pcsamp);
	gpu_fatbin__init(&g->fatbin);
	g->s = s;
	g->pcsamp.find_line = gpu_join__fatbin_line;
	g->pcsamp.find_ctx = g;
	gpu_join__subscribe(g, gpu_event__to_profile, g);
	session__add_tool(s, &g->tool);
	return g;
}

void gpu_join__subscribe(struct gpu_join *g, gpu_event_fn fn, void *priv)
{
	g->subs = xgrow(g->subs, &g->subs_cap, g->nr_subs + 1, sizeof(*g->subs));
	g->subs[g->nr_subs++] = (struct gpu_subscriber){ fn, priv, false };
}

void gpu_join__subscribe_all(struct gpu_join *g, gpu_event_fn fn, void *priv)
{
	g->subs = xgrow(g->subs, &g->subs_cap, g->nr_subs + 1, sizeof(*g->subs));
	g->subs[g->nr_subs++] = (struct gpu_subscriber){ fn, priv, true };
}

void gpu_join__set_graph_attribution(struct gpu_join *g, int mode)
{
	g->graph_attr = mode;
}

bool gpu_join__pc_split(struct session *s, const struct gpu_event *ev,
			void (*fn)(void *priv, uint32_t stack, double weight, double frac),
			void *priv)
{
	struct gpu_join *g = gpu_join__find(s);

	return g && ev->kind == GPU_KIND_KERNEL &&
	       gpu_pcsamp__split(&g->pcsamp, &s->profile, &g->appended, ev->stack, ev->pid,
				 ev->name_id, ev->name, ev->start, ev->end, ev->weight, fn, priv);
}

void gpu_join__set_cubins_dir(struct gpu_join *g, const char *dir)
{
	gpu_fatbin__set_dir(&g->fatbin, dir);
}

void gpu_join__set_pc_sampling(struct gpu_join *g, bool on)
{
	g->pcsamp.off = !on;
}

void gpu_join__set_autograd(struct gpu_join *g, bool on)
{
	g->no_autograd = !on;
}

const struct gpu_graph_stats *gpu_join__graph_stats(const struct gpu_join *g)
{
	return &g->graphs.stats;
}

void gpu_join__want_corr(struct gpu_join *g, uint32_t pid, uint64_t id)
{
	uint64_t key, *slot;

	if (gpu__key(pid, id, &key) && (slot = u64map__find(&g->corr_idx, key))) {
		g->corrs[*slot - 1].used = true;
		g->nr_wanted++;
	}
}

bool gpu_join__call_stack(const struct gpu_join *g, uint32_t pid, uint64_t id,
			  uint32_t *stack, uint32_t *tid)
{
	uint64_t key;
	const uint64_t *slot;

	if (!gpu__key(pid, id, &key) || !(slot = u64map__find(&g->corr_idx, key)) ||
	    !g->corrs[*slot - 1].resolved)
		return false;
	*stack = g->corrs[*slot - 1].stack;
	*tid = g->corrs[*slot - 1].tid;
	return true;
}

static void gpu_join__delete(void *priv)
{
	struct gpu_join *g = priv;
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&g->threads, &i, &k, &v); ) {
		struct gpu_thread *t = (struct gpu_thread *)(uintptr_t)v;

		free(t->ivals);
		free(t->samples);
		free(t);
	}
	gpu_autograd__exit(&g->autograd);
	for (size_t i = 0; i < g->nr_strs; i++)
		free(g->strs[i]);
	for (size_t i = 0; i < g->nr_devices; i++)
		free(g->devices[i].name);
	free(g->strs);
	free(g->devices);
	free(g->acts);
	free(g->corrs);
	free(g->apis);
	free(g->subs);
	u64map__exit(&g->corr_idx);
	u64map__exit(&g->api_idx);
	u64map__exit(&g->str_idx);
	u64map__exit(&g->threads);
	u64map__exit(&g->appended);
	u64map__exit(&g->kernel_frames);
	gpu_pcsamp__exit(&g->pcsamp);
	gpu_fatbin__exit(&g->fatbin);
	bmap__exit(&g->cuts, NULL);
	gpu_api_names__exit(&g->api_names);
	u64map__exit(&g->api_frames);
	gpu_graphs__exit(&g->graphs);
	free(g);
}

struct gpu_join *gpu_join__find(const struct session *s)
{
	return session__tool(s, GPU_JOIN_TOOL);
}

const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *g)
{
	return &g->stats;
}

bool gpu_join__has_activity(const struct gpu_join *g)
{
	return g->nr_acts != 0;
}

/* ---- pass 1: collect ------------------------------------------------------- */

static void gpu_join__add_act(struct gpu_join *g, const struct gpu_act *a)
{
	/* Work CUPTI had not timed when its buffers were flushed (a detach's
	 * forced flush) has a start of 0 or ~0 or an end of ~0: it has no place
	 * in time, and one such record made a device "idle" for 2^64 ns */
	if (!a->start || a->start == UINT64_MAX || a->end == UINT64_MAX) {
		g->stats.acts_no_time++;
		return;
	}
	g->acts = xgrow(g->acts, &g->acts_cap, g->nr_acts + 1, sizeof(*g->acts));
	g->acts[g->nr_acts] = *a;
	if (a->end < a->start)
		g->acts[g->nr_acts].end = a->start;
	g->nr_acts++;
}

static void gpu_join__add_string(struct gpu_join *g, const struct xpu_record *rec)
{
	const struct xpu_string *st = rec->body;
	const char *str = xpu_record__string(rec, sizeof(*st));
	uint64_t *slot;

	if (!str)
		return;
	slot = u64map__slot(&g->str_idx, (uint64_t)st->pid << 32 | st->id);
	if (*slot)		/* re-sent after a drop: same name */
		return;
	g->strs = xgrow(g->strs, &g->strs_cap, g->nr_strs + 1, sizeof(*g->strs));
	g->strs[g->nr_strs++] = xstrdup(str);
	*slot = g->nr_strs;
}

static void gpu_join__add_api(struct gpu_join *g, const struct xpu_gpu_api *a)
{
	uint64_t key, *slot;
	struct gpu_api api = { a->start, a->end >= a->start ? a->end : a->start,
			       a->tid, a->cbid, a->domain };

	g->stats.api_records++;
	if (!gpu__key(a->pid, a->correlation_id, &key))
		return;
	slot = u64map__slot(&g->api_idx, key);
	if (*slot) {
		/* a runtime call and the driver call nested in it: keep the
		 * runtime one, the call the user made */
		if (api.domain == XPU_API_RUNTIME && g->apis[*slot - 1].domain != XPU_API_RUNTIME)
			g->apis[*slot - 1] = api;
		return;
	}
	g->apis = xgrow(g->apis, &g->apis_cap, g->nr_apis + 1, sizeof(*g->apis));
	g->apis[g->nr_apis++] = api;
	*slot = g->nr_apis;
}

static void gpu_join__add_corr(struct gpu_join *g, const struct xpu_gpu_corr *c)
{
	uint64_t key, *slot;

	g->stats.corr_records++;
	if (!gpu__key(c->pid, c->correlation_id, &key)) {
		g->stats.corr_bad++;
		return;
	}
	slot = u64map__slot(&g->corr_idx, key);
	if (*slot) {
		g->stats.corr_duplicates++;
		return;
	}
	g->corrs = xgrow(g->corrs, &g->corrs_cap, g->nr_corrs + 1, sizeof(*g->corrs));
	g->corrs[g->nr_corrs++] = (struct gpu_corr){ .time = c->time, .tid = c->tid,
						     .cbid = c->cbid, .domain = c->domain };
	*slot = g->nr_corrs;
}

static void gpu_join__add_device(struct gpu_join *g, const struct xpu_record *rec)
{
	struct xpu_gpu_device d;
	const char *name = xpu_record__string(rec, sizeof(d));

	memcpy(&d, rec->body, sizeof(d));
	if (!name)
		name = "?";
	for (size_t i = 0; i < g->nr_devices; i++) {	/* one line per GPU, not per process */
		const struct xpu_gpu_device *o = &g->devices[i].d;

		if (o->id == d.id && o->sm_count == d.sm_count && o->cc_major == d.cc_major &&
		    o->cc_minor == d.cc_minor && o->global_memory == d.global_memory &&
		    !strcmp(g->devices[i].name, name))
			return;
	}
	g->devices = xgrow(g->devices, &g->devices_cap, g->nr_devices + 1, sizeof(*g->devices));
	g->devices[g->nr_devices++] = (struct gpu_device){ d, xstrdup(name) };
}

static void gpu_join__pass1(struct gpu_join *g, const struct xpu_record *rec)
{
	gpu_autograd__pass1(&g->autograd, rec);
	switch (rec->type) {
	case XPU_REC_STRING:
		gpu_join__add_string(g, rec);
		break;
	case XPU_REC_GPU_KERNEL: {
		struct xpu_gpu_kernel k;

		memcpy(&k, rec->body, sizeof(k));
		gpu_join__add_act(g, &(struct gpu_act){
			.kind = GPU_KIND_KERNEL, .start = k.start, .end = k.end,
			.corr = k.correlation_id, .pid = k.pid, .sub = k.name_id,
			.device = k.device, .stream = k.stream, .graph_id = k.graph_id,
			.graph_node_id = k.graph_node_id });
		break;
	}
	case XPU_REC_GPU_MEMCPY: {
		struct xpu_gpu_memcpy m;

		memcpy(&m, rec->body, sizeof(m));
		gpu_join__add_act(g, &(struct gpu_act){
			.kind = GPU_KIND_MEMCPY, .start = m.start, .end = m.end,
			.corr = m.correlation_id, .pid = m.pid, .sub = m.copy_kind,
			.bytes = m.bytes, .device = m.device, .stream = m.stream,
			.graph_id = m.graph_id, .graph_node_id = m.graph_node_id });
		break;
	}
	case XPU_REC_GPU_MEMSET: {
		struct xpu_gpu_memset m;

		memcpy(&m, rec->body, sizeof(m));
		gpu_join__add_act(g, &(struct gpu_act){
			.kind = GPU_KIND_MEMSET, .start = m.start, .end = m.end,
			.corr = m.correlation_id, .pid = m.pid, .bytes = m.bytes,
			.device = m.device, .stream = m.stream, .graph_id = m.graph_id,
			.graph_node_id = m.graph_node_id });
		break;
	}
	case XPU_REC_GPU_SYNC: {
		struct xpu_gpu_sync y;

		memcpy(&y, rec->body, sizeof(y));
		gpu_join__add_act(g, &(struct gpu_act){
			.kind = GPU_KIND_SYNC, .start = y.start, .end = y.end,
			.corr = y.correlation_id, .pid = y.pid, .sub = y.type,
			.stream = y.stream });
		break;
	}
	case XPU_REC_GPU_API: {
		struct xpu_gpu_api a;

		memcpy(&a, rec->body, sizeof(a));
		gpu_join__add_api(g, &a);
		break;
	}
	case XPU_REC_GPU_CORR: {
		struct xpu_gpu_corr c;

		memcpy(&c, rec->body, sizeof(c));
		/* NVTX push stacks: their ids are range ids, not CUPTI's
		 * (gpu_nvtx.c); graph node stacks: node ids */
		if (c.domain == XPU_API_GRAPH_NODE)
			gpu_graphs__add_stack(&g->graphs, &c);
		else if (c.domain != XPU_API_NVTX && c.domain != XPU_API_ALLOC)
			gpu_join__add_corr(g, &c);	/* allocator stacks: gpu_memory_tool.c */
		break;
	}
	case XPU_REC_GPU_GRAPH_NODE: {
		struct xpu_gpu_graph_node n;

		memcpy(&n, rec->body, sizeof(n));
		gpu_graphs__add_node(&g->graphs, &n);
		break;
	}
	case XPU_REC_GPU_DEVICE:
		gpu_join__add_device(g, rec);
		break;
	case XPU_REC_GPU_PC_SAMPLE:
	case XPU_REC_GPU_STALL_REASON:
	case XPU_REC_GPU_CUBIN:
	case XPU_REC_GPU_PC_RANGE:
		gpu_pcsamp__record(&g->pcsamp, rec);
		break;
	}
}

/* ---- between the passes: what pass 2 must keep ------------------------------ */

static struct gpu_thread *gpu_join__thread(struct gpu_join *g, uint32_t pid, uint32_t tid,
					   bool create)
{
	uint64_t key = (uint64_t)pid << 32 | tid, *slot;

	if (!create) {
		slot = u64map__find(&g->threads, key);
		return slot ? (struct gpu_thread *)(uintptr_t)*slot : NULL;
	}
	slot = u64map__slot(&g->threads, key);
	if (!*slot)
		*slot = (uint64_t)(uintptr_t)xzalloc(sizeof(struct gpu_thread));
	return (struct gpu_thread *)(uintptr_t)*slot;
}

static int ival__cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static void gpu_thread__merge(struct gpu_thread *t)
{
	size_t n = 0;

	xpu_qsort(t->ivals, t->nr_ivals, sizeof(*t->ivals), ival__cmp);
	for (size_t i = 0; i < t->nr_ivals; i++) {
		if (n && t->ivals[i][0] <= t->ivals[n - 1][1]) {
			if (t->ivals[i][1] > t->ivals[n - 1][1])
				t->ivals[n - 1][1] = t->ivals[i][1];
			continue;
		}
		t->ivals[n][0] = t->ivals[i][0];
		t->ivals[n++][1] = t->ivals[i][1];
	}
	t->nr_ivals = n;
}

/* Replayed graph work: its capture site's stack is resolved in pass 2. */
static void gpu_join__want_site(struct gpu_join *g, const struct gpu_act *a)
{
	struct gpu_graph_site *site = gpu_graphs__site(&g->graphs, a->pid, a->graph_node_id);

	if (!site)
		return;
	if (site->api_corr)
		gpu_join__want_corr(g, a->pid, site->api_corr);
	else if (site->own_stack)
		site->used = true;
}

/* After pass 1: marks the correlation records activity refers to (only
 * those are resolved) and collects, per thread, the API intervals of
 * activity without one: only CPU samples inside them are kept for the
 * timestamp join. */
static int gpu_join__prepare(struct session *s, void *priv)
{
	struct gpu_join *g = priv;
	uint64_t k, v;

	gpu_autograd__prepare(&g->autograd);
	gpu_pcsamp__prepare(&g->pcsamp);
	if (!g->no_autograd)
		gpu_autograd__add_filter(&g->autograd, s);
	/* recorded before 1.4, or CUPTI gave no graph callbacks: the launch
	 * stack is all there is, shown as before */
	if (!g->graphs.stats.created && !g->graphs.stats.cloned && g->graph_attr != GPU_GRAPH_LAUNCH) {
		g->no_graph_nodes = true;
		g->graph_attr = GPU_GRAPH_LAUNCH;
	}
	for (size_t i = 0; i < g->nr_acts; i++)
		if (g->acts[i].kind == GPU_KIND_KERNEL)
			gpu_pcs_perturb__kernel(&g->pcsamp.perturb, g->acts[i].pid, g->acts[i].device,
						g->acts[i].sub, g->acts[i].start, g->acts[i].end);
	gpu_pcs_perturb__finish(&g->pcsamp.perturb);
	for (size_t i = 0; i < g->nr_acts; i++) {
		const struct gpu_act *a = &g->acts[i];
		uint64_t key, *slot;
		struct gpu_thread *t;
		const struct gpu_api *api;

		if (a->graph_node_id && g->graph_attr != GPU_GRAPH_LAUNCH)
			gpu_join__want_site(g, a);
		if (!gpu__key(a->pid, a->corr, &key))
			continue;
		slot = u64map__find(&g->corr_idx, key);
		if (slot) {
			g->corrs[*slot - 1].used = true;
			continue;
		}
		slot = u64map__find(&g->api_idx, key);
		if (!slot)
			continue;
		api = &g->apis[*slot - 1];
		t = gpu_join__thread(g, a->pid, api->tid, true);
		if (t->nr_ivals && t->ivals[t->nr_ivals - 1][0] == api->start &&
		    t->ivals[t->nr_ivals - 1][1] == api->end)
			continue;	/* the kernels of one graph launch */
		t->ivals = xgrow(t->ivals, &t->ivals_cap, t->nr_ivals + 1, sizeof(*t->ivals));
		t->ivals[t->nr_ivals][0] = api->start;
		t->ivals[t->nr_ivals++][1] = api->end;
	}
	for (size_t i = 0; u64map__next(&g->threads, &i, &k, &v); )
		gpu_thread__merge((struct gpu_thread *)(uintptr_t)v);
	for (size_t i = 0; i < g->nr_corrs; i++)
		g->stats.corr_unused += !g->corrs[i].used;
	return 0;
}

/* ---- pass 2: stacks ---------------------------------------------------------- */

/* The stack with one more frame at the leaf end (cached). */
static uint32_t gpu_join__append(struct gpu_join *g, struct profile *p, uint32_t stack,
				 uint32_t frame)
{
	return profile__append(p, &g->appended, stack, frame);
}

/* Resolves a recorded stack and interns the part below the CUDA entry point.
 * *cut (may be NULL) says whether a CUDA frame was found. */
static uint32_t gpu_join__api_frame(struct gpu_join *g, struct profile *p, uint32_t domain,
				    uint32_t cbid)
{
	uint64_t *slot = u64map__slot(&g->api_frames, (uint64_t)domain << 32 | cbid);

	if (!*slot)
		*slot = (uint64_t)gpu__api_frame(p, domain, cbid) + 1;
	return (uint32_t)(*slot - 1);
}

static int gpu_join__resolve(struct gpu_join *g, struct session *s, uint32_t pid,
			     uint32_t tid, uint64_t time, const void *stack, size_t avail,
			     uint32_t *base, bool *cut)
{
	struct xpu_stack_view v;
	uint32_t frames[CALLCHAIN_MAX];
	size_t n, at;
	bool found;
	void **memo;

	if (xpu_stack__parse(stack, avail, &v))
		return -EINVAL;
	n = callchain__resolve(&s->callchain, pid, tid, time, &v, frames, CALLCHAIN_MAX, NULL);
	memo = bmap__slot(&g->cuts, frames, n * sizeof(*frames), &found);
	if (!found)
		*memo = (void *)(uintptr_t)(gpu__stack_cut(&s->profile, &g->api_names, frames, n) + 1);
	at = (size_t)(uintptr_t)*memo - 1;
	if (cut)
		*cut = at < n;
	*base = profile__intern_stack(&s->profile, frames, at);
	return 0;
}

/* The stack where a graph node was created outside a marked call: its own
 * correlation record (XPU_API_GRAPH_NODE), with a "[graph node]" frame where
 * an API frame would be. */
static void gpu_join__graph_stack(struct gpu_join *g, struct session *s,
				  const struct xpu_record *rec, const struct xpu_gpu_corr *c)
{
	struct gpu_graph_site *site = gpu_graphs__own(&g->graphs, c->pid, c->correlation_id);
	uint32_t base, api;

	if (!site || !site->used || site->resolved || site->time != c->time || site->tid != c->tid)
		return;
	if (gpu_join__resolve(g, s, c->pid, c->tid, c->time, (const uint8_t *)rec->body +
			      offsetof(struct xpu_gpu_corr, stack),
			      rec->body_size - offsetof(struct xpu_gpu_corr, stack), &base, NULL))
		return;
	api = gpu__graph_node_frame(&s->profile);
	site->raw = gpu_join__append(g, &s->profile, base, api);
	base = session__filter_stack_id(s, c->pid, c->tid, c->time, base);
	site->stack = gpu_join__append(g, &s->profile, base, api);
	site->resolved = true;
}

static void gpu_join__corr_stack(struct gpu_join *g, struct session *s,
				 const struct xpu_record *rec)
{
	struct xpu_gpu_corr c;
	struct gpu_corr *gc;
	uint64_t key, *slot;
	uint32_t base, api;

	memcpy(&c, rec->body, sizeof(c));
	if (c.domain == XPU_API_GRAPH_NODE) {
		gpu_join__graph_stack(g, s, rec, &c);
		return;
	}
	if (c.domain == XPU_API_NVTX || c.domain == XPU_API_ALLOC ||
	    !gpu__key(c.pid, c.correlation_id, &key) ||
	    !(slot = u64map__find(&g->corr_idx, key)))
		return;
	gc = &g->corrs[*slot - 1];
	if (gc->resolved || !gc->used || gc->time != c.time || gc->tid != c.tid)
		return;		/* a duplicate, or nothing to join */
	if (gpu_join__resolve(g, s, c.pid, c.tid, c.time, (const uint8_t *)rec->body +
			      offsetof(struct xpu_gpu_corr, stack),
			      rec->body_size - offsetof(struct xpu_gpu_corr, stack), &base, NULL)) {
		g->stats.corr_bad++;
		return;
	}
	/* a backward op's launch: under its forward op's Python code */
	if (!g->no_autograd)
		base = gpu_autograd__stack(&g->autograd, s, c.pid, c.tid, c.time, base);
	api = gpu_join__api_frame(g, &s->profile, c.domain, c.cbid);
	gc->raw = gpu_join__append(g, &s->profile, base, api);
	/* the stack filters (NVTX ranges) see the launching thread at the
	 * launch: every user of the stack (the join, sync-wait) gets the same */
	base = session__filter_stack_id(s, c.pid, c.tid, c.time, base);
	gc->stack = gpu_join__append(g, &s->profile, base, api);
	gc->resolved = true;
}

static bool gpu_thread__inside(const struct gpu_thread *t, uint64_t time)
{
	size_t lo = 0, hi = t->nr_ivals;

	while (lo < hi) {		/* first interval starting after time */
		size_t mid = lo + (hi - lo) / 2;

		if (t->ivals[mid][0] <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && time <= t->ivals[lo - 1][1];	/* closed: [start, end] */
}

static void gpu_join__sample(struct gpu_join *g, struct session *s,
			     const struct xpu_record *rec)
{
	struct xpu_sample smp;
	struct gpu_thread *t;
	uint32_t base;
	bool cut;

	memcpy(&smp, rec->body, sizeof(smp));
	t = gpu_join__thread(g, smp.pid, smp.tid, false);
	if (!t || !gpu_thread__inside(t, smp.time))
		return;
	if (g->stats.ts_samples >= GPU_TS_SAMPLES_MAX) {
		g->stats.ts_samples_dropped++;
		return;
	}
	if (gpu_join__resolve(g, s, smp.pid, smp.tid, smp.time, (const uint8_t *)rec->body +
			      offsetof(struct xpu_sample, stack),
			      rec->body_size - offsetof(struct xpu_sample, stack), &base, &cut))
		return;
	t->samples = xgrow(t->samples, &t->samples_cap, t->nr_samples + 1, sizeof(*t->samples));
	t->samples[t->nr_samples++] = (struct gpu_ts_sample){ smp.time, base, cut };
	g->stats.ts_samples++;
}

static int gpu_join__record(struct session *s, const struct xpu_record *rec, int pass,
			    void *priv)
{
	struct gpu_join *g = priv;

	if (pass == 1) {
		gpu_join__pass1(g, rec);
		return 0;
	}
	if (rec->type == XPU_REC_GPU_CORR && (g->nr_acts || g->nr_wanted))
		gpu_join__corr_stack(g, s, rec);
	else if (rec->type == XPU_REC_SAMPLE && g->threads.len)
		gpu_join__sample(g, s, rec);
	return 0;
}

/* ---- finish: the join --------------------------------------------------------- */

static int ts_sample__cmp(const void *a, const void *b)
{
	const struct gpu_ts_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* The CPU stack of tid during [start, end]: the latest sample in the
 * interval whose stack reached into CUDA, else the latest one. Samples taken
 * during one API call share the caller's frames below the entry point, so
 * the latest is as good as any and needs no weight splitting. */
static bool gpu_thread__stack_at(const struct gpu_thread *t, uint64_t start, uint64_t end,
				 uint32_t *base)
{
	size_t lo = 0, hi = t->nr_samples;
	bool found = false;

	while (lo < hi) {		/* first sample after end */
		size_t mid = lo + (hi - lo) / 2;

		if (t->samples[mid].time <= end)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && t->samples[i].time >= start; ) {
		if (!found) {
			*base = t->samples[i].base;
			found = true;
		}
		if (t->samples[i].has_cut) {
			*base = t->samples[i].base;
			break;
		}
	}
	return found;
}

static uint32_t gpu_join__leaf(struct gpu_join *g, struct profile *p, const struct gpu_act *a)
{
	uint64_t *slot;
	const uint64_t *name;

	switch (a->kind) {
	case GPU_KIND_KERNEL:
		slot = u64map__slot(&g->kernel_frames, (uint64_t)a->pid << 32 | a->sub);
		if (!*slot) {
			name = u64map__find(&g->str_idx, (uint64_t)a->pid << 32 | a->sub);
			*slot = (uint64_t)gpu__kernel_frame(p, name ? g->strs[*name - 1] : NULL) + 1;
		}
		return (uint32_t)(*slot - 1);
	case GPU_KIND_MEMCPY:
		return gpu__memcpy_frame(p, a->sub);
	case GPU_KIND_MEMSET:
		return gpu__memset_frame(p);
	default:
		return gpu__sync_frame(p, a->sub);
	}
}

/* The profile as a subscriber: GPU time as ORIGIN_GPU weight; a kernel's
 * shared out by its PC samples where it has some (gpu_pcsamp.h). */
static void gpu_event__to_profile(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct gpu_join *g = priv;

	struct gpu_pcsamp_to_profile t = { &s->profile, ev->pid, ev->tid, ev->comm };

	if (ev->kind == GPU_KIND_KERNEL &&
	    gpu_pcsamp__split(&g->pcsamp, &s->profile, &g->appended, ev->stack, ev->pid,
			      ev->name_id, ev->name, ev->start, ev->end, ev->weight,
			      gpu_pcsamp__to_profile, &t))
		return;
	profile__add(&s->profile, ev->stack, ev->pid, ev->tid, ev->comm, ORIGIN_GPU, ev->weight);
}

/* The capture site's stack of replayed work (filtered and raw); false when
 * the trace does not hold it. */
static bool gpu_join__site_stack(struct gpu_join *g, const struct gpu_act *a,
				 uint32_t *stack, uint32_t *raw)
{
	struct gpu_graph_site *site = gpu_graphs__site(&g->graphs, a->pid, a->graph_node_id);
	uint64_t key, *slot;

	if (!site)
		return false;
	if (site->api_corr) {
		if (!gpu__key(a->pid, site->api_corr, &key) ||
		    !(slot = u64map__find(&g->corr_idx, key)) || !g->corrs[*slot - 1].resolved)
			return false;
		*stack = g->corrs[*slot - 1].stack;
		*raw = g->corrs[*slot - 1].raw;
		return true;
	}
	if (!site->resolved)
		return false;
	*stack = site->stack;
	*raw = site->raw;
	return true;
}

/*
 * Replayed graph work (--graph-attribution, Documentation/xpu-report.md):
 *   both:    launch stack; [graph replay]; capture stack (unfiltered: the
 *            launch's filters and labels already sit at the root)
 *   capture: capture stack (with the filters at capture time); [graph replay]
 * Without a capture site, both modes give launch stack; [graph replay];
 * [unknown capture site], so the work is never lost or misplaced.
 */
static uint32_t gpu_join__replay_stack(struct gpu_join *g, struct session *s,
				       const struct gpu_act *a, uint32_t launch)
{
	struct profile *p = &s->profile;
	struct gpu_graph_stats *st = &g->graphs.stats;
	uint32_t cap, raw, out;
	const uint32_t *frames;
	size_t n;
	bool have = gpu_join__site_stack(g, a, &cap, &raw);

	if (have) {
		st->with_site++;
		st->with_site_ns += (double)(a->end - a->start);
	}
	if (have && g->graph_attr == GPU_GRAPH_CAPTURE)
		return gpu_join__append(g, p, cap, gpu__graph_replay_frame(p));
	out = gpu_join__append(g, p, launch, gpu__graph_replay_frame(p));
	if (!have)
		return gpu_join__append(g, p, out, gpu__graph_unknown_site_frame(p));
	frames = profile__stack(p, raw, &n);
	for (size_t i = 0; i < n; i++)
		out = gpu_join__append(g, p, out, frames[i]);
	return out;
}

static void gpu_join__one(struct gpu_join *g, struct session *s, const struct gpu_act *a)
{
	struct profile *p = &s->profile;
	struct gpu_kind_stats *ks = &g->stats.kind[a->kind];
	const struct gpu_api *api = NULL;
	uint32_t stack = 0, tid = 0, base;
	uint64_t key, *slot, when = a->start, launch = 0;
	bool have_key = gpu__key(a->pid, a->corr, &key);
	struct gpu_event ev;
	const uint64_t *name;

	ks->ns += a->end - a->start;
	slot = have_key ? u64map__find(&g->corr_idx, key) : NULL;
	if (slot && g->corrs[*slot - 1].resolved) {
		const struct gpu_corr *c = &g->corrs[*slot - 1];

		stack = c->stack;
		tid = c->tid;
		when = launch = c->time;
		ev.match = GPU_MATCH_ID;
		ks->by_id++;
	} else {
		slot = have_key ? u64map__find(&g->api_idx, key) : NULL;
		api = slot ? &g->apis[*slot - 1] : NULL;
	}
	if (!stack && api) {
		const struct gpu_thread *t = gpu_join__thread(g, a->pid, api->tid, false);
		uint32_t api_frame = gpu_join__api_frame(g, p, api->domain, api->cbid);

		tid = api->tid;
		when = launch = api->start;
		if (t && gpu_thread__stack_at(t, api->start, api->end, &base)) {
			stack = gpu_join__append(g, p, base, api_frame);
			ev.match = GPU_MATCH_TIME;
			ks->by_time++;
		} else {
			stack = gpu_join__append(g, p, gpu_join__append(g, p, 0, gpu__unknown_frame(p)),
						 api_frame);
			ev.match = GPU_MATCH_NONE;
			ks->unmatched++;
		}
	} else if (!stack) {
		stack = gpu_join__append(g, p, 0, gpu__unknown_frame(p));
		ev.match = GPU_MATCH_NONE;
		ks->unmatched++;
	}
	/* stacks by time or without one: the stack filters (NVTX ranges) see
	 * the launching thread at the launch (correlation stacks went through
	 * them when resolved) */
	if (tid && launch && ev.match != GPU_MATCH_ID)
		stack = session__filter_stack_id(s, a->pid, tid, launch, stack);
	else if (!tid)	/* no thread for the filters: still its input's label */
		stack = session__label_stack(s, a->pid, stack);
	if (a->graph_node_id) {
		g->graphs.stats.replayed++;
		g->graphs.stats.replayed_ns += (double)(a->end - a->start);
		if (g->graph_attr != GPU_GRAPH_LAUNCH)
			stack = gpu_join__replay_stack(g, s, a, stack);
	}
	ev.leaf = gpu_join__leaf(g, p, a);
	ev.cpu_stack = stack;
	ev.stack = gpu_join__append(g, p, stack, ev.leaf);
	ev.comm = machine__comm(&s->machine, a->pid, tid ? tid : a->pid, when);
	ev.filtered = !filter__match(&s->filter, a->pid, tid, a->start, profile__str(p, ev.comm)) ||
		      /* --device: sync waits name no device */
		      (s->filter.nr_devices && (a->kind == GPU_KIND_SYNC ||
						!filter__match_device(&s->filter, a->device)));
	ks->filtered += ev.filtered;
	name = a->kind == GPU_KIND_KERNEL ?
	       u64map__find(&g->str_idx, (uint64_t)a->pid << 32 | a->sub) : NULL;
	ev.kind = a->kind;
	ev.pid = a->pid;
	ev.tid = tid;
	ev.device = a->device;
	ev.stream = a->stream;
	ev.start = a->start;
	ev.end = a->end;
	ev.correlation_id = a->corr;
	ev.launch_time = launch;
	ev.graph_id = a->graph_id;
	ev.graph_node_id = a->graph_node_id;
	ev.bytes = a->bytes;
	ev.sub = a->kind == GPU_KIND_KERNEL ? 0 : a->sub;
	ev.name_id = a->kind == GPU_KIND_KERNEL ? a->sub : 0;
	ev.name = name ? g->strs[*name - 1] : NULL;
	/* a kernel that PC sampling slowed: its time when not sampled */
	ev.ns = a->kind == GPU_KIND_KERNEL ?
		(uint64_t)(gpu_pcs_perturb__ns(&g->pcsamp.perturb, a->pid, a->device, a->sub,
					       a->start, a->end) + 0.5) :
		a->end - a->start;
	ev.weight = session__ns_weight(s, ev.ns);
	for (size_t i = 0; i < g->nr_subs; i++)
		if (!ev.filtered || g->subs[i].all)
			g->subs[i].fn(s, &ev, g->subs[i].priv);
}

static const char *gpu_join__name(const void *ctx, uint32_t pid, uint32_t name_id);

static int gpu_join__finish(struct session *s, void *priv)
{
	struct gpu_join *g = priv;
	uint64_t k, v, joined = 0, unmatched = 0;

	if (!g->nr_acts)
		return 0;
	if (s->freq_assumed)
		warn("%s has no sample_freq: GPU time is converted to samples at %.0f Hz",
		     s->path, s->sample_freq);
	for (size_t i = 0; u64map__next(&g->threads, &i, &k, &v); ) {
		struct gpu_thread *t = (struct gpu_thread *)(uintptr_t)v;

		xpu_qsort(t->samples, t->nr_samples, sizeof(*t->samples), ts_sample__cmp);
	}
	for (size_t i = 0; i < g->nr_acts; i++)
		gpu_join__one(g, s, &g->acts[i]);

	for (int kind = 0; kind < GPU_KIND_NR; kind++) {
		joined += g->stats.kind[kind].by_id + g->stats.kind[kind].by_time;
		unmatched += g->stats.kind[kind].unmatched;
	}
	if (!joined)
		warn("none of the %llu GPU activity records could be joined to a CPU stack "
		     "(%llu correlation records, %llu API records): they are shown under "
		     "[unknown CPU stack]; see --header", (unsigned long long)g->nr_acts,
		     (unsigned long long)g->stats.corr_records,
		     (unsigned long long)g->stats.api_records);
	else if (unmatched)
		warn("%llu of %llu GPU activity records have no CPU stack (shown under "
		     "[unknown CPU stack]); see --header", (unsigned long long)unmatched,
		     (unsigned long long)g->nr_acts);
	if (g->stats.acts_no_time)
		warn("%llu GPU activity records had no valid timestamps (unfinished when CUPTI "
		     "flushed its buffers) and were left out; see --header",
		     (unsigned long long)g->stats.acts_no_time);
	{
		const struct gpu_pcs_kstat *worst;
		size_t n = gpu_pcs_perturb__inflated(&g->pcsamp.perturb, &worst);

		if (n) {
			const char *m = gpu_join__name(g, worst->pid, worst->name_id);
			char *dem = m ? demangle(m, true) : NULL;

			warn("GPU PC sampling slowed %zu kernel%s (the most: %s, %.2fx): their sampled "
			     "launches' GPU time is taken from their unsampled ones; see --header",
			     n, n == 1 ? "" : "s", dem ? dem : m ? m : "[unknown]", worst->factor);
			free(dem);
		}
	}
	{
		const char *pc = session__meta(s, XPU_META_CUPTI_PC_SAMPLING);

		if (pc && strstr(pc, " after the start") && !g->pcsamp.stats.records &&
		    g->stats.kind[GPU_KIND_KERNEL].ns)
			warn("no GPU PC sample: PC sampling was deferred (%s) and no kernel ran after "
			     "it began; for a short run, record with --gpu-pc-duty=off", pc);
	}
	if (g->stats.ts_samples_dropped)
		warn("timestamp join: %llu CPU samples over the limit of %u were not used",
		     (unsigned long long)g->stats.ts_samples_dropped, GPU_TS_SAMPLES_MAX);
	return 0;
}

/* ---- --header -------------------------------------------------------------------- */

static uint64_t gpu__lost(const struct session *s, uint32_t source)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_lost; i++)
		if (s->lost[i].source == source)
			n += s->lost[i].count;
	return n;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0;
}

/* CUDA graphs: nodes recorded, replayed work, capture sites found. */
static void gpu_join__graph_header(const struct gpu_join *g, FILE *fp)
{
	const struct gpu_graph_stats *st = &g->graphs.stats;
	static const char *const modes[] = {
		[GPU_GRAPH_BOTH] = "both", [GPU_GRAPH_CAPTURE] = "capture",
		[GPU_GRAPH_LAUNCH] = "launch",
	};

	if (!st->created && !st->cloned && !st->replayed)
		return;
	fprintf(fp, "#   graph nodes: %llu created, %llu cloned; replayed work: %llu records, "
		"%.3f ms\n", (unsigned long long)st->created, (unsigned long long)st->cloned,
		(unsigned long long)st->replayed, st->replayed_ns / 1e6);
	if (g->no_graph_nodes)
		fprintf(fp, "#   graph attribution: launch (the trace has no graph node records: "
			"recorded before format 1.4, or CUPTI gave no graph callbacks)\n");
	else if (g->graph_attr == GPU_GRAPH_LAUNCH)
		fprintf(fp, "#   graph attribution: launch (capture sites not looked up)\n");
	else
		fprintf(fp, "#   graph attribution: %s; capture site found for %llu records "
			"(%.1f%% of replayed time)\n", modes[g->graph_attr],
			(unsigned long long)st->with_site,
			st->replayed_ns > 0 ? 100.0 * st->with_site_ns / st->replayed_ns : 0.0);
}

/* --header's autograd line (design-autograd.md), GPU or not. */
static void gpu_join__autograd_header(const struct session *s, const struct gpu_join *g, FILE *fp)
{
	if (g->autograd.stats.nodes || g->autograd.stats.evals) {
		const struct gpu_autograd_stats *a = &g->autograd.stats;

		fprintf(fp, "#   autograd: %llu nodes made (%llu with Python frames), %llu run "
			"by the backward pass; %llu backward launches, %llu of them under their "
			"forward code (no node begun on the thread %llu, node not seen %llu)",
			(unsigned long long)a->nodes, (unsigned long long)a->nodes_py,
			(unsigned long long)a->evals, (unsigned long long)a->launches,
			(unsigned long long)a->moved, (unsigned long long)a->no_eval,
			(unsigned long long)a->no_node);
		if (s->nr_samples)	/* the CPU samples were read (not by --header alone) */
			fprintf(fp, "; %llu CPU stacks of backward threads moved too",
				(unsigned long long)a->cpu_moved);
		fputc('\n', fp);
		if (a->evals && !a->launches && g->nr_acts && !g->no_autograd)
			fprintf(fp, "#   autograd: no launch stack names torch::autograd::Engine::"
				"evaluate_function: libtorch_cpu.so not found here? (xpu-archive "
				"packs it with the trace)\n");
	}
}

/* A kernel's mangled name, for the PC sampling table. */
static const char *gpu_join__name(const void *ctx, uint32_t pid, uint32_t name_id)
{
	const struct gpu_join *g = ctx;
	const uint64_t *name = u64map__find(&g->str_idx, (uint64_t)pid << 32 | name_id);

	return name ? g->strs[*name - 1] : NULL;
}

const char *gpu_join__kernel_name(const struct gpu_join *g, uint32_t pid, uint32_t name_id)
{
	return gpu_join__name(g, pid, name_id);
}

const struct gpu_pcsamp *gpu_join__pcsamp(const struct gpu_join *g)
{
	return &g->pcsamp;
}

/* One line where PC sampling was asked for; the table where it ran. */
static void gpu_join__pcsamp_header(const struct session *s, const struct gpu_join *g, FILE *fp)
{
	const char *asked = session__meta(s, XPU_META_GPU_PC_SAMPLING);
	const char *state = session__meta(s, XPU_META_CUPTI_PC_SAMPLING);

	if (!asked && !state && !g->pcsamp.stats.records)
		return;
	fprintf(fp, "#   pc sampling: %s%s%s\n", state ? state : "no CUDA process reported it",
		asked ? "; asked: " : "", asked ? asked : "");
	gpu_pcsamp__header(&g->pcsamp, fp, gpu_join__name, g);
	gpu_fatbin__header(&g->fatbin, fp);
	fprintf(fp, "#   pc samples dropped: %llu\n",
		(unsigned long long)gpu__lost(s, XPU_LOST_PC_SAMPLES));
}

int gpu__header(const struct session *s, FILE *fp)
{
	const struct gpu_join *g = gpu_join__find(s);
	const char *conflict = session__meta(s, XPU_META_GPU_SUBSCRIBER_CONFLICT);
	const char *error = session__meta(s, XPU_META_GPU_ERROR);
	uint64_t nr_gpu = 0;

	for (int t = 0; t < XPU_REC_MAX; t++)
		if (xpu_rectype__is(t, XPU_RECF_GPU))
			nr_gpu += s->nr_records[t];
	if (!(s->header.features & XPU_FEAT_GPU) && !nr_gpu && !conflict) {
		if (g && (g->autograd.stats.nodes || g->autograd.stats.evals)) {
			fprintf(fp, "#\n# pytorch:\n");	/* CPU only: no gpu section */
			gpu_join__autograd_header(s, g, fp);
		}
		return 0;
	}
	fprintf(fp, "#\n# gpu:\n");
	if (!g) {
		fprintf(fp, "#   join: not run\n");
	} else {
		const struct gpu_join_stats *st = &g->stats;

		for (int kind = 0; kind < GPU_KIND_NR; kind++) {
			const struct gpu_kind_stats *k = &st->kind[kind];
			uint64_t n = k->by_id + k->by_time + k->unmatched;

			fprintf(fp, "#   %-8s %10llu: by id %llu (%.1f%%), by time %llu (%.1f%%), "
				"unmatched %llu (%.1f%%), %.3f ms", gpu_kind__name(kind),
				(unsigned long long)n, (unsigned long long)k->by_id,
				pct(k->by_id, n), (unsigned long long)k->by_time,
				pct(k->by_time, n), (unsigned long long)k->unmatched,
				pct(k->unmatched, n), (double)k->ns / 1e6);
			if (k->filtered)
				fprintf(fp, ", %llu filtered out", (unsigned long long)k->filtered);
			fprintf(fp, "\n");
		}
		fprintf(fp, "#   correlation records: %llu (duplicates %llu, malformed %llu, "
			"without GPU activity %llu)\n", (unsigned long long)st->corr_records,
			(unsigned long long)st->corr_duplicates, (unsigned long long)st->corr_bad,
			(unsigned long long)st->corr_unused);
		fprintf(fp, "#   api records: %llu; cpu samples used for the timestamp join: %llu\n",
			(unsigned long long)st->api_records, (unsigned long long)st->ts_samples);
		if (st->acts_no_time)
			fprintf(fp, "#   activity records without valid timestamps (unfinished when "
				"CUPTI flushed), left out: %llu\n",
				(unsigned long long)st->acts_no_time);
		gpu_join__autograd_header(s, g, fp);
		if (g->nr_acts)
			fprintf(fp, "#   gpu time in samples: ns * %g Hz / 1e9%s\n", s->sample_freq,
				s->freq_assumed ? " (assumed: no sample_freq in the trace)" : "");
	}
	if (g) {
		gpu_join__graph_header(g, fp);
		gpu_join__pcsamp_header(s, g, fp);
	}
	fprintf(fp, "#   cupti dropped:      %llu\n",
		(unsigned long long)gpu__lost(s, XPU_LOST_CUPTI));
	fprintf(fp, "#   correlation lost:   %llu\n",
		(unsigned long long)gpu__lost(s, XPU_LOST_CORR));
	fprintf(fp, "#   channel lost:       %llu\n",
		(unsigned long long)gpu__lost(s, XPU_LOST_GPU_CHANNEL));
	if (gpu__lost(s, XPU_LOST_GPU_UNCONNECTED))	/* rare: a line only then */
		fprintf(fp, "#   CUDA processes that could not send GPU records: %llu (lost: "
			"gpu-unconnected)\n",
			(unsigned long long)gpu__lost(s, XPU_LOST_GPU_UNCONNECTED));
	fprintf(fp, "#   subscriber conflict: %s\n", conflict ? conflict : "none");
	if (error)
		fprintf(fp, "#   cupti error: %s\n", error);
	for (size_t i = 0; g && i < g->nr_devices; i++) {
		const struct xpu_gpu_device *d = &g->devices[i].d;

		fprintf(fp, "#   device %u: %s (%u SMs, cc %u.%u, %.1f GiB, pid %u)\n", d->id,
			g->devices[i].name, d->sm_count, d->cc_major, d->cc_minor,
			(double)d->global_memory / (1024.0 * 1024 * 1024), d->pid);
	}
	if (g && !g->nr_devices)
		fprintf(fp, "#   devices: none recorded\n");
	return ferror(fp) ? -EIO : 0;
}
