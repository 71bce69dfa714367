/* SPDX-License-Identifier: MIT */
/*
 * Conversion of CUPTI activity records (CUPTI 13 layouts: Kernel10,
 * Memcpy6, Memset4, API, Synchronization2; with --gpu-memory Memory4 and
 * MemoryPool3, in cupti/memory/cupti_mem_convert.c) into xpu_format.h GPU records,
 * queued on the channel client. Uses only header types from
 * cupti_activity.h, so unit tests build synthetic records and run it without
 * libcupti or a GPU.
 */
#ifndef XPU_CUPTI_CONVERT_H
#define XPU_CUPTI_CONVERT_H

#include <stdint.h>
#include <cupti_activity.h>

struct xpu_client;
struct xpu_names;

struct xpu_convert {
	struct xpu_client *client;
	struct xpu_names *names;
	uint32_t pid;
	uint64_t nr_converted;		/* records queued (or dropped by a full queue) */
	uint64_t nr_ignored;		/* activity kinds we do not convert */
};

void xpu_convert__init(struct xpu_convert *cv, struct xpu_client *c,
		       struct xpu_names *names, uint32_t pid);

/* Converts one record. Returns 0, 1 when the kind is not one we convert, or
 * -ENOSPC when the queue dropped it (already counted by the client). */
int xpu_convert__activity(struct xpu_convert *cv, const CUpti_Activity *rec);

/* Iterator over a completed activity buffer: cuptiActivityGetNextRecord in
 * the library, a plain walker in tests. Returns 0 and sets *rec, or nonzero
 * at the end or on error. */
typedef int (*xpu_activity_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);

/* Converts every record of buf; returns the number of records visited. */
uint64_t xpu_convert__buffer(struct xpu_convert *cv, uint8_t *buf, size_t valid,
			     xpu_activity_next_fn next);

#endif
