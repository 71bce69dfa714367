// SPDX-License-Identifier: MIT
/* The cubins of a .nv_fatbin section (fatbin.h). */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "report/gpu/fatbin.h"

static uint16_t fb__u16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t fb__u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t fb__u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One ELF entry's payload, uncompressed when it is zstd's. 0, 1 (skipped:
 * LZ4), -1 (damaged), or fn's non-zero return as 2 with *ret set. */
static int fb__entry(const unsigned char *h, uint32_t hsize, const unsigned char *payload,
		     uint64_t psize, fatbin_cubin_fn fn, void *ctx, struct fatbin_stats *st, int *ret)
{
	uint64_t flags = hsize >= 48 ? fb__u64(h + 40) : 0;
	unsigned arch = hsize >= 32 ? fb__u32(h + 28) : 0;
	uint32_t csize = hsize >= 20 ? fb__u32(h + 16) : 0;
	uint64_t usize = hsize >= 64 ? fb__u64(h + 56) : 0;
	void *buf;
	size_t n;

	if (flags & FATBIN_FLAG_LZ4) {
		st->lz4++;
		return 1;
	}
	if (!(flags & FATBIN_FLAG_ZSTD)) {
		if (psize > FATBIN_CUBIN_MAX)
			return -1;
		st->cubins++;
		*ret = fn(arch, payload, (size_t)psize, ctx);
		return *ret ? 2 : 0;
	}
	if (!csize || csize > psize || !usize || usize > FATBIN_CUBIN_MAX)
		return -1;
	buf = malloc((size_t)usize);
	if (!buf)
		return -1;
	n = ZSTD_decompress(buf, (size_t)usize, payload, csize);
	if (ZSTD_isError(n) || n != usize) {
		free(buf);
		return -1;
	}
	st->cubins++;
	*ret = fn(arch, buf, n, ctx);
	free(buf);
	return *ret ? 2 : 0;
}

int fatbin__each_cubin(const void *sec, size_t size, fatbin_cubin_fn fn, void *ctx,
		       struct fatbin_stats *st)
{
	const unsigned char *p = sec;
	size_t off = 0;
	int ret = 0;

	while (size - off >= 16 && fb__u32(p + off) == FATBIN_MAGIC) {
		uint16_t hsize = fb__u16(p + off + 6);
		uint64_t total = fb__u64(p + off + 8);
		size_t e, end;

		if (hsize < 16 || hsize > size - off || total > size - off - hsize) {
			st->bad++;
			return 0;
		}
		e = off + hsize;
		end = e + (size_t)total;
		while (end - e >= 16) {
			uint16_t kind = fb__u16(p + e);
			uint32_t ehsize = fb__u32(p + e + 4);
			uint64_t psize = fb__u64(p + e + 8);
			int r = 0;

			if (ehsize < 16 || ehsize > end - e || psize > end - e - ehsize) {
				st->bad++;
				return 0;
			}
			if (kind == FATBIN_KIND_ELF)
				r = fb__entry(p + e, ehsize, p + e + ehsize, psize, fn, ctx, st, &ret);
			if (r == 2)
				return ret;
			if (r < 0)
				st->bad++;
			e += ehsize + (size_t)psize;
		}
		/* the next fat binary starts 8-aligned */
		off = (end + 7) & ~(size_t)7;
		if (off > size)
			break;
	}
	return 0;
}
