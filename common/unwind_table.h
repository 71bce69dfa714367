/* SPDX-License-Identifier: MIT */
/*
 * A table of simple unwinding rules (common/unwind_simple.h) keyed by a
 * process's runtime lookup pcs, in memory shared between xpu-record, which
 * writes it from the stacks it unwinds, and libxpu-cupti.so inside that
 * process, which walks its launch stacks with it (Documentation/design-gpu.md,
 * "The capture path this calls for"). One writer, any number of readers,
 * no lock:
 *
 *  - Entries are only added, never changed or removed: the writer fills an
 *    empty slot's rule and code bytes, then publishes its pc with a release
 *    store; a reader takes the pc with an acquire load, so it sees the rule
 *    the pc was published with, or an empty slot (a miss).
 *  - Open addressing, linear probing over at most UNWIND_TABLE_PROBE slots;
 *    a full neighbourhood is a miss (the caller takes the full path).
 *  - Each entry carries the code bytes that end at the lookup pc + 1 (for a
 *    return address: the call instruction's tail) as the writer read them
 *    from the process: a reader compares them with its live code first, so
 *    a pc whose mapping was replaced (dlclose, then dlopen at the same
 *    address) since the rule was written does not use it.
 *
 * Nothing in it is a pointer: the same bytes are valid at any address and
 * in both processes.
 */
#ifndef XPU_COMMON_UNWIND_TABLE_H
#define XPU_COMMON_UNWIND_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/unwind_simple.h"

#define UNWIND_TABLE_MAGIC	0x31545755u	/* "UWT1" */
#define UNWIND_TABLE_PROBE	32
#define UNWIND_TABLE_CODE	8		/* code bytes ending at lookup pc + 1 */

struct unwind_table_hdr {
	uint32_t magic;
	uint32_t entry_size;		/* sizeof(struct unwind_table_entry) */
	uint32_t nr_slots;		/* a power of two */
	_Atomic uint32_t nr_used;	/* entries published (statistics) */
	_Atomic uint32_t nr_full;	/* adds refused: neighbourhood full */
	uint32_t pad;
};

struct unwind_table_entry {
	_Atomic uint64_t pc;		/* lookup pc; 0: empty */
	uint8_t code[UNWIND_TABLE_CODE];
	struct unwind_simple_rule rule;
};

/* Bytes of a table of nr_slots (a power of two) entries. */
size_t unwind_table__size(uint32_t nr_slots);
/* Lays out an empty table in mem (unwind_table__size() bytes, zeroed). */
void unwind_table__init(void *mem, uint32_t nr_slots);
/* The table at mem of size bytes, or NULL when it is not one (a reader
 * checks what it mapped). */
struct unwind_table_hdr *unwind_table__open(void *mem, size_t size);

/* The writer: adds (pc, code, rule); false when the pc is there already or
 * its neighbourhood is full. Not for concurrent writers. */
bool unwind_table__add(struct unwind_table_hdr *t, uint64_t pc,
		       const uint8_t code[UNWIND_TABLE_CODE],
		       const struct unwind_simple_rule *rule);

static inline uint32_t unwind_table__hash(uint64_t pc)
{
	pc ^= pc >> 29;
	pc *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(pc >> 32);
}

/* A reader: the entry of pc, or NULL. Inline: a launch walk asks it at
 * every frame. */
static inline const struct unwind_table_entry *
unwind_table__find(const struct unwind_table_hdr *t, uint64_t pc)
{
	const struct unwind_table_entry *slots = (const struct unwind_table_entry *)(t + 1);
	uint32_t mask = t->nr_slots - 1, at = unwind_table__hash(pc) & mask;

	for (int i = 0; i < UNWIND_TABLE_PROBE; i++, at = (at + 1) & mask) {
		uint64_t have = atomic_load_explicit(&slots[at].pc, memory_order_acquire);

		if (have == pc)
			return &slots[at];
		if (!have)
			return NULL;
	}
	return NULL;
}

#endif
