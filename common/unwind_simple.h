/* SPDX-License-Identifier: MIT */
/*
 * The CFI frame step of common/unwind_cfi.c for rules that need only the
 * stack pointer, the frame pointer and the return address (nearly every
 * rule of compiled code on x86-64: CFA = rsp or rbp + k, the return address
 * and rbp saved at CFA + n). A walk with such rules reads one to two words a
 * frame and no other register, so it can run where only rsp and rbp are at
 * hand: in a launching thread, from rules xpu-record found in its stack
 * copies (Documentation/design-gpu.md, "The capture path this calls for").
 *
 * Same frames or none: unwind_simple__frames() gives exactly the frames
 * unwind_cfi__frames() gives from the same registers and memory, or -1 when
 * a pc has no simple rule (the caller then takes the full path). Every rule
 * is unwind_cfi.c's own, cut down by unwind_cfi__simple(); the step keeps
 * handle_cfi()'s order and its "register known" bits for rsp, rbp and the
 * return address (the only ones a simple rule reads). XPU_UNWIND_SIMPLE_CHECK=1
 * makes xpu-record compare both on every stack it unwinds.
 */
#ifndef XPU_COMMON_UNWIND_SIMPLE_H
#define XPU_COMMON_UNWIND_SIMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/unwind_frame.h"

/* What a simple rule says of rsp, rbp or the return address. */
enum unwind_simple_kind {
	UNWIND_SIMPLE_UNSET,		/* not known in the caller's frame */
	UNWIND_SIMPLE_SAME,		/* as in this frame */
	UNWIND_SIMPLE_AT,		/* the word at CFA + n */
	UNWIND_SIMPLE_VAL,		/* CFA + n */
	UNWIND_SIMPLE_AT_REG,		/* the word at base + n (base: this
					 * frame's rsp or rbp), once the CFA is
					 * known (DW_CFA_expression: the CFA,
					 * then DW_OP_bregN n) */
};

struct unwind_simple_reg {
	int32_t n;
	uint8_t kind;			/* enum unwind_simple_kind */
	uint8_t base;			/* UNWIND_SIMPLE_AT_REG's register */
};

struct unwind_simple_rule {
	int32_t cfa_off;		/* CFA = cfa_reg + cfa_off */
	uint8_t cfa_reg;		/* UNWIND_SIMPLE_RSP or UNWIND_SIMPLE_RBP */
	bool cfa_deref;			/* CFA = the word at cfa_reg + cfa_off: a
					 * realigned stack's (DW_OP_bregN, deref) */
	struct unwind_simple_reg sp, bp, ra;
};

#define UNWIND_SIMPLE_RBP 6		/* x86-64 DWARF register numbers */
#define UNWIND_SIMPLE_RSP 7

/* The registers a walk starts from: an activation at pc. */
struct unwind_simple_regs {
	uint64_t pc, sp, bp;
};

/* The simple rule for lookup pc (a return address - 1 after the first
 * frame), or false when it has none: the walk gives up. */
typedef bool (*unwind_simple_rule_fn)(uint64_t lookup_pc, struct unwind_simple_rule *out,
				      void *arg);
/* The word at addr, or false (unwinding ends there, as unwind_cfi's). */
typedef bool (*unwind_simple_read_fn)(uint64_t addr, uint64_t *val, void *arg);

/*
 * Frames from regs, innermost first, as unwind_cfi__frames() would give
 * them: their number, or -1 when a pc has no simple rule.
 */
int unwind_simple__frames(const struct unwind_simple_regs *regs, unwind_simple_rule_fn rule,
			  unwind_simple_read_fn read, void *arg, struct unwind_frame *frames,
			  int max);

#endif
