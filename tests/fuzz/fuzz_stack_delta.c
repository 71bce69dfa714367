// SPDX-License-Identifier: MIT
/*
 * Fuzz target for STACK_DELTA coding (format 1.4, format/stack_delta.c).
 * The input is a batch of encoded records, as a chunk holds them.
 *  - Decoding: xpu_delta__decode on it, as the reader does on a chunk,
 *    must not crash or read out of bounds, whatever the STACK_DELTA records
 *    say, and must keep the rebuilt chunk within its limit.
 *    Decoding without stacks (a report's first pass) must give the same
 *    verdict and reason.
 *  - Coding: the batch's records, coded with the encoder (as the writer
 *    does, each one against its thread's previous one) and decoded again,
 *    must come back byte for byte.
 * The normal suite replays tests/fuzz/corpus/stack_delta/ (seeds written
 * by make_corpus); `make fuzz` builds the libFuzzer binary.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "format/encode.h"
#include "format/stack_delta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT	(1u << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct xpu_delta_dec dd, back;
	struct xpu_delta_enc *e;
	struct xpu_record rec;
	const char *why = NULL;
	uint8_t *batch, *coded;
	size_t off = 0, n = 0, clen = 0;
	int ret;

	/* a copy, 8-aligned, like a chunk's decompressed data */
	batch = malloc(size + 8);
	if (!batch)
		return 0;
	memcpy(batch, data, size);
	/* the framing the reader checks before decoding */
	while ((ret = xpu_batch__next(batch, size, &off, &rec)) == 1) {
		if ((rec.body_size + 8) % 8)
			break;
		n++;
	}
	if (ret != 0 || n == 0) {
		free(batch);
		return 0;
	}
	ret = xpu_delta__decode(&dd, batch, size, (uint32_t)n, LIMIT, &why);
	if (ret && ret != -EINVAL && ret != -E2BIG && ret != -ENOMEM)
		__builtin_trap();
	if (!ret && dd.len > LIMIT)
		__builtin_trap();
	{	/* a pass that reads no stacks (xpu_reader__skip_stacks): the
		 * same verdict and reason, the full size counted */
		static struct xpu_delta_dec sl = { .stackless = true };
		const char *why2 = NULL;
		int ret2 = xpu_delta__decode(&sl, batch, size, (uint32_t)n, LIMIT, &why2);

		if (ret != -ENOMEM && ret2 != -ENOMEM &&
		    (ret2 != ret || (ret == -EINVAL && (!why2 || strcmp(why, why2))) ||
		     (!ret && (sl.full != dd.len || sl.len > dd.len))))
			__builtin_trap();
	}
	if (ret) {
		free(batch);
		return 0;
	}
	/* Decoded records, coded again and decoded: the same bytes. */
	coded = malloc(dd.len + 8);
	e = xpu_delta_enc__new();
	if (!coded || !e)
		abort();
	off = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct xpu_record_header rh;
		size_t c;

		memcpy(&rh, dd.buf + off, sizeof(rh));
		c = xpu_delta__encode(e, k, rh.type, rh.flags, dd.buf + off + sizeof(rh),
				      rh.size - sizeof(rh), coded + clen, rh.size);
		if (c >= rh.size || (c && c % 8))
			__builtin_trap();	/* coded no smaller, or misaligned */
		if (!c)
			memcpy(coded + clen, dd.buf + off, rh.size);
		clen += c ? c : rh.size;
		off += rh.size;
	}
	if (xpu_delta__decode(&back, coded, clen, (uint32_t)n, LIMIT, &why) ||
	    back.len != dd.len || memcmp(back.buf, dd.buf, dd.len))
		__builtin_trap();	/* the coding lost something */
	xpu_delta_enc__free(e);
	free(coded);
	free(batch);
	return 0;
}
