// SPDX-License-Identifier: MIT
/* Annotate: capstone disassembly + per-instruction weights + DWARF lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif
#include "common/xalloc.h"
#include "report/util/annotate.h"
#include "report/util/path.h"

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
		if (!strcmp(symbol__display(sym), f->name)) {
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
		const struct dso_seg *sg = &dso->segs[i];

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

static char *annotate__srcline(Dwarf *dw, uint64_t addr, struct srcfile *sf,
			       const char **last_file, int *last_line)
{
	Dwarf_Die cu;
	Dwarf_Line *line;
	const char *file, *base;
	int lineno = 0;

	if (!dw || !dwarf_addrdie(dw, addr, &cu))
		return NULL;
	line = dwarf_getsrc_die(&cu, addr);
	if (!line || !(file = dwarf_linesrc(line, NULL, NULL)) || dwarf_lineno(line, &lineno))
		return NULL;
	if (*last_file && !strcmp(*last_file, file) && *last_line == lineno)
		return NULL;
	*last_file = file;
	*last_line = lineno;
	if (file[0] != '/') {	/* relative to the CU's compilation directory */
		Dwarf_Attribute at;
		const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
		char *full = dir ? xasprintf("%s/%s", dir, file) : xstrdup(file);

		srcfile__load(sf, full);
		free(full);
	} else {
		srcfile__load(sf, file);
	}
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (lineno > 0 && (size_t)lineno <= sf->nr) {
		const char *txt = sf->lines[lineno - 1];

		while (*txt == ' ' || *txt == '\t')
			txt++;
		return xasprintf("%s:%d  %s", base, lineno, txt);
	}
	return xasprintf("%s:%d", base, lineno);
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

int annotate__frame(struct annotation *a, struct session *s, uint32_t frame_id,
		    char *err, size_t errlen)
{
	const struct frame *f = profile__frame(&s->profile, frame_id);
	struct symbol *sym = NULL;
	struct dso *dso;
	uint64_t size, avail = 0;
	int64_t off;

	memset(a, 0, sizeof(*a));
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
		Dwarf *dw = dwarf_begin_elf(dso->elf, DWARF_C_READ, NULL);
		struct srcfile sf = { 0 };
		const char *last_file = NULL;
		int last_line = 0, ret = 0;
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
		for (size_t i = 0; i < n; i++) {
			double w = profile__addr_weight(&s->profile, frame_id, insn[i].address);
			char *src = annotate__srcline(dw, insn[i].address, &sf, &last_file,
						      &last_line);

			if (src) {
				a->has_lines = true;
				annotation__add(a, ANNOTATE_SOURCE, insn[i].address, 0, src);
			}
			annotation__add(a, ANNOTATE_INSN, insn[i].address, w,
					xasprintf("%s%s%s", insn[i].mnemonic,
						  insn[i].op_str[0] ? " " : "", insn[i].op_str));
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
		if (dw)
			dwarf_end(dw);
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
		a->has_lines ? "" : "; no DWARF line info");
	for (size_t i = 0; i < a->nr; i++) {
		annotation__format(a, i, buf, sizeof(buf));
		fprintf(fp, "%s\n", buf);
	}
	return ferror(fp) ? -EIO : 0;
}
