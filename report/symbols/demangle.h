/* SPDX-License-Identifier: MIT */
/*
 * C++ symbol demangling through libiberty's cplus_demangle, as perf and
 * binutils do. Without libiberty (HAVE_LIBIBERTY unset) names stay mangled.
 */
#ifndef XPU_REPORT_DEMANGLE_H
#define XPU_REPORT_DEMANGLE_H

#include <stdbool.h>

/* Returns a malloc'd demangled name, or NULL when name is not a mangled C++
 * name (or demangling is built out). params: include the argument list. */
char *demangle(const char *name, bool params);

/* Whether demangling was built in. */
bool demangle__available(void);

#endif
