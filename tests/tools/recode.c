// SPDX-License-Identifier: MIT
/*
 * recode: reads a trace and writes its records again, in the same order,
 * with stack records coded (STACK_DELTA, format 1.4) or in full. A trace
 * and its recoding hold the same records once read, so every report of the
 * two must be the same bytes: tests/shell/e2e_stack_delta.sh checks that on
 * a real recording, and bench/trace_size.sh uses it to measure the coding
 * on the same recording.
 *
 * --prune: also zeroes the stack words no unwinder reads, as xpu-record
 * does with XPU_STACK_PRUNE=address (format/stack_prune.h), knowing every
 * mapping of the trace (a first pass notes them); --prune --cfi: and where
 * the report's CFI unwinding of a stack is known, its frames in place of
 * the registers and stack words (XPU_STACK_UNWOUND), as xpu-record does by
 * default (record/unwind_reads.c; the mapped files must be on this
 * machine); --prune --cfi --words: the words that unwinding reads instead
 * of its frames, as XPU_STACK_PRUNE=cfi (format 1.5). The report of a
 * trace recorded with XPU_STACK_PRUNE=0 and of its pruned copy must be the
 * same (tests/shell/e2e_stack_prune.sh).
 *
 * Usage: recode [--plain] [--prune [--cfi [--words]]] [--chunk BYTES] [--level N] IN OUT
 * Prints "records N raw BYTES file BYTES" of OUT and "input: coded N" (the
 * records IN held as STACK_DELTA) on stdout.
 * Built by `make tests-build` as $(O)/tests/tools/recode.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/reader.h"
#include "format/stack_prune.h"
#include "format/writer.h"
#include "record/unwind_reads.h"

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "plain", no_argument, NULL, 'p' },
		{ "prune", no_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'l' },
		{ "cfi", no_argument, NULL, 'C' },
		{ "words", no_argument, NULL, 'W' },
		{ 0 }
	};
	struct xpu_writer_opts wo = { .stack_delta = true };
	const struct xpu_reader_stats *rs;
	struct xpu_writer_stats ws;
	struct xpu_reader *r;
	struct xpu_writer *w;
	struct xpu_record rec;
	struct xpu_prune *prune = NULL;
	struct unwind_reads *reads = NULL;
	uint8_t *copy = NULL;
	size_t copy_cap = 0;
	int c, err = 0;
	bool words = false;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			wo.stack_delta = false;
			break;
		case 'P':
			prune = xpu_prune__new();
			break;
		case 'c':
			wo.chunk_size = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			wo.zstd_level = atoi(optarg);
			break;
		case 'C':
			reads = unwind_reads__new();
			break;
		case 'W':
			words = true;
			break;
		default:
			fprintf(stderr, "usage: recode [--plain] [--prune [--cfi [--words]]] [--chunk BYTES] [--level N] IN OUT\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: recode [--plain] [--prune [--cfi [--words]]] [--chunk BYTES] [--level N] IN OUT\n");
		return 2;
	}
	r = xpu_reader__open(argv[optind], &err);
	if (!r) {
		fprintf(stderr, "recode: cannot read %s (%d)\n", argv[optind], err);
		return 1;
	}
	wo.features = xpu_reader__header(r)->features;
	w = xpu_writer__open(argv[optind + 1], &wo);
	if (!w) {
		perror("recode: cannot write");
		return 1;
	}
	if (prune && reads) {
		struct xpu_prune_reads hook;

		unwind_reads__hook(reads, &hook);
		if (words)
			hook.frames = NULL;
		xpu_prune__set_reads(prune, &hook);
	}
	if (prune) {
		while (xpu_reader__next(r, &rec) == 1)
			xpu_prune__note(prune, rec.type, rec.body, rec.body_size);
		xpu_reader__rewind(r);
	}
	while (xpu_reader__next(r, &rec) == 1) {
		struct iovec iov = { .iov_base = (void *)rec.body, .iov_len = rec.body_size };

		if (prune) {
			if (rec.body_size > copy_cap) {
				free(copy);
				copy_cap = rec.body_size;
				copy = malloc(copy_cap);
				if (!copy)
					return 1;
			}
			memcpy(copy, rec.body, rec.body_size);
			xpu_prune__stack(prune, rec.type, copy, &iov.iov_len, true);
			iov.iov_base = copy;
		}

		if (xpu_writer__addv(w, rec.type, rec.flags, &iov, 1)) {
			fprintf(stderr, "recode: cannot add a record\n");
			return 1;
		}
	}
	rs = xpu_reader__stats(r);
	if (rs->chunks_bad || rs->truncated)
		fprintf(stderr, "recode: %s: damaged (%s): recoded what was readable\n",
			argv[optind], rs->first_error);
	if (xpu_writer__close_stats(w, &ws)) {
		perror("recode: write");
		return 1;
	}
	printf("records %llu raw %llu file %llu\n", (unsigned long long)ws.records,
	       (unsigned long long)ws.raw_bytes, (unsigned long long)ws.file_bytes);
	printf("input: coded %llu\n", (unsigned long long)rs->coded_records);
	xpu_reader__close(r);
	if (reads) {
		struct unwind_reads_stats us;

		unwind_reads__stats(reads, &us);
		printf("cfi: exact %llu not known %llu files %llu failed %llu\n",
		       (unsigned long long)us.exact, (unsigned long long)us.not_known,
		       (unsigned long long)us.files, (unsigned long long)us.files_failed);
	}
	xpu_prune__free(prune);
	unwind_reads__free(reads);
	free(copy);
	return 0;
}
