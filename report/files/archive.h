/* SPDX-License-Identifier: MIT */
/*
 * xpu.data.archive: the ELF files a trace needs, for reports on another
 * machine. The whole format lives here: constants, the entry codec and the
 * reader (archive.c), the writer (archive_write.c), used by xpu-archive
 * (archive/main.c) and the report's archive finder (find_archive.c). The byte
 * layout is specified in Documentation/design-offline.md; keep both in step.
 *
 *	file header	16 bytes: magic, version, crc
 *	entry		64-byte header, path, data (one zstd frame of the file)
 *	...
 *	end entry	kind ARCHIVE_KIND_END, file_size = number of entries
 *
 * Fixed little-endian. Every entry header carries a CRC over itself and its
 * path, so sizes are trusted only after that check; the data carries a CRC of
 * the compressed bytes and one of the uncompressed file, both checked when an
 * entry is extracted. A damaged or truncated archive keeps the entries before
 * the damage.
 */
#ifndef XPU_REPORT_UTIL_ARCHIVE_H
#define XPU_REPORT_UTIL_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/xpu_format.h"

#define ARCHIVE_MAGIC		"XPUARCH\0"	/* 8 bytes */
#define ARCHIVE_MAJOR		1
#define ARCHIVE_MINOR		0
#define ARCHIVE_FILE_HDR_SIZE	16
#define ARCHIVE_ENTRY_HDR_SIZE	64
#define ARCHIVE_ENTRY_MAGIC	0x31454158u	/* "XAE1" */
#define ARCHIVE_PATH_MAX	4096		/* path_len, NUL included */
#define ARCHIVE_SUFFIX		".archive"

/* What a report extracts (archive__extract()): an entry stating more than
 * ARCHIVE_MAX_RATIO times the size of the whole archive, or more than
 * ARCHIVE_MAX_SIZE, is refused (a decompression bomb: 100 KB of zstd can
 * state and hold 3 GB); XPU_ARCHIVE_MAX_RATIO and XPU_ARCHIVE_MAX_SIZE
 * override them (common/knobs.c, whose defaults test_knobs.c holds to these). So is one that would leave less than ARCHIVE_FREE_MARGIN
 * free in the extraction directory. Documentation/xpu-report.md. */
#define ARCHIVE_MAX_RATIO	1000
#define ARCHIVE_MAX_SIZE	(16ull << 30)
#define ARCHIVE_FREE_MARGIN	(64ull << 20)

enum archive_kind {
	ARCHIVE_KIND_ELF	= 1,	/* an object as mapped (executable, library) */
	ARCHIVE_KIND_DEBUG	= 2,	/* its separate debug file (.build-id/xx/rest.debug) */
	ARCHIVE_KIND_END	= 0xff,	/* last entry: file_size = number of entries before */
};

/* One entry as decoded from the archive (host order). */
struct archive_entry {
	uint8_t kind;
	uint8_t build_id_size;
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	char *path;			/* recorded path of the object */
	uint64_t file_size;		/* uncompressed */
	uint64_t data_off;		/* where the zstd frame starts in the archive */
	uint64_t data_size;
	uint32_t data_crc, file_crc;	/* crc32 (zlib) */
	char *extracted;		/* path of the extracted copy, once extracted */
	bool bad;			/* extraction failed: never tried again */
};

struct archive {
	char *path;
	int fd;
	uint64_t size;			/* of the archive file */
	uint64_t max_ratio, max_size;	/* the limits, read on first extraction */
	bool limits_read;
	struct archive_entry *entries;
	size_t nr, cap;
	bool complete;			/* the end entry was found and agrees */
	char damage[160];		/* why the scan stopped early ("" if it did not) */
	char *dir;			/* private extraction dir (mkdtemp), on first use */
	struct archive *next_live;	/* archives with a dir, for the signal handler */
};

/* Encodes an entry header (64 bytes) for path; the CRC covers it and path. */
void archive__encode_entry(uint8_t *out, const struct archive_entry *e, const char *path);
/* Encodes the file header (16 bytes). */
void archive__encode_file_header(uint8_t *out);

/* Opens an archive and reads its index of entry headers. Returns 0, or
 * -ENOENT/-errno when it cannot be read, -EPERM when it is not a regular
 * file (report/files/path.h), -EBADMSG when it is not an archive
 * (bad magic or header), -EPROTONOSUPPORT for a newer major version. A
 * damaged tail is not an error: a->damage says what happened. */
int archive__open(struct archive **out, const char *path);
void archive__close(struct archive *a);

/* The entry of a kind for a build-id (when build_id_size) or else for a path. */
struct archive_entry *archive__lookup(struct archive *a, enum archive_kind kind,
				      const uint8_t *build_id,
				      size_t build_id_size, const char *path);

/* Decompresses an entry into the archive's private directory (once) and
 * checks both CRCs and the size; the stream stops at its first byte past
 * the stated size (damaged). Refused before anything is written: a stated
 * size past the limits above (-EFBIG) or past the directory's free space
 * less the margin (-ENOSPC). One warning for each refusal; a partial file is
 * removed on every exit path, and while the directory exists SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove the archive's files before
 * their own action. Returns 0 (e->extracted is the file) or -errno
 * (-EBADMSG: damaged data). */
int archive__extract(struct archive *a, struct archive_entry *e);

/* ---- the writer (archive_write.c) ---------------------------------------------
 * Entries are streamed: each file is read and compressed in pieces, so a 1 GB
 * library needs no 1 GB buffer. The archive is written to a new file of an
 * unpredictable hidden name beside OUT (.OUT.XXXXXX, mode 0600) and renamed
 * over OUT when complete. */

struct archive_writer;

int archive_writer__open(struct archive_writer **out, const char *path, int level);

/* Appends the file open at fd (read now with pread, from offset 0: the
 * descriptor report/symbols/dso.c checked, never reopened by name) as an entry for
 * the recorded path and build-id. Returns 0 or -errno (-ENODATA: the file
 * changed size meanwhile); on a read error the archive stays valid (the entry
 * is not added). Sizes of the entry go to *file_size / *data_size. */
int archive_writer__add(struct archive_writer *w, enum archive_kind kind, int fd,
			const char *path, const uint8_t *build_id, size_t build_id_size,
			uint64_t *file_size, uint64_t *data_size);

/* Writes the end entry and renames the archive into place. Returns 0 or
 * -errno (the temporary file is removed). */
int archive_writer__close(struct archive_writer *w);
/* Removes the temporary file. */
void archive_writer__abort(struct archive_writer *w);

#endif
