/* SPDX-License-Identifier: MIT */
/*
 * SASS offsets to source lines from a cubin's DWARF line table (GPU PC
 * sampling, format: XPU_REC_GPU_CUBIN). nvcc -lineinfo (or -G) writes a
 * .debug_line section whose addresses are offsets from the start of a
 * function: each sequence starts with DW_LNE_set_address, relocated
 * (.rela.debug_line) against that function's symbol. The cubin is read from
 * memory as stored in the trace, with no libelf or libdw and no toolkit:
 * ELF64 little-endian, line programs of DWARF 2 to 4 (what nvcc writes); a
 * cubin without them, or damaged, gives no lines.
 */
#ifndef XPU_REPORT_GPU_CUBIN_LINES_H
#define XPU_REPORT_GPU_CUBIN_LINES_H

#include <stddef.h>
#include <stdint.h>

struct cubin_row {
	uint32_t func;			/* index into funcs */
	uint32_t file;			/* index into files */
	uint64_t addr;			/* offset in the function */
	uint32_t line;			/* 0: end of a sequence */
	uint32_t seq;			/* rows of one sequence share it */
};

struct cubin_lines {
	char **funcs;			/* mangled names */
	size_t nr_funcs;
	char **files;			/* as the line table names them, with their directory */
	size_t nr_files;
	struct cubin_row *rows;		/* sorted by (func, addr, seq) */
	size_t nr_rows;
};

/* Parses the cubin's line table. Returns 0 (possibly no rows: a cubin
 * without -lineinfo), or -EINVAL for what is not an ELF64 cubin. */
int cubin_lines__parse(struct cubin_lines *cl, const void *data, size_t size);
void cubin_lines__exit(struct cubin_lines *cl);

/* The file and line of offset off in function func (mangled). Returns 0,
 * or -ENOENT when no row covers it. */
int cubin_lines__lookup(const struct cubin_lines *cl, const char *func, uint64_t off,
			const char **file, uint32_t *line);

#endif
