// SPDX-License-Identifier: MIT
/*
 * common/unwind_simple_walk.c on hand-made stacks and rules: the frames, where
 * a walk ends (return address undefined, a read that fails, a CFA from a
 * register no longer known, a step that changes nothing, the frame limit),
 * and -1 wherever unwind_cfi__frames() would have needed a rule it has not
 * (including the step libdwfl takes for a last frame's activation flag).
 * That the frames equal unwind_cfi__frames()' on real programs is
 * tests/shell/unwind_simple.sh's job.
 */
#include <string.h>
#include "common/unwind_simple_walk.h"
#include "test.h"

#define SP0 0x7ffd0000ull		/* the stack copy's first address */
#define NWORDS 64

struct fake {
	uint64_t stack[NWORDS];
	struct { uint64_t pc; struct unwind_simple_rule r; } rules[8];
	int nr_rules;
	uint64_t looked[16];
	int nr_looked;
};

static bool fake_rule(uint64_t pc, struct unwind_simple_rule *out, void *arg)
{
	struct fake *f = arg;

	if (f->nr_looked < 16)
		f->looked[f->nr_looked++] = pc;
	for (int i = 0; i < f->nr_rules; i++)
		if (f->rules[i].pc == pc) {
			*out = f->rules[i].r;
			return true;
		}
	return false;
}

static bool fake_read(uint64_t addr, uint64_t *val, void *arg)
{
	struct fake *f = arg;

	if (addr < SP0 || addr - SP0 > (NWORDS - 1) * 8 || addr % 8)
		return false;
	*val = f->stack[(addr - SP0) / 8];
	return true;
}

static void add_rule(struct fake *f, uint64_t pc, struct unwind_simple_rule r)
{
	f->rules[f->nr_rules].pc = pc;
	f->rules[f->nr_rules++].r = r;
}

/* CFA = rsp + 8, return address at CFA - 8, rbp kept: a leaf or a start */
static const struct unwind_simple_rule LEAF = {
	.cfa_off = 8, .cfa_reg = UNWIND_SIMPLE_RSP, .sp = { .kind = UNWIND_SIMPLE_VAL },
	.bp = { .kind = UNWIND_SIMPLE_SAME }, .ra = { -8, UNWIND_SIMPLE_AT, 0 } };
/* CFA = rbp + 16, return address at CFA - 8, rbp at CFA - 16 */
static const struct unwind_simple_rule FRAMED = {
	.cfa_off = 16, .cfa_reg = UNWIND_SIMPLE_RBP, .sp = { .kind = UNWIND_SIMPLE_VAL },
	.bp = { -16, UNWIND_SIMPLE_AT, 0 }, .ra = { -8, UNWIND_SIMPLE_AT, 0 } };
/* the outermost frame: the return address is undefined */
static const struct unwind_simple_rule START = {
	.cfa_off = 8, .cfa_reg = UNWIND_SIMPLE_RSP, .sp = { .kind = UNWIND_SIMPLE_VAL },
	.bp = { .kind = UNWIND_SIMPLE_SAME }, .ra = { .kind = UNWIND_SIMPLE_UNSET } };
/* a realigned stack (GCC's DRAP): CFA = the word at rbp - 8, rbp saved at
 * rbp + 0, the return address at CFA - 8 */
static const struct unwind_simple_rule DRAP = {
	.cfa_off = -8, .cfa_reg = UNWIND_SIMPLE_RBP, .cfa_deref = true,
	.sp = { .kind = UNWIND_SIMPLE_VAL }, .bp = { 0, UNWIND_SIMPLE_AT_REG, UNWIND_SIMPLE_RBP },
	.ra = { -8, UNWIND_SIMPLE_AT, 0 } };

/*
 * leaf at 0x1000 (sp = SP0) -> framed at 0x2005 (its frame: saved rbp at
 * SP0 + 16, return at SP0 + 24) -> start at 0x3009.
 */
static void three(struct fake *f, struct unwind_simple_regs *regs)
{
	memset(f, 0, sizeof(*f));
	f->stack[0] = 0x2005;			/* leaf's return address */
	f->stack[2] = SP0 + 0x100;		/* framed's caller's rbp */
	f->stack[3] = 0x3009;			/* framed's return address */
	*regs = (struct unwind_simple_regs){ 0x1000, SP0, SP0 + 16 };
	add_rule(f, 0x1000, LEAF);		/* the activation: its pc */
	add_rule(f, 0x2004, FRAMED);		/* return addresses: pc - 1 */
	add_rule(f, 0x3008, START);
}

static void test_frames(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 3);
	TEST_ASSERT_EQ(fr[0].pc, 0x1000);
	TEST_ASSERT(fr[0].activation);
	TEST_ASSERT_EQ(fr[1].pc, 0x2005);
	TEST_ASSERT(!fr[1].activation);
	TEST_ASSERT_EQ(fr[2].pc, 0x3009);
	TEST_ASSERT(!fr[2].activation);
	TEST_ASSERT_EQ(f.nr_looked, 3);
	TEST_ASSERT_EQ(f.looked[1], 0x2004);
}

static void test_no_rule(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	f.nr_rules = 2;			/* start's rule missing */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), -1);
}

/* the frame limit: the last frame's step still happens first (libdwfl's
 * activation question), so its missing rule still says -1 */
static void test_limit(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 2), 2);
	TEST_ASSERT_EQ(fr[1].pc, 0x2005);
	f.nr_rules = 1;			/* framed's rule missing */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 2), -1);
	/* but a limit of 1 never asks for it */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 1), 1);
}

/* a return address that cannot be read ends the walk there */
static void test_read_fails(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	regs.sp = SP0 + (NWORDS - 1) * 8 + 8;	/* the CFA - 8 is past the copy */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 1);
}

/* rbp not known any more: a CFA from it fails, and with it the pc */
static void test_bp_unset(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];
	struct unwind_simple_rule leaf = LEAF;

	three(&f, &regs);
	leaf.bp.kind = UNWIND_SIMPLE_UNSET;
	f.rules[0].r = leaf;
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 2);
	TEST_ASSERT_EQ(fr[1].pc, 0x2005);
}

/* a step that leaves pc and sp as they were: the walk stops (unwind__stuck) */
static void test_stuck(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];
	struct unwind_simple_rule same = { .cfa_reg = UNWIND_SIMPLE_RSP,
					   .sp = { .kind = UNWIND_SIMPLE_SAME },
					   .bp = { .kind = UNWIND_SIMPLE_SAME },
					   .ra = { .kind = UNWIND_SIMPLE_SAME } };

	three(&f, &regs);
	f.rules[0].r = same;		/* the leaf's caller is the leaf itself */
	add_rule(&f, 0x0fff, same);
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 1);
}

/*
 * A realigned frame between leaf and start: leaf (sp = SP0) returns to
 * 0x2005, whose rule is DRAP with rbp = SP0 + 64: the CFA is the word at
 * SP0 + 56 (= SP0 + 128), the return address at SP0 + 120, the caller's
 * rbp the word at SP0 + 64. A failing CFA read ends the walk there.
 */
static void test_drap(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	f.rules[1].r = DRAP;
	regs.bp = SP0 + 64;
	f.stack[7] = SP0 + 128;			/* [rbp - 8]: the CFA */
	f.stack[8] = SP0 + 0x200;		/* [rbp]: the caller's rbp */
	f.stack[15] = 0x3009;			/* [CFA - 8] */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 3);
	TEST_ASSERT_EQ(fr[2].pc, 0x3009);
	f.stack[7] = SP0 + 0x10000;		/* a CFA past the stack */
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 2);
	/* rbp not known: neither is the CFA */
	f.stack[7] = SP0 + 128;
	f.rules[0].r.bp.kind = UNWIND_SIMPLE_UNSET;
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 2);
}

/*
 * The trail (unwind_simple_walk.h): the return addresses in the order read,
 * the start's rbp marked used where a CFA came from it, and a saved rbp
 * logged only once something is taken from it.
 */
static void test_trail(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];
	struct unwind_simple_read reads[8];
	struct unwind_simple_trail t = { reads, 0, 8, false };

	three(&f, &regs);
	TEST_ASSERT_EQ(unwind_simple__walk(&regs, fake_rule, fake_read, &f, fr, 8, &t), 3);
	/* leaf's return address, framed's; framed's saved rbp (SP0 + 16) is
	 * read but start's CFA comes from rsp: not logged */
	TEST_ASSERT_EQ(t.nr, 2);
	TEST_ASSERT_EQ(reads[0].addr, SP0);
	TEST_ASSERT_EQ(reads[0].val, 0x2005);
	TEST_ASSERT_EQ(reads[1].addr, SP0 + 24);
	TEST_ASSERT_EQ(reads[1].val, 0x3009);
	TEST_ASSERT(t.bp_used);		/* framed's CFA is the start's rbp + 16 */

	/* start takes its CFA from rbp too: framed's saved rbp is logged */
	f.rules[2].r.cfa_reg = UNWIND_SIMPLE_RBP;
	f.rules[2].r.cfa_off = -0x100 + 8;	/* rbp = SP0 + 0x100: CFA = SP0 + 8 */
	f.stack[2] = SP0 + 0x100;
	t = (struct unwind_simple_trail){ reads, 0, 8, false };
	TEST_ASSERT_EQ(unwind_simple__walk(&regs, fake_rule, fake_read, &f, fr, 8, &t), 3);
	TEST_ASSERT_EQ(t.nr, 3);
	TEST_ASSERT_EQ(reads[2].addr, SP0 + 16);
	TEST_ASSERT_EQ(reads[2].val, SP0 + 0x100);

	/* a walk that never uses rbp: the start's rbp does not matter */
	three(&f, &regs);
	f.rules[1].r = LEAF;
	f.stack[1] = 0x3009;			/* the second leaf returns at SP0 + 8 */
	t = (struct unwind_simple_trail){ reads, 0, 8, false };
	TEST_ASSERT_EQ(unwind_simple__walk(&regs, fake_rule, fake_read, &f, fr, 8, &t), 3);
	TEST_ASSERT(!t.bp_used);
	TEST_ASSERT_EQ(t.nr, 2);
	/* more reads than room: counted past max */
	t = (struct unwind_simple_trail){ reads, 0, 1, false };
	TEST_ASSERT_EQ(unwind_simple__walk(&regs, fake_rule, fake_read, &f, fr, 8, &t), 3);
	TEST_ASSERT_EQ(t.nr, 2);
}

/* pc 0: no frame at all */
static void test_zero_pc(void)
{
	struct fake f;
	struct unwind_simple_regs regs;
	struct unwind_frame fr[8];

	three(&f, &regs);
	regs.pc = 0;
	TEST_ASSERT_EQ(unwind_simple__frames(&regs, fake_rule, fake_read, &f, fr, 8), 0);
	TEST_ASSERT_EQ(f.nr_looked, 0);
}

int main(void)
{
	TEST_RUN(test_frames);
	TEST_RUN(test_no_rule);
	TEST_RUN(test_limit);
	TEST_RUN(test_read_fails);
	TEST_RUN(test_bp_unset);
	TEST_RUN(test_stuck);
	TEST_RUN(test_drap);
	TEST_RUN(test_trail);
	TEST_RUN(test_zero_pc);
	TEST_EXIT();
}
