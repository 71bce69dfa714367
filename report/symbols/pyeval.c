// SPDX-License-Identifier: MIT
/* The eval loop of a stripped CPython interpreter: see pyeval.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/elf_section.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/symbols/pyeval.h"

#define PYEVAL_NAME		"_PyEval_EvalFrameDefault"
#define PYEVAL_MAX_TARGETS	64	/* distinct parts the head may jump into */
#define PYEVAL_MAX_DYNSYM	100000	/* without .gnu.hash: a linear search below this */
#define PYEVAL_MIN_CHANGES	16	/* a table of one repeated pointer is no dispatch table */

struct pyeval_range {
	uint64_t start, end;
};

/* The bytes at file address [addr, addr + len) of an allocated section with
 * contents, or NULL. */
static const uint8_t *pyeval__at(Elf *elf, uint64_t addr, uint64_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static bool pyeval__is_code(Elf *elf, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type == SHT_PROGBITS && addr >= sh.sh_addr &&
		    addr - sh.sh_addr < sh.sh_size)
			return true;
	return false;
}

static uint32_t pyeval__gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

static bool pyeval__sym_is(Elf *elf, Elf_Data *syms, size_t strndx, size_t i, const char *name,
			   GElf_Sym *sym)
{
	const char *n;

	if (!gelf_getsym(syms, (int)i, sym) || sym->st_name == 0 ||
	    GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF)
		return false;
	n = elf_strptr(elf, strndx, sym->st_name);
	return n && !strcmp(n, name);
}

/* The dynamic symbol name, a function the file defines: through .gnu.hash
 * (no walk over the names of a library exporting 100k symbols), else a
 * search of a small .dynsym. */
static bool pyeval__dynsym(Elf *elf, const char *name, GElf_Sym *sym)
{
	Elf_Scn *scn = NULL, *hash = NULL, *dynsym = NULL;
	GElf_Shdr sh, hsh;
	Elf_Data *syms, *hd;
	size_t nsyms;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_HASH)
			hash = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	if (!dynsym || !gelf_getshdr(dynsym, &sh) || sh.sh_entsize != sizeof(Elf64_Sym) ||
	    !(syms = elf_getdata(dynsym, NULL)) || !syms->d_buf)
		return false;
	nsyms = syms->d_size / sh.sh_entsize;
	if (hash && gelf_getshdr(hash, &hsh) && hsh.sh_link == elf_ndxscn(dynsym) &&
	    (hd = elf_getdata(hash, NULL)) && hd->d_buf && hd->d_size >= 16) {
		const uint32_t *w = hd->d_buf;
		size_t nw = hd->d_size / 4;
		uint32_t nbuckets = w[0], symoffset = w[1], bloom = w[2];
		uint32_t h = pyeval__gnu_hash(name);
		size_t buckets = 4 + (size_t)bloom * 2, chain = buckets + nbuckets;

		if (!nbuckets || chain > nw || bloom > nw)
			return false;
		for (uint32_t i = w[buckets + h % nbuckets]; i >= symoffset && i < nsyms; i++) {
			uint32_t h2;

			if (chain + (i - symoffset) >= nw)
				return false;
			h2 = w[chain + (i - symoffset)];
			if ((h | 1) == (h2 | 1) && pyeval__sym_is(elf, syms, sh.sh_link, i, name, sym))
				return true;
			if (h2 & 1)
				break;
		}
		return false;
	}
	if (nsyms > PYEVAL_MAX_DYNSYM)
		return false;
	for (size_t i = 1; i < nsyms; i++)
		if (pyeval__sym_is(elf, syms, sh.sh_link, i, name, sym))
			return true;
	return false;
}

/* .eh_frame_hdr's search table: the start of every FDE, sorted. */
struct pyeval_fdes {
	uint64_t hdr;			/* the section's address */
	const uint8_t *table;		/* (int32 start, int32 fde) pairs, from hdr */
	size_t nr;
};

static bool pyeval__fdes(Elf *elf, struct pyeval_fdes *f)
{
	const uint8_t *h;
	size_t ptr_size;
	uint32_t nr;
	GElf_Shdr sh;

	if (!elf_section__find(elf, ".eh_frame_hdr", &sh) || sh.sh_type != SHT_PROGBITS ||
	    sh.sh_size < 12 || !(h = pyeval__at(elf, sh.sh_addr, sh.sh_size)))
		return false;
	/* version 1; eh_frame_ptr of 4 or 8 bytes; a udata4 count; a table of
	 * datarel sdata4 (what every linker writes) */
	ptr_size = (h[1] & 0x0f) == 0x03 || (h[1] & 0x0f) == 0x0b ? 4 :
		   (h[1] & 0x0f) == 0x04 || (h[1] & 0x0f) == 0x0c ? 8 : 0;
	if (h[0] != 1 || !ptr_size || h[2] != 0x03 || h[3] != 0x3b || 4 + ptr_size + 4 > sh.sh_size)
		return false;
	memcpy(&nr, h + 4 + ptr_size, 4);
	f->hdr = sh.sh_addr;
	f->table = h + 4 + ptr_size + 4;
	f->nr = nr;
	return f->nr <= (sh.sh_size - (4 + ptr_size + 4)) / 8;
}

/* The code range of the FDE holding addr. The FDE's own pc_begin must be the
 * table's start (pcrel sdata4, or an absolute 8 bytes): its pc_range follows
 * in the same size. */
static bool pyeval__fde(Elf *elf, const struct pyeval_fdes *f, uint64_t addr,
			struct pyeval_range *r)
{
	size_t lo = 0, hi = f->nr;
	uint64_t start, fde, range;
	const uint8_t *p;
	int32_t loc, off, begin;
	uint32_t range4;

	while (hi - lo > 1) {		/* the last FDE starting at or before addr */
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, f->table + mid * 8, 4);
		if (f->hdr + (int64_t)loc <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (!f->nr)
		return false;
	memcpy(&loc, f->table + lo * 8, 4);
	memcpy(&off, f->table + lo * 8 + 4, 4);
	start = f->hdr + (int64_t)loc;
	fde = f->hdr + (int64_t)off;
	if (start > addr || !(p = pyeval__at(elf, fde, 24)))
		return false;
	memcpy(&begin, p + 8, 4);
	if (fde + 8 + (int64_t)begin == start) {
		memcpy(&range4, p + 12, 4);
		range = range4;
	} else if (!memcmp(p + 8, &start, 8)) {
		memcpy(&range, p + 16, 8);
	} else {
		return false;
	}
	if (addr - start >= range)
		return false;
	*r = (struct pyeval_range){ start, start + range };
	return true;
}

/* The parts of code (FDEs) other than the head's own that its direct jumps
 * (jmp rel32, jcc rel32) lead into. Bytes are taken as they come, not
 * decoded: a stray match only adds a candidate the table check drops. */
static size_t pyeval__jump_targets(Elf *elf, const struct pyeval_fdes *fdes, const GElf_Sym *head,
				   struct pyeval_range *out, size_t max)
{
	const uint8_t *code = pyeval__at(elf, head->st_value, head->st_size);
	struct pyeval_range own;
	size_t n = 0;

	if (!code || head->st_size < 6 || !pyeval__fde(elf, fdes, head->st_value, &own))
		return 0;
	for (uint64_t i = 0; i + 5 <= head->st_size && n < max; i++) {
		uint64_t at = head->st_value + i, to;
		struct pyeval_range r;
		int32_t rel;
		size_t k;

		if (code[i] == 0xe9) {
			memcpy(&rel, code + i + 1, 4);
			to = at + 5 + (int64_t)rel;
		} else if (code[i] == 0x0f && i + 6 <= head->st_size && (code[i + 1] & 0xf0) == 0x80) {
			memcpy(&rel, code + i + 2, 4);
			to = at + 6 + (int64_t)rel;
		} else {
			continue;
		}
		if ((to >= own.start && to < own.end) || !pyeval__is_code(elf, to) ||
		    !pyeval__fde(elf, fdes, to, &r))
			continue;
		for (k = 0; k < n && (out[k].start != r.start || out[k].end != r.end); k++)
			;
		if (k == n)
			out[n++] = r;
	}
	return n;
}

/* The 8-byte words of a data section as the loader leaves them: R_X86_64_RELATIVE
 * relocations of a shared object or PIE applied (a table of code pointers is
 * zeros in the file there). Caller frees. */
static uint64_t *pyeval__words(Elf *elf, const GElf_Shdr *sh, Elf_Data *d, size_t *nr)
{
	size_t n = d->d_size / 8;
	uint64_t *w = xmalloc((n ? n : 1) * sizeof(*w));
	Elf_Scn *scn = NULL;
	GElf_Shdr rsh;

	memcpy(w, d->d_buf, n * 8);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *rd;
		size_t nrel;

		if (!gelf_getshdr(scn, &rsh) || rsh.sh_type != SHT_RELA || !rsh.sh_entsize ||
		    !(rd = elf_getdata(scn, NULL)))
			continue;
		nrel = rd->d_size / rsh.sh_entsize;
		for (size_t i = 0; i < nrel; i++) {
			GElf_Rela r;
			uint64_t off;

			if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
			    r.r_offset < sh->sh_addr || (off = r.r_offset - sh->sh_addr) >= n * 8 ||
			    off % 8)
				continue;
			w[off / 8] = (uint64_t)r.r_addend;
		}
	}
	*nr = n;
	return w;
}

/* Whether a data section holds PYEVAL_TABLE_MIN consecutive pointers into
 * r, not all alike. */
static bool pyeval__has_table(Elf *elf, const struct pyeval_range *r)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		size_t n, run = 0, changes = 0;
		uint64_t *w;
		Elf_Data *d;
		bool found = false;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & SHF_EXECINSTR) || sh.sh_type != SHT_PROGBITS ||
		    sh.sh_size < PYEVAL_TABLE_MIN * 8 || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || d->d_size < PYEVAL_TABLE_MIN * 8)
			continue;
		w = pyeval__words(elf, &sh, d, &n);
		for (size_t i = 0; i < n && !found; i++) {
			if (w[i] < r->start || w[i] >= r->end) {
				run = changes = 0;
				continue;
			}
			changes += run && w[i] != w[i - 1];
			run++;
			found = run >= PYEVAL_TABLE_MIN && changes >= PYEVAL_MIN_CHANGES;
		}
		free(w);
		if (found)
			return true;
	}
	return false;
}

int pyeval__add_symbols(struct symtab *st, Elf *elf, uint64_t *start, uint64_t *size)
{
	struct pyeval_range parts[PYEVAL_MAX_TARGETS];
	GElf_Ehdr eh;
	GElf_Sym head;
	struct pyeval_fdes fdes;
	size_t n;
	int ret = -ENOENT;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    !pyeval__dynsym(elf, PYEVAL_NAME, &head))
		return -ENOENT;
	if (!pyeval__fdes(elf, &fdes))
		return -ENOENT;
	n = pyeval__jump_targets(elf, &fdes, &head, parts, PYEVAL_MAX_TARGETS);
	for (size_t i = 0; i < n; i++) {
		struct symbol *s = symtab__find(st, parts[i].start);

		/* named already (a .symtab, MiniDebugInfo): its own name stays */
		if (s || !pyeval__has_table(elf, &parts[i]))
			continue;
		symtab__add(st, parts[i].start, parts[i].end - parts[i].start,
			    PYEVAL_NAME ".cold", STB_LOCAL);
		symtab__finish(st);
		debug(1, "%s.cold at 0x%lx, %lu bytes: the eval loop under no symbol", PYEVAL_NAME,
		      (unsigned long)parts[i].start, (unsigned long)(parts[i].end - parts[i].start));
		if (start)
			*start = parts[i].start;
		if (size)
			*size = parts[i].end - parts[i].start;
		ret = 0;
		break;
	}
	return ret;
}
