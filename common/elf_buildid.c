// SPDX-License-Identifier: MIT
/* The GNU build-id of an ELF file (elf_buildid.h). */
#include <string.h>
#include "common/elf_buildid.h"

/* The first GNU build-id note of a note block, or 0. */
static size_t elf__build_id_note(Elf_Data *d, uint8_t *out, size_t max)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < max ? nh.n_descsz : max;

			memcpy(out, (char *)d->d_buf + desc_off, n);
			return n;
		}
	}
	return 0;
}

size_t elf__build_id(Elf *elf, uint8_t *out, size_t max)
{
	size_t nph = 0, n = 0;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && !n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE)
				n = elf__build_id_note(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
									  ph.p_filesz, ELF_T_NHDR),
						       out, max);
		}
	}
	while (!n && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			n = elf__build_id_note(elf_getdata(scn, NULL), out, max);
	}
	return n;
}
