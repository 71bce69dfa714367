/* SPDX-License-Identifier: MIT */
/*
 * The CPython layouts the interpreter walk uses (python_layout.c): the
 * hand-made tables of 3.10-3.13, and the layout read from an interpreter's
 * own _Py_DebugOffsets (3.13+), the table CPython keeps at the start of
 * _PyRuntime for out-of-process debuggers (Documentation/design-python.md).
 */
#ifndef XPU_RECORD_PYTHON_LAYOUT_H
#define XPU_RECORD_PYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/xpu_events.h"

struct py_layout {
	struct xpu_bpf_py_cfg cfg;	/* the layout part; addresses filled per process */
	/* code objects, strings, bytes: read by user space */
	uint16_t co_filename, co_qualname, co_firstlineno, co_linetable;
	uint16_t ascii_size, compact_size;	/* sizeof(PyASCIIObject), (PyCompactUnicodeObject) */
	uint16_t bytes_sval;			/* offsetof(PyBytesObject, ob_sval) */
	uint8_t from_debug;			/* read from _Py_DebugOffsets */
};

/* The hand-made layout of CPython version (0x030b), or NULL. 3.13's is kept
 * for the tests' cross-check only unless hand_313 (the walk takes 3.13's
 * from the interpreter). */
const struct py_layout *python_layout__table(unsigned version, bool hand_313);

/* Bytes of _PyRuntime's start that python_layout__debug() may need. */
#define PY_DEBUG_READ	1024

enum {
	PY_DEBUG_OK = 0,
	PY_DEBUG_NONE,			/* no "xdebugpy" cookie: not a _Py_DebugOffsets */
	PY_DEBUG_UNKNOWN,		/* a version whose _Py_DebugOffsets is not known here */
	PY_DEBUG_BAD,			/* its values fail the checks (why says which) */
	PY_DEBUG_FREE_THREADED,		/* a free-threaded build */
};

/*
 * Fills *out from the _Py_DebugOffsets at buf (len bytes of _PyRuntime's
 * initial value, from the interpreter's file). The version is its own
 * (out->cfg.version, also set for PY_DEBUG_UNKNOWN and _FREE_THREADED).
 * Returns PY_DEBUG_*; *why (static text) says what failed.
 */
int python_layout__debug(const uint8_t *buf, size_t len, struct py_layout *out,
			 const char **why);

#endif
