// SPDX-License-Identifier: MIT
/* MiniDebugInfo (.gnu_debugdata): see minidebug.h. */
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include "common/elf_section.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/symbols/minidebug.h"

static Elf_Data *minidebug__section(Elf *elf)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section__find(elf, ".gnu_debugdata", &shdr);

	return scn && shdr.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;
}

/* xz-decompresses in into a buffer of at most MINIDEBUG_MAX_SIZE bytes. */
static void *minidebug__unxz(const uint8_t *in, size_t in_size, size_t *out_size)
{
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = in_size * 4 > 65536 ? in_size * 4 : 65536;
	uint8_t *out = NULL;
	lzma_ret ret;

	if (lzma_stream_decoder(&z, 256u << 20, 0) != LZMA_OK)
		return NULL;
	z.next_in = in;
	z.avail_in = in_size;
	do {
		if (cap > MINIDEBUG_MAX_SIZE)
			cap = MINIDEBUG_MAX_SIZE;
		out = xrealloc(out, cap);
		z.next_out = out + z.total_out;
		z.avail_out = cap - z.total_out;
		ret = lzma_code(&z, LZMA_FINISH);
		if (ret == LZMA_OK || ret == LZMA_BUF_ERROR) {
			if (cap == MINIDEBUG_MAX_SIZE || z.avail_out) {
				ret = LZMA_DATA_ERROR;	/* too large, or truncated */
				break;
			}
			cap *= 2;
		}
	} while (ret == LZMA_OK || ret == LZMA_BUF_ERROR);
	*out_size = z.total_out;
	lzma_end(&z);
	if (ret != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

Elf *minidebug__open(Elf *elf, void **buf)
{
	Elf_Data *d = minidebug__section(elf);
	size_t size;
	void *out;
	Elf *mini;

	*buf = NULL;
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	out = minidebug__unxz(d->d_buf, d->d_size, &size);
	if (!out) {
		debug(1, ".gnu_debugdata: not an xz stream within %u MB", MINIDEBUG_MAX_SIZE >> 20);
		return NULL;
	}
	mini = elf_memory(out, size);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		if (mini)
			elf_end(mini);
		free(out);
		return NULL;
	}
	*buf = out;
	return mini;
}
