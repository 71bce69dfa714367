// SPDX-License-Identifier: MIT
/* Reading xpu.data.archive: the entry index, lookups and checked extraction. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "common/knobs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/files/archive.h"
#include "report/files/path.h"

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, v >> 32); }
static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static uint32_t archive__crc(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {	/* zlib takes uInt lengths */
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
}

void archive__encode_file_header(uint8_t *out)
{
	memcpy(out, ARCHIVE_MAGIC, 8);
	put16(out + 8, ARCHIVE_MAJOR);
	put16(out + 10, ARCHIVE_MINOR);
	put32(out + 12, archive__crc(0, out, 12));
}

void archive__encode_entry(uint8_t *out, const struct archive_entry *e, const char *path)
{
	size_t path_len = strlen(path) + 1;
	uint32_t crc;

	memset(out, 0, ARCHIVE_ENTRY_HDR_SIZE);
	put32(out + 0, ARCHIVE_ENTRY_MAGIC);
	out[4] = e->kind;
	out[5] = e->build_id_size;
	put16(out + 6, (uint16_t)path_len);
	memcpy(out + 8, e->build_id, e->build_id_size);
	/* 28..31 flags: reserved, zero */
	put64(out + 32, e->file_size);
	put64(out + 40, e->data_size);
	put32(out + 48, e->data_crc);
	put32(out + 52, e->file_crc);
	/* 56..59 reserved, zero */
	crc = archive__crc(0, out, 60);
	crc = archive__crc(crc, path, path_len);
	put32(out + 60, crc);
}

static int archive__read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		done += (size_t)n;
	}
	return 0;
}

/* Reads the entry headers one after the other until the end entry or the
 * first damage. Only sizes from a header whose CRC holds are trusted. */
static void archive__scan(struct archive *a, uint64_t file_size)
{
	uint64_t off = ARCHIVE_FILE_HDR_SIZE;
	uint8_t h[ARCHIVE_ENTRY_HDR_SIZE];
	char path[ARCHIVE_PATH_MAX];
	uint64_t scanned = 0;		/* entries of every kind, for the end entry */

	for (;;) {
		struct archive_entry e = { 0 };
		size_t path_len;
		uint32_t crc;

		if (off == file_size) {
			snprintf(a->damage, sizeof(a->damage),
				 "truncated after %zu entries (no end entry)", a->nr);
			return;
		}
		if (file_size - off < ARCHIVE_ENTRY_HDR_SIZE ||
		    archive__read_at(a->fd, h, sizeof(h), off)) {
			snprintf(a->damage, sizeof(a->damage),
				 "truncated inside the entry header at offset %llu",
				 (unsigned long long)off);
			return;
		}
		path_len = get16(h + 6);
		if (get32(h) != ARCHIVE_ENTRY_MAGIC || h[5] > XPU_MMAP_BUILD_ID_MAX ||
		    path_len == 0 || path_len > ARCHIVE_PATH_MAX ||
		    file_size - off - sizeof(h) < path_len ||
		    archive__read_at(a->fd, path, path_len, off + sizeof(h)) ||
		    path[path_len - 1] != '\0' || strlen(path) + 1 != path_len) {
			snprintf(a->damage, sizeof(a->damage), "bad entry header at offset %llu",
				 (unsigned long long)off);
			return;
		}
		crc = archive__crc(archive__crc(0, h, 60), path, path_len);
		if (crc != get32(h + 60)) {
			snprintf(a->damage, sizeof(a->damage),
				 "entry header checksum mismatch at offset %llu",
				 (unsigned long long)off);
			return;
		}
		e.kind = h[4];
		e.build_id_size = h[5];
		memcpy(e.build_id, h + 8, e.build_id_size);
		e.file_size = get64(h + 32);
		e.data_size = get64(h + 40);
		e.data_crc = get32(h + 48);
		e.file_crc = get32(h + 52);
		off += sizeof(h) + path_len;
		e.data_off = off;
		if (e.kind == ARCHIVE_KIND_END) {
			if (e.file_size != scanned || e.data_size)
				snprintf(a->damage, sizeof(a->damage),
					 "end entry counts %llu entries, %llu found",
					 (unsigned long long)e.file_size,
					 (unsigned long long)scanned);
			else
				a->complete = true;
			return;
		}
		if (e.data_size > file_size - off) {
			snprintf(a->damage, sizeof(a->damage),
				 "truncated inside the data of %s", path);
			return;
		}
		off += e.data_size;
		scanned++;
		if (e.kind != ARCHIVE_KIND_ELF && e.kind != ARCHIVE_KIND_DEBUG)
			continue;	/* a later kind: skip it */
		e.path = xstrdup(path);
		a->entries = xgrow(a->entries, &a->cap, a->nr + 1, sizeof(*a->entries));
		a->entries[a->nr++] = e;
	}
}

int archive__open(struct archive **out, const char *path)
{
	struct archive *a;
	uint8_t h[ARCHIVE_FILE_HDR_SIZE];
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = path__open(path, 0, NULL);		/* -EPERM: a FIFO, a directory, ... */
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	if (st.st_size < (off_t)sizeof(h) || archive__read_at(fd, h, sizeof(h), 0) ||
	    memcmp(h, ARCHIVE_MAGIC, 8) || archive__crc(0, h, 12) != get32(h + 12)) {
		err = -EBADMSG;
		goto out_close;
	}
	if (get16(h + 8) != ARCHIVE_MAJOR) {
		err = -EPROTONOSUPPORT;
		goto out_close;
	}
	a = xzalloc(sizeof(*a));
	a->path = xstrdup(path);
	a->fd = fd;
	a->size = (uint64_t)st.st_size;
	archive__scan(a, (uint64_t)st.st_size);
	*out = a;
	return 0;

out_close:
	close(fd);
	return err;
}

/* ---- extracted files on exit paths --------------------------------------------
 * Extracted files live until archive__close() (at exit for the report's
 * archive). A signal that kills the report (Ctrl-C, kill, a closed pipe:
 * `xpu-report --folded | head`) would leave them, and the file being written,
 * in TMPDIR: once an archive has its directory, these signals first remove
 * the files of every archive that has one, then take their previous action. */
static struct archive *archive__live;		/* archives with a directory */
static const char *volatile archive__partial;	/* the file being extracted */
static const int archive__sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
static struct sigaction archive__old_sa[sizeof(archive__sigs) / sizeof(archive__sigs[0])];

static void archive__signal(int sig)
{
	int saved = errno;

	if (archive__partial)
		unlink(archive__partial);
	for (struct archive *a = archive__live; a; a = a->next_live) {
		for (size_t i = 0; i < a->nr; i++)
			if (a->entries[i].extracted)
				unlink(a->entries[i].extracted);
		rmdir(a->dir);
	}
	for (size_t i = 0; i < sizeof(archive__sigs) / sizeof(archive__sigs[0]); i++)
		if (archive__sigs[i] == sig)
			sigaction(sig, &archive__old_sa[i], NULL);
	errno = saved;
	raise(sig);	/* blocked until this handler returns: then the old action */
}

/* Once, for each of the signals not ignored (an ignored one stays ignored;
 * a handler set before, libFuzzer's say, is called after ours). A handler
 * set after (the TUI's, tui__signals()) replaces ours. */
static void archive__signals(void)
{
	static bool done;
	struct sigaction sa;

	if (done)
		return;
	done = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = archive__signal;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(archive__sigs) / sizeof(archive__sigs[0]); i++) {
		if (sigaction(archive__sigs[i], NULL, &archive__old_sa[i]) ||
		    archive__old_sa[i].sa_handler == SIG_IGN)
			continue;
		sigaction(archive__sigs[i], &sa, NULL);
	}
}

static void archive__unlive(struct archive *a)
{
	for (struct archive **p = &archive__live; *p; p = &(*p)->next_live) {
		if (*p == a) {
			*p = a->next_live;
			return;
		}
	}
}

void archive__close(struct archive *a)
{
	if (!a)
		return;
	archive__unlive(a);
	for (size_t i = 0; i < a->nr; i++) {
		if (a->entries[i].extracted)
			unlink(a->entries[i].extracted);
		free(a->entries[i].extracted);
		free(a->entries[i].path);
	}
	if (a->dir)
		rmdir(a->dir);
	free(a->dir);
	free(a->entries);
	free(a->path);
	close(a->fd);
	free(a);
}

struct archive_entry *archive__lookup(struct archive *a, enum archive_kind kind,
				      const uint8_t *build_id, size_t build_id_size, const char *path)
{
	for (size_t i = 0; i < a->nr; i++) {
		struct archive_entry *e = &a->entries[i];

		if (e->kind != kind)
			continue;
		if (build_id_size ? e->build_id_size == build_id_size &&
				    !memcmp(e->build_id, build_id, build_id_size)
				  : !strcmp(e->path, path))
			return e;
	}
	return NULL;
}

static int archive__mkdir(struct archive *a)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (a->dir)
		return 0;
	dir = xasprintf("%s/xpu-report.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		int err = -errno;

		warn("cannot create a directory for %s's files (%s): %s; set TMPDIR",
		     a->path, dir, strerror(-err));
		free(dir);
		return err;
	}
	a->dir = dir;
	archive__signals();
	a->next_live = archive__live;
	archive__live = a;
	return 0;
}

/* "98.3 KB", "12.3 MB", "17.2 GB" */
static const char *archive__mb(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 1000000)
		snprintf(buf, len, "%.1f KB", bytes / 1e3);
	else if (bytes < 1000000000)
		snprintf(buf, len, "%.1f MB", bytes / 1e6);
	else
		snprintf(buf, len, "%.1f GB", bytes / 1e9);
	return buf;
}

/* The most an entry may state: ARCHIVE_MAX_RATIO times the archive's own
 * size, and ARCHIVE_MAX_SIZE; both overridden by the environment (knobs.h). */
static uint64_t archive__limit(struct archive *a, uint64_t *ratio, uint64_t *max)
{
	if (!a->limits_read) {		/* once: a bad value is warned about once */
		a->max_ratio = (uint64_t)knob__int(KNOB_ARCHIVE_MAX_RATIO);
		a->max_size = knob__size(KNOB_ARCHIVE_MAX_SIZE);
		a->limits_read = true;
	}
	*ratio = a->max_ratio;
	*max = a->max_size;
	if (*ratio && a->size > UINT64_MAX / *ratio)
		return *max;
	return a->size * *ratio < *max ? a->size * *ratio : *max;
}

/* Refuses, with one warning, an entry whose stated size is past the limits
 * or would not fit in the extraction directory with ARCHIVE_FREE_MARGIN to
 * spare: before a byte is written. */
static int archive__check_room(struct archive *a, const struct archive_entry *e)
{
	uint64_t ratio, max, limit = archive__limit(a, &ratio, &max), avail;
	struct statvfs sv;
	char b1[32], b2[32], b3[32];

	if (e->file_size > limit) {
		warn("%s: the copy of %s states %s uncompressed, past the limit of %s (%llu "
		     "times the archive's size, at most %s): not extracted; raise "
		     "XPU_ARCHIVE_MAX_RATIO or XPU_ARCHIVE_MAX_SIZE for an archive you trust",
		     a->path, e->path, archive__mb(e->file_size, b1, sizeof(b1)),
		     archive__mb(limit, b2, sizeof(b2)), (unsigned long long)ratio,
		     archive__mb(max, b3, sizeof(b3)));
		return -EFBIG;
	}
	if (statvfs(a->dir, &sv))
		return 0;	/* cannot tell: a full disk still fails the write */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < ARCHIVE_FREE_MARGIN || e->file_size > avail - ARCHIVE_FREE_MARGIN) {
		warn("%s: the copy of %s needs %s and %s has %s free (%s kept free): not "
		     "extracted; set TMPDIR to a directory with more room", a->path, e->path,
		     archive__mb(e->file_size, b1, sizeof(b1)), a->dir,
		     archive__mb(avail, b2, sizeof(b2)),
		     archive__mb(ARCHIVE_FREE_MARGIN, b3, sizeof(b3)));
		return -ENOSPC;
	}
	return 0;
}

/* Streams the zstd frame at e->data_off into fd, checking sizes and CRCs. */
static int archive__decompress(struct archive *a, const struct archive_entry *e, int fd)
{
	size_t in_cap = ZSTD_DStreamInSize(), out_cap = ZSTD_DStreamOutSize();
	uint8_t *in = xmalloc(in_cap), *outb = xmalloc(out_cap);
	ZSTD_DCtx *z = ZSTD_createDCtx();
	uint64_t pos = 0, written = 0;
	uint32_t data_crc = 0, file_crc = 0;
	size_t ret = 1;
	int err = 0;

	if (!z) {
		err = -ENOMEM;
		goto out;
	}
	while (pos < e->data_size) {
		size_t n = e->data_size - pos < in_cap ? (size_t)(e->data_size - pos) : in_cap;
		ZSTD_inBuffer ib = { in, n, 0 };

		err = archive__read_at(a->fd, in, n, e->data_off + pos);
		if (err)
			goto out;
		data_crc = archive__crc(data_crc, in, n);
		pos += n;
		while (ib.pos < ib.size) {
			ZSTD_outBuffer ob = { outb, out_cap, 0 };

			ret = ZSTD_decompressStream(z, &ob, &ib);
			if (ZSTD_isError(ret) || written + ob.pos > e->file_size) {
				err = -EBADMSG;
				goto out;
			}
			if (ob.pos && write(fd, outb, ob.pos) != (ssize_t)ob.pos) {
				err = errno ? -errno : -EIO;
				goto out;
			}
			file_crc = archive__crc(file_crc, outb, ob.pos);
			written += ob.pos;
		}
	}
	/* flush what zstd still holds */
	for (;;) {
		ZSTD_inBuffer ib = { in, 0, 0 };
		ZSTD_outBuffer ob = { outb, out_cap, 0 };

		if (!ret)
			break;
		ret = ZSTD_decompressStream(z, &ob, &ib);
		if (ZSTD_isError(ret) || written + ob.pos > e->file_size) {
			err = -EBADMSG;
			goto out;
		}
		if (!ob.pos)
			break;
		if (write(fd, outb, ob.pos) != (ssize_t)ob.pos) {
			err = errno ? -errno : -EIO;
			goto out;
		}
		file_crc = archive__crc(file_crc, outb, ob.pos);
		written += ob.pos;
	}
	if (ret || data_crc != e->data_crc || written != e->file_size || file_crc != e->file_crc)
		err = -EBADMSG;
out:
	ZSTD_freeDCtx(z);
	free(in);
	free(outb);
	return err;
}

int archive__extract(struct archive *a, struct archive_entry *e)
{
	char *file;
	int fd, err;

	if (e->extracted)
		return 0;
	if (e->bad)
		return -EBADMSG;
	err = archive__mkdir(a);
	if (err)
		return err;
	err = archive__check_room(a, e);
	if (err) {
		e->bad = true;
		return err;
	}
	file = xasprintf("%s/%zu-%s", a->dir, (size_t)(e - a->entries),
			 strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	archive__partial = file;
	err = archive__decompress(a, e, fd);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		unlink(file);
		archive__partial = NULL;
		goto out_free;
	}
	e->extracted = file;
	archive__partial = NULL;
	return 0;

out_free:
	e->bad = true;
	if (err == -EBADMSG)
		warn("%s: the copy of %s is damaged (checksum or size mismatch): not used",
		     a->path, e->path);
	else
		warn("%s: cannot extract %s to %s: %s", a->path, e->path, file, strerror(-err));
	free(file);
	return err;
}

