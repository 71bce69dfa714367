// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the trace reader: any byte string must be read without a
 * crash, a hang or an out-of-bounds access, and every record the reader hands
 * out must be safe to decode with the typed helpers report code uses.
 *
 * The normal suite links this with replay.c and runs the saved corpus in
 * tests/fuzz/corpus/reader/; `make fuzz` builds the libFuzzer binary (see
 * tests/Makefile.tests for how to run it).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "format/reader.h"
#include "format/record_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches every byte a helper says is valid, so ASan sees any overrun. */
static volatile uint64_t sink;

static void touch(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i];
	sink += s;
}

static void fuzz__stack(const struct xpu_record *rec)
{
	struct xpu_stack_view v;
	const struct xpu_stack *h;

	if (xpu_record__stack(rec, &v))
		return;
	h = v.hdr;
	touch(v.kernel_ips, 8 * (size_t)h->nr_kernel_ips);
	touch(v.user_ips, 8 * (size_t)h->nr_user_ips);
	touch(v.regs, 8 * (size_t)h->nr_regs);
	touch(v.stack, h->stack_size);
	/* Typed loads, as the unwinder does: catches misalignment under UBSan. */
	for (unsigned i = 0; i < h->nr_user_ips; i++)
		sink += v.user_ips[i];
}

/* Every part the record-type table says the type has, then its printer
 * (--dump's line). */
static void fuzz__record(const struct xpu_record *rec)
{
	static FILE *devnull;
	const char *k, *v, *s;
	uint64_t t;

	touch(rec->body, rec->body_size);
	sink += strlen(xpu_record__type_name(rec->type));
	if (rec->type == XPU_REC_META && !xpu_record__meta(rec, &k, &v))
		sink += strlen(k) + strlen(v);
	if (xpu_record__time(rec, &t))
		sink += t;
	fuzz__stack(rec);
	s = xpu_record__tail(rec);
	if (s)
		sink += strlen(s);
	/* fixed parts: the reader guaranteed min_size bytes */
	touch(rec->body, xpu_record__min_size(rec->type));
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (devnull)
		xpu_record__fprintf(devnull, rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct xpu_reader_stats *st;
	struct xpu_reader *r;
	struct xpu_record rec;
	uint64_t n1 = 0, n2 = 0, skipped;
	int err = 0;

	r = xpu_reader__open_mem(data, size, &err);
	if (!r) {
		if (err >= 0)	/* a failed open must say why */
			__builtin_trap();
		return 0;
	}
	touch(xpu_reader__header(r), sizeof(struct xpu_file_header));
	/* as a report: a first pass that reads no stacks, then a full one */
	xpu_reader__skip_stacks(r);
	while (xpu_reader__next(r, &rec) == 1) {
		fuzz__record(&rec);
		n1++;
	}
	st = xpu_reader__stats(r);
	skipped = st->bytes_skipped;
	if (st->records != n1 || skipped > size)
		__builtin_trap();
	/* A second pass (reports make two), stacks rebuilt, yields the same
	 * records and counts no damage twice. */
	xpu_reader__rewind(r);
	while (xpu_reader__next(r, &rec) == 1) {
		fuzz__record(&rec);
		n2++;
	}
	if (n2 != n1 || st->bytes_skipped != skipped || st->records != n1)
		__builtin_trap();
	xpu_reader__close(r);
	return 0;
}
