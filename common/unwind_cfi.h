/* SPDX-License-Identifier: MIT */
/*
 * The fast path of DWARF unwinding: libdwfl's frame step (elfutils 0.188
 * libdwfl/frame_unwind.c: handle_cfi + expr_eval, x86-64) redone over rules
 * cached per lookup pc, so a sample costs a few hash lookups and stack reads
 * instead of libdw re-running the CIE/FDE programs, re-evaluating the CFA
 * for every register and allocating frame states.
 *
 * The rules themselves still come from libdw (dwfl_module_eh_cfi /
 * dwfl_module_dwarf_cfi, dwarf_cfi_addrframe, dwarf_frame_cfa,
 * dwarf_frame_register) and the memory reads from the same callback libdwfl
 * uses, so the frames are the same as dwfl_getthread_frames gives. Where
 * libdwfl would leave CFI (pc in no module, no FDE: its frame-pointer
 * fallback) or meet a signal frame, the fast path gives up and the caller
 * unwinds that sample with libdwfl. XPU_UNWIND_CHECK=1 makes unwind.c run
 * both on every sample and stop at the first difference.
 *
 * Two levels, so that a process loading its libraries costs nothing here:
 *  - struct unwind_cfi: the rules of one file, read through a Dwfl of its
 *    own that holds that file alone at load address 0 (the same .eh_frame,
 *    else .debug_frame, libdwfl reads for it in a process), keyed by the
 *    file address of the lookup pc. One per DSO, shared by every process
 *    and every mapping set: a PyTorch process's 480 changes of its mapping
 *    set once made a process-wide Dwfl be rebuilt or grown, and every rule
 *    read again, for each.
 *  - struct unwind_cfi_pcs: a process's runtime pcs, each with its file's
 *    rules, the rule and the load bias; valid for one mapping set (cleared
 *    when it changes, which costs only hash lookups).
 */
#ifndef XPU_COMMON_UNWIND_CFI_H
#define XPU_COMMON_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <elfutils/libdwfl.h>
#include "common/hashmap.h"
#include "common/unwind_frame.h"

#define UNWIND_CFI_NREGS 17	/* x86-64 DWARF registers 0..16, 16 = RIP */

typedef bool (*unwind_cfi_read_fn)(uint64_t addr, uint64_t *val, void *arg);

/* Where memory reads go: the sample's stack copy (read here), else read(). */
struct unwind_cfi_mem {
	uint64_t sp;			/* address of stack[0] */
	const uint8_t *stack;
	uint64_t size;
	unwind_cfi_read_fn read;	/* everything outside the copy */
	void *arg;
	/* when set: a bit per register of the sample whose value the steps
	 * read (to find a frame, or into a register they compute) */
	uint32_t *reg_reads;
};

/* The rules of one file (see above). */
struct unwind_cfi {
	Dwfl *dwfl;			/* the file alone, at load address 0; owned */
	Dwfl_Module *mod;		/* NULL: no rules (every lookup falls back) */
	/* Rules are compiled on first lookup and never move or change after:
	 * threads unwinding at once (unwind_ahead.h) hold pointers to them
	 * while others compile more. lock guards rule_of (shared to look up),
	 * the compile (libdw's CFI of this file) and the arena (alone). */
	pthread_rwlock_t lock;
	struct u64map rule_of;		/* file address of a lookup pc -> struct cfi_rule * */
	char **blocks;			/* the arena: rules, their registers and ops */
	size_t nr_blocks, blocks_cap, block_left;
	char *block_at;
	size_t nr_rules;
	unsigned cfi_reads;		/* rules compiled since the CFI's pages went back */
	int cfi_release;		/* give them back: 0 not known yet, 1 yes, -1 no (small) */
	unsigned cfi_release_every;	/* after so many compiles (0: ELF_PAGES_EVERY) */
	/* .eh_frame through PT_GNU_EH_FRAME's search table, where libdw's
	 * section lookup would not use it (unwind_cfi.c: unwind_cfi__hdr_open) */
	Dwarf_CFI *hdr_cfi;
	Elf *hdr_elf;
	char *hdr_map;			/* a private mapping of the file */
	size_t hdr_map_size;
	uint64_t hdr_at[2][2];		/* .eh_frame and .eh_frame_hdr: offset, size */
};

/* Takes dwfl (may be NULL: no rules) and its one module, the file of which
 * fd is open on (-1: not known; not taken over). */
void unwind_cfi__init(struct unwind_cfi *c, Dwfl *dwfl, Dwfl_Module *mod, int fd);
void unwind_cfi__exit(struct unwind_cfi *c);

/*
 * The file holding runtime address pc in the process being unwound, and the
 * load bias of its mapping (runtime address = file address + bias); NULL
 * when pc is in no file (libdwfl: in no module).
 */
typedef struct unwind_cfi *(*unwind_cfi_module_fn)(uint64_t pc, uint64_t *bias, void *arg);

/* A process's pcs for one mapping set (see above). */
struct unwind_cfi_pcs {
	struct u64map at;		/* runtime lookup pc -> index into pcs + 1 */
	struct cfi_pc *pcs;
	size_t nr, cap;
	struct { uint64_t pc; uint32_t at; } recent[64];	/* at: index + 1; 0: empty */
	unwind_cfi_module_fn module;
	void *arg;
};

void unwind_cfi_pcs__init(struct unwind_cfi_pcs *p, unwind_cfi_module_fn module, void *arg);
void unwind_cfi_pcs__exit(struct unwind_cfi_pcs *p);
/* The mapping set changed: every pc is looked up again. */
void unwind_cfi_pcs__reset(struct unwind_cfi_pcs *p);

/*
 * Unwinds from regs (x86-64 DWARF order) as unwind.c's frame callback over
 * dwfl_getthread_frames would: fills frames, innermost first, and returns
 * their number, or -1 when this sample needs libdwfl itself.
 */
int unwind_cfi__frames(struct unwind_cfi_pcs *p, const uint64_t regs[UNWIND_CFI_NREGS],
		       const struct unwind_cfi_mem *mem, struct unwind_frame *frames, int max);

/*
 * The rule at lookup pc cut down to rsp, rbp and the return address
 * (common/unwind_simple.h), or false when it reads anything else (or
 * libdwfl would take over there).
 */
struct unwind_simple_rule;
bool unwind_cfi__simple(struct unwind_cfi_pcs *p, uint64_t lookup_pc,
			struct unwind_simple_rule *out);
/* The rule at lookup pc in words, for -v (the CFA, each computed register,
 * the return-address column, the same-value mask). */
void unwind_cfi__describe(struct unwind_cfi_pcs *p, uint64_t lookup_pc, char *buf, size_t size);

#endif
