/* SPDX-License-Identifier: MIT */
/*
 * The body of unwind_simple__frames() (common/unwind_simple.h), inline, for
 * a caller whose rule and read functions are known where it is compiled
 * (cupti/walk/walk_probe.c): the compiler then calls neither through a pointer,
 * a few nanoseconds a frame on a launch's path. common/unwind_simple_walk.c
 * makes unwind_simple__frames() of it; both are the same code.
 */
#ifndef XPU_COMMON_UNWIND_SIMPLE_WALK_H
#define XPU_COMMON_UNWIND_SIMPLE_WALK_H

#include "common/unwind_simple.h"

/* A cfi_state cut down to the registers a simple rule reads. */
struct simple_state {
	uint64_t pc, sp, bp;
	bool sp_set, bp_set, initial;
	bool bp_start;			/* bp is still the start's (same-value rules) */
	bool bp_pend;			/* bp was read from bp_addr: logged once used */
	uint64_t bp_addr;
};

/*
 * The reads a walk's frames depend on, in the order they were made, for a
 * caller that checks them again instead of walking (cupti/walk/walk_probe.c's
 * memo): every return-address, CFA and rsp word, and a saved rbp only once
 * a later rule takes a CFA or an address from it (a frame-pointer-less
 * program keeps other values in rbp, which change from call to call and
 * change no frame). The caller's rule function may log its own reads (the
 * code it checks) with unwind_simple__log(). bp_used: the start's rbp went
 * into a frame.
 */
struct unwind_simple_read {
	uint64_t addr, val;
};

struct unwind_simple_trail {
	struct unwind_simple_read *reads;
	unsigned nr, max;		/* nr > max: more than could be kept */
	bool bp_used;
};

static inline void unwind_simple__log(struct unwind_simple_trail *t, uint64_t addr, uint64_t val)
{
	if (!t)
		return;
	if (t->nr < t->max)
		t->reads[t->nr] = (struct unwind_simple_read){ addr, val };
	t->nr++;
}

/* rbp's value goes into a frame: log what it came from (the word it was
 * read from holds it) */
static inline void simple__bp_used(const struct simple_state *st, struct unwind_simple_trail *t)
{
	if (!t)
		return;
	if (st->bp_start)
		t->bp_used = true;
	if (st->bp_pend)
		unwind_simple__log(t, st->bp_addr, st->bp);
}

/* One register of the caller's frame: unwind_cfi__step()'s cases. */
static inline __attribute__((always_inline)) void simple__reg(const struct unwind_simple_reg *r, const struct simple_state *st,
			uint64_t cur, bool cur_set, bool cfa_ok, uint64_t cfa,
			unwind_simple_read_fn read, void *arg, uint64_t *val, bool *set,
			struct unwind_simple_trail *t, uint64_t *from)
{
	bool base_set = r->base == UNWIND_SIMPLE_RSP ? st->sp_set : st->bp_set;
	uint64_t base = r->base == UNWIND_SIMPLE_RSP ? st->sp : st->bp;

	*from = 0;
	if (r->kind == UNWIND_SIMPLE_AT_REG && r->base == UNWIND_SIMPLE_RBP && cfa_ok)
		simple__bp_used(st, t);

	*set = false;
	switch (r->kind) {
	case UNWIND_SIMPLE_AT_REG:	/* cfi__eval(): the CFA first, then the register */
		*set = cfa_ok && base_set && read(base + (uint64_t)(int64_t)r->n, val, arg);
		if (*set)
			*from = base + (uint64_t)(int64_t)r->n;
		break;
	case UNWIND_SIMPLE_SAME:
		*val = cur;
		*set = cur_set;
		break;
	case UNWIND_SIMPLE_AT:
		*set = cfa_ok && read(cfa + (uint64_t)(int64_t)r->n, val, arg);
		if (*set)
			*from = cfa + (uint64_t)(int64_t)r->n;
		break;
	case UNWIND_SIMPLE_VAL:
		*val = cfa + (uint64_t)(int64_t)r->n;
		*set = cfa_ok;
		break;
	}
}

/* 1: next has a pc, 0: unwinding ends here, -1: no simple rule. */
static inline __attribute__((always_inline)) int simple__step(const struct simple_state *st, struct simple_state *next,
			unwind_simple_rule_fn rule, unwind_simple_read_fn read, void *arg,
			struct unwind_simple_trail *t)
{
	uint64_t from;
	struct unwind_simple_rule r;
	uint64_t cfa = 0, pc = 0;
	bool cfa_ok, pc_set;

	if (!rule(st->initial ? st->pc : st->pc - 1, &r, arg))
		return -1;
	if (r.cfa_reg == UNWIND_SIMPLE_RSP)
		cfa_ok = st->sp_set, cfa = st->sp;
	else {
		cfa_ok = st->bp_set, cfa = st->bp;
		if (cfa_ok)
			simple__bp_used(st, t);
	}
	cfa += (uint64_t)(int64_t)r.cfa_off;
	if (r.cfa_deref && cfa_ok) {
		uint64_t at = cfa;

		cfa_ok = read(at, &cfa, arg);
		if (cfa_ok)
			unwind_simple__log(t, at, cfa);
	}
	next->initial = false;
	/* every read comes from st and the CFA: the order does not matter */
	simple__reg(&r.sp, st, st->sp, st->sp_set, cfa_ok, cfa, read, arg, &next->sp,
		    &next->sp_set, t, &from);
	if (from)
		unwind_simple__log(t, from, next->sp);
	simple__reg(&r.bp, st, st->bp, st->bp_set, cfa_ok, cfa, read, arg, &next->bp,
		    &next->bp_set, t, &from);
	/* a saved rbp counts once something is taken from it */
	next->bp_start = st->bp_start && r.bp.kind == UNWIND_SIMPLE_SAME;
	next->bp_pend = r.bp.kind == UNWIND_SIMPLE_SAME ? st->bp_pend : from != 0;
	next->bp_addr = r.bp.kind == UNWIND_SIMPLE_SAME ? st->bp_addr : from;
	simple__reg(&r.ra, st, st->pc, true, cfa_ok, cfa, read, arg, &pc, &pc_set, t, &from);
	if (from)
		unwind_simple__log(t, from, pc);
	next->pc = pc;
	return pc_set && pc;
}

/* trail (may be NULL): the reads the frames depend on (see above). */
static inline __attribute__((always_inline)) int
unwind_simple__walk(const struct unwind_simple_regs *regs, unwind_simple_rule_fn rule,
		    unwind_simple_read_fn read, void *arg, struct unwind_frame *frames, int max,
		    struct unwind_simple_trail *trail)
{
	struct simple_state s[2], *cur = &s[0], *next = &s[1], *tmp;
	uint64_t prev_sp = UNWIND_SP_UNKNOWN;
	int nr = 0, ret = 0;

	*cur = (struct simple_state){ regs->pc, regs->sp, regs->bp, true, true, true, true, false, 0 };
	/* unwind_cfi__frames()'s loop, step for step: a frame after the first
	 * is stepped before it is counted (libdwfl's activation question) */
	for (;;) {
		bool stepped = false;

		if (!cur->initial) {
			if ((ret = simple__step(cur, next, rule, read, arg, trail)) < 0)
				return -1;
			stepped = true;
		}
		if (cur->pc == 0)
			break;
		if (unwind__stuck(frames, nr, cur->pc, &prev_sp,
				  cur->sp_set ? cur->sp : UNWIND_SP_UNKNOWN))
			break;
		frames[nr++] = (struct unwind_frame){ .pc = cur->pc, .activation = cur->initial };
		if (nr >= max)
			break;
		if (!stepped && (ret = simple__step(cur, next, rule, read, arg, trail)) < 0)
			return -1;
		if (ret == 0)
			break;
		tmp = cur;
		cur = next;
		next = tmp;
	}
	return nr;
}

#endif
