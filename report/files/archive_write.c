// SPDX-License-Identifier: MIT
/* Writing xpu.data.archive: streamed zstd entries, headers patched after. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "report/files/archive.h"
#include "common/xalloc.h"

struct archive_writer {
	char *path, *tmp;
	int fd;
	uint64_t off;			/* end of what was written */
	uint64_t nr;			/* entries */
	ZSTD_CCtx *z;
	uint8_t *in, *outb;
	size_t in_cap, out_cap;
};

static int archive_writer__pwrite(struct archive_writer *w, const void *buf, size_t len,
				  uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(w->fd, (const char *)buf + done, len - done,
				   (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int archive_writer__open(struct archive_writer **out, const char *path, int level)
{
	struct archive_writer *w = xzalloc(sizeof(*w));
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	uint8_t h[ARCHIVE_FILE_HDR_SIZE];
	long ncpu;
	int err;

	w->path = xstrdup(path);
	/* A hidden name of our own beside OUT (the rename stays in one file
	 * system): mkostemp() creates it with O_CREAT | O_EXCL, mode 0600, so
	 * nothing anyone left there (a link, a file) is followed, truncated or
	 * stands in the way, and a name picked in advance cannot be planted. */
	w->tmp = xasprintf("%.*s.%s.XXXXXX", dirlen, path, path + dirlen);
	w->fd = mkostemp(w->tmp, O_CLOEXEC);
	if (w->fd < 0) {
		err = -errno;
		goto out_free;
	}
	w->z = ZSTD_createCCtx();
	if (!w->z) {
		err = -ENOMEM;
		goto out_unlink;
	}
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level);
	/* large libraries (CUDA, PyTorch: ~1 GB) compress on every CPU; a libzstd
	 * without threads refuses this and stays single-threaded */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 1)
		ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, ncpu > 8 ? 8 : (int)ncpu);
	w->in_cap = ZSTD_CStreamInSize();
	w->out_cap = ZSTD_CStreamOutSize();
	w->in = xmalloc(w->in_cap);
	w->outb = xmalloc(w->out_cap);
	archive__encode_file_header(h);
	err = archive_writer__pwrite(w, h, sizeof(h), 0);
	if (err)
		goto out_unlink;
	w->off = sizeof(h);
	*out = w;
	return 0;

out_unlink:
	*out = w;
	archive_writer__abort(w);
	*out = NULL;
	return err;
out_free:
	free(w->tmp);
	free(w->path);
	free(w);
	*out = NULL;
	return err;
}

/* Compresses ib (or, with end, finishes the frame), appending at w->off. */
static int archive_writer__compress(struct archive_writer *w, ZSTD_inBuffer *ib, bool end,
				    struct archive_entry *e)
{
	size_t left;

	do {
		ZSTD_outBuffer ob = { w->outb, w->out_cap, 0 };
		int err;

		left = ZSTD_compressStream2(w->z, &ob, ib, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return -EIO;
		err = archive_writer__pwrite(w, w->outb, ob.pos, w->off + e->data_size);
		if (err)
			return err;
		e->data_crc = (uint32_t)crc32(e->data_crc, w->outb, (uInt)ob.pos);
		e->data_size += ob.pos;
	} while (end ? left != 0 : ib->pos < ib->size);
	return 0;
}

int archive_writer__add(struct archive_writer *w, enum archive_kind kind, int fd,
			const char *path, const uint8_t *build_id, size_t build_id_size,
			uint64_t *file_size, uint64_t *data_size)
{
	struct archive_entry e = { .kind = (uint8_t)kind };
	uint8_t h[ARCHIVE_ENTRY_HDR_SIZE];
	size_t path_len = strlen(path) + 1;
	uint64_t start = w->off;
	struct stat st;
	int err = 0;

	if (path_len > ARCHIVE_PATH_MAX)
		return -ENAMETOOLONG;
	if (build_id_size > XPU_MMAP_BUILD_ID_MAX)
		build_id_size = 0;
	e.build_id_size = (uint8_t)build_id_size;
	memcpy(e.build_id, build_id, build_id_size);
	if (fstat(fd, &st))
		return -errno;
	ZSTD_CCtx_reset(w->z, ZSTD_reset_session_only);
	/* the data goes after the header and path, which are written last */
	w->off = start + sizeof(h) + path_len;
	for (;;) {
		ssize_t n = pread(fd, w->in, w->in_cap, (off_t)e.file_size);
		ZSTD_inBuffer ib = { w->in, n > 0 ? (size_t)n : 0, 0 };

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			/* the file changed size since it was checked: not the same file */
			err = e.file_size == (uint64_t)st.st_size ?
			      archive_writer__compress(w, &ib, true, &e) : -ENODATA;
			break;
		}
		e.file_crc = (uint32_t)crc32(e.file_crc, w->in, (uInt)n);
		e.file_size += (uint64_t)n;
		err = archive_writer__compress(w, &ib, false, &e);
		if (err)
			break;
	}
	if (!err) {
		archive__encode_entry(h, &e, path);
		err = archive_writer__pwrite(w, h, sizeof(h), start);
		if (!err)
			err = archive_writer__pwrite(w, path, path_len, start + sizeof(h));
	}
	if (err) {	/* drop the partial entry: the next one overwrites it */
		int terr = 0;

		w->off = start;
		if (ftruncate(w->fd, (off_t)start))
			terr = -errno;
		return terr ? terr : err;
	}
	w->off += e.data_size;
	w->nr++;
	*file_size = e.file_size;
	*data_size = e.data_size;
	return 0;
}

static void archive_writer__free(struct archive_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->z);
	free(w->in);
	free(w->outb);
	free(w->tmp);
	free(w->path);
	free(w);
}

int archive_writer__close(struct archive_writer *w)
{
	struct archive_entry end = { .kind = ARCHIVE_KIND_END, .file_size = w->nr };
	uint8_t h[ARCHIVE_ENTRY_HDR_SIZE];
	int err;

	archive__encode_entry(h, &end, "");
	err = archive_writer__pwrite(w, h, sizeof(h), w->off);
	if (!err)
		err = archive_writer__pwrite(w, "", 1, w->off + sizeof(h));
	if (!err && ftruncate(w->fd, (off_t)(w->off + sizeof(h) + 1)))
		err = -errno;
	if (!err && fsync(w->fd))
		err = -errno;
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	if (!err && rename(w->tmp, w->path))
		err = -errno;
	if (err)
		unlink(w->tmp);
	archive_writer__free(w);
	return err;
}

void archive_writer__abort(struct archive_writer *w)
{
	if (!w)
		return;
	unlink(w->tmp);
	archive_writer__free(w);
}
