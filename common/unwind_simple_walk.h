/* SPDX-License-Identifier: MIT */
/*
 * The body of unwind_simple__frames() (common/unwind_simple.h), inline, for
 * a caller whose rule and read functions are known where it is compiled
 * (cupti/walk_probe.c): the compiler then calls neither through a pointer,
 * a few nanoseconds a frame on a launch's path. common/unwind_simple.c
 * makes unwind_simple__frames() of it; both are the same code.
 */
#ifndef XPU_COMMON_UNWIND_SIMPLE_WALK_H
#define XPU_COMMON_UNWIND_SIMPLE_WALK_H

#include "common/unwind_simple.h"

/* A cfi_state cut down to the registers a simple rule reads. */
struct simple_state {
	uint64_t pc, sp, bp;
	bool sp_set, bp_set, initial;
};

/* One register of the caller's frame: unwind_cfi__step()'s cases. */
static inline __attribute__((always_inline)) void simple__reg(const struct unwind_simple_reg *r, const struct simple_state *st,
			uint64_t cur, bool cur_set, bool cfa_ok, uint64_t cfa,
			unwind_simple_read_fn read, void *arg, uint64_t *val, bool *set)
{
	bool base_set = r->base == UNWIND_SIMPLE_RSP ? st->sp_set : st->bp_set;
	uint64_t base = r->base == UNWIND_SIMPLE_RSP ? st->sp : st->bp;

	*set = false;
	switch (r->kind) {
	case UNWIND_SIMPLE_AT_REG:	/* cfi__eval(): the CFA first, then the register */
		*set = cfa_ok && base_set && read(base + (uint64_t)(int64_t)r->n, val, arg);
		break;
	case UNWIND_SIMPLE_SAME:
		*val = cur;
		*set = cur_set;
		break;
	case UNWIND_SIMPLE_AT:
		*set = cfa_ok && read(cfa + (uint64_t)(int64_t)r->n, val, arg);
		break;
	case UNWIND_SIMPLE_VAL:
		*val = cfa + (uint64_t)(int64_t)r->n;
		*set = cfa_ok;
		break;
	}
}

/* 1: next has a pc, 0: unwinding ends here, -1: no simple rule. */
static inline __attribute__((always_inline)) int simple__step(const struct simple_state *st, struct simple_state *next,
			unwind_simple_rule_fn rule, unwind_simple_read_fn read, void *arg)
{
	struct unwind_simple_rule r;
	uint64_t cfa = 0, pc = 0;
	bool cfa_ok, pc_set;

	if (!rule(st->initial ? st->pc : st->pc - 1, &r, arg))
		return -1;
	if (r.cfa_reg == UNWIND_SIMPLE_RSP)
		cfa_ok = st->sp_set, cfa = st->sp;
	else
		cfa_ok = st->bp_set, cfa = st->bp;
	cfa += (uint64_t)(int64_t)r.cfa_off;
	if (r.cfa_deref && cfa_ok)
		cfa_ok = read(cfa, &cfa, arg);
	next->initial = false;
	/* every read comes from st and the CFA: the order does not matter */
	simple__reg(&r.sp, st, st->sp, st->sp_set, cfa_ok, cfa, read, arg, &next->sp,
		    &next->sp_set);
	simple__reg(&r.bp, st, st->bp, st->bp_set, cfa_ok, cfa, read, arg, &next->bp,
		    &next->bp_set);
	simple__reg(&r.ra, st, st->pc, true, cfa_ok, cfa, read, arg, &pc, &pc_set);
	next->pc = pc;
	return pc_set && pc;
}

static inline __attribute__((always_inline)) int
unwind_simple__walk(const struct unwind_simple_regs *regs, unwind_simple_rule_fn rule,
		    unwind_simple_read_fn read, void *arg, struct unwind_frame *frames, int max)
{
	struct simple_state s[2], *cur = &s[0], *next = &s[1], *tmp;
	uint64_t prev_sp = UNWIND_SP_UNKNOWN;
	int nr = 0, ret = 0;

	*cur = (struct simple_state){ regs->pc, regs->sp, regs->bp, true, true, true };
	/* unwind_cfi__frames()'s loop, step for step: a frame after the first
	 * is stepped before it is counted (libdwfl's activation question) */
	for (;;) {
		bool stepped = false;

		if (!cur->initial) {
			if ((ret = simple__step(cur, next, rule, read, arg)) < 0)
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
		if (!stepped && (ret = simple__step(cur, next, rule, read, arg)) < 0)
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
