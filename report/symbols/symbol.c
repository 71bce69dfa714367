// SPDX-License-Identifier: MIT
/* Sorted symbol tables from ELF files and from trace records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/symbols/demangle.h"
#include "common/elf_pages.h"
#include "report/symbols/symbol.h"

void symtab__init(struct symtab *st, bool owns_names)
{
	memset(st, 0, sizeof(*st));
	st->owns_names = owns_names;
	u64map__init(&st->display);
}

/* The display names cached so far go (they are by index: a sort moves
 * the symbols). */
static void symtab__drop_display(struct symtab *st)
{
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&st->display, &i, &k, &v);)
		free((char *)(uintptr_t)v);
	u64map__exit(&st->display);
	u64map__init(&st->display);
}

void symtab__exit(struct symtab *st)
{
	symtab__drop_display(st);
	u64map__exit(&st->display);
	free(st->syms);
	free(st->binding);
	free(st->own);
	memset(st, 0, sizeof(*st));
}

/* A copy of name in the table's own store: its SYMBOL_OWN offset, or
 * UINT32_MAX when the store is full (2 GiB). */
static uint32_t symtab__own(struct symtab *st, const char *name)
{
	size_t len = strlen(name) + 1, off = st->own_len;

	if (off + len > ~SYMBOL_OWN)
		return UINT32_MAX;
	st->own = xgrow(st->own, &st->own_cap, off + len, 1);
	memcpy(st->own + off, name, len);
	st->own_len = off + len;
	return (uint32_t)off | SYMBOL_OWN;
}

void symtab__add(struct symtab *st, uint64_t addr, uint64_t size, const char *name,
		 uint8_t binding)
{
	uint32_t off;

	if (!st->owns_names && st->names_base && name >= st->names_base &&
	    (size_t)(name - st->names_base) < st->names_base_size &&
	    (size_t)(name - st->names_base) < SYMBOL_OWN)
		off = (uint32_t)(name - st->names_base);
	else if ((off = symtab__own(st, name)) == UINT32_MAX)
		return;
	st->syms = xgrow(st->syms, &st->cap, st->nr + 1, sizeof(*st->syms));
	st->binding = xgrow(st->binding, &st->binding_cap, st->nr + 1, 1);
	st->syms[st->nr] = (struct symbol){
		.addr = addr, .size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size, .name = off,
	};
	st->binding[st->nr++] = binding;
	st->sorted = false;
}

static size_t symbol__base_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at ? (size_t)(at - name) : strlen(name);
}

/* Among aliases at one address: first the public name over its
 * implementation aliases ("f" or "f@@V" over "f_impl", "f_alias_2": glibc's
 * __libc_start_main heads every stack), then perf's preference: global over
 * weak over local, a name without a leading underscore, the longer name.
 * i and j index st's symbols. */
static bool symbol__better(const struct symtab *st, size_t i, size_t j)
{
	static const int rank[] = { [STB_LOCAL] = 0, [STB_GLOBAL] = 2, [STB_WEAK] = 1 };
	const struct symbol *a = &st->syms[i], *b = &st->syms[j];
	const char *an = symtab__name(st, a), *bn = symtab__name(st, b);
	int ra = st->binding[i] <= STB_WEAK ? rank[st->binding[i]] : 0;
	int rb = st->binding[j] <= STB_WEAK ? rank[st->binding[j]] : 0;
	size_t la = symbol__base_len(an), lb = symbol__base_len(bn);

	if (la != lb && !strncmp(an, bn, la < lb ? la : lb)) {
		char next = la < lb ? bn[la] : an[lb];

		if (next == '_' || next == '.')
			return la < lb;
	}
	/* versioned aliases ("f@@GLIBC_2.34") lose to the plain name */
	if ((strchr(an, '@') == NULL) != (strchr(bn, '@') == NULL))
		return strchr(an, '@') == NULL;
	if (ra != rb)
		return ra > rb;
	if ((an[0] == '_') != (bn[0] == '_'))
		return bn[0] == '_';
	if (a->size != b->size)
		return a->size > b->size;
	return strlen(an) > strlen(bn);
}

/* Orders the symbols by address, stably: aliases keep the table's order,
 * so the choice among them below does not depend on the sort. */
static void symtab__sort(struct symtab *st)
{
	struct xpu_sort_pair *p;
	struct symbol *sorted;
	uint8_t *binding;
	size_t i;

	for (i = 1; i < st->nr && st->syms[i - 1].addr <= st->syms[i].addr; i++)
		;
	if (i >= st->nr)	/* already in order (records, small tables) */
		return;
	p = xmalloc(st->nr * sizeof(*p));
	for (i = 0; i < st->nr; i++)
		p[i] = (struct xpu_sort_pair){ .key = st->syms[i].addr, .val = i };
	xpu_radix_sort(p, st->nr);
	sorted = xmalloc(st->cap * sizeof(*sorted));
	binding = xmalloc(st->binding_cap);
	for (i = 0; i < st->nr; i++) {
		sorted[i] = st->syms[p[i].val];
		binding[i] = st->binding[p[i].val];
	}
	free(st->syms);
	free(st->binding);
	st->syms = sorted;
	st->binding = binding;
	free(p);
}

void symtab__finish(struct symtab *st)
{
	size_t out = 0;

	symtab__drop_display(st);	/* by index: the symbols move */
	symtab__sort(st);
	for (size_t i = 0; i < st->nr; i++) {
		if (out && st->syms[out - 1].addr == st->syms[i].addr) {
			if (symbol__better(st, i, out - 1)) {
				st->syms[out - 1] = st->syms[i];
				st->binding[out - 1] = st->binding[i];
			}
			continue;
		}
		st->syms[out] = st->syms[i];
		st->binding[out++] = st->binding[i];
	}
	st->nr = out;
	for (size_t i = 0; i < st->nr; i++) {
		struct symbol *s = &st->syms[i];
		uint64_t next;

		if (s->size)
			continue;
		/* zero-size (asm labels, some kernel symbols): up to the next one */
		next = i + 1 < st->nr ? st->syms[i + 1].addr - s->addr : 4096;
		s->size = next > UINT32_MAX ? UINT32_MAX : (uint32_t)next;
	}
	st->sorted = true;
}

struct symbol *symtab__find(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nr;

	if (!st->nr || addr < st->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {		/* last symbol with start <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* A small function may sit inside a large one's range: try a few
	 * predecessors before giving up. */
	for (size_t i = lo + 1, n = 0; i-- > 0 && n < 4; n++) {
		struct symbol *s = &st->syms[i];

		if (addr - s->addr < s->size && symtab__name(st, s)[0])
			return s;
	}
	return NULL;
}

struct symbol *symtab__lookup(struct symtab *st, uint64_t addr)
{
	if (st->names_elf && elf_pages__due(&st->names_reads, 0))
		elf_pages__release(st->names_elf, st->names_buf, st->names_size);
	return symtab__find(st, addr);
}

const char *symtab__display(struct symtab *st, const struct symbol *sym)
{
	uint64_t *slot = u64map__slot(&st->display, (uint64_t)(sym - st->syms));

	if (!*slot) {
		const char *name = symtab__name(st, sym), *at = strchr(name, '@');
		char *d = demangle(name, true);

		if (!d && at && at > name)	/* symbol version */
			d = xstrndup(name, (size_t)(at - name));
		/* a copy always: the table's own names move as it grows */
		*slot = (uint64_t)(uintptr_t)(d ? d : xstrdup(name));
	}
	return (const char *)(uintptr_t)*slot;
}

int symtab__load_elf(struct symtab *st, Elf *elf, bool mapped)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (shdr.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	scn = symtab ? symtab : dynsym;
	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0)
		return -ENOENT;

	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = data ? data->d_size / shdr.sh_entsize : 0;
	Elf_Scn *str_scn = elf_getscn(elf, shdr.sh_link);
	Elf_Data *strs = str_scn ? elf_getdata(str_scn, NULL) : NULL;
	const char *str_base = NULL;
	size_t str_size = 0;

	GElf_Shdr str_shdr;

	/* A string table that ends in NUL holds a terminated string at every
	 * offset inside it: a name is then its offset, checked against the
	 * size (what elf_strptr() checks, without its call per symbol). */
	if (strs && strs->d_buf && strs->d_size && gelf_getshdr(str_scn, &str_shdr) &&
	    !(str_shdr.sh_flags & SHF_COMPRESSED) &&
	    ((const char *)strs->d_buf)[strs->d_size - 1] == '\0') {
		str_base = strs->d_buf;
		str_size = strs->d_size;
		if (!st->names_base) {	/* the first file's names stay where they are */
			st->names_base = str_base;
			st->names_base_size = str_size;
		}
	}

	/*
	 * Names are not read here: a library exporting every C++ symbol
	 * (PyPI's libtorch_cpu.so: 356k, tens of MB of mangled names) would
	 * have its whole string table paged in for the few hundred symbols a
	 * profile names. elf_strptr() only checks the offset; an empty name
	 * is skipped by its offset here, and by symtab__find() otherwise.
	 * The table is allocated once at its bound and trimmed after.
	 */
	st->syms = xgrow(st->syms, &st->cap, st->nr + n, sizeof(*st->syms));
	st->binding = xgrow(st->binding, &st->binding_cap, st->nr + n, 1);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 || sym.st_name == 0)
			continue;
		if (str_base)
			name = sym.st_name < str_size ? str_base + sym.st_name : NULL;
		else
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name)
			continue;
		symtab__add(st, sym.st_value, sym.st_size, name, GELF_ST_BIND(sym.st_info));
	}
	symtab__finish(st);
	/* The entries were read once, into the table, and the names of
	 * aliases to choose among them: libtorch_cpu.so's C1/C2 constructor
	 * pairs alone touch most of its 49 MB .strtab, which stayed resident
	 * in a GPT-2 report. A name used later is read again. */
	if (mapped) {
		elf_pages__release(elf, data->d_buf, data->d_size);
		if (strs) {
			elf_pages__release(elf, strs->d_buf, strs->d_size);
			if (strs->d_size >= elf_pages__min_region)
				st->names_elf = elf;
			st->names_buf = strs->d_buf;
			st->names_size = strs->d_size;
		}
	}
	if (st->cap > st->nr) {
		struct symbol *trim = realloc(st->syms, (st->nr ? st->nr : 1) * sizeof(*st->syms));

		if (trim) {
			st->syms = trim;
			st->cap = st->nr ? st->nr : 1;
		}
	}
	if (st->binding_cap > st->nr) {
		uint8_t *trim = realloc(st->binding, st->nr ? st->nr : 1);

		if (trim) {
			st->binding = trim;
			st->binding_cap = st->nr ? st->nr : 1;
		}
	}
	return 0;
}
