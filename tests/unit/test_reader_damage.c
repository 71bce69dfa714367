// SPDX-License-Identifier: MIT
/*
 * A chunk header with a valid CRC but wrong sizes (a writer bug, or damage
 * written over with a fresh CRC) is damage, not a truncated tail: the reader
 * resynchronises on the next chunk and every other chunk is still read
 * (Documentation/xpu-data-format.md, "Reader rules"). 50 variants of a
 * multi-chunk trace, each with one size field of one chunk changed and its
 * header CRC recomputed, read sequentially and in threads: the samples of
 * every chunk but the damaged one must come back. Also a comp_size that
 * ends exactly on a later chunk, or at the end of the file.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "format/reader.h"
#include "format/writer.h"
#include "tests/unit/test.h"
#include "tests/unit/test_format_records.h"

#define NR_SAMPLES	2500
#define MAX_CHUNKS	64
#define NR_VARIANTS	50

static char path[64];
static uint8_t *trace;
static size_t trace_len;
static int nr_chunks;
static size_t chunk_off[MAX_CHUNKS];
static int chunk_samples[MAX_CHUNKS];	/* samples in each chunk of the whole trace */
static int total_samples;

/* NR_SAMPLES samples with small user stacks, a COMM now and then, over
 * chunks of about 4 KiB. */
static uint8_t *trace__make(size_t *len)
{
	struct xpu_writer_opts o = { .features = XPU_FEAT_CPU_SAMPLES, .chunk_size = 4096,
				     .zstd_level = 1 };
	struct xpu_writer *w;
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "/tmp/xpu-test-reader-damage.%d", (int)getpid());
	w = xpu_writer__open(path, &o);
	if (!w)
		return NULL;
	for (uint32_t i = 0; i < NR_SAMPLES; i++) {
		uint8_t body[sizeof(struct xpu_sample) + 4 * 8];
		struct xpu_sample s = { .time = i, .pid = 10 + i % 3, .tid = 10 + i % 5,
					.weight = 1, .stack.nr_user_ips = 4 };

		memcpy(body, &s, sizeof(s));
		for (int k = 0; k < 4; k++) {
			uint64_t ip = 0x400000 + ((i * 2654435761u) >> (k * 4) & 0xfff0);

			memcpy(body + sizeof(s) + 8 * k, &ip, 8);
		}
		if (xpu_writer__add(w, XPU_REC_SAMPLE, body, sizeof(body)))
			return NULL;
		if (i % 100 == 0) {
			struct xpu_comm c = { .time = i, .pid = 10, .tid = 10 + i % 5 };

			snprintf(c.comm, sizeof(c.comm), "t%u", i);
			if (xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c)))
				return NULL;
		}
	}
	if (xpu_writer__close(w))
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size);
	if (!buf || read(fd, buf, st.st_size) != st.st_size)
		return NULL;
	close(fd);
	unlink(path);
	*len = st.st_size;
	return buf;
}

/* Samples read from buf (threads: decode threads), with the stats. */
static int trace__samples(const uint8_t *buf, size_t len, int threads, int *per_chunk,
			  struct xpu_reader_stats *st)
{
	struct xpu_reader *r;
	struct xpu_record rec;
	int err, n = 0;

	r = xpu_reader__open_mem(buf, len, &err);
	if (!r)
		return -1;
	xpu_reader__set_threads(r, threads);
	while (xpu_reader__next(r, &rec) == 1) {
		if (rec.type != XPU_REC_SAMPLE)
			continue;
		n++;
		if (per_chunk && rec.chunk_index < MAX_CHUNKS)
			per_chunk[rec.chunk_index]++;
	}
	*st = *xpu_reader__stats(r);
	xpu_reader__close(r);
	return n;
}

/* A damaged variant: which field of which chunk gets which value. */
struct variant {
	int chunk;
	size_t field;			/* offsetof in struct xpu_chunk_header */
	uint32_t value;
};

static const char *field__name(size_t field)
{
	return field == offsetof(struct xpu_chunk_header, comp_size) ? "comp_size" :
	       field == offsetof(struct xpu_chunk_header, header_size) ? "header_size" :
	       "raw_size";
}

/* The value kinds cycled through: sizes past the end of the file, past the
 * format's limit, pointing into a later chunk, a little off, zero. */
#define NR_KINDS 13
static struct variant variant__make(int v)
{
	struct xpu_chunk_header ch;
	struct variant x;
	size_t rest;

	x.chunk = (v * 7) % nr_chunks;
	memcpy(&ch, trace + chunk_off[x.chunk], sizeof(ch));
	rest = trace_len - chunk_off[x.chunk];
	switch (v % NR_KINDS) {
	case 0:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = 0x4000000; break;
	case 1:  x.field = offsetof(struct xpu_chunk_header, header_size); x.value = 0x80000000u; break;
	case 2:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = 0xffffffffu; break;
	case 3:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = rest; break;
	case 4:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = ch.comp_size + (rest - ch.comp_size) / 2; break;
	case 5:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = ch.comp_size + 1; break;
	case 6:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = ch.comp_size - 1; break;
	case 7:  x.field = offsetof(struct xpu_chunk_header, comp_size); x.value = 0; break;
	case 8:  x.field = offsetof(struct xpu_chunk_header, header_size); x.value = rest; break;
	case 9:  x.field = offsetof(struct xpu_chunk_header, header_size); x.value = 40; break;
	case 10: x.field = offsetof(struct xpu_chunk_header, raw_size); x.value = XPU_CHUNK_MAX_RAW + 1; break;
	case 11: x.field = offsetof(struct xpu_chunk_header, raw_size); x.value = 0xffffffffu; break;
	default: x.field = offsetof(struct xpu_chunk_header, header_size); x.value = 0xffff; break;
	}
	return x;
}

/* Copy of the trace with the variant's field set and the header CRC redone. */
static uint8_t *variant__apply(const struct variant *x)
{
	uint8_t *buf = malloc(trace_len);
	struct xpu_chunk_header ch;
	size_t off = chunk_off[x->chunk];

	memcpy(buf, trace, trace_len);
	memcpy(&ch, buf + off, sizeof(ch));
	memcpy((uint8_t *)&ch + x->field, &x->value, 4);
	ch.header_crc = crc32(0, (const Bytef *)&ch, offsetof(struct xpu_chunk_header, header_crc));
	memcpy(buf + off, &ch, sizeof(ch));
	return buf;
}

static void test_setup(void)
{
	struct xpu_reader_stats st;

	trace = trace__make(&trace_len);
	TEST_ASSERT(trace);
	for (nr_chunks = 0; nr_chunks < MAX_CHUNKS; nr_chunks++) {
		chunk_off[nr_chunks] = test_format__chunk_at(trace, trace_len, nr_chunks);
		if (chunk_off[nr_chunks] == trace_len)
			break;
	}
	TEST_ASSERT(nr_chunks >= 8 && nr_chunks < MAX_CHUNKS);
	total_samples = trace__samples(trace, trace_len, 0, chunk_samples, &st);
	TEST_ASSERT_EQ(total_samples, NR_SAMPLES);
	TEST_ASSERT_EQ(st.chunks_ok, nr_chunks);
	for (int c = 0; c < nr_chunks; c++)
		TEST_ASSERT(chunk_samples[c] > 0);
	printf("  %zu bytes, %d chunks, %d samples\n", trace_len, nr_chunks, total_samples);
}

/* Every chunk but the damaged one is read; unless the last chunk was the
 * damaged one, nothing is taken for a truncated tail. */
static void check_variants(int threads)
{
	int intact = 0, recovered = 0, whole = 0;
	const char *first_miss = NULL;
	static char miss[200];

	TEST_ASSERT(trace);
	for (int v = 0; v < NR_VARIANTS; v++) {
		struct variant x = variant__make(v);
		uint8_t *buf = variant__apply(&x);
		struct xpu_reader_stats st;
		int expect = total_samples - chunk_samples[x.chunk];
		int got = trace__samples(buf, trace_len, threads, NULL, &st);
		bool last = x.chunk == nr_chunks - 1;
		bool ok = got == expect && (last || (!st.truncated && st.chunks_bad == 1));

		intact += expect;
		recovered += got < 0 ? 0 : got;
		whole += ok;
		if (!ok && !first_miss) {
			snprintf(miss, sizeof(miss),
				 "chunk %d %s=0x%x: %d samples of %d, %llu bad chunks%s",
				 x.chunk, field__name(x.field), x.value, got, expect,
				 (unsigned long long)st.chunks_bad, st.truncated ? ", truncated" : "");
			first_miss = miss;
		}
		if (!ok)
			fprintf(stderr, "  variant %d: chunk %d %s=0x%x: %d of %d samples,"
				" %llu bad chunks%s (%s)\n", v, x.chunk, field__name(x.field),
				x.value, got, expect, (unsigned long long)st.chunks_bad,
				st.truncated ? ", truncated" : "", st.first_error);
		free(buf);
	}
	printf("  threads %d: %d of %d variants recover every other chunk; %d of %d intact samples\n",
	       threads, whole, NR_VARIANTS, recovered, intact);
	if (first_miss)
		fprintf(stderr, "  first miss: %s\n", first_miss);
	TEST_ASSERT_EQ(whole, NR_VARIANTS);
	TEST_ASSERT_EQ(recovered, intact);
}

static void test_sequential(void)
{
	check_variants(0);
}

static void test_threaded(void)
{
	check_variants(2);
}

/* comp_size (header CRC redone) ending exactly where a later chunk starts,
 * or at the end of the file: the extent looks whole, but its payload CRC
 * fails and chunk headers that hold start inside it. Only the chunk itself
 * is lost; before, every chunk it ran over was too (21 of 51 samples'
 * chunks in the trace). */
static void test_swallow(void)
{
	int cases = 0, whole = 0;

	TEST_ASSERT(trace);
	for (int c = 0; c + 2 <= nr_chunks; c++) {
		int targets[3] = { c + 2, c + 2 + (nr_chunks - c - 2) / 2, nr_chunks };

		for (int k = 0; k < 3; k++) {
			size_t end = targets[k] < nr_chunks ? chunk_off[targets[k]] : trace_len;
			struct xpu_chunk_header ch;
			struct variant x;

			if (k && targets[k] == targets[k - 1])
				continue;
			memcpy(&ch, trace + chunk_off[c], sizeof(ch));
			x = (struct variant){ c, offsetof(struct xpu_chunk_header, comp_size),
					      (uint32_t)(end - chunk_off[c] - ch.header_size) };
			for (int threads = 0; threads <= 2; threads += 2) {
				uint8_t *buf = variant__apply(&x);
				struct xpu_reader_stats st;
				int expect = total_samples - chunk_samples[c];
				int got = trace__samples(buf, trace_len, threads, NULL, &st);
				bool ok = got == expect && st.chunks_bad == 1 && !st.truncated &&
					  st.chunks_ok == (uint64_t)nr_chunks - 1;

				cases++;
				whole += ok;
				if (!ok)
					fprintf(stderr, "  chunk %d comp_size to chunk %d, threads %d: "
						"%d of %d samples, %llu good and %llu bad chunks (%s)\n",
						c, targets[k], threads, got, expect,
						(unsigned long long)st.chunks_ok,
						(unsigned long long)st.chunks_bad, st.first_error);
				free(buf);
			}
		}
	}
	printf("  %d of %d chunks with comp_size to a later chunk cost that chunk only\n",
	       whole, cases);
	TEST_ASSERT_EQ(whole, cases);
}

/* The last chunk cut short is a truncated tail still: nothing follows it. */
static void test_tail_still_truncated(void)
{
	struct xpu_reader_stats st;
	size_t last;
	int got;

	TEST_ASSERT(trace);
	last = chunk_off[nr_chunks - 1];
	got = trace__samples(trace, trace_len - 5, 0, NULL, &st);
	TEST_ASSERT_EQ(got, total_samples - chunk_samples[nr_chunks - 1]);
	TEST_ASSERT(st.truncated);
	TEST_ASSERT_EQ(st.chunks_bad, 0);
	TEST_ASSERT_EQ(st.bytes_skipped, trace_len - 5 - last);
}

int main(void)
{
	TEST_RUN(test_setup);
	TEST_RUN(test_sequential);
	TEST_RUN(test_threaded);
	TEST_RUN(test_swallow);
	TEST_RUN(test_tail_still_truncated);
	free(trace);
	TEST_EXIT();
}
