// SPDX-License-Identifier: MIT
/*
 * The CUPTI library's cubin reducer (cupti/pcsamp/pcsamp_cubin.c) against the
 * report's line reader (report/gpu/cubin_lines.c) and binutils: for
 * tests/data/pcsamp/fake_kernel.cubin and multi_kernel.cubin (several
 * kernels, nvcc -lineinfo), the reduced cubin is smaller, readelf
 * --debug-dump=decodedline and --syms print the same as for the whole one,
 * and cubin_lines maps every instruction of every function (each 16 bytes
 * of its .text) to the same file and line. Its bound is kept, a cubin
 * without a line table is refused, reducing twice changes nothing, and cut
 * or flipped cubins never make it read outside its input (the ASan build
 * of tests/fuzz/fuzz_cubin replays such inputs too).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "cupti/pcsamp/pcsamp_cubin.h"
#include "report/gpu/cubin_lines.h"

#define MAX (3u << 20)

static const char *const cubins[] = {
	"tests/data/pcsamp/fake_kernel.cubin",
	"tests/data/pcsamp/multi_kernel.cubin",
};

/* The size of section ".text.FUNC" of a whole cubin, 0 if none */
static uint64_t text_size(const char *data, const char *func)
{
	const Elf64_Ehdr *eh = (const void *)data;
	const Elf64_Shdr *sh = (const void *)(data + eh->e_shoff);
	const char *names = data + sh[eh->e_shstrndx].sh_offset;
	char want[512];

	snprintf(want, sizeof(want), ".text.%s", func);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, want))
			return sh[i].sh_size;
	return 0;
}

/* readelf's output for a file, "" when readelf is not there */
static char *readelf(const char *opt, const char *path)
{
	char cmd[600], *out = NULL;
	size_t len = 0;
	FILE *p, *m = open_memstream(&out, &len);
	int c;

	snprintf(cmd, sizeof(cmd), "readelf %s %s 2>/dev/null", opt, path);
	p = popen(cmd, "r");
	while (p && (c = fgetc(p)) != EOF)
		fputc(c, m);
	if (p)
		pclose(p);
	fclose(m);
	return out;
}

static void check_readelf(const char *whole, const void *reduced, size_t size)
{
	static const char *const opts[] = { "--debug-dump=decodedline", "--syms -W" };
	char path[] = "/tmp/test_pcsamp_cubin.XXXXXX";
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(write(fd, reduced, size), (ssize_t)size);
	close(fd);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		char *a = readelf(opts[i], whole), *b = readelf(opts[i], path);
		/* the file name is in --syms' header line */
		char *sa = strstr(a, "\n"), *sb = strstr(b, "\n");

		if (!*a)
			fprintf(stderr, "  readelf gave nothing (not installed?): not compared\n");
		TEST_ASSERT(!strcmp(sa ? sa : a, sb ? sb : b));
		if (strstr(opts[i], "decodedline"))
			TEST_ASSERT(!*a || strstr(a, ".cu"));
		free(a);
		free(b);
	}
	unlink(path);
}

static void test_same_lines(void)
{
	for (size_t n = 0; n < sizeof(cubins) / sizeof(cubins[0]); n++) {
		struct cubin_lines whole, red;
		size_t size, rsize, rsize2, pcs = 0, mapped = 0;
		char *data = test__load(cubins[n], &size);
		void *out, *out2;

		TEST_ASSERT(data);
		TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(data, size, MAX, &out, &rsize), 0);
		fprintf(stderr, "  %s: %zu bytes, reduced %zu (%.1f%%)\n", cubins[n], size, rsize,
			100.0 * rsize / size);
		TEST_ASSERT(rsize < size / 2);
		TEST_ASSERT_EQ(cubin_lines__parse(&whole, data, size), 0);
		TEST_ASSERT_EQ(cubin_lines__parse(&red, out, rsize), 0);
		TEST_ASSERT(whole.nr_rows > 10);
		TEST_ASSERT_EQ(red.nr_funcs, whole.nr_funcs);
		TEST_ASSERT_EQ(red.nr_rows, whole.nr_rows);
		for (size_t f = 0; f < whole.nr_funcs; f++) {
			uint64_t end = text_size(data, whole.funcs[f]);

			TEST_ASSERT(end > 0);
			for (uint64_t off = 0; off < end; off += 16) {
				const char *fa = NULL, *fb = NULL;
				uint32_t la = 0, lb = 0;
				int ra = cubin_lines__lookup(&whole, whole.funcs[f], off, &fa, &la);
				int rb = cubin_lines__lookup(&red, whole.funcs[f], off, &fb, &lb);

				TEST_ASSERT_EQ(ra, rb);
				TEST_ASSERT_EQ(la, lb);
				TEST_ASSERT(!ra ? !strcmp(fa, fb) : 1);
				pcs++;
				mapped += !ra;
			}
		}
		fprintf(stderr, "  %zu functions, %zu PCs compared, %zu with a line\n",
			whole.nr_funcs, pcs, mapped);
		TEST_ASSERT(n == 0 || whole.nr_funcs >= 4);
		TEST_ASSERT(mapped > pcs / 2);
		check_readelf(cubins[n], out, rsize);

		/* reduced again: the same bytes */
		TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(out, rsize, MAX, &out2, &rsize2), 0);
		TEST_ASSERT_EQ(rsize2, rsize);
		TEST_ASSERT(!memcmp(out, out2, rsize));
		free(out2);

		/* the bound */
		TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(data, size, rsize - 1, &out2, &rsize2), -E2BIG);
		TEST_ASSERT(!out2 && !rsize2);
		TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(data, size, rsize, &out2, &rsize2), 0);
		free(out2);

		cubin_lines__exit(&whole);
		cubin_lines__exit(&red);
		free(out);
		free(data);
	}
}

static void test_refused(void)
{
	size_t size, rsize;
	char *data = test__load(cubins[0], &size), *p;
	void *out;

	TEST_ASSERT(data);
	TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin("not an elf", 10, MAX, &out, &rsize), -EINVAL);
	TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(NULL, 0, MAX, &out, &rsize), -EINVAL);
	/* no .debug_line (a cubin without -lineinfo): nothing worth keeping */
	for (p = data; (p = memmem(p, size - (p - data), "debug_line", 10)); p++)
		p[9] = 'X';
	TEST_ASSERT_EQ(xpu_pcsamp__reduce_cubin(data, size, MAX, &out, &rsize), -ENOENT);
	TEST_ASSERT(!out);
	free(data);
}

/* Every length cut and bytes flipped through the headers and tables: no
 * crash, no read outside the input (the ASan build), and what comes out is
 * within the bound and readable by cubin_lines. */
static void one(const void *data, size_t size, size_t *ok)
{
	struct cubin_lines cl;
	size_t rsize;
	void *out;

	if (xpu_pcsamp__reduce_cubin(data, size, MAX, &out, &rsize))
		return;
	TEST_ASSERT(rsize <= MAX);
	cubin_lines__parse(&cl, out, rsize);
	cubin_lines__exit(&cl);
	free(out);
	(*ok)++;
}

static void test_damage(void)
{
	for (size_t n = 0; n < sizeof(cubins) / sizeof(cubins[0]); n++) {
		size_t size, ok = 0, tries = 0;
		char *data = test__load(cubins[n], &size);

		TEST_ASSERT(data);
		for (size_t cut = 0; cut < size; cut += 61, tries++) {
			char *part = malloc(cut ? cut : 1);

			memcpy(part, data, cut);
			one(part, cut, &ok);
			free(part);
		}
		for (size_t i = 0; i < size; i += 5, tries++) {
			char *copy = malloc(size);

			memcpy(copy, data, size);
			copy[i] ^= i & 8 ? 0xff : 0x41;
			one(copy, size, &ok);
			free(copy);
		}
		fprintf(stderr, "  %s: %zu damaged inputs, %zu reduced\n", cubins[n], tries, ok);
		free(data);
	}
	TEST_ASSERT(1);
}

int main(void)
{
	TEST_RUN(test_same_lines);
	TEST_RUN(test_refused);
	TEST_RUN(test_damage);
	TEST_EXIT();
}
