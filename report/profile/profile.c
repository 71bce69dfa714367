// SPDX-License-Identifier: MIT
/* The profile model: interning of strings, frames and stacks; weighted entries. */
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/profile/profile.h"

void profile__init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	bmap__init(&p->frame_ids);
	bmap__init(&p->stack_ids);
	bmap__init(&p->entry_ids);
	bmap__init(&p->str_ids);
	bmap__init(&p->addr_hist);
	/* stack 0 is the empty stack, string 0 the empty string */
	p->stack_span = xgrow(p->stack_span, &p->stacks_cap, 1, sizeof(*p->stack_span));
	p->stack_span[0] = 0;
	p->nr_stacks = 1;
	profile__intern_str(p, "");
}

/* The memory of the locations and addresses profile_loc.c fills: freed
 * here, with the rest of the profile (profile_loc.c calls profile.c, not
 * the other way). */
static void profile__exit_locs(struct profile *p)
{
	struct profile_lines *l = &p->lines;

	free(l->locs);
	free(l->a.arr);
	free(l->a.span);
	free(l->w);
	bmap__exit(&l->loc_ids, NULL);
	bmap__exit(&l->a.ids, NULL);
	u64map__exit(&l->w_ids);
	memset(l, 0, sizeof(*l));
	free(p->pcs.a.arr);
	free(p->pcs.a.span);
	free(p->pcs.w);
	bmap__exit(&p->pcs.a.ids, NULL);
	bmap__exit(&p->pcs.w_ids, NULL);
	memset(&p->pcs, 0, sizeof(p->pcs));
}

void profile__exit(struct profile *p)
{
	for (size_t i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->frames);
	free(p->stack_frames);
	free(p->stack_span);
	free(p->entries);
	bmap__exit(&p->frame_ids, NULL);
	bmap__exit(&p->stack_ids, NULL);
	bmap__exit(&p->entry_ids, NULL);
	bmap__exit(&p->str_ids, NULL);
	bmap__exit(&p->addr_hist, free);
	profile__exit_locs(p);
	memset(p, 0, sizeof(*p));
}

uint32_t profile__intern_str(struct profile *p, const char *s)
{
	size_t len = strlen(s);
	bool found;
	void **slot = bmap__slot(&p->str_ids, s, len, &found);

	if (found)
		return (uint32_t)(uintptr_t)*slot - 1;
	p->strs = xgrow(p->strs, &p->strs_cap, p->nr_strs + 1, sizeof(*p->strs));
	p->strs[p->nr_strs] = xstrndup(s, len);
	*slot = (void *)(uintptr_t)(p->nr_strs + 1);
	return (uint32_t)p->nr_strs++;
}

uint32_t profile__intern_frame(struct profile *p, enum frame_kind kind,
			       const char *module, const char *name,
			       uint64_t addr, bool unknown)
{
	/* key: kind, module id, name id: both strings are interned first */
	uint32_t key[3] = { kind, profile__intern_str(p, module ? module : ""),
			    profile__intern_str(p, name) };
	bool found;
	void **slot = bmap__slot(&p->frame_ids, key, sizeof(key), &found);
	struct frame *f;

	if (found)
		return (uint32_t)(uintptr_t)*slot - 1;
	p->frames = xgrow(p->frames, &p->frames_cap, p->nr_frames + 1, sizeof(*p->frames));
	f = &p->frames[p->nr_frames];
	f->kind = kind;
	f->module = p->strs[key[1]];
	f->name = p->strs[key[2]];
	f->addr = addr;
	f->unknown = unknown;
	f->inlined = false;		/* callchain.c marks its inlined frames */
	*slot = (void *)(uintptr_t)(p->nr_frames + 1);
	return (uint32_t)p->nr_frames++;
}

uint32_t profile__intern_stack(struct profile *p, const uint32_t *frames, size_t n)
{
	bool found;
	void **slot;

	if (n == 0)
		return 0;
	if (n > PROFILE_MAX_DEPTH) {	/* keep the leaf-most frames */
		frames += n - PROFILE_MAX_DEPTH;
		n = PROFILE_MAX_DEPTH;
	}
	if (p->memo_stack) {
		size_t mn;
		const uint32_t *mf = profile__stack(p, p->memo_stack - 1, &mn);

		if (mn == n && !memcmp(mf, frames, n * sizeof(*frames)))
			return p->memo_stack - 1;
	}
	slot = bmap__slot(&p->stack_ids, frames, n * sizeof(*frames), &found);
	if (found) {
		p->memo_stack = (uint32_t)(uintptr_t)*slot;
		return (uint32_t)(uintptr_t)*slot - 1;
	}
	p->stack_frames = xgrow(p->stack_frames, &p->stack_frames_cap,
				p->nr_stack_frames + n, sizeof(*p->stack_frames));
	memcpy(p->stack_frames + p->nr_stack_frames, frames, n * sizeof(*frames));
	p->stack_span = xgrow(p->stack_span, &p->stacks_cap, p->nr_stacks + 1,
			      sizeof(*p->stack_span));
	p->stack_span[p->nr_stacks] = (uint64_t)p->nr_stack_frames << 16 | n;
	p->nr_stack_frames += n;
	if (n > p->max_depth)
		p->max_depth = (uint32_t)n;
	*slot = (void *)(uintptr_t)(p->nr_stacks + 1);
	p->memo_stack = (uint32_t)p->nr_stacks + 1;
	return (uint32_t)p->nr_stacks++;
}

uint32_t profile__append(struct profile *p, struct u64map *memo, uint32_t stack, uint32_t frame)
{
	uint64_t *slot = u64map__slot(memo, (uint64_t)stack << 32 | frame);
	uint32_t buf[PROFILE_MAX_DEPTH + 1];
	const uint32_t *fr;
	size_t n;

	if (*slot)
		return (uint32_t)(*slot - 1);
	fr = profile__stack(p, stack, &n);
	if (n > PROFILE_MAX_DEPTH)
		n = PROFILE_MAX_DEPTH;
	if (n)		/* the empty stack has no frame array */
		memcpy(buf, fr, n * sizeof(*buf));
	buf[n] = frame;
	*slot = (uint64_t)profile__intern_stack(p, buf, n + 1) + 1;
	return (uint32_t)(*slot - 1);
}

uint32_t profile__prepend(struct profile *p, struct u64map *memo, uint32_t frame, uint32_t stack)
{
	uint64_t *slot = u64map__slot(memo, (uint64_t)frame << 32 | stack);
	uint32_t buf[PROFILE_MAX_DEPTH + 1];
	const uint32_t *fr;
	size_t n;

	if (*slot)
		return (uint32_t)(*slot - 1);
	fr = profile__stack(p, stack, &n);
	if (n > PROFILE_MAX_DEPTH - 1) {	/* the root frame stays; leaf-most frames */
		fr += n - (PROFILE_MAX_DEPTH - 1);
		n = PROFILE_MAX_DEPTH - 1;
	}
	buf[0] = frame;
	if (n)
		memcpy(buf + 1, fr, n * sizeof(*buf));
	*slot = (uint64_t)profile__intern_stack(p, buf, n + 1) + 1;
	return (uint32_t)(*slot - 1);
}

const uint32_t *profile__stack(const struct profile *p, uint32_t id, size_t *n)
{
	uint64_t span = p->stack_span[id];

	*n = span & 0xffff;
	return p->stack_frames + (span >> 16);
}

void profile__add(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid,
		  uint32_t comm, enum entry_origin origin, double weight)
{
	profile__add_n(p, stack, pid, tid, comm, origin, weight, 1);
}

void profile__add_n(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid,
		    uint32_t comm, enum entry_origin origin, double weight, uint64_t count)
{
	uint32_t key[5] = { stack, pid, tid, comm, origin };
	struct profile_entry *e;
	bool found;
	void **slot;

	if (p->memo_entry && !memcmp(key, p->memo_entry_key, sizeof(key))) {
		e = &p->entries[p->memo_entry - 1];
		goto add;
	}
	slot = bmap__slot(&p->entry_ids, key, sizeof(key), &found);
	if (!found) {
		p->entries = xgrow(p->entries, &p->entries_cap, p->nr_entries + 1,
				   sizeof(*p->entries));
		e = &p->entries[p->nr_entries];
		*e = (struct profile_entry){ .stack = stack, .pid = pid, .tid = tid,
					     .comm = comm, .origin = origin };
		*slot = (void *)(uintptr_t)(++p->nr_entries);
	} else {
		e = &p->entries[(uintptr_t)*slot - 1];
	}
	p->memo_entry = (uint32_t)(e - p->entries) + 1;
	memcpy(p->memo_entry_key, key, sizeof(key));
add:
	e->weight += weight;
	e->count += count;
	p->total[origin] += weight;
}

void profile__add_addr(struct profile *p, uint32_t frame, uint64_t addr, double weight)
{
	struct { uint64_t addr; uint32_t frame, pad; } key = { addr, frame, 0 };
	bool found;
	void **slot;

	if (p->memo_addr_w && p->memo_addr == addr && p->memo_addr_frame == frame) {
		*p->memo_addr_w += weight;
		return;
	}
	slot = bmap__slot(&p->addr_hist, &key, sizeof(key), &found);
	if (!found)
		*slot = xzalloc(sizeof(double));	/* heap cell: the memo survives rehashes */
	*(double *)*slot += weight;
	p->memo_addr_w = *slot;
	p->memo_addr = addr;
	p->memo_addr_frame = frame;
}

double profile__addr_weight(const struct profile *p, uint32_t frame, uint64_t addr)
{
	struct { uint64_t addr; uint32_t frame, pad; } key = { addr, frame, 0 };
	double *w = bmap__find(&p->addr_hist, &key, sizeof(key));

	return w ? *w : 0;
}

bool profile__addr_next(const struct profile *p, size_t *iter, uint32_t *frame, uint64_t *addr,
			double *weight)
{
	struct bmap_entry *e;
	const struct { uint64_t addr; uint32_t frame, pad; } *key;

	if (!bmap__next(&p->addr_hist, iter, &e))
		return false;
	key = e->key;
	*frame = key->frame;
	*addr = key->addr;
	*weight = *(double *)e->val;
	return true;
}

double profile__total(const struct profile *p, enum profile_view view)
{
	double t = 0;

	for (unsigned o = 1; o <= ORIGIN_MAX; o <<= 1)
		if (view & o)
			t += p->total[o];
	return t;
}

const char *profile_view__name(enum profile_view view)
{
	switch (view) {
	case VIEW_CPU:		return "CPU only";
	case VIEW_GPU:		return "GPU only";
	case VIEW_MERGED:	return "CPU+GPU";
	case VIEW_OFFCPU:	return "off-CPU";
	case VIEW_WALL:		return "wall (on+off CPU)";
	case VIEW_GPU_IDLE:	return "GPU idle";
	case VIEW_SYNC_WAIT:	return "sync wait";
	case VIEW_GPU_MEM:	return "GPU memory";
	}
	return "?";
}
