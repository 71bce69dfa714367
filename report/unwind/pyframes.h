/* SPDX-License-Identifier: MIT */
/*
 * Python frames from the interpreter walk (PY_STACK / PY_CODE records,
 * Documentation/design-python.md): the code objects of each process (pass
 * 1), the PY_STACK waiting for the SAMPLE or GPU_CORR record that follows
 * it (pass 2), each frame's name "py::qualname:file:line" (the line from
 * the version's line table at the frame's instruction offset; without it
 * under --no-py-lines, which groups by function) and the splice into the
 * native stack: callchain__resolve() replaces each _PyEval_EvalFrameDefault
 * frame by the Python frames that activation ran, innermost first.
 */
#ifndef XPU_REPORT_PYFRAMES_H
#define XPU_REPORT_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "format/reader.h"
#include "report/profile/profile.h"

struct pyframes {
	struct bmap codes;		/* (pid, addr) -> struct py_code */
	struct bmap cache;		/* (pid, code, offset) -> frame + 1 | loc << 32 */
	struct u64map parents;		/* pid -> parent pid (FORK of a process) */
	struct py_recent *recent;	/* in front of cache: the entries used last */
	bool no_lines;			/* --no-py-lines */
	/* the PY_STACK waiting for its record */
	bool pending;
	bool taken;			/* resolved at least once (the GPU join resolves
					 * some samples a second time) */
	uint32_t pid, tid;
	uint64_t time;
	uint16_t nr;
	struct xpu_py_frame fr[512];
	uint64_t stacks, used, unmatched;	/* PY_STACK records: read, spliced, orphans */
	uint64_t unknown_code;		/* frames whose code had no PY_CODE */
};

void pyframes__init(struct pyframes *py);
void pyframes__exit(struct pyframes *py);
/* Pass 1: a new process pid forked from ppid. A code object the recorder
 * could not read in the child (gone before it was read) is looked for in
 * its parent, where the same address and key name the same object. */
void pyframes__fork(struct pyframes *py, uint32_t pid, uint32_t ppid);
/* Pass 1: a PY_CODE record. */
void pyframes__code(struct pyframes *py, const struct xpu_record *rec);
/* Pass 2: a PY_STACK record (pending for the next record); any other
 * record ends a pending one that was not taken. */
void pyframes__record(struct pyframes *py, const struct xpu_record *rec);
/* The pending frames if they belong to (tid, time): *nr of them, innermost
 * first, until the next record. NULL if none. */
const struct xpu_py_frame *pyframes__take(struct pyframes *py, uint32_t tid, uint64_t time,
					  uint16_t *nr);
/* The frame of one Python frame of pid, and its location (*loc, 0: none). */
uint32_t pyframes__frame(struct pyframes *py, struct profile *p, uint32_t pid,
			 const struct xpu_py_frame *f, uint32_t *loc);
/* Whether a frame name is the eval loop's ("_PyEval_EvalFrameDefault", or
 * a part of it like ".cold"). */
bool pyframes__is_eval(const char *name);
/* Whether two frame names are one Python function at different lines
 * ("py::f:file.py:12" and "py::f:file.py:40"): where a stack is matched by
 * function, not by line (NVTX ranges placed at their push point). */
bool pyframes__same_function(const char *a, const char *b);
/* The line of a code offset (bytes) from a line table of version (0x030a:
 * PEP 626 pairs; 0x030b+: location table); -1 when it has none. */
int pyframes__line(uint16_t version, const uint8_t *table, size_t size, int firstlineno,
		   uint32_t offset);

/* Whether s is valid UTF-8 without control characters (names of PY_CODE). */
bool pyframes__text_ok(const char *s);

#endif
