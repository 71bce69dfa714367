// SPDX-License-Identifier: MIT
/*
 * Fuzz target for xpu_writer__add_encoded, the gate for records that arrive
 * from the CUPTI library over the channel (cupti/channel/wire.h: "a buggy or
 * hostile peer cannot corrupt the trace"). Property: whatever batch it
 * accepts reads back record for record with no damage; whatever it refuses
 * leaves the trace without a single record.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/reader.h"
#include "format/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tmpfs when there is one: the writer fsyncs at close, ~20 runs/s on disk. */
static char path[64];

static void fuzz__cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xpu_writer_opts o = { .chunk_size = 1024, .zstd_level = size & 1 ? -1 : 1 };
	const struct xpu_reader_stats *st;
	struct xpu_writer *w;
	struct xpu_reader *r;
	struct xpu_record rec;
	size_t off = 0, nr_in = 0;
	int err, rerr = 0;

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "%s/xpu-fuzz-encoded-XXXXXX",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(fuzz__cleanup);
	}
	w = xpu_writer__open(path, &o);
	if (!w)
		abort();
	err = xpu_writer__add_encoded(w, data, size);
	if (xpu_writer__close(w))
		abort();

	r = xpu_reader__open(path, &rerr);
	if (!r)
		abort();
	while (xpu_reader__next(r, &rec) == 1) {
		struct xpu_record_header rh;

		if (err || off + sizeof(rh) > size)
			__builtin_trap();	/* a refused batch wrote something */
		memcpy(&rh, data + off, sizeof(rh));
		if (rec.type != rh.type || rec.flags != rh.flags ||
		    rec.body_size != rh.size - sizeof(rh) ||
		    memcmp(rec.body, data + off + sizeof(rh), rec.body_size))
			__builtin_trap();	/* not what was accepted */
		off += rh.size;
		nr_in++;
	}
	st = xpu_reader__stats(r);
	if (st->chunks_bad || st->truncated || st->bytes_skipped || st->unknown_records ||
	    (!err && off != size) || st->records != nr_in)
		__builtin_trap();	/* accepted records made a damaged trace */
	xpu_reader__close(r);
	return 0;
}
