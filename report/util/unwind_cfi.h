/* SPDX-License-Identifier: MIT */
/*
 * The fast path of DWARF unwinding: libdwfl's frame step (elfutils 0.188
 * libdwfl/frame_unwind.c: handle_cfi + expr_eval, x86-64) redone over rules
 * cached per lookup pc, so a sample costs a few hash lookups and stack reads
 * instead of libdw re-running the CIE/FDE programs, re-evaluating the CFA
 * for every register and allocating frame states.
 *
 * The rules themselves still come from libdw (dwfl_addrmodule,
 * dwfl_module_eh_cfi / dwfl_module_dwarf_cfi, dwarf_cfi_addrframe,
 * dwarf_frame_cfa, dwarf_frame_register) and the memory reads from the same
 * callback libdwfl uses, so the frames are the same as dwfl_getthread_frames
 * gives. Where libdwfl would leave CFI (pc in no module, no FDE: its
 * frame-pointer fallback) or meet a signal frame, the fast path gives up
 * and the caller unwinds that sample with libdwfl. XPU_UNWIND_CHECK=1 makes
 * unwind.c run both on every sample and stop at the first difference.
 */
#ifndef XPU_REPORT_UNWIND_CFI_H
#define XPU_REPORT_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>
#include "common/hashmap.h"
#include "report/util/unwind.h"

#define UNWIND_CFI_NREGS 17	/* x86-64 DWARF registers 0..16, 16 = RIP */

#define UNWIND_SP_UNKNOWN (~0ull)

/*
 * Whether an unwinder is stuck before appending the frame (pc, sp) to
 * frames[0..nr): the same pc at the same stack pointer as the frame before
 * (the step changed nothing). A recursive function's frames repeat their
 * pc at higher stack pointers and go on. When sp is not known: the same pc
 * three times. *prev_sp holds the last frame's sp; both unwinders (unwind.c
 * through libdwfl, unwind_cfi.c) use this one rule, so they agree.
 */
static inline bool unwind__stuck(const struct unwind_frame *frames, int nr, uint64_t pc,
				 uint64_t *prev_sp, uint64_t sp)
{
	bool stuck;

	if (sp != UNWIND_SP_UNKNOWN && *prev_sp != UNWIND_SP_UNKNOWN)
		stuck = nr >= 1 && pc == frames[nr - 1].pc && sp <= *prev_sp;
	else
		stuck = nr >= 2 && pc == frames[nr - 1].pc && pc == frames[nr - 2].pc;
	*prev_sp = sp;
	return stuck;
}

typedef bool (*unwind_cfi_read_fn)(uint64_t addr, uint64_t *val, void *arg);

/* Where memory reads go: the sample's stack copy (read here), else read(). */
struct unwind_cfi_mem {
	uint64_t sp;			/* address of stack[0] */
	const uint8_t *stack;
	uint64_t size;
	unwind_cfi_read_fn read;	/* everything outside the copy */
	void *arg;
};

/* Rules cached for one Dwfl (its modules and biases): clear on rebuild. */
struct unwind_cfi {
	struct u64map rule_of;		/* lookup pc -> rule index + 1 */
	struct cfi_rule *rules;
	size_t nr_rules, rules_cap;
	Dwarf_Op *ops;			/* expression pool, rules index into it */
	size_t nr_ops, ops_cap;
	struct cfi_reg *regs;		/* computed registers' rules, the same way */
	size_t nr_regs, regs_cap;
	struct { uint64_t pc; uint32_t rule; } recent[64];	/* rule + 1; 0: empty */
};

void unwind_cfi__init(struct unwind_cfi *c);
void unwind_cfi__exit(struct unwind_cfi *c);
void unwind_cfi__reset(struct unwind_cfi *c);

/*
 * Unwinds from regs (x86-64 DWARF order) as unwind.c's frame callback over
 * dwfl_getthread_frames would: fills frames, innermost first, and returns
 * their number, or -1 when this sample needs libdwfl itself.
 */
int unwind_cfi__frames(struct unwind_cfi *c, Dwfl *dwfl,
		       const uint64_t regs[UNWIND_CFI_NREGS], const struct unwind_cfi_mem *mem,
		       struct unwind_frame *frames, int max);

#endif
