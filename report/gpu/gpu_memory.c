// SPDX-License-Identifier: MIT
/* The live-set computation of --gpu-memory: see gpu_memory.h and
 * Documentation/design-gpu-memory.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu_memory.h"

#define NEVER UINT64_MAX

void gpu_mem__init(struct gpu_mem *m)
{
	memset(m, 0, sizeof(*m));
	u64map__init(&m->space_idx);
}

void gpu_mem__exit(struct gpu_mem *m)
{
	free(m->evs);
	free(m->spaces);
	free(m->blks);
	free(m->rows);
	u64map__exit(&m->space_idx);
	memset(m, 0, sizeof(*m));
}

void gpu_mem__add(struct gpu_mem *m, const struct gpu_mem_ev *ev)
{
	m->evs = xgrow(m->evs, &m->evs_cap, m->nr_evs + 1, sizeof(*m->evs));
	m->evs[m->nr_evs++] = *ev;
}

static uint32_t gpu_mem__space(struct gpu_mem *m, uint32_t pid, uint32_t device)
{
	uint64_t *slot = u64map__slot(&m->space_idx, (uint64_t)pid << 32 | device);

	if (!*slot) {
		m->spaces = xgrow(m->spaces, &m->spaces_cap, m->nr_spaces + 1, sizeof(*m->spaces));
		m->spaces[m->nr_spaces] = (struct gpu_mem_space){ .pid = pid, .device = device };
		*slot = ++m->nr_spaces;
	}
	return (uint32_t)(*slot - 1);
}

void gpu_mem__baseline(struct gpu_mem *m, uint32_t pid, uint32_t device, uint64_t time,
		       uint64_t used_before, bool attached)
{
	uint32_t i = gpu_mem__space(m, pid, device);	/* before m->spaces is read */
	struct gpu_mem_space *sp = &m->spaces[i];

	if (sp->has_baseline)
		return;
	sp->has_baseline = true;
	sp->attached = attached;
	sp->used_before = used_before;
	sp->baseline_time = time;
}

void gpu_mem__oom(struct gpu_mem *m, uint32_t pid, int32_t device, uint64_t time,
		  uint64_t bytes, uint32_t stack, uint32_t tid)
{
	struct gpu_mem_space *sp;
	uint32_t dev = 0;

	if (device >= 0) {
		dev = (uint32_t)device;
	} else {	/* the process's first device with an allocation */
		for (size_t i = 0; i < m->nr_evs; i++)
			if (m->evs[i].pid == pid && m->evs[i].op == GPU_MEM_ALLOC &&
			    m->evs[i].device >= 0) {
				dev = (uint32_t)m->evs[i].device;
				break;
			}
	}
	dev = gpu_mem__space(m, pid, dev);	/* may move m->spaces */
	sp = &m->spaces[dev];
	if (sp->oom && sp->oom_time <= time)
		return;
	sp->oom = true;
	sp->oom_time = time;
	sp->oom_bytes = bytes;
	sp->oom_stack = stack;
	sp->oom_tid = tid;
}

/* The events in time order, ties in the order given. */
static void gpu_mem__sort(struct gpu_mem *m)
{
	struct xpu_sort_pair *pairs = xcalloc(m->nr_evs + 1, sizeof(*pairs));
	struct gpu_mem_ev *sorted = xcalloc(m->nr_evs + 1, sizeof(*sorted));

	for (size_t i = 0; i < m->nr_evs; i++)
		pairs[i] = (struct xpu_sort_pair){ m->evs[i].time, i };
	xpu_radix_sort(pairs, m->nr_evs);
	for (size_t i = 0; i < m->nr_evs; i++)
		sorted[i] = m->evs[pairs[i].val];
	free(m->evs);
	free(pairs);
	m->evs = sorted;
	m->evs_cap = m->nr_evs + 1;
}

/* The state of (pid, layer, address) in the replay: 0 never seen, a block
 * index + 1 while live, FREED once freed and not allocated again. */
#define FREED ((void *)UINTPTR_MAX)
struct gpu_mem_addr {
	uint64_t addr;
	uint32_t pid, layer;
};

static void **gpu_mem__addr_slot(struct bmap *state, const struct gpu_mem_ev *ev)
{
	struct gpu_mem_addr k = { ev->addr, ev->pid, ev->layer };
	bool found;

	return bmap__slot(state, &k, sizeof(k), &found);
}

/* Each allocation a block; each free ends its block's life, or is counted
 * as unknown or double. An allocation at a live address ends the block
 * there (its free was not seen). */
static void gpu_mem__pair(struct gpu_mem *m)
{
	struct bmap state;

	bmap__init(&state);
	for (size_t i = 0; i < m->nr_evs; i++) {
		const struct gpu_mem_ev *ev = &m->evs[i];
		void **slot = gpu_mem__addr_slot(&state, ev);
		uintptr_t v = (uintptr_t)*slot;

		if (ev->op == GPU_MEM_FREE) {
			m->nr_frees[ev->layer]++;
			if (*slot == FREED)
				m->double_frees[ev->layer]++;
			else if (!v)
				m->unknown_frees[ev->layer]++;
			else
				m->blks[v - 1].free_seq = i;
			if (v)
				*slot = FREED;
			continue;
		}
		if (v && *slot != FREED)
			m->blks[v - 1].free_seq = i;
		m->blks = xgrow(m->blks, &m->blks_cap, m->nr_blks + 1, sizeof(*m->blks));
		m->blks[m->nr_blks] = (struct gpu_mem_blk){
			.ev = (uint32_t)i, .alloc_seq = i, .free_seq = NEVER,
			.space = gpu_mem__space(m, ev->pid, ev->device < 0 ? 0 : (uint32_t)ev->device),
		};
		*slot = (void *)(uintptr_t)++m->nr_blks;
	}
	bmap__exit(&state, NULL);
}

/* The last event position at or before time t (-1 as NEVER: none). */
static uint64_t gpu_mem__seq_at(const struct gpu_mem *m, uint64_t t)
{
	size_t lo = 0, hi = m->nr_evs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->evs[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : NEVER;
}

/* The peaks, replayed in order over the paired blocks. */
struct gpu_mem_ctx {
	struct gpu_mem *m;
	const struct gpu_mem_query *q;
};

static void gpu_mem__peak_point(const struct gpu_mem_point *pt, void *priv)
{
	struct gpu_mem_ctx *c = priv;
	struct gpu_mem_space *sp = &c->m->spaces[pt->space];
	enum gpu_mem_layer layer = gpu_mem_space__layer(sp);
	uint64_t alloc = pt->live[layer], res = pt->live[GPU_MEM_CUDA];

	if (pt->ev->time < c->q->start || pt->ev->time > c->q->end)
		return;
	if (alloc > sp->peak) {
		sp->peak = alloc;
		sp->peak_time = pt->ev->time;
		sp->peak_seq = (uint64_t)(pt->ev - c->m->evs);
		sp->reserved_at_peak = res;
	}
	if (res > sp->reserved_peak) {
		sp->reserved_peak = res;
		sp->reserved_peak_time = pt->ev->time;
	}
	if (pt->live[GPU_MEM_OTHER] > sp->other_peak) {
		sp->other_peak = pt->live[GPU_MEM_OTHER];
		sp->other_peak_time = pt->ev->time;
	}
	if (pt->ev->op == GPU_MEM_ALLOC && pt->ev->layer == layer && !pt->alloc) {
		sp->nr_allocs++;
		sp->alloc_bytes += pt->ev->bytes;
	}
}

void gpu_mem__replay(const struct gpu_mem *m,
		     void (*fn)(const struct gpu_mem_point *pt, void *priv), void *priv)
{
	uint64_t (*live)[GPU_MEM_NR_LAYERS] = xcalloc(m->nr_spaces + 1, sizeof(*live));
	uint64_t (*kind)[GPU_MEM_NR_KINDS] = xcalloc(m->nr_spaces + 1, sizeof(*kind));
	uint32_t *blk_of = xcalloc(m->nr_evs + 1, sizeof(*blk_of));	/* event -> blk + 1 */
	uint32_t *freed_by = xcalloc(m->nr_evs + 1, sizeof(*freed_by));

	for (size_t b = 0; b < m->nr_blks; b++) {
		blk_of[m->blks[b].ev] = (uint32_t)b + 1;
		if (m->blks[b].free_seq != NEVER)
			freed_by[m->blks[b].free_seq] = (uint32_t)b + 1;
	}
	for (size_t i = 0; i < m->nr_evs; i++) {
		const struct gpu_mem_ev *ev = &m->evs[i];
		const struct gpu_mem_blk *fb = freed_by[i] ? &m->blks[freed_by[i] - 1] : NULL;
		struct gpu_mem_point pt = { .ev = ev };

		if (fb) {	/* a free, or an allocation over an unfreed block */
			const struct gpu_mem_ev *a = &m->evs[fb->ev];

			live[fb->space][a->layer] -= a->bytes;
			if (a->layer != GPU_MEM_BLOCK)
				kind[fb->space][a->kind % GPU_MEM_NR_KINDS] -= a->bytes;
			pt.alloc = a;
			pt.space = fb->space;
		}
		if (blk_of[i]) {
			const struct gpu_mem_blk *b = &m->blks[blk_of[i] - 1];

			live[b->space][ev->layer] += ev->bytes;
			if (ev->layer != GPU_MEM_BLOCK)
				kind[b->space][ev->kind % GPU_MEM_NR_KINDS] += ev->bytes;
			pt.space = b->space;
			pt.alloc = NULL;
		} else if (!fb) {
			continue;	/* an unknown or double free */
		}
		memcpy(pt.live, live[pt.space], sizeof(pt.live));
		memcpy(pt.kind, kind[pt.space], sizeof(pt.kind));
		fn(&pt, priv);
	}
	free(freed_by);
	free(blk_of);
	free(kind);
	free(live);
}

static bool gpu_mem_blk__live(const struct gpu_mem_blk *b, uint64_t seq)
{
	return seq != NEVER && b->alloc_seq <= seq && (b->free_seq == NEVER || b->free_seq > seq);
}

/* Each space's totals at the window's start (its live blocks then): the
 * peak's first candidate. */
static void gpu_mem__window_start(struct gpu_mem *m, const struct gpu_mem_query *q)
{
	uint64_t seq = q->start ? gpu_mem__seq_at(m, q->start - 1) : NEVER;

	for (size_t i = 0; i < m->nr_spaces; i++)
		m->spaces[i].peak_seq = seq;
	if (seq == NEVER)
		return;
	for (size_t b = 0; b < m->nr_blks; b++) {
		const struct gpu_mem_blk *bk = &m->blks[b];
		struct gpu_mem_space *sp = &m->spaces[bk->space];
		const struct gpu_mem_ev *a = &m->evs[bk->ev];

		if (!gpu_mem_blk__live(bk, seq))
			continue;
		if (a->layer == gpu_mem_space__layer(sp))
			sp->peak += a->bytes;
		if (a->layer == GPU_MEM_CUDA)
			sp->reserved_at_peak += a->bytes;
		if (a->layer == GPU_MEM_OTHER)
			sp->other_peak += a->bytes;
	}
	for (size_t i = 0; i < m->nr_spaces; i++) {
		struct gpu_mem_space *sp = &m->spaces[i];

		sp->peak_time = sp->peak ? q->start : 0;
		sp->reserved_peak = sp->reserved_at_peak;
		sp->reserved_peak_time = sp->reserved_peak ? q->start : 0;
		sp->other_peak_time = sp->other_peak ? q->start : 0;
	}
}

/* The moment of a space's rows, as an event position (NEVER: none). */
static uint64_t gpu_mem__taken_seq(struct gpu_mem *m, struct gpu_mem_space *sp,
				   const struct gpu_mem_query *q)
{
	switch (q->mode) {
	case GPU_MEM_PEAK:
		if (q->oom_first && sp->oom) {
			sp->taken = sp->oom_time;
			sp->taken_at_oom = true;
			return gpu_mem__seq_at(m, sp->oom_time);
		}
		sp->taken = sp->peak_time;
		return sp->peak_seq;
	case GPU_MEM_AT:
		sp->taken = q->at;
		return gpu_mem__seq_at(m, q->at);
	case GPU_MEM_LEAK:
		sp->taken = q->end;
		return gpu_mem__seq_at(m, q->end);
	case GPU_MEM_ALLOCS:
		break;
	}
	sp->taken = 0;
	return NEVER;
}

/* A block into its space's row of (stack, tid). */
struct gpu_mem_row_key {
	uint32_t space, stack, tid;
};

static void gpu_mem__row_add(struct gpu_mem *m, struct bmap *idx, const struct gpu_mem_blk *b,
			     uint64_t end)
{
	const struct gpu_mem_ev *a = &m->evs[b->ev];
	struct gpu_mem_row_key k = { b->space, a->stack, a->tid };
	struct gpu_mem_row *r;
	bool found;
	void **slot = bmap__slot(idx, &k, sizeof(k), &found);

	if (!found) {
		m->rows = xgrow(m->rows, &m->rows_cap, m->nr_rows + 1, sizeof(*m->rows));
		m->rows[m->nr_rows] = (struct gpu_mem_row){ .space = b->space, .stack = a->stack,
							    .tid = a->tid, .oldest = a->time };
		*slot = (void *)(uintptr_t)++m->nr_rows;
	}
	r = &m->rows[(uintptr_t)*slot - 1];
	r->bytes += a->bytes;
	r->count++;
	if (a->time < r->oldest)
		r->oldest = a->time;
	if (end >= a->time)
		r->age_sum += (double)(end - a->time);
}

static int gpu_mem__row_cmp(const void *pa, const void *pb)
{
	const struct gpu_mem_row *a = pa, *b = pb;

	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The rows: each space's blocks of its counted layer, live at its moment
 * (allocated in the window, for alloc). */
static void gpu_mem__rows(struct gpu_mem *m, const struct gpu_mem_query *q)
{
	uint64_t *taken = xcalloc(m->nr_spaces + 1, sizeof(*taken));
	uint64_t end_seq = gpu_mem__seq_at(m, q->end);
	struct bmap idx;

	bmap__init(&idx);
	for (size_t i = 0; i < m->nr_spaces; i++)
		taken[i] = gpu_mem__taken_seq(m, &m->spaces[i], q);
	for (size_t i = 0; i < m->nr_blks; i++) {
		const struct gpu_mem_blk *b = &m->blks[i];
		struct gpu_mem_space *sp = &m->spaces[b->space];
		const struct gpu_mem_ev *a = &m->evs[b->ev];
		bool in;

		if (a->layer != gpu_mem_space__layer(sp))
			continue;
		if (gpu_mem_blk__live(b, end_seq)) {
			sp->live_end += a->bytes;
			sp->nr_live_end++;
		}
		if (q->mode == GPU_MEM_ALLOCS)
			in = a->time >= q->start && a->time <= q->end;
		else
			in = gpu_mem_blk__live(b, taken[b->space]);
		if (!in)
			continue;
		if (q->mode != GPU_MEM_ALLOCS)
			sp->live_taken += a->bytes;
		gpu_mem__row_add(m, &idx, b, q->mode == GPU_MEM_LEAK ? q->end : sp->taken);
	}
	bmap__exit(&idx, NULL);
	free(taken);
	xpu_qsort(m->rows, m->nr_rows, sizeof(*m->rows), gpu_mem__row_cmp);
}

struct gpu_mem_at {			/* a block's allocation: space, address */
	uint64_t space, addr;
};

static int gpu_mem_at__cmp(const void *pa, const void *pb)
{
	const struct gpu_mem_at *a = pa, *b = pb;

	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Whether a block of space was ever allocated in [addr, addr + bytes):
 * at[] sorted by (space, address). */
static bool gpu_mem__holds_block(const struct gpu_mem_at *at, size_t n, uint64_t space,
				 uint64_t addr, uint64_t bytes)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at[mid].space < space || (at[mid].space == space && at[mid].addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && at[lo].space == space && at[lo].addr - addr < bytes;
}

/* A PyTorch space's CUDA-level allocations that never held one of its
 * blocks are not its allocator's segments: GPU_MEM_OTHER. Their frees keep
 * their layer (the replay takes the allocation's). */
static void gpu_mem__segments(struct gpu_mem *m)
{
	struct gpu_mem_at *at = xcalloc(m->nr_blks + 1, sizeof(*at));
	size_t n = 0;

	for (size_t b = 0; b < m->nr_blks; b++)
		if (m->evs[m->blks[b].ev].layer == GPU_MEM_BLOCK)
			at[n++] = (struct gpu_mem_at){ m->blks[b].space, m->evs[m->blks[b].ev].addr };
	xpu_qsort(at, n, sizeof(*at), gpu_mem_at__cmp);
	for (size_t b = 0; b < m->nr_blks; b++) {
		struct gpu_mem_ev *a = &m->evs[m->blks[b].ev];

		if (a->layer == GPU_MEM_CUDA && m->spaces[m->blks[b].space].torch &&
		    !gpu_mem__holds_block(at, n, m->blks[b].space, a->addr, a->bytes))
			a->layer = GPU_MEM_OTHER;
	}
	free(at);
}

static int gpu_mem__space_cmp(const void *pa, const void *pb)
{
	const struct gpu_mem_space *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

/* Spaces ordered by (pid, device), the blocks' indices renumbered. */
static void gpu_mem__order_spaces(struct gpu_mem *m)
{
	struct gpu_mem_space *old = xcalloc(m->nr_spaces + 1, sizeof(*old));
	uint32_t *to = xcalloc(m->nr_spaces + 1, sizeof(*to));

	memcpy(old, m->spaces, m->nr_spaces * sizeof(*old));
	xpu_qsort(m->spaces, m->nr_spaces, sizeof(*m->spaces), gpu_mem__space_cmp);
	for (size_t i = 0; i < m->nr_spaces; i++) {
		uint64_t *slot = u64map__slot(&m->space_idx, (uint64_t)m->spaces[i].pid << 32 |
					      m->spaces[i].device);

		to[*slot - 1] = (uint32_t)i;
		*slot = i + 1;
	}
	for (size_t b = 0; b < m->nr_blks; b++)
		m->blks[b].space = to[m->blks[b].space];
	free(to);
	free(old);
}

void gpu_mem__compute(struct gpu_mem *m, const struct gpu_mem_query *q)
{
	struct gpu_mem_ctx c = { m, q };

	if (m->computed)
		return;
	m->computed = true;
	gpu_mem__sort(m);
	gpu_mem__pair(m);
	gpu_mem__order_spaces(m);
	for (size_t b = 0; b < m->nr_blks; b++)	/* a space with blocks counts blocks */
		if (m->evs[m->blks[b].ev].layer == GPU_MEM_BLOCK)
			m->spaces[m->blks[b].space].torch = true;
	gpu_mem__segments(m);
	gpu_mem__window_start(m, q);
	gpu_mem__replay(m, gpu_mem__peak_point, &c);
	gpu_mem__rows(m, q);
}

static const char *const gpu_mem__modes[] = {
	[GPU_MEM_PEAK] = "peak", [GPU_MEM_ALLOCS] = "alloc", [GPU_MEM_LEAK] = "leak",
	[GPU_MEM_AT] = "time",
};

const char *gpu_mem_mode__name(enum gpu_mem_mode mode)
{
	return gpu_mem__modes[mode];
}

int gpu_mem_mode__parse(const char *s)
{
	for (int i = 0; i < GPU_MEM_AT; i++)
		if (!strcmp(s, gpu_mem__modes[i]))
			return i;
	return -1;
}

const char *gpu_mem__bytes_str(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
	return buf;
}
