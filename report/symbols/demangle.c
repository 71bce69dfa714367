// SPDX-License-Identifier: MIT
/* C++ demangling; callers cache the result (see symbol.c). */
#include <stdlib.h>
#include "report/symbols/demangle.h"

#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>

char *demangle(const char *name, bool params)
{
	/* Itanium names start with _Z; skip everything else without asking
	 * libiberty, which would try other (GNU v2, Rust legacy) schemes. */
	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	return cplus_demangle(name, DMGL_ANSI | (params ? DMGL_PARAMS : 0));
}

bool demangle__available(void)
{
	return true;
}
#else
char *demangle(const char *name, bool params)
{
	return NULL;
}

bool demangle__available(void)
{
	return false;
}
#endif
