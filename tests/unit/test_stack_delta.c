// SPDX-License-Identifier: MIT
/*
 * STACK_DELTA coding (format 1.4, format/stack_delta.c): a trace written
 * with coding reads back byte for byte as written, for random and
 * real-shaped stacks (a thread's stack moving up and down under fixed outer
 * frames), over many chunks; references never cross a chunk, so a damaged
 * chunk costs its own records only; malformed STACK_DELTA records make
 * their chunk bad and nothing else.
 */
#include <errno.h>
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
#include "format/record_types.h"
#include "format/stack_delta.h"
#include "format/writer.h"
#include "tests/unit/test.h"

#define NR_RECS		3000
#define NR_TIDS		5
#define STACK_TOP	0x7ffd00000000ull

struct rec {
	uint16_t type, flags;
	uint32_t len;
	uint8_t *body;
};

static struct rec recs[NR_RECS];
static int nr_recs;
static char path[64];

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Per thread: the current stack (top fixed), as a program's would be. */
struct thread {
	uint64_t words[2048];
	uint32_t depth;		/* words in use, from the top down */
};

static struct thread threads[NR_TIDS];

static void thread__step(struct thread *t, bool real)
{
	uint32_t d = t->depth;

	if (!real) {		/* unrelated bytes: coding must still round-trip */
		t->depth = rnd() % 600;
		for (uint32_t i = 0; i < t->depth; i++)
			t->words[2048 - t->depth + i] = rnd();
		return;
	}
	/* calls and returns below a fixed outer part, a local changed here and there */
	d = 200 + (uint32_t)(rnd() % 300);
	for (uint32_t i = t->depth; i < d; i++)
		t->words[2048 - 1 - i] = 0x401000 + (rnd() % 0x1000);
	t->depth = d;
	for (int k = 0; k < 3; k++)
		t->words[2048 - 1 - (rnd() % d)] = rnd();
}

/* A stack record of type (SAMPLE, OFFCPU, GPU_CORR) for thread tid. */
static struct rec rec__stack(uint16_t type, uint32_t tid, bool real, uint32_t nr_kips)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);
	struct thread *th = &threads[tid % NR_TIDS];
	struct xpu_stack st = { .nr_kernel_ips = (uint16_t)nr_kips, .nr_regs = 17,
				.arch = XPU_ARCH_X86_64 };
	uint64_t regs[17];
	struct rec r = { .type = type };
	size_t off;

	thread__step(th, real);
	st.stack_size = th->depth * 8;
	for (int i = 0; i < 17; i++)
		regs[i] = i % 3 ? rnd() : 1000u + (uint64_t)i;	/* some registers keep their value */
	regs[XPU_X86_RSP] = STACK_TOP + 0x100000 * (tid % NR_TIDS) - st.stack_size;
	r.len = t->stack_off + sizeof(st) + 8 * (nr_kips + 17) + st.stack_size;
	r.body = calloc(1, r.len);
	for (uint32_t i = 0; i < t->stack_off; i++)
		r.body[i] = (uint8_t)rnd();
	switch (type) {
	case XPU_REC_SAMPLE:
		memcpy(r.body + offsetof(struct xpu_sample, tid), &tid, 4);
		break;
	case XPU_REC_OFFCPU:
		memcpy(r.body + offsetof(struct xpu_offcpu, tid), &tid, 4);
		break;
	default:
		memcpy(r.body + offsetof(struct xpu_gpu_corr, tid), &tid, 4);
	}
	memcpy(r.body + t->stack_off, &st, sizeof(st));
	off = t->stack_off + sizeof(st);
	for (uint32_t i = 0; i < nr_kips; i++) {
		uint64_t ip = 0xffffffff81000000ull + rnd() % 0x100000;

		memcpy(r.body + off + 8 * i, &ip, 8);
	}
	off += 8 * nr_kips;
	memcpy(r.body + off, regs, sizeof(regs));
	off += sizeof(regs);
	memcpy(r.body + off, th->words + 2048 - th->depth, st.stack_size);
	return r;
}

static void recs__make(void)
{
	static const uint16_t types[] = { XPU_REC_SAMPLE, XPU_REC_SAMPLE, XPU_REC_SAMPLE,
					  XPU_REC_OFFCPU, XPU_REC_GPU_CORR };

	for (int i = 0; i < NR_RECS; i++) {
		uint64_t x = rnd();

		if (x % 23 == 0) {	/* other records between the stacks */
			struct xpu_comm c = { .time = i, .pid = 1, .tid = (uint32_t)(x % NR_TIDS) };

			recs[i] = (struct rec){ .type = XPU_REC_COMM, .len = sizeof(c),
						.body = malloc(sizeof(c)) };
			memcpy(recs[i].body, &c, sizeof(c));
		} else if (x % 29 == 0) {	/* a stack of odd size: written in full */
			recs[i] = rec__stack(XPU_REC_SAMPLE, (uint32_t)(x % NR_TIDS), true, 0);
			memcpy(recs[i].body + xpu_rectype__get(XPU_REC_SAMPLE)->stack_off + 8,
			       &(uint32_t){ ((struct xpu_stack *)(void *)(recs[i].body + 24))->stack_size - 4 }, 4);
		} else {
			recs[i] = rec__stack(types[x % 5], (uint32_t)(x % NR_TIDS), x % 17 != 0,
					     (uint32_t)(x % 7 == 0 ? x % 20 : 0));
		}
		recs[i].flags = (uint16_t)(x % 11 == 0);
	}
	nr_recs = NR_RECS;
}

/* Writes the records; returns the file's bytes. */
static uint8_t *trace__write(bool delta, size_t chunk, size_t *len, struct xpu_writer_stats *ws)
{
	struct xpu_writer_opts o = { .features = XPU_FEAT_CPU_SAMPLES, .chunk_size = chunk,
				     .zstd_level = 1, .stack_delta = delta };
	struct xpu_writer *w;
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "/tmp/xpu-test-stack-delta.%d", (int)getpid());
	w = xpu_writer__open(path, &o);
	if (!w)
		return NULL;
	for (int i = 0; i < nr_recs; i++) {
		struct iovec iov = { recs[i].body, recs[i].len };

		if (xpu_writer__addv(w, recs[i].type, recs[i].flags, &iov, 1))
			return NULL;
	}
	if (xpu_writer__close_stats(w, ws))
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

/* Reads buf; returns how many records matched recs[] in order, skipping
 * those of bad chunks (seen[] marks the ones that came back). */
static int trace__check(const uint8_t *buf, size_t len, int threads, bool *seen, int *mismatch)
{
	struct xpu_reader *r;
	struct xpu_record rec;
	int err = 0, i = 0, n = 0;

	*mismatch = 0;
	r = xpu_reader__open_mem(buf, len, &err);
	if (!r)
		return -1;
	xpu_reader__set_threads(r, threads);
	while (xpu_reader__next(r, &rec) == 1) {
		/* find it from i on: records of bad chunks are missing */
		while (i < nr_recs && (recs[i].type != rec.type || recs[i].len != rec.body_size ||
				       memcmp(recs[i].body, rec.body, rec.body_size)))
			i++;
		if (i == nr_recs) {
			(*mismatch)++;
			break;
		}
		if (recs[i].flags != rec.flags)
			(*mismatch)++;
		if (seen)
			seen[i] = true;
		i++;
		n++;
	}
	xpu_reader__close(r);
	return n;
}

/*
 * xpu_reader__skip_stacks() against a full read of the same trace, record
 * by record: the same types, flags and sequence; a record either whole or
 * (a coded one) the same up to the end of its user_ips with nr_regs and
 * stack_size 0 and nothing after. Returns the records read; *stripped
 * counts those without their stack; -1 on a difference.
 */
static int trace__check_stackless(const uint8_t *buf, size_t len, int threads, int *stripped)
{
	struct xpu_reader *full, *sl;
	struct xpu_record a, b;
	int err = 0, n = 0, ra, rb;

	*stripped = 0;
	full = xpu_reader__open_mem(buf, len, &err);
	sl = xpu_reader__open_mem(buf, len, &err);
	if (!full || !sl)
		return -1;
	xpu_reader__set_threads(full, threads);
	xpu_reader__set_threads(sl, threads);
	xpu_reader__skip_stacks(sl);
	while ((ra = xpu_reader__next(full, &a)) == 1 && (rb = xpu_reader__next(sl, &b)) == 1) {
		const struct xpu_rectype *t = xpu_rectype__get(a.type);
		struct xpu_stack sa, sb;
		size_t end;

		n++;
		if (a.type != b.type || a.flags != b.flags)
			return -1;
		if (a.body_size == b.body_size && !memcmp(a.body, b.body, a.body_size))
			continue;
		if (!t || !(t->flags & XPU_RECF_STACK))
			return -1;
		memcpy(&sa, (const uint8_t *)a.body + t->stack_off, sizeof(sa));
		memcpy(&sb, (const uint8_t *)b.body + t->stack_off, sizeof(sb));
		end = t->stack_off + sizeof(sa) + 8 * ((size_t)sa.nr_kernel_ips + sa.nr_user_ips);
		if (sb.nr_regs || sb.stack_size || b.body_size != end ||
		    memcmp(a.body, b.body, t->stack_off) ||
		    memcmp((const uint8_t *)a.body + t->stack_off + sizeof(sa),
			   (const uint8_t *)b.body + t->stack_off + sizeof(sb),
			   end - t->stack_off - sizeof(sa)))
			return -1;
		sb.nr_regs = sa.nr_regs;
		sb.stack_size = sa.stack_size;
		if (memcmp(&sa, &sb, sizeof(sa)))
			return -1;
		(*stripped)++;
	}
	if (ra == 1 || xpu_reader__next(sl, &b) == 1)
		return -1;	/* one ended first */
	/* the same damage and counts */
	if (memcmp(xpu_reader__stats(full), xpu_reader__stats(sl), sizeof(struct xpu_reader_stats)))
		return -1;
	xpu_reader__close(full);
	xpu_reader__close(sl);
	return n;
}

static void test_round_trip(void)
{
	struct xpu_writer_stats wd, wp;
	size_t ld, lp;
	uint8_t *d = trace__write(true, 64 << 10, &ld, &wd);
	uint8_t *p = trace__write(false, 64 << 10, &lp, &wp);
	int mismatch;

	TEST_ASSERT(d && p);
	TEST_ASSERT_EQ(trace__check(d, ld, 0, NULL, &mismatch), nr_recs);
	TEST_ASSERT_EQ(mismatch, 0);
	TEST_ASSERT_EQ(trace__check(d, ld, 3, NULL, &mismatch), nr_recs);
	TEST_ASSERT_EQ(mismatch, 0);
	TEST_ASSERT_EQ(trace__check(p, lp, 0, NULL, &mismatch), nr_recs);
	/* a pass that reads no stacks: coded records come without theirs */
	for (int threads = 0; threads <= 3; threads += 3) {
		int stripped;

		TEST_ASSERT_EQ(trace__check_stackless(d, ld, threads, &stripped), nr_recs);
		TEST_ASSERT(stripped > nr_recs / 2);
		TEST_ASSERT_EQ(trace__check_stackless(p, lp, threads, &stripped), nr_recs);
		TEST_ASSERT_EQ(stripped, 0);
	}
	/* the same records and counts; coded, far fewer bytes before compression */
	TEST_ASSERT_EQ(wd.records, wp.records);
	TEST_ASSERT_EQ(wd.per_type[XPU_REC_SAMPLE], wp.per_type[XPU_REC_SAMPLE]);
	TEST_ASSERT(wd.raw_bytes * 3 < wp.raw_bytes);
	TEST_ASSERT(wd.chunks > 10);
	free(d);
	free(p);
}

/* Each chunk of a coded trace, damaged in turn: every other chunk's records
 * still come back, exactly: no reference reaches into another chunk. */
static void test_damaged_chunk(void)
{
	struct xpu_writer_stats ws;
	size_t len, off;
	uint8_t *d = trace__write(true, 32 << 10, &len, &ws);
	uint32_t nr_chunks = 0;
	int mismatch;

	TEST_ASSERT(d);
	off = sizeof(struct xpu_file_header);
	while (off + sizeof(struct xpu_chunk_header) <= len) {
		struct xpu_chunk_header ch;
		uint8_t *copy = malloc(len);
		int n;

		memcpy(&ch, d + off, sizeof(ch));
		memcpy(copy, d, len);
		copy[off + ch.header_size + ch.comp_size / 2] ^= 0x5a;	/* payload CRC fails */
		n = trace__check(copy, len, 0, NULL, &mismatch);
		TEST_ASSERT_EQ(mismatch, 0);
		TEST_ASSERT_EQ(n, nr_recs - (int)ch.nr_records);
		{
			int stripped;	/* the same damage when stacks are skipped */

			TEST_ASSERT_EQ(trace__check_stackless(copy, len, 0, &stripped), n);
		}
		free(copy);
		off += ch.header_size + ch.comp_size;
		nr_chunks++;
	}
	TEST_ASSERT_EQ(nr_chunks, ws.chunks);
	TEST_ASSERT(nr_chunks > 20);
	free(d);
}

/* The encoder: the first record of a thread in a chunk, and the first after
 * a reset (a new chunk), are written in full; the next one is coded. */
static void test_encoder_reset(void)
{
	struct xpu_delta_enc *e = xpu_delta_enc__new();
	struct rec a = rec__stack(XPU_REC_SAMPLE, 3, true, 0);
	struct rec b = rec__stack(XPU_REC_SAMPLE, 3, true, 0);
	struct rec c = rec__stack(XPU_REC_SAMPLE, 4, true, 0);
	uint8_t dst[65536];

	TEST_ASSERT(e);
	TEST_ASSERT_EQ(xpu_delta__encode(e, 0, a.type, 0, a.body, a.len, dst, 8 + a.len), 0);
	TEST_ASSERT(xpu_delta__encode(e, 1, b.type, 0, b.body, b.len, dst, 8 + b.len) > 0);
	TEST_ASSERT_EQ(xpu_delta__encode(e, 2, c.type, 0, c.body, c.len, dst, 8 + c.len), 0);
	xpu_delta_enc__reset(e);
	TEST_ASSERT_EQ(xpu_delta__encode(e, 0, b.type, 0, b.body, b.len, dst, 8 + b.len), 0);
	TEST_ASSERT(xpu_delta__encode(e, 1, a.type, 0, a.body, a.len, dst, 8 + a.len) > 0);
	/* not a stack record, or not exactly its parts: never coded */
	TEST_ASSERT_EQ(xpu_delta__encode(e, 2, XPU_REC_COMM, 0, a.body, 40, dst, 48), 0);
	TEST_ASSERT_EQ(xpu_delta__encode(e, 2, a.type, 0, a.body, a.len - 8, dst, a.len), 0);
	xpu_delta_enc__free(e);
	free(a.body);
	free(b.body);
	free(c.body);
}

/* A chunk of [plain SAMPLE, coded SAMPLE] with the coded one's fields
 * changed: the decoder refuses each malformed variant with a reason. */
static void test_decoder_rejects(void)
{
	struct xpu_delta_enc *e = xpu_delta_enc__new();
	struct rec a = rec__stack(XPU_REC_SAMPLE, 2, true, 0);
	struct rec b = rec__stack(XPU_REC_SAMPLE, 2, true, 0);
	struct xpu_delta_dec dd = { 0 }, sl = { .stackless = true };
	struct xpu_record_header rh = { .type = XPU_REC_SAMPLE, .size = 8 + a.len };
	uint8_t *chunk = calloc(1, 2 * (8 + a.len + b.len) + 64), *coded;
	size_t n, len;
	const char *why = NULL;
	struct xpu_stack_delta dh;

	TEST_ASSERT(e && chunk);
	memcpy(chunk, &rh, 8);
	memcpy(chunk + 8, a.body, a.len);
	coded = chunk + 8 + a.len;
	TEST_ASSERT_EQ(xpu_delta__encode(e, 0, a.type, 0, a.body, a.len, coded, 8 + a.len), 0);
	n = xpu_delta__encode(e, 1, b.type, 7, b.body, b.len, coded, 8 + b.len);
	TEST_ASSERT(n > 0);
	len = 8 + a.len + n;
	TEST_ASSERT_EQ(xpu_delta__decode(&dd, chunk, len, 2, XPU_CHUNK_MAX_RAW, &why), 0);
	TEST_ASSERT_EQ(dd.len, 16 + a.len + b.len);
	TEST_ASSERT(!memcmp(dd.buf + 16 + a.len, b.body, b.len));
	memcpy(&rh, dd.buf + 8 + a.len, 8);
	TEST_ASSERT_EQ(rh.flags, 7);
	/* stackless: the coded one up to its user_ips, its full size counted */
	TEST_ASSERT_EQ(xpu_delta__decode(&sl, chunk, len, 2, XPU_CHUNK_MAX_RAW, &why), 0);
	TEST_ASSERT_EQ(sl.full, dd.len);
	TEST_ASSERT(sl.len < dd.len);
	TEST_ASSERT(!memcmp(sl.buf, dd.buf, 8 + a.len));
	/* too little room once rebuilt, stackless or not */
	TEST_ASSERT_EQ(xpu_delta__decode(&dd, chunk, len, 2, 8 + a.len + b.len, &why), -E2BIG);
	TEST_ASSERT_EQ(xpu_delta__decode(&sl, chunk, len, 2, 8 + a.len + b.len, &why), -E2BIG);
	memcpy(&dh, coded + 8, sizeof(dh));
	{
		struct { const char *what; struct xpu_stack_delta d; } bad[] = {
			{ "back 0", { dh.type, dh.flags, 0, dh.ops_size, dh.shift } },
			{ "back past the chunk", { dh.type, dh.flags, 2, dh.ops_size, dh.shift } },
			{ "not a stack type", { XPU_REC_COMM, dh.flags, 1, dh.ops_size, dh.shift } },
			{ "ops past the record", { dh.type, dh.flags, 1, (uint32_t)n, dh.shift } },
			{ "ops cut short", { dh.type, dh.flags, 1, 1, dh.shift } },
			{ "copies beyond the reference", { dh.type, dh.flags, 1, dh.ops_size, 100000 } },
			/* a run whose last word alone has no pair: the
			 * decoder copies runs whole, after checking their ends */
			{ "run one word past the reference", { dh.type, dh.flags, 1, dh.ops_size, dh.shift + 1 } },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(coded + 8, &bad[i].d, sizeof(dh));
			why = NULL;
			if (xpu_delta__decode(&dd, chunk, len, 2, XPU_CHUNK_MAX_RAW, &why) != -EINVAL ||
			    !why) {
				fprintf(stderr, "  accepted: %s\n", bad[i].what);
				TEST_ASSERT(0);
			}
			{	/* and the same reason without rebuilding stacks */
				const char *why2 = NULL;

				TEST_ASSERT_EQ(xpu_delta__decode(&sl, chunk, len, 2, XPU_CHUNK_MAX_RAW,
								 &why2), -EINVAL);
				TEST_ASSERT(why2 && !strcmp(why, why2));
			}
		}
		/* a reference that is itself not a stack record */
		memcpy(coded + 8, &dh, sizeof(dh));
		rh = (struct xpu_record_header){ .type = XPU_REC_COMM, .size = 8 + a.len };
		memcpy(chunk, &rh, 8);
		TEST_ASSERT_EQ(xpu_delta__decode(&dd, chunk, len, 2, XPU_CHUNK_MAX_RAW, &why), -EINVAL);
		TEST_ASSERT_EQ(xpu_delta__decode(&sl, chunk, len, 2, XPU_CHUNK_MAX_RAW, &why), -EINVAL);
	}
	xpu_delta_dec__free(&dd);
	xpu_delta_dec__free(&sl);
	xpu_delta_enc__free(e);
	free(chunk);
	free(a.body);
	free(b.body);
}

/* A 1.3 trace (kept in the reader corpus: make_corpus does not rewrite it)
 * still reads: every record, no damage, its own version in the header. */
static void test_reads_1_3(void)
{
	const char *top = getenv("XPU_TOP");
	char file[4096];
	const struct xpu_reader_stats *st;
	struct xpu_reader *r;
	struct xpu_record rec;
	int err = 0, n = 0, samples = 0;

	snprintf(file, sizeof(file), "%s/tests/fuzz/corpus/reader/v1.3-all-types-zstd",
		 top ? top : ".");
	r = xpu_reader__open(file, &err);
	TEST_ASSERT(r);
	TEST_ASSERT_EQ(xpu_reader__header(r)->major, 1);
	TEST_ASSERT_EQ(xpu_reader__header(r)->minor, 3);
	while (xpu_reader__next(r, &rec) == 1) {
		n++;
		samples += rec.type == XPU_REC_SAMPLE;
	}
	st = xpu_reader__stats(r);
	TEST_ASSERT_EQ(st->chunks_bad, 0);
	TEST_ASSERT_EQ(st->unknown_records, 0);
	TEST_ASSERT(!st->truncated);
	TEST_ASSERT(n > 20);
	TEST_ASSERT(samples > 0);
	xpu_reader__close(r);
}

int main(void)
{
	recs__make();
	TEST_RUN(test_round_trip);
	TEST_RUN(test_damaged_chunk);
	TEST_RUN(test_encoder_reset);
	TEST_RUN(test_decoder_rejects);
	TEST_RUN(test_reads_1_3);
	for (int i = 0; i < nr_recs; i++)
		free(recs[i].body);
	TEST_EXIT();
}
