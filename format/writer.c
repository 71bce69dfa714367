// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "reader.h"
#include "record_types.h"
#include "stack_delta.h"
#include "writer.h"

#define XPU_DEFAULT_CHUNK	(4u << 20)
#define XPU_DEFAULT_LEVEL	3
/* Chunks handed to the compressing thread and not yet written. */
#define XPU_WRITER_QUEUE	3

/* A full chunk's records, waiting for (or in) compression. */
struct wchunk {
	uint8_t *raw;
	size_t len, cap;
	uint32_t nr_records;
	uint32_t per_type[XPU_REC_MAX];
	uint64_t min_time, max_time;	/* xpu_writer_chunk's */
	int level;
};

/* Bytes held allocated past the end of the file (fallocate, KEEP_SIZE) so the
 * last chunk (lost counts, FINISH) still fits when the disk fills up. */
#define XPU_WRITER_RESERVE	4096

struct xpu_writer {
	pthread_mutex_t lock;
	int fd;
	int err;			/* first write error: the file lacks records */
	bool reserve;			/* the file system supports the reserve */
	int level;
	ZSTD_CCtx *cctx;
	uint8_t *raw;			/* records of the open chunk */
	size_t raw_len, raw_cap;
	uint32_t nr_records;
	uint32_t chunk_per_type[XPU_REC_MAX];	/* records of the open chunk per type */
	uint64_t chunk_min_time, chunk_max_time;	/* ... and their times */
	struct xpu_delta_enc *delta;	/* STACK_DELTA coding, when on */
	struct xpu_prune *prune;	/* told each record, when set */
	size_t dec_len, dec_cap;	/* the open chunk's bytes once rebuilt, and their limit */
	uint8_t *out;			/* chunk header + compressed payload */
	size_t out_cap;
	int cctx_level;			/* the level cctx is set to */
	struct xpu_writer_stats st;
	/* background compression (opts->background): full chunks queue here,
	 * the thread compresses and writes them in order */
	bool bg;
	pthread_t thread;
	pthread_cond_t cond;		/* the queue changed (with lock) */
	struct wchunk queue[XPU_WRITER_QUEUE];
	int q_head, q_len;		/* q_len counts the one being written */
	struct wchunk spare[XPU_WRITER_QUEUE];	/* buffers for the next open chunks */
	int nr_spare;
	bool stop;
	uint64_t bg_failed;		/* chunks the thread could not write */
	int bg_last_err;
	uint64_t features;		/* the file header's, as last set */
	/* xpu_writer_opts.tap and .sink */
	bool (*tap)(void *ctx, uint16_t type, uint16_t flags, const struct iovec *iov, int n);
	void *tap_ctx;
	int (*sink)(void *ctx, const void *chunk, size_t len, const struct xpu_writer_chunk *info);
	void *sink_ctx;
};

/* Writes all of buf at off, or fails: a short write is an error (-ENOSPC when
 * the kernel said nothing more). */
static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -ENOSPC;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The errors of a full disk (or quota, or file size limit), as opposed to a
 * file system without fallocate. */
static bool writer__no_space(int err)
{
	return err == ENOSPC || err == EDQUOT || err == EFBIG;
}

static void *writer__thread(void *arg);

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* fd < 0: a sink writer (no file, no header). */
static struct xpu_writer *writer__new(int fd, const struct xpu_writer_opts *opts)
{
	struct xpu_file_header fh = { .magic = XPU_FILE_MAGIC };
	struct xpu_writer *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->fd = fd;
	w->raw_cap = opts && opts->chunk_size ? opts->chunk_size : XPU_DEFAULT_CHUNK;
	if (w->raw_cap > XPU_CHUNK_MAX_RAW / 2)
		w->raw_cap = XPU_CHUNK_MAX_RAW / 2;
	w->level = opts && opts->zstd_level ? opts->zstd_level : XPU_DEFAULT_LEVEL;
	/* A coded chunk is rebuilt in the reader's memory: keep that bounded
	 * too (a few times the coded size, far below the format's limit). */
	w->dec_cap = 4 * w->raw_cap < XPU_CHUNK_MAX_RAW ? 4 * w->raw_cap : XPU_CHUNK_MAX_RAW;
	w->prune = opts ? opts->prune : NULL;
	if (opts) {
		w->tap = opts->tap;
		w->tap_ctx = opts->tap_ctx;
		w->sink = opts->sink;
		w->sink_ctx = opts->sink_ctx;
	}
	if (opts && opts->stack_delta && !(w->delta = xpu_delta_enc__new())) {
		err = ENOMEM;
		goto out_free;
	}
	w->raw = malloc(w->raw_cap);
	/* Sized for the chunk, not the format's limit: grown with raw. */
	w->out_cap = sizeof(struct xpu_chunk_header) + ZSTD_compressBound(w->raw_cap);
	w->out = malloc(w->out_cap);
	w->cctx = w->level > 0 ? ZSTD_createCCtx() : NULL;
	if (!w->raw || !w->out || (w->level > 0 && !w->cctx)) {
		err = ENOMEM;
		goto out_free;
	}
	if (w->cctx) {
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
		w->cctx_level = w->level;
	}

	fh.major = XPU_VERSION_MAJOR;
	fh.minor = XPU_VERSION_MINOR;
	fh.header_size = sizeof(fh);
	fh.features = w->features = opts ? opts->features : 0;
	fh.realtime_ns = clock_ns(CLOCK_REALTIME);
	fh.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	if (fd >= 0) {
		err = -pwrite_all(fd, &fh, sizeof(fh), 0);
		if (err)
			goto out_free;
		w->st.file_bytes = sizeof(fh);
		/* Best effort: without it (no space, or a file system without
		 * fallocate) the last chunk is written like any other. */
		w->reserve = !fallocate(fd, FALLOC_FL_KEEP_SIZE, sizeof(fh), XPU_WRITER_RESERVE) ||
			     writer__no_space(errno);
	}
	/* Background compression: a buffer per queue place; without them or
	 * the thread, the caller compresses as before. */
	if (opts && opts->background) {
		for (; w->nr_spare < XPU_WRITER_QUEUE; w->nr_spare++) {
			struct wchunk *sp = &w->spare[w->nr_spare];

			if (!(sp->raw = malloc(w->raw_cap)))
				break;
			sp->cap = w->raw_cap;
		}
		w->bg = w->nr_spare == XPU_WRITER_QUEUE &&
			!pthread_create(&w->thread, NULL, writer__thread, w);
	}
	return w;

out_free:
	xpu_delta_enc__free(w->delta);
	ZSTD_freeCCtx(w->cctx);
	free(w->raw);
	free(w->out);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	errno = err;
	return NULL;
}

struct xpu_writer *xpu_writer__fdopen(int fd, const struct xpu_writer_opts *opts)
{
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	return writer__new(fd, opts);
}

struct xpu_writer *xpu_writer__sink_open(const struct xpu_writer_opts *opts)
{
	if (!opts || !opts->sink) {
		errno = EINVAL;
		return NULL;
	}
	return writer__new(-1, opts);
}

struct xpu_writer *xpu_writer__open(const char *path, const struct xpu_writer_opts *opts)
{
	struct xpu_writer *w;
	struct stat st;
	int fd, err;

	/* Never through a symbolic link, never into a device or a FIFO:
	 * refused before open(), which has side effects on devices. An
	 * existing regular file is replaced, not truncated: its inode (other
	 * links to it, its owner and mode) is left as it was. */
	if (!lstat(path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			errno = S_ISLNK(st.st_mode) ? ELOOP : EINVAL;
			return NULL;
		}
		if (unlink(path) && errno != ENOENT)
			return NULL;
	}
	/* O_EXCL: a name that came back meanwhile (a link) fails EEXIST. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	fchmod(fd, 0600);	/* our own new file: 0600 whatever the umask */
	w = xpu_writer__fdopen(fd, opts);
	if (w)
		return w;
	err = errno;
	close(fd);
	unlink(path);
	errno = err;
	return NULL;
}

/* Moves a chunk's records from the written counts to the dropped ones. */
static void writer__drop_chunk(struct xpu_writer *w, const struct wchunk *c)
{
	for (int t = 0; t < XPU_REC_MAX; t++) {
		w->st.per_type[t] -= c->per_type[t];
		w->st.dropped_per_type[t] += c->per_type[t];
	}
	w->st.records -= c->nr_records;
	w->st.raw_bytes -= c->len;
	w->st.dropped += c->nr_records;
}

/*
 * Appends len bytes of buf as the next chunk, whole or not at all. The
 * space is allocated first, with the reserve behind it, so a full disk fails
 * there and writes nothing; the last chunk (final) may use the reserve. A
 * write that fails anyway is cut off again: the file always ends on a chunk
 * boundary. A sink writer hands the chunk to its sink instead.
 */
static int writer__append(struct xpu_writer *w, const void *buf, size_t len, bool final,
			  const struct wchunk *c)
{
	off_t off = w->st.file_bytes;
	int err;

	if (w->sink) {
		struct xpu_writer_chunk info = { .nr_records = c->nr_records, .raw_len = c->len,
						 .min_time = c->min_time, .max_time = c->max_time };

		memcpy(info.per_type, c->per_type, sizeof(info.per_type));
		return w->sink(w->sink_ctx, buf, len, &info);
	}

	if (w->reserve && !final &&
	    fallocate(w->fd, FALLOC_FL_KEEP_SIZE, off, len + XPU_WRITER_RESERVE)) {
		if (writer__no_space(errno))
			return -errno;
		w->reserve = false;	/* not supported here: plain writes */
	}
	err = pwrite_all(w->fd, buf, len, off);
	if (err)
		(void)!ftruncate(w->fd, off);	/* else the next chunk or close() cuts it */
	return err;
}

/*
 * Compresses c and appends it as the next chunk; returns the bytes written
 * (0 on error, *errp set). Uses w->cctx, w->out and w->st.file_bytes: only
 * ever one caller at a time (the compressing thread, or with it stopped or
 * absent, the caller holding the lock). Touches no other shared state.
 */
static size_t writer__write_chunk(struct xpu_writer *w, const struct wchunk *c, bool final,
				  int *errp)
{
	struct xpu_chunk_header ch = {
		.magic = XPU_CHUNK_MAGIC,
		.header_size = sizeof(ch),
		.raw_size = c->len,
		.nr_records = c->nr_records,
	};
	size_t need = sizeof(ch) + ZSTD_compressBound(c->len), comp;
	uint8_t *payload;

	if (need > w->out_cap) {
		uint8_t *o = realloc(w->out, need);

		if (!o) {
			*errp = -ENOMEM;
			return 0;
		}
		w->out = o;
		w->out_cap = need;
	}
	payload = w->out + sizeof(ch);
	if (w->cctx && c->level != w->cctx_level) {
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, c->level);
		w->cctx_level = c->level;
	}
	if (w->cctx) {
		comp = ZSTD_compress2(w->cctx, payload, w->out_cap - sizeof(ch), c->raw, c->len);
		if (ZSTD_isError(comp) || comp >= c->len) {
			/* Incompressible (or zstd failed): store raw, still checked. */
			comp = 0;
		} else {
			ch.flags |= XPU_CHUNK_ZSTD;
		}
	} else {
		comp = 0;
	}
	if (!(ch.flags & XPU_CHUNK_ZSTD)) {
		memcpy(payload, c->raw, c->len);
		comp = c->len;
	}
	ch.comp_size = comp;
	ch.payload_crc = crc32(0, payload, comp);
	ch.header_crc = crc32(0, (const Bytef *)&ch, offsetof(struct xpu_chunk_header, header_crc));
	memcpy(w->out, &ch, sizeof(ch));

	/* One write per chunk: a crash leaves at most one partial chunk. */
	*errp = writer__append(w, w->out, sizeof(ch) + comp, final, c);
	return *errp ? 0 : sizeof(ch) + comp;
}

/* After a chunk's write, with the lock: its stats. */
static void writer__chunk_done(struct xpu_writer *w, const struct wchunk *c, size_t bytes,
			       int err)
{
	if (err) {
		/* The records are dropped and counted; later chunks are
		 * tried again (space may come back). */
		if (!w->err)
			w->err = err;
		w->st.chunks_dropped++;
		writer__drop_chunk(w, c);
	} else {
		w->st.chunks++;
		w->st.file_bytes += bytes;
	}
}

/* The open chunk, as a wchunk (its buffer stays the open chunk's). */
static struct wchunk writer__open_chunk(const struct xpu_writer *w)
{
	struct wchunk c = { .raw = w->raw, .len = w->raw_len, .cap = w->raw_cap,
			    .nr_records = w->nr_records, .level = w->level,
			    .min_time = w->chunk_min_time, .max_time = w->chunk_max_time };

	memcpy(c.per_type, w->chunk_per_type, sizeof(c.per_type));
	return c;
}

/* An empty open chunk. */
static void writer__reset_open(struct xpu_writer *w)
{
	w->raw_len = 0;
	w->dec_len = 0;
	w->nr_records = 0;
	memset(w->chunk_per_type, 0, sizeof(w->chunk_per_type));
	w->chunk_min_time = w->chunk_max_time = 0;
	if (w->delta)	/* references never cross a chunk */
		xpu_delta_enc__reset(w->delta);
}

/* Compresses and writes the open chunk in the caller's thread. */
static int writer__flush_locked(struct xpu_writer *w, bool final)
{
	struct wchunk c = writer__open_chunk(w);
	size_t bytes;
	int err;

	if (!w->raw_len)
		return 0;
	bytes = writer__write_chunk(w, &c, final, &err);
	writer__chunk_done(w, &c, bytes, err);
	writer__reset_open(w);
	return err;
}

/*
 * Background mode: queues the open chunk for the compressing thread and
 * opens the next one in a spare buffer. Waits (counted) only when
 * XPU_WRITER_QUEUE chunks are still waiting: the reader of the rings then
 * is faster than compression on average, not only in a burst.
 */
static void writer__handoff_locked(struct xpu_writer *w)
{
	struct wchunk *q, sp;

	if (!w->raw_len)
		return;
	if (w->q_len == XPU_WRITER_QUEUE) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		while (w->q_len == XPU_WRITER_QUEUE)
			pthread_cond_wait(&w->cond, &w->lock);
		w->st.bg_waits++;
		w->st.bg_wait_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	q = &w->queue[(w->q_head + w->q_len) % XPU_WRITER_QUEUE];
	*q = writer__open_chunk(w);
	w->q_len++;
	w->st.bg_chunks++;
	sp = w->spare[--w->nr_spare];	/* one per queue place, and the open chunk's */
	if (sp.cap < w->raw_cap) {	/* the open chunk grew for a big record */
		uint8_t *n = realloc(sp.raw, w->raw_cap);

		if (n) {
			sp.raw = n;
			sp.cap = w->raw_cap;
		}
	}
	w->raw = sp.raw;
	w->raw_cap = sp.cap;
	writer__reset_open(w);
	pthread_cond_broadcast(&w->cond);
}

static void *writer__thread(void *arg)
{
	struct xpu_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct wchunk c;
		size_t bytes;
		int err;

		while (!w->q_len && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->q_len)
			break;
		c = w->queue[w->q_head];
		pthread_mutex_unlock(&w->lock);
		bytes = writer__write_chunk(w, &c, false, &err);
		pthread_mutex_lock(&w->lock);
		writer__chunk_done(w, &c, bytes, err);
		if (err) {
			w->bg_failed++;
			w->bg_last_err = err;
		}
		w->spare[w->nr_spare++] = (struct wchunk){ .raw = c.raw, .cap = c.cap };
		w->q_head = (w->q_head + 1) % XPU_WRITER_QUEUE;
		w->q_len--;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Background mode: every queued chunk written. Returns the last error of
 * the chunks written meanwhile, or 0. */
static int writer__wait_queue_locked(struct xpu_writer *w)
{
	uint64_t failed = w->bg_failed;

	while (w->q_len)
		pthread_cond_wait(&w->cond, &w->lock);
	return w->bg_failed != failed ? w->bg_last_err : 0;
}

/* Stops the thread once the queue is written; then writes go through the
 * caller again. */
static void writer__stop_thread(struct xpu_writer *w)
{
	if (!w->bg)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->bg = false;
}

int xpu_writer__flush(struct xpu_writer *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	if (w->bg) {
		writer__handoff_locked(w);
		err = writer__wait_queue_locked(w);
	} else {
		err = writer__flush_locked(w, false);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

/* Ends the open chunk: queued for the thread, or written here. A write
 * error drops the chunk (counted). */
static void writer__end_chunk_locked(struct xpu_writer *w)
{
	if (w->bg)
		writer__handoff_locked(w);
	else
		writer__flush_locked(w, false);
}

void xpu_writer__handoff(struct xpu_writer *w)
{
	pthread_mutex_lock(&w->lock);
	writer__end_chunk_locked(w);
	pthread_mutex_unlock(&w->lock);
}

/* Makes room for len more raw bytes; grows the chunk for one oversized record. */
static int writer__room(struct xpu_writer *w, size_t len)
{
	if (w->raw_len + len <= w->raw_cap && w->dec_len + len <= w->dec_cap)
		return 0;
	writer__end_chunk_locked(w);
	if (len > XPU_CHUNK_MAX_RAW)
		return -E2BIG;
	if (len > w->raw_cap) {		/* the output buffer grows where it is used */
		uint8_t *n = realloc(w->raw, len);

		if (!n)
			return -ENOMEM;
		w->raw = n;
		w->raw_cap = len;
	}
	return 0;
}

/* The time range of a chunk's records (xpu_writer_chunk.min_time). */
static void writer__note_time(uint64_t *lo, uint64_t *hi, uint16_t type, const struct iovec *iov,
			      int n)
{
	uint64_t t;

	if (!n || !xpu_rectype__done_time(type, iov[0].iov_base, iov[0].iov_len, &t))
		return;
	if (!*lo || t < *lo)
		*lo = t;
	if (t > *hi)
		*hi = t;
}

int xpu_writer__addv(struct xpu_writer *w, uint16_t type, uint16_t flags,
		     const struct iovec *iov, int n)
{
	size_t size = xpu_record__encoded_size(iov, n), coded = 0;
	int err;

	if (!size)
		return -E2BIG;

	if (w->tap && w->tap(w->tap_ctx, type, flags, iov, n))
		return 0;
	if (w->prune && n)
		xpu_prune__notev(w->prune, type, iov, n);
	pthread_mutex_lock(&w->lock);
	err = writer__room(w, size);
	if (err)
		goto out;
	/* A stack record goes in coded against its thread's previous one when
	 * that is smaller (it then takes fewer than size bytes). */
	if (!w->delta || n != 1 ||
	    !(coded = xpu_delta__encode(w->delta, w->nr_records, type, flags, iov[0].iov_base,
					iov[0].iov_len, w->raw + w->raw_len, size)))
		xpu_record__encode(w->raw + w->raw_len, size, type, flags, iov, n);
	w->raw_len += coded ? coded : size;
	w->dec_len += size;
	w->nr_records++;
	w->st.records++;
	w->st.raw_bytes += coded ? coded : size;
	if (type < XPU_REC_MAX) {
		w->st.per_type[type]++;
		w->chunk_per_type[type]++;
	}
	writer__note_time(&w->chunk_min_time, &w->chunk_max_time, type, iov, n);
out:
	pthread_mutex_unlock(&w->lock);
	return err;
}

int xpu_writer__add(struct xpu_writer *w, uint16_t type, const void *body, size_t len)
{
	struct iovec iov = { .iov_base = (void *)body, .iov_len = len };

	return xpu_writer__addv(w, type, 0, &iov, 1);
}

/* Checks a batch of encoded records without writing any. Unknown types are
 * refused: the peer (our CUPTI library) is built from the same tree, so an
 * unknown type means a bug or a hostile peer, not a newer format. */
static int writer__check_encoded(const uint8_t *p, size_t len)
{
	struct xpu_record rec;
	size_t off = 0;
	int ret;

	while ((ret = xpu_batch__next(p, len, &off, &rec)) == 1)
		if ((rec.body_size + sizeof(struct xpu_record_header)) % XPU_RECORD_ALIGN ||
		    !xpu_record__min_size(rec.type) || rec.body_size < xpu_record__min_size(rec.type))
			return -EINVAL;
	return ret;
}

int xpu_writer__add_encoded(struct xpu_writer *w, const void *data, size_t len)
{
	const uint8_t *p = data, *end = p + len;
	int err;

	/* All or nothing: a bad record late in a batch adds none of it. */
	err = writer__check_encoded(p, len);
	if (err)
		return err;
	while (p < end) {
		struct xpu_record_header rh;
		struct iovec iov;

		memcpy(&rh, p, sizeof(rh));
		iov.iov_base = (void *)(p + sizeof(rh));
		iov.iov_len = rh.size - sizeof(rh);
		err = xpu_writer__addv(w, rh.type, rh.flags, &iov, 1);
		if (err)
			return err;
		p += rh.size;
	}
	return 0;
}

int xpu_writer__set_features(struct xpu_writer *w, uint64_t features)
{
	w->features = features;
	if (w->fd < 0)
		return 0;
	return pwrite_all(w->fd, &features, sizeof(features),
			  offsetof(struct xpu_file_header, features));
}

uint64_t xpu_writer__features(struct xpu_writer *w)
{
	return w->features;
}

int xpu_writer__append_chunk(struct xpu_writer *w, const void *chunk, size_t len,
			     const struct xpu_writer_chunk *info)
{
	struct wchunk c = { .nr_records = info->nr_records, .len = info->raw_len };
	int err;

	memcpy(c.per_type, info->per_type, sizeof(c.per_type));
	pthread_mutex_lock(&w->lock);
	if (w->bg) {
		writer__handoff_locked(w);
		writer__wait_queue_locked(w);
	} else {
		writer__flush_locked(w, false);
	}
	for (int t = 0; t < XPU_REC_MAX; t++)
		w->st.per_type[t] += c.per_type[t];
	w->st.records += c.nr_records;
	w->st.raw_bytes += c.len;
	err = writer__append(w, chunk, len, false, &c);
	writer__chunk_done(w, &c, err ? 0 : len, err);
	pthread_mutex_unlock(&w->lock);
	return err;
}

int xpu_writer__meta(struct xpu_writer *w, const char *key, const char *value)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)key, .iov_len = strlen(key) + 1 },
		{ .iov_base = (void *)value, .iov_len = strlen(value) + 1 },
	};

	return xpu_writer__addv(w, XPU_REC_META, 0, iov, 2);
}

void xpu_writer__stats(struct xpu_writer *w, struct xpu_writer_stats *st)
{
	pthread_mutex_lock(&w->lock);
	*st = w->st;
	pthread_mutex_unlock(&w->lock);
}

int xpu_writer__close_stats(struct xpu_writer *w, struct xpu_writer_stats *st)
{
	int err;

	/* the queued chunks first, then the open one as the last */
	writer__stop_thread(w);
	pthread_mutex_lock(&w->lock);
	writer__flush_locked(w, true);
	pthread_mutex_unlock(&w->lock);
	if (st)
		*st = w->st;
	err = w->err;
	/* Gives the reserve back (a same-size truncate frees the blocks past
	 * the end) and cuts a partial chunk that could not be cut before. */
	if (w->fd >= 0) {
		if ((w->reserve || err) && ftruncate(w->fd, w->st.file_bytes) && !err)
			err = -errno;
		if (fsync(w->fd) && errno != EINVAL && !err)
			err = -errno;
		if (close(w->fd) && !err)
			err = -errno;
	}
	xpu_delta_enc__free(w->delta);
	ZSTD_freeCCtx(w->cctx);
	free(w->raw);
	free(w->out);
	for (int i = 0; i < w->nr_spare; i++)
		free(w->spare[i].raw);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return err;
}

int xpu_writer__close(struct xpu_writer *w)
{
	return xpu_writer__close_stats(w, NULL);
}

void xpu_writer__plain(struct xpu_writer *w)
{
	pthread_mutex_lock(&w->lock);
	/* records already coded name references in this chunk: still there */
	xpu_delta_enc__free(w->delta);
	w->delta = NULL;
	if (w->cctx && w->level > 3)
		w->level = 3;	/* from the next chunk on (writer__write_chunk) */
	pthread_mutex_unlock(&w->lock);
}
