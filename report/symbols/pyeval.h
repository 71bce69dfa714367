/* SPDX-License-Identifier: MIT */
/*
 * The eval loop of a CPython interpreter stripped of its local symbols
 * (Documentation/design-python.md, "Eval frames without symbols").
 *
 * callchain__resolve() puts each activation's Python frames where the
 * native stack has its _PyEval_EvalFrameDefault frame. Debian's 3.14 and
 * 3.15 (GCC, PGO) have the exported _PyEval_EvalFrameDefault only as a
 * short head that jumps into a part of its own placed apart, its ".cold"
 * part, which holds the whole dispatch loop: every opcode's code, so the
 * pc of a running activation is there, under no symbol once the binary is
 * stripped. That part is found without symbols: the code that the
 * exported function's direct jumps lead into (an FDE of .eh_frame other
 * than its own) and where a table of at least 256 code pointers, the
 * opcode dispatch table (computed gotos), points. It gets the local
 * symbol "_PyEval_EvalFrameDefault.cold", the name GCC gives it.
 */
#ifndef XPU_REPORT_PYEVAL_H
#define XPU_REPORT_PYEVAL_H

#include <gelf.h>
#include "report/symbols/symbol.h"

/* The least number of consecutive code pointers into the part taken as the
 * dispatch table (CPython's has 256 entries). */
#define PYEVAL_TABLE_MIN	256

/*
 * If elf exports _PyEval_EvalFrameDefault and its eval loop lies apart
 * under no symbol of st (above), adds that part to st as
 * "_PyEval_EvalFrameDefault.cold" (st finished again). Returns 0 when
 * added, -ENOENT otherwise (not an interpreter, or nothing to add).
 * *start and *size (may be NULL) get the part's file addresses.
 */
int pyeval__add_symbols(struct symtab *st, Elf *elf, uint64_t *start, uint64_t *size);

#endif
