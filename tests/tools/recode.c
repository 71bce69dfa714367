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
 * default (record/unwind/unwind_reads.c; the mapped files must be on this
 * machine); --prune --cfi --words: the words that unwinding reads instead
 * of its frames, as XPU_STACK_PRUNE=cfi (format 1.5). The report of a
 * trace recorded with XPU_STACK_PRUNE=0 and of its pruned copy must be the
 * same (tests/shell/e2e_stack_prune.sh).
 *
 * --split N: OUT.0000000000000001 ... OUT.<N, 16 digits> instead of OUT,
 * the files of one recording as xpu-record --switch-output writes them
 * (META recording_id first; the state records so far, the metadata,
 * processes and mappings, repeated at the start of each with
 * XPU_RECORD_REPEATED; its own FINISH): IN's records split evenly, so that
 * xpu-report -i DIR reads what IN holds (tests/shell/report_many_files.sh).
 *
 * Usage: recode [--plain] [--prune [--cfi [--words]]] [--chunk BYTES] [--level N]
 *               [--split N] IN OUT
 * Prints "records N raw BYTES file BYTES" of OUT and "input: coded N" (the
 * records IN held as STACK_DELTA) on stdout.
 * Built by `make tests-build` as $(O)/tests/tools/recode.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/reader.h"
#include "format/record_types.h"
#include "format/stack_prune.h"
#include "format/writer.h"
#include "record/unwind/unwind_reads.h"

#define RECODE_USAGE "usage: recode [--plain] [--prune [--cfi [--words]]] [--chunk BYTES] " \
	"[--level N] [--split N] IN OUT\n"

/* --split: what each file starts with (as record/capture/rotate.c's state keeps). */
static bool recode__is_state(uint16_t type)
{
	switch (type) {
	case XPU_REC_META: case XPU_REC_COMM: case XPU_REC_FORK: case XPU_REC_EXIT:
	case XPU_REC_MMAP: case XPU_REC_KSYM: case XPU_REC_PERF_MAP: case XPU_REC_STRING:
	case XPU_REC_PY_CODE: case XPU_REC_PROC_ENV: case XPU_REC_GPU_DEVICE:
	case XPU_REC_GPU_GRAPH_NODE:
		return true;
	}
	return false;
}

struct split {
	const char *out;
	uint64_t files, file;		/* how many; the one being written (from 0) */
	struct xpu_writer_opts wo;
	struct xpu_finish fin;		/* the current file's counts */
	struct { uint16_t type, flags; size_t len; uint8_t *body; } *state;
	size_t nr_state;
};

static struct xpu_writer *split__open(struct split *sp)
{
	char name[4096];
	struct xpu_writer *w;
	static const char id[] = "recording_id\0recode-split";

	snprintf(name, sizeof(name), "%s.%016llu", sp->out, (unsigned long long)sp->file + 1);
	w = xpu_writer__open(name, &sp->wo);
	if (!w) {
		perror("recode: cannot write");
		exit(1);
	}
	xpu_writer__add(w, XPU_REC_META, id, sizeof(id));
	for (size_t i = 0; i < sp->nr_state; i++) {
		struct iovec iov = { sp->state[i].body, sp->state[i].len };

		xpu_writer__addv(w, sp->state[i].type, sp->state[i].flags | XPU_RECORD_REPEATED,
				 &iov, 1);
	}
	memset(&sp->fin, 0, sizeof(sp->fin));
	return w;
}

static void split__close(struct split *sp, struct xpu_writer *w)
{
	xpu_writer__add(w, XPU_REC_FINISH, &sp->fin, sizeof(sp->fin));
	if (xpu_writer__close(w)) {
		perror("recode: write");
		exit(1);
	}
}

/* One record of IN into the current file (the next one from its share on). */
static struct xpu_writer *split__add(struct split *sp, struct xpu_writer *w, uint64_t i,
				     uint64_t total, const struct xpu_record *rec,
				     const struct iovec *iov)
{
	uint64_t t;

	if (rec->type == XPU_REC_FINISH)	/* each file has its own */
		return w;
	while (sp->file + 1 < sp->files && i >= (sp->file + 1) * total / sp->files) {
		split__close(sp, w);
		sp->file++;
		w = split__open(sp);
	}
	if (xpu_writer__addv(w, rec->type, rec->flags, iov, 1)) {
		fprintf(stderr, "recode: cannot add a record\n");
		exit(1);
	}
	if (recode__is_state(rec->type) && !(rec->flags & XPU_RECORD_REPEATED)) {
		sp->state = realloc(sp->state, (sp->nr_state + 1) * sizeof(*sp->state));
		if (!sp->state || !(sp->state[sp->nr_state].body = malloc(iov->iov_len + 1)))
			exit(1);
		memcpy(sp->state[sp->nr_state].body, iov->iov_base, iov->iov_len);
		sp->state[sp->nr_state].type = rec->type;
		sp->state[sp->nr_state].flags = rec->flags;
		sp->state[sp->nr_state++].len = iov->iov_len;
	}
	if (rec->type == XPU_REC_SAMPLE)
		sp->fin.nr_samples++;
	else if (rec->type == XPU_REC_GPU_CORR)
		sp->fin.nr_corr++;
	else if (xpu_rectype__is(rec->type, XPU_RECF_GPU))
		sp->fin.nr_gpu++;
	else if (rec->type == XPU_REC_LOST && rec->body_size >= sizeof(struct xpu_lost))
		sp->fin.nr_lost += ((const struct xpu_lost *)rec->body)->count;
	if (!(rec->flags & XPU_RECORD_REPEATED) && xpu_record__time(rec, &t) && t > sp->fin.time)
		sp->fin.time = t;
	return w;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "plain", no_argument, NULL, 'p' },
		{ "prune", no_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'l' },
		{ "cfi", no_argument, NULL, 'C' },
		{ "words", no_argument, NULL, 'W' },
		{ "split", required_argument, NULL, 's' },
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
	struct split sp = { 0 };
	uint64_t total = 0, i = 0;
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
		case 's':
			sp.files = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, RECODE_USAGE);
			return 2;
		}
	}
	if (argc - optind != 2 || (sp.files && prune) || sp.files > 1000000) {
		fprintf(stderr, RECODE_USAGE);
		return 2;
	}
	r = xpu_reader__open(argv[optind], &err);
	if (!r) {
		fprintf(stderr, "recode: cannot read %s (%d)\n", argv[optind], err);
		return 1;
	}
	wo.features = xpu_reader__header(r)->features;
	if (sp.files) {
		sp.out = argv[optind + 1];
		sp.wo = wo;
		while (xpu_reader__next(r, &rec) == 1)
			total += rec.type != XPU_REC_FINISH;
		xpu_reader__rewind(r);
		w = split__open(&sp);
	} else {
		w = xpu_writer__open(argv[optind + 1], &wo);
	}
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

		if (sp.files) {
			w = split__add(&sp, w, i, total, &rec, &iov);
			i += rec.type != XPU_REC_FINISH;
			continue;
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
	if (sp.files) {
		split__close(&sp, w);
		printf("files %llu records %llu\n", (unsigned long long)sp.file + 1,
		       (unsigned long long)total);
		xpu_reader__close(r);
		return 0;
	}
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
