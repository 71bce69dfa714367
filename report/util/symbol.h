/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables: a sorted array searched by address. Built from an ELF's
 * .symtab (else .dynsym), or from XPU_REC_KSYM / XPU_REC_PERF_MAP records.
 * Zero-size symbols extend to the next symbol. Demangled names are computed
 * on first use and cached in the symbol.
 */
#ifndef XPU_REPORT_SYMBOL_H
#define XPU_REPORT_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct symbol {
	uint64_t addr;
	uint64_t size;
	const char *name;		/* raw (mangled) name */
	char *display;			/* demangled, or NULL until first asked */
	uint8_t binding;		/* STB_* (choose among aliases) */
};

struct symtab {
	struct symbol *syms;
	size_t nr, cap;
	bool owns_names;		/* names were copied (records), else point into the ELF */
	bool sorted;
	/* the string table of a mapped file the names point into: its pages
	 * go back as names are read (symtab__lookup) */
	Elf *names_elf;
	const void *names_buf;
	size_t names_size;
	unsigned names_reads;
};

void symtab__init(struct symtab *st, bool owns_names);
void symtab__exit(struct symtab *st);

/* Adds one symbol; name is copied when the table owns its names. */
void symtab__add(struct symtab *st, uint64_t addr, uint64_t size, const char *name,
		 uint8_t binding);

/* Loads function symbols of .symtab, or .dynsym when there is no .symtab.
 * Names point into elf's data: elf must outlive st. Returns 0 or -ENOENT
 * when the file has neither table. Sorts the table. mapped: elf was
 * opened with ELF_C_READ_MMAP on a file, and the pages of its symbol
 * entries and string table are given back once read (elf_pages.h; names
 * are read again where used). */
int symtab__load_elf(struct symtab *st, Elf *elf, bool mapped);

/* Sorts, merges aliases (one symbol per address) and fixes zero sizes.
 * Must be called after the last symtab__add() and before lookups. */
void symtab__finish(struct symtab *st);

/* The symbol containing addr, or NULL. */
struct symbol *symtab__find(const struct symtab *st, uint64_t addr);

/* symtab__find() for a caller that goes on to read the name: every
 * ELF_PAGES_EVERY calls, the pages of the names read so far go back. */
struct symbol *symtab__lookup(struct symtab *st, uint64_t addr);

/* Display name: demangled C++ with parameters, else the raw name. Cached. */
const char *symbol__display(struct symbol *sym);

#endif
