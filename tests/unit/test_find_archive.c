// SPDX-License-Identifier: MIT
/*
 * xpu.data.archive reader (report/finders/find_archive.c): archives are built here
 * byte by byte with the same encoders and zstd, then read back whole,
 * damaged, cut at every length, with a newer major, with an unknown kind;
 * and the DSO_FIND_ARCHIVE finder resolves a DSO by build-id from one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "report/symbols/dso.h"
#include "report/files/archive.h"
#include "report/finders/find_chain.h"
#include "tests/unit/test.h"

static char dir[] = "/tmp/test_find_archive.XXXXXX";

struct buf {
	uint8_t *p;
	size_t len;
};

static void buf__add(struct buf *b, const void *data, size_t len)
{
	b->p = realloc(b->p, b->len + len);
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void add_entry(struct buf *b, uint8_t kind, const char *path, const uint8_t *id,
		      size_t id_size, const void *file, size_t file_size)
{
	struct archive_entry e = { .kind = kind, .build_id_size = (uint8_t)id_size,
				   .file_size = file_size };
	size_t cap = ZSTD_compressBound(file_size);
	uint8_t *z = malloc(cap), h[ARCHIVE_ENTRY_HDR_SIZE];
	size_t zlen = ZSTD_compress(z, cap, file, file_size, 3);

	if (id_size)
		memcpy(e.build_id, id, id_size);
	e.data_size = zlen;
	e.data_crc = (uint32_t)crc32(0, z, (uInt)zlen);
	e.file_crc = (uint32_t)crc32(0, file, (uInt)file_size);
	archive__encode_entry(h, &e, path);
	buf__add(b, h, sizeof(h));
	buf__add(b, path, strlen(path) + 1);
	buf__add(b, z, zlen);
	free(z);
}

static void add_end(struct buf *b, uint64_t n)
{
	struct archive_entry e = { .kind = ARCHIVE_KIND_END, .file_size = n };
	uint8_t h[ARCHIVE_ENTRY_HDR_SIZE];

	archive__encode_entry(h, &e, "");
	buf__add(b, h, sizeof(h));
	buf__add(b, "", 1);
}

static const uint8_t id1[20] = { 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };
static char file1[5000], file2[300];

/* An archive: an ELF entry with a build-id, one without, then the end. */
static struct buf make_archive(void)
{
	struct buf b = { 0 };
	uint8_t h[ARCHIVE_FILE_HDR_SIZE];

	for (size_t i = 0; i < sizeof(file1); i++)
		file1[i] = (char)(i * 7 + i / 100);
	memset(file2, 'x', sizeof(file2));
	archive__encode_file_header(h);
	buf__add(&b, h, sizeof(h));
	add_entry(&b, ARCHIVE_KIND_ELF, "/usr/lib/libone.so", id1, sizeof(id1), file1, sizeof(file1));
	add_entry(&b, ARCHIVE_KIND_ELF, "/opt/app/two", NULL, 0, file2, sizeof(file2));
	add_end(&b, 2);
	return b;
}

static char *write_file(const char *name, const void *p, size_t len)
{
	static char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

static bool file_equals(const char *path, const void *p, size_t len)
{
	char *got = malloc(len + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, got, len + 1) : -1;
	bool ok = n == (ssize_t)len && !memcmp(got, p, len);

	if (fd >= 0)
		close(fd);
	free(got);
	return ok;
}

static void test_roundtrip(void)
{
	struct buf b = make_archive();
	struct archive *a;
	struct archive_entry *e1, *e2;
	char *x1;

	TEST_ASSERT_EQ(archive__open(&a, write_file("ok.archive", b.p, b.len)), 0);
	TEST_ASSERT_EQ(a->nr, 2);
	TEST_ASSERT(a->complete);
	TEST_ASSERT_EQ(a->damage[0], 0);
	e1 = archive__lookup(a, ARCHIVE_KIND_ELF, id1, sizeof(id1), "/elsewhere");
	e2 = archive__lookup(a, ARCHIVE_KIND_ELF, NULL, 0, "/opt/app/two");
	TEST_ASSERT(e1 && e2 && e1 != e2);
	TEST_ASSERT(!archive__lookup(a, ARCHIVE_KIND_ELF, id1, 19, "/usr/lib/libone.so"));	/* size counts */
	TEST_ASSERT(!archive__lookup(a, ARCHIVE_KIND_ELF, NULL, 0, "/usr/lib/libone.so2"));
	TEST_ASSERT_EQ(archive__extract(a, e1), 0);
	TEST_ASSERT_EQ(archive__extract(a, e2), 0);
	TEST_ASSERT(file_equals(e1->extracted, file1, sizeof(file1)));
	TEST_ASSERT(file_equals(e2->extracted, file2, sizeof(file2)));
	x1 = strdup(e1->extracted);
	archive__close(a);
	TEST_ASSERT(access(x1, F_OK) != 0);	/* removed with the archive */
	free(x1);
	free(b.p);
}

static void test_bad_data(void)
{
	struct buf b = make_archive();
	struct archive *a;
	struct archive_entry *e;

	/* first entry's data starts after 16 + 64 + path */
	b.p[16 + 64 + strlen("/usr/lib/libone.so") + 1 + 20] ^= 0x40;
	TEST_ASSERT_EQ(archive__open(&a, write_file("bad.archive", b.p, b.len)), 0);
	TEST_ASSERT(a->complete);	/* headers are intact */
	e = archive__lookup(a, ARCHIVE_KIND_ELF, id1, sizeof(id1), "");
	TEST_ASSERT(e);
	TEST_ASSERT_EQ(archive__extract(a, e), -EBADMSG);
	TEST_ASSERT(e->bad && !e->extracted);
	TEST_ASSERT_EQ(archive__extract(a, e), -EBADMSG);	/* not tried again */
	TEST_ASSERT_EQ(archive__extract(a, archive__lookup(a, ARCHIVE_KIND_ELF, NULL, 0, "/opt/app/two")), 0);
	archive__close(a);
	free(b.p);
}

static void test_bad_header(void)
{
	struct buf b = make_archive();
	size_t second = 16 + 64 + strlen("/usr/lib/libone.so") + 1;
	struct archive *a;

	/* the first entry's data size tells where the second starts */
	second += b.p[16 + 40] | b.p[16 + 41] << 8;
	b.p[second + 33] ^= 1;		/* its file_size: the header CRC catches it */
	TEST_ASSERT_EQ(archive__open(&a, write_file("hdr.archive", b.p, b.len)), 0);
	TEST_ASSERT_EQ(a->nr, 1);
	TEST_ASSERT(!a->complete);
	TEST_ASSERT(strstr(a->damage, "checksum"));
	archive__close(a);

	b.p[second + 33] ^= 1;
	b.p[second] ^= 1;		/* magic */
	TEST_ASSERT_EQ(archive__open(&a, write_file("hdr.archive", b.p, b.len)), 0);
	TEST_ASSERT_EQ(a->nr, 1);
	TEST_ASSERT(strstr(a->damage, "bad entry header"));
	archive__close(a);
	free(b.p);
}

static void test_truncated(void)
{
	struct buf b = make_archive();

	for (size_t cut = 0; cut < b.len; cut++) {
		struct archive *a;
		int err = archive__open(&a, write_file("cut.archive", b.p, cut));

		if (cut < ARCHIVE_FILE_HDR_SIZE) {
			TEST_ASSERT_EQ(err, -EBADMSG);
			continue;
		}
		TEST_ASSERT_EQ(err, 0);
		TEST_ASSERT(!a->complete && a->damage[0]);
		TEST_ASSERT(a->nr <= 2);
		for (size_t i = 0; i < a->nr; i++)	/* whatever is listed extracts */
			TEST_ASSERT_EQ(archive__extract(a, &a->entries[i]), 0);
		archive__close(a);
	}
	free(b.p);
}

static void test_versions_and_kinds(void)
{
	struct buf b = { 0 };
	uint8_t h[ARCHIVE_FILE_HDR_SIZE];
	struct archive *a;
	uint32_t crc;

	archive__encode_file_header(h);
	buf__add(&b, h, sizeof(h));
	add_entry(&b, 7, "/future/kind", NULL, 0, "abc", 3);	/* unknown: skipped */
	add_entry(&b, ARCHIVE_KIND_ELF, "/usr/bin/tool", id1, 4, "elf!", 4);
	add_end(&b, 2);
	TEST_ASSERT_EQ(archive__open(&a, write_file("kinds.archive", b.p, b.len)), 0);
	TEST_ASSERT_EQ(a->nr, 1);
	TEST_ASSERT(a->complete);
	TEST_ASSERT(archive__lookup(a, ARCHIVE_KIND_ELF, id1, 4, ""));
	archive__close(a);

	b.p[8] = 2;			/* major 2, with a valid header CRC */
	crc = (uint32_t)crc32(0, b.p, 12);
	memcpy(b.p + 12, &crc, 4);	/* little-endian host */
	TEST_ASSERT_EQ(archive__open(&a, write_file("v2.archive", b.p, b.len)), -EPROTONOSUPPORT);
	b.p[0] = 'Y';
	TEST_ASSERT_EQ(archive__open(&a, write_file("magic.archive", b.p, b.len)), -EBADMSG);
	TEST_ASSERT_EQ(archive__open(&a, "/nonexistent/x.archive"), -ENOENT);
	free(b.p);
}

/* The finder: a DSO recorded at a path that does not exist resolves, by its
 * build-id, to the archived copy of a real ELF (this test program). */
static void test_finder(void)
{
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	struct buf b = { 0 }, self = { 0 };
	uint8_t h[ARCHIVE_FILE_HDR_SIZE], chunk[65536];
	struct dsos d;
	struct dso *dso;
	size_t id_size;
	ssize_t n;
	Elf *elf;
	int fd = open("/proc/self/exe", O_RDONLY);

	TEST_ASSERT(fd >= 0);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf__add(&self, chunk, (size_t)n);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)self.p, self.len);
	id_size = elf ? elf__build_id(elf, id, sizeof(id)) : 0;
	if (elf)
		elf_end(elf);
	close(fd);
	TEST_ASSERT(id_size > 0);

	archive__encode_file_header(h);
	buf__add(&b, h, sizeof(h));
	add_entry(&b, ARCHIVE_KIND_ELF, "/gone/test_prog", id, id_size, self.p, self.len);
	add_end(&b, 1);
	dsos__init(&d);
	TEST_ASSERT_EQ(find_archive__install(&d, write_file("finder.archive", b.p, b.len)), 0);
	dso = dsos__findnew(&d, "/gone/test_prog", id, id_size);
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	TEST_ASSERT(!strcmp(dso->found_by, "archive"));

	/* another build-id: the archive has nothing, the recorded path is gone */
	id[0] ^= 0xff;
	dso = dsos__findnew(&d, "/gone/test_prog", id, id_size);
	TEST_ASSERT_EQ(dso__load(dso, &d), -ENOENT);
	TEST_ASSERT_EQ(dso->status, DSO_MISSING);
	dsos__exit(&d);
	free(b.p);
	free(self.p);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	setenv("TMPDIR", dir, 1);
	TEST_RUN(test_roundtrip);
	TEST_RUN(test_bad_data);
	TEST_RUN(test_bad_header);
	TEST_RUN(test_truncated);
	TEST_RUN(test_versions_and_kinds);
	TEST_RUN(test_finder);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	TEST_EXIT();
}
