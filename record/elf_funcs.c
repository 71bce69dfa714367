// SPDX-License-Identifier: MIT
/*
 * File offsets of named functions of an ELF file, for uprobes placed by
 * offset (record/bpf.c's autograd probes): resolved once per file, then
 * attached per process without libbpf reading the file again (libtorch_cpu.so
 * is 450 MB with 100k+ dynamic symbols: 30-40 ms a lookup).
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "record/record.h"

/* The symbol's address as a file offset, through its own section (what
 * libbpf computes for a uprobe by name): an executable section only. */
static int elf_funcs__to_offset(Elf *e, const GElf_Sym *sym, uint64_t *off)
{
	Elf_Scn *scn = elf_getscn(e, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
	    !(sh.sh_flags & SHF_EXECINSTR) || sym->st_value < sh.sh_addr ||
	    sym->st_value >= sh.sh_addr + sh.sh_size)
		return -1;
	*off = sym->st_value - sh.sh_addr + sh.sh_offset;
	return 0;
}

int elf_funcs__offsets(const char *path, const char *const *names, int n, uint64_t *offs)
{
	Elf_Scn *scn = NULL;
	int fd, found = 0;
	Elf *e;

	memset(offs, 0, (size_t)n * sizeof(*offs));
	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (!(e = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return -1;
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
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			for (int k = 0; k < n; k++)
				if (!offs[k] && !strcmp(name, names[k]) &&
				    !elf_funcs__to_offset(e, &sym, &offs[k]))
					found++;
		}
	}
	elf_end(e);
	close(fd);
	return found == n ? 0 : -1;
}
