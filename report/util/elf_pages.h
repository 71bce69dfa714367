/* SPDX-License-Identifier: MIT */
/*
 * Giving back pages of a file that libelf mapped (ELF_C_READ_MMAP*), once
 * what was read from them is kept elsewhere: a symbol table's entries and
 * names, a DWARF unit walked into address tables. The pages stay in the
 * page cache, so a later read costs a minor fault; the report's peak RSS no
 * longer holds every page it ever looked at (a GPT-2 report touched 105 MB
 * of string tables and 40 MB of one library's DWARF).
 */
#ifndef XPU_REPORT_ELF_PAGES_H
#define XPU_REPORT_ELF_PAGES_H

#include <stddef.h>
#include <gelf.h>

/* The whole pages of [buf, buf + size) that lie inside elf's mapping of its
 * file go back (MADV_DONTNEED); nothing when buf is not in that mapping (an
 * ELF in memory, data libelf converted or decompressed into a copy). Only
 * for data no one wrote to: the mapping is private, writes would be lost. */
void elf_pages__release(Elf *elf, const void *buf, size_t size);

#endif
