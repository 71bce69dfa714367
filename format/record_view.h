/* SPDX-License-Identifier: MIT */
/*
 * A record as the reader hands it out (struct xpu_record), and the typed
 * views of its parts: the stack of a record with one, a trailing string, a
 * META pair, the pairs of a PROC_ENV. Below the record-type table
 * (record_types.h), the STACK_DELTA decoder (stack_delta.h) and the reader
 * (reader.h, which includes this header): all three parse records through
 * these, none of them through another.
 */
#ifndef XPU_FORMAT_RECORD_VIEW_H
#define XPU_FORMAT_RECORD_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "xpu_format.h"

/* A record as read: points into the reader's chunk buffer, valid until the
 * next call of xpu_reader__next(). body_size excludes the record header. */
struct xpu_record {
	uint16_t type;
	uint16_t flags;
	uint32_t body_size;
	const void *body;
	uint64_t chunk_index;		/* which chunk it came from (0-based) */
};

/* Decoded variable part of a record with an xpu_stack. */
struct xpu_stack_view {
	const struct xpu_stack *hdr;
	const uint64_t *kernel_ips;
	const uint64_t *user_ips;
	const uint64_t *regs;
	const uint8_t *stack;
};

/* Parse the xpu_stack at 'stack' with 'avail' bytes from it to the end of
 * the body. Returns 0 or -EINVAL when the counts overflow the record. */
int xpu_stack__parse(const void *stack, size_t avail, struct xpu_stack_view *v);

/* For records with a trailing NUL-terminated string after a fixed part of
 * 'fixed' bytes: returns it, or NULL if it is not terminated in the body. */
const char *xpu_record__string(const struct xpu_record *rec, size_t fixed);

/* XPU_REC_META key/value. Returns 0 or -EINVAL. */
int xpu_record__meta(const struct xpu_record *rec, const char **key, const char **value);

/* The pairs of an XPU_REC_PROC_ENV record, one per call: *pos starts at 0.
 * Returns 1 with *key and *value set, 0 at the end (or at a pair not
 * terminated inside the body: the pairs before it are still good). */
int xpu_proc_env__next(const struct xpu_record *rec, size_t *pos, const char **key,
		       const char **value);

#endif
