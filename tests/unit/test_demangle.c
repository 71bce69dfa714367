// SPDX-License-Identifier: MIT
/* C++ demangling with and without parameters, and the cached display name. */
#include <string.h>
#include "tests/unit/test.h"
#include "report/symbols/demangle.h"
#include "report/symbols/symbol.h"

static void test_demangle_params(void)
{
	char *d;

	if (!demangle__available()) {
		TEST_ASSERT(demangle("_ZN3foo3barEi", true) == NULL);
		return;
	}
	d = demangle("_ZN3foo3barEi", true);
	TEST_ASSERT(d && !strcmp(d, "foo::bar(int)"));
	free(d);
	d = demangle("_ZN3foo3barEi", false);
	TEST_ASSERT(d && !strcmp(d, "foo::bar"));
	free(d);
	d = demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", true);
	TEST_ASSERT(d && !strcmp(d, "std::vector<int, std::allocator<int> >::push_back(int const&)"));
	free(d);
	d = demangle("_ZZ4mainENKUlvE_clEv", true);	/* a lambda */
	TEST_ASSERT(d && !strcmp(d, "main::{lambda()#1}::operator()() const"));
	free(d);
}

static void test_demangle_not_mangled(void)
{
	TEST_ASSERT(demangle("main", true) == NULL);
	TEST_ASSERT(demangle("_start", true) == NULL);
	TEST_ASSERT(demangle("_Z", true) == NULL);	/* malformed: left alone */
}

static void test_demangle_cached(void)
{
	struct symtab st;
	struct symbol *s;
	const char *a, *b;

	symtab__init(&st, true);
	symtab__add(&st, 0x100, 0x10, "_Z3addii", STB_GLOBAL);
	symtab__add(&st, 0x200, 0x10, "plain_c", STB_GLOBAL);
	symtab__finish(&st);
	s = symtab__find(&st, 0x104);
	TEST_ASSERT(s);
	a = symtab__display(&st, s);
	b = symtab__display(&st, s);
	TEST_ASSERT(a == b);		/* computed once */
	TEST_ASSERT(!strcmp(a, demangle__available() ? "add(int, int)" : "_Z3addii"));
	s = symtab__find(&st, 0x200);
	TEST_ASSERT(s && !strcmp(symtab__display(&st, s), "plain_c"));
	symtab__exit(&st);
}

int main(void)
{
	TEST_RUN(test_demangle_params);
	TEST_RUN(test_demangle_not_mangled);
	TEST_RUN(test_demangle_cached);
	TEST_EXIT();
}
