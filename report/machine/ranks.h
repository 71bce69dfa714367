/* SPDX-License-Identifier: MIT */
/*
 * Which rank of a parallel job each process is: the PROC_ENV records of the
 * trace (format 1.3), collected in pass 1. A process without a record of
 * its own has its nearest ancestor's (forked without exec, or gone before
 * xpu-record read its environment).
 *
 * The rank is the first of RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
 * SLURM_PROCID that is set to a number; the local rank the first of
 * LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; the world size
 * WORLD_SIZE. torchrun's variables come first: a torchrun job under Slurm
 * or mpirun has both, and torchrun's are the ranks torch.distributed uses.
 */
#ifndef XPU_REPORT_RANKS_H
#define XPU_REPORT_RANKS_H

#include <stdbool.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "format/reader.h"

struct machine;

struct proc_env {
	uint32_t pid;
	uint64_t time;
	char **keys, **vals;
	size_t n;
};

struct ranks {
	struct proc_env *envs;
	size_t nr, cap;
	struct u64map by_pid;		/* pid -> index + 1 of its latest record */
};

void ranks__init(struct ranks *r);
void ranks__exit(struct ranks *r);
/* A PROC_ENV record (pass 1). */
void ranks__add(struct ranks *r, const struct xpu_record *rec);
/* The environment pid had (its own latest, else its nearest ancestor's in
 * m), or NULL. */
const struct proc_env *ranks__env(const struct ranks *r, const struct machine *m, uint32_t pid);
const char *proc_env__get(const struct proc_env *e, const char *key);

enum rank_kind { RANK_GLOBAL, RANK_LOCAL, RANK_WORLD_SIZE };
/* The rank (kind) of pid by the precedence above: 0 and *out, or -ENOENT. */
int ranks__get(const struct ranks *r, const struct machine *m, uint32_t pid,
	       enum rank_kind kind, uint32_t *out);

#endif
