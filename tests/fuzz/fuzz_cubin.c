// SPDX-License-Identifier: MIT
/*
 * Fuzz target for GPU PC sampling's cubins: the CUPTI library's reducer
 * (cupti/pcsamp/pcsamp_cubin.c, which runs inside the profiled process on every
 * module a program loads) and the report's line reader
 * (report/gpu/cubin_lines.c, which reads what the trace holds). The input
 * is a cubin (seeds: tests/data/pcsamp's, their reduced forms, cut and
 * flipped copies). Both read it; what the reducer gives is read again and
 * reduced again. Properties: no crash, no sanitizer report, the reducer's
 * output within its bound, a reduced cubin reduced again unchanged, and
 * the reduced cubin mapping each PC the reader maps in the input to the
 * same line.
 *
 * The normal suite replays tests/fuzz/corpus/cubin/; `make fuzz` builds the
 * libFuzzer binary (tests/Makefile.tests says how to run it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cupti/pcsamp/pcsamp_cubin.h"
#include "report/gpu/cubin_lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX	(1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cubin_lines whole, red;
	size_t rsize, rsize2;
	void *out, *out2;
	int have_whole = !cubin_lines__parse(&whole, data, size);

	if (xpu_pcsamp__reduce_cubin(data, size, FUZZ_MAX, &out, &rsize))
		goto out;
	if (rsize > FUZZ_MAX)
		abort();
	if (!cubin_lines__parse(&red, out, rsize)) {
		for (size_t f = 0; have_whole && f < whole.nr_funcs && f < 16; f++)
			for (uint64_t off = 0; off < 0x400; off += 0x10) {
				const char *fa, *fb;
				uint32_t la, lb;
				int ra = cubin_lines__lookup(&whole, whole.funcs[f], off, &fa, &la);
				int rb = cubin_lines__lookup(&red, whole.funcs[f], off, &fb, &lb);

				if (ra != rb || (!ra && (la != lb || strcmp(fa, fb))))
					abort();
			}
		cubin_lines__exit(&red);
	}
	if (!xpu_pcsamp__reduce_cubin(out, rsize, FUZZ_MAX, &out2, &rsize2)) {
		if (rsize2 != rsize || memcmp(out, out2, rsize))
			abort();
		free(out2);
	}
	free(out);
out:
	if (have_whole)
		cubin_lines__exit(&whole);
	return 0;
}
