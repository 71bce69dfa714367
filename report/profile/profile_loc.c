// SPDX-License-Identifier: MIT
/* The profile's source locations: (file, line) ids, per-stack location
 * arrays and the weight of each entry under each array (profile.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/profile/profile.h"

uint32_t profile__intern_loc(struct profile *p, const char *file, uint32_t line)
{
	struct profile_lines *l = &p->lines;
	uint32_t key[2] = { profile__intern_str(p, file), line };
	bool found;
	void **slot = bmap__slot(&l->loc_ids, key, sizeof(key), &found);

	if (found)
		return (uint32_t)(uintptr_t)*slot;
	if (!l->nr_locs) {		/* id 0: no location */
		l->locs = xgrow(l->locs, &l->locs_cap, 1, sizeof(*l->locs));
		l->locs[l->nr_locs++] = (struct profile_loc){ 0, 0 };
	}
	l->locs = xgrow(l->locs, &l->locs_cap, l->nr_locs + 1, sizeof(*l->locs));
	l->locs[l->nr_locs] = (struct profile_loc){ key[0], key[1] };
	*slot = (void *)(uintptr_t)l->nr_locs;
	return (uint32_t)l->nr_locs++;
}

/* The id of the array of n pairs of elem-byte elements (a new one when
 * not seen before); 0 for one whose values are all 0 (nothing to keep) or
 * of over 0xffff pairs. */
static uint32_t profile_arrays__intern(struct profile_arrays *a, const void *pairs, size_t n,
				       size_t elem)
{
	static const char zero[sizeof(uint64_t)];
	size_t bytes = 2 * n * elem, i;
	bool found;
	void **slot;

	for (i = 0; i < n && !memcmp((const char *)pairs + (2 * i + 1) * elem, zero, elem); i++)
		;
	if (i == n || n > 0xffff)
		return 0;
	if (a->memo) {
		uint64_t span = a->span[a->memo - 1];

		if ((span & 0xffff) == n &&
		    !memcmp((const char *)a->arr + (span >> 16) * elem, pairs, bytes))
			return a->memo - 1;
	}
	slot = bmap__slot(&a->ids, pairs, bytes, &found);
	if (found) {
		a->memo = (uint32_t)(uintptr_t)*slot + 1;
		return (uint32_t)(uintptr_t)*slot;
	}
	if (!a->nr_span) {		/* id 0: no array */
		a->span = xgrow(a->span, &a->span_cap, 1, sizeof(*a->span));
		a->span[a->nr_span++] = 0;
	}
	a->arr = xgrow(a->arr, &a->arr_cap, a->nr_arr + 2 * n, elem);
	memcpy((char *)a->arr + a->nr_arr * elem, pairs, bytes);
	a->span = xgrow(a->span, &a->span_cap, a->nr_span + 1, sizeof(*a->span));
	a->span[a->nr_span] = (uint64_t)a->nr_arr << 16 | n;
	a->nr_arr += 2 * n;
	*slot = (void *)(uintptr_t)a->nr_span;
	a->memo = (uint32_t)a->nr_span + 1;
	return (uint32_t)a->nr_span++;
}

static const void *profile_arrays__get(const struct profile_arrays *a, uint32_t id, size_t *n,
				       size_t elem)
{
	uint64_t span = a->span[id];

	*n = span & 0xffff;
	return (const char *)a->arr + (span >> 16) * elem;
}

uint32_t profile__intern_locs(struct profile *p, const uint32_t *pairs, size_t n)
{
	return profile_arrays__intern(&p->lines.a, pairs, n, sizeof(*pairs));
}

const uint32_t *profile__locs(const struct profile *p, uint32_t id, size_t *n)
{
	return profile_arrays__get(&p->lines.a, id, n, sizeof(uint32_t));
}

/* Lines an array of np pairs resolved with a stack (frame id first) up with
 * the n frames the stack has now: put(out, i, pairs, k) with the pair k of
 * frames[i], or k = -1 for a frame the array does not have at this place.
 * frame_of(pairs, k): pair k's frame. */
static void profile__line_up(const struct profile *p, const uint32_t *frames, size_t n,
			     const void *pairs, size_t np,
			     uint32_t (*frame_of)(const void *pairs, size_t k),
			     void (*put)(void *out, size_t i, const void *pairs, long k), void *out)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		/* after a report's marker frame, the resolved frames may go on
		 * further down than where the array stands: the root part was
		 * cut ("[autograd backward]": the engine thread's start) */
		if (i && j < np && frame_of(pairs, j) != frames[i] &&
		    profile__frame(p, frames[i - 1])->kind == FRAME_MARKER)
			for (size_t k = j + 1; k < np; k++)
				if (frame_of(pairs, k) == frames[i]) {
					j = k;
					break;
				}
		/* a frame the array does not have at this place: added after
		 * resolving (an NVTX range, a borrowed caller, a reason) */
		put(out, i, pairs, j < np && frame_of(pairs, j) == frames[i] ? (long)j++ : -1);
	}
}

static uint32_t profile__loc_frame(const void *pairs, size_t k)
{
	return ((const uint32_t *)pairs)[2 * k];
}

static uint32_t profile__pc_frame(const void *pairs, size_t k)
{
	return (uint32_t)((const uint64_t *)pairs)[2 * k];
}

static void profile__put_loc(void *out, size_t i, const void *pairs, long k)
{
	((uint32_t *)out)[i] = k < 0 ? 0 : ((const uint32_t *)pairs)[2 * k + 1];
}

static void profile__put_pc(void *out, size_t i, const void *pairs, long k)
{
	((uint64_t *)out)[i] = k < 0 ? 0 : ((const uint64_t *)pairs)[2 * k + 1];
}

void profile__stack_locs(const struct profile *p, uint32_t locs, const uint32_t *frames,
			 size_t n, uint32_t *out)
{
	const uint32_t *pr = NULL;
	size_t np = 0;

	if (locs)
		pr = profile__locs(p, locs, &np);
	profile__line_up(p, frames, n, pr, np, profile__loc_frame, profile__put_loc, out);
}

void profile__add_locs(struct profile *p, uint32_t locs, double weight)
{
	struct profile_lines *l = &p->lines;
	uint32_t entry;
	uint64_t *slot;

	if (!locs || !p->memo_entry)
		return;
	entry = p->memo_entry - 1;	/* the entry of the last profile__add() */
	if (l->memo_w && l->w[l->memo_w - 1].entry == entry && l->w[l->memo_w - 1].locs == locs) {
		l->w[l->memo_w - 1].weight += weight;
		return;
	}
	slot = u64map__slot(&l->w_ids, (uint64_t)entry << 32 | locs);
	if (!*slot) {
		l->w = xgrow(l->w, &l->w_cap, l->nr_w + 1, sizeof(*l->w));
		l->w[l->nr_w] = (struct profile_locw){ entry, locs, 0 };
		*slot = ++l->nr_w;
	}
	l->memo_w = (uint32_t)*slot;
	l->w[*slot - 1].weight += weight;
}

const char *profile__loc_str(const struct profile *p, uint32_t id, char *buf, size_t size)
{
	const struct profile_loc *l;
	const char *file, *slash;

	if (!size)
		return buf;
	buf[0] = '\0';
	if (!id || id >= p->lines.nr_locs)
		return buf;
	l = profile__loc(p, id);
	file = profile__str(p, l->file);
	slash = strrchr(file, '/');
	snprintf(buf, size, "%s:%u", slash ? slash + 1 : file, l->line);
	return buf;
}

uint32_t profile__intern_pcs(struct profile *p, const uint64_t *pairs, size_t n)
{
	return profile_arrays__intern(&p->pcs.a, pairs, n, sizeof(*pairs));
}

const uint64_t *profile__pcs(const struct profile *p, uint32_t id, size_t *n)
{
	return profile_arrays__get(&p->pcs.a, id, n, sizeof(uint64_t));
}

void profile__stack_pcs(const struct profile *p, uint32_t pcs, const uint32_t *frames, size_t n,
			uint64_t *out)
{
	const uint64_t *pr = NULL;
	size_t np = 0;

	if (pcs)
		pr = profile__pcs(p, pcs, &np);
	profile__line_up(p, frames, n, pr, np, profile__pc_frame, profile__put_pc, out);
}

void profile__add_pcs(struct profile *p, uint32_t locs, uint32_t pcs, double weight)
{
	struct profile_pcs *c = &p->pcs;
	uint32_t key[3];
	bool found;
	void **slot;

	if (!c->on || !p->memo_entry || (!locs && !pcs))
		return;
	key[0] = p->memo_entry - 1;	/* the entry of the last profile__add() */
	key[1] = locs;
	key[2] = pcs;
	slot = bmap__slot(&c->w_ids, key, sizeof(key), &found);
	if (!found) {
		c->w = xgrow(c->w, &c->w_cap, c->nr_w + 1, sizeof(*c->w));
		c->w[c->nr_w] = (struct profile_pcw){ key[0], locs, pcs, 0 };
		*slot = (void *)(uintptr_t)++c->nr_w;
	}
	c->w[(uintptr_t)*slot - 1].weight += weight;
}

void loc_vote__add(struct loc_vote *v, uint32_t key, uint32_t loc, double w)
{
	uint64_t *slot = u64map__slot(&v->w, (uint64_t)key << 32 | loc);
	double d;

	memcpy(&d, slot, sizeof(d));
	d += w;
	memcpy(slot, &d, sizeof(d));
}

void loc_vote__best(struct loc_vote *v, uint32_t *best, size_t nr)
{
	double *bw = xcalloc(nr + 1, sizeof(*bw));
	uint64_t k, val;

	memset(best, 0, nr * sizeof(*best));
	for (size_t it = 0; u64map__next(&v->w, &it, &k, &val); ) {
		uint32_t key = (uint32_t)(k >> 32), loc = (uint32_t)k;
		double d;

		memcpy(&d, &val, sizeof(d));
		if (key >= nr || d <= 0)
			continue;
		/* the heaviest; on a tie the location seen first in the trace */
		if (d > bw[key] || (d == bw[key] && loc < best[key])) {
			bw[key] = d;
			best[key] = loc;
		}
	}
	free(bw);
}

void loc_vote__exit(struct loc_vote *v)
{
	u64map__exit(&v->w);
}
