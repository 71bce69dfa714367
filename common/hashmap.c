// SPDX-License-Identifier: MIT
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

void u64map__init(struct u64map *m) { memset(m, 0, sizeof(*m)); }

void u64map__exit(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static void u64map__rehash(struct u64map *m, size_t ncap)
{
	struct u64map n = {
		.keys = xcalloc(ncap, sizeof(uint64_t)),
		.vals = xcalloc(ncap, sizeof(uint64_t)),
		.used = xcalloc(ncap, 1),
		.cap = ncap,
	};

	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			*u64map__slot(&n, m->keys[i]) = m->vals[i];
	u64map__exit(m);
	*m = n;
}

uint64_t *u64map__find(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = xpu_hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->keys[i] == key)
			return &m->vals[i];
	}
}

uint64_t *u64map__slot(struct u64map *m, uint64_t key)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap)
		u64map__rehash(m, m->cap ? m->cap * 2 : 64);
	for (i = xpu_hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i]) {
			m->used[i] = 1;
			m->keys[i] = key;
			m->vals[i] = 0;
			m->len++;
			return &m->vals[i];
		}
		if (m->keys[i] == key)
			return &m->vals[i];
	}
}

bool u64map__del(struct u64map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	uint64_t *v = u64map__find(m, key);

	if (!v)
		return false;
	i = v - m->vals;
	m->used[i] = 0;
	m->len--;
	/* Backward-shift so later probes still find their keys. */
	for (j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = xpu_hash_u64(m->keys[j]) & mask;

		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->used[i] = 1;
			m->used[j] = 0;
			i = j;
		}
	}
	return true;
}

bool u64map__next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	for (; *iter < m->cap; (*iter)++) {
		if (m->used[*iter]) {
			if (key)
				*key = m->keys[*iter];
			if (val)
				*val = m->vals[*iter];
			(*iter)++;
			return true;
		}
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
