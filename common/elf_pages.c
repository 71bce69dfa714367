// SPDX-License-Identifier: MIT
/* Giving back pages of libelf's file mappings. See elf_pages.h. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/elf_pages.h"

size_t elf_pages__min_region = 4u << 20;

void elf_pages__release(Elf *elf, const void *buf, size_t size)
{
	size_t raw_size, page = (size_t)sysconf(_SC_PAGESIZE);
	const char *base = elf ? elf_rawfile(elf, &raw_size) : NULL, *p = buf;
	uintptr_t lo, hi;

	if (!base || !p || p < base || size > raw_size || p - base > (ptrdiff_t)(raw_size - size))
		return;
	lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	hi = ((uintptr_t)p + size) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Calls fn on each section of elf named in names that lies in its mapping;
 * returns the sum of their sizes. */
static size_t elf_pages__each(Elf *elf, const char *const *names,
			      void (*fn)(Elf *elf, const void *buf, size_t size))
{
	size_t shstrndx, raw_size, total = 0;
	const char *base = elf ? elf_rawfile(elf, &raw_size) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!base || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (const char *const *n = names; *n; n++)
			if (!strcmp(name, *n) && sh.sh_offset <= raw_size &&
			    sh.sh_size <= raw_size - sh.sh_offset) {
				if (fn)
					fn(elf, base + sh.sh_offset, sh.sh_size);
				total += sh.sh_size;
			}
	}
	return total;
}

void elf_pages__release_sections(Elf *elf, const char *const *names)
{
	elf_pages__each(elf, names, elf_pages__release);
}

size_t elf_pages__sections_size(Elf *elf, const char *const *names)
{
	return elf_pages__each(elf, names, NULL);
}
