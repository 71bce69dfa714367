// SPDX-License-Identifier: MIT
/*
 * report/gpu/fatbin.c on what nvcc 13.0 writes (tests/data/pcsamp/build.sh):
 * the .nv_fatbin of a host library built from fake_kernel.cu holds one
 * sm_90 cubin, plain in libfake_kernel.so and zstd-compressed in
 * libfake_kernel_z.so: the same bytes from both, and lines of
 * fake_kernel.cu as fake_kernel.cubin (nvcc -cubin) has them. Every truncation of the section and a damaged
 * compressed payload give the entries before the damage, a count, and no
 * crash.
 */
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "common/elf_section.h"
#include "report/gpu/cubin_lines.h"
#include "report/gpu/fatbin.h"

#define DATA "tests/data/pcsamp/"

/* the .nv_fatbin section of an ELF file, malloc'd */
static unsigned char *section(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	unsigned char *out = NULL;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	Elf *elf;

	*size = 0;
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && (scn = elf_section__find(elf, ".nv_fatbin", &sh)) && (d = elf_getdata(scn, NULL))) {
		out = malloc(d->d_size);
		memcpy(out, d->d_buf, d->d_size);
		*size = d->d_size;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return out;
}

struct seen {
	unsigned nr, arch;
	size_t size;
	int same;		/* byte for byte the plain library's */
	int lines;		/* line 15 at 0x180, as fake_kernel.cubin says */
};

static unsigned char *cubin_ref;	/* the plain library's cubin */
static size_t cubin_ref_size;

static int on_cubin(unsigned arch, const void *cubin, size_t size, void *ctx)
{
	struct seen *s = ctx;
	struct cubin_lines cl;
	const char *file;
	uint32_t line;

	s->nr++;
	s->arch = arch;
	s->size = size;
	if (!cubin_ref) {
		cubin_ref = malloc(size);
		memcpy(cubin_ref, cubin, size);
		cubin_ref_size = size;
	}
	s->same = size == cubin_ref_size && !memcmp(cubin, cubin_ref, size);
	if (!cubin_lines__parse(&cl, cubin, size)) {
		s->lines = !cubin_lines__lookup(&cl, "_Z11fake_kerneli", 0x180, &file, &line) &&
			   strstr(file, "fake_kernel.cu") && line == 15;
		cubin_lines__exit(&cl);
	}
	return 0;
}

static void check_lib(const char *path)
{
	struct fatbin_stats st = { 0 };
	struct seen s = { 0 };
	size_t size;
	unsigned char *sec = section(path, &size);

	TEST_ASSERT(sec && size > 64);
	TEST_ASSERT_EQ(fatbin__each_cubin(sec, size, on_cubin, &s, &st), 0);
	TEST_ASSERT_EQ(s.nr, 1u);
	TEST_ASSERT_EQ(st.cubins, 1u);
	TEST_ASSERT_EQ(st.bad, 0u);
	TEST_ASSERT_EQ(s.arch, 90u);
	TEST_ASSERT(s.same);
	TEST_ASSERT(s.lines);
	/* every truncation: no crash, never more than the whole */
	for (size_t n = 0; n < size; n++) {
		struct fatbin_stats t = { 0 };
		struct seen x = { 0 };
		unsigned char *cut = malloc(n + 1);

		memcpy(cut, sec, n);
		fatbin__each_cubin(cut, n, on_cubin, &x, &t);
		TEST_ASSERT(x.nr <= 1);
		TEST_ASSERT(!x.nr || x.same);
		free(cut);
	}
	free(sec);
}

/* a compressed payload with its bytes flipped: counted as damaged */
static void test_damaged_zstd(void)
{
	struct fatbin_stats st = { 0 };
	struct seen s = { 0 };
	size_t size;
	unsigned char *sec = section(DATA "libfake_kernel_z.so", &size);
	size_t e = 16;			/* the first entry of the first fat binary */

	TEST_ASSERT(sec && size > 200);
	while (e + 64 < size) {		/* the ELF entry (kind 2) */
		uint32_t hsize;
		uint64_t psize;

		memcpy(&hsize, sec + e + 4, 4);
		memcpy(&psize, sec + e + 8, 8);
		if (sec[e] == FATBIN_KIND_ELF)
			break;
		e += hsize + psize;
	}
	TEST_ASSERT(e + 64 < size);
	sec[e + 80] ^= 0xff;	/* inside the zstd frame, past its header */
	sec[e + 120] ^= 0xff;
	fatbin__each_cubin(sec, size, on_cubin, &s, &st);
	TEST_ASSERT_EQ(s.nr, 0u);	/* zstd's checksum or decoder refuses it */
	TEST_ASSERT(st.bad >= 1);
	free(sec);
}

static void test_libs(void)
{
	check_lib(DATA "libfake_kernel.so");
	check_lib(DATA "libfake_kernel_z.so");
}

static void test_not_fatbin(void)
{
	static const unsigned char junk[64] = { 1, 2, 3 };
	struct fatbin_stats st = { 0 };
	struct seen s = { 0 };

	TEST_ASSERT_EQ(fatbin__each_cubin(junk, sizeof(junk), on_cubin, &s, &st), 0);
	TEST_ASSERT_EQ(s.nr, 0u);
	TEST_ASSERT_EQ(fatbin__each_cubin(junk, 0, on_cubin, &s, &st), 0);
}

int main(void)
{
	TEST_RUN(test_libs);
	TEST_RUN(test_damaged_zstd);
	TEST_RUN(test_not_fatbin);
	free(cubin_ref);
	TEST_EXIT();
}
