// SPDX-License-Identifier: MIT
/*
 * The reader decodes chunks ahead in threads (xpu_reader__set_threads()):
 * records, their chunk indexes, statistics and the first damage message
 * must be exactly those of a sequential read, over whole, damaged and
 * truncated traces, across rewinds (reports read twice).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/reader.h"
#include "format/writer.h"
#include "tests/unit/test.h"

#define NR_RECORDS 5000

static char path[64];

/* A trace of NR_RECORDS COMM records over many small chunks; returns its bytes. */
static uint8_t *trace__make(size_t *len)
{
	struct xpu_writer_opts o = { .chunk_size = 4096, .zstd_level = 1 };
	struct xpu_writer *w;
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "/tmp/xpu-test-reader-threads.%d", (int)getpid());
	w = xpu_writer__open(path, &o);
	if (!w)
		return NULL;
	for (uint32_t i = 0; i < NR_RECORDS; i++) {
		struct xpu_comm c = { .time = i, .pid = i % 7, .tid = i };

		snprintf(c.comm, sizeof(c.comm), "t%u", i * 2654435761u);
		if (xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c)))
			return NULL;
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
	*len = st.st_size;
	return buf;
}

static int trace__write(const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* A digest of everything a reader hands out over two passes. */
struct digest {
	uint64_t h, n;
	struct xpu_reader_stats st;
};

static int trace__digest(int threads, struct digest *d)
{
	struct xpu_record rec;
	struct xpu_reader *r;
	int err = 0;

	memset(d, 0, sizeof(*d));
	r = xpu_reader__open(path, &err);
	if (!r)
		return -1;
	xpu_reader__set_threads(r, threads);
	for (int pass = 0; pass < 2; pass++) {
		xpu_reader__rewind(r);
		/* the second pass stops half way, then reads on after a rewind */
		for (uint64_t i = 0; xpu_reader__next(r, &rec) == 1; i++) {
			d->h = (d->h ^ rec.type ^ (uint64_t)rec.body_size << 16 ^ rec.chunk_index << 40) *
			       0x100000001b3ULL;
			for (uint32_t j = 0; j < rec.body_size; j++)
				d->h = (d->h ^ ((const uint8_t *)rec.body)[j]) * 0x100000001b3ULL;
			d->n++;
			if (pass == 1 && i == NR_RECORDS / 2)
				break;
		}
	}
	xpu_reader__rewind(r);
	while (xpu_reader__next(r, &rec) == 1)
		d->n++;
	d->st = *xpu_reader__stats(r);
	xpu_reader__close(r);
	return 0;
}

static int digest__eq(const struct digest *a, const struct digest *b)
{
	return a->h == b->h && a->n == b->n && a->st.chunks_ok == b->st.chunks_ok &&
	       a->st.chunks_bad == b->st.chunks_bad && a->st.bytes_skipped == b->st.bytes_skipped &&
	       a->st.records == b->st.records && a->st.truncated == b->st.truncated &&
	       !strcmp(a->st.first_error, b->st.first_error);
}

/* Every thread count gives the sequential digest for the bytes in path. */
static int trace__same_all_threads(struct digest *seq)
{
	if (trace__digest(0, seq))
		return 0;
	for (int t = 1; t <= 4; t++) {
		struct digest d;

		if (trace__digest(t, &d) || !digest__eq(seq, &d)) {
			fprintf(stderr, "  %d threads: %llu records vs %llu sequential, error '%s' vs '%s'\n",
				t, (unsigned long long)d.n, (unsigned long long)seq->n,
				d.st.first_error, seq->st.first_error);
			return 0;
		}
	}
	return 1;
}

static void test_reader_threads_whole(void)
{
	size_t len;
	uint8_t *buf = trace__make(&len);
	struct digest seq;

	TEST_ASSERT(buf);
	TEST_ASSERT(trace__same_all_threads(&seq));
	TEST_ASSERT(seq.st.chunks_ok > 20);
	TEST_ASSERT_EQ(seq.n, NR_RECORDS * 2 + NR_RECORDS / 2 + 1);
	TEST_ASSERT_EQ(seq.st.chunks_bad, 0);
	free(buf);
	unlink(path);
}

static void test_reader_threads_damaged(void)
{
	size_t len;
	uint8_t *buf = trace__make(&len);
	struct digest seq;

	TEST_ASSERT(buf);
	/* payload bytes in a few chunks, a chunk header, then the tail */
	buf[len / 5] ^= 0x55;
	buf[len / 3] ^= 0xff;
	for (size_t p = len / 2; p + 4 < len; p++) {
		uint32_t m;

		memcpy(&m, buf + p, 4);
		if (m == XPU_CHUNK_MAGIC) {
			buf[p + 5] ^= 1;
			break;
		}
	}
	buf[2 * len / 3] ^= 0x10;
	TEST_ASSERT(!trace__write(buf, len - len / 10));
	TEST_ASSERT(trace__same_all_threads(&seq));
	TEST_ASSERT(seq.st.chunks_bad >= 3);
	TEST_ASSERT(seq.st.truncated);
	TEST_ASSERT(seq.st.first_error[0]);
	free(buf);
	unlink(path);
}

static void test_reader_threads_cuts(void)
{
	size_t len;
	uint8_t *buf = trace__make(&len);

	TEST_ASSERT(buf);
	for (size_t cut = sizeof(struct xpu_file_header); cut < len; cut += len / 13) {
		struct digest seq;

		TEST_ASSERT(!trace__write(buf, cut));
		TEST_ASSERT(trace__same_all_threads(&seq));
	}
	free(buf);
	unlink(path);
}

int main(void)
{
	TEST_RUN(test_reader_threads_whole);
	TEST_RUN(test_reader_threads_damaged);
	TEST_RUN(test_reader_threads_cuts);
	TEST_EXIT();
}
