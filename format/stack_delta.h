/* SPDX-License-Identifier: MIT */
/*
 * STACK_DELTA coding (format 1.4, XPU_REC_STACK_DELTA in xpu_format.h).
 *
 * Consecutive stack copies of a thread are mostly the same bytes: the outer
 * frames (main, the event loop, the argv and environment strings at the top
 * of the main stack) do not change between two samples a millisecond apart.
 * The writer codes a stack record against its thread's previous one in the
 * same chunk: runs of words equal at the same address are copied, the rest
 * are literals. References never cross a chunk, so a
 * damaged chunk costs only its own records.
 *
 * The encoder runs in the recorder's drain thread (through the writer), the
 * decoder in the reader's chunk check: both are linear in the words coded.
 */
#ifndef XPU_FORMAT_STACK_DELTA_H
#define XPU_FORMAT_STACK_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xpu_format.h"

struct xpu_delta_enc;

struct xpu_delta_enc *xpu_delta_enc__new(void);
void xpu_delta_enc__free(struct xpu_delta_enc *e);
/* A new chunk begins: no record before it can be a reference. */
void xpu_delta_enc__reset(struct xpu_delta_enc *e);

/*
 * The record (type, flags, body of len bytes) is about to become record
 * number idx (0-based) of the open chunk. Returns the size of the whole
 * STACK_DELTA record (header included) written into dst (cap bytes), or 0
 * when the record is to be written as it is: not a stack record of the
 * right shape, no earlier record of its thread in this chunk, or a coding
 * no smaller than cap. A stack record becomes its thread's reference
 * either way.
 */
size_t xpu_delta__encode(struct xpu_delta_enc *e, uint32_t idx, uint16_t type, uint16_t flags,
			 const void *body, size_t len, void *dst, size_t cap);

/* The decoder's buffers, kept across chunks. */
struct xpu_delta_dec {
	uint8_t *buf;			/* the chunk's records as the writer was given them */
	size_t cap, len;
	size_t full;			/* len had every record its stack (stackless) */
	uint32_t *off;			/* offset in buf of each record */
	size_t off_cap;
	/* set by the caller: coded records rebuilt without their registers
	 * and stack copy (nr_regs and stack_size 0), for a pass that reads
	 * no stacks; checked as fully, with the same errors */
	bool stackless;
	struct delta_meta *meta;	/* stackless: each record's words */
	size_t meta_cap;
};

/*
 * Rebuilds the nr records of a chunk's decompressed data (len bytes, its
 * record framing already checked) into d->buf, every STACK_DELTA record
 * replaced by the record it codes. Returns 0, or -EINVAL with *why set
 * when a STACK_DELTA record is malformed (the chunk is then bad), -E2BIG
 * when the rebuilt records would pass limit bytes, -ENOMEM.
 */
int xpu_delta__decode(struct xpu_delta_dec *d, const uint8_t *in, size_t len, uint32_t nr,
		      size_t limit, const char **why);
void xpu_delta_dec__free(struct xpu_delta_dec *d);

#endif
