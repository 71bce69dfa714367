// SPDX-License-Identifier: MIT
/* Inline chains and source lines from DWARF, per compilation unit address
 * tables built on first use. See srcline.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/symbols/demangle.h"
#include "report/symbols/dso.h"
#include "common/elf_pages.h"
#include "report/symbols/srcline.h"
#include "report/symbols/debug_plain.h"

#define NONE UINT32_MAX
#define SL_MAX_NESTING 256	/* DIE tree depth walked: a malformed file cannot recurse further */

/* A subprogram or inlined subroutine with code. */
struct sl_node {
	uint32_t parent;		/* the enclosing one, NONE for none */
	uint32_t call_file;		/* inlined: DW_AT_call_file, NONE when absent */
	uint32_t call_line;
	bool inlined;
	Dwarf_Off off;			/* its DIE, for the name */
	char *display;			/* the name, on first use */
};

/* Addresses [lo, hi) whose innermost node is node. */
struct sl_seg {
	uint64_t lo, hi;
	uint32_t node;
};

/* Nodes and the sorted, disjoint segments naming the innermost of them. */
struct sl_table {
	struct sl_node *nodes;
	size_t nr_nodes, nodes_cap;
	struct sl_seg *segs;
	size_t nr_segs;
};

/*
 * Two levels, each built on first use: a unit's functions (the subprograms
 * with code at namespace level: a walk of the unit's top-level DIEs only),
 * and per function what was inlined into it (a walk of that function's
 * DIEs). A report touches few functions of most units; CPython's units hold
 * tens of thousands of DIEs, most of them in functions no sample is in.
 */
struct sl_cu {
	Dwarf_Off off;			/* of its DIE */
	Dwarf_Die die;			/* once built */
	bool built, valid;		/* valid: die was read */
	struct sl_table funcs;		/* nodes: the functions */
	struct sl_table **inl;		/* per function: its own table, NULL until built */
	bool files_read;
	Dwarf_Files *files;		/* for DW_AT_call_file */
	size_t nr_files;
	const char *comp_dir;
};

struct sl_cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

struct sl_pages {
	const void *buf;
	size_t size;
};

struct srcline_dso {
	Elf *elf;			/* a private copy of the file's headers (srcline__hide) */
	Dwarf *dw;			/* NULL: no DWARF */
	struct sl_pages *debug;		/* the .debug_* sections' data (elf_pages.h) */
	size_t nr_debug;
	struct sl_cu *cus;
	size_t nr_cus;
	struct sl_cu_range *ranges;	/* sorted by lo */
	size_t nr_ranges;
};

/* The ranges of one node before flattening. */
struct sl_iv {
	uint64_t lo, hi;
	uint32_t node, depth;
};

struct sl_build {
	struct sl_table *t;
	bool funcs;			/* the unit level: stop at functions */
	struct sl_iv *ivs;
	size_t nr_ivs, ivs_cap;
};

static int sl_iv__cmp(const void *a, const void *b)
{
	const struct sl_iv *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)		/* the outer one first */
		return x->hi > y->hi ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static bool sl__descend(int tag, bool funcs)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
		return true;
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return !funcs;
	}
	/* types, variables, parameters, call sites: no code of their own.
	 * GCC and clang put member function bodies at namespace level (with
	 * DW_AT_specification), not inside the class. */
	return false;
}

/* Adds the node for die when it has code, with its ranges. */
static uint32_t sl__add_node(struct sl_build *b, Dwarf_Die *die, int tag, uint32_t parent,
			     uint32_t depth)
{
	struct sl_table *t = b->t;
	uint32_t idx = (uint32_t)t->nr_nodes;
	Dwarf_Addr base, lo, hi;
	Dwarf_Attribute at;
	Dwarf_Word w;
	ptrdiff_t it = 0;
	bool any = false;

	while ((it = dwarf_ranges(die, it, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		b->ivs = xgrow(b->ivs, &b->ivs_cap, b->nr_ivs + 1, sizeof(*b->ivs));
		b->ivs[b->nr_ivs++] = (struct sl_iv){ lo, hi, idx, depth };
		any = true;
	}
	if (!any)
		return NONE;
	t->nodes = xgrow(t->nodes, &t->nodes_cap, t->nr_nodes + 1, sizeof(*t->nodes));
	t->nodes[idx] = (struct sl_node){ .parent = parent, .call_file = NONE,
					  .inlined = tag == DW_TAG_inlined_subroutine,
					  .off = dwarf_dieoffset(die) };
	if (tag == DW_TAG_inlined_subroutine) {
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &at), &w) && w < NONE)
			t->nodes[idx].call_file = (uint32_t)w;
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &at), &w) && w < NONE)
			t->nodes[idx].call_line = (uint32_t)w;
	}
	t->nr_nodes++;
	return idx;
}

static void sl__walk(struct sl_build *b, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	Dwarf_Die child;

	if (depth >= SL_MAX_NESTING || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		uint32_t node = parent;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point) {
			node = sl__add_node(b, &child, tag, parent, depth);
			if (node == NONE)	/* a declaration or an abstract instance */
				continue;
		}
		if (sl__descend(tag, b->funcs))
			sl__walk(b, &child, node, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void sl__add_seg(struct sl_table *t, size_t *cap, uint64_t lo, uint64_t hi,
			uint32_t node)
{
	if (lo >= hi)
		return;
	if (t->nr_segs && t->segs[t->nr_segs - 1].hi == lo && t->segs[t->nr_segs - 1].node == node) {
		t->segs[t->nr_segs - 1].hi = hi;
		return;
	}
	t->segs = xgrow(t->segs, cap, t->nr_segs + 1, sizeof(*t->segs));
	t->segs[t->nr_segs++] = (struct sl_seg){ lo, hi, node };
}

/* Nested ranges -> disjoint segments naming the innermost node: a sweep in
 * start order with the open ranges on a stack (the one started last is the
 * innermost; ranges that overlap without nesting, which DWARF should not
 * have, go to the one started last). Frees the ranges. */
static void sl__flatten(struct sl_build *b)
{
	struct sl_table *t = b->t;
	struct sl_iv **stk = xcalloc(b->nr_ivs + 1, sizeof(*stk));
	size_t sp = 0, cap = 0;
	uint64_t pos = 0;

	xpu_qsort(b->ivs, b->nr_ivs, sizeof(*b->ivs), sl_iv__cmp);
	for (size_t i = 0; i < b->nr_ivs; i++) {
		struct sl_iv *iv = &b->ivs[i];

		while (sp && stk[sp - 1]->hi <= iv->lo) {
			if (stk[sp - 1]->hi > pos) {
				sl__add_seg(t, &cap, pos, stk[sp - 1]->hi, stk[sp - 1]->node);
				pos = stk[sp - 1]->hi;
			}
			sp--;
		}
		if (sp && iv->lo > pos)
			sl__add_seg(t, &cap, pos, iv->lo, stk[sp - 1]->node);
		if (iv->lo > pos)
			pos = iv->lo;
		stk[sp++] = iv;
	}
	while (sp) {
		if (stk[sp - 1]->hi > pos) {
			sl__add_seg(t, &cap, pos, stk[sp - 1]->hi, stk[sp - 1]->node);
			pos = stk[sp - 1]->hi;
		}
		sp--;
	}
	free(stk);
	free(b->ivs);
}

/* The DWARF sections' data, for srcline__release(). */
static void srcline__debug_sections(struct srcline_dso *sd)
{
	size_t shstrndx, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(sd->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(sd->elf, scn)) != NULL) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(sd->elf, shstrndx, sh.sh_name)) ||
		    (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)) ||
		    !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
			continue;
		sd->debug = xgrow(sd->debug, &cap, sd->nr_debug + 1, sizeof(*sd->debug));
		sd->debug[sd->nr_debug++] = (struct sl_pages){ d->d_buf, d->d_size };
	}
}

/*
 * A unit's walk reads its part of .debug_info (and the strings and ranges
 * it names) once, into the tables: the pages go back to the page cache.
 * libtriton.so's DWARF held 40 MB of a GPT-2 report's peak; a later name
 * or inline walk reads its pages again.
 */
static void srcline__release(const struct srcline_dso *sd)
{
	for (size_t i = 0; i < sd->nr_debug; i++)
		elf_pages__release(sd->elf, sd->debug[i].buf, sd->debug[i].size);
}

/* The unit's functions. */
static void sl__build_cu(const struct srcline_dso *sd, struct sl_cu *cu)
{
	struct sl_build b = { .t = &cu->funcs, .funcs = true };
	Dwarf_Attribute at;

	cu->built = true;
	cu->inl = xcalloc(1, sizeof(*cu->inl));
	if (!dwarf_offdie(sd->dw, cu->off, &cu->die))
		return;
	cu->valid = true;
	cu->comp_dir = dwarf_formstring(dwarf_attr(&cu->die, DW_AT_comp_dir, &at));
	sl__walk(&b, &cu->die, NONE, 0);
	sl__flatten(&b);
	free(cu->inl);
	cu->inl = xcalloc(cu->funcs.nr_nodes + 1, sizeof(*cu->inl));
	srcline__release(sd);
}

/* What was inlined into function f of the unit: node 0 is f itself. */
static struct sl_table *sl__build_func(const struct srcline_dso *sd, struct sl_cu *cu,
				       uint32_t f)
{
	struct sl_table *t = cu->inl[f] = xzalloc(sizeof(*t));
	struct sl_build b = { .t = t };
	Dwarf_Die die;

	if (!dwarf_offdie(sd->dw, cu->funcs.nodes[f].off, &die) ||
	    sl__add_node(&b, &die, DW_TAG_subprogram, NONE, 0) == NONE) {
		free(b.ivs);
		return t;
	}
	sl__walk(&b, &die, 0, 1);
	sl__flatten(&b);
	return t;
}

static void sl_table__exit(struct sl_table *t)
{
	for (size_t j = 0; j < t->nr_nodes; j++)
		free(t->nodes[j].display);
	free(t->nodes);
	free(t->segs);
}

static int sl_cu_range__cmp(const void *a, const void *b)
{
	const struct sl_cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

/*
 * libdw reads, and decompresses, every DWARF section it knows when it opens
 * a file: for Debian's compressed libc debug file that is 0.1 s of zlib.
 * Sections we never ask about are renamed in a private copy of the section
 * headers (".debug_loclists" -> "debug_loclists") so libdw leaves them;
 * without lines, the line tables too.
 */
static void srcline__hide(Elf *elf, unsigned flags)
{
	static const char *const unused[] = {
		"debug_loc", "debug_loclists", "debug_macro", "debug_macinfo", "debug_frame", "debug_pubnames", "debug_pubtypes", "debug_gnu_pubnames",
		"debug_gnu_pubtypes", "debug_names",
	};
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name, *key;
		bool hide = false;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    name[0] != '.')
			continue;
		key = name + (name[1] == 'z' ? 2 : 1);	/* .zdebug_*: GNU compression */
		for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]) && !hide; i++)
			hide = !strcmp(key, unused[i]);
		if (!(flags & SRCLINE_LINES))
			hide |= !strcmp(key, "debug_line") || !strcmp(key, "debug_line_str");
		if (hide) {	/* the same string from "debug_...": no name libdw knows */
			sh.sh_name += (Elf64_Word)(key - name);
			gelf_update_shdr(scn, &sh);
		}
	}
}

/* The units' address ranges from .debug_aranges, the table compilers write
 * for this (reading every unit's DIE for its ranges costs 15 ms in libc).
 * 0, or -ENOENT when there is none. */
static int srcline__aranges(struct srcline_dso *sd)
{
	struct u64map idx = { 0 };	/* unit DIE offset -> index + 1 */
	size_t n = 0, cus_cap = 0, ranges_cap = 0;
	Dwarf_Aranges *ar;

	if (dwarf_getaranges(sd->dw, &ar, &n) || !n)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		uint64_t *slot;

		if (!a || dwarf_getarangeinfo(a, &addr, &len, &off) || !len)
			continue;
		slot = u64map__slot(&idx, off);
		if (!*slot) {
			sd->cus = xgrow(sd->cus, &cus_cap, sd->nr_cus + 1, sizeof(*sd->cus));
			sd->cus[sd->nr_cus] = (struct sl_cu){ .off = off };
			*slot = ++sd->nr_cus;
		}
		sd->ranges = xgrow(sd->ranges, &ranges_cap, sd->nr_ranges + 1, sizeof(*sd->ranges));
		sd->ranges[sd->nr_ranges++] = (struct sl_cu_range){ addr, addr + len,
								   (uint32_t)*slot - 1 };
	}
	u64map__exit(&idx);
	xpu_qsort(sd->ranges, sd->nr_ranges, sizeof(*sd->ranges), sl_cu_range__cmp);
	return sd->nr_ranges ? 0 : -ENOENT;
}

static struct srcline_dso *srcline__open(struct dso *dso, unsigned flags)
{
	struct srcline_dso *sd = xzalloc(sizeof(*sd));
	size_t cus_cap = 0, ranges_cap = 0;
	Dwarf_CU *unit = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	int fd;

	dso->srcline = sd;
	dso->srcline_exit = srcline__dso_exit;
	if (!dso__dwarf_elf(dso, &fd) || fd < 0 ||
	    !(sd->elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL)))
		return sd;
	/* a compressed separate debug file: a plain copy for the next reports */
	if (dso->dwarf_elf != dso->elf && dso->build_id_size && debug_plain__compressed(sd->elf)) {
		int err = debug_plain__save(fd, dso->build_id, dso->build_id_size);

		debug(1, "%s: plain copy of its compressed DWARF in the build-id cache: %s",
		      dso->path, err ? strerror(-err) : "ok");
	}
	srcline__hide(sd->elf, flags);
	if (!(sd->dw = dwarf_begin_elf(sd->elf, DWARF_C_READ, NULL)))
		return sd;
	srcline__debug_sections(sd);
	if (!srcline__aranges(sd)) {
		debug(2, "%s: DWARF with %zu compilation units (.debug_aranges)", dso->path,
		      sd->nr_cus);
		return sd;
	}
	/* no .debug_aranges (clang leaves it out): every unit's own ranges */
	while (dwarf_get_units(sd->dw, unit, &unit, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		/* type units have no code; split units (.dwo) are not read */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		sd->cus = xgrow(sd->cus, &cus_cap, sd->nr_cus + 1, sizeof(*sd->cus));
		sd->cus[sd->nr_cus] = (struct sl_cu){ .off = dwarf_dieoffset(&cudie) };
		while ((it = dwarf_ranges(&cudie, it, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			sd->ranges = xgrow(sd->ranges, &ranges_cap, sd->nr_ranges + 1,
					   sizeof(*sd->ranges));
			sd->ranges[sd->nr_ranges++] = (struct sl_cu_range){ lo, hi,
									   (uint32_t)sd->nr_cus };
		}
		sd->nr_cus++;
	}
	xpu_qsort(sd->ranges, sd->nr_ranges, sizeof(*sd->ranges), sl_cu_range__cmp);
	debug(2, "%s: DWARF with %zu compilation units", dso->path, sd->nr_cus);
	return sd;
}

static struct sl_cu *srcline__find_cu(const struct srcline_dso *sd, uint64_t vaddr)
{
	size_t lo = 0, hi = sd->nr_ranges;

	if (!hi || vaddr < sd->ranges[0].lo)
		return NULL;
	while (hi - lo > 1) {		/* the last range starting at or before vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (sd->ranges[mid].lo <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* a unit's range may enclose others' (a stray low_pc/high_pc): look
	 * back a little */
	for (size_t i = lo + 1, n = 0; i-- > 0 && n < 8; n++)
		if (vaddr < sd->ranges[i].hi)
			return &sd->cus[sd->ranges[i].cu];
	return NULL;
}

static const struct sl_seg *srcline__find_seg(const struct sl_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nr_segs;

	if (!hi || vaddr < t->segs[0].lo)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->segs[mid].lo <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return vaddr < t->segs[lo].hi ? &t->segs[lo] : NULL;
}

/* An inlined function's name as symbols show names: the demangled linkage
 * name with its parameters, else DW_AT_name (both through the abstract
 * origin). */
static const char *srcline__node_name(const struct srcline_dso *sd, struct sl_node *n)
{
	Dwarf_Die die;
	Dwarf_Attribute at;
	const char *link = NULL, *name = NULL;
	char *d = NULL;

	if (n->display)
		return n->display;
	if (dwarf_offdie(sd->dw, n->off, &die)) {
		link = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_linkage_name, &at));
		if (!link)
			link = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name,
								     &at));
		name = dwarf_diename(&die);
	}
	if (link)
		d = demangle(link, true);
	n->display = d ? d : xstrdup(name ? name : link ? link : "[unknown]");
	return n->display;
}

static const char *srcline__call_file(struct sl_cu *cu, const struct sl_node *n)
{
	if (!cu->files_read) {	/* libdw 0.188 reads the unit's line program for it */
		cu->files_read = true;
		if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nr_files))
			cu->files = NULL;
	}
	if (!cu->files || n->call_file == NONE || n->call_file >= cu->nr_files)
		return NULL;
	return dwarf_filesrc(cu->files, n->call_file, NULL, NULL);
}

int srcline__lookup(struct dso *dso, uint64_t vaddr, unsigned flags, struct srcline_chain *out)
{
	struct srcline_dso *sd = dso->srcline;
	uint32_t chain[SRCLINE_MAX_DEPTH];	/* inlined nodes, innermost first */
	struct sl_node *inner = NULL;		/* the node just inside the kept levels */
	struct sl_table *t = NULL;
	struct sl_cu *cu;
	int k = 0;

	out->n = 0;
	out->comp_dir = NULL;
	if (!sd && dso->status == DSO_OK)
		sd = srcline__open(dso, flags);
	if (!sd || !sd->dw || !(cu = srcline__find_cu(sd, vaddr)))
		return -ENOENT;
	if (!cu->built)
		sl__build_cu(sd, cu);
	if (!cu->valid)
		return -ENOENT;
	out->comp_dir = cu->comp_dir;
	/* the inlined levels are walked for their lines too: without their
	 * frames (--no-inline), the function's own line is the call of the
	 * outermost one, not a line of the code inlined there */
	if (flags & (SRCLINE_INLINE | SRCLINE_LINES)) {
		const struct sl_seg *seg = srcline__find_seg(&cu->funcs, vaddr);
		uint32_t node = NONE;
		size_t walked = 0;

		if (seg) {
			t = cu->inl[seg->node] ? cu->inl[seg->node] : sl__build_func(sd, cu, seg->node);
			seg = srcline__find_seg(t, vaddr);
			node = seg ? seg->node : NONE;
		}
		/* innermost first; past SRCLINE_MAX_DEPTH - 1 levels the inner
		 * ones go (the last dropped one gives the kept one its line) */
		for (; node != NONE && t->nodes[node].inlined && walked < t->nr_nodes;
		     node = t->nodes[node].parent, walked++) {
			if (k == SRCLINE_MAX_DEPTH - 1) {
				inner = &t->nodes[chain[0]];
				memmove(chain, chain + 1, (size_t)(k - 1) * sizeof(*chain));
				k--;
			}
			chain[k++] = node;
		}
	}
	out->lv[0] = (struct srcline_level){ NULL, NULL, 0 };
	if (!(flags & SRCLINE_INLINE) && k) {	/* lines only: the outermost call */
		const struct sl_node *outer = &t->nodes[chain[k - 1]];

		out->n = 1;
		out->lv[0].file = srcline__call_file(cu, outer);
		out->lv[0].line = out->lv[0].file ? outer->call_line : 0;
		return 0;
	}
	out->n = k + 1;
	for (int i = 0; i < k; i++)	/* outermost inlined function first */
		out->lv[i + 1] = (struct srcline_level){
			srcline__node_name(sd, &t->nodes[chain[k - 1 - i]]), NULL, 0 };
	if (!(flags & SRCLINE_LINES))
		return 0;
	/* each level is at the call of the level inside it; the innermost
	 * at the line table's line for vaddr */
	for (int i = 0; i < k; i++) {
		const struct sl_node *callee = &t->nodes[chain[k - 1 - i]];

		out->lv[i].file = srcline__call_file(cu, callee);
		out->lv[i].line = out->lv[i].file ? callee->call_line : 0;
	}
	if (inner) {
		out->lv[k].file = srcline__call_file(cu, inner);
		out->lv[k].line = out->lv[k].file ? inner->call_line : 0;
	} else {
		Dwarf_Line *line = dwarf_getsrc_die(&cu->die, vaddr);
		int lineno = 0;

		if (line && (out->lv[k].file = dwarf_linesrc(line, NULL, NULL)) &&
		    !dwarf_lineno(line, &lineno) && lineno > 0)
			out->lv[k].line = (uint32_t)lineno;
		else
			out->lv[k].file = NULL;
	}
	return 0;
}

const char *srcline__basename(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

void srcline__dso_exit(struct dso *dso)
{
	struct srcline_dso *sd = dso->srcline;

	if (!sd)
		return;
	for (size_t i = 0; i < sd->nr_cus; i++) {
		struct sl_cu *cu = &sd->cus[i];

		for (size_t f = 0; cu->inl && f < cu->funcs.nr_nodes; f++) {
			if (cu->inl[f])
				sl_table__exit(cu->inl[f]);
			free(cu->inl[f]);
		}
		free(cu->inl);
		sl_table__exit(&cu->funcs);
	}
	free(sd->cus);
	free(sd->ranges);
	free(sd->debug);
	if (sd->dw)
		dwarf_end(sd->dw);
	if (sd->elf)
		elf_end(sd->elf);
	free(sd);
	dso->srcline = NULL;
}
