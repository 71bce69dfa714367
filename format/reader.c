// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "common/knobs.h"
#include "reader.h"
#include "record_types.h"
#include "stack_delta.h"

/*
 * Reading a chunk has three steps: locate it (parse its header, or resync
 * past damage: sequential), decode it (payload CRC, zstd, record checks:
 * the costly part, independent per chunk), and account for it (statistics,
 * damage messages, delivery: in file order). Decoding may run ahead in
 * worker threads; locating and decoding never touch the statistics, they
 * leave events that the reading thread applies in order, so a threaded
 * read counts and reports exactly what a sequential one does.
 */
enum reader_event_kind { EV_BAD_HEADER, EV_TRUNCATED };

struct reader_event {
	enum reader_event_kind kind;
	size_t start, end;		/* damaged range: end for EV_BAD_HEADER */
	const char *why;
};

struct chunk_job {
	struct reader_event *ev;	/* damage met while locating, before the chunk */
	size_t nr_ev, ev_cap;
	bool eof;			/* no chunk: the data ends after the events */
	size_t start, end;		/* file range of the chunk */
	struct xpu_chunk_header ch;
	const char *why;		/* decode failure, or NULL */
	uint32_t unknown;
	uint32_t coded;			/* STACK_DELTA records in it */
	uint8_t *buf;			/* decompressed records */
	size_t cap, len;
	struct xpu_delta_dec dd;	/* the records rebuilt, when some were coded */
	const uint8_t *out;		/* what is handed out: buf, or dd.buf when rebuilt */
};

/* A scan for the next chunk header after damage reads blocks of this size,
 * and gives up XPU_READER_RESYNC_MAX bytes after the damage (default 1 GiB,
 * the format's rule; common/knobs.c): the rest of the file is then counted
 * as skipped. */
#define READER_SCAN_BLOCK	(1u << 20)

#define READER_MAX_THREADS	4
#define READER_SLOTS		(2 * READER_MAX_THREADS)

enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_READY, SLOT_HELD };

struct reader_pool;
struct reader_worker_arg {
	struct reader_pool *pool;
	int idx;
};

struct reader_pool {
	pthread_t th[READER_MAX_THREADS];
	struct reader_worker_arg args[READER_MAX_THREADS];
	ZSTD_DCtx *dctx[READER_MAX_THREADS];
	int nr_threads;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct chunk_job slots[READER_SLOTS];
	enum slot_state state[READER_SLOTS];
	int nr_slots;			/* threads + 1: small buffers stay in cache */
	uint64_t next_seq;		/* next chunk to locate */
	uint64_t want_seq;		/* next chunk the reader delivers */
	size_t scan_pos;		/* where locating goes on */
	bool scan_eof, stop;
	struct xpu_reader *r;
};

struct xpu_reader {
	const uint8_t *data;		/* whole file */
	size_t len;
	bool mapped;
	struct xpu_file_header fh;
	size_t pos;			/* file offset of the next chunk (sequential) */
	bool eof;
	uint64_t chunk_index;		/* index of the chunk in buf */
	uint64_t next_chunk_index;
	struct xpu_chunk_header cur_ch;	/* its header (xpu_reader__chunk_header) */
	const uint8_t *buf;		/* decompressed current chunk */
	size_t buf_len, buf_pos;
	struct chunk_job job;		/* sequential reading */
	ZSTD_DCtx *dctx;
	int threads;			/* decode threads (0: sequential) */
	bool stackless;			/* xpu_reader__skip_stacks() until a rewind */
	struct reader_pool *pool;
	size_t high_water;		/* damage before this offset is already counted */
	size_t resync_max;		/* XPU_READER_RESYNC_MAX */
	uint64_t wait_ns;		/* xpu_reader__wait_ns() */
	struct xpu_reader_stats st;
};

static void reader__pool_stop(struct reader_pool *p);
static void reader__pool_free(struct xpu_reader *r);
static int reader__default_threads(size_t len);

size_t xpu_record__min_size(uint16_t type)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);

	return t ? t->min_size : 0;
}

const char *xpu_record__type_name(uint16_t type)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);

	return t ? t->name : "UNKNOWN";
}

static void reader__damage(struct xpu_reader *r, size_t from, size_t to, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Counts damage once even across rewinds: only bytes past high_water count. */
static void reader__damage(struct xpu_reader *r, size_t from, size_t to, const char *fmt, ...)
{
	va_list ap;

	if (to <= r->high_water)
		return;
	if (from < r->high_water)
		from = r->high_water;
	r->st.bytes_skipped += to - from;
	if (!r->st.first_error[0]) {
		int n = snprintf(r->st.first_error, sizeof(r->st.first_error),
				 "at offset %zu: ", from);

		va_start(ap, fmt);
		vsnprintf(r->st.first_error + n, sizeof(r->st.first_error) - n, fmt, ap);
		va_end(ap);
	}
}

static size_t reader__resync_max(void)
{
	uint64_t n = knob__size(KNOB_READER_RESYNC_MAX);

	return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

static struct xpu_reader *reader__init(const void *buf, size_t len, int *err)
{
	struct xpu_reader *r;

	if (!buf || len < sizeof(struct xpu_file_header)) {
		*err = !buf || !len || memcmp(buf, XPU_FILE_MAGIC, len < 8 ? len : 8) ?
			-XPU_READER_EMAGIC : -XPU_READER_ESHORT;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*err = -XPU_READER_EIO;
		return NULL;
	}
	memcpy(&r->fh, buf, sizeof(r->fh));
	if (memcmp(r->fh.magic, XPU_FILE_MAGIC, 8)) {
		*err = -XPU_READER_EMAGIC;
		goto out_free;
	}
	if (r->fh.major == 0) {		/* no such version: not ours */
		*err = -XPU_READER_EMAGIC;
		goto out_free;
	}
	if (r->fh.major > XPU_VERSION_MAJOR) {
		*err = -XPU_READER_EVERSION;
		goto out_free;
	}
	if (r->fh.header_size < sizeof(r->fh) || r->fh.header_size > len) {
		*err = -XPU_READER_EMAGIC;
		goto out_free;
	}
	r->data = buf;
	r->len = len;
	r->resync_max = reader__resync_max();
	/* r->dctx: at the first chunk read sequentially (96 KB: a report of
	 * 20,000 rotated files held 1.9 GB of them) */
	xpu_reader__rewind(r);
	return r;
out_free:
	free(r);
	return NULL;
}

struct xpu_reader *xpu_reader__open_mem(const void *buf, size_t len, int *err)
{
	return reader__init(buf, len, err);
}

struct xpu_reader *xpu_reader__open(const char *path, int *err)
{
	struct xpu_reader *r;
	struct stat st;
	void *map;
	int fd, e;

	/* O_NONBLOCK: a FIFO's open() would wait for a writer forever */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*err = -XPU_READER_EIO;
		return NULL;
	}
	e = fstat(fd, &st) ? errno : 0;
	if (!e && !S_ISREG(st.st_mode)) {
		close(fd);
		*err = -XPU_READER_ENOTREG;
		return NULL;
	}
	if (!e && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		e = errno;
	if (e) {
		close(fd);
		errno = e;
		*err = -XPU_READER_EIO;
		return NULL;
	}
	if (st.st_size == 0) {
		close(fd);
		*err = -XPU_READER_ESHORT;
		return NULL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	close(fd);
	if (map == MAP_FAILED) {
		errno = e;
		*err = -XPU_READER_EIO;
		return NULL;
	}
	madvise(map, st.st_size, MADV_SEQUENTIAL);
	r = reader__init(map, st.st_size, err);
	if (!r) {
		munmap(map, st.st_size);
		return NULL;
	}
	r->mapped = true;
	xpu_reader__set_threads(r, reader__default_threads(r->len));
	return r;
}

void xpu_reader__close(struct xpu_reader *r)
{
	if (!r)
		return;
	reader__pool_free(r);
	if (r->mapped)
		munmap((void *)r->data, r->len);
	ZSTD_freeDCtx(r->dctx);
	free(r->job.buf);
	free(r->job.ev);
	xpu_delta_dec__free(&r->job.dd);
	free(r);
}

const struct xpu_file_header *xpu_reader__header(const struct xpu_reader *r)
{
	return &r->fh;
}

const struct xpu_reader_stats *xpu_reader__stats(const struct xpu_reader *r)
{
	return &r->st;
}

void xpu_reader__rewind(struct xpu_reader *r)
{
	if (r->pool)
		reader__pool_stop(r->pool);	/* restarted at the first chunk */
	r->stackless = false;
	r->pos = r->fh.header_size;
	r->eof = false;
	r->buf_len = r->buf_pos = 0;
	r->next_chunk_index = 0;
}

/*
 * Threads that decode chunks ahead of the reading thread: XPU_READER_THREADS
 * if set (0: none), else one per CPU up to READER_MAX_THREADS for traces of
 * more than one chunk on machines with more than one CPU.
 */
static int reader__default_threads(size_t len)
{
	long long n = knob__int(KNOB_READER_THREADS);
	long cpus;

	if (n >= 0)
		return n > READER_MAX_THREADS ? READER_MAX_THREADS : (int)n;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2 || len < (1u << 20))
		return 0;
	return cpus > READER_MAX_THREADS ? READER_MAX_THREADS : (int)cpus;
}

void xpu_reader__set_threads(struct xpu_reader *r, int threads)
{
	reader__pool_free(r);
	r->threads = threads < 0 ? 0 : threads > READER_MAX_THREADS ? READER_MAX_THREADS : threads;
	if (!r->threads)
		return;
	r->pool = calloc(1, sizeof(*r->pool));
	if (!r->pool) {
		r->threads = 0;
		return;
	}
	r->pool->r = r;
	r->pool->nr_slots = r->threads + 1;
	pthread_mutex_init(&r->pool->lock, NULL);
	pthread_cond_init(&r->pool->cond, NULL);
	xpu_reader__rewind(r);
}

/*
 * Checksums. A fuzzing build (`make fuzz` defines the macro below)
 * ignores mismatches so mutated inputs get past them into decompression and
 * record validation, as zstd's own fuzzers do; normal builds never do this.
 */
static bool reader__crc_ok(uint32_t computed, uint32_t stored)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	return true;
#else
	return computed == stored;
#endif
}

static bool reader__header_crc_ok(const struct xpu_chunk_header *ch)
{
	return reader__crc_ok(crc32(0, (const Bytef *)ch,
				    offsetof(struct xpu_chunk_header, header_crc)),
			      ch->header_crc);
}

/* The file ends inside the chunk at start: count the tail once (a rewound
 * second pass must not add it again). */
static void reader__truncated(struct xpu_reader *r, size_t start, const char *why)
{
	if (start >= r->high_water)
		r->st.truncated = true;
	reader__damage(r, start, r->len, "%s", why);
	r->high_water = r->len;
}

/* Does a chunk header with a valid CRC start at off? */
static bool reader__header_at(const struct xpu_reader *r, size_t off)
{
	struct xpu_chunk_header ch;

	if (r->len - off < sizeof(ch))
		return false;
	memcpy(&ch, r->data + off, sizeof(ch));
	return ch.magic == XPU_CHUNK_MAGIC && reader__header_crc_ok(&ch);
}

static void reader__release(const struct xpu_reader *r, size_t start, size_t end);

/*
 * The first offset in [from, to) where a chunk header with a right
 * header_crc starts, else to. memchr finds the magic's first byte a block at
 * a time (a report over a 1 GB hole: 0.3 s, 1.0 s byte by byte); with
 * release, the pages passed over go back to the page cache (reader__release)
 * so that a long scan does not grow the report's memory.
 */
static size_t reader__scan(const struct xpu_reader *r, size_t from, size_t to, bool release)
{
	const uint8_t first = XPU_CHUNK_MAGIC & 0xff;
	size_t p = from, released = from;

	if (to > r->len)
		to = r->len;
	while (p < to) {
		size_t n = to - p < READER_SCAN_BLOCK ? to - p : READER_SCAN_BLOCK;
		const uint8_t *hit = memchr(r->data + p, first, n);

		if (!hit) {
			p += n;
			if (release && p - released >= READER_SCAN_BLOCK) {
				reader__release(r, released, p);
				released = p;
			}
			continue;
		}
		p = (size_t)(hit - r->data);
		if (reader__header_at(r, p))
			return p;
		p++;
	}
	return to;
}

/* The next plausible chunk header after a damaged one at from - 1, at most
 * r->resync_max bytes on; r->len when there is none, with *gave_up when the
 * bound, not the end of the file, stopped the scan. */
static size_t reader__resync(const struct xpu_reader *r, size_t from, bool *gave_up)
{
	size_t to = r->len - from > r->resync_max ? from + r->resync_max : r->len;
	size_t p = from < r->len ? reader__scan(r, from, to, true) : r->len;
	bool bound = p == to && to < r->len;

	if (gave_up)
		*gave_up = bound;
	return bound ? r->len : p;
}

#define READER_GAVE_UP	"no chunk header within the resync bound after the damage (1 GiB, " \
			"XPU_READER_RESYNC_MAX): the rest is not read"

/* Validates every record header of a decompressed chunk before handing any
 * out, so a chunk is either wholly delivered or wholly skipped. */
static bool reader__chunk_valid(const uint8_t *p, size_t len, uint32_t nr,
				uint32_t *unknown, uint32_t *coded, const char **why)
{
	size_t off = 0;
	uint32_t n = 0;

	*unknown = 0;
	*coded = 0;
	while (off < len) {
		struct xpu_record_header rh;

		if (len - off < sizeof(rh)) {
			*why = "record header runs past the chunk";
			return false;
		}
		memcpy(&rh, p + off, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size % XPU_RECORD_ALIGN || rh.size > len - off) {
			*why = "record size out of range";
			return false;
		}
		if (rh.size - sizeof(rh) < xpu_record__min_size(rh.type)) {
			*why = "record shorter than its type";
			return false;
		}
		if (rh.type == XPU_REC_STACK_DELTA)	/* checked when rebuilt */
			(*coded)++;
		else if (!xpu_record__min_size(rh.type))
			(*unknown)++;
		off += rh.size;
		n++;
	}
	if (n != nr) {
		*why = "record count mismatch";
		return false;
	}
	return true;
}

static void job__event(struct chunk_job *job, enum reader_event_kind kind, size_t start,
		       size_t end, const char *why)
{
	if (job->nr_ev == job->ev_cap) {
		size_t cap = job->ev_cap ? 2 * job->ev_cap : 4;
		struct reader_event *n = realloc(job->ev, cap * sizeof(*n));

		if (!n)
			abort();	/* a few dozen bytes: as xalloc does */
		job->ev = n;
		job->ev_cap = cap;
	}
	job->ev[job->nr_ev++] = (struct reader_event){ kind, start, end, why };
}

/*
 * A header whose CRC is right can still carry wrong sizes (a writer bug,
 * damage written over with a fresh CRC). Its sizes are damage, not a tail,
 * when they pass the format's limits, run past the end of the file while a
 * good chunk header follows, or end where no chunk header starts and the
 * payload they delimit fails its CRC: then the reader resyncs as for a bad
 * header (*next) rather than trusting them. Sizes that end on a later chunk
 * (or the end of the file) are damage too when the payload fails its CRC and
 * holds a good chunk header: *next is that header, so the chunks they ran
 * over are read. NULL: the sizes stand.
 */
static const char *reader__bad_sizes(const struct xpu_reader *r, size_t start,
				     const struct xpu_chunk_header *ch, size_t *next)
{
	size_t payload = start + ch->header_size, end = payload + (size_t)ch->comp_size;
	bool gave_up;

	*next = r->len;
	if (ch->raw_size > XPU_CHUNK_MAX_RAW || ch->comp_size > XPU_CHUNK_MAX_RAW) {
		*next = reader__resync(r, start + 1, &gave_up);
		return gave_up ? READER_GAVE_UP : "chunk sizes beyond the format's limits";
	}
	if (end > r->len) {
		*next = reader__resync(r, start + 1, NULL);
		return *next < r->len ? "chunk sizes run past the end of the file" : NULL;
	}
	if (end == r->len || reader__header_at(r, end)) {
		/* it ends where a chunk starts, but may have run over whole
		 * chunks: a header that holds inside it, and a payload CRC
		 * that does not, mean the sizes are wrong, not those chunks */
		size_t inner = reader__scan(r, payload, end, false);

		if (inner == end ||
		    reader__crc_ok(crc32(0, r->data + payload, ch->comp_size), ch->payload_crc))
			return NULL;
		*next = inner;
		return "chunk sizes run over the chunk headers that follow";
	}
	if (reader__crc_ok(crc32(0, r->data + payload, ch->comp_size), ch->payload_crc))
		return NULL;
	*next = reader__resync(r, start + 1, &gave_up);
	return gave_up ? READER_GAVE_UP : "chunk sizes do not match its payload";
}

/* Step 1: the next chunk header from *pos on, past damage (left as events). */
static void reader__locate(const struct xpu_reader *r, size_t *pos, struct chunk_job *job)
{
	job->nr_ev = 0;
	job->eof = false;
	job->why = NULL;
	job->unknown = 0;
	job->coded = 0;
	job->len = 0;
	while (*pos < r->len) {
		struct xpu_chunk_header ch;
		size_t start = *pos, end, next;
		const char *why;

		if (r->len - start < sizeof(ch)) {
			job__event(job, EV_TRUNCATED, start, r->len, "file ends inside a chunk header");
			*pos = r->len;
			break;
		}
		memcpy(&ch, r->data + start, sizeof(ch));
		if (ch.magic != XPU_CHUNK_MAGIC ||
		    !reader__header_crc_ok(&ch) ||
		    ch.header_size < sizeof(ch)) {
			bool gave_up;

			next = reader__resync(r, start + 1, &gave_up);
			job__event(job, EV_BAD_HEADER, start, next,
				   gave_up ? READER_GAVE_UP : "bad chunk header");
			*pos = next;
			continue;
		}
		why = reader__bad_sizes(r, start, &ch, &next);
		if (why) {
			job__event(job, EV_BAD_HEADER, start, next, why);
			*pos = next;
			continue;
		}
		end = start + ch.header_size + (size_t)ch.comp_size;
		if (end > r->len) {	/* nothing after it: a truncated tail */
			job__event(job, EV_TRUNCATED, start, r->len,
				   "file ends inside a chunk (truncated trace)");
			*pos = r->len;
			break;
		}
		job->start = start;
		job->end = end;
		job->ch = ch;
		*pos = end;
		return;
	}
	job->eof = true;
}

/*
 * STACK_DELTA records (1.4) are rebuilt into the records they code, so that
 * a chunk is handed out as the writer was given it; a malformed one makes
 * the chunk bad like any other record error. The rebuilt records are
 * checked again (the coded type's minimum size).
 */
static void reader__rebuild(struct chunk_job *job, const char **why)
{
	uint32_t unknown, coded;

	if (xpu_delta__decode(&job->dd, job->buf, job->len, job->ch.nr_records,
			      XPU_CHUNK_MAX_RAW, why))
		return;
	if (!reader__chunk_valid(job->dd.buf, job->dd.len, job->ch.nr_records, &unknown, &coded,
				 why))
		return;
	/* handed out from dd; buf keeps the coded bytes. Not swapped: a
	 * swap left every slot with two buffers of the rebuilt size (16 MB
	 * each for PyTorch stacks: 200 MB of a GPT-2 report with 5 slots) */
	job->out = job->dd.buf;
	job->len = job->dd.len;
	job->unknown = unknown;
}

/* A decoded chunk's bytes of a mapped file go back to the page cache (its
 * records now live in the job's buffers): the report's resident memory
 * then does not grow with the file (a rewind or a later read faults them
 * in again). Whole pages inside [start, end) only. */
static void reader__release(const struct xpu_reader *r, size_t start, size_t end)
{
	uintptr_t lo, hi, page = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (!r->mapped)
		return;
	lo = ((uintptr_t)(r->data + start) + page - 1) & ~(page - 1);
	hi = (uintptr_t)(r->data + end) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Step 2: checksum, decompress and check the records of a located chunk. */
static void reader__decode(const struct xpu_reader *r, struct chunk_job *job, ZSTD_DCtx *dctx)
{
	const struct xpu_chunk_header *ch = &job->ch;
	const uint8_t *payload = r->data + job->start + ch->header_size;
	const char *why = NULL;

	if (!reader__crc_ok(crc32(0, payload, ch->comp_size), ch->payload_crc))
		why = "chunk checksum mismatch";
	if (!why && ch->raw_size > job->cap) {
		uint8_t *n = realloc(job->buf, ch->raw_size);

		if (!n) {
			why = "out of memory for chunk";
		} else {
			job->buf = n;
			job->cap = ch->raw_size;
		}
	}
	if (!why && (ch->flags & XPU_CHUNK_ZSTD) && !dctx)
		why = "out of memory for a zstd context";
	if (!why && (ch->flags & XPU_CHUNK_ZSTD)) {
		size_t got = ZSTD_decompressDCtx(dctx, job->buf, ch->raw_size,
						 payload, ch->comp_size);

		if (ZSTD_isError(got) || got != ch->raw_size)
			why = "zstd frame does not decompress to its stated size";
	} else if (!why) {
		if (ch->comp_size != ch->raw_size)
			why = "stored chunk size mismatch";
		else if (ch->raw_size)	/* buf may still be NULL */
			memcpy(job->buf, payload, ch->raw_size);
	}
	job->len = ch->raw_size;
	job->out = job->buf;
	reader__release(r, job->start, job->end);
	if (!why)
		reader__chunk_valid(job->buf, ch->raw_size, ch->nr_records, &job->unknown,
				    &job->coded, &why);
	if (!why && job->coded) {
		job->dd.stackless = r->stackless;
		reader__rebuild(job, &why);
	}
	job->why = why;
}

/* Step 3, in file order: count the job's damage and chunk; true when its
 * records are now the current ones. */
static bool reader__account(struct xpu_reader *r, const struct chunk_job *job)
{
	for (size_t i = 0; i < job->nr_ev; i++) {
		const struct reader_event *ev = &job->ev[i];

		if (ev->kind == EV_TRUNCATED) {
			reader__truncated(r, ev->start, ev->why);
			continue;
		}
		if (ev->start >= r->high_water)
			r->st.chunks_bad++;
		reader__damage(r, ev->start, ev->end, "%s", ev->why);
		if (ev->end > r->high_water)
			r->high_water = ev->end;
	}
	if (job->eof) {
		r->eof = true;
		return false;
	}
	r->chunk_index = r->next_chunk_index++;
	if (job->why) {
		if (job->start >= r->high_water)
			r->st.chunks_bad++;
		reader__damage(r, job->start, job->end, "%s", job->why);
		if (job->end > r->high_water)
			r->high_water = job->end;
		return false;
	}
	if (job->start >= r->high_water) {
		r->st.chunks_ok++;
		r->st.records += job->ch.nr_records - job->unknown;
		r->st.unknown_records += job->unknown;
		r->st.coded_records += job->coded;
		r->high_water = job->end;
	}
	r->buf = job->out;
	r->buf_len = job->len;
	r->buf_pos = 0;
	r->cur_ch = job->ch;
	return true;
}

/* ---- decoding ahead in threads ------------------------------------------------- */

/* Locates the next chunk under the lock (cheap, sequential), decodes it
 * outside, and marks its slot ready; at most READER_SLOTS chunks ahead. */
static void *reader__worker(void *arg)
{
	struct reader_worker_arg *wa = arg;
	struct reader_pool *p = wa->pool;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		int slot = (int)(p->next_seq % p->nr_slots);
		struct chunk_job *job = &p->slots[slot];

		if (p->scan_eof || p->state[slot] != SLOT_FREE) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		p->next_seq++;
		p->state[slot] = SLOT_BUSY;
		reader__locate(p->r, &p->scan_pos, job);
		if (job->eof) {
			p->scan_eof = true;
		} else {
			pthread_mutex_unlock(&p->lock);
			reader__decode(p->r, job, p->dctx[wa->idx]);
			pthread_mutex_lock(&p->lock);
		}
		p->state[slot] = SLOT_READY;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void reader__pool_stop(struct reader_pool *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nr_threads; i++)
		pthread_join(p->th[i], NULL);
	p->running = false;
}

/* A job's buffers, freed (grown again by the next decode). */
static void reader__job_free(struct chunk_job *job)
{
	free(job->ev);
	free(job->buf);
	xpu_delta_dec__free(&job->dd);
	job->ev = NULL;
	job->buf = NULL;
	job->nr_ev = job->ev_cap = job->cap = job->len = 0;
	job->out = NULL;
}

/* The workers stopped, their buffers and contexts freed; the pool stays
 * (started again by the next read). */
static void reader__pool_release(struct reader_pool *p)
{
	reader__pool_stop(p);
	for (int i = 0; i < READER_SLOTS; i++)
		reader__job_free(&p->slots[i]);
	for (int i = 0; i < READER_MAX_THREADS; i++) {
		ZSTD_freeDCtx(p->dctx[i]);
		p->dctx[i] = NULL;
	}
}

static void reader__pool_free(struct xpu_reader *r)
{
	struct reader_pool *p = r->pool;

	if (!p)
		return;
	reader__pool_release(p);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
	r->pool = NULL;
}

/* Starts the workers at r->pos. false: no thread could be started. */
static bool reader__pool_start(struct xpu_reader *r)
{
	struct reader_pool *p = r->pool;
	sigset_t all, old;
	int n = 0;

	p->next_seq = p->want_seq = 0;
	p->scan_pos = r->pos;
	p->scan_eof = p->stop = false;
	for (int i = 0; i < READER_SLOTS; i++)
		p->state[i] = SLOT_FREE;
	/* workers inherit a full signal mask: signals (the TUI's SIGWINCH,
	 * SIGTERM, Ctrl-C) stay with the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < r->threads; i++) {
		if (!p->dctx[i] && !(p->dctx[i] = ZSTD_createDCtx()))
			break;
		p->args[n] = (struct reader_worker_arg){ p, n };
		if (pthread_create(&p->th[n], NULL, reader__worker, &p->args[n]))
			break;
		n++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->nr_threads = n;
	p->running = n > 0;
	return p->running;
}

void xpu_reader__release(struct xpu_reader *r)
{
	if (r->pool)
		reader__pool_release(r->pool);
	reader__job_free(&r->job);
	ZSTD_freeDCtx(r->dctx);
	r->dctx = NULL;
	r->buf = NULL;
	r->buf_len = r->buf_pos = 0;
	r->eof = true;		/* until a rewind */
}

void xpu_reader__skip_stacks(struct xpu_reader *r)
{
	xpu_reader__rewind(r);
	r->stackless = true;
}

void xpu_reader__limit_threads(struct xpu_reader *r, int threads)
{
	if (r->threads > threads)
		xpu_reader__set_threads(r, threads);	/* rewinds */
}

static uint64_t reader__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool reader__load_chunk_threaded(struct xpu_reader *r)
{
	struct reader_pool *p = r->pool;

	while (!r->eof) {
		int slot;

		pthread_mutex_lock(&p->lock);
		for (int i = 0; i < READER_SLOTS; i++) {
			if (p->state[i] == SLOT_HELD) {	/* the records handed out before */
				p->state[i] = SLOT_FREE;
				pthread_cond_broadcast(&p->cond);
			}
		}
		slot = (int)(p->want_seq % p->nr_slots);
		if (p->state[slot] != SLOT_READY) {
			uint64_t t0 = reader__now();

			while (p->state[slot] != SLOT_READY)
				pthread_cond_wait(&p->cond, &p->lock);
			r->wait_ns += reader__now() - t0;
		}
		p->state[slot] = SLOT_HELD;
		p->want_seq++;
		pthread_mutex_unlock(&p->lock);
		if (reader__account(r, &p->slots[slot]))
			return true;
	}
	return false;
}

/* Loads the next good chunk into buf. Returns false at end of data. */
static bool reader__load_chunk(struct xpu_reader *r)
{
	if (r->eof)
		return false;
	if (r->pool && (r->pool->running || reader__pool_start(r)))
		return reader__load_chunk_threaded(r);
	reader__pool_free(r);	/* no thread could start: read sequentially */
	while (!r->eof) {
		reader__locate(r, &r->pos, &r->job);
		if (!r->job.eof) {
			uint64_t t0 = reader__now();

			if (!r->dctx)	/* NULL: the chunk is bad (out of memory) */
				r->dctx = ZSTD_createDCtx();
			reader__decode(r, &r->job, r->dctx);
			r->wait_ns += reader__now() - t0;
		}
		if (reader__account(r, &r->job))
			return true;
	}
	return false;
}

int xpu_reader__next(struct xpu_reader *r, struct xpu_record *rec)
{
	struct xpu_record_header rh;

	do {
		while (r->buf_pos >= r->buf_len)
			if (!reader__load_chunk(r))
				return 0;
		/* Sizes were validated when the chunk was loaded. */
		memcpy(&rh, r->buf + r->buf_pos, sizeof(rh));
		rec->type = rh.type;
		rec->flags = rh.flags;
		rec->body_size = rh.size - sizeof(rh);
		rec->body = r->buf + r->buf_pos + sizeof(rh);
		rec->chunk_index = r->chunk_index;
		r->buf_pos += rh.size;
		/* Types from a newer minor version: skipped by size, counted. */
	} while (!xpu_record__min_size(rh.type));
	return 1;
}

const struct xpu_chunk_header *xpu_reader__chunk_header(const struct xpu_reader *r)
{
	return &r->cur_ch;
}

uint64_t xpu_reader__wait_ns(const struct xpu_reader *r)
{
	return r->wait_ns;
}

void xpu_reader__chunk_rest(const struct xpu_reader *r, const void **buf, size_t *len)
{
	*buf = r->buf ? r->buf + r->buf_pos : NULL;
	*len = r->buf && r->buf_len > r->buf_pos ? r->buf_len - r->buf_pos : 0;
}
