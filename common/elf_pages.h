/* SPDX-License-Identifier: MIT */
/*
 * Giving back pages of a file that libelf mapped (ELF_C_READ_MMAP*), once
 * what was read from them is kept elsewhere: a symbol table's entries and
 * names, a DWARF unit walked into address tables (format/reader.c does the
 * same with a trace's chunks once decoded). The pages stay in the page
 * cache, so a later read costs a minor fault; the report's peak RSS no
 * longer holds every page it ever looked at (a GPT-2 report touched 105 MB
 * of string tables and 40 MB of one library's DWARF).
 */
#ifndef XPU_COMMON_ELF_PAGES_H
#define XPU_COMMON_ELF_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>

/* The whole pages of [buf, buf + size) that lie inside elf's mapping of its
 * file go back (MADV_DONTNEED); nothing when buf is not in that mapping (an
 * ELF in memory, data libelf converted or decompressed into a copy). Only
 * for data no one wrote to: the mapping is private, writes would be lost. */
void elf_pages__release(Elf *elf, const void *buf, size_t size);

/* The same for each section of elf named in names (NULL-ended), by its
 * place in the file, whoever read it (libdw's CFI reads .eh_frame through
 * its own Elf_Data). */
void elf_pages__release_sections(Elf *elf, const char *const *names);

/*
 * Pages read a few at a time, for as long as the report runs (the names of
 * the symbols looked up, the CFI of each new pc): given back every
 * ELF_PAGES_EVERY reads. Between two, a region keeps the pages of at most
 * that many reads resident (each a few: the kernel maps the pages around a
 * fault), instead of every page it ever read (a GPT-2 report: 43 MB of
 * string tables and 50 MB of .eh_frame); pages read again come back as
 * minor faults.
 */
#define ELF_PAGES_EVERY 256
/* A region smaller than this (4 MiB; tests lower it) is left resident: it
 * cannot hold much, and giving it back costs a system call and the faults
 * to read it again (3% of a report of gcc's recording). */
extern size_t elf_pages__min_region;

/* Whether the pages are due back after this read: every `every` reads
 * (0: ELF_PAGES_EVERY). */
static inline bool elf_pages__due(unsigned *reads, unsigned every)
{
	if (++*reads < (every ? every : ELF_PAGES_EVERY))
		return false;
	*reads = 0;
	return true;
}

/* The bytes elf_pages__release_sections() would give back. */
size_t elf_pages__sections_size(Elf *elf, const char *const *names);

#endif
