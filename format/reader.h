/* SPDX-License-Identifier: MIT */
/*
 * Trace reader: verifies the file header, then yields records chunk by chunk.
 * A damaged chunk (bad header CRC, sizes the file contradicts, bad payload
 * CRC, failed decompression, malformed record) is counted and skipped: the
 * reader scans forward to the next chunk magic. A truncated tail (a last
 * chunk running past the end, no chunk after it) ends the stream. Both are reported in
 * xpu_reader_stats so every report can say what was lost.
 */
#ifndef XPU_FORMAT_READER_H
#define XPU_FORMAT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "record_view.h"
#include "xpu_format.h"

struct xpu_reader;

struct xpu_reader_stats {
	uint64_t chunks_ok;
	uint64_t chunks_bad;		/* skipped: CRC, zstd or record-structure error */
	uint64_t bytes_skipped;		/* file bytes not decoded because of damage */
	uint64_t records;		/* records of known types in good chunks */
	uint64_t unknown_records;	/* types this reader does not know: skipped */
	uint64_t coded_records;		/* of the records: read as STACK_DELTA (1.4) */
	bool truncated;			/* the file ended inside a chunk */
	char first_error[160];		/* what the first damage was, for messages */
};

/* Error codes from open, returned negated through *err. */
#define XPU_READER_EIO		1	/* cannot open/read: errno says why */
#define XPU_READER_EMAGIC	2	/* not an xpu.data file */
#define XPU_READER_EVERSION	3	/* newer major version */
#define XPU_READER_ESHORT	4	/* shorter than the file header */
#define XPU_READER_ENOTREG	5	/* a FIFO, device, socket or directory */

/* Reads the whole file into memory (mmap). *err gets -XPU_READER_E* on failure.
 * Only a regular file is read: anything else is refused without waiting
 * (a FIFO is opened O_NONBLOCK, then checked). */
struct xpu_reader *xpu_reader__open(const char *path, int *err);
/* Same over a caller's buffer (fuzzing, tests); buf must outlive the reader.
 * Reads in the calling thread only (see xpu_reader__set_threads()). */
struct xpu_reader *xpu_reader__open_mem(const void *buf, size_t len, int *err);

/* Decompress and check chunks ahead of the caller in this many threads (0:
 * none; at most 4). Records, statistics and damage reports are the same
 * either way. xpu_reader__open() sets XPU_READER_THREADS, or one per CPU
 * for traces over 1 MiB; then rewinds. */
void xpu_reader__set_threads(struct xpu_reader *r, int threads);
/* At most this many (fewer stay): for a caller slower than one decoding
 * thread, which then holds fewer decoded chunks. Rewinds when it changes. */
void xpu_reader__limit_threads(struct xpu_reader *r, int threads);
void xpu_reader__close(struct xpu_reader *r);

const struct xpu_file_header *xpu_reader__header(const struct xpu_reader *r);

/* 1: *rec filled; 0: end of data. Damage is never an error here: it is
 * skipped and counted. Records of unknown types (a newer minor version's)
 * are skipped too and counted in unknown_records; callers see known types only. */
int xpu_reader__next(struct xpu_reader *r, struct xpu_record *rec);

/* The header of the chunk the record xpu_reader__next() returned last
 * came from (its CRCs and sizes: xpu-report -i DIR knows a chunk two files
 * of one recording both hold). */
const struct xpu_chunk_header *xpu_reader__chunk_header(const struct xpu_reader *r);

/* The bytes of the current chunk's records after the last one
 * xpu_reader__next() returned (records as it parses them, already
 * checked; unknown types included): valid until it loads the next chunk.
 * Lets a caller work on a chunk's records ahead of reading them. */
/* The reading thread's time getting chunks so far (ns): decoding them
 * itself, or waiting for a decode thread (xpu-report -v). */
uint64_t xpu_reader__wait_ns(const struct xpu_reader *r);

void xpu_reader__chunk_rest(const struct xpu_reader *r, const void **buf, size_t *len);

/* Frees what reading holds: the decoded chunks, the decompression
 * contexts, the decode threads (made again by the next read after a
 * rewind); the records handed out are gone. Until a rewind the reader is at
 * its end. For a caller that reads many traces one after the other (the
 * files of a rotated recording), so that those read hold nothing. */
void xpu_reader__release(struct xpu_reader *r);

/* Back to the first chunk (reports make two passes). Stats are not reset;
 * the second pass does not count the same damage twice. Stacks are handed
 * out again (xpu_reader__skip_stacks()). */
void xpu_reader__rewind(struct xpu_reader *r);

/*
 * Rewinds, and until the next rewind hands out the records that were
 * stored coded against an earlier stack (format 1.4's STACK_DELTA: most
 * stack records of a trace) without their registers and stack copy
 * (nr_regs and stack_size 0): for a pass that reads no stacks, which then
 * does not rebuild them (a report's first pass: for a PyTorch recording
 * they were 16 MB per chunk, copied word runs from the stack before).
 * Checked as fully as when rebuilt: the same damage, records and stats.
 */
void xpu_reader__skip_stacks(struct xpu_reader *r);

const struct xpu_reader_stats *xpu_reader__stats(const struct xpu_reader *r);

/* ---- typed views ---------------------------------------------------------- */

/* Minimum body size of each known type (0: unknown type), and its name
 * ("UNKNOWN" for others): from the record-type table, format/record_types.h. */
size_t xpu_record__min_size(uint16_t type);
const char *xpu_record__type_name(uint16_t type);

#endif
