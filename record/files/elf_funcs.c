// SPDX-License-Identifier: MIT
/*
 * File offsets of named functions of an ELF file, for uprobes placed by
 * offset (record/kernel/bpf.c's autograd probes): resolved once per file, then
 * attached per process without libbpf reading the file again (libtorch_cpu.so
 * is 450 MB with 100k+ dynamic symbols: 30-40 ms a lookup).
 *
 * The file is a traced program's (through /proc/PID/root), maybe replaced
 * since it was mapped: a regular file only (common/file.h; a FIFO put in
 * its place once hung the recorder in open()), read with a time bound
 * (common/bounded.h). The descriptor read is handed out, so the probes go
 * on the file whose offsets were read, not on what the path names later.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "common/bounded.h"
#include "common/file.h"
#include "record/files/elf_funcs.h"

/* The symbol's address as a file offset, through its own section (what
 * libbpf computes for a uprobe by name): an executable section only. */
int elf_funcs__to_offset(Elf *e, const GElf_Sym *sym, uint64_t *off)
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

/* The offsets of names[0..n) in the ELF file at fd; 0 when all found. */
static int elf_funcs__read_fd(int fd, const char *const *names, int n, uint64_t *offs)
{
	Elf_Scn *scn = NULL;
	int found = 0;
	Elf *e;

	memset(offs, 0, (size_t)n * sizeof(*offs));
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -1;
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
	return found == n ? 0 : -1;
}

struct elf_funcs_job {
	char path[PATH_MAX];
	const char *names[ELF_FUNCS_MAX];	/* static strings: a job left behind reads them */
	int n, nr_known;
	uint64_t known[ELF_FUNCS_KNOWN];
	struct elf_funcs_file out;
};

static int elf_funcs__job(void *arg)
{
	struct elf_funcs_job *j = arg;
	struct stat st;
	int fd;

	fd = file__open_regular(j->path, 0, FILE_ELF_MAX, &st);
	if (fd < 0)
		return fd;
	j->out.fd = fd;
	j->out.key = (uint64_t)st.st_dev << 40 ^ (uint64_t)st.st_ino;
	for (int i = 0; i < j->nr_known; i++)
		if (j->known[i] == j->out.key)
			return 0;
	j->out.read = true;
	j->out.ok = !elf_funcs__read_fd(fd, j->names, j->n, j->out.off);
	return 0;
}

static void elf_funcs__drop(void *arg)
{
	struct elf_funcs_job *j = arg;

	if (j->out.fd >= 0)
		close(j->out.fd);
}

int elf_funcs__open(const char *path, const char *const *names, int n, const uint64_t *known,
		    int nr_known, struct elf_funcs_file *out)
{
	struct elf_funcs_job j = { .n = n, .nr_known = nr_known, .out.fd = -1 };
	int ret;

	if (n < 1 || n > ELF_FUNCS_MAX || nr_known < 0 || nr_known > ELF_FUNCS_KNOWN) {
		*out = j.out;
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(j.path)) {
		*out = j.out;
		return -ENAMETOOLONG;
	}
	strcpy(j.path, path);
	memcpy(j.names, names, (size_t)n * sizeof(*names));
	if (nr_known)		/* before *out is written: known may be in it */
		memcpy(j.known, known, (size_t)nr_known * sizeof(*known));
	*out = j.out;
	ret = bounded__call(elf_funcs__job, elf_funcs__drop, &j, sizeof(j));
	if (ret) {
		if (j.out.fd >= 0)	/* cannot be: fn failed before opening */
			close(j.out.fd);
		return ret;
	}
	*out = j.out;
	return 0;
}

int elf_funcs__offsets(const char *path, const char *const *names, int n, uint64_t *offs)
{
	struct elf_funcs_file f;
	int ret;

	memset(offs, 0, (size_t)n * sizeof(*offs));
	ret = elf_funcs__open(path, names, n, NULL, 0, &f);
	if (ret)
		return ret;
	close(f.fd);
	if (!f.ok)
		return -ENOENT;
	memcpy(offs, f.off, (size_t)n * sizeof(*offs));
	return 0;
}
