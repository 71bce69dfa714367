/* SPDX-License-Identifier: MIT */
/*
 * Annotate: one native function's machine code, disassembled by capstone
 * from the bytes of its ELF file (found through the session's DSOs, so the
 * build-id check applies), each instruction with its share of the samples
 * whose leaf pc was that instruction (profile__addr_weight), and the source
 * file:line from DWARF line info (srcline.h: the file's own or a separate
 * debug file's) where there is one, naming the function when the line is
 * in code inlined there. Calls and jumps out of the function name their
 * target: "call 0x1130 <do_work>", "call 0x1030 <malloc@plt>".
 *
 * The result is a list of lines any renderer can show: the TUI's annotate
 * view, or annotation__fprint() for text.
 */
#ifndef XPU_REPORT_ANNOTATE_H
#define XPU_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/session/session.h"

enum annotate_line_kind {
	ANNOTATE_INSN,		/* one instruction */
	ANNOTATE_SOURCE,	/* "file.c:42  source text" before the insns of a line */
};

struct annotate_line {
	enum annotate_line_kind kind;
	uint64_t addr;		/* ANNOTATE_INSN: address in the file's address space */
	double weight;		/* samples at this instruction */
	char *text;		/* "mnemonic operands", or the source line */
};

struct annotation {
	char *title;		/* "name (module) 0xaddr, size N" */
	struct annotate_line *lines;
	size_t nr, cap;
	double total;		/* sum of instruction weights */
	size_t nr_insns;
	size_t hottest;		/* index of the heaviest instruction line */
	bool has_lines;		/* DWARF line info was found */
	bool lines_off;		/* --no-srcline: none was looked for */
};

/* Disassembles frame frame_id of s->profile. Returns 0, or a negative errno
 * with a one-line reason in err (size errlen): -ENOTSUP (not a native user
 * frame, or built without capstone), -ENOENT (ELF not available, or the
 * symbol is not in it), -EINVAL (undecodable bytes). */
int annotate__frame(struct annotation *a, struct session *s, uint32_t frame_id,
		    char *err, size_t errlen);
void annotation__exit(struct annotation *a);

/* " 12.34%   1234  401136:  mov eax, 1" style line for insn lines. */
size_t annotation__format(const struct annotation *a, size_t i, char *buf, size_t size);
int annotation__fprint(const struct annotation *a, FILE *fp);

#endif
