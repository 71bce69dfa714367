// SPDX-License-Identifier: MIT
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
#include "xalloc.h"

uint64_t xpu_hash_bytes(const void *data, size_t len)
{
	/* FNV-1a on 8-byte words, finished with splitmix: fast enough for keys
	 * of a few hundred bytes, no external dependency. */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ len;
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	h = (h ^ w) * 0x100000001b3ULL;
	return xpu_hash_u64(h);
}

#define U64MAP_EMPTY UINT64_MAX

void u64map__init(struct u64map *m) { memset(m, 0, sizeof(*m)); }

void u64map__init_seq(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
	m->seq = true;
}

static inline uint64_t u64map__hash(const struct u64map *m, uint64_t key)
{
	return m->seq ? (key & 0xffffffffu) + xpu_hash_u64(key >> 32) : xpu_hash_u64(key);
}

void u64map__exit(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static void u64map__rehash(struct u64map *m, size_t ncap)
{
	struct u64map_slot *old = m->slots;
	size_t ocap = m->cap;

	m->slots = xmalloc(ncap * sizeof(*m->slots));	/* m->seq is kept */
	for (size_t i = 0; i < ncap; i++)
		m->slots[i].key = U64MAP_EMPTY;
	m->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].key == U64MAP_EMPTY)
			continue;
		for (size_t j = u64map__hash(m, old[i].key) & (ncap - 1);; j = (j + 1) & (ncap - 1)) {
			if (m->slots[j].key == U64MAP_EMPTY) {
				m->slots[j] = old[i];
				break;
			}
		}
	}
	free(old);
}

uint64_t *u64map__find(const struct u64map *m, uint64_t key)
{
	if (key == U64MAP_EMPTY)
		return m->has_max ? (uint64_t *)&m->max_val : NULL;
	if (!m->cap)
		return NULL;
	for (size_t i = u64map__hash(m, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key)
			return &m->slots[i].val;
		if (m->slots[i].key == U64MAP_EMPTY)
			return NULL;
	}
}

uint64_t *u64map__slot(struct u64map *m, uint64_t key)
{
	size_t i;

	if (key == U64MAP_EMPTY) {
		if (!m->has_max) {
			m->has_max = true;
			m->max_val = 0;
			m->len++;
		}
		return &m->max_val;
	}
	if ((m->len + 1) * 2 > m->cap)
		u64map__rehash(m, m->cap ? m->cap * 2 : 64);
	for (i = u64map__hash(m, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key)
			return &m->slots[i].val;
		if (m->slots[i].key == U64MAP_EMPTY) {
			m->slots[i].key = key;
			m->slots[i].val = 0;
			m->len++;
			return &m->slots[i].val;
		}
	}
}

bool u64map__del(struct u64map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	uint64_t *v;

	if (key == U64MAP_EMPTY) {
		if (!m->has_max)
			return false;
		m->has_max = false;
		m->len--;
		return true;
	}
	v = u64map__find(m, key);
	if (!v)
		return false;
	i = (struct u64map_slot *)((char *)v - offsetof(struct u64map_slot, val)) - m->slots;
	m->slots[i].key = U64MAP_EMPTY;
	m->len--;
	/* Backward-shift so later probes still find their keys. */
	for (j = (i + 1) & mask; m->slots[j].key != U64MAP_EMPTY; j = (j + 1) & mask) {
		size_t home = u64map__hash(m, m->slots[j].key) & mask;

		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->slots[i] = m->slots[j];
			m->slots[j].key = U64MAP_EMPTY;
			i = j;
		}
	}
	return true;
}

bool u64map__next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	for (; *iter < m->cap; (*iter)++) {
		if (m->slots[*iter].key != U64MAP_EMPTY) {
			if (key)
				*key = m->slots[*iter].key;
			if (val)
				*val = m->slots[*iter].val;
			(*iter)++;
			return true;
		}
	}
	/* The UINT64_MAX key, if any, comes last. */
	if (*iter == m->cap && m->has_max) {
		if (key)
			*key = U64MAP_EMPTY;
		if (val)
			*val = m->max_val;
		(*iter)++;
		return true;
	}
	return false;
}

void bmap__init(struct bmap *m) { memset(m, 0, sizeof(*m)); }

void bmap__exit(struct bmap *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->tab[i].key)
			continue;
		free(m->tab[i].key);
		if (free_val)
			free_val(m->tab[i].val);
	}
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

static struct bmap_entry *bmap__probe(const struct bmap *m, uint64_t h, const void *key, size_t klen)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct bmap_entry *e = &m->tab[i];

		if (!e->key || (e->hash == h && e->klen == klen && !memcmp(e->key, key, klen)))
			return e;
	}
}

void *bmap__find(const struct bmap *m, const void *key, size_t klen)
{
	struct bmap_entry *e;

	if (!m->cap)
		return NULL;
	e = bmap__probe(m, xpu_hash_bytes(key, klen), key, klen);
	return e->key ? e->val : NULL;
}

void **bmap__slot(struct bmap *m, const void *key, size_t klen, bool *found)
{
	uint64_t h = xpu_hash_bytes(key, klen);
	struct bmap_entry *e;

	if ((m->len + 1) * 2 > m->cap) {
		struct bmap n = { .cap = m->cap ? m->cap * 2 : 64 };

		n.tab = xcalloc(n.cap, sizeof(*n.tab));
		for (size_t i = 0; i < m->cap; i++)
			if (m->tab[i].key)
				*bmap__probe(&n, m->tab[i].hash, m->tab[i].key, m->tab[i].klen) = m->tab[i];
		n.len = m->len;
		free(m->tab);
		*m = n;
	}
	e = bmap__probe(m, h, key, klen);
	if (e->key) {
		if (found)
			*found = true;
		return &e->val;
	}
	if (found)
		*found = false;
	e->hash = h;
	e->klen = klen;
	e->key = xmalloc(klen ? klen : 1);
	memcpy(e->key, key, klen);
	e->val = NULL;
	m->len++;
	return &e->val;
}

bool bmap__next(const struct bmap *m, size_t *iter, struct bmap_entry **e)
{
	for (; *iter < m->cap; (*iter)++) {
		if (m->tab[*iter].key) {
			*e = &m->tab[(*iter)++];
			return true;
		}
	}
	return false;
}
