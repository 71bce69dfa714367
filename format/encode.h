/* SPDX-License-Identifier: MIT */
/*
 * The record framing, defined once: the trace writer and the CUPTI library
 * (which queues records for the recorder) both encode through it. A record
 * is struct xpu_record_header, the body, and zero padding to
 * XPU_RECORD_ALIGN.
 */
#ifndef XPU_FORMAT_ENCODE_H
#define XPU_FORMAT_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "format/reader.h"
#include "format/xpu_format.h"

/* Bytes the record with body iov[0..n) takes once encoded; 0 when it is too
 * large for the header's 32-bit size field. */
size_t xpu_record__encoded_size(const struct iovec *iov, int n);
/* Encodes it into dst, which holds size (= encoded_size) bytes. */
void xpu_record__encode(void *dst, size_t size, uint16_t type, uint16_t flags,
			const struct iovec *iov, int n);

/* Walks a batch of encoded records (as the CUPTI library sends them, before
 * any chunk): returns 1 with *rec set and *off moved past the record, 0 at the
 * end of the batch, -EINVAL when the next record's size is smaller than its
 * header or runs past len. The one framing check of every batch walker. */
int xpu_batch__next(const void *data, size_t len, size_t *off, struct xpu_record *rec);

#endif
