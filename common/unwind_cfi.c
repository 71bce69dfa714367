// SPDX-License-Identifier: MIT
/* libdwfl's CFI frame step over cached rules (see unwind_cfi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "common/xalloc.h"
#include "common/unwind_cfi.h"
#include "common/unwind_simple.h"
#include "common/elf_pages.h"

/* libdwfl's limits on one expression (frame_unwind.c). */
#define CFI_EXPR_STACK_MAX	0x100
#define CFI_EXPR_STEPS_MAX	0x1000
#define CFI_RA			16	/* x86-64 return address column (RIP) */
#define CFI_SP			7	/* x86-64 rsp */

/* What dwarf_frame_register() said about a register. */
enum cfi_reg_kind {
	CFI_REG_ERROR,		/* libdw error: the register stays unset */
	CFI_REG_UNDEFINED,
	CFI_REG_SAME,
	CFI_REG_EXPR,		/* ops[op .. op + nops) */
	/* the shapes dwarf_frame_register() gives for the common rules */
	CFI_REG_OFFSET,		/* offset(N): [CFA + N] */
	CFI_REG_VAL_OFFSET,	/* val_offset(N): CFA + N */
	CFI_REG_REGISTER,	/* register(R) */
};

/* A computed register's rule: 16 bytes, kept only for the registers a
 * rule computes (a few of 17), beside the rule in the file's arena: a DWARF report of
 * gcc met 12,700 lookup pcs, and rules holding all 17 registers were 6 MB
 * of fresh pages (1,500 page faults, a tenth of the report's). */
struct cfi_reg {
	union {
		uint64_t n;		/* N, or R */
		const Dwarf_Op *ops;	/* CFI_REG_EXPR: its nops ops */
	};
	uint32_t nops;
	uint8_t kind;
	uint8_t regno;
};

struct cfi_rule {
	bool fallback;		/* libdwfl leaves CFI here, or a signal frame */
	bool cfa_ok;		/* dwarf_frame_cfa() succeeded */
	uint32_t ra;		/* return address register of the CIE */
	Dwarf_Addr bias;	/* the file's in its own Dwfl (0 in practice) */
	const Dwarf_Op *cfa_ops;	/* the CFA's expression when not cfa_reg */
	uint32_t cfa_nops;
	bool cfa_reg;		/* the CFA is register cfa_r + cfa_off */
	uint32_t cfa_r;
	uint64_t cfa_off;
	/* the step in short: same-value registers as a mask, the registers
	 * computed by a rule (regs[0 .. nr_computed)), whether the return
	 * address is undefined */
	uint32_t same_mask;
	const struct cfi_reg *regs;
	uint8_t nr_computed;
	bool ra_undefined;
};

/* A Dwfl_Frame as far as x86-64 CFI unwinding uses one. */
struct cfi_state {
	uint64_t regs[UNWIND_CFI_NREGS];
	uint32_t set;		/* bit per register whose value is known */
	uint32_t orig;		/* bit per register still holding the sample's value */
	uint64_t pc;
	bool initial;
};

/* A runtime pc of a process: its file's rule, the load bias. */
struct cfi_pc {
	const struct cfi_rule *rule;	/* NULL: in no file (libdwfl's fallback) */
	uint64_t bias;
};

struct cfi_eval {
	const struct cfi_state *st;
	const struct cfi_rule *rule;
	uint64_t bias;			/* the mapping's load bias */
	const struct unwind_cfi_mem *mem;
	int cfa_state;		/* 0: not computed yet, 1: cfa, -1: failed */
	uint64_t cfa;
};

/*
 * libdw (0.188, getcfi_shdr()) takes .eh_frame_hdr's search table only when
 * that section comes before .eh_frame in the section headers. In files
 * linked the other way round (Debian's libLLVM-14 and libclang-cpp; not
 * PyTorch 2.11's libraries) it finds an FDE by reading .eh_frame from
 * the start and keeps every FDE it passes: 1,000 lookups in libLLVM-14 kept
 * 7.6 MB, and each new one scanned. Without section headers libdw takes
 * the table from PT_GNU_EH_FRAME (getcfi_phdr()): for those files the
 * rules come from a private mapping of the file whose ELF header is made to
 * say it has none (68 KB for the same lookups). The FDEs are the same
 * bytes, so the rules are the same (XPU_UNWIND_CHECK compares with libdwfl).
 */
static void unwind_cfi__hdr_open(struct unwind_cfi *c, int fd)
{
	size_t shstrndx, size, nphdr;
	bool eh_seen = false, reversed = false, has_phdr = false;
	Elf_Scn *scn = NULL;
	Dwarf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(c->mod, &bias);
	const char *raw = elf ? elf_rawfile(elf, &size) : NULL;
	char *map;

	if (!raw || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nphdr))
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame")) {
			eh_seen = true;
			c->hdr_at[0][0] = sh.sh_offset;
			c->hdr_at[0][1] = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			reversed = eh_seen;
			c->hdr_at[1][0] = sh.sh_offset;
			c->hdr_at[1][1] = sh.sh_size;
		}
	}
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			has_phdr = true;
	}
	if (!reversed || !has_phdr || !c->hdr_at[0][1])
		return;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return;
	if (memcmp(map, raw, sizeof(Elf64_Ehdr))) {	/* not the file libdwfl read */
		munmap(map, size);
		return;
	}
	((Elf64_Ehdr *)map)->e_shoff = 0;
	((Elf64_Ehdr *)map)->e_shnum = 0;
	((Elf64_Ehdr *)map)->e_shstrndx = SHN_UNDEF;
	c->hdr_elf = elf_memory(map, size);
	c->hdr_cfi = c->hdr_elf ? dwarf_getcfi_elf(c->hdr_elf) : NULL;
	if (!c->hdr_cfi) {
		if (c->hdr_elf)
			elf_end(c->hdr_elf);
		c->hdr_elf = NULL;
		munmap(map, size);
		return;
	}
	c->hdr_map = map;
	c->hdr_map_size = size;
}

void unwind_cfi__init(struct unwind_cfi *c, Dwfl *dwfl, Dwfl_Module *mod, int fd)
{
	memset(c, 0, sizeof(*c));
	c->dwfl = dwfl;
	c->mod = dwfl ? mod : NULL;
	pthread_rwlock_init(&c->lock, NULL);
	u64map__init(&c->rule_of);
	if (c->mod && fd >= 0)
		unwind_cfi__hdr_open(c, fd);
}

void unwind_cfi__exit(struct unwind_cfi *c)
{
	if (c->hdr_cfi)
		dwarf_cfi_end(c->hdr_cfi);
	if (c->hdr_elf)
		elf_end(c->hdr_elf);
	if (c->hdr_map)
		munmap(c->hdr_map, c->hdr_map_size);
	if (c->dwfl)
		dwfl_end(c->dwfl);
	u64map__exit(&c->rule_of);
	for (size_t i = 0; i < c->nr_blocks; i++)
		free(c->blocks[i]);
	free(c->blocks);
	pthread_rwlock_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

void unwind_cfi_pcs__init(struct unwind_cfi_pcs *p, unwind_cfi_module_fn module, void *arg)
{
	memset(p, 0, sizeof(*p));
	u64map__init(&p->at);
	p->module = module;
	p->arg = arg;
}

void unwind_cfi_pcs__exit(struct unwind_cfi_pcs *p)
{
	u64map__exit(&p->at);
	free(p->pcs);
	memset(p, 0, sizeof(*p));
}

void unwind_cfi_pcs__reset(struct unwind_cfi_pcs *p)
{
	/* the array is kept: the same pcs mostly come back */
	u64map__exit(&p->at);
	u64map__init(&p->at);
	p->nr = 0;
	memset(p->recent, 0, sizeof(p->recent));
}

/* Register regno of s, noting in m->reg_reads a sample's register read. */
static inline bool cfi_state__reg(const struct cfi_state *s, const struct unwind_cfi_mem *m,
				  unsigned regno, uint64_t *val)
{
	if (regno >= UNWIND_CFI_NREGS || !(s->set & (1u << regno)))
		return false;
	if (m->reg_reads && (s->orig & (1u << regno)))
		*m->reg_reads |= 1u << regno;
	*val = s->regs[regno];
	return true;
}

/* The memory_read callback of unwind.c, its stack-copy half inline. */
static inline bool cfi__read(const struct unwind_cfi_mem *m, uint64_t addr, uint64_t *val)
{
	/* not addr - sp + 8 <= size: that wraps to 0..7 for addr just below
	 * 2^64 + sp and would read before the copy */
	if (addr >= m->sp && m->size >= 8 && addr - m->sp <= m->size - 8) {
		memcpy(val, m->stack + (addr - m->sp), 8);
		return true;
	}
	return m->read(addr, val, m->arg);
}

static int bra__cmp(const void *key, const void *elem)
{
	Dwarf_Word offset = (uintptr_t)key;
	const Dwarf_Op *op = elem;

	return (offset > op->offset) - (offset < op->offset);
}

/*
 * libdwfl's expr_eval(): in_frame is its "frame != NULL" (a register rule,
 * where DW_OP_call_frame_cfa is allowed), false for the CFA expression.
 */
static inline bool cfi__cfa(struct cfi_eval *e, uint64_t *cfa);

static bool cfi__eval(struct cfi_eval *e, bool in_frame, const Dwarf_Op *ops,
		      size_t nops, uint64_t *result)
{
	uint64_t stack[CFI_EXPR_STACK_MAX], v1, v2, v3;
	size_t used = 0, steps = 0;
	bool is_location = false;

#define PUSH(x) do { if (used >= CFI_EXPR_STACK_MAX) return false; stack[used++] = (x); } while (0)
#define POP(x) do { if (!used) return false; (x) = stack[--used]; } while (0)
	if (nops == 0)
		return false;
	for (const Dwarf_Op *op = ops; op < ops + nops; op++) {
		if (++steps > CFI_EXPR_STEPS_MAX)
			return false;
		switch (op->atom) {
		case DW_OP_lit0 ... DW_OP_lit31:
			PUSH((uint64_t)(op->atom - DW_OP_lit0));
			break;
		case DW_OP_addr:
			PUSH(op->number + e->rule->bias + e->bias);
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_reg0 ... DW_OP_reg31:
			if (!cfi_state__reg(e->st, e->mem, op->atom - DW_OP_reg0, &v1))
				return false;
			PUSH(v1);
			break;
		case DW_OP_regx:
			if (!cfi_state__reg(e->st, e->mem, (unsigned)op->number, &v1))
				return false;
			PUSH(v1);
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
			if (!cfi_state__reg(e->st, e->mem, op->atom - DW_OP_breg0, &v1))
				return false;
			PUSH(v1 + op->number);
			break;
		case DW_OP_bregx:
			if (!cfi_state__reg(e->st, e->mem, (unsigned)op->number, &v1))
				return false;
			PUSH(v1 + op->number2);
			break;
		case DW_OP_dup:
			POP(v1);
			PUSH(v1);
			PUSH(v1);
			break;
		case DW_OP_drop:
			POP(v1);
			break;
		case DW_OP_pick:
			if (used <= op->number)
				return false;
			v1 = stack[used - 1 - op->number];
			PUSH(v1);
			break;
		case DW_OP_over:
			POP(v1);
			POP(v2);
			PUSH(v2);
			PUSH(v1);
			PUSH(v2);
			break;
		case DW_OP_swap:
			POP(v1);
			POP(v2);
			PUSH(v1);
			PUSH(v2);
			break;
		case DW_OP_rot:
			POP(v1);
			POP(v2);
			POP(v3);
			PUSH(v1);
			PUSH(v3);
			PUSH(v2);
			break;
		case DW_OP_deref:
		case DW_OP_deref_size:
			POP(v1);
			if (!cfi__read(e->mem, v1, &v1))
				return false;
			if (op->atom == DW_OP_deref_size) {
				if (op->number > 8)
					return false;
				if (op->number < 8)
					v1 &= (1ULL << (op->number * 8)) - 1;
			}
			PUSH(v1);
			break;
		case DW_OP_abs:
			POP(v1);
			PUSH((uint64_t)llabs((int64_t)v1));
			break;
		case DW_OP_neg:
			POP(v1);
			PUSH(-v1);
			break;
		case DW_OP_not:
			POP(v1);
			PUSH(~v1);
			break;
		case DW_OP_plus_uconst:
			POP(v1);
			PUSH(v1 + op->number);
			break;
#define BINOP(atom, expr) case atom: POP(v2); POP(v1); PUSH(expr); break;
		BINOP(DW_OP_and, v1 & v2)
		BINOP(DW_OP_minus, v1 - v2)
		BINOP(DW_OP_mul, v1 * v2)
		BINOP(DW_OP_or, v1 | v2)
		BINOP(DW_OP_plus, v1 + v2)
		BINOP(DW_OP_shl, v1 << (v2 & 63))	/* as x86 shifts */
		BINOP(DW_OP_shr, v1 >> (v2 & 63))
		BINOP(DW_OP_shra, (uint64_t)((int64_t)v1 >> (v2 & 63)))
		BINOP(DW_OP_xor, v1 ^ v2)
		BINOP(DW_OP_le, (int64_t)v1 <= (int64_t)v2)
		BINOP(DW_OP_ge, (int64_t)v1 >= (int64_t)v2)
		BINOP(DW_OP_eq, (int64_t)v1 == (int64_t)v2)
		BINOP(DW_OP_lt, (int64_t)v1 < (int64_t)v2)
		BINOP(DW_OP_gt, (int64_t)v1 > (int64_t)v2)
		BINOP(DW_OP_ne, (int64_t)v1 != (int64_t)v2)
#undef BINOP
		case DW_OP_div:
			POP(v2);
			POP(v1);
			if (v2 == 0)
				return false;
			if ((int64_t)v2 == -1)	/* INT64_MIN / -1 would trap */
				PUSH(-v1);
			else
				PUSH((uint64_t)((int64_t)v1 / (int64_t)v2));
			break;
		case DW_OP_mod:
			POP(v2);
			POP(v1);
			if (v2 == 0)
				return false;
			PUSH(v1 % v2);
			break;
		case DW_OP_bra:
			POP(v1);
			if (v1 == 0)
				break;
			/* fall through */
		case DW_OP_skip: {
			Dwarf_Word offset = op->offset + 1 + 2 + (int16_t)op->number;
			const Dwarf_Op *found = bsearch((void *)(uintptr_t)offset, ops, nops,
							sizeof(*ops), bra__cmp);

			if (!found)
				return false;
			op = found - 1;
			break;
		}
		case DW_OP_nop:
			break;
		case DW_OP_call_frame_cfa:
			if (!in_frame || !cfi__cfa(e, &v1))
				return false;
			PUSH(v1);
			is_location = true;
			break;
		case DW_OP_stack_value:
			is_location = false;
			break;
		default:	/* DW_OP_GNU_encoded_addr and the rest: libdwfl fails too */
			return false;
		}
	}
	POP(*result);
	if (is_location && !cfi__read(e->mem, *result, result))
		return false;
	return true;
#undef PUSH
#undef POP
}

/* The CFA of the frame being unwound, computed once per step: evaluating
 * it again reads the same memory and gives the same result. */
static inline bool cfi__cfa(struct cfi_eval *e, uint64_t *cfa)
{
	const struct cfi_rule *r = e->rule;

	if (!e->cfa_state) {
		if (!r->cfa_ok)
			e->cfa_state = -1;
		else if (r->cfa_reg)
			e->cfa_state = cfi_state__reg(e->st, e->mem, r->cfa_r, &e->cfa) ? 1 : -1;
		else
			e->cfa_state = cfi__eval(e, false, r->cfa_ops, r->cfa_nops,
						 &e->cfa) ? 1 : -1;
		if (e->cfa_state > 0 && r->cfa_reg)
			e->cfa += r->cfa_off;
	}
	*cfa = e->cfa;
	return e->cfa_state > 0;
}

/* size bytes of c's arena, 8-aligned: blocks of 64 KiB that never move
 * (the rules of a GPT-2 report are a few MB over a hundred files) */
static void *unwind_cfi__alloc(struct unwind_cfi *c, size_t size)
{
	enum { BLOCK = 64 << 10 };
	char *p;

	size = (size + 7) & ~(size_t)7;
	if (size > c->block_left) {
		size_t n = size > BLOCK ? size : BLOCK;

		c->blocks = xgrow(c->blocks, &c->blocks_cap, c->nr_blocks + 1, sizeof(*c->blocks));
		c->blocks[c->nr_blocks++] = c->block_at = xmalloc(n);
		c->block_left = n;
	}
	p = c->block_at;
	c->block_at += size;
	c->block_left -= size;
	return p;
}

static const Dwarf_Op *unwind_cfi__add_ops(struct unwind_cfi *c, const Dwarf_Op *ops, size_t n)
{
	Dwarf_Op *at = unwind_cfi__alloc(c, n * sizeof(*ops));

	memcpy(at, ops, n * sizeof(*ops));
	return at;
}

/* Recognizes the ops dwarf_frame_register() makes for offset(N),
 * val_offset(N) and register(R), evaluated without the interpreter. */
static void cfi_reg__shape(struct cfi_reg *reg, const Dwarf_Op *ops, size_t nops)
{
	size_t i = 1;
	uint64_t n = 0;

	if (nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number < UNWIND_CFI_NREGS) {
		reg->kind = CFI_REG_REGISTER;
		reg->n = ops[0].number;
		return;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		n = ops[i++].number;
	if (i == nops) {
		reg->kind = CFI_REG_OFFSET;
		reg->n = n;
	} else if (i + 1 == nops && ops[i].atom == DW_OP_stack_value) {
		reg->kind = CFI_REG_VAL_OFFSET;
		reg->n = n;
	}
}

/* Reads what handle_cfi() asks libdw for, once per lookup pc. */
static void unwind_cfi__compile(struct unwind_cfi *c, struct cfi_rule *r, Dwarf_Frame *frame,
				Dwarf_Addr bias)
{
	struct cfi_reg computed[UNWIND_CFI_NREGS];
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, &signal);

	if (ra < 0 || signal)
		return;		/* r->fallback stays set */
	r->ra = (uint32_t)ra;
	r->bias = bias;
	r->cfa_ok = dwarf_frame_cfa(frame, &ops, &nops) == 0;
	if (r->cfa_ok) {
		r->cfa_nops = (uint32_t)nops;
		if (nops == 1 && ops[0].atom == DW_OP_bregx) {
			r->cfa_reg = true;
			r->cfa_r = (uint32_t)ops[0].number;
			r->cfa_off = ops[0].number2;
			if (ops[0].number != r->cfa_r)	/* truncated as libdwfl does */
				r->cfa_reg = false;
		}
		/* the pool keeps only the ops that are evaluated: a register
		 * CFA (nearly every rule) is computed without them */
		if (!r->cfa_reg)
			r->cfa_ops = unwind_cfi__add_ops(c, ops, nops);
	}
	for (int regno = 0; regno < UNWIND_CFI_NREGS; regno++) {
		Dwarf_Op mem[3];
		struct cfi_reg reg = { .regno = (uint8_t)regno };

		ops = NULL;
		nops = 0;
		if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
			reg.kind = CFI_REG_ERROR;
		else if (nops == 0)
			reg.kind = ops == mem ? CFI_REG_UNDEFINED :
				   ops == NULL ? CFI_REG_SAME : CFI_REG_ERROR;
		else if (nops > UINT16_MAX)
			return;		/* no such expression in practice: libdwfl's */
		else {
			reg.kind = CFI_REG_EXPR;
			reg.nops = (uint16_t)nops;
			cfi_reg__shape(&reg, ops, nops);
			/* offset(N), val_offset(N), register(R): step() reads
			 * reg.n only, so their ops need no copy */
			if (reg.kind == CFI_REG_EXPR)
				reg.ops = unwind_cfi__add_ops(c, ops, nops);
		}
		if (reg.kind == CFI_REG_SAME) {
			r->same_mask |= 1u << regno;
		} else if (reg.kind == CFI_REG_UNDEFINED) {
			r->ra_undefined |= (unsigned)regno == r->ra;
		} else if (reg.kind != CFI_REG_ERROR) {
			computed[r->nr_computed++] = reg;
		}
	}
	if (r->nr_computed) {
		struct cfi_reg *regs = unwind_cfi__alloc(c, r->nr_computed * sizeof(*regs));

		memcpy(regs, computed, r->nr_computed * sizeof(*regs));
		r->regs = regs;
	}
	r->fallback = false;
}

/* The rule for file address addr, found as __libdwfl_frame_unwind() finds
 * its CFI (the file's .eh_frame, else its .debug_frame). Read once. */
static const struct cfi_rule *unwind_cfi__rule(struct unwind_cfi *c, uint64_t addr)
{
	uint64_t *slot;
	struct cfi_rule *r;

	pthread_rwlock_rdlock(&c->lock);
	slot = u64map__find(&c->rule_of, addr);
	r = slot ? (struct cfi_rule *)(uintptr_t)*slot : NULL;
	pthread_rwlock_unlock(&c->lock);
	if (r)
		return r;
	pthread_rwlock_wrlock(&c->lock);
	slot = u64map__find(&c->rule_of, addr);	/* another thread's meanwhile */
	if (slot) {
		r = (struct cfi_rule *)(uintptr_t)*slot;
		pthread_rwlock_unlock(&c->lock);
		return r;
	}
	r = unwind_cfi__alloc(c, sizeof(*r));
	memset(r, 0, sizeof(*r));
	r->fallback = true;
	c->nr_rules++;
	if (c->mod) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Addr bias = 0;
		Dwarf_CFI *cfi = c->hdr_cfi;

		if (cfi)	/* the same .eh_frame, through its table */
			dwfl_module_getelf(c->mod, &bias);
		else
			cfi = dwfl_module_eh_cfi(c->mod, &bias);

		/* the module is at load address 0: its runtime address is the
		 * file address (and bias 0) */
		if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0) {
			frame = NULL;
			cfi = dwfl_module_dwarf_cfi(c->mod, &bias);
			if (cfi && dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0)
				frame = NULL;
		}
		if (frame) {
			unwind_cfi__compile(c, r, frame, bias);
			free(frame);
		}
		/* the rule is compiled: the CFI's pages can go back (elf_pages.h) */
		if (c->cfi_release >= 0 && elf_pages__due(&c->cfi_reads, c->cfi_release_every)) {
			static const char *const sections[] = {
				".eh_frame", ".eh_frame_hdr", ".debug_frame", NULL
			};
			Dwarf_Addr b;
			Elf *elf = dwfl_module_getelf(c->mod, &b);

			if (!c->cfi_release)
				c->cfi_release = elf_pages__sections_size(elf, sections) >=
						 elf_pages__min_region ? 1 : -1;
			if (c->cfi_release > 0) {
				elf_pages__release_sections(elf, sections);
				for (int i = 0; c->hdr_map && i < 2; i++)
					elf_pages__release(c->hdr_elf, c->hdr_map + c->hdr_at[i][0],
							   c->hdr_at[i][1]);
			}
		}
	}
	*u64map__slot(&c->rule_of, addr) = (uint64_t)(uintptr_t)r;
	pthread_rwlock_unlock(&c->lock);
	return r;
}

/* The process's entry for runtime lookup pc. */
static const struct cfi_pc *unwind_cfi__pc(struct unwind_cfi_pcs *p, uint64_t pc)
{
	unsigned hint = (unsigned)(pc ^ pc >> 6 ^ pc >> 12) & (ARRAY_SIZE(p->recent) - 1);
	uint64_t *slot;
	struct cfi_pc *e;
	struct unwind_cfi *c;
	uint64_t bias = 0;

	if (p->recent[hint].at && p->recent[hint].pc == pc)
		return &p->pcs[p->recent[hint].at - 1];
	slot = u64map__find(&p->at, pc);
	if (!slot) {
		c = p->module(pc, &bias, p->arg);
		p->pcs = xgrow(p->pcs, &p->cap, p->nr + 1, sizeof(*p->pcs));
		e = &p->pcs[p->nr++];
		e->bias = bias;
		e->rule = c ? unwind_cfi__rule(c, pc - bias) : NULL;
		slot = u64map__slot(&p->at, pc);
		*slot = p->nr;
	}
	p->recent[hint].pc = pc;
	p->recent[hint].at = (uint32_t)*slot;
	return &p->pcs[*slot - 1];
}

/*
 * handle_cfi(): the caller's frame of st into next. Returns 1 when next has
 * a pc, 0 when unwinding ends here (pc undefined or error), -1 for libdwfl.
 */
static int unwind_cfi__step(struct unwind_cfi_pcs *p, const struct cfi_state *st,
			    struct cfi_state *next, const struct unwind_cfi_mem *mem)
{
	const struct cfi_pc *at = unwind_cfi__pc(p, st->initial ? st->pc : st->pc - 1);
	const struct cfi_rule *r = at->rule;
	struct cfi_eval e;
	enum { PC_ERROR, PC_UNDEFINED, PC_SET } pc_state = PC_ERROR;

	if (!r || r->fallback)
		return -1;
	e = (struct cfi_eval){ st, r, at->bias, mem, 0, 0 };
	if (r->cfa_reg) {	/* reg + offset: no reads, so computing it early is free */
		e.cfa_state = cfi_state__reg(st, mem, r->cfa_r, &e.cfa) ? 1 : -1;
		e.cfa += r->cfa_off;
	}
	/* registers are read from st and written to next only, so the order
	 * of handle_cfi()'s register loop does not matter */
	next->set = st->set & r->same_mask;
	next->orig = st->orig & r->same_mask;
	memcpy(next->regs, st->regs, sizeof(next->regs));
	next->initial = false;
	if (r->ra_undefined)
		pc_state = PC_UNDEFINED;
	for (unsigned i = 0; i < r->nr_computed; i++) {
		const struct cfi_reg *reg = &r->regs[i];
		unsigned regno = reg->regno;
		uint64_t val;

		switch (reg->kind) {
		case CFI_REG_OFFSET:
			if (!cfi__cfa(&e, &val) || !cfi__read(mem, val + reg->n, &val))
				continue;
			break;
		case CFI_REG_VAL_OFFSET:
			if (!cfi__cfa(&e, &val))
				continue;
			val += reg->n;
			break;
		case CFI_REG_REGISTER:
			if (!cfi_state__reg(st, mem, (unsigned)reg->n, &val))
				continue;
			break;
		default:
			if (!cfi__eval(&e, true, reg->ops, reg->nops, &val))
				continue;
			break;
		}
		next->regs[regno] = val;
		next->set |= 1u << regno;
	}
	if (pc_state == PC_ERROR) {
		if (cfi_state__reg(next, mem, r->ra, &next->pc))
			pc_state = next->pc ? PC_SET : PC_UNDEFINED;
		else if (r->ra < UNWIND_CFI_NREGS)
			pc_state = PC_UNDEFINED;
	}
	return pc_state == PC_SET;
}

int unwind_cfi__frames(struct unwind_cfi_pcs *p, const uint64_t regs[UNWIND_CFI_NREGS],
		       const struct unwind_cfi_mem *mem, struct unwind_frame *frames, int max)
{
	struct cfi_state s[2], *cur = &s[0], *next = &s[1], *tmp;
	uint64_t prev_sp = UNWIND_SP_UNKNOWN;
	int nr = 0, ret = 0;

	memcpy(cur->regs, regs, sizeof(cur->regs));
	cur->set = (1u << UNWIND_CFI_NREGS) - 1;
	cur->orig = cur->set;
	cur->pc = regs[CFI_RA];
	cur->initial = true;
	for (;;) {
		bool stepped = false;

		/* unwind.c's frame callback asks dwfl_frame_pc() for the
		 * activation flag, which unwinds a non-initial frame first */
		if (!cur->initial) {
			if ((ret = unwind_cfi__step(p, cur, next, mem)) < 0)
				return -1;
			stepped = true;
		}
		if (cur->pc == 0)
			break;
		if (unwind__stuck(frames, nr, cur->pc, &prev_sp,
				  cur->set & (1u << CFI_SP) ? cur->regs[CFI_SP] : UNWIND_SP_UNKNOWN))
			break;
		/* no signal frames here: only the initial frame is an activation */
		frames[nr++] = (struct unwind_frame){ .pc = cur->pc, .activation = cur->initial };
		if (nr >= max)
			break;
		if (!stepped && (ret = unwind_cfi__step(p, cur, next, mem)) < 0)
			return -1;
		if (ret == 0)
			break;
		tmp = cur;
		cur = next;
		next = tmp;
	}
	return nr;
}

/* One register of r as unwind_simple.h says it, or false when its rule
 * reads other registers or memory other than at the CFA. */
static bool unwind_cfi__simple_reg(const struct cfi_rule *r, unsigned regno,
				   struct unwind_simple_reg *out)
{
	*out = (struct unwind_simple_reg){ 0, UNWIND_SIMPLE_UNSET, 0 };
	if (r->same_mask & (1u << regno)) {
		out->kind = UNWIND_SIMPLE_SAME;
		return true;
	}
	for (unsigned i = 0; i < r->nr_computed; i++) {
		const struct cfi_reg *reg = &r->regs[i];

		if (reg->regno != regno)
			continue;
		/* DW_CFA_expression [DW_OP_bregN n], as libdw gives it (the CFA
		 * pushed first): the word at rsp or rbp + n */
		if (reg->kind == CFI_REG_EXPR && reg->nops == 2 &&
		    reg->ops[0].atom == DW_OP_call_frame_cfa &&
		    (reg->ops[1].atom == DW_OP_breg0 + UNWIND_SIMPLE_RSP ||
		     reg->ops[1].atom == DW_OP_breg0 + UNWIND_SIMPLE_RBP) &&
		    (int64_t)reg->ops[1].number == (int32_t)reg->ops[1].number) {
			out->kind = UNWIND_SIMPLE_AT_REG;
			out->base = (uint8_t)(reg->ops[1].atom - DW_OP_breg0);
			out->n = (int32_t)reg->ops[1].number;
			return true;
		}
		if ((reg->kind != CFI_REG_OFFSET && reg->kind != CFI_REG_VAL_OFFSET) ||
		    (int64_t)reg->n != (int32_t)reg->n)
			return false;
		out->kind = reg->kind == CFI_REG_OFFSET ? UNWIND_SIMPLE_AT : UNWIND_SIMPLE_VAL;
		out->n = (int32_t)reg->n;
		return true;
	}
	return true;	/* undefined, or libdw's error: not known in the caller */
}

bool unwind_cfi__simple(struct unwind_cfi_pcs *p, uint64_t lookup_pc,
			struct unwind_simple_rule *out)
{
	const struct cfi_rule *r = unwind_cfi__pc(p, lookup_pc)->rule;

	if (!r || r->fallback || !r->cfa_ok || r->ra != CFI_RA)
		return false;
	if (r->cfa_reg) {
		if ((r->cfa_r != UNWIND_SIMPLE_RSP && r->cfa_r != UNWIND_SIMPLE_RBP) ||
		    (int64_t)r->cfa_off != (int32_t)r->cfa_off)
			return false;
		out->cfa_reg = (uint8_t)r->cfa_r;
		out->cfa_off = (int32_t)r->cfa_off;
		out->cfa_deref = false;
	} else {
		/* a realigned stack's: [DW_OP_bregN k, DW_OP_deref] */
		const Dwarf_Op *o = r->cfa_ops;

		if (r->cfa_nops != 2 || o[1].atom != DW_OP_deref ||
		    (o[0].atom != DW_OP_breg0 + UNWIND_SIMPLE_RSP &&
		     o[0].atom != DW_OP_breg0 + UNWIND_SIMPLE_RBP) ||
		    (int64_t)o[0].number != (int32_t)o[0].number)
			return false;
		out->cfa_reg = (uint8_t)(o[0].atom - DW_OP_breg0);
		out->cfa_off = (int32_t)o[0].number;
		out->cfa_deref = true;
	}
	if (!unwind_cfi__simple_reg(r, UNWIND_SIMPLE_RSP, &out->sp) ||
	    !unwind_cfi__simple_reg(r, UNWIND_SIMPLE_RBP, &out->bp) ||
	    !unwind_cfi__simple_reg(r, CFI_RA, &out->ra))
		return false;
	if (r->ra_undefined)
		out->ra = (struct unwind_simple_reg){ 0, UNWIND_SIMPLE_UNSET, 0 };
	return true;
}

/* ops as "atom(number,number2)..." into buf */
static void unwind_cfi__ops_str(const Dwarf_Op *ops, size_t n, char *buf, size_t size)
{
	size_t at = 0;

	for (size_t i = 0; i < n && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%#x(%lld,%lld)", i ? " " : "",
				       ops[i].atom, (long long)ops[i].number,
				       (long long)ops[i].number2);
}

void unwind_cfi__describe(struct unwind_cfi_pcs *p, uint64_t lookup_pc, char *buf, size_t size)
{
	const struct cfi_rule *r = unwind_cfi__pc(p, lookup_pc)->rule;
	char ops[160];
	size_t at;

	if (!r || r->fallback) {
		snprintf(buf, size, "%s", r ? "libdwfl's (no FDE, or a signal frame)" : "no file");
		return;
	}
	if (!r->cfa_ok)
		at = (size_t)snprintf(buf, size, "cfa: none");
	else if (r->cfa_reg)
		at = (size_t)snprintf(buf, size, "cfa: r%u%+lld", r->cfa_r, (long long)r->cfa_off);
	else {
		unwind_cfi__ops_str(r->cfa_ops, r->cfa_nops, ops, sizeof(ops));
		at = (size_t)snprintf(buf, size, "cfa: [%s]", ops);
	}
	for (unsigned i = 0; i < r->nr_computed && at < size; i++) {
		const struct cfi_reg *reg = &r->regs[i];

		switch (reg->kind) {
		case CFI_REG_OFFSET:
			at += (size_t)snprintf(buf + at, size - at, ", r%u at cfa%+lld", reg->regno,
					       (long long)reg->n);
			break;
		case CFI_REG_VAL_OFFSET:
			at += (size_t)snprintf(buf + at, size - at, ", r%u = cfa%+lld", reg->regno,
					       (long long)reg->n);
			break;
		case CFI_REG_REGISTER:
			at += (size_t)snprintf(buf + at, size - at, ", r%u = r%llu", reg->regno,
					       (unsigned long long)reg->n);
			break;
		default:
			unwind_cfi__ops_str(reg->ops, reg->nops, ops, sizeof(ops));
			at += (size_t)snprintf(buf + at, size - at, ", r%u: [%s]", reg->regno, ops);
			break;
		}
	}
	if (at < size)
		snprintf(buf + at, size - at, "; ra r%u%s, same %#x", r->ra,
			 r->ra_undefined ? " undefined" : "", r->same_mask);
}
