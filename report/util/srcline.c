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
#include "report/util/demangle.h"
#include "report/util/dso.h"
#include "report/util/srcline.h"

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

struct sl_cu {
	Dwarf_Die die;
	bool built;
	struct sl_node *nodes;
	size_t nr_nodes, nodes_cap;
	struct sl_seg *segs;
	size_t nr_segs;
	Dwarf_Files *files;		/* for DW_AT_call_file */
	size_t nr_files;
	const char *comp_dir;
};

struct sl_cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

struct srcline_dso {
	Dwarf *dw;			/* NULL: no DWARF */
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
	struct sl_cu *cu;
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

static bool sl__descend(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
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
	struct sl_cu *cu = b->cu;
	uint32_t idx = (uint32_t)cu->nr_nodes;
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
	cu->nodes = xgrow(cu->nodes, &cu->nodes_cap, cu->nr_nodes + 1, sizeof(*cu->nodes));
	cu->nodes[idx] = (struct sl_node){ .parent = parent, .call_file = NONE,
					   .inlined = tag == DW_TAG_inlined_subroutine,
					   .off = dwarf_dieoffset(die) };
	if (tag == DW_TAG_inlined_subroutine) {
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &at), &w) && w < NONE)
			cu->nodes[idx].call_file = (uint32_t)w;
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &at), &w) && w < NONE)
			cu->nodes[idx].call_line = (uint32_t)w;
	}
	cu->nr_nodes++;
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
		if (sl__descend(tag))
			sl__walk(b, &child, node, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void sl__add_seg(struct sl_cu *cu, size_t *cap, uint64_t lo, uint64_t hi, uint32_t node)
{
	if (lo >= hi)
		return;
	if (cu->nr_segs && cu->segs[cu->nr_segs - 1].hi == lo &&
	    cu->segs[cu->nr_segs - 1].node == node) {
		cu->segs[cu->nr_segs - 1].hi = hi;
		return;
	}
	cu->segs = xgrow(cu->segs, cap, cu->nr_segs + 1, sizeof(*cu->segs));
	cu->segs[cu->nr_segs++] = (struct sl_seg){ lo, hi, node };
}

/* Nested ranges -> disjoint segments naming the innermost node: a sweep in
 * start order with the open ranges on a stack (the one started last is the
 * innermost; ranges that overlap without nesting, which DWARF should not
 * have, go to the one started last). */
static void sl__flatten(struct sl_build *b)
{
	struct sl_cu *cu = b->cu;
	struct sl_iv **stk = xcalloc(b->nr_ivs + 1, sizeof(*stk));
	size_t sp = 0, cap = 0;
	uint64_t pos = 0;

	xpu_qsort(b->ivs, b->nr_ivs, sizeof(*b->ivs), sl_iv__cmp);
	for (size_t i = 0; i < b->nr_ivs; i++) {
		struct sl_iv *iv = &b->ivs[i];

		while (sp && stk[sp - 1]->hi <= iv->lo) {
			if (stk[sp - 1]->hi > pos) {
				sl__add_seg(cu, &cap, pos, stk[sp - 1]->hi, stk[sp - 1]->node);
				pos = stk[sp - 1]->hi;
			}
			sp--;
		}
		if (sp && iv->lo > pos)
			sl__add_seg(cu, &cap, pos, iv->lo, stk[sp - 1]->node);
		if (iv->lo > pos)
			pos = iv->lo;
		stk[sp++] = iv;
	}
	while (sp) {
		if (stk[sp - 1]->hi > pos) {
			sl__add_seg(cu, &cap, pos, stk[sp - 1]->hi, stk[sp - 1]->node);
			pos = stk[sp - 1]->hi;
		}
		sp--;
	}
	free(stk);
}

static void sl__build_cu(struct sl_cu *cu)
{
	struct sl_build b = { .cu = cu };
	Dwarf_Attribute at;

	cu->built = true;
	cu->comp_dir = dwarf_formstring(dwarf_attr(&cu->die, DW_AT_comp_dir, &at));
	if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nr_files))
		cu->files = NULL;
	sl__walk(&b, &cu->die, NONE, 0);
	sl__flatten(&b);
	free(b.ivs);
}

static int sl_cu_range__cmp(const void *a, const void *b)
{
	const struct sl_cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

static struct srcline_dso *srcline__open(struct dso *dso)
{
	struct srcline_dso *sd = xzalloc(sizeof(*sd));
	size_t cus_cap = 0, ranges_cap = 0;
	Dwarf_CU *unit = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	Elf *elf;

	dso->srcline = sd;
	elf = dso__dwarf_elf(dso);
	if (!elf || !(sd->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)))
		return sd;
	while (dwarf_get_units(sd->dw, unit, &unit, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		/* type units have no code; split units (.dwo) are not read */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		sd->cus = xgrow(sd->cus, &cus_cap, sd->nr_cus + 1, sizeof(*sd->cus));
		sd->cus[sd->nr_cus] = (struct sl_cu){ .die = cudie };
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

static const struct sl_seg *srcline__find_seg(const struct sl_cu *cu, uint64_t vaddr)
{
	size_t lo = 0, hi = cu->nr_segs;

	if (!hi || vaddr < cu->segs[0].lo)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->segs[mid].lo <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return vaddr < cu->segs[lo].hi ? &cu->segs[lo] : NULL;
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

static const char *srcline__call_file(const struct sl_cu *cu, const struct sl_node *n)
{
	if (!cu->files || n->call_file == NONE || n->call_file >= cu->nr_files)
		return NULL;
	return dwarf_filesrc(cu->files, n->call_file, NULL, NULL);
}

int srcline__lookup(struct dso *dso, uint64_t vaddr, unsigned flags, struct srcline_chain *out)
{
	struct srcline_dso *sd = dso->srcline;
	uint32_t chain[SRCLINE_MAX_DEPTH];	/* inlined nodes, innermost first */
	struct sl_node *inner = NULL;		/* the node just inside the kept levels */
	struct sl_cu *cu;
	int k = 0;

	out->n = 0;
	out->comp_dir = NULL;
	if (!sd && dso->status == DSO_OK)
		sd = srcline__open(dso);
	if (!sd || !sd->dw || !(cu = srcline__find_cu(sd, vaddr)))
		return -ENOENT;
	if (!cu->built)
		sl__build_cu(cu);
	out->comp_dir = cu->comp_dir;
	if (flags & SRCLINE_INLINE) {
		const struct sl_seg *seg = srcline__find_seg(cu, vaddr);
		uint32_t node = seg ? seg->node : NONE;
		size_t walked = 0;

		/* innermost first; past SRCLINE_MAX_DEPTH - 1 levels the inner
		 * ones go (the last dropped one gives the kept one its line) */
		for (; node != NONE && cu->nodes[node].inlined && walked < cu->nr_nodes;
		     node = cu->nodes[node].parent, walked++) {
			if (k == SRCLINE_MAX_DEPTH - 1) {
				inner = &cu->nodes[chain[0]];
				memmove(chain, chain + 1, (size_t)(k - 1) * sizeof(*chain));
				k--;
			}
			chain[k++] = node;
		}
	}
	out->n = k + 1;
	out->lv[0] = (struct srcline_level){ NULL, NULL, 0 };
	for (int i = 0; i < k; i++)	/* outermost inlined function first */
		out->lv[i + 1] = (struct srcline_level){
			srcline__node_name(sd, &cu->nodes[chain[k - 1 - i]]), NULL, 0 };
	if (!(flags & SRCLINE_LINES))
		return 0;
	/* each level is at the call of the level inside it; the innermost
	 * at the line table's line for vaddr */
	for (int i = 0; i < k; i++) {
		const struct sl_node *callee = &cu->nodes[chain[k - 1 - i]];

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
		for (size_t j = 0; j < sd->cus[i].nr_nodes; j++)
			free(sd->cus[i].nodes[j].display);
		free(sd->cus[i].nodes);
		free(sd->cus[i].segs);
	}
	free(sd->cus);
	free(sd->ranges);
	if (sd->dw)
		dwarf_end(sd->dw);
	free(sd);
	dso->srcline = NULL;
}
