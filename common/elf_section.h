/* SPDX-License-Identifier: MIT */
/*
 * An ELF file's section by name: what the report's readers look for in a
 * file (.gnu_debugdata, .debug_info, .eh_frame_hdr, .nv_fatbin).
 */
#ifndef XPU_COMMON_ELF_SECTION_H
#define XPU_COMMON_ELF_SECTION_H

#include <gelf.h>

/* The first section named name, its header in *sh; NULL when none (or the
 * section header string table cannot be read). */
Elf_Scn *elf_section__find(Elf *elf, const char *name, GElf_Shdr *sh);

#endif
