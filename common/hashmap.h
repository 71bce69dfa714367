/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash maps, the two shapes the tools need:
 *  - u64map: u64 key -> u64 value (pids, addresses, ids);
 *  - bmap:   byte-string key (copied) -> void * value (build-ids, stacks, names).
 * Linear probing, power-of-two capacity, load factor <= 1/2. No deletion in
 * bmap (reports only grow); u64map supports deletion via backward shift.
 */
#ifndef XPU_COMMON_HASHMAP_H
#define XPU_COMMON_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint64_t xpu_hash_bytes(const void *data, size_t len);
static inline uint64_t xpu_hash_u64(uint64_t x)
{
	/* splitmix64 finalizer: cheap and mixes all bits */
	x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27; x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Key and value side by side, so a probe touches one cache line: the GPU
 * join indexes millions of correlation IDs. UINT64_MAX marks an empty slot;
 * that key itself is kept aside in has_max/max_val. */
struct u64map_slot {
	uint64_t key;
	uint64_t val;
};

struct u64map {
	struct u64map_slot *slots;
	size_t cap, len;		/* len counts the UINT64_MAX key too */
	bool has_max;
	uint64_t max_val;
	bool seq;			/* u64map__init_seq() */
};

void u64map__init(struct u64map *m);
/* For keys "high << 32 | low" whose low halves mostly rise one by one (per
 * process correlation IDs): only the high half is mixed, so neighbouring keys
 * land in neighbouring slots and a stream of them stays in cache. Do not use
 * for strided keys (addresses): they would pile up in every n-th slot. */
void u64map__init_seq(struct u64map *m);
void u64map__exit(struct u64map *m);
/* Returns a pointer to the value slot, inserting 0 when absent. */
uint64_t *u64map__slot(struct u64map *m, uint64_t key);
uint64_t *u64map__find(const struct u64map *m, uint64_t key);
bool u64map__del(struct u64map *m, uint64_t key);
/* Iterate: for (size_t i = 0; u64map__next(m, &i, &k, &v); ) */
bool u64map__next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val);

struct bmap_entry {
	uint64_t hash;
	void *key;
	uint32_t klen;
	void *val;
};

struct bmap {
	struct bmap_entry *tab;
	size_t cap, len;
};

void bmap__init(struct bmap *m);
/* free_val may be NULL */
void bmap__exit(struct bmap *m, void (*free_val)(void *));
/* Returns the value slot; *found says whether it existed (else key was copied in, *slot==NULL). */
void **bmap__slot(struct bmap *m, const void *key, size_t klen, bool *found);
void *bmap__find(const struct bmap *m, const void *key, size_t klen);
bool bmap__next(const struct bmap *m, size_t *iter, struct bmap_entry **e);

#endif
