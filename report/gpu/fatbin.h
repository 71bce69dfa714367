/* SPDX-License-Identifier: MIT */
/*
 * The cubins in a host ELF file's .nv_fatbin section (nvcc's fat binaries),
 * for the PC samples of kernels whose module was loaded before an attach:
 * CUPTI hands a module's cubin over only when it loads
 * (Documentation/design-gpu.md, GPU PC sampling).
 *
 * The layout is NVIDIA's and undocumented; what is read here was checked
 * against nvcc 13.0's output (tests/data/pcsamp/build.sh):
 *   fat binary   u32 magic 0xBA55ED50, u16 version 1, u16 header size,
 *                u64 size of the entries that follow; several may follow
 *                one another in a section
 *   entry        u16 kind (1 PTX, 2 ELF), u16, u32 header size,
 *                u64 payload size (padded), u32 compressed size (@16),
 *                u32 SM arch (@28: 90 for sm_90), u64 flags (@40),
 *                u64 uncompressed size (@56); the payload after the header
 *   flags        0x8000: the payload is zstd-compressed (nvcc 13's
 *                --compress-mode, and -Xfatbin=-compress-all); 0x2000:
 *                LZ4 (older toolkits): not read, counted
 * Everything is bounds-checked: a damaged section yields the entries before
 * the damage and a count.
 */
#ifndef XPU_REPORT_GPU_FATBIN_H
#define XPU_REPORT_GPU_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#define FATBIN_MAGIC		0xBA55ED50u
#define FATBIN_KIND_ELF		2
#define FATBIN_FLAG_ZSTD	0x8000u
#define FATBIN_FLAG_LZ4		0x2000u
/* the largest cubin uncompressed (larger: counted as damaged) */
#define FATBIN_CUBIN_MAX	(256u << 20)

struct fatbin_stats {
	uint64_t cubins;		/* ELF entries handed to the callback */
	uint64_t lz4;			/* LZ4-compressed ELF entries, not read */
	uint64_t bad;			/* damaged headers or payloads (the walk stops) */
};

/* fn(arch, cubin, size, ctx) for each ELF entry of the section, in order
 * (the cubin uncompressed, valid during the call); a non-zero return stops
 * the walk and is returned. Returns 0 at the end of the section. */
typedef int (*fatbin_cubin_fn)(unsigned arch, const void *cubin, size_t size, void *ctx);
int fatbin__each_cubin(const void *sec, size_t size, fatbin_cubin_fn fn, void *ctx,
		       struct fatbin_stats *st);

#endif
