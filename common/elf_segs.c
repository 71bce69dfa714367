// SPDX-License-Identifier: MIT
/* PT_LOAD segments and load biases (see elf_segs.h). */
#include <stdlib.h>
#include "common/elf_segs.h"
#include "common/xalloc.h"

size_t elf_segs__read(Elf *elf, struct elf_seg **segs)
{
	size_t nphdr, n = 0;

	*segs = NULL;
	if (elf_getphdrnum(elf, &nphdr))
		return 0;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		*segs = xrealloc(*segs, (n + 1) * sizeof(**segs));
		(*segs)[n++] = (struct elf_seg){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz,
			.exec = (ph.p_flags & PF_X) != 0,
		};
	}
	return n;
}

uint64_t elf_segs__bias(const struct elf_seg *segs, size_t n, bool exec_type,
			uint64_t map_start, uint64_t pgoff)
{
	const struct elf_seg *seg = NULL;

	if (exec_type)
		return 0;
	for (int pass = 0; pass < 2 && !seg; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct elf_seg *s = &segs[i];

			if ((pass == 0 && !s->exec) || pgoff < (s->offset & ~4095ULL) ||
			    pgoff >= s->offset + s->filesz)
				continue;
			seg = s;
			break;
		}
	}
	if (!seg && n)
		seg = &segs[0];
	if (!seg)
		return map_start - pgoff;
	/* map_start maps file offset pgoff, which the segment puts at
	 * vaddr + (pgoff - offset) */
	return map_start - (seg->vaddr + pgoff - seg->offset);
}
