// SPDX-License-Identifier: MIT
/*
 * The one ELF build-id reader (common/elf_buildid.c) used by xpu-record and
 * xpu-report: a file whose note is reachable only through its PT_NOTE
 * segment (section headers stripped, as sstrip and some packers leave
 * binaries) must give the same build-id as the original, or the report
 * would call the recorded file a mismatch.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "common/elf_buildid.h"
#include "format/xpu_format.h"

static size_t file_build_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e)
		n = elf__build_id(e, id, XPU_MMAP_BUILD_ID_MAX);
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

/* A copy of this test binary with e_shoff, e_shnum and e_shstrndx zeroed. */
static int copy_without_sections(const char *out)
{
	FILE *in = fopen("/proc/self/exe", "rb"), *o = fopen(out, "wb");
	char buf[65536];
	size_t n;
	Elf64_Ehdr eh;
	int err = -1;

	if (!in || !o)
		goto out;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, o) != n)
			goto out;
	if (fflush(o) || fseek(o, 0, SEEK_SET) || fseek(in, 0, SEEK_SET) ||
	    fread(&eh, sizeof(eh), 1, in) != 1)
		goto out;
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	err = fwrite(&eh, sizeof(eh), 1, o) == 1 ? 0 : -1;
out:
	if (in)
		fclose(in);
	if (o && fclose(o))
		err = -1;
	return err;
}

static void test_pt_note_only(void)
{
	char path[] = "/tmp/xpu-test-buildid-XXXXXX";
	uint8_t want[XPU_MMAP_BUILD_ID_MAX], got[XPU_MMAP_BUILD_ID_MAX];
	size_t nwant, ngot;
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0);
	close(fd);
	elf_version(EV_CURRENT);
	nwant = file_build_id("/proc/self/exe", want);
	TEST_ASSERT(nwant == 20);	/* gcc's default --build-id=sha1 */
	TEST_ASSERT_EQ(copy_without_sections(path), 0);
	ngot = file_build_id(path, got);
	TEST_ASSERT_EQ(ngot, nwant);
	TEST_ASSERT(!memcmp(got, want, nwant));
	unlink(path);
}

static void test_not_elf(void)
{
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	char path[] = "/tmp/xpu-test-buildid-XXXXXX";
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT(write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	TEST_ASSERT_EQ(file_build_id(path, id), 0);
	unlink(path);
}

int main(void)
{
	TEST_RUN(test_pt_note_only);
	TEST_RUN(test_not_elf);
	TEST_EXIT();
}
