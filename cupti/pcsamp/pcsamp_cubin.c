// SPDX-License-Identifier: MIT
/* A cubin reduced to its line mapping (pcsamp_cubin.h). */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcsamp_cubin.h"

/* The sections the report reads, besides the section names */
enum { KEEP_LINES, KEEP_RELA, KEEP_SYMTAB, KEEP_STRTAB, KEEP_SHSTRTAB, KEEP_NR };

struct reduce {
	const uint8_t *data;
	size_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;			/* a copy: data may be unaligned */
	unsigned nr_sh;
};

static bool reduce__in_file(const struct reduce *r, const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_offset <= r->size &&
	       s->sh_size <= r->size - s->sh_offset;
}

/* The name of section i, or NULL when it is not inside .shstrtab */
static const char *reduce__name(const struct reduce *r, unsigned i)
{
	const Elf64_Shdr *strs = &r->sh[r->eh.e_shstrndx];
	const char *base = (const char *)r->data + strs->sh_offset;

	if (r->sh[i].sh_name >= strs->sh_size ||
	    !memchr(base + r->sh[i].sh_name, 0, strs->sh_size - r->sh[i].sh_name))
		return NULL;
	return base + r->sh[i].sh_name;
}

static int reduce__find(const struct reduce *r, const char *name, uint32_t type)
{
	for (unsigned i = 1; i < r->nr_sh; i++) {
		const char *n = reduce__name(r, i);

		if (n && !strcmp(n, name) && r->sh[i].sh_type == type && reduce__in_file(r, &r->sh[i]))
			return (int)i;
	}
	return -1;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int xpu_pcsamp__reduce_cubin(const void *data, size_t size, size_t max, void **out,
			     size_t *out_size)
{
	struct reduce r = { .data = data, .size = size };
	int keep[KEEP_NR];
	size_t total, off;
	uint8_t *buf;
	int err = -EINVAL;

	*out = NULL;
	*out_size = 0;
	if (!data || size < sizeof(r.eh))
		return -EINVAL;
	memcpy(&r.eh, data, sizeof(r.eh));
	if (memcmp(r.eh.e_ident, ELFMAG, SELFMAG) || r.eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    r.eh.e_ident[EI_DATA] != ELFDATA2LSB || r.eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !r.eh.e_shnum || !r.eh.e_shstrndx || r.eh.e_shstrndx >= r.eh.e_shnum || r.eh.e_shoff > size ||
	    (uint64_t)r.eh.e_shnum * sizeof(Elf64_Shdr) > size - r.eh.e_shoff)
		return -EINVAL;		/* e_shnum 0: extended numbering, not a cubin's */
	r.nr_sh = r.eh.e_shnum;
	r.sh = malloc(r.nr_sh * sizeof(*r.sh));
	if (!r.sh)
		return -ENOMEM;
	memcpy(r.sh, r.data + r.eh.e_shoff, r.nr_sh * sizeof(*r.sh));
	if (r.sh[r.eh.e_shstrndx].sh_type != SHT_STRTAB || !reduce__in_file(&r, &r.sh[r.eh.e_shstrndx]))
		goto out;

	keep[KEEP_SHSTRTAB] = r.eh.e_shstrndx;
	keep[KEEP_LINES] = reduce__find(&r, ".debug_line", SHT_PROGBITS);
	keep[KEEP_RELA] = reduce__find(&r, ".rela.debug_line", SHT_RELA);
	keep[KEEP_SYMTAB] = reduce__find(&r, ".symtab", SHT_SYMTAB);
	keep[KEEP_STRTAB] = -1;
	if (keep[KEEP_SYMTAB] > 0) {
		uint32_t link = r.sh[keep[KEEP_SYMTAB]].sh_link;

		if (link && link < r.nr_sh && r.sh[link].sh_type == SHT_STRTAB &&
		    reduce__in_file(&r, &r.sh[link]))
			keep[KEEP_STRTAB] = (int)link;
	}
	err = -ENOENT;
	if (keep[KEEP_LINES] < 0 || !r.sh[keep[KEEP_LINES]].sh_size)
		goto out;

	/* the header, the kept sections (8-aligned, each once), the headers */
	total = sizeof(Elf64_Ehdr);
	for (int k = 0; k < KEEP_NR; k++) {
		bool dup = false;

		for (int j = 0; j < k; j++)
			dup |= keep[j] == keep[k];
		if (keep[k] < 0 || dup)
			keep[k] = -1;
		else
			total = align8(total + r.sh[keep[k]].sh_size);
	}
	total += r.nr_sh * sizeof(Elf64_Shdr);
	err = -E2BIG;
	if (total > max)
		goto out;
	err = -ENOMEM;
	buf = calloc(1, total);
	if (!buf)
		goto out;

	off = sizeof(Elf64_Ehdr);
	for (int k = 0; k < KEEP_NR; k++) {
		Elf64_Shdr *s = keep[k] < 0 ? NULL : &r.sh[keep[k]];

		if (!s)
			continue;
		memcpy(buf + off, r.data + s->sh_offset, s->sh_size);
		s->sh_offset = off;
		off = align8(off + s->sh_size);
	}
	for (unsigned i = 1; i < r.nr_sh; i++) {
		bool kept = false;

		for (int k = 0; k < KEEP_NR; k++)
			kept |= keep[k] == (int)i;
		if (!kept) {
			r.sh[i].sh_type = SHT_NOBITS;
			r.sh[i].sh_offset = off;
		}
	}
	memcpy(buf + off, r.sh, r.nr_sh * sizeof(*r.sh));
	r.eh.e_shoff = off;
	r.eh.e_phoff = 0;
	r.eh.e_phnum = 0;
	memcpy(buf, &r.eh, sizeof(r.eh));
	*out = buf;
	*out_size = total;
	err = 0;
out:
	free(r.sh);
	return err;
}
