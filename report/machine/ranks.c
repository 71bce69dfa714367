// SPDX-License-Identifier: MIT
/* Ranks of processes from their PROC_ENV records (ranks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/machine/machine.h"
#include "report/machine/ranks.h"

static const char *const rank_keys[][6] = {
	[RANK_GLOBAL]	  = { "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
			      "SLURM_PROCID", NULL },
	[RANK_LOCAL]	  = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL },
	[RANK_WORLD_SIZE] = { "WORLD_SIZE", NULL },
};

void ranks__init(struct ranks *r)
{
	memset(r, 0, sizeof(*r));
	u64map__init(&r->by_pid);
}

void ranks__exit(struct ranks *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		for (size_t j = 0; j < r->envs[i].n; j++) {
			free(r->envs[i].keys[j]);
			free(r->envs[i].vals[j]);
		}
		free(r->envs[i].keys);
		free(r->envs[i].vals);
	}
	free(r->envs);
	u64map__exit(&r->by_pid);
	memset(r, 0, sizeof(*r));
}

void ranks__add(struct ranks *r, const struct xpu_record *rec)
{
	const struct xpu_proc_env *pe = rec->body;
	struct proc_env *e;
	const char *k, *v;
	size_t pos = 0;
	uint64_t *slot;

	r->envs = xgrow(r->envs, &r->cap, r->nr + 1, sizeof(*r->envs));
	e = &r->envs[r->nr];
	memset(e, 0, sizeof(*e));
	e->pid = pe->pid;
	e->time = pe->time;
	while (xpu_proc_env__next(rec, &pos, &k, &v)) {
		e->keys = xrealloc(e->keys, (e->n + 1) * sizeof(*e->keys));
		e->vals = xrealloc(e->vals, (e->n + 1) * sizeof(*e->vals));
		e->keys[e->n] = xstrdup(k);
		e->vals[e->n++] = xstrdup(v);
	}
	/* the latest exec's: records of one pid come in time order, but say so */
	slot = u64map__slot(&r->by_pid, pe->pid);
	if (!*slot || r->envs[*slot - 1].time <= pe->time)
		*slot = r->nr + 1;
	r->nr++;
}

const struct proc_env *ranks__env(const struct ranks *r, const struct machine *m, uint32_t pid)
{
	/* up the fork chain; bounded, so that a pid reused as its own
	 * ancestor cannot loop */
	for (int depth = 0; depth < 64; depth++) {
		const uint64_t *slot = u64map__find(&r->by_pid, pid);
		const struct proc *p;

		if (slot)
			return &r->envs[*slot - 1];
		p = m ? machine__find_proc(m, pid) : NULL;
		if (!p || !p->has_parent || p->ppid == pid)
			return NULL;
		pid = p->ppid;
	}
	return NULL;
}

const char *proc_env__get(const struct proc_env *e, const char *key)
{
	for (size_t i = 0; e && i < e->n; i++)
		if (!strcmp(e->keys[i], key))
			return e->vals[i];
	return NULL;
}

int ranks__get(const struct ranks *r, const struct machine *m, uint32_t pid,
	       enum rank_kind kind, uint32_t *out)
{
	const struct proc_env *e = ranks__env(r, m, pid);

	for (size_t i = 0; e && rank_keys[kind][i]; i++) {
		const char *v = proc_env__get(e, rank_keys[kind][i]);
		char *end;
		unsigned long n;

		if (!v || !*v)
			continue;
		errno = 0;
		n = strtoul(v, &end, 10);
		if (*end || errno || n > UINT32_MAX || *v == '-')
			continue;
		*out = (uint32_t)n;
		return 0;
	}
	return -ENOENT;
}
