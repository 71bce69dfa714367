/* SPDX-License-Identifier: MIT */
/*
 * An ELF file's PT_LOAD segments and the load bias of a mapping of it: one
 * computation for the report (report/symbols/dso.c: symbols, annotate, the
 * unwinder's rules) and the recorder (record/unwind/unwind_reads.c, which must
 * find the rules the report will), so the two can never disagree.
 */
#ifndef XPU_COMMON_ELF_SEGS_H
#define XPU_COMMON_ELF_SEGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct elf_seg {		/* a PT_LOAD segment */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	bool exec;
};

/* The PT_LOAD segments of elf in program header order, in *segs (malloc'd,
 * NULL when none); returns their number. */
size_t elf_segs__read(Elf *elf, struct elf_seg **segs);

/*
 * The load bias (runtime address - file address) of a mapping that puts
 * file offset pgoff at map_start: 0 for an ET_EXEC file; else from the
 * segment whose file range holds pgoff, executable ones first (executable
 * mappings are recorded; small files share pages between segments), else
 * the first one.
 */
uint64_t elf_segs__bias(const struct elf_seg *segs, size_t n, bool exec_type,
			uint64_t map_start, uint64_t pgoff);

#endif
