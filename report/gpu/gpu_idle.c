// SPDX-License-Identifier: MIT
/* GPU idle time charged to the launching threads' CPU activity: see
 * gpu_idle.h and Documentation/design-gpu-idle.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_idle.h"

#define GPU_IDLE_TOP_CAUSES 5

struct idle_item {			/* one CPU event of a thread that calls CUDA */
	uint64_t lo, hi;		/* the time it stands for: [lo, hi) */
	double density;			/* the share of [lo, hi) it stands for: 1 for a
					 * sample, off_ns / (hi - lo) off CPU */
	uint32_t stack, comm;
};

struct idle_thread {
	uint32_t pid, tid;
	struct idle_item *items;	/* sorted by lo in finish */
	size_t nr, cap;
};

struct idle_span {
	uint64_t start, end;
	uint32_t tid;			/* work: its launcher; gap: the launcher of the
					 * work that ends it (0: unknown) */
};

struct idle_dev {
	struct gpu_idle_device d;
	struct idle_span *work;		/* the device's work, then its busy union */
	size_t nr_work, work_cap;
	size_t launchers_cap;
	struct u64map cause_idx;	/* frame -> d.causes index + 1 */
	size_t causes_cap;
};

/* A CPU event taking part in the gap being charged. */
struct idle_active {
	const struct idle_item *it;
	uint32_t k;			/* launcher index */
	uint32_t tid;
	double charge;			/* ns of this gap */
	bool in;			/* covers the current segment */
};

struct idle_point {			/* where an active event starts or ends in the gap */
	uint64_t x;
	uint32_t a;			/* idle_active index */
	bool end;
};

struct gpu_idle {
	struct session_tool tool;
	bool from_start;
	bool active;			/* the trace holds GPU work (after pass 1) */
	struct u64map threads;		/* pid << 32 | tid -> struct idle_thread * */
	struct u64map first_cpu;	/* pid -> first CPU event time + 1 */
	struct u64map dev_idx;		/* pid << 32 | device -> devs index + 1 */
	struct idle_dev *devs;
	size_t nr_devs, devs_cap;
	struct u64map stacks;		/* marker frame << 32 | stack -> stack + 1 */
	/* scratch of the charging */
	struct idle_active *act;
	size_t nr_act, act_cap;
	struct idle_point *pts;
	size_t pts_cap;
	double *dens;
	uint32_t *seen;
	size_t dens_cap;
	uint32_t stamp;
};

static int gpu_idle__record(struct session *s, const struct xpu_record *rec, int pass, void *priv);
static int gpu_idle__pass1_done(struct session *s, void *priv);
static int gpu_idle__finish(struct session *s, void *priv);
static void gpu_idle__delete(void *priv);
static void gpu_idle__cpu(struct session *s, const struct cpu_event *ev, void *priv);
static void gpu_idle__gpu(struct session *s, const struct gpu_event *ev, void *priv);

struct gpu_idle *gpu_idle__find(const struct session *s)
{
	return session__tool(s, GPU_IDLE_TOOL);
}

struct gpu_idle *gpu_idle__attach(struct session *s, bool from_start)
{
	struct gpu_join *g = gpu_join__find(s);
	struct gpu_idle *gi = gpu_idle__find(s);

	if (gi) {
		gi->from_start |= from_start;
		return gi;
	}
	/* The join must be registered first: tools finish in registration
	 * order, and ours needs every joined event before it runs. */
	BUG_ON(!g);
	gi = xzalloc(sizeof(*gi));
	gi->from_start = from_start;
	gi->tool = (struct session_tool){ .name = GPU_IDLE_TOOL, .record = gpu_idle__record,
					  .pass1_done = gpu_idle__pass1_done,
					  .finish = gpu_idle__finish, .exit = gpu_idle__delete,
					  .priv = gi };
	u64map__init(&gi->threads);
	u64map__init(&gi->first_cpu);
	u64map__init(&gi->dev_idx);
	u64map__init(&gi->stacks);
	session__add_tool(s, &gi->tool);
	session__subscribe_cpu(s, gpu_idle__cpu, gi);
	gpu_join__subscribe_all(g, gpu_idle__gpu, gi);
	return gi;
}

static void gpu_idle__delete(void *priv)
{
	struct gpu_idle *gi = priv;
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&gi->threads, &i, &k, &v); ) {
		struct idle_thread *t = (struct idle_thread *)(uintptr_t)v;

		free(t->items);
		free(t);
	}
	for (size_t i = 0; i < gi->nr_devs; i++) {
		free(gi->devs[i].work);
		free(gi->devs[i].d.launchers);
		free(gi->devs[i].d.causes);
		u64map__exit(&gi->devs[i].cause_idx);
	}
	free(gi->devs);
	free(gi->act);
	free(gi->pts);
	free(gi->dens);
	free(gi->seen);
	u64map__exit(&gi->threads);
	u64map__exit(&gi->first_cpu);
	u64map__exit(&gi->dev_idx);
	u64map__exit(&gi->stacks);
	free(gi);
}

size_t gpu_idle__nr_devices(const struct gpu_idle *gi)
{
	return gi->nr_devs;
}

const struct gpu_idle_device *gpu_idle__device(const struct gpu_idle *gi, size_t i)
{
	return &gi->devs[i].d;
}

/* ---- collecting ---------------------------------------------------------------- */

static struct idle_thread *gpu_idle__thread(struct gpu_idle *gi, uint32_t pid, uint32_t tid,
					    bool create)
{
	uint64_t key = (uint64_t)pid << 32 | tid, *slot;
	struct idle_thread *t;

	if (!create) {
		slot = u64map__find(&gi->threads, key);
		return slot ? (struct idle_thread *)(uintptr_t)*slot : NULL;
	}
	slot = u64map__slot(&gi->threads, key);
	if (!*slot) {
		t = xzalloc(sizeof(*t));
		t->pid = pid;
		t->tid = tid;
		*slot = (uint64_t)(uintptr_t)t;
	}
	return (struct idle_thread *)(uintptr_t)*slot;
}

/* Pass 1: which threads call CUDA. Only a thread with a correlation or API
 * record can launch work, so only their CPU events are kept in pass 2. */
static int gpu_idle__record(struct session *s, const struct xpu_record *rec, int pass, void *priv)
{
	struct gpu_idle *gi = priv;

	if (pass != 1)
		return 0;
	if (rec->type == XPU_REC_GPU_CORR) {
		struct xpu_gpu_corr c;

		memcpy(&c, rec->body, sizeof(c));
		gpu_idle__thread(gi, c.pid, c.tid, true);
	} else if (rec->type == XPU_REC_GPU_API) {
		struct xpu_gpu_api a;

		memcpy(&a, rec->body, sizeof(a));
		gpu_idle__thread(gi, a.pid, a.tid, true);
	}
	return 0;
}

static int gpu_idle__pass1_done(struct session *s, void *priv)
{
	struct gpu_idle *gi = priv;

	gi->active = s->nr_records[XPU_REC_GPU_KERNEL] || s->nr_records[XPU_REC_GPU_MEMCPY] ||
		     s->nr_records[XPU_REC_GPU_MEMSET];
	return 0;
}

static void gpu_idle__cpu(struct session *s, const struct cpu_event *ev, void *priv)
{
	struct gpu_idle *gi = priv;
	struct idle_thread *t;
	struct idle_item it = { .stack = ev->stack, .comm = ev->comm, .density = 1 };

	if (!gi->active)
		return;
	if (gi->from_start) {
		uint64_t *first = u64map__slot(&gi->first_cpu, ev->pid);

		if (!*first || ev->start + 1 < *first)
			*first = ev->start + 1;
	}
	t = gpu_idle__thread(gi, ev->pid, ev->tid, false);
	if (!t)
		return;
	if (ev->kind == CPU_EVENT_SAMPLE) {
		/* a sample stands for the sampling period before it */
		uint64_t period = (uint64_t)(ev->weight * 1e9 / s->sample_freq + 0.5);

		it.hi = ev->start;
		it.lo = ev->start > period ? ev->start - period : 0;
	} else {
		it.lo = ev->start;
		it.hi = ev->end;
		if (it.hi > it.lo && ev->off_ns < it.hi - it.lo)
			it.density = (double)ev->off_ns / (double)(it.hi - it.lo);
	}
	if (it.hi <= it.lo || !(it.density > 0))
		return;
	t->items = xgrow(t->items, &t->cap, t->nr + 1, sizeof(*t->items));
	t->items[t->nr++] = it;
}

/* The join's events, filtered ones too: a device is busy whoever launched
 * its work. Synchronization records are not work. */
static void gpu_idle__gpu(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct gpu_idle *gi = priv;
	uint64_t *slot;
	struct idle_dev *dv;

	if (ev->kind == GPU_KIND_SYNC)
		return;
	slot = u64map__slot(&gi->dev_idx, (uint64_t)ev->pid << 32 | ev->device);
	if (!*slot) {
		gi->devs = xgrow(gi->devs, &gi->devs_cap, gi->nr_devs + 1, sizeof(*gi->devs));
		dv = &gi->devs[gi->nr_devs++];
		memset(dv, 0, sizeof(*dv));
		dv->d.pid = ev->pid;
		dv->d.device = ev->device;
		u64map__init(&dv->cause_idx);
		*slot = gi->nr_devs;
	}
	dv = &gi->devs[*slot - 1];
	dv->work = xgrow(dv->work, &dv->work_cap, dv->nr_work + 1, sizeof(*dv->work));
	dv->work[dv->nr_work++] = (struct idle_span){ ev->start, ev->end, ev->tid };
	if (!ev->tid)
		return;		/* launcher unknown */
	for (size_t i = dv->d.nr_launchers; i-- > 0; )
		if (dv->d.launchers[i] == ev->tid)
			return;
	dv->d.launchers = xgrow(dv->d.launchers, &dv->launchers_cap, dv->d.nr_launchers + 1,
				sizeof(*dv->d.launchers));
	dv->d.launchers[dv->d.nr_launchers++] = ev->tid;
}

/* ---- charging -------------------------------------------------------------------- */

static int span__cmp(const void *a, const void *b)
{
	const struct idle_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start ? 1 :
	       (x->end < y->end ? -1 : x->end > y->end);
}

static int item__cmp(const void *a, const void *b)
{
	const struct idle_item *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

static int point__cmp(const void *a, const void *b)
{
	const struct idle_point *x = a, *y = b;

	return x->x < y->x ? -1 : x->x > y->x;
}

static int u32__cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cause__cmp(const void *a, const void *b)
{
	const struct gpu_idle_cause *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns ? 1 : (x->frame < y->frame ? -1 : x->frame > y->frame);
}

static int dev__cmp(const void *a, const void *b)
{
	const struct idle_dev *x = a, *y = b;

	return x->d.pid < y->d.pid ? -1 : x->d.pid > y->d.pid ? 1 :
	       (x->d.device < y->d.device ? -1 : x->d.device > y->d.device);
}

/* "[GPU idle devN]" + stack (cached). */
static uint32_t gpu_idle__stack(struct gpu_idle *gi, struct profile *p, uint32_t marker,
				uint32_t stack)
{
	return profile__prepend(p, &gi->stacks, marker, stack);
}

static void gpu_idle__cause(struct idle_dev *dv, uint32_t frame, double ns)
{
	uint64_t *slot = u64map__slot(&dv->cause_idx, frame);

	if (!*slot) {
		dv->d.causes = xgrow(dv->d.causes, &dv->causes_cap, dv->d.nr_causes + 1,
				     sizeof(*dv->d.causes));
		dv->d.causes[dv->d.nr_causes++] = (struct gpu_idle_cause){ frame, 0 };
		*slot = dv->d.nr_causes;
	}
	dv->d.causes[*slot - 1].ns += ns;
}

static double gpu_idle__weight(const struct session *s, double ns)
{
	return ns * s->sample_freq / 1e9;
}

/*
 * Shares [g0, g1) among the active events: at every instant, to the critical
 * thread crit (the launcher of the work that ends the gap: the GPU waited
 * for it) when one of its events covers the instant, else equally among the
 * launching threads with an event covering it; within a thread by the
 * events' densities. Instants no event covers are returned (unexplained).
 */
static double gpu_idle__sweep(struct gpu_idle *gi, uint64_t g0, uint64_t g1, size_t nl,
			      long crit)
{
	size_t np = 0;
	uint64_t prev = g0;
	double unexplained = 0;

	gi->pts = xgrow(gi->pts, &gi->pts_cap, 2 * gi->nr_act + 1, sizeof(*gi->pts));
	for (size_t a = 0; a < gi->nr_act; a++) {
		const struct idle_item *it = gi->act[a].it;

		gi->act[a].in = false;
		gi->pts[np++] = (struct idle_point){ it->lo > g0 ? it->lo : g0, (uint32_t)a, false };
		gi->pts[np++] = (struct idle_point){ it->hi < g1 ? it->hi : g1, (uint32_t)a, true };
	}
	xpu_qsort(gi->pts, np, sizeof(*gi->pts), point__cmp);
	if (gi->dens_cap < nl) {
		gi->dens = xrealloc(gi->dens, nl * sizeof(*gi->dens));
		gi->seen = xrealloc(gi->seen, nl * sizeof(*gi->seen));
		memset(gi->seen, 0, nl * sizeof(*gi->seen));
		gi->dens_cap = nl;
	}
	for (size_t i = 0; i <= np; i++) {
		uint64_t x = i < np ? gi->pts[i].x : g1;

		if (x > prev) {			/* the segment [prev, x) */
			double dt = (double)(x - prev);
			size_t threads = 0;
			bool crit_in;

			gi->stamp++;
			for (size_t a = 0; a < gi->nr_act; a++) {
				uint32_t k = gi->act[a].k;

				if (!gi->act[a].in)
					continue;
				if (gi->seen[k] != gi->stamp) {
					gi->seen[k] = gi->stamp;
					gi->dens[k] = 0;
					threads++;
				}
				gi->dens[k] += gi->act[a].it->density;
			}
			if (!threads)
				unexplained += dt;
			if (crit >= 0 && gi->seen[crit] != gi->stamp)
				crit_in = false;
			else
				crit_in = crit >= 0;
			for (size_t a = 0; threads && a < gi->nr_act; a++) {
				if (!gi->act[a].in || (crit_in && gi->act[a].k != (uint32_t)crit))
					continue;
				gi->act[a].charge += dt * gi->act[a].it->density /
					(gi->dens[gi->act[a].k] * (crit_in ? 1.0 : (double)threads));
			}
			prev = x;
		}
		if (i < np)
			gi->act[gi->pts[i].a].in = !gi->pts[i].end;
	}
	return unexplained;
}

/* The gaps of one device, in time order, clipped to the --time window. */
static struct idle_span *gpu_idle__gaps(struct gpu_idle *gi, const struct session *s,
					struct idle_dev *dv, size_t *nr)
{
	const struct filter *f = &s->filter;
	uint64_t win0 = 0, win1 = UINT64_MAX, *first;
	struct idle_span *gaps = xcalloc(dv->nr_work + 1, sizeof(*gaps));
	size_t n = 0, m = 0;

	xpu_qsort(dv->work, dv->nr_work, sizeof(*dv->work), span__cmp);
	for (size_t i = 0; i < dv->nr_work; i++) {	/* the union, in place */
		if (m && dv->work[i].start <= dv->work[m - 1].end) {
			if (dv->work[i].end > dv->work[m - 1].end)
				dv->work[m - 1].end = dv->work[i].end;
			continue;
		}
		dv->work[m++] = dv->work[i];
	}
	dv->nr_work = m;
	dv->d.first = dv->d.from = dv->work[0].start;
	dv->d.last = dv->work[m - 1].end;
	first = gi->from_start ? u64map__find(&gi->first_cpu, dv->d.pid) : NULL;
	if (first && *first - 1 < dv->d.first) {
		dv->d.from = *first - 1;
		gaps[n++] = (struct idle_span){ dv->d.from, dv->d.first, dv->work[0].tid };
	}
	for (size_t i = 0; i < m; i++) {
		dv->d.busy_ns += dv->work[i].end - dv->work[i].start;
		if (i)
			gaps[n++] = (struct idle_span){ dv->work[i - 1].end, dv->work[i].start,
							dv->work[i].tid };
	}
	dv->d.nr_gaps = n;
	dv->d.idle_ns = dv->d.last - dv->d.from - dv->d.busy_ns;

	if (f->has_start)
		win0 = f->time_base + (uint64_t)(f->start * 1e9 + 0.5);
	if (f->has_end)
		win1 = f->time_base + (uint64_t)(f->end * 1e9 + 0.5);
	m = 0;
	for (size_t i = 0; i < n; i++) {
		struct idle_span g = gaps[i];

		if (g.start < win0)
			g.start = win0;
		if (g.end > win1)
			g.end = win1;
		if (g.end > g.start)
			gaps[m++] = g;
	}
	*nr = m;
	return gaps;
}

static void gpu_idle__device_charge(struct gpu_idle *gi, struct session *s, struct idle_dev *dv,
				    uint32_t unknown_leaf)
{
	struct profile *p = &s->profile;
	size_t nl = dv->d.nr_launchers, nr_gaps;
	struct idle_thread **th = xcalloc(nl + 1, sizeof(*th));
	size_t *next = xcalloc(nl + 1, sizeof(*next));
	struct idle_span *gaps = gpu_idle__gaps(gi, s, dv, &nr_gaps);
	char name[64];
	uint32_t marker, none_frame, none_stack;

	snprintf(name, sizeof(name), "[GPU idle dev%u]", dv->d.device);
	marker = profile__intern_frame(p, FRAME_MARKER, GPU_IDLE_MODULE, name, 0, false);
	none_frame = profile__intern_frame(p, FRAME_MARKER, GPU_IDLE_MODULE, GPU_IDLE_NO_CPU, 0,
					   false);
	none_stack = profile__intern_stack(p, (uint32_t[]){ marker, none_frame }, 2);
	xpu_qsort(dv->d.launchers, nl, sizeof(*dv->d.launchers), u32__cmp);
	for (size_t k = 0; k < nl; k++)
		th[k] = gpu_idle__thread(gi, dv->d.pid, dv->d.launchers[k], false);

	gi->nr_act = 0;
	for (size_t gidx = 0; gidx < nr_gaps; gidx++) {
		uint64_t g0 = gaps[gidx].start, g1 = gaps[gidx].end;
		size_t kept = 0;
		long crit = -1;
		double none;

		/* events that ended before the gap leave; those starting in it come */
		for (size_t a = 0; a < gi->nr_act; a++)
			if (gi->act[a].it->hi > g0)
				gi->act[kept++] = gi->act[a];
		gi->nr_act = kept;
		for (size_t k = 0; k < nl; k++) {
			for (; th[k] && next[k] < th[k]->nr && th[k]->items[next[k]].lo < g1; next[k]++) {
				const struct idle_item *it = &th[k]->items[next[k]];

				if (it->hi <= g0)
					continue;
				gi->act = xgrow(gi->act, &gi->act_cap, gi->nr_act + 1, sizeof(*gi->act));
				gi->act[gi->nr_act++] = (struct idle_active){ it, (uint32_t)k,
									      th[k]->tid, 0, false };
			}
		}
		/* the critical path: the thread that launched the work ending the gap */
		for (size_t k = 0; gaps[gidx].tid && k < nl; k++)
			if (dv->d.launchers[k] == gaps[gidx].tid)
				crit = (long)k;
		none = gpu_idle__sweep(gi, g0, g1, nl, crit);
		for (size_t a = 0; a < gi->nr_act; a++) {
			struct idle_active *ac = &gi->act[a];
			const uint32_t *fr;
			size_t n;

			if (!(ac->charge > 0))
				continue;
			profile__add(p, gpu_idle__stack(gi, p, marker, ac->it->stack), dv->d.pid,
				     ac->tid, ac->it->comm, ORIGIN_GPU_IDLE,
				     gpu_idle__weight(s, ac->charge));
			fr = profile__stack(p, ac->it->stack, &n);
			gpu_idle__cause(dv, n ? fr[n - 1] : unknown_leaf, ac->charge);
			dv->d.charged_ns += ac->charge;
			ac->charge = 0;
		}
		if (none > 0) {
			uint32_t comm = machine__comm(&s->machine, dv->d.pid, dv->d.pid, g0);

			if (filter__match(&s->filter, dv->d.pid, 0, g0, profile__str(p, comm))) {
				profile__add(p, none_stack, dv->d.pid, 0, comm, ORIGIN_GPU_IDLE,
					     gpu_idle__weight(s, none));
				gpu_idle__cause(dv, none_frame, none);
				dv->d.unexplained_ns += none;
			}
		}
	}
	xpu_qsort(dv->d.causes, dv->d.nr_causes, sizeof(*dv->d.causes), cause__cmp);
	free(gaps);
	free(th);
	free(next);
}

static int gpu_idle__finish(struct session *s, void *priv)
{
	struct gpu_idle *gi = priv;
	uint32_t unknown_leaf;
	uint64_t k, v;

	if (!gi->nr_devs)
		return 0;
	for (size_t i = 0; u64map__next(&gi->threads, &i, &k, &v); ) {
		struct idle_thread *t = (struct idle_thread *)(uintptr_t)v;

		xpu_qsort(t->items, t->nr, sizeof(*t->items), item__cmp);
	}
	/* by (pid, device), so the output does not depend on record order */
	xpu_qsort(gi->devs, gi->nr_devs, sizeof(*gi->devs), dev__cmp);
	u64map__exit(&gi->dev_idx);
	u64map__init(&gi->dev_idx);
	for (size_t i = 0; i < gi->nr_devs; i++)
		*u64map__slot(&gi->dev_idx, (uint64_t)gi->devs[i].d.pid << 32 |
			      gi->devs[i].d.device) = i + 1;
	unknown_leaf = profile__intern_frame(&s->profile, FRAME_CPU_USER, "", "[unknown]", 0, true);
	for (size_t i = 0; i < gi->nr_devs; i++)
		gpu_idle__device_charge(gi, s, &gi->devs[i], unknown_leaf);
	return 0;
}

/* ---- --header ------------------------------------------------------------------------ */

int gpu_idle__header_prepare(struct session *s)
{
	if (gpu_join__find(s))
		gpu_idle__attach(s, false);
	return 0;
}

int gpu_idle__header(const struct session *s, FILE *fp)
{
	const struct gpu_idle *gi = gpu_idle__find(s);

	if (!gi || !gi->nr_devs)
		return 0;
	fprintf(fp, "#\n# gpu idle (time with no kernel, copy or memset of the process on a "
		"device)%s:\n", gi->from_start ? ", from the process's first CPU event" : "");
	for (size_t i = 0; i < gi->nr_devs; i++) {
		const struct gpu_idle_device *d = &gi->devs[i].d;
		uint64_t span = d->last - d->from;
		double charged = d->charged_ns + d->unexplained_ns;

		fprintf(fp, "#   pid %u device %u: busy %.1f%% of %.3f ms, idle %.3f ms, %llu gaps\n",
			d->pid, d->device,
			span ? 100.0 * (double)d->busy_ns / (double)span : 100.0, (double)span / 1e6,
			(double)d->idle_ns / 1e6, (unsigned long long)d->nr_gaps);
		if (d->nr_causes)
			fprintf(fp, "#     idle causes (what its %zu launching thread%s did):\n",
				d->nr_launchers, d->nr_launchers == 1 ? "" : "s");
		for (size_t c = 0; c < d->nr_causes && c < GPU_IDLE_TOP_CAUSES; c++) {
			const struct frame *f = profile__frame(&s->profile, d->causes[c].frame);

			fprintf(fp, "#     %5.1f%% %10.3f ms  %s%s%s\n",
				charged > 0 ? 100.0 * d->causes[c].ns / charged : 0,
				d->causes[c].ns / 1e6, f->name, f->module[0] && f->kind != FRAME_MARKER ?
				"  " : "", f->kind != FRAME_MARKER ? f->module : "");
		}
		if (d->nr_causes > GPU_IDLE_TOP_CAUSES)
			fprintf(fp, "#     (%zu more)\n", d->nr_causes - GPU_IDLE_TOP_CAUSES);
	}
	return ferror(fp) ? -EIO : 0;
}
