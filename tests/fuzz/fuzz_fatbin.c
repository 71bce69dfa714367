// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the report's fat-binary reader (report/gpu/fatbin.c: the
 * .nv_fatbin sections of the files a traced process mapped, for the lines
 * of PC samples whose cubin the trace lacks). The input is a section (seeds:
 * nvcc 13.0's, plain and zstd-compressed, from tests/data/pcsamp's
 * libraries, cut and flipped copies, one whose cubin starts 4 bytes off
 * 8-alignment). Each cubin it yields is read by the line reader
 * (report/gpu/cubin_lines.c) and looked up. Properties: no crash, no
 * sanitizer report, no cubin over FATBIN_CUBIN_MAX, never more cubins than
 * the input could hold headers for.
 *
 * The normal suite replays tests/fuzz/corpus/fatbin/; `make fuzz` builds the
 * libFuzzer binary (tests/Makefile.tests says how to run it).
 */
#include <stdint.h>
#include <stdlib.h>
#include "report/gpu/cubin_lines.h"
#include "report/gpu/fatbin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz__cubin(unsigned arch, const void *cubin, size_t size, void *ctx)
{
	struct cubin_lines cl;
	size_t *n = ctx;

	(void)arch;
	if (size > FATBIN_CUBIN_MAX)
		abort();
	(*n)++;
	if (!cubin_lines__parse(&cl, cubin, size)) {
		const char *file;
		uint32_t line;

		for (size_t f = 0; f < cl.nr_funcs && f < 8; f++)
			cubin_lines__lookup(&cl, cl.funcs[f], 0x180, &file, &line);
		cubin_lines__exit(&cl);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fatbin_stats st = { 0 };
	size_t n = 0;

	fatbin__each_cubin(data, size, fuzz__cubin, &n, &st);
	/* each cubin needs a 16-byte fat binary header or a 16-byte entry header */
	if (n > size / 16 || st.cubins != n)
		abort();
	return 0;
}
