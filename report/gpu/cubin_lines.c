// SPDX-License-Identifier: MIT
/* A cubin's .debug_line: SASS offsets to source lines (cubin_lines.h). */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/cubin_lines.h"

struct cl_buf {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t cl__u(struct cl_buf *b, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(b->end - b->p) < n) {
		b->bad = true;
		b->p = b->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)b->p[i] << (8 * i);
	b->p += n;
	return v;
}

static uint64_t cl__uleb(struct cl_buf *b)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (b->p < b->end) {
		uint8_t c = *b->p++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return v;
	}
	b->bad = true;
	return v;
}

static int64_t cl__sleb(struct cl_buf *b)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t c = 0;

	while (b->p < b->end) {
		c = *b->p++;
		if (shift < 64)
			v |= (int64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80)) {
			if (shift < 64 && (c & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	b->bad = true;
	return v;
}

static const char *cl__str(struct cl_buf *b)
{
	const char *s = (const char *)b->p;
	const uint8_t *nul = memchr(b->p, 0, (size_t)(b->end - b->p));

	if (!nul) {
		b->bad = true;
		b->p = b->end;
		return "";
	}
	b->p = nul + 1;
	return s;
}

/* The headers are copies: a cubin inside a fat binary starts wherever its
 * entry header ends, not always 8-aligned (a damaged .nv_fatbin), and an
 * Elf64_Ehdr read in place there is a misaligned load. */
struct cl_elf {
	const uint8_t *data;
	size_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;			/* e_shnum of them (xmalloc) */
	unsigned nr_sh;
};

static const Elf64_Shdr *cl__section(const struct cl_elf *e, const char *name, unsigned *idx)
{
	const Elf64_Shdr *strs;

	if (e->eh.e_shstrndx >= e->nr_sh)
		return NULL;
	strs = &e->sh[e->eh.e_shstrndx];
	for (unsigned i = 0; i < e->nr_sh; i++) {
		uint64_t off = strs->sh_offset + e->sh[i].sh_name;

		if (off >= e->size || strs->sh_offset + strs->sh_size > e->size ||
		    e->sh[i].sh_name >= strs->sh_size)
			continue;
		if (!strncmp((const char *)e->data + off, name,
			     strs->sh_size - e->sh[i].sh_name) &&
		    strlen(name) < strs->sh_size - e->sh[i].sh_name &&
		    !((const char *)e->data)[off + strlen(name)]) {
			/* the sections looked up here are all read: one
			 * without bytes (a reduced cubin's, damage) is absent */
			if (e->sh[i].sh_type == SHT_NOBITS ||
			    e->sh[i].sh_offset > e->size || e->sh[i].sh_size > e->size - e->sh[i].sh_offset)
				return NULL;
			if (idx)
				*idx = i;
			return &e->sh[i];
		}
	}
	return NULL;
}

static uint32_t cl__intern(char ***tab, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*tab)[i], s))
			return (uint32_t)i;
	*tab = xrealloc(*tab, (*n + 1) * sizeof(**tab));
	(*tab)[*n] = xstrdup(s);
	return (uint32_t)(*n)++;
}

/* The function a DW_LNE_set_address at .debug_line offset off is relocated
 * against, or NULL. */
static const char *cl__reloc_func(const struct cl_elf *e, const Elf64_Shdr *rela,
				  const Elf64_Shdr *symtab, const Elf64_Shdr *strtab,
				  uint64_t off, int64_t *addend)
{
	size_t n = rela && rela->sh_entsize == sizeof(Elf64_Rela) ? rela->sh_size / sizeof(Elf64_Rela) : 0;

	for (size_t i = 0; i < n; i++) {
		Elf64_Rela r;
		Elf64_Sym sym;
		uint64_t si;

		memcpy(&r, e->data + rela->sh_offset + i * sizeof(r), sizeof(r));
		if (r.r_offset != off)
			continue;
		si = ELF64_R_SYM(r.r_info);
		if (!symtab || (si + 1) * sizeof(sym) > symtab->sh_size || !strtab)
			return NULL;
		memcpy(&sym, e->data + symtab->sh_offset + si * sizeof(sym), sizeof(sym));
		if (sym.st_name >= strtab->sh_size ||
		    !memchr(e->data + strtab->sh_offset + sym.st_name, 0, strtab->sh_size - sym.st_name))
			return NULL;
		*addend = r.r_addend;
		return (const char *)e->data + strtab->sh_offset + sym.st_name;
	}
	return NULL;
}

static void cl__row(struct cubin_lines *cl, size_t *cap, uint32_t func, uint32_t file,
		    uint64_t addr, uint32_t line, uint32_t seq)
{
	if (cl->nr_rows == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		cl->rows = xrealloc(cl->rows, *cap * sizeof(*cl->rows));
	}
	cl->rows[cl->nr_rows++] = (struct cubin_row){ .func = func, .file = file, .addr = addr,
						      .line = line, .seq = seq };
}

/* One line program (a unit of .debug_line) from b; its end is unit_end. */
static void cl__unit(struct cubin_lines *cl, size_t *cap, const struct cl_elf *e,
		     const Elf64_Shdr *dl, const Elf64_Shdr *rela, const Elf64_Shdr *symtab,
		     const Elf64_Shdr *strtab, struct cl_buf *b, uint32_t *seq)
{
	const uint8_t *base = e->data + dl->sh_offset;
	uint16_t version = (uint16_t)cl__u(b, 2);
	uint64_t hdr_len = cl__u(b, 4);
	struct cl_buf h = { b->p, b->p + hdr_len, false }, prog;
	uint8_t min_len, line_range, opcode_base, lengths[256] = { 0 };
	int8_t line_base;
	const char *dirs[256];
	uint32_t files[1024], nr_dirs = 1, nr_files = 1;
	char path[4096];

	if (b->bad || version < 2 || version > 4 || hdr_len > (size_t)(b->end - b->p))
		return;
	prog = (struct cl_buf){ h.end, b->end, false };
	min_len = (uint8_t)cl__u(&h, 1);
	if (version >= 4)
		cl__u(&h, 1);		/* maximum_operations_per_instruction */
	cl__u(&h, 1);			/* default_is_stmt */
	line_base = (int8_t)cl__u(&h, 1);
	line_range = (uint8_t)cl__u(&h, 1);
	opcode_base = (uint8_t)cl__u(&h, 1);
	for (unsigned i = 1; i < opcode_base; i++)
		lengths[i] = (uint8_t)cl__u(&h, 1);
	dirs[0] = "";
	while (!h.bad && h.p < h.end && *h.p && nr_dirs < 256)
		dirs[nr_dirs++] = cl__str(&h);
	cl__u(&h, 1);
	files[0] = cl__intern(&cl->files, &cl->nr_files, "[unknown]");
	while (!h.bad && h.p < h.end && *h.p && nr_files < 1024) {
		const char *name = cl__str(&h);
		uint64_t dir = cl__uleb(&h);

		cl__uleb(&h);
		cl__uleb(&h);
		if (name[0] != '/' && dir < nr_dirs && dirs[dir][0])
			snprintf(path, sizeof(path), "%s/%s", dirs[dir], name);
		else
			snprintf(path, sizeof(path), "%s", name);
		files[nr_files++] = cl__intern(&cl->files, &cl->nr_files, path);
	}
	if (h.bad || !line_range)
		return;

	/* the state machine */
	{
		uint64_t addr = 0;
		uint32_t file = 1, line = 1, func = UINT32_MAX;
		int64_t addend = 0;

		while (!prog.bad && prog.p < prog.end) {
			uint8_t op = (uint8_t)cl__u(&prog, 1);

			if (op >= opcode_base) {
				unsigned adj = op - opcode_base;

				addr += (uint64_t)(adj / line_range) * min_len;
				line += line_base + (int)(adj % line_range);
				if (func != UINT32_MAX)
					cl__row(cl, cap, func, file < nr_files ? files[file] : files[0],
						addr, line, *seq);
				continue;
			}
			switch (op) {
			case 0: {	/* extended */
				uint64_t len = cl__uleb(&prog);
				const uint8_t *next = prog.p + len;
				uint8_t sub;

				if (!len || len > (size_t)(prog.end - prog.p)) {
					prog.bad = true;
					break;
				}
				sub = (uint8_t)cl__u(&prog, 1);
				if (sub == DW_LNE_end_sequence) {
					if (func != UINT32_MAX)
						cl__row(cl, cap, func, files[0], addr, 0, *seq);
					(*seq)++;
					addr = 0, file = 1, line = 1, func = UINT32_MAX;
				} else if (sub == DW_LNE_set_address) {
					uint64_t at = (uint64_t)(prog.p - base);
					const char *fn;

					addr = cl__u(&prog, len - 1 > 8 ? 8 : len - 1);
					fn = cl__reloc_func(e, rela, symtab, strtab, at, &addend);
					if (fn) {
						func = cl__intern(&cl->funcs, &cl->nr_funcs, fn);
						addr += (uint64_t)addend;
					}
				}
				prog.p = next;
				break;
			}
			case DW_LNS_copy:
				if (func != UINT32_MAX)
					cl__row(cl, cap, func, file < nr_files ? files[file] : files[0],
						addr, line, *seq);
				break;
			case DW_LNS_advance_pc:
				addr += cl__uleb(&prog) * min_len;
				break;
			case DW_LNS_advance_line:
				line += (int32_t)cl__sleb(&prog);
				break;
			case DW_LNS_set_file:
				file = (uint32_t)cl__uleb(&prog);
				break;
			case DW_LNS_const_add_pc:
				addr += (uint64_t)((255 - opcode_base) / line_range) * min_len;
				break;
			case DW_LNS_fixed_advance_pc:
				addr += cl__u(&prog, 2);
				break;
			default:	/* set_column, negate_stmt, ... and unknown: skip args */
				for (unsigned i = 0; i < lengths[op]; i++)
					cl__uleb(&prog);
				break;
			}
		}
	}
}

static int cl_row__cmp(const void *a, const void *b)
{
	const struct cubin_row *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	/* an end row before a row starting at the same address */
	return (x->line != 0) - (y->line != 0);
}

int cubin_lines__parse(struct cubin_lines *cl, const void *data, size_t size)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *dl, *rela, *symtab, *strtab = NULL;
	struct cl_elf e = { .data = data, .size = size };
	struct cl_buf b;
	uint32_t seq = 0;
	size_t cap = 0;
	unsigned sym_idx;

	memset(cl, 0, sizeof(*cl));
	if (size < sizeof(e.eh))
		return -EINVAL;
	memcpy(&e.eh, data, sizeof(e.eh));
	eh = &e.eh;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff ||
	    eh->e_shoff % 8)
		return -EINVAL;
	e.nr_sh = eh->e_shnum;
	e.sh = xmalloc(e.nr_sh ? e.nr_sh * sizeof(*e.sh) : 1);
	memcpy(e.sh, (const uint8_t *)data + eh->e_shoff, e.nr_sh * sizeof(*e.sh));
	dl = cl__section(&e, ".debug_line", NULL);
	rela = cl__section(&e, ".rela.debug_line", NULL);
	symtab = cl__section(&e, ".symtab", &sym_idx);
	if (symtab && symtab->sh_link < e.nr_sh) {
		strtab = &e.sh[symtab->sh_link];
		if (strtab->sh_offset > size || strtab->sh_size > size - strtab->sh_offset)
			strtab = NULL;
	}
	if (!dl || !dl->sh_size) {
		free(e.sh);
		return 0;
	}
	b = (struct cl_buf){ (const uint8_t *)data + dl->sh_offset,
			     (const uint8_t *)data + dl->sh_offset + dl->sh_size, false };
	while (!b.bad && b.p + 4 <= b.end) {
		uint64_t len = cl__u(&b, 4);
		struct cl_buf unit;

		if (len == 0xffffffff || len > (size_t)(b.end - b.p))
			break;		/* 64-bit DWARF: not what nvcc writes */
		unit = (struct cl_buf){ b.p, b.p + len, false };
		cl__unit(cl, &cap, &e, dl, rela, symtab, strtab, &unit, &seq);
		b.p += len;
	}
	free(e.sh);
	xpu_qsort(cl->rows, cl->nr_rows, sizeof(*cl->rows), cl_row__cmp);
	return 0;
}

void cubin_lines__exit(struct cubin_lines *cl)
{
	for (size_t i = 0; i < cl->nr_funcs; i++)
		free(cl->funcs[i]);
	for (size_t i = 0; i < cl->nr_files; i++)
		free(cl->files[i]);
	free(cl->funcs);
	free(cl->files);
	free(cl->rows);
	memset(cl, 0, sizeof(*cl));
}

int cubin_lines__lookup(const struct cubin_lines *cl, const char *func, uint64_t off,
			const char **file, uint32_t *line)
{
	size_t f, lo = 0, hi = cl->nr_rows;

	for (f = 0; f < cl->nr_funcs && strcmp(cl->funcs[f], func); f++)
		;
	if (f == cl->nr_funcs)
		return -ENOENT;
	/* the last row of func at or below off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cubin_row *r = &cl->rows[mid];

		if (r->func < f || (r->func == f && r->addr <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || cl->rows[lo - 1].func != f || !cl->rows[lo - 1].line)
		return -ENOENT;
	*file = cl->files[cl->rows[lo - 1].file];
	*line = cl->rows[lo - 1].line;
	return 0;
}
