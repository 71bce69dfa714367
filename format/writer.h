/* SPDX-License-Identifier: MIT */
/*
 * Trace writer: appends records to an in-memory chunk and, when the chunk is
 * full or on xpu_writer__flush(), compresses it and writes it with a single
 * write(2). The file header goes out at open, so a recorder killed at any
 * point leaves a file whose complete chunks are all readable.
 *
 * Thread-safe: the recorder's drain thread and its GPU channel thread share
 * one writer.
 */
#ifndef XPU_FORMAT_WRITER_H
#define XPU_FORMAT_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "encode.h"
#include "xpu_format.h"

struct xpu_writer;

struct xpu_writer_opts {
	uint64_t features;		/* XPU_FEAT_* for the file header */
	size_t chunk_size;		/* raw bytes per chunk; 0: default (4 MiB) */
	int zstd_level;			/* 0: default (3); <0: store uncompressed */
};

struct xpu_writer_stats {
	uint64_t records;
	uint64_t chunks;
	uint64_t raw_bytes;		/* record bytes before compression */
	uint64_t file_bytes;		/* bytes written to the file */
	uint64_t per_type[XPU_REC_MAX];	/* records written per type */
};

/* Creates (truncating) path with mode 0600: traces hold stack memory.
 * Returns NULL and sets errno on failure. */
struct xpu_writer *xpu_writer__open(const char *path, const struct xpu_writer_opts *opts);

/* Adds one record: the header is built here, body is iov[0..n) concatenated,
 * padding is added. Returns 0 or -errno (a write error is sticky). */
int xpu_writer__addv(struct xpu_writer *w, uint16_t type, uint16_t flags,
		     const struct iovec *iov, int n);
int xpu_writer__add(struct xpu_writer *w, uint16_t type, const void *body, size_t len);

/* Appends records that are already encoded (header + body, aligned), e.g.
 * a batch received from the CUPTI library. The whole batch is validated
 * first (sizes, alignment, known type, minimum size): -EINVAL adds nothing. */
int xpu_writer__add_encoded(struct xpu_writer *w, const void *data, size_t len);

/* Convenience for XPU_REC_META. */
int xpu_writer__meta(struct xpu_writer *w, const char *key, const char *value);

/* Compresses and writes the current chunk, if any. */
int xpu_writer__flush(struct xpu_writer *w);

/* Flushes, fsyncs and closes; frees w. Returns 0 or -errno. */
int xpu_writer__close(struct xpu_writer *w);

void xpu_writer__stats(struct xpu_writer *w, struct xpu_writer_stats *st);

#endif
