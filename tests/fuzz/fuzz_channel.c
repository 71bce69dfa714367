// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the GPU records channel (record/gpu/channel.c, contract in
 * cupti/channel/wire.h): the input is the byte stream one CUDA process sends,
 * framed messages of encoded records. It is handed to channel__receive() in
 * pieces of varying size, as reads from the socket would deliver it.
 * Properties: the trace holds exactly the records of the messages accepted,
 * in order, byte for byte, and reads back without damage; a refused message
 * adds none of its records and ends the stream (the client is dropped); the
 * channel's GPU record count is that of the accepted messages.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/log.h"
#include "cupti/channel/wire.h"
#include "format/reader.h"
#include "record/gpu/channel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tmpfs when there is one: the writer fsyncs at close. */
static char path[64];

static void fuzz__cleanup(void)
{
	unlink(path);
}

/* Pieces the stream arrives in, chosen by the input's length. */
static const size_t pieces[] = { 65536, 1, 7, 8, 13, 64, 1000, 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xpu_writer_opts o = { .chunk_size = 4096, .zstd_level = size & 1 ? -1 : 1 };
	const struct xpu_reader_stats *st;
	size_t piece = pieces[size % (sizeof(pieces) / sizeof(pieces[0]))];
	size_t pos = 0, have = 0, accepted = 0, off = 0;
	uint64_t gpu = 0, nr_in = 0;
	struct xpu_writer *w;
	struct xpu_reader *r;
	struct channel *ch;
	struct xpu_record rec;
	uint8_t *buf, *acc;
	int err = 0, rerr = 0;

	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/xpu-fuzz-channel-%d",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
		atexit(fuzz__cleanup);
	}
	xpu_quiet = 1;
	buf = malloc(size + 1);
	acc = malloc(size + 1);		/* the accepted messages' records */
	w = xpu_writer__open(path, &o);
	if (!buf || !acc || !w || channel__open(&ch, w))
		abort();
	while (pos < size) {
		size_t n = size - pos < piece ? size - pos : piece, used;

		memcpy(buf + have, data + pos, n);
		pos += n;
		have += n;
		err = channel__receive(ch, buf, have, &used);
		if (err && err != -EPROTO && err != -EBADMSG)
			__builtin_trap();
		if (used > have)
			__builtin_trap();
		/* what was consumed is whole messages: keep their records */
		for (size_t m = 0; m < used; ) {
			struct xpu_channel_msg h;

			memcpy(&h, buf + m, sizeof(h));
			if (h.magic != XPU_CHANNEL_MAGIC || m + sizeof(h) + h.len > used)
				__builtin_trap();	/* consumed a bad or partial message */
			memcpy(acc + accepted, buf + m + sizeof(h), h.len);
			accepted += h.len;
			m += sizeof(h) + h.len;
		}
		if (err)
			break;		/* the client is dropped */
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	gpu = channel__records(ch);
	channel__close(ch);
	if (xpu_writer__close(w))
		abort();

	r = xpu_reader__open(path, &rerr);
	if (!r)
		abort();
	while (xpu_reader__next(r, &rec) == 1) {
		struct xpu_record_header rh;

		if (off + sizeof(rh) > accepted)
			__builtin_trap();	/* a record no accepted message holds */
		memcpy(&rh, acc + off, sizeof(rh));
		if (rec.type != rh.type || rec.flags != rh.flags ||
		    rec.body_size != rh.size - sizeof(rh) ||
		    memcmp(rec.body, acc + off + sizeof(rh), rec.body_size))
			__builtin_trap();	/* not what was accepted */
		if (rh.type >= XPU_REC_GPU_KERNEL && rh.type != XPU_REC_GPU_CORR)
			gpu--;
		off += rh.size;
		nr_in++;
	}
	st = xpu_reader__stats(r);
	if (off != accepted || gpu || st->chunks_bad || st->truncated || st->bytes_skipped ||
	    st->unknown_records || st->records != nr_in)
		__builtin_trap();	/* lost, miscounted or damaged records */
	xpu_reader__close(r);
	free(buf);
	free(acc);
	return 0;
}
