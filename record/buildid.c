// SPDX-License-Identifier: MIT
/*
 * GNU build-id of an ELF file, for mappings whose build-id the kernel did not
 * give (the page holding the note was not in memory) and for -p's existing
 * maps. Reads PT_NOTE segments first (what the loader maps), then SHT_NOTE
 * sections.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "format/xpu_format.h"
#include "record/record.h"

static int buildid__from_notes(Elf_Data *d, uint8_t *id, uint8_t *size)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0) {
			*size = nh.n_descsz > XPU_MMAP_BUILD_ID_MAX ? XPU_MMAP_BUILD_ID_MAX : nh.n_descsz;
			memcpy(id, (char *)d->d_buf + desc_off, *size);
			return 0;
		}
	}
	return -ENOENT;
}

int buildid__read_file(const char *path, uint8_t *id, uint8_t *size)
{
	int fd, ret = -ENOENT;
	size_t nph = 0;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;

	*size = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		ret = -EINVAL;
		goto out;
	}
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph && ret; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			ret = buildid__from_notes(elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
								       ELF_T_NHDR), id, size);
		}
	}
	while (ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			ret = buildid__from_notes(elf_getdata(scn, NULL), id, size);
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}
