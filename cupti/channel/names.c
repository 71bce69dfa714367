// SPDX-License-Identifier: MIT
/* Per-process kernel-name interning: open addressing, linear probing, load
 * factor <= 1/2. Names are few (hundreds) but looked up for every kernel. */
#include <stdlib.h>
#include <string.h>

#include "format/xpu_format.h"
#include "client.h"
#include "names.h"

static uint64_t names__hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

void xpu_names__init(struct xpu_names *n, uint32_t pid)
{
	memset(n, 0, sizeof(*n));
	pthread_mutex_init(&n->lock, NULL);
	n->next_id = 1;
	n->pid = pid;
}

void xpu_names__exit(struct xpu_names *n)
{
	for (size_t i = 0; i < n->cap; i++)
		free(n->tab[i].name);
	free(n->tab);
	n->tab = NULL;
	n->cap = n->len = 0;
}

static int names__grow(struct xpu_names *n)
{
	size_t ncap = n->cap ? n->cap * 2 : 256;
	struct xpu_name_entry *ntab = calloc(ncap, sizeof(*ntab));

	if (!ntab)
		return -1;
	for (size_t i = 0; i < n->cap; i++) {
		struct xpu_name_entry *e = &n->tab[i];
		size_t j;

		if (!e->name)
			continue;
		for (j = e->hash & (ncap - 1); ntab[j].name; j = (j + 1) & (ncap - 1))
			;
		ntab[j] = *e;
	}
	free(n->tab);
	n->tab = ntab;
	n->cap = ncap;
	return 0;
}

static void names__send(struct xpu_names *n, struct xpu_client *c, struct xpu_name_entry *e)
{
	struct xpu_string s = { .pid = n->pid, .id = e->id };

	if (!xpu_client__add_str(c, XPU_REC_STRING, &s, sizeof(s), e->name))
		e->sent = 1;
}

uint32_t xpu_names__intern_max(struct xpu_names *n, struct xpu_client *c, const char *name,
			       size_t max)
{
	uint64_t h = names__hash(name);
	struct xpu_name_entry *e;
	uint32_t id = 0;
	size_t i;

	pthread_mutex_lock(&n->lock);
	if ((n->len + 1) * 2 > n->cap && n->len < max && names__grow(n))
		goto out;
	for (i = n->cap ? h & (n->cap - 1) : 0; n->cap && n->tab[i].name;
	     i = (i + 1) & (n->cap - 1)) {
		e = &n->tab[i];
		if (e->hash == h && !strcmp(e->name, name))
			goto found;
	}
	if (n->len >= max) {
		/* one STRING per use: the id is defined where it is used */
		struct xpu_string s = { .pid = n->pid, .id = n->next_id++ };

		if (!xpu_client__add_str(c, XPU_REC_STRING, &s, sizeof(s), name))
			id = s.id;
		goto out;
	}
	e = &n->tab[i];
	e->name = strdup(name);
	if (!e->name)
		goto out;
	e->hash = h;
	e->id = n->next_id++;
	e->sent = 0;
	n->len++;
found:
	/* Queued under our lock, so it precedes any kernel that uses the id. */
	if (!e->sent)
		names__send(n, c, e);
	id = e->id;
out:
	pthread_mutex_unlock(&n->lock);
	return id;
}

uint32_t xpu_names__intern(struct xpu_names *n, struct xpu_client *c, const char *name)
{
	return xpu_names__intern_max(n, c, name, SIZE_MAX);
}
