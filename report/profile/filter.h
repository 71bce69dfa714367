/* SPDX-License-Identifier: MIT */
/*
 * The report filters (--pid, --tid, --comm, --time, --rank, --device) and the one rule that
 * applies them, to CPU samples (session.c), to joined GPU work (gpu_join.c,
 * on the launching thread and the GPU start time) and to profile entries
 * (the TUI's call tree, which has no times).
 *
 * An empty list keeps everything; a time window is in seconds after
 * time_base, the first timestamp of the trace (set by the session after
 * pass 1). A record is kept when every list it is checked against holds it.
 * --rank is a list of ranks, turned into the pids that have one of them by
 * the session after pass 1 (rank_pids); --device applies to GPU work only
 * (filter__match_device, in the GPU join).
 */
#ifndef XPU_REPORT_FILTER_H
#define XPU_REPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/hashmap.h"

struct filter {
	uint32_t *pids, *tids;
	size_t nr_pids, nr_tids;
	char **comms;
	size_t nr_comms;
	bool has_start, has_end;
	double start, end;		/* seconds after time_base */
	uint64_t time_base;		/* ns, CLOCK_MONOTONIC */
	uint32_t *ranks, *devices;	/* --rank, --device */
	size_t nr_ranks, nr_devices;
	struct u64map rank_pids;	/* pids with a rank of ranks[] (after pass 1) */
};

/* Pass as time to filter__match_task() when there is none: not checked. */
#define FILTER_NO_TIME 0

/* pid, tid and time (ns) rules: the cheap part, checked before the comm is
 * looked up. */
bool filter__match_task(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t time);
/* The comm rule. */
bool filter__match_comm(const struct filter *f, const char *comm);
/* The --device rule, for GPU work on CUDA device dev. */
bool filter__match_device(const struct filter *f, uint32_t dev);

static inline bool filter__match(const struct filter *f, uint32_t pid, uint32_t tid,
				 uint64_t time, const char *comm)
{
	return filter__match_task(f, pid, tid, time) && filter__match_comm(f, comm);
}

static inline bool filter__empty(const struct filter *f)
{
	return !f->nr_pids && !f->nr_tids && !f->nr_comms && !f->has_start && !f->has_end &&
	       !f->nr_ranks && !f->nr_devices;
}

/* Option values into the filter (lists are appended); return 0 or -EINVAL. */
int filter__parse_ids(uint32_t **ids, size_t *nr, const char *arg);
int filter__parse_comms(struct filter *f, const char *arg);
int filter__parse_time(struct filter *f, const char *arg);
/* dst: a copy of src with lists of its own. */
void filter__copy(struct filter *dst, const struct filter *src);
/* Frees the lists and clears the filter. */
void filter__exit(struct filter *f);

#endif
