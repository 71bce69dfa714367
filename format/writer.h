/* SPDX-License-Identifier: MIT */
/*
 * Trace writer: appends records to an in-memory chunk and, when the chunk is
 * full or on xpu_writer__flush(), compresses it and writes it with a single
 * write(2). The file header goes out at open, so a recorder killed at any
 * point leaves a file whose complete chunks are all readable.
 *
 * A chunk that cannot be written (disk full, quota, I/O error) is dropped
 * whole: its space is allocated before it is written and a failed write is
 * cut off again, so the file always ends on a chunk boundary. Its records
 * are counted (stats: dropped), adding records goes on, and later chunks are
 * tried again. A few KiB stay allocated past the end of the file while
 * writing (fallocate KEEP_SIZE, where supported) for the last chunk, so lost
 * counts and FINISH still fit on a full disk; close() gives them back.
 *
 * Thread-safe: the recorder's drain thread and its GPU channel thread share
 * one writer. With opts.background, full chunks are compressed and written
 * by a thread of the writer, in order, so that the caller (the recorder's
 * reader of its ring buffers) only copies records; a writer killed with
 * chunks queued loses those (at most XPU_WRITER_QUEUE + 1 chunks).
 */
#ifndef XPU_FORMAT_WRITER_H
#define XPU_FORMAT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "encode.h"
#include "stack_prune.h"
#include "xpu_format.h"

struct xpu_writer;

/* What a finished chunk holds (xpu_writer_opts.sink, xpu_writer__append_chunk). */
struct xpu_writer_chunk {
	uint32_t nr_records;
	uint32_t per_type[XPU_REC_MAX];
	size_t raw_len;			/* record bytes before compression */
	/* The smallest and largest time of its records (when each was
	 * over: xpu_rectype__done_time(), format/record_types.h), 0 for none:
	 * where a flight window or a rotated file may take the chunk whole
	 * (record/capture/window.c). */
	uint64_t min_time, max_time;
};

struct xpu_writer_opts {
	uint64_t features;		/* XPU_FEAT_* for the file header */
	size_t chunk_size;		/* raw bytes per chunk; 0: default (4 MiB) */
	int zstd_level;			/* 0: default (3); <0: store uncompressed */
	bool stack_delta;		/* code stack records against their thread's previous
					 * one in the chunk (STACK_DELTA, format 1.4) */
	struct xpu_prune *prune;	/* told every record added (executable mappings,
					 * forks: format/stack_prune.h); not owned */
	bool background;		/* compress and write full chunks in a thread of
					 * the writer's (xpu_writer__handoff) */
	/* Told every record before it is added (any thread, no lock held);
	 * returning true drops the record (xpu-record's --activate, and the
	 * counts it writes per file itself with --switch-output). */
	bool (*tap)(void *ctx, uint16_t type, uint16_t flags, const struct iovec *iov, int n);
	void *tap_ctx;
	/* Given each finished chunk (header and payload, len bytes) instead of
	 * writing it to a file, in order, one call at a time: xpu-record's
	 * rotated files and flight recorder (record/capture/rotate.c). Returns 0 or
	 * -errno (the chunk is then counted as dropped). Open such a writer
	 * with xpu_writer__sink_open(): it has no file. */
	int (*sink)(void *ctx, const void *chunk, size_t len, const struct xpu_writer_chunk *info);
	void *sink_ctx;
};

struct xpu_writer_stats {
	uint64_t records;		/* written, or in the open chunk */
	uint64_t chunks;
	uint64_t raw_bytes;		/* record bytes before compression */
	uint64_t file_bytes;		/* bytes written to the file */
	uint64_t per_type[XPU_REC_MAX];	/* records written (or in the open chunk) per type */
	uint64_t dropped;		/* records in chunks that could not be written */
	uint64_t dropped_per_type[XPU_REC_MAX];
	uint64_t chunks_dropped;
	uint64_t bg_chunks;		/* background: chunks handed to the thread */
	uint64_t bg_waits;		/* ... times a full queue made the caller wait */
	uint64_t bg_wait_ns;		/* ... and how long in all */
};

/* Creates path as a new file with mode 0600 (traces hold stack memory). An
 * existing regular file is replaced (unlinked first: its inode, owner and
 * mode are never changed); a symbolic link (ELOOP) or anything else that is
 * not a regular file (EINVAL) is refused without being opened. Returns NULL
 * and sets errno on failure. xpu-record creates its file itself
 * (record/output.c: .old, sudo owner) and uses xpu_writer__fdopen(). */
struct xpu_writer *xpu_writer__open(const char *path, const struct xpu_writer_opts *opts);

/* The same on fd, an empty regular file open for writing: written with
 * pwrite(2) from offset 0. The writer owns fd once this succeeds (closed by
 * xpu_writer__close); on failure (NULL, errno set) the caller still does. */
struct xpu_writer *xpu_writer__fdopen(int fd, const struct xpu_writer_opts *opts);

/* A writer whose chunks go to opts->sink (required) and to no file: no file
 * header is written; xpu_writer__set_features() only remembers the bits
 * (xpu_writer__features). */
struct xpu_writer *xpu_writer__sink_open(const struct xpu_writer_opts *opts);

/* Appends a chunk another writer made (a sink's chunk: header and payload,
 * len bytes, checked by the reader like any), after the open chunk's
 * records. Counted in the stats as if added here. Returns 0 or -errno. */
int xpu_writer__append_chunk(struct xpu_writer *w, const void *chunk, size_t len,
			     const struct xpu_writer_chunk *info);

/* The file header's feature bits as last set. */
uint64_t xpu_writer__features(struct xpu_writer *w);

/* Adds one record: the header is built here, body is iov[0..n) concatenated,
 * padding is added. Returns 0 or -errno for this record (-E2BIG, -ENOMEM).
 * A write error is not returned here: the chunk's records are counted as
 * dropped (xpu_writer__stats) and xpu_writer__close() returns the error. */
int xpu_writer__addv(struct xpu_writer *w, uint16_t type, uint16_t flags,
		     const struct iovec *iov, int n);
int xpu_writer__add(struct xpu_writer *w, uint16_t type, const void *body, size_t len);

/* Appends records that are already encoded (header + body, aligned), e.g.
 * a batch received from the CUPTI library. The whole batch is validated
 * first (sizes, alignment, known type, minimum size): -EINVAL adds nothing. */
int xpu_writer__add_encoded(struct xpu_writer *w, const void *data, size_t len);

/* Convenience for XPU_REC_META. */
int xpu_writer__meta(struct xpu_writer *w, const char *key, const char *value);

/* Rewrites the file header's feature bits: a recorder clears the bit of data
 * that never came (XPU_FEAT_GPU when no CUDA process connected), so the
 * header says what was recorded. Returns 0 or -errno. */
int xpu_writer__set_features(struct xpu_writer *w, uint64_t features);

/* Compresses and writes the current chunk, if any, and in background mode
 * waits for every chunk queued before it. Returns 0 or the -errno of these
 * writes (the chunk is then dropped and counted). */
int xpu_writer__flush(struct xpu_writer *w);
/* Background mode: hands the current chunk to the writer's thread and
 * returns (waiting only while XPU_WRITER_QUEUE chunks are queued). A write
 * error comes out in the stats and at close. Otherwise the same as
 * xpu_writer__flush(). */
void xpu_writer__handoff(struct xpu_writer *w);

/* Writes the open chunk as the last one (it may use the reserve: flush first
 * so that only the closing records are in it), fsyncs and closes; frees w.
 * Returns 0, or the first write error of the whole file as -errno: then
 * stats.dropped records are missing from it. */
int xpu_writer__close(struct xpu_writer *w);
/* The same, with the final stats (what the file holds and lacks) in *st. */
int xpu_writer__close_stats(struct xpu_writer *w, struct xpu_writer_stats *st);

void xpu_writer__stats(struct xpu_writer *w, struct xpu_writer_stats *st);

/* From now on: no STACK_DELTA coding and zstd level 3, as format 1.3
 * wrote. xpu-record calls it when a CUDA process connects (see
 * Documentation/design-trace-size.md). Thread-safe. */
void xpu_writer__plain(struct xpu_writer *w);

#endif
