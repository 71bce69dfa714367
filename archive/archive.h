/* SPDX-License-Identifier: MIT */
/*
 * xpu-archive's writer of xpu.data.archive (layout: report/util/find_archive.h and
 * Documentation/design-offline.md). Entries are streamed: each file is read
 * and compressed in pieces, so a 1 GB library needs no 1 GB buffer. The
 * archive is written to OUT.tmp and renamed over OUT when complete.
 */
#ifndef XPU_ARCHIVE_H
#define XPU_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include "report/util/find_archive.h"

struct archive_writer;

int archive_writer__open(struct archive_writer **out, const char *path, int level);

/* Appends the file open at fd (read now with pread, from offset 0: the
 * descriptor report/util/dso.c checked, never reopened by name) as an entry for
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
