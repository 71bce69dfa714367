/* SPDX-License-Identifier: MIT */
/* File offsets of named functions of an ELF file (elf_funcs.c). */
#ifndef XPU_RECORD_FILES_ELF_FUNCS_H
#define XPU_RECORD_FILES_ELF_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* the file offsets of the functions names[0..n) of the ELF
 * file path (defined in its dynamic or full symbol table); 0 when all found.
 * Regular files only, read with a time bound (common/bounded.h); names are
 * static strings (at most ELF_FUNCS_MAX). */
#define ELF_FUNCS_MAX	4
#define ELF_FUNCS_KNOWN	8
int elf_funcs__offsets(const char *path, const char *const *names, int n, uint64_t *offs);
struct elf_funcs_file {
	int fd;			/* the file opened: the caller closes it */
	uint64_t key;		/* st_dev << 40 ^ st_ino: the same file by another path */
	bool read;		/* key was not one of known[]: the offsets were read */
	bool ok;		/* read, and every function found */
	uint64_t off[ELF_FUNCS_MAX];
};
/* Opens path (0 and *out, or -errno) and, unless its key is one of
 * known[0..nr_known), reads the offsets of names[0..n) into out->off. */
int elf_funcs__open(const char *path, const char *const *names, int n, const uint64_t *known,
		    int nr_known, struct elf_funcs_file *out);

/* A function symbol's address as a file offset, through its own section
 * (what libbpf computes for a uprobe by name): an executable section only;
 * 0, or -1. (For elf_demangled.c: gelf.h's types.) */
#ifdef _GELF_H
int elf_funcs__to_offset(Elf *e, const GElf_Sym *sym, uint64_t *off);
#endif

#endif
