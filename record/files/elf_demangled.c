// SPDX-License-Identifier: MIT
/*
 * File offsets of functions found by their demangled C++ names, for
 * uprobes on functions whose mangled names change with their signatures'
 * spelling across versions (PyTorch's NativeCachingAllocator::malloc took
 * an int device, now a signed char): libiberty's cplus_demangle, as the
 * report's names (report/symbols/demangle.c). Only symbols whose mangled
 * name holds the function's own length-prefixed name are demangled, so a
 * library of 100k symbols costs a few of them.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/files/elf_demangled.h"
#include "record/files/elf_funcs.h"

#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

bool elf_demangled__key(const char *demangled, char *buf, int size)
{
	const char *paren = strchr(demangled, '('), *start;
	int n;

	if (!paren)
		return false;
	for (start = paren; start > demangled && start[-1] != ':' && start[-1] != ' '; start--)
		;
	n = (int)(paren - start);
	if (n <= 0)
		return false;
	return snprintf(buf, (size_t)size, "%d%.*s", n, n, start) < size;
}

#ifdef HAVE_LIBIBERTY
/* Marks the symbol against every name it is: the count it found. */
static int elf_demangled__match(Elf *e, const GElf_Sym *sym, const char *mangled,
				const char *const *names, char keys[][80], int n, uint64_t *offs)
{
	char *d = NULL;
	int found = 0;

	for (int k = 0; k < n; k++) {
		if (offs[k] || !strstr(mangled, keys[k]))
			continue;
		if (!d && !(d = cplus_demangle(mangled, DMGL_ANSI | DMGL_PARAMS)))
			return 0;
		if (!strcmp(d, names[k]) && !elf_funcs__to_offset(e, sym, &offs[k]))
			found++;
	}
	free(d);
	return found;
}

int elf_demangled__offsets(int fd, const char *const *names, int n, uint64_t *offs)
{
	char keys[ELF_FUNCS_MAX][80];
	Elf_Scn *scn = NULL;
	int found = 0;
	Elf *e;

	if (n < 1 || n > ELF_FUNCS_MAX)
		return -EINVAL;
	memset(offs, 0, (size_t)n * sizeof(*offs));
	for (int k = 0; k < n; k++)
		if (!elf_demangled__key(names[k], keys[k], sizeof(keys[k])))
			return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -EINVAL;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -EINVAL;
	}
	while (found < n && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; found < n && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)) || name[0] != '_' ||
			    name[1] != 'Z')
				continue;
			found += elf_demangled__match(e, &sym, name, names, keys, n, offs);
		}
	}
	elf_end(e);
	return found;
}
#else
int elf_demangled__offsets(int fd, const char *const *names, int n, uint64_t *offs)
{
	memset(offs, 0, (size_t)n * sizeof(*offs));
	return -ENOTSUP;
}
#endif
