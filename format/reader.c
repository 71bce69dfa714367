// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "reader.h"

struct xpu_reader {
	const uint8_t *data;		/* whole file */
	size_t len;
	bool mapped;
	struct xpu_file_header fh;
	size_t pos;			/* file offset of the next chunk */
	uint64_t chunk_index;		/* index of the chunk in buf */
	uint64_t next_chunk_index;
	uint8_t *buf;			/* decompressed current chunk */
	size_t buf_cap;
	size_t buf_len, buf_pos;
	ZSTD_DCtx *dctx;
	size_t high_water;		/* damage before this offset is already counted */
	struct xpu_reader_stats st;
};

static const struct {
	const char *name;
	size_t min;
} rec_types[XPU_REC_MAX] = {
	[XPU_REC_META]		= { "META", 2 },
	[XPU_REC_COMM]		= { "COMM", sizeof(struct xpu_comm) },
	[XPU_REC_FORK]		= { "FORK", sizeof(struct xpu_fork) },
	[XPU_REC_EXIT]		= { "EXIT", sizeof(struct xpu_exit) },
	[XPU_REC_MMAP]		= { "MMAP", sizeof(struct xpu_mmap) + 1 },
	[XPU_REC_SAMPLE]	= { "SAMPLE", sizeof(struct xpu_sample) },
	[XPU_REC_LOST]		= { "LOST", sizeof(struct xpu_lost) },
	[XPU_REC_KSYM]		= { "KSYM", sizeof(struct xpu_ksym) + 1 },
	[XPU_REC_PERF_MAP]	= { "PERF_MAP", sizeof(struct xpu_perf_map) + 1 },
	[XPU_REC_STRING]	= { "STRING", sizeof(struct xpu_string) + 1 },
	[XPU_REC_FINISH]	= { "FINISH", sizeof(struct xpu_finish) },
	[XPU_REC_GPU_KERNEL]	= { "GPU_KERNEL", sizeof(struct xpu_gpu_kernel) },
	[XPU_REC_GPU_MEMCPY]	= { "GPU_MEMCPY", sizeof(struct xpu_gpu_memcpy) },
	[XPU_REC_GPU_MEMSET]	= { "GPU_MEMSET", sizeof(struct xpu_gpu_memset) },
	[XPU_REC_GPU_SYNC]	= { "GPU_SYNC", sizeof(struct xpu_gpu_sync) },
	[XPU_REC_GPU_API]	= { "GPU_API", sizeof(struct xpu_gpu_api) },
	[XPU_REC_GPU_CORR]	= { "GPU_CORR", sizeof(struct xpu_gpu_corr) },
	[XPU_REC_GPU_DEVICE]	= { "GPU_DEVICE", sizeof(struct xpu_gpu_device) + 1 },
};

size_t xpu_record__min_size(uint16_t type)
{
	return type < XPU_REC_MAX ? rec_types[type].min : 0;
}

const char *xpu_record__type_name(uint16_t type)
{
	return type < XPU_REC_MAX && rec_types[type].name ? rec_types[type].name : "UNKNOWN";
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
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		*err = -XPU_READER_EIO;
		goto out_free;
	}
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

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -XPU_READER_EIO;
		return NULL;
	}
	if (fstat(fd, &st)) {
		e = errno;
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
	return r;
}

void xpu_reader__close(struct xpu_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->data, r->len);
	ZSTD_freeDCtx(r->dctx);
	free(r->buf);
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
	r->pos = r->fh.header_size;
	r->buf_len = r->buf_pos = 0;
	r->next_chunk_index = 0;
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
 * second pass must not add it again) and stop. */
static void reader__truncated(struct xpu_reader *r, size_t start, const char *why)
{
	if (start >= r->high_water)
		r->st.truncated = true;
	reader__damage(r, start, r->len, "%s", why);
	r->high_water = r->len;
	r->pos = r->len;
}

/* Scan for the next plausible chunk header after a damaged one. */
static size_t reader__resync(const struct xpu_reader *r, size_t from)
{
	uint32_t magic = XPU_CHUNK_MAGIC;

	for (size_t p = from; p + sizeof(struct xpu_chunk_header) <= r->len; p++) {
		struct xpu_chunk_header ch;

		if (memcmp(r->data + p, &magic, 4))
			continue;
		memcpy(&ch, r->data + p, sizeof(ch));
		if (reader__header_crc_ok(&ch))
			return p;
	}
	return r->len;
}

/* Validates every record header of a decompressed chunk before handing any
 * out, so a chunk is either wholly delivered or wholly skipped. */
static bool reader__chunk_valid(const uint8_t *p, size_t len, uint32_t nr,
				uint32_t *unknown, const char **why)
{
	size_t off = 0;
	uint32_t n = 0;

	*unknown = 0;
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
		if (!xpu_record__min_size(rh.type))
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

/* Loads the next good chunk into buf. Returns false at end of data. */
static bool reader__load_chunk(struct xpu_reader *r)
{
	while (r->pos < r->len) {
		struct xpu_chunk_header ch;
		size_t start = r->pos, end;
		const uint8_t *payload;
		const char *why = NULL;
		uint32_t unknown = 0;

		if (r->len - start < sizeof(ch)) {
			reader__truncated(r, start, "file ends inside a chunk header");
			break;
		}
		memcpy(&ch, r->data + start, sizeof(ch));
		if (ch.magic != XPU_CHUNK_MAGIC ||
		    !reader__header_crc_ok(&ch) ||
		    ch.header_size < sizeof(ch)) {
			size_t next = reader__resync(r, start + 1);

			if (start >= r->high_water)
				r->st.chunks_bad++;
			reader__damage(r, start, next, "bad chunk header");
			if (next > r->high_water)
				r->high_water = next;
			r->pos = next;
			continue;
		}
		end = start + ch.header_size + (size_t)ch.comp_size;
		if (end > r->len) {
			reader__truncated(r, start, "file ends inside a chunk (truncated trace)");
			break;
		}
		payload = r->data + start + ch.header_size;
		r->pos = end;
		if (ch.raw_size > XPU_CHUNK_MAX_RAW)
			why = "chunk larger than the format allows";
		else if (!reader__crc_ok(crc32(0, payload, ch.comp_size), ch.payload_crc))
			why = "chunk checksum mismatch";
		if (!why) {
			if (ch.raw_size > r->buf_cap) {
				uint8_t *n = realloc(r->buf, ch.raw_size);

				if (!n) {
					why = "out of memory for chunk";
				} else {
					r->buf = n;
					r->buf_cap = ch.raw_size;
				}
			}
		}
		if (!why && (ch.flags & XPU_CHUNK_ZSTD)) {
			size_t got = ZSTD_decompressDCtx(r->dctx, r->buf, ch.raw_size,
							 payload, ch.comp_size);

			if (ZSTD_isError(got) || got != ch.raw_size)
				why = "zstd frame does not decompress to its stated size";
		} else if (!why) {
			if (ch.comp_size != ch.raw_size)
				why = "stored chunk size mismatch";
			else if (ch.raw_size)	/* buf may still be NULL */
				memcpy(r->buf, payload, ch.raw_size);
		}
		if (!why)
			reader__chunk_valid(r->buf, ch.raw_size, ch.nr_records, &unknown, &why);
		r->chunk_index = r->next_chunk_index++;
		if (why) {
			if (start >= r->high_water)
				r->st.chunks_bad++;
			reader__damage(r, start, end, "%s", why);
			if (end > r->high_water)
				r->high_water = end;
			continue;
		}
		if (start >= r->high_water) {
			r->st.chunks_ok++;
			r->st.records += ch.nr_records - unknown;
			r->st.unknown_records += unknown;
			r->high_water = end;
		}
		r->buf_len = ch.raw_size;
		r->buf_pos = 0;
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

int xpu_stack__parse(const void *stack, size_t avail, struct xpu_stack_view *v)
{
	const uint8_t *p = stack;
	struct xpu_stack h;
	size_t need;

	if (avail < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	need = sizeof(h) + 8 * ((size_t)h.nr_kernel_ips + h.nr_user_ips + h.nr_regs) +
	       (size_t)h.stack_size;
	if (need > avail)
		return -EINVAL;
	v->hdr = stack;
	v->kernel_ips = (const uint64_t *)(p + sizeof(h));
	v->user_ips = v->kernel_ips + h.nr_kernel_ips;
	v->regs = v->user_ips + h.nr_user_ips;
	v->stack = (const uint8_t *)(v->regs + h.nr_regs);
	return 0;
}

const char *xpu_record__string(const struct xpu_record *rec, size_t fixed)
{
	const char *s = (const char *)rec->body + fixed;

	if (rec->body_size <= fixed || !memchr(s, 0, rec->body_size - fixed))
		return NULL;
	return s;
}

int xpu_record__meta(const struct xpu_record *rec, const char **key, const char **value)
{
	const char *k = rec->body, *v, *end = k + rec->body_size;
	const char *nul = memchr(k, 0, rec->body_size);

	if (!nul)
		return -EINVAL;
	v = nul + 1;
	if (v >= end || !memchr(v, 0, end - v))
		return -EINVAL;
	*key = k;
	*value = v;
	return 0;
}
