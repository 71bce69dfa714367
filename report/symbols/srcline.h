/* SPDX-License-Identifier: MIT */
/*
 * Inline chains and source lines of code addresses, from a DSO's DWARF (its
 * own .debug_info, or the separate debug file the finder chain gives:
 * dso__dwarf_elf()), as `eu-addr2line -i` and perf's srcline/inline code
 * answer them: for an address, the function the symbol table names, the
 * functions inlined into it down to the one the address is in, and the
 * file:line each of them is at.
 *
 * For pc inside bar, inlined into foo (call at foo.c:20), itself inlined
 * into main (call at main.c:7):
 *
 *	lv[0]	name NULL (the symbol: main)	main.c:7	DW_AT_call_* of foo
 *	lv[1]	"foo"				foo.c:20	DW_AT_call_* of bar
 *	lv[2]	"bar"				bar.c:3		the line table at pc
 *
 * The per-file state is built in steps, each on first need: the compilation
 * units' address ranges (.debug_aranges, else each unit's DIE); per unit, its
 * functions with their ranges (a walk of the unit's top-level DIEs); per
 * function, what was inlined into it, flattened into sorted disjoint
 * segments each naming the innermost inlined call (a walk of the function's
 * DIEs). A lookup is then three binary searches and a walk up the parents;
 * dwarf_getscopes, which eu-addr2line uses, walks the unit again for every
 * address: a millisecond per address in CPython's ceval.c. Lines come from
 * libdw's line tables (dwarf_getsrc_die), read per unit on first use.
 *
 * libdw reads (and decompresses) every DWARF section it knows when it opens
 * a file; srcline reads the file through a private copy of its section
 * headers where the sections it never uses are renamed away, and, when the
 * first lookup asks for no lines, the line tables too: the first lookup's
 * flags decide what later ones can get. The state hangs off the DSO and is
 * freed with it (dso.c calls the srcline_exit the DSO holds, which
 * srcline__open() sets to srcline__dso_exit: dso.c does not include this
 * header, srcline.c includes dso.h).
 */
#ifndef XPU_REPORT_SRCLINE_H
#define XPU_REPORT_SRCLINE_H

#include <stdbool.h>
#include <stdint.h>

struct dso;

enum srcline_flags {
	SRCLINE_INLINE = 1,	/* the inlined levels */
	SRCLINE_LINES = 2,	/* file:line of each level */
};

#define SRCLINE_MAX_DEPTH 32	/* deeper inline nesting keeps the outer levels */

struct srcline_level {
	const char *name;	/* inlined function's display name; NULL for lv[0] */
	const char *file;	/* as DWARF names it (maybe relative to comp_dir); NULL: unknown */
	uint32_t line;		/* 0: unknown */
};

struct srcline_chain {
	int n;			/* levels, >= 1 when the lookup succeeded */
	const char *comp_dir;	/* of the compilation unit, for relative file names */
	struct srcline_level lv[SRCLINE_MAX_DEPTH];
};

/* The chain at vaddr (the DSO's own address space) with what flags ask for.
 * SRCLINE_LINES without SRCLINE_INLINE (--no-inline) gives one level at a
 * line of the symbol's own function: the call of the outermost function
 * inlined at vaddr, or the line table's line where nothing is. Returns 0, or -ENOENT when the DSO has no DWARF or none covers vaddr
 * (out->n = 0). Strings stay valid while the DSO lives. */
int srcline__lookup(struct dso *dso, uint64_t vaddr, unsigned flags, struct srcline_chain *out);

/* "dir/file.c:42" -> "file.c:42" into buf: how tables show a location. */
const char *srcline__basename(const char *file);

/* Frees what srcline__lookup() kept on the DSO. */
void srcline__dso_exit(struct dso *dso);

#endif
