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
 * Lookups are cheap after the first one in a compilation unit: the first
 * walks the unit's DIE tree once and keeps its subprogram and
 * inlined-subroutine ranges, flattened into sorted segments each naming the
 * innermost one (dwarf_getscopes walks the tree again for every address,
 * about a millisecond per address in CPython's ceval.c). Line tables are
 * libdw's (dwarf_getsrc_die). The state hangs off the DSO and is freed with
 * it (srcline__dso_exit from dso.c).
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
 * Returns 0, or -ENOENT when the DSO has no DWARF or none covers vaddr
 * (out->n = 0). Strings stay valid while the DSO lives. */
int srcline__lookup(struct dso *dso, uint64_t vaddr, unsigned flags, struct srcline_chain *out);

/* "dir/file.c:42" -> "file.c:42" into buf: how tables show a location. */
const char *srcline__basename(const char *file);

/* Frees what srcline__lookup() kept on the DSO. */
void srcline__dso_exit(struct dso *dso);

#endif
