// SPDX-License-Identifier: MIT
/* A shared table of simple unwinding rules (see unwind_table.h). */
#include <string.h>
#include "common/unwind_table.h"

static inline struct unwind_table_entry *table__slots(const struct unwind_table_hdr *t)
{
	return (struct unwind_table_entry *)(uintptr_t)(t + 1);
}

size_t unwind_table__size(uint32_t nr_slots)
{
	return sizeof(struct unwind_table_hdr) + (size_t)nr_slots * sizeof(struct unwind_table_entry);
}

void unwind_table__init(void *mem, uint32_t nr_slots)
{
	struct unwind_table_hdr *t = mem;

	t->magic = UNWIND_TABLE_MAGIC;
	t->entry_size = sizeof(struct unwind_table_entry);
	t->nr_slots = nr_slots;
}

struct unwind_table_hdr *unwind_table__open(void *mem, size_t size)
{
	struct unwind_table_hdr *t = mem;

	if (!mem || size < sizeof(*t) || t->magic != UNWIND_TABLE_MAGIC ||
	    t->entry_size != sizeof(struct unwind_table_entry) || !t->nr_slots ||
	    (t->nr_slots & (t->nr_slots - 1)) || unwind_table__size(t->nr_slots) > size)
		return NULL;
	return t;
}

bool unwind_table__add(struct unwind_table_hdr *t, uint64_t pc,
		       const uint8_t code[UNWIND_TABLE_CODE],
		       const struct unwind_simple_rule *rule)
{
	struct unwind_table_entry *slots = table__slots(t);
	uint32_t mask = t->nr_slots - 1, at = unwind_table__hash(pc) & mask;

	if (!pc)
		return false;
	for (int i = 0; i < UNWIND_TABLE_PROBE; i++, at = (at + 1) & mask) {
		uint64_t have = atomic_load_explicit(&slots[at].pc, memory_order_relaxed);

		if (have == pc)
			return false;
		if (have)
			continue;
		memcpy(slots[at].code, code, UNWIND_TABLE_CODE);
		slots[at].rule = *rule;
		atomic_store_explicit(&slots[at].pc, pc, memory_order_release);
		atomic_fetch_add_explicit(&t->nr_used, 1, memory_order_relaxed);
		return true;
	}
	atomic_fetch_add_explicit(&t->nr_full, 1, memory_order_relaxed);
	return false;
}
