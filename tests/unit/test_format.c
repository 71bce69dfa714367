// SPDX-License-Identifier: MIT
/*
 * Trace format: writer/reader round trip of every record type, chunking,
 * oversized records, add_encoded validation, damage (payload CRC, header CRC
 * with resync, bad record structure), truncation at every offset, unknown
 * types, version rules, file mode, and the typed view helpers' bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "format/record_types.h"
#include "format/writer.h"
#include "test.h"
#include "test_format_records.h"

static char dir[] = "/tmp/xpu-test-format-XXXXXX";
static char path[256];

static uint32_t align8(uint32_t n)
{
	return (n + 7) & ~7u;
}

static bool writer_background;	/* compress in the writer's thread */

static struct xpu_writer *open_writer(size_t chunk, int level)
{
	struct xpu_writer_opts o = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS,
				     .chunk_size = chunk, .zstd_level = level,
				     .background = writer_background };

	return xpu_writer__open(path, &o);
}

/* Writes rounds x all record types; returns the number of records. */
static int write_trace(size_t chunk, int level, int rounds, struct tf_rec *out)
{
	struct xpu_writer *w = open_writer(chunk, level);
	int n = 0;

	if (!w)
		return -1;
	for (int i = 0; i < rounds; i++) {
		int k = tf__make_records(out + n, i);

		for (int j = 0; j < k; j++) {
			struct iovec iov = { out[n + j].body, out[n + j].len };

			if (xpu_writer__addv(w, out[n + j].type, out[n + j].flags, &iov, 1))
				return -1;
		}
		if (i % 3 == 2)		/* as the recorder's periodic flush */
			xpu_writer__handoff(w);
		n += k;
	}
	return xpu_writer__close(w) ? -1 : n;
}

static uint8_t *load_file(size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size + 1);
	*len = read(fd, buf, st.st_size);
	close(fd);
	return buf;
}

/* Does rec hold exactly what tf wrote (type, flags, bytes, zero padding)? */
static bool rec_equal(const struct xpu_record *rec, const struct tf_rec *tf)
{
	const uint8_t *b = rec->body;

	if (rec->type != tf->type || rec->flags != tf->flags ||
	    rec->body_size != align8(tf->len + 8) - 8 || memcmp(b, tf->body, tf->len))
		return false;
	for (uint32_t i = tf->len; i < rec->body_size; i++)
		if (b[i])
			return false;
	return true;
}

static void check_roundtrip(int level)
{
	struct tf_rec recs[TF_NR_RECORDS];
	struct xpu_reader *r;
	struct xpu_record rec;
	struct xpu_stack_view v;
	const char *k, *val;
	int n, i = 0, err = 0, samples = 0;

	n = write_trace(0, level, 1, recs);
	TEST_ASSERT_EQ(n, TF_NR_RECORDS - 1);
	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	TEST_ASSERT_EQ(xpu_reader__header(r)->major, XPU_VERSION_MAJOR);
	TEST_ASSERT_EQ(xpu_reader__header(r)->minor, XPU_VERSION_MINOR);
	TEST_ASSERT_EQ(xpu_reader__header(r)->header_size, sizeof(struct xpu_file_header));
	TEST_ASSERT_EQ(xpu_reader__header(r)->features, XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS);
	TEST_ASSERT(xpu_reader__header(r)->realtime_ns > 1500000000ull * 1000000000ull);
	while (xpu_reader__next(r, &rec) == 1) {
		TEST_ASSERT(i < n);
		TEST_ASSERT(rec_equal(&rec, &recs[i]));
		TEST_ASSERT(rec.body_size >= xpu_record__min_size(rec.type));
		TEST_ASSERT_EQ(rec.chunk_index, 0);
		TEST_ASSERT_EQ((uintptr_t)rec.body % 8, 0);
		/* Fields through the typed views the report uses. */
		switch (rec.type) {
		case XPU_REC_META:
			TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &val), 0);
			TEST_ASSERT(!strcmp(k, "cmdline") && !strcmp(val, "./app --steps 10"));
			break;
		case XPU_REC_COMM: {
			const struct xpu_comm *c = rec.body;

			TEST_ASSERT(!strcmp(c->comm, "trainer"));
			TEST_ASSERT_EQ(c->flags, XPU_COMM_EXEC);
			TEST_ASSERT_EQ(c->tid, 101);
			break;
		}
		case XPU_REC_MMAP: {
			const struct xpu_mmap *m = rec.body;

			TEST_ASSERT(!strcmp(xpu_record__string(&rec, sizeof(*m)),
					    "/usr/lib/x86_64-linux-gnu/libfoo.so.1"));
			TEST_ASSERT_EQ(m->build_id_size, 20);
			TEST_ASSERT_EQ(m->build_id[19], 0xa0 + 19);
			TEST_ASSERT_EQ(m->pgoff, 0x1000);
			break;
		}
		case XPU_REC_SAMPLE: {
			const struct xpu_sample *s = rec.body;

			TEST_ASSERT_EQ(xpu_stack__parse(&s->stack, rec.body_size -
							offsetof(struct xpu_sample, stack), &v), 0);
			if (samples++ == 0) {
				TEST_ASSERT_EQ(v.hdr->nr_kernel_ips, 3);
				TEST_ASSERT_EQ(v.hdr->nr_user_ips, 6);
				TEST_ASSERT_EQ(v.kernel_ips[0], 0xffffffff81000000ull);
				TEST_ASSERT_EQ(v.user_ips[5], 0x555555554000ull + 8 * 16);
				TEST_ASSERT_EQ(v.hdr->flags, XPU_STACK_KERNEL_MODE);
			} else {
				TEST_ASSERT_EQ(v.hdr->nr_regs, XPU_X86_NR_REGS);
				TEST_ASSERT_EQ(v.hdr->arch, XPU_ARCH_X86_64);
				TEST_ASSERT_EQ(v.hdr->stack_size, 203);
				TEST_ASSERT_EQ(v.regs[XPU_X86_RIP], 0x555555554000ull + 16 * 16);
				TEST_ASSERT_EQ(v.stack[202], (uint8_t)(202 * 7));
			}
			break;
		}
		case XPU_REC_KSYM:
			TEST_ASSERT(!strcmp(xpu_record__string(&rec, sizeof(struct xpu_ksym)),
					    "do_sys_openat2"));
			break;
		case XPU_REC_PERF_MAP:
			TEST_ASSERT(!strcmp(xpu_record__string(&rec, sizeof(struct xpu_perf_map)),
					    "py::train_step:/work/train.py"));
			break;
		case XPU_REC_STRING:
			TEST_ASSERT_EQ(((const struct xpu_string *)rec.body)->id, 7);
			TEST_ASSERT(!strcmp(xpu_record__string(&rec, sizeof(struct xpu_string)),
					    "_Z10vector_addPKfS0_Pfi"));
			break;
		case XPU_REC_GPU_KERNEL: {
			const struct xpu_gpu_kernel *gk = rec.body;

			TEST_ASSERT_EQ(gk->end - gk->start, 800);
			TEST_ASSERT_EQ(gk->block[0], 256);
			TEST_ASSERT_EQ(gk->registers, 32);
			break;
		}
		case XPU_REC_GPU_MEMCPY:
			TEST_ASSERT_EQ(((const struct xpu_gpu_memcpy *)rec.body)->copy_kind, XPU_MEMCPY_HTOD);
			break;
		case XPU_REC_GPU_SYNC:
			TEST_ASSERT_EQ(((const struct xpu_gpu_sync *)rec.body)->stream, ~0u);
			break;
		case XPU_REC_GPU_CORR: {
			const struct xpu_gpu_corr *c = rec.body;

			TEST_ASSERT_EQ(c->correlation_id, 55);
			TEST_ASSERT_EQ(xpu_stack__parse(&c->stack, rec.body_size -
							offsetof(struct xpu_gpu_corr, stack), &v), 0);
			TEST_ASSERT_EQ(v.hdr->nr_user_ips, 12);
			break;
		}
		case XPU_REC_GPU_DEVICE:
			TEST_ASSERT(!strcmp(xpu_record__string(&rec, sizeof(struct xpu_gpu_device)),
					    "NVIDIA H100 80GB HBM3"));
			TEST_ASSERT_EQ(((const struct xpu_gpu_device *)rec.body)->global_memory, 80ull << 30);
			break;
		case XPU_REC_FINISH:
			TEST_ASSERT_EQ(((const struct xpu_finish *)rec.body)->nr_lost, 42);
			break;
		}
		i++;
	}
	TEST_ASSERT_EQ(i, n);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->records, n);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_ok, 1);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->bytes_skipped, 0);
	TEST_ASSERT(!xpu_reader__stats(r)->truncated);
	TEST_ASSERT(!xpu_reader__stats(r)->first_error[0]);
	xpu_reader__close(r);
}

static void test_roundtrip_raw(void)
{
	check_roundtrip(-1);
}

static void test_roundtrip_zstd(void)
{
	check_roundtrip(0);
}

/* Known types (the record-type table's rows) have a name and a minimum size,
 * others have neither; each row's parts fit its minimum size. */
static void test_type_table(void)
{
	unsigned nk = 0;

	for (unsigned t = 0; t <= UINT16_MAX; t++) {
		const struct xpu_rectype *row = xpu_rectype__get(t);

		TEST_ASSERT_EQ(!!xpu_record__min_size(t), row != NULL);
		TEST_ASSERT_EQ(!strcmp(xpu_record__type_name(t), "UNKNOWN"), row == NULL);
		TEST_ASSERT_EQ(xpu_record__printer(t) != NULL, row != NULL);
		if (!row)
			continue;
		nk++;
		TEST_ASSERT(t < XPU_REC_MAX && row->name && row->min_size && xpu_record__printer(t));
		TEST_ASSERT_EQ(xpu_rectype__is(t, row->flags), 1);
		if (row->flags & XPU_RECF_TIME)
			TEST_ASSERT(row->min_size >= sizeof(uint64_t));
		if (row->flags & XPU_RECF_STRING)
			TEST_ASSERT_EQ(row->min_size, row->fixed + 1);
		else
			TEST_ASSERT_EQ(row->fixed, 0);
		if (row->flags & XPU_RECF_STACK)
			TEST_ASSERT_EQ(row->stack_off + sizeof(struct xpu_stack), row->min_size);
		else
			TEST_ASSERT_EQ(row->stack_off, 0);
	}
	TEST_ASSERT(nk > 0);
	TEST_ASSERT(!xpu_rectype__is(0, 0) && !xpu_rectype__is(XPU_REC_MAX, 0));
	TEST_ASSERT_EQ(xpu_record__min_size(XPU_REC_SAMPLE), sizeof(struct xpu_sample));
	TEST_ASSERT_EQ(xpu_record__min_size(XPU_REC_MMAP), sizeof(struct xpu_mmap) + 1);
	TEST_ASSERT(!strcmp(xpu_record__type_name(XPU_REC_GPU_CORR), "GPU_CORR"));
	TEST_ASSERT(xpu_rectype__is(XPU_REC_GPU_CORR, XPU_RECF_GPU | XPU_RECF_STACK | XPU_RECF_TIME));
	TEST_ASSERT(!xpu_rectype__is(XPU_REC_FINISH, XPU_RECF_TIME));
}

/* The table's parts of each fixture record are what the fixture put there:
 * the time, the trailing string, the stack part. */
static void test_type_parts(void)
{
	struct tf_rec recs[TF_NR_RECORDS];
	int n = tf__make_records(recs, 3);
	unsigned times = 0, tails = 0, stacks = 0;

	for (int i = 0; i < n; i++) {
		const struct tf_rec *tr = &recs[i];
		struct xpu_record rec = { .type = tr->type, .body = tr->body, .body_size = tr->len };
		const struct xpu_rectype *row = xpu_rectype__get(tr->type);
		struct xpu_stack_view v;
		const char *tail;
		uint64_t t;

		TEST_ASSERT(row);
		TEST_ASSERT_EQ(xpu_record__time(&rec, &t), !!(row->flags & XPU_RECF_TIME));
		if (row->flags & XPU_RECF_TIME) {
			TEST_ASSERT_EQ(t, tr->body[0]);		/* the first field */
			times++;
		}
		tail = xpu_record__tail(&rec);
		TEST_ASSERT_EQ(tail != NULL, !!(row->flags & XPU_RECF_STRING));
		if (tail) {
			TEST_ASSERT(tail == (const char *)tr->body + row->fixed);
			TEST_ASSERT_EQ(strlen(tail) + 1 + row->fixed, tr->len);
			tails++;
		}
		if (row->flags & XPU_RECF_STACK) {
			TEST_ASSERT_EQ(xpu_record__stack(&rec, &v), 0);
			TEST_ASSERT((const uint8_t *)v.hdr == (const uint8_t *)tr->body + row->stack_off);
			stacks++;
		} else {
			TEST_ASSERT_EQ(xpu_record__stack(&rec, &v), -ENOENT);
		}
	}
	TEST_ASSERT(times >= 12 && tails >= 5 && stacks >= 3);
}

#define ROUNDS 12
static struct tf_rec many[ROUNDS * TF_NR_RECORDS];

/* Small chunks: records spread over many, in order, with chunk indexes. */
static void test_multiple_chunks(void)
{
	struct xpu_reader *r;
	struct xpu_record rec;
	uint64_t last_chunk = 0;
	int n, i = 0, err;

	n = write_trace(1024, 0, ROUNDS, many);
	TEST_ASSERT(n > 0);
	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while (xpu_reader__next(r, &rec) == 1) {
		TEST_ASSERT(rec_equal(&rec, &many[i]));
		TEST_ASSERT(rec.chunk_index == last_chunk || rec.chunk_index == last_chunk + 1);
		last_chunk = rec.chunk_index;
		i++;
	}
	TEST_ASSERT_EQ(i, n);
	TEST_ASSERT(last_chunk >= 5);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_ok, last_chunk + 1);
	/* Second pass after rewind: same records, no stats change. */
	xpu_reader__rewind(r);
	for (i = 0; xpu_reader__next(r, &rec) == 1; i++)
		TEST_ASSERT(rec_equal(&rec, &many[i]));
	TEST_ASSERT_EQ(i, n);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->records, n);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_ok, last_chunk + 1);
	xpu_reader__close(r);
}

/* The same with the chunks compressed and written by the writer's thread
 * (xpu-record's mode): every record, in order, zstd and stored chunks. */
static void test_multiple_chunks_background(void)
{
	writer_background = true;
	test_multiple_chunks();
	writer_background = false;
	TEST_ASSERT(write_trace(1024, 3, ROUNDS, many) > 0);
	{
		struct xpu_reader *r;
		struct xpu_record rec;
		int i = 0, err;

		r = xpu_reader__open(path, &err);
		TEST_ASSERT(r);
		while (xpu_reader__next(r, &rec) == 1)
			TEST_ASSERT(rec_equal(&rec, &many[i++]));
		TEST_ASSERT(i > 0);
		TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
		xpu_reader__close(r);
	}
}

/* A record bigger than the chunk size gets a chunk of its own size; one
 * bigger than the format's chunk limit is refused. */
static void test_large_record(void)
{
	struct xpu_writer *w = open_writer(4096, 0);
	struct xpu_writer_stats ws;
	struct xpu_reader *r;
	struct xpu_record rec;
	size_t big_len = 1 << 20;
	uint8_t *big = malloc(big_len), *huge;
	struct iovec iov = { big, big_len };
	int err, n = 0;

	TEST_ASSERT(w && big);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 13 + (i >> 11));
	memset(big, 0, sizeof(struct xpu_stack) + offsetof(struct xpu_sample, stack));
	TEST_ASSERT_EQ(xpu_writer__add(w, XPU_REC_FORK, many[2].body, many[2].len), 0);
	TEST_ASSERT_EQ(xpu_writer__addv(w, XPU_REC_SAMPLE, 0, &iov, 1), 0);
	TEST_ASSERT_EQ(xpu_writer__add(w, XPU_REC_FORK, many[2].body, many[2].len), 0);
	huge = calloc(1, XPU_CHUNK_MAX_RAW + 1);
	TEST_ASSERT(huge);
	iov.iov_base = huge;
	iov.iov_len = XPU_CHUNK_MAX_RAW;	/* + 8 header bytes: over the limit */
	TEST_ASSERT_EQ(xpu_writer__addv(w, XPU_REC_SAMPLE, 0, &iov, 1), -E2BIG);
	free(huge);
	xpu_writer__stats(w, &ws);
	TEST_ASSERT_EQ(ws.records, 3);
	TEST_ASSERT_EQ(ws.per_type[XPU_REC_SAMPLE], 1);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);

	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while (xpu_reader__next(r, &rec) == 1) {
		if (n == 1) {
			TEST_ASSERT_EQ(rec.type, XPU_REC_SAMPLE);
			TEST_ASSERT_EQ(rec.body_size, big_len);
			TEST_ASSERT(!memcmp(rec.body, big, big_len));
		} else {
			TEST_ASSERT_EQ(rec.type, XPU_REC_FORK);
		}
		n++;
	}
	TEST_ASSERT_EQ(n, 3);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
	TEST_ASSERT(xpu_reader__stats(r)->chunks_ok >= 2);
	xpu_reader__close(r);
	free(big);
}

static size_t put_rec(uint8_t *p, uint16_t type, uint32_t size)
{
	struct xpu_record_header rh = { .type = type, .size = size };

	memset(p, 0, size > 8 ? size : 8);
	memcpy(p, &rh, sizeof(rh));
	return size;
}

static void test_add_encoded(void)
{
	struct xpu_writer *w = open_writer(0, 0);
	struct xpu_writer_stats ws;
	uint8_t buf[512];
	size_t n;

	TEST_ASSERT(w);
	/* A good batch: FORK + LOST. */
	n = put_rec(buf, XPU_REC_FORK, 8 + sizeof(struct xpu_fork));
	n += put_rec(buf + n, XPU_REC_LOST, 8 + sizeof(struct xpu_lost));
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf, n), 0);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf, 0), 0);
	/* Bad ones: nothing of them may be added. */
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf, 4), -EINVAL);		/* short header */
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf, n - 8), -EINVAL);	/* runs past len */
	put_rec(buf + 64, XPU_REC_FORK, 4);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, 8), -EINVAL);	/* size < header */
	put_rec(buf + 64, XPU_REC_FORK, 8 + sizeof(struct xpu_fork) + 4);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, 36), -EINVAL);	/* unaligned */
	put_rec(buf + 64, XPU_REC_FORK, 8 + 16);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, 24), -EINVAL);	/* < min size */
	put_rec(buf + 64, 50, 16);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, 16), -EINVAL);	/* unknown type */
	put_rec(buf + 64, 0, 16);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, 16), -EINVAL);	/* type 0 */
	/* good, good, then a bad third record: all or nothing */
	n = put_rec(buf + 64, XPU_REC_FORK, 8 + sizeof(struct xpu_fork));
	n += put_rec(buf + 64 + n, XPU_REC_FORK, 8 + sizeof(struct xpu_fork));
	n += put_rec(buf + 64 + n, XPU_REC_COMM, 16);
	TEST_ASSERT_EQ(xpu_writer__add_encoded(w, buf + 64, n), -EINVAL);
	xpu_writer__stats(w, &ws);
	TEST_ASSERT_EQ(ws.records, 2);
	TEST_ASSERT_EQ(ws.per_type[XPU_REC_FORK], 1);
	TEST_ASSERT_EQ(ws.per_type[XPU_REC_LOST], 1);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
}

/* Reads buf; fills stats copy and the number of records. */
static int read_mem(const uint8_t *buf, size_t len, struct xpu_reader_stats *st,
		    const struct tf_rec *expect, int *mismatch)
{
	struct xpu_reader *r;
	struct xpu_record rec;
	int err = 0, n = 0;

	r = xpu_reader__open_mem(buf, len, &err);
	if (!r)
		return err;
	*mismatch = 0;
	while (xpu_reader__next(r, &rec) == 1) {
		if (expect && !rec_equal(&rec, &expect[n]))
			(*mismatch)++;
		n++;
	}
	*st = *xpu_reader__stats(r);
	xpu_reader__close(r);
	return n;
}

/* Index of the first record of chunk c, given that every chunk of a trace
 * written by write_trace(1024, ...) is complete: counts records per chunk. */
static int records_before(const uint8_t *buf, size_t len, size_t off)
{
	struct xpu_reader_stats st;
	int mm;

	return read_mem(buf, off < len ? off : len, &st, NULL, &mm);
}

static void test_payload_crc(void)
{
	struct xpu_reader_stats st;
	uint8_t *buf;
	size_t len, c1, c2;
	int n, mm, before, after;

	n = write_trace(1024, 0, ROUNDS, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	c1 = test_format__chunk_at(buf, len, 1);
	c2 = test_format__chunk_at(buf, len, 2);
	TEST_ASSERT(c2 < len);
	before = records_before(buf, len, c1);
	after = records_before(buf, len, c2);
	buf[c1 + sizeof(struct xpu_chunk_header) + 5] ^= 0x40;
	TEST_ASSERT_EQ(read_mem(buf, len, &st, NULL, &mm), n - (after - before));
	TEST_ASSERT_EQ(st.chunks_bad, 1);
	TEST_ASSERT_EQ(st.bytes_skipped, c2 - c1);
	TEST_ASSERT(!st.truncated);
	TEST_ASSERT(strstr(st.first_error, "checksum"));
	TEST_ASSERT(strstr(st.first_error, "offset"));
	TEST_ASSERT_EQ(st.records, n - (after - before));
	free(buf);
}

/* A damaged chunk header: the reader resynchronises on the next chunk magic. */
static void test_header_crc_resync(void)
{
	struct xpu_reader_stats st;
	uint8_t *buf;
	size_t len, c1, c2;
	int n, mm, before, after;

	n = write_trace(1024, 0, ROUNDS, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	c1 = test_format__chunk_at(buf, len, 1);
	c2 = test_format__chunk_at(buf, len, 2);
	before = records_before(buf, len, c1);
	after = records_before(buf, len, c2);
	buf[c1 + offsetof(struct xpu_chunk_header, comp_size)] ^= 0x01;
	TEST_ASSERT_EQ(read_mem(buf, len, &st, NULL, &mm), n - (after - before));
	TEST_ASSERT_EQ(st.chunks_bad, 1);
	TEST_ASSERT_EQ(st.bytes_skipped, c2 - c1);
	TEST_ASSERT(strstr(st.first_error, "bad chunk header"));
	/* Magic destroyed as well: same outcome. */
	buf[c1] = 'Z';
	TEST_ASSERT_EQ(read_mem(buf, len, &st, NULL, &mm), n - (after - before));
	TEST_ASSERT_EQ(st.chunks_bad, 1);
	/* Garbage between chunks is skipped too. */
	free(buf);
}

/* Hand-made chunk with correct CRCs around bad record structure, followed by
 * a good chunk: the bad one is skipped whole, the good one read. */
static void check_bad_structure(const uint8_t *recs, size_t rlen, uint32_t nr, const char *why)
{
	struct xpu_reader_stats st;
	struct xpu_chunk_header ch = { .magic = XPU_CHUNK_MAGIC, .header_size = sizeof(ch),
				       .comp_size = rlen, .raw_size = rlen, .nr_records = nr };
	uint8_t *buf, *out;
	size_t len, hl = sizeof(struct xpu_file_header);
	int n, mm;

	n = write_trace(0, -1, 1, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	out = malloc(len + sizeof(ch) + rlen);
	memcpy(out, buf, hl);
	ch.payload_crc = crc32(0, recs, rlen);
	ch.header_crc = crc32(0, (const Bytef *)&ch, offsetof(struct xpu_chunk_header, header_crc));
	memcpy(out + hl, &ch, sizeof(ch));
	memcpy(out + hl + sizeof(ch), recs, rlen);
	memcpy(out + hl + sizeof(ch) + rlen, buf + hl, len - hl);
	TEST_ASSERT_EQ(read_mem(out, len + sizeof(ch) + rlen, &st, many, &mm), n);
	TEST_ASSERT_EQ(mm, 0);
	TEST_ASSERT_EQ(st.chunks_bad, why ? 1 : 0);
	TEST_ASSERT_EQ(st.chunks_ok, why ? 1 : 2);
	if (why)
		TEST_ASSERT(strstr(st.first_error, why));
	free(out);
	free(buf);
}

static void test_record_structure(void)
{
	uint8_t recs[256];
	size_t n;

	check_bad_structure(recs, 0, 0, NULL);	/* an empty chunk is fine */
	n = put_rec(recs, XPU_REC_FORK, 8 + sizeof(struct xpu_fork));
	check_bad_structure(recs, n, 2, "record count mismatch");
	check_bad_structure(recs, n - 4, 1, "record size out of range");
	n = put_rec(recs, XPU_REC_FORK, 8 + sizeof(struct xpu_fork) - 4);
	check_bad_structure(recs, n + 4, 1, "record size out of range");
	n = put_rec(recs, XPU_REC_COMM, 8 + 16);
	check_bad_structure(recs, n, 1, "record shorter than its type");
	n = put_rec(recs, XPU_REC_FORK, 8 + sizeof(struct xpu_fork));
	check_bad_structure(recs, n + 4, 2, "record header runs past the chunk");
}

/* Every prefix of a file: no crash, a prefix of the records, truncated set
 * exactly when the cut is inside a chunk. */
static void test_truncation_every_offset(void)
{
	struct xpu_reader_stats st;
	uint8_t *buf, *cut;
	size_t len, hl = sizeof(struct xpu_file_header);
	size_t bounds[64];
	int n, nb = 0, mm, got;

	n = write_trace(700, 0, 4, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	for (size_t off = hl; off <= len && nb < 64; off = test_format__chunk_at(buf, len, nb))
		if ((bounds[nb++] = off) == len)
			break;
	TEST_ASSERT(nb >= 4);
	for (size_t l = 0; l <= len; l++) {
		bool at_bound = false;
		int expect = 0;

		/* exact-size copy, so a read past the end is a real overrun */
		cut = malloc(l ? l : 1);
		memcpy(cut, buf, l);
		got = read_mem(cut, l, &st, many, &mm);
		if (l < hl) {
			TEST_ASSERT_EQ(got, l ? -XPU_READER_ESHORT : -XPU_READER_EMAGIC);
			free(cut);
			continue;
		}
		for (int b = 0; b < nb; b++) {
			at_bound |= bounds[b] == l;
			if (bounds[b] <= l)
				expect = b ? records_before(buf, len, bounds[b]) : 0;
		}
		if (got != expect || mm || st.truncated == at_bound || st.chunks_bad ||
		    (at_bound && st.bytes_skipped) || (!at_bound && !st.bytes_skipped)) {
			fprintf(stderr, "  cut at %zu of %zu: %d records (want %d), %d differ, truncated %d\n",
				l, len, got, expect, mm, st.truncated);
			TEST_ASSERT(0);
		}
		if (!at_bound)
			TEST_ASSERT(strstr(st.first_error, "file ends inside a chunk"));
		free(cut);
	}
	free(buf);
}

/* Stride over a bigger, multi-megabyte trace with raw and zstd chunks. */
static void test_truncation_stride(void)
{
	struct xpu_reader_stats st;
	struct xpu_writer *w = open_writer(64 << 10, 0);
	uint8_t *buf;
	size_t len;
	int mm, total, prev = 0;

	TEST_ASSERT(w);
	for (int i = 0; i < 2000; i++) {
		struct tf_rec recs[TF_NR_RECORDS];
		int k = tf__make_records(recs, i);

		for (int j = 0; j < k; j++) {
			struct iovec iov = { recs[j].body, recs[j].len };

			xpu_writer__addv(w, recs[j].type, 0, &iov, 1);
		}
	}
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	buf = load_file(&len);
	TEST_ASSERT(buf);
	total = read_mem(buf, len, &st, NULL, &mm);
	TEST_ASSERT_EQ(total, 2000 * (TF_NR_RECORDS - 1));
	for (size_t l = sizeof(struct xpu_file_header); l < len; l += 4099) {
		int got = read_mem(buf, l, &st, NULL, &mm);

		TEST_ASSERT(got >= prev && got < total);
		TEST_ASSERT(st.truncated || st.bytes_skipped == 0);
		prev = got;
	}
	free(buf);
}

/* Unknown types (a newer minor's) are skipped by size and counted. */
static void test_unknown_types(void)
{
	struct xpu_writer *w = open_writer(0, 0);
	struct xpu_reader *r;
	struct xpu_record rec;
	uint8_t body[40] = { 0 };
	int err, n = 0;

	TEST_ASSERT(w);
	xpu_writer__add(w, XPU_REC_FORK, many[2].body, many[2].len);
	xpu_writer__add(w, 50, body, sizeof(body));
	xpu_writer__add(w, 0, body, 3);
	xpu_writer__add(w, 60, body, 0);
	xpu_writer__add(w, 4000, body, 17);
	xpu_writer__add(w, XPU_REC_LOST, many[7].body, many[7].len);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while (xpu_reader__next(r, &rec) == 1) {
		TEST_ASSERT_EQ(rec.type, n ? XPU_REC_LOST : XPU_REC_FORK);
		n++;
	}
	TEST_ASSERT_EQ(n, 2);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->records, 2);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->unknown_records, 4);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
	xpu_reader__rewind(r);
	while (xpu_reader__next(r, &rec) == 1)
		;
	TEST_ASSERT_EQ(xpu_reader__stats(r)->unknown_records, 4);
	xpu_reader__close(r);
}

static void test_versions(void)
{
	struct xpu_file_header fh;
	struct xpu_reader_stats st;
	uint8_t *buf;
	size_t len;
	int n, mm, err = 0;

	n = write_trace(0, 0, 1, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	memcpy(&fh, buf, sizeof(fh));
	TEST_ASSERT(!memcmp(fh.magic, "XPUPERF", 8));
	for (int i = 0; i < 24; i++)
		TEST_ASSERT_EQ(fh.reserved[i], 0);

	fh.minor = XPU_VERSION_MINOR + 7;		/* newer minor: read */
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), n);
	fh.minor = XPU_VERSION_MINOR;
	fh.major = XPU_VERSION_MAJOR + 1;		/* newer major: refused */
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), -XPU_READER_EVERSION);
	fh.major = 0;					/* never existed */
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), -XPU_READER_EMAGIC);
	fh.major = XPU_VERSION_MAJOR;
	fh.magic[0] = 'Y';
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), -XPU_READER_EMAGIC);
	fh.magic[0] = 'X';
	fh.header_size = 32;				/* shorter than the header */
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), -XPU_READER_EMAGIC);
	fh.header_size = len + 1;
	memcpy(buf, &fh, sizeof(fh));
	TEST_ASSERT_EQ(read_mem(buf, len, &st, many, &mm), -XPU_READER_EMAGIC);
	TEST_ASSERT_EQ(read_mem((const uint8_t *)"GIF89a", 6, &st, NULL, &mm), -XPU_READER_EMAGIC);
	TEST_ASSERT_EQ(read_mem(buf, 10, &st, NULL, &mm), -XPU_READER_ESHORT);
	TEST_ASSERT(!xpu_reader__open_mem(NULL, 0, &err));
	TEST_ASSERT_EQ(err, -XPU_READER_EMAGIC);
	TEST_ASSERT(!xpu_reader__open("/nonexistent/xpu.data", &err));
	TEST_ASSERT_EQ(err, -XPU_READER_EIO);
	TEST_ASSERT_EQ(errno, ENOENT);
	free(buf);
}

static void test_file_mode(void)
{
	char keep[300], lnk[300];
	struct xpu_writer *w;
	struct stat st, st_keep;
	mode_t old = umask(0);
	int fd;

	/* An existing, world-readable file with a second link: replaced by
	 * a new 0600 file; the old inode keeps its mode and content. */
	snprintf(keep, sizeof(keep), "%s/keep", dir);
	snprintf(lnk, sizeof(lnk), "%s/link", dir);
	unlink(path);
	unlink(keep);
	fd = open(path, O_CREAT | O_WRONLY, 0666);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(write(fd, "old", 3), 3);
	close(fd);
	TEST_ASSERT_EQ(link(path, keep), 0);
	w = open_writer(0, 0);
	umask(old);
	TEST_ASSERT(w);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	TEST_ASSERT_EQ(stat(path, &st), 0);
	TEST_ASSERT_EQ(st.st_mode & 07777, 0600);
	TEST_ASSERT_EQ(st.st_size, sizeof(struct xpu_file_header));	/* header only */
	TEST_ASSERT_EQ(stat(keep, &st_keep), 0);
	TEST_ASSERT(st_keep.st_ino != st.st_ino);
	TEST_ASSERT_EQ(st_keep.st_mode & 07777, 0666);
	TEST_ASSERT_EQ(st_keep.st_size, 3);

	/* A symbolic link is refused; its target is not touched. */
	unlink(lnk);
	TEST_ASSERT_EQ(symlink(keep, lnk), 0);
	errno = 0;
	TEST_ASSERT(!xpu_writer__open(lnk, NULL));
	TEST_ASSERT_EQ(errno, ELOOP);
	TEST_ASSERT_EQ(stat(keep, &st_keep), 0);
	TEST_ASSERT_EQ(st_keep.st_mode & 07777, 0666);
	TEST_ASSERT_EQ(st_keep.st_size, 3);
	TEST_ASSERT_EQ(lstat(lnk, &st), 0);
	TEST_ASSERT(S_ISLNK(st.st_mode));

	/* Not a regular file (a FIFO): refused without opening it. */
	unlink(lnk);
	TEST_ASSERT_EQ(mkfifo(lnk, 0644), 0);
	errno = 0;
	TEST_ASSERT(!xpu_writer__open(lnk, NULL));
	TEST_ASSERT_EQ(errno, EINVAL);
	TEST_ASSERT_EQ(lstat(lnk, &st), 0);
	TEST_ASSERT(S_ISFIFO(st.st_mode));
	TEST_ASSERT_EQ(st.st_mode & 07777, 0644);
	unlink(lnk);
	unlink(keep);

	errno = 0;
	TEST_ASSERT(!xpu_writer__open("/nonexistent/dir/xpu.data", NULL));
	TEST_ASSERT_EQ(errno, ENOENT);
}

/*
 * A full disk, simulated with RLIMIT_FSIZE (writes past it fail with EFBIG,
 * a write across it is short): the chunk that does not fit is dropped whole
 * and counted, the file ends on the last chunk boundary and reads without
 * damage, and once there is room again later chunks are written.
 */
#define WE_PER_CHUNK	128	/* LOST records (32 bytes) per 4 KiB chunk */
#define WE_CHUNK_BYTES	(sizeof(struct xpu_chunk_header) + WE_PER_CHUNK * 32)

static void we_add(struct xpu_writer *w, int n, uint64_t *next)
{
	for (int i = 0; i < n; i++) {
		struct xpu_lost l = { .time = *next, .source = XPU_LOST_SAMPLES, .count = *next };

		(*next)++;
		xpu_writer__add(w, XPU_REC_LOST, &l, sizeof(l));
	}
}

static void test_write_error_mode(bool background)
{
	struct xpu_writer_opts o = { .chunk_size = WE_PER_CHUNK * 32, .zstd_level = -1,
				     .background = background };
	struct rlimit old_lim, lim;
	struct xpu_writer_stats ws;
	struct xpu_reader *r;
	struct xpu_record rec;
	struct stat st;
	uint64_t next = 0;
	int err, err0, n = 0;
	bool in_order = true;
	void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
	struct xpu_writer *w = xpu_writer__open(path, &o);

	TEST_ASSERT(w);
	TEST_ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
	/* Room for three chunks and half of a fourth. */
	lim = old_lim;
	lim.rlim_cur = sizeof(struct xpu_file_header) + 3 * WE_CHUNK_BYTES + WE_CHUNK_BYTES / 2;
	TEST_ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	we_add(w, 3 * WE_PER_CHUNK, &next);
	err0 = xpu_writer__flush(w);
	we_add(w, 2 * WE_PER_CHUNK, &next);	/* fills one chunk: written by add */
	err = xpu_writer__flush(w);		/* the other */
	xpu_writer__stats(w, &ws);
	/* Room again (before any assertion can return). */
	setrlimit(RLIMIT_FSIZE, &old_lim);
	signal(SIGXFSZ, old_sig);
	TEST_ASSERT_EQ(err0, 0);
	TEST_ASSERT_EQ(err, -EFBIG);
	TEST_ASSERT_EQ(ws.chunks, 3);
	TEST_ASSERT_EQ(ws.chunks_dropped, 2);
	TEST_ASSERT_EQ(ws.dropped, 2 * WE_PER_CHUNK);
	TEST_ASSERT_EQ(ws.dropped_per_type[XPU_REC_LOST], 2 * WE_PER_CHUNK);
	TEST_ASSERT_EQ(ws.per_type[XPU_REC_LOST], 3 * WE_PER_CHUNK);
	TEST_ASSERT_EQ(ws.file_bytes, sizeof(struct xpu_file_header) + 3 * WE_CHUNK_BYTES);
	TEST_ASSERT_EQ(stat(path, &st), 0);
	TEST_ASSERT_EQ(st.st_size, ws.file_bytes);	/* no partial chunk */

	/* The next chunks are written after the last good one. */
	we_add(w, WE_PER_CHUNK, &next);
	TEST_ASSERT_EQ(xpu_writer__close(w), -EFBIG);	/* the trace lacks records */

	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while ((err = xpu_reader__next(r, &rec)) == 1) {
		uint64_t t = ((const struct xpu_lost *)rec.body)->time;

		/* the two dropped chunks are missing, nothing else */
		in_order &= t == (uint64_t)n + (n >= 3 * WE_PER_CHUNK ? 2 * WE_PER_CHUNK : 0);
		n++;
	}
	TEST_ASSERT_EQ(err, 0);
	TEST_ASSERT_EQ(n, 4 * WE_PER_CHUNK);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_ok, 4);
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
	TEST_ASSERT(!xpu_reader__stats(r)->truncated);
	xpu_reader__close(r);
	TEST_ASSERT(in_order);
}

/* The same when the writer's thread writes the chunks: the error comes out
 * of the flush that waited for them, and the stats are the same. */
static void test_write_error(void)
{
	test_write_error_mode(false);
	test_write_error_mode(true);
}

static void test_stack_parse_bounds(void)
{
	uint64_t mem[64] = { 0 };
	struct xpu_stack h = { .nr_kernel_ips = 1, .nr_user_ips = 2, .nr_regs = 3, .stack_size = 5 };
	struct xpu_stack_view v;
	size_t need = sizeof(h) + 8 * 6 + 5;

	memcpy(mem, &h, sizeof(h));
	TEST_ASSERT_EQ(xpu_stack__parse(mem, need, &v), 0);
	TEST_ASSERT(v.kernel_ips == mem + 2);
	TEST_ASSERT(v.user_ips == mem + 3);
	TEST_ASSERT(v.regs == mem + 5);
	TEST_ASSERT(v.stack == (const uint8_t *)(mem + 8));
	TEST_ASSERT_EQ(xpu_stack__parse(mem, need - 1, &v), -EINVAL);
	TEST_ASSERT_EQ(xpu_stack__parse(mem, sizeof(h) - 1, &v), -EINVAL);
	TEST_ASSERT_EQ(xpu_stack__parse(mem, 0, &v), -EINVAL);
	/* Largest counts: no overflow, refused against any real body. */
	h = (struct xpu_stack){ .nr_kernel_ips = 0xffff, .nr_user_ips = 0xffff,
				.nr_regs = 0xffff, .stack_size = 0xffffffffu };
	memcpy(mem, &h, sizeof(h));
	TEST_ASSERT_EQ(xpu_stack__parse(mem, sizeof(mem), &v), -EINVAL);
	TEST_ASSERT_EQ(xpu_stack__parse(mem, SIZE_MAX / 2, &v), 0);	/* arithmetic in size_t */
	/* An empty stack part is valid. */
	memset(mem, 0, sizeof(h));
	TEST_ASSERT_EQ(xpu_stack__parse(mem, sizeof(h), &v), 0);
}

static void test_string_meta_unterminated(void)
{
	uint64_t body[8];
	struct xpu_record rec = { .type = XPU_REC_KSYM, .body = body };
	const char *k, *v;

	memset(body, 'x', sizeof(body));
	rec.body_size = sizeof(body);
	TEST_ASSERT(!xpu_record__string(&rec, 16));		/* no NUL */
	TEST_ASSERT(!xpu_record__string(&rec, sizeof(body)));	/* nothing after fixed */
	TEST_ASSERT(!xpu_record__string(&rec, sizeof(body) + 8));	/* fixed > body */
	((char *)body)[sizeof(body) - 1] = 0;
	TEST_ASSERT(xpu_record__string(&rec, 16) == (const char *)body + 16);
	rec.body_size = sizeof(body) - 1;			/* NUL just outside */
	TEST_ASSERT(!xpu_record__string(&rec, 16));

	rec.type = XPU_REC_META;
	memset(body, 'x', sizeof(body));
	rec.body_size = sizeof(body);
	TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &v), -EINVAL);	/* no NUL */
	((char *)body)[3] = 0;
	TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &v), -EINVAL);	/* value unterminated */
	memcpy(body, "k\0\0", 3);
	TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &v), 0);		/* empty value is fine */
	TEST_ASSERT(!strcmp(k, "k") && !strcmp(v, ""));
	memset(body, 'x', sizeof(body));
	((char *)body)[sizeof(body) - 1] = 0;
	TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &v), -EINVAL);	/* key only */
	rec.body_size = 0;
	TEST_ASSERT_EQ(xpu_record__meta(&rec, &k, &v), -EINVAL);
}

/* A file with a bad chunk in the middle and a truncated tail: a second pass
 * after rewind yields the same records and leaves every count unchanged. */
static void test_rewind_no_double_count(void)
{
	struct xpu_reader_stats first;
	struct xpu_reader *r;
	struct xpu_record rec;
	uint8_t *buf;
	size_t len, c2;
	int n, n1 = 0, n2 = 0, err;

	n = write_trace(1024, 0, ROUNDS, many);
	buf = load_file(&len);
	TEST_ASSERT(buf && n > 0);
	c2 = test_format__chunk_at(buf, len, 2);
	buf[c2 + sizeof(struct xpu_chunk_header) + 3] ^= 1;
	r = xpu_reader__open_mem(buf, len - 7, &err);
	TEST_ASSERT(r);
	while (xpu_reader__next(r, &rec) == 1)
		n1++;
	first = *xpu_reader__stats(r);
	TEST_ASSERT(first.truncated);
	TEST_ASSERT_EQ(first.chunks_bad, 1);
	TEST_ASSERT(strstr(first.first_error, "checksum"));
	for (int pass = 0; pass < 2; pass++) {
		xpu_reader__rewind(r);
		for (n2 = 0; xpu_reader__next(r, &rec) == 1; n2++)
			;
		TEST_ASSERT_EQ(n2, n1);
		TEST_ASSERT(!memcmp(&first, xpu_reader__stats(r), sizeof(first)));
	}
	/* Stop half way through, rewind, read all: still the same counts. */
	xpu_reader__rewind(r);
	for (int i = 0; i < n1 / 2; i++)
		xpu_reader__next(r, &rec);
	xpu_reader__rewind(r);
	while (xpu_reader__next(r, &rec) == 1)
		;
	TEST_ASSERT(!memcmp(&first, xpu_reader__stats(r), sizeof(first)));
	xpu_reader__close(r);
	free(buf);
}

/* Two threads share one writer, as the recorder's drain and GPU threads do. */
#define THREAD_RECS 20000
static void *writer_thread(void *arg)
{
	struct xpu_writer *w = arg;
	struct xpu_lost l = { .source = XPU_LOST_SAMPLES };

	for (uint64_t i = 0; i < THREAD_RECS; i++) {
		l.count = i;
		if (xpu_writer__add(w, XPU_REC_LOST, &l, sizeof(l)))
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void)
{
	struct xpu_writer *w = open_writer(8192, 1);
	struct xpu_reader *r;
	struct xpu_record rec;
	pthread_t t1, t2;
	void *r1, *r2;
	uint64_t sum = 0;
	int err, n = 0;

	TEST_ASSERT(w);
	pthread_create(&t1, NULL, writer_thread, w);
	pthread_create(&t2, NULL, writer_thread, w);
	pthread_join(t1, &r1);
	pthread_join(t2, &r2);
	TEST_ASSERT(!r1 && !r2);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while (xpu_reader__next(r, &rec) == 1) {
		sum += ((const struct xpu_lost *)rec.body)->count;
		n++;
	}
	TEST_ASSERT_EQ(n, 2 * THREAD_RECS);
	TEST_ASSERT_EQ(sum, (uint64_t)THREAD_RECS * (THREAD_RECS - 1));
	TEST_ASSERT_EQ(xpu_reader__stats(r)->chunks_bad, 0);
	xpu_reader__close(r);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/xpu.data", dir);
	TEST_RUN(test_roundtrip_raw);
	TEST_RUN(test_roundtrip_zstd);
	TEST_RUN(test_type_table);
	TEST_RUN(test_type_parts);
	TEST_RUN(test_multiple_chunks);
	TEST_RUN(test_multiple_chunks_background);
	TEST_RUN(test_large_record);
	TEST_RUN(test_add_encoded);
	TEST_RUN(test_payload_crc);
	TEST_RUN(test_header_crc_resync);
	TEST_RUN(test_record_structure);
	TEST_RUN(test_truncation_every_offset);
	TEST_RUN(test_truncation_stride);
	TEST_RUN(test_unknown_types);
	TEST_RUN(test_versions);
	TEST_RUN(test_file_mode);
	TEST_RUN(test_write_error);
	TEST_RUN(test_stack_parse_bounds);
	TEST_RUN(test_string_meta_unterminated);
	TEST_RUN(test_rewind_no_double_count);
	TEST_RUN(test_threads);
	unlink(path);
	rmdir(dir);
	TEST_EXIT();
}
