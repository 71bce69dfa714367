// SPDX-License-Identifier: MIT
/*
 * common/unwind_table.c: adds and finds, duplicates, a full neighbourhood,
 * a table that is not one, and readers running while the writer adds (each
 * pc a reader finds carries the rule and code it was added with).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/unwind_table.h"
#include "test.h"

static struct unwind_simple_rule rule_for(uint64_t pc)
{
	struct unwind_simple_rule r = { .cfa_off = (int32_t)(pc & 0xffff), .cfa_reg = UNWIND_SIMPLE_RSP,
					.ra = { -8, UNWIND_SIMPLE_AT, 0 } };
	return r;
}

static void code_for(uint64_t pc, uint8_t code[UNWIND_TABLE_CODE])
{
	for (int i = 0; i < UNWIND_TABLE_CODE; i++)
		code[i] = (uint8_t)(pc >> (i % 4 * 8)) ^ (uint8_t)i;
}

static struct unwind_table_hdr *new_table(uint32_t slots, void **mem)
{
	*mem = calloc(1, unwind_table__size(slots));
	unwind_table__init(*mem, slots);
	return unwind_table__open(*mem, unwind_table__size(slots));
}

static void test_add_find(void)
{
	void *mem;
	struct unwind_table_hdr *t = new_table(1024, &mem);
	uint8_t code[UNWIND_TABLE_CODE];

	TEST_ASSERT(t);
	for (uint64_t pc = 0x400000; pc < 0x400000 + 300 * 7; pc += 7) {
		struct unwind_simple_rule r = rule_for(pc);

		code_for(pc, code);
		TEST_ASSERT(unwind_table__add(t, pc, code, &r));
	}
	TEST_ASSERT_EQ(t->nr_used, 300);
	for (uint64_t pc = 0x400000; pc < 0x400000 + 300 * 7; pc += 7) {
		const struct unwind_table_entry *e = unwind_table__find(t, pc);

		TEST_ASSERT(e);
		code_for(pc, code);
		TEST_ASSERT(!memcmp(e->code, code, UNWIND_TABLE_CODE));
		TEST_ASSERT_EQ(e->rule.cfa_off, (int32_t)(pc & 0xffff));
		TEST_ASSERT(!unwind_table__find(t, pc + 1));
	}
	/* the same pc again: refused, the first rule stays */
	{
		struct unwind_simple_rule r = rule_for(1);

		TEST_ASSERT(!unwind_table__add(t, 0x400000, code, &r));
		TEST_ASSERT_EQ(unwind_table__find(t, 0x400000)->rule.cfa_off, 0);
	}
	TEST_ASSERT(!unwind_table__add(t, 0, code, &(struct unwind_simple_rule){ 0 }));
	free(mem);
}

/* more pcs than slots: the extra ones are refused and counted, every
 * added one is found */
static void test_full(void)
{
	void *mem;
	struct unwind_table_hdr *t = new_table(64, &mem);
	uint8_t code[UNWIND_TABLE_CODE] = { 0 };
	int added = 0;

	for (uint64_t pc = 1; pc <= 200; pc++) {
		struct unwind_simple_rule r = rule_for(pc);

		added += unwind_table__add(t, pc * 16, code, &r);
	}
	/* a neighbourhood (UNWIND_TABLE_PROBE slots) may fill first */
	TEST_ASSERT(added >= UNWIND_TABLE_PROBE && added <= 64);
	TEST_ASSERT_EQ(t->nr_used, added);
	TEST_ASSERT_EQ(t->nr_full, 200 - added);
	{
		int found = 0;

		for (uint64_t pc = 1; pc <= 200; pc++)
			found += unwind_table__find(t, pc * 16) != NULL;
		TEST_ASSERT_EQ(found, added);
	}
	free(mem);
}

static void test_open_checks(void)
{
	void *mem;
	struct unwind_table_hdr *t = new_table(64, &mem);
	size_t size = unwind_table__size(64);

	TEST_ASSERT(t);
	TEST_ASSERT(!unwind_table__open(mem, size - 1));
	TEST_ASSERT(!unwind_table__open(NULL, size));
	t->nr_slots = 48;		/* not a power of two */
	TEST_ASSERT(!unwind_table__open(mem, size));
	t->nr_slots = 64;
	t->magic ^= 1;
	TEST_ASSERT(!unwind_table__open(mem, size));
	t->magic ^= 1;
	t->entry_size++;
	TEST_ASSERT(!unwind_table__open(mem, size));
	free(mem);
}

#define RACE_PCS 20000
static struct unwind_table_hdr *race_table;
static _Atomic int race_done;

static void *race_reader(void *arg)
{
	long bad = 0, found = 0;
	uint8_t code[UNWIND_TABLE_CODE];

	(void)arg;
	while (!race_done || !found) {
		for (uint64_t i = 1; i <= RACE_PCS; i += 13) {
			const struct unwind_table_entry *e = unwind_table__find(race_table, i * 24);

			if (!e)
				continue;
			found++;
			code_for(i * 24, code);
			bad += e->rule.cfa_off != (int32_t)((i * 24) & 0xffff) ||
			       memcmp(e->code, code, UNWIND_TABLE_CODE);
		}
	}
	return (void *)bad;
}

static void test_readers_while_adding(void)
{
	void *mem, *bad;
	pthread_t th[2];
	uint8_t code[UNWIND_TABLE_CODE];

	race_table = new_table(65536, &mem);
	race_done = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, race_reader, NULL);
	for (uint64_t i = 1; i <= RACE_PCS; i++) {
		struct unwind_simple_rule r = rule_for(i * 24);

		code_for(i * 24, code);
		unwind_table__add(race_table, i * 24, code, &r);
	}
	race_done = 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], &bad);
		TEST_ASSERT_EQ((long)bad, 0);
	}
	TEST_ASSERT_EQ(race_table->nr_used, RACE_PCS);
	free(mem);
}

int main(void)
{
	TEST_RUN(test_add_find);
	TEST_RUN(test_full);
	TEST_RUN(test_open_checks);
	TEST_RUN(test_readers_while_adding);
	TEST_EXIT();
}
