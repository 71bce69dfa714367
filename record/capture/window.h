/* SPDX-License-Identifier: MIT */
/*
 * Windows cut by event time (record/capture/rotate.c, Documentation/xpu-record.md
 * "Bounded capture"): a flight-recorder window or a rotated file holds the
 * records whose time falls in it, not the chunks that happened to be
 * sealed then. The recorder's chunks hold records of any time (GPU
 * activity comes a flush period late, an off-CPU block at its end), so a
 * chunk that straddles a cut is read back and its records are added one by
 * one to the files they belong to; a chunk whose records all belong to one
 * file goes there whole, still compressed. And each file says what its
 * window was (META window.*), so that a report gives the window's span,
 * the recording's, and how far the GPU side lagged the window's end.
 */
#ifndef XPU_RECORD_WINDOW_H
#define XPU_RECORD_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/writer.h"

#define WINDOW_END_OPEN	UINT64_MAX	/* a window to the end of the recording */

/*
 * Adds to fw the records of chunk (len bytes, header and payload, as a
 * sink is handed it) whose time t (when what it describes was over:
 * xpu_rectype__done_time(), format/record_types.h) is lo <= t < hi, and
 * its records without a time when untimed.
 * The chunk goes whole (xpu_writer__append_chunk) when all of it belongs.
 * *taken (may be NULL) counts the records added. Returns 0 or -errno
 * (-EBADMSG: the chunk does not read back).
 */
int window__take(struct xpu_writer *fw, const void *chunk, size_t len,
		 const struct xpu_writer_chunk *info, uint64_t lo, uint64_t hi, bool untimed,
		 uint64_t *taken);

/* What a file's window was: CLOCK_MONOTONIC ns. */
struct window_span {
	uint64_t start, end;		/* the records of [start, end) */
	uint64_t rec_start;		/* the recording's start */
	bool cuda;			/* a CUDA process had connected by end */
	uint64_t gpu_newest;		/* the newest GPU activity time received (0: none) */
	uint64_t flush_ns;		/* the CUPTI library's flush period */
};

/* Writes META window.start, window.end, window.recording_start and
 * window.gpu_lag (Documentation/xpu-data-format.md, "Metadata keys"). */
void window__meta(struct xpu_writer *fw, const struct window_span *ws);

#endif
