/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables: a sorted array searched by address. Built from an ELF's
 * .symtab (else .dynsym), or from XPU_REC_KSYM / XPU_REC_PERF_MAP records.
 * Zero-size symbols extend to the next symbol. Demangled names are computed
 * on first use and cached by the table.
 */
#ifndef XPU_REPORT_SYMBOL_H
#define XPU_REPORT_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include "common/hashmap.h"

/*
 * 16 bytes a symbol: a GPT-2 report loads a million (PyPI's libtorch_cpu.so
 * alone 355,743). The name is an offset: into the file's string table the
 * table was loaded from (names_base), or, with SYMBOL_OWN set, into the
 * table's own copies (records, a second file's names). Bindings sit beside
 * the entries (alias choice only); display names in a map by index.
 */
#define SYMBOL_OWN	(1u << 31)

struct symbol {
	uint64_t addr;
	uint32_t size;			/* bytes; clamped to UINT32_MAX */
	uint32_t name;			/* offset of the raw (mangled) name, see above */
};

struct symtab {
	struct symbol *syms;
	size_t nr, cap;
	uint8_t *binding;		/* STB_* of syms[i] (choose among aliases) */
	size_t binding_cap;
	bool owns_names;		/* every name copied (records) */
	bool sorted;
	const char *names_base;		/* the string table offsets point into, or NULL */
	size_t names_base_size;
	char *own;			/* copied names, NUL-ended, at SYMBOL_OWN offsets */
	size_t own_len, own_cap;
	struct u64map display;		/* index -> display name (owned) */
	/* the string table of a mapped file the names point into: its pages
	 * go back as names are read (symtab__lookup) */
	Elf *names_elf;
	const void *names_buf;
	size_t names_size;
	unsigned names_reads;
};

void symtab__init(struct symtab *st, bool owns_names);
void symtab__exit(struct symtab *st);

/* Adds one symbol; name is copied unless it lies in names_base (set by
 * symtab__load_elf() for the file's string table). */
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

/* The raw (mangled) name of sym, a symbol of st. */
static inline const char *symtab__name(const struct symtab *st, const struct symbol *sym)
{
	return sym->name & SYMBOL_OWN ? st->own + (sym->name & ~SYMBOL_OWN)
				      : st->names_base + sym->name;
}

/* Display name: demangled C++ with parameters, else the raw name without
 * its symbol version. Cached. */
const char *symtab__display(struct symtab *st, const struct symbol *sym);

#endif
