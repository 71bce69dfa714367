// SPDX-License-Identifier: MIT
/* Windows cut by event time (window.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "format/reader.h"
#include "format/record_types.h"
#include "record/capture/window.h"

/* Reads the chunk back: a file header in front of it, through the reader
 * (which checks it and rebuilds STACK_DELTA records), each record that
 * belongs added to fw as it was. */
static int window__split(struct xpu_writer *fw, const void *chunk, size_t len, uint64_t lo,
			 uint64_t hi, bool untimed, uint64_t *taken)
{
	struct xpu_file_header fh = { .magic = XPU_FILE_MAGIC, .major = XPU_VERSION_MAJOR,
				      .minor = XPU_VERSION_MINOR, .header_size = sizeof(fh) };
	uint8_t *buf = xmalloc(sizeof(fh) + len);
	const struct xpu_reader_stats *st;
	struct xpu_reader *r;
	struct xpu_record rec;
	int err = 0;

	memcpy(buf, &fh, sizeof(fh));
	memcpy(buf + sizeof(fh), chunk, len);
	r = xpu_reader__open_mem(buf, sizeof(fh) + len, &err);
	if (!r) {
		free(buf);
		return -EBADMSG;
	}
	while (xpu_reader__next(r, &rec) == 1) {
		struct iovec iov = { (void *)rec.body, rec.body_size };
		uint64_t t;
		bool timed = xpu_rectype__done_time(rec.type, rec.body, rec.body_size, &t);

		if (timed ? t < lo || t >= hi : !untimed)
			continue;
		err = xpu_writer__addv(fw, rec.type, rec.flags, &iov, 1);
		if (err)
			break;
		if (taken)
			++*taken;
	}
	st = xpu_reader__stats(r);
	if (!err && (st->chunks_bad || st->truncated))
		err = -EBADMSG;
	xpu_reader__close(r);
	free(buf);
	return err;
}

int window__take(struct xpu_writer *fw, const void *chunk, size_t len,
		 const struct xpu_writer_chunk *info, uint64_t lo, uint64_t hi, bool untimed,
		 uint64_t *taken)
{
	bool timed = info->max_time != 0;

	/* nothing of it belongs */
	if (!untimed && (!timed || info->max_time < lo || info->min_time >= hi))
		return 0;
	/* all of it: the chunk as it is */
	if (untimed && (!timed || (info->min_time >= lo && info->max_time < hi))) {
		int err = xpu_writer__append_chunk(fw, chunk, len, info);

		if (!err && taken)
			*taken += info->nr_records;
		return err;
	}
	return window__split(fw, chunk, len, lo, hi, untimed, taken);
}

static void window__meta_u64(struct xpu_writer *fw, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	xpu_writer__meta(fw, key, buf);
}

void window__meta(struct xpu_writer *fw, const struct window_span *ws)
{
	char buf[96];

	window__meta_u64(fw, XPU_META_WINDOW_START, ws->start);
	window__meta_u64(fw, XPU_META_WINDOW_END, ws->end);
	window__meta_u64(fw, XPU_META_WINDOW_RECORDING_START, ws->rec_start);
	if (!ws->cuda)
		snprintf(buf, sizeof(buf), "none: no CUDA process had connected");
	else if (!ws->gpu_newest)
		snprintf(buf, sizeof(buf), "none: no GPU record yet; flush_ns=%" PRIu64, ws->flush_ns);
	else
		snprintf(buf, sizeof(buf), "lag_ns=%" PRIu64 " flush_ns=%" PRIu64,
			 ws->end > ws->gpu_newest ? ws->end - ws->gpu_newest : 0, ws->flush_ns);
	xpu_writer__meta(fw, XPU_META_WINDOW_GPU_LAG, buf);
}
