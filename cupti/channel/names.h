/* SPDX-License-Identifier: MIT */
/*
 * Kernel names interned per process: the first kernel with a given name
 * queues an XPU_REC_STRING (pid, id, name) and every kernel record carries
 * only the id. A name whose STRING record could not be queued (queue full)
 * is sent again with the next kernel that uses it, so no kernel ever refers
 * to an id the trace never defines unless that kernel's record is dropped too.
 *
 * NVTX messages and domain names share the table and the id space.
 *
 * Thread-safe. Does not include cupti.h. Allocation failure returns id 0
 * ("unknown name") instead of aborting the application.
 */
#ifndef XPU_CUPTI_NAMES_H
#define XPU_CUPTI_NAMES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct xpu_client;

struct xpu_name_entry {
	uint64_t hash;
	char *name;			/* NULL: empty slot */
	uint32_t id;
	uint32_t sent;			/* STRING record queued */
};

struct xpu_names {
	pthread_mutex_t lock;
	struct xpu_name_entry *tab;
	size_t cap, len;
	uint32_t next_id;
	uint32_t pid;
};

void xpu_names__init(struct xpu_names *n, uint32_t pid);
void xpu_names__exit(struct xpu_names *n);

/* Returns the id of name (>= 1), queueing its STRING record on c the first
 * time; 0 when out of memory. */
uint32_t xpu_names__intern(struct xpu_names *n, struct xpu_client *c, const char *name);
/* The same, keeping at most max names: a name new when max are kept gets a
 * fresh id and its STRING record each time, and is not remembered (0 when
 * that record could not be queued). */
uint32_t xpu_names__intern_max(struct xpu_names *n, struct xpu_client *c, const char *name,
			       size_t max);

#endif
