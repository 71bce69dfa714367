// SPDX-License-Identifier: MIT
/* Annotate: capstone disassembly + per-instruction weights + DWARF lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif
#include "common/xalloc.h"
#include "report/annotate/annotate.h"
#include "report/files/path.h"
#include "report/symbols/srcline.h"

#define ANNOTATE_MAX_BYTES (1u << 20)	/* functions larger than this are cut */

static void annotation__add(struct annotation *a, enum annotate_line_kind kind, uint64_t addr,
			    double weight, char *text)
{
	a->lines = xgrow(a->lines, &a->cap, a->nr + 1, sizeof(*a->lines));
	a->lines[a->nr++] = (struct annotate_line){ kind, addr, weight, text };
}

void annotation__exit(struct annotation *a)
{
	for (size_t i = 0; i < a->nr; i++)
		free(a->lines[i].text);
	free(a->lines);
	free(a->title);
	memset(a, 0, sizeof(*a));
}

/* The DSO and symbol a frame was named after: same short name, loadable,
 * with a symbol starting at the frame's address whose name matches. */
static struct dso *annotate__find_dso(struct session *s, const struct frame *f,
				      struct symbol **symp)
{
	struct dsos *d = &s->machine.dsos;
	struct dso *fallback = NULL;
	struct symbol *fsym = NULL;

	for (size_t i = 0; i < d->nr; i++) {
		struct dso *dso = d->list[i];
		struct symbol *sym;

		if (strcmp(dso->short_name, f->module) || dso__load(dso, d))
			continue;
		sym = dso__find_symbol(dso, f->addr);
		if (!sym || sym->addr != f->addr)
			continue;
		if (!strcmp(symtab__display(&dso->symtab, sym), f->name)) {
			*symp = sym;
			return dso;
		}
		if (!fallback) {
			fallback = dso;
			fsym = sym;
		}
	}
	*symp = fsym;
	return fallback;
}

/* File offset of vaddr through the PT_LOAD segments; -1 when not in a file. */
static int64_t annotate__offset(const struct dso *dso, uint64_t vaddr, uint64_t *avail)
{
	for (size_t i = 0; i < dso->nr_segs; i++) {
		const struct elf_seg *sg = &dso->segs[i];

		if (vaddr >= sg->vaddr && vaddr < sg->vaddr + sg->filesz) {
			*avail = sg->vaddr + sg->filesz - vaddr;
			return (int64_t)(sg->offset + (vaddr - sg->vaddr));
		}
	}
	return -1;
}

/* Source lines: "file:line" and the line's text when the file is readable. */
struct srcfile {
	char *path;
	char *data;
	char **lines;
	size_t nr;
};

static void srcfile__load(struct srcfile *sf, const char *path)
{
	FILE *fp;
	size_t len = 0, cap = 0;
	char *p;

	if (sf->path && !strcmp(sf->path, path))
		return;
	free(sf->path);
	free(sf->data);
	free(sf->lines);
	memset(sf, 0, sizeof(*sf));
	sf->path = xstrdup(path);
	fp = path__fopen(path, PATH_FROM_TRACE, NULL);	/* the name is the ELF's, so the trace's */
	if (!fp)
		return;
	if (getdelim(&sf->data, &len, '\0', fp) < 0) {
		fclose(fp);
		return;
	}
	fclose(fp);
	for (p = sf->data; p && *p; ) {
		char *nl = strchr(p, '\n');

		sf->lines = xgrow(sf->lines, &cap, sf->nr + 1, sizeof(*sf->lines));
		sf->lines[sf->nr++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
}

/* "file.c:42  text of the line" when addr starts a new line, through the
 * DSO's DWARF (its own or a separate debug file: srcline.h); "[in bar,
 * inlined]" when the line belongs to a function inlined there. */
static char *annotate__srcline(struct dso *dso, uint64_t addr, struct srcfile *sf,
			       const char **last_file, uint32_t *last_line)
{
	struct srcline_chain ch;
	const struct srcline_level *in;
	const char *file, *txt = NULL;
	char inl[256] = "";

	if (srcline__lookup(dso, addr, SRCLINE_LINES | SRCLINE_INLINE, &ch))
		return NULL;
	in = &ch.lv[ch.n - 1];
	file = in->file;
	if (!file || !in->line)
		return NULL;
	if (*last_file && !strcmp(*last_file, file) && *last_line == in->line)
		return NULL;
	*last_file = file;
	*last_line = in->line;
	if (file[0] != '/' && ch.comp_dir) {	/* relative to the unit's directory */
		char *full = xasprintf("%s/%s", ch.comp_dir, file);

		srcfile__load(sf, full);
		free(full);
	} else {
		srcfile__load(sf, file);
	}
	if (in->line <= sf->nr) {
		txt = sf->lines[in->line - 1];
		while (*txt == ' ' || *txt == '\t')
			txt++;
	}
	if (in->name)
		snprintf(inl, sizeof(inl), "%s[in %s, inlined]", txt ? "   " : "  ", in->name);
	return xasprintf("%s:%u%s%s%s", srcline__basename(file), in->line, txt ? "  " : "",
			 txt ? txt : "", inl);
}

#ifdef HAVE_CAPSTONE
static int annotate__cs_open(Elf *elf, csh *h)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	switch (eh.e_machine) {
	case EM_X86_64:
		return cs_open(CS_ARCH_X86, CS_MODE_64, h) == CS_ERR_OK ? 0 : -ENOTSUP;
	case EM_386:
		return cs_open(CS_ARCH_X86, CS_MODE_32, h) == CS_ERR_OK ? 0 : -ENOTSUP;
	case EM_AARCH64:
		return cs_open(CS_ARCH_ARM64, CS_MODE_ARM, h) == CS_ERR_OK ? 0 : -ENOTSUP;
	}
	return -ENOTSUP;
}
#endif

#ifdef HAVE_CAPSTONE
/* The immediate target of a call or jump ("0x1130", "#0x1130"), if any. */
static bool annotate__branch_target(csh h, const cs_insn *insn, uint64_t *target, bool *call)
{
	const char *p = insn->op_str;
	char *end;

	*call = cs_insn_group(h, insn, CS_GRP_CALL);
	if (!*call && !cs_insn_group(h, insn, CS_GRP_JUMP))
		return false;
	if (*p == '#')
		p++;
	if (strncmp(p, "0x", 2))
		return false;
	*target = strtoull(p, &end, 16);
	return *end == '\0';
}

/* The section holding vaddr, and its name. */
static Elf_Scn *annotate__section(Elf *elf, uint64_t vaddr, const char **name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_type != SHT_NOBITS &&
		    vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size) {
			*name = elf_strptr(elf, shstrndx, sh.sh_name);
			return scn;
		}
	return NULL;
}

/* The .dynsym name of the relocation that fills GOT slot got ("malloc"). */
static const char *annotate__got_name(Elf *elf, uint64_t got)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *d;
		Elf_Scn *symscn;
		GElf_Shdr symsh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)) || !(symscn = elf_getscn(elf, sh.sh_link)) ||
		    !gelf_getshdr(symscn, &symsh))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			Elf_Data *sd;

			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != got ||
			    !GELF_R_SYM(r.r_info) || !(sd = elf_getdata(symscn, NULL)) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			return elf_strptr(elf, symsh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/* A PLT stub's function, "malloc@plt", as objdump names it: the stub at
 * target (x86-64: [endbr64;] [bnd] jmp qword ptr [rip + X]) jumps through
 * the GOT slot the dynamic relocation of that function fills. */
static bool annotate__plt_name(struct dso *dso, csh h, uint64_t target, char *buf, size_t size)
{
	const char *sec = NULL, *name;
	uint8_t code[32];
	uint64_t avail = 0, disp;
	int64_t off;
	cs_insn *insn;
	size_t n;
	bool ok = false;

	if (!annotate__section(dso->elf, target, &sec) || !sec || strncmp(sec, ".plt", 4) ||
	    (off = annotate__offset(dso, target, &avail)) < 0 || avail < sizeof(code) ||
	    dso__read(dso, (uint64_t)off, code, sizeof(code)))
		return false;
	n = cs_disasm(h, code, sizeof(code), target, 3, &insn);
	for (size_t i = 0; i < n && !ok; i++) {
		if (!strstr(insn[i].mnemonic, "jmp") ||
		    sscanf(insn[i].op_str, "qword ptr [rip + 0x%" SCNx64 "]", &disp) != 1)
			continue;
		name = annotate__got_name(dso->elf, insn[i].address + insn[i].size + disp);
		if (name)
			ok = snprintf(buf, size, "%s@plt", name) < (int)size;
		break;
	}
	if (n)
		cs_free(insn, n);
	return ok;
}

/* "call 0x1130 <do_work>": a call or jump out of the function (and a call
 * to its own start) names its target, as objdump and perf annotate do. */
static char *annotate__insn_text(struct dso *dso, csh h, const struct symbol *sym,
				 const cs_insn *insn)
{
	uint64_t target;
	struct symbol *ts;
	char name[512] = "";
	bool call;

	if (annotate__branch_target(h, insn, &target, &call) &&
	    (call || target < sym->addr || target - sym->addr >= (sym->size ? sym->size : 1))) {
		/* PLT stubs first: a symbol with no size (_init) would claim them */
		if (!annotate__plt_name(dso, h, target, name, sizeof(name)) &&
		    (ts = dso__find_symbol(dso, target)) != NULL) {
			if (target == ts->addr)
				snprintf(name, sizeof(name), "%s", symtab__display(&dso->symtab, ts));
			else
				snprintf(name, sizeof(name), "%s+%#llx", symtab__display(&dso->symtab, ts),
					 (unsigned long long)(target - ts->addr));
		}
	}
	return xasprintf("%s%s%s%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str,
			 name[0] ? " <" : "", name, name[0] ? ">" : "");
}
#endif

int annotate__frame(struct annotation *a, struct session *s, uint32_t frame_id,
		    char *err, size_t errlen)
{
	const struct frame *f = profile__frame(&s->profile, frame_id);
	struct symbol *sym = NULL;
	struct dso *dso;
	uint64_t size, avail = 0;
	int64_t off;

	memset(a, 0, sizeof(*a));
	if (f->inlined) {
		snprintf(err, errlen, "'%s' has no code of its own: annotate the function it is "
			 "inlined into", f->name);
		return -ENOTSUP;
	}
	if (f->kind != FRAME_CPU_USER || f->unknown || !f->addr || !f->module[0] ||
	    !strcmp(f->module, "[jit]")) {
		snprintf(err, errlen, "annotate needs a native user-space function with a symbol; "
			 "'%s' is not one", f->name);
		return -ENOTSUP;
	}
	dso = annotate__find_dso(s, f, &sym);
	if (!dso || !sym) {
		snprintf(err, errlen, "%s: no ELF file with the recorded build-id holds '%s' "
			 "(copy the binary to its recorded path)", f->module, f->name);
		return -ENOENT;
	}
	size = sym->size ? sym->size : 16;
	off = annotate__offset(dso, sym->addr, &avail);
	if (off < 0) {
		snprintf(err, errlen, "%s: %s at %#llx is not in a file-backed segment", f->module,
			 f->name, (unsigned long long)sym->addr);
		return -ENOENT;
	}
	if (size > avail)
		size = avail;
	if (size > ANNOTATE_MAX_BYTES)
		size = ANNOTATE_MAX_BYTES;
#ifndef HAVE_CAPSTONE
	snprintf(err, errlen, "built without capstone: install libcapstone-dev and rebuild "
		 "to annotate");
	return -ENOTSUP;
#else
	{
		uint8_t *code = xmalloc(size);
		struct srcfile sf = { 0 };
		const char *last_file = NULL;
		uint32_t last_line = 0;
		int ret = 0;
		cs_insn *insn = NULL;
		size_t n = 0;
		double best = -1;
		csh h;

		if (dso__read(dso, (uint64_t)off, code, size) || annotate__cs_open(dso->elf, &h)) {
			snprintf(err, errlen, "%s: cannot read or decode the bytes of %s", f->module,
				 f->name);
			ret = -EINVAL;
			goto out;
		}
		cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);	/* instruction groups: calls, jumps */
		n = cs_disasm(h, code, size, sym->addr, 0, &insn);
		if (!n) {
			snprintf(err, errlen, "%s: capstone could not decode %s at %#llx", f->module,
				 f->name, (unsigned long long)sym->addr);
			ret = -EINVAL;
			cs_close(&h);
			goto out;
		}
		a->title = xasprintf("%s  (%s)  %#llx, %llu bytes", f->name, f->module,
				     (unsigned long long)sym->addr, (unsigned long long)size);
		a->lines_off = s->callchain.no_srcline;
		for (size_t i = 0; i < n; i++) {
			double w = profile__addr_weight(&s->profile, frame_id, insn[i].address);
			char *src = s->callchain.no_srcline ? NULL :
				    annotate__srcline(dso, insn[i].address, &sf, &last_file,
						      &last_line);

			if (src) {
				a->has_lines = true;
				annotation__add(a, ANNOTATE_SOURCE, insn[i].address, 0, src);
			}
			annotation__add(a, ANNOTATE_INSN, insn[i].address, w,
					annotate__insn_text(dso, h, sym, &insn[i]));
			a->total += w;
			a->nr_insns++;
			if (w > best) {
				best = w;
				a->hottest = a->nr - 1;
			}
		}
		if (insn[n - 1].address + insn[n - 1].size < sym->addr + size)
			annotation__add(a, ANNOTATE_SOURCE, insn[n - 1].address + insn[n - 1].size, 0,
					xasprintf("(capstone stopped at %#llx: undecodable bytes)",
						  (unsigned long long)(insn[n - 1].address +
								       insn[n - 1].size)));
		cs_free(insn, n);
		cs_close(&h);
out:
		free(sf.path);
		free(sf.data);
		free(sf.lines);
		free(code);
		if (ret)
			annotation__exit(a);
		return ret;
	}
#endif
}

size_t annotation__format(const struct annotation *a, size_t i, char *buf, size_t size)
{
	const struct annotate_line *l = &a->lines[i];
	int len;

	if (l->kind == ANNOTATE_SOURCE)
		len = snprintf(buf, size, "%18s%s", "", l->text);
	else if (l->weight > 0)
		len = snprintf(buf, size, "%7.2f%% %7.0f  %8llx:  %s",
			       a->total > 0 ? 100.0 * l->weight / a->total : 0, l->weight,
			       (unsigned long long)l->addr, l->text);
	else
		len = snprintf(buf, size, "%16s  %8llx:  %s", "", (unsigned long long)l->addr,
			       l->text);
	if (len < 0)
		len = 0;
	return (size_t)len < size ? (size_t)len : size - 1;
}

int annotation__fprint(const struct annotation *a, FILE *fp)
{
	char buf[1024];

	fprintf(fp, "%s\n", a->title);
	fprintf(fp, "%.0f samples in %zu instructions%s\n", a->total, a->nr_insns,
		a->lines_off ? "; source lines off (--no-srcline)" :
		a->has_lines ? "" : "; no DWARF line info");
	for (size_t i = 0; i < a->nr; i++) {
		annotation__format(a, i, buf, sizeof(buf));
		fprintf(fp, "%s\n", buf);
	}
	return ferror(fp) ? -EIO : 0;
}
