// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the xpu.data.archive reader (report/finders/find_archive.c; the
 * layout is in Documentation/design-offline.md). The input is an archive.
 * Its header CRCs are recomputed first, so mutations reach the sizes, paths
 * and zstd data behind them (the checks themselves are tests/unit/
 * test_find_archive.c's). Then: open and scan, look every entry up by its
 * own key, extract each, and resolve each ELF entry through the archive
 * finder as a report would (dso__load, symbols). Properties: no crash or
 * sanitizer report; a lookup finds an entry of the same key; an extracted
 * file has the entry's size, and at most ARCHIVE_MAX_RATIO times the
 * archive's (no decompression bomb: corpus archive-bomb-64m, 2 KB holding
 * 64 MiB, made by tests/tools/craft_archive.py); closing the archive leaves
 * no file behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "common/log.h"
#include "report/symbols/dso.h"
#include "report/files/archive.h"
#include "report/finders/find_chain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96];

static void fuzz__cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* A private directory, also TMPDIR for the extracted files. */
static void fuzz__setup(void)
{
	snprintf(dir, sizeof(dir), "%s/xpu-fuzz-archive-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/in.archive", dir);
	setenv("TMPDIR", dir, 1);
	atexit(fuzz__cleanup);
}

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static void put32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

/* Recomputes the file header CRC and every entry header CRC it can reach,
 * walking the entries as the reader does. */
static void fuzz__fix_crcs(uint8_t *a, size_t size)
{
	size_t off = ARCHIVE_FILE_HDR_SIZE;

	if (size < ARCHIVE_FILE_HDR_SIZE)
		return;
	put32(a + 12, (uint32_t)crc32(0, a, 12));
	while (size - off >= ARCHIVE_ENTRY_HDR_SIZE) {
		uint8_t *h = a + off;
		size_t path_len = h[6] | h[7] << 8;
		uint64_t data_size = get64(h + 40);
		uint32_t crc;

		if (size - off - ARCHIVE_ENTRY_HDR_SIZE < path_len)
			return;
		crc = (uint32_t)crc32(0, h, 60);
		crc = (uint32_t)crc32(crc, h + ARCHIVE_ENTRY_HDR_SIZE, (uInt)path_len);
		put32(h + 60, crc);
		off += ARCHIVE_ENTRY_HDR_SIZE + path_len;
		if (h[4] == ARCHIVE_KIND_END || data_size > size - off)
			return;
		off += data_size;
	}
}

/* Files left in dir besides the input: extraction must clean up. */
static int fuzz__leftovers(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "in.archive"))
			n++;
	closedir(d);
	return n;
}

/* Each ELF entry through the archive finder, as dso__load() meets it. */
static void fuzz__finder(const struct archive *a)
{
	struct dsos d;

	dsos__init(&d);
	dsos__set_finder(&d, DSO_FIND_RECORDED_PATH, NULL, NULL, NULL);
	if (find_archive__install(&d, path))
		goto out;
	for (size_t i = 0; i < a->nr && i < 8; i++) {
		const struct archive_entry *e = &a->entries[i];
		struct dso *dso;

		if (e->kind != ARCHIVE_KIND_ELF)
			continue;
		dso = dsos__findnew(&d, e->path, e->build_id, e->build_id_size);
		if (!dso__load(dso, &d))
			dso__find_symbol(dso, 0x1000);
	}
out:
	dsos__exit(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct archive *a;
	uint8_t *copy;
	int fd;

	if (!dir[0])
		fuzz__setup();
	xpu_quiet = 1;
	copy = malloc(size + 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	fuzz__fix_crcs(copy, size);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, copy, size) != (ssize_t)size || close(fd))
		abort();
	free(copy);

	if (archive__open(&a, path))
		return 0;
	for (size_t i = 0; i < a->nr; i++) {
		struct archive_entry *e = &a->entries[i], *f;
		struct stat st;

		f = archive__lookup(a, e->kind, e->build_id, e->build_id_size, e->path);
		if (!f || f->kind != e->kind || f->build_id_size != e->build_id_size ||
		    (e->build_id_size ? memcmp(f->build_id, e->build_id, e->build_id_size)
				      : strcmp(f->path, e->path)))
			__builtin_trap();	/* lookup by an entry's own key failed */
		if (archive__extract(a, e))
			continue;
		if (stat(e->extracted, &st) || (uint64_t)st.st_size != e->file_size)
			__builtin_trap();	/* extracted, but not the stated size */
		if ((uint64_t)st.st_size > (uint64_t)size * ARCHIVE_MAX_RATIO)
			__builtin_trap();	/* a bomb went through */
	}
	fuzz__finder(a);
	archive__close(a);
	if (fuzz__leftovers() > 1)	/* the finder's archive stays open until the next */
		__builtin_trap();
	return 0;
}
