// SPDX-License-Identifier: MIT
/* DSOs: locating ELF files by build-id through a finder chain, segments, symbols. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/elf_section.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "report/symbols/dso.h"
#include "report/symbols/minidebug.h"
#include "report/symbols/pyeval.h"
#include "report/phase/phase.h"

static int dso__find_recorded_path(const struct dso *dso, char *buf, size_t len,
				   enum path_refusal *why, void *ctx)
{
	if (snprintf(buf, len, "%s", dso->path) >= (int)len)
		return -ENAMETOOLONG;
	return path__open(dso->path, PATH_FROM_TRACE, why);
}

/* Separate debuginfo with the full .symtab (Debian's *-dbg / -dbgsym
 * packages), by build-id as gdb and perf look for it: the recorded path's
 * slot looks in this machine's /usr/lib/debug. */
#define DSO_DEBUG_DIR "/usr/lib/debug"
static int dso__find_system_debug(const uint8_t *id, size_t size, char *buf, size_t len,
				  void *ctx)
{
	char hex[2 * XPU_MMAP_BUILD_ID_MAX + 1];

	build_id__hex(id, size, hex);
	return snprintf(buf, len, DSO_DEBUG_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2) >=
	       (int)len ? -ENAMETOOLONG : 0;
}

void dsos__init(struct dsos *d)
{
	memset(d, 0, sizeof(*d));
	bmap__init(&d->by_key);
	elf_version(EV_CURRENT);
	dsos__set_finder(d, DSO_FIND_RECORDED_PATH, "recorded path",
			 dso__find_recorded_path, NULL);
	dsos__set_debug_finder(d, DSO_FIND_RECORDED_PATH, dso__find_system_debug);
}

void dsos__set_debug_finder(struct dsos *d, enum dso_find_slot slot, dso_find_debug_fn fn)
{
	d->finders[slot].find_debug = fn;
}

static void dso__free(struct dso *dso)
{
	if (dso->srcline_exit)
		dso->srcline_exit(dso);
	if (dso->dwarf_own_elf)
		elf_end(dso->dwarf_own_elf);
	if (dso->dwarf_fd >= 0)
		close(dso->dwarf_fd);
	symtab__exit(&dso->symtab);
	if (dso->mini_elf)
		elf_end(dso->mini_elf);
	free(dso->mini_buf);
	if (dso->debug_elf)
		elf_end(dso->debug_elf);
	if (dso->debug_fd >= 0)
		close(dso->debug_fd);
	if (dso->elf)
		elf_end(dso->elf);
	if (dso->fd >= 0)
		close(dso->fd);
	free(dso->segs);
	free(dso->file);
	free(dso->path);
	free(dso);
}

void dsos__exit(struct dsos *d)
{
	for (int slot = 0; slot < DSO_FIND_NR_SLOTS; slot++)
		if (d->finders[slot].release)
			d->finders[slot].release(d->finders[slot].ctx);
	for (size_t i = 0; i < d->nr; i++)
		dso__free(d->list[i]);
	free(d->list);
	bmap__exit(&d->by_key, NULL);
	memset(d, 0, sizeof(*d));
}

void dsos__set_finder_owned(struct dsos *d, enum dso_find_slot slot, const char *name,
			    dso_find_fn find, void *ctx, void (*release)(void *ctx))
{
	if (d->finders[slot].release)
		d->finders[slot].release(d->finders[slot].ctx);
	d->finders[slot] = (struct dso_finder){ .name = name, .find = find, .ctx = ctx,
						.release = release };
}

void dsos__set_finder(struct dsos *d, enum dso_find_slot slot, const char *name,
		      dso_find_fn find, void *ctx)
{
	dsos__set_finder_owned(d, slot, name, find, ctx, NULL);
}

struct dso *dsos__findnew(struct dsos *d, const char *path, const uint8_t *build_id,
			  size_t build_id_size)
{
	uint8_t key[1 + XPU_MMAP_BUILD_ID_MAX];
	const void *k;
	size_t klen;
	bool found;
	void **slot;
	struct dso *dso;
	const char *slash;

	if (build_id_size > XPU_MMAP_BUILD_ID_MAX)
		build_id_size = 0;
	if (build_id_size) {	/* tag byte keeps build-ids and paths apart */
		key[0] = 0;
		memcpy(key + 1, build_id, build_id_size);
		k = key;
		klen = 1 + build_id_size;
	} else {
		k = path;
		klen = strlen(path);
	}
	slot = bmap__slot(&d->by_key, k, klen, &found);
	if (found)
		return *slot;

	dso = xzalloc(sizeof(*dso));
	dso->path = xstrdup(path);
	slash = strrchr(dso->path, '/');
	dso->short_name = slash ? slash + 1 : dso->path;
	if (build_id_size)	/* build_id may be NULL when there is none */
		memcpy(dso->build_id, build_id, build_id_size);
	dso->build_id_size = (uint8_t)build_id_size;
	dso->fd = -1;
	dso->debug_fd = -1;
	dso->dwarf_fd = -1;
	dso->dwarf_elf_fd = -1;
	dso->dsos = d;
	symtab__init(&dso->symtab, false);
	*slot = dso;
	d->list = xgrow(d->list, &d->cap, d->nr + 1, sizeof(*d->list));
	d->list[d->nr++] = dso;
	return dso;
}

static bool dso__is_pseudo(const char *path)
{
	return path[0] != '/' || !strncmp(path, "//", 2) /* //anon */ ||
	       !strncmp(path, "/memfd:", 7) ||
	       !strncmp(path, "/dev/", 5) || strstr(path, " (deleted)");
}

static bool elf__in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

int elf__check_complete(Elf *elf, uint64_t size)
{
	GElf_Ehdr eh;
	size_t shnum = 0, phnum = 0, nscn = 0;
	Elf_Scn *scn = NULL;

	if (!gelf_getehdr(elf, &eh))
		return -ENODATA;
	/* libelf quietly reports no sections when their headers are cut off */
	if (eh.e_shoff) {
		if (!elf__in_file(eh.e_shoff, eh.e_shentsize, size) || elf_getshdrnum(elf, &shnum))
			return -ENODATA;
		if (eh.e_shnum)		/* else: more than 0xff00, counted in section 0 */
			shnum = eh.e_shnum;
		if (!shnum || !elf__in_file(eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, size))
			return -ENODATA;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				return -ENODATA;
			if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
			    !elf__in_file(sh.sh_offset, sh.sh_size, size))
				return -ENODATA;
			nscn++;
		}
		if (nscn + 1 != shnum)
			return -ENODATA;
	}
	if (elf_getphdrnum(elf, &phnum) ||
	    (phnum && !elf__in_file(eh.e_phoff, (uint64_t)phnum * eh.e_phentsize, size)))
		return -ENODATA;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -ENODATA;
		if (ph.p_type == PT_LOAD && !elf__in_file(ph.p_offset, ph.p_filesz, size))
			return -ENODATA;
	}
	return 0;
}

/* Takes an opened candidate (fd, closed on failure); 0 if usable, -EILSEQ on
 * a build-id mismatch, -ENODATA when truncated, else -ENOEXEC. */
static int dso__try_open(struct dso *dso, int fd, const char *file)
{
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	size_t id_size;
	GElf_Ehdr ehdr;
	struct stat st;
	Elf *elf;
	int err;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) || fstat(fd, &st)) {
		err = -ENOEXEC;
		goto out_err;
	}
	err = elf__check_complete(elf, (uint64_t)st.st_size);
	if (err)
		goto out_err;
	if (dso->build_id_size) {
		id_size = elf__build_id(elf, id, sizeof(id));
		if (id_size != dso->build_id_size ||
		    memcmp(id, dso->build_id, id_size)) {
			err = -EILSEQ;
			goto out_err;
		}
	}
	dso->nr_segs = elf_segs__read(elf, &dso->segs);
	dso->exec_type = ehdr.e_type == ET_EXEC;
	dso->fd = fd;
	dso->elf = elf;
	dso->raw = (const uint8_t *)elf_rawfile(elf, &dso->raw_size);
	dso->file = xstrdup(file);
	return 0;

out_err:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int dso__load(struct dso *dso, const struct dsos *d)
{
	char buf[4096];
	bool mismatch = false, bad = false, truncated = false;
	enum path_refusal refused = PATH_OK;

	if (dso->status != DSO_UNLOADED)
		return dso->status == DSO_OK ? 0 : -ENOENT;
	if (dso__is_pseudo(dso->path)) {
		dso->status = DSO_PSEUDO;
		return -ENOENT;
	}
	for (int i = 0; i < DSO_FIND_NR_SLOTS; i++) {
		const struct dso_finder *f = &d->finders[i];
		enum path_refusal why = PATH_OK;
		int fd, err;

		if (!f->find)
			continue;
		buf[0] = '\0';
		fd = f->find(dso, buf, sizeof(buf), &why, f->ctx);
		if (fd == -EPERM && why != PATH_OK) {
			refused = why;
			debug(1, "%s: %s (%s): not opened: %s", dso->path, buf, f->name,
			      path__refusal_str(why));
			continue;
		}
		if (fd < 0) {
			if (buf[0])
				debug(fd == -ENOENT ? 2 : 1, "%s: %s (%s): %s", dso->path, buf,
				      f->name, strerror(-fd));
			continue;
		}
		err = dso__try_open(dso, fd, buf);
		if (!err) {
			dso->found_by = f->name;
			dso->status = DSO_OK;
			debug(1, "%s: using %s (%s)", dso->path, buf, f->name);
			return 0;
		}
		if (err == -EILSEQ)
			mismatch = true;
		else if (err == -ENODATA)
			truncated = true;
		else
			bad = true;
		debug(1, "%s: %s (%s): %s", dso->path, buf, f->name,
		      err == -EILSEQ ? "build-id mismatch" :
		      err == -ENODATA ? "truncated ELF file" : "not an ELF file");
	}
	dso->refused = refused;
	dso->status = mismatch ? DSO_MISMATCH : truncated ? DSO_TRUNCATED : bad ? DSO_BAD_ELF :
		      refused ? DSO_REFUSED : DSO_MISSING;
	return -ENOENT;
}

const char *dso__status_str(enum dso_status st)
{
	switch (st) {
	case DSO_OK:		return "ok";
	case DSO_UNLOADED:	return "not loaded";
	case DSO_MISSING:	return "file not found";
	case DSO_MISMATCH:	return "build-id mismatch";
	case DSO_BAD_ELF:	return "not a readable ELF file";
	case DSO_TRUNCATED:	return "truncated ELF file";
	case DSO_REFUSED:	return "not opened";
	case DSO_PSEUDO:	return "no file (anonymous or special mapping)";
	}
	return "?";
}

const char *dso__reason(const struct dso *dso)
{
	return dso->status == DSO_REFUSED ? path__refusal_str(dso->refused)
					  : dso__status_str(dso->status);
}

uint64_t dso__bias(const struct dso *dso, uint64_t map_start, uint64_t pgoff)
{
	return elf_segs__bias(dso->segs, dso->nr_segs, dso->exec_type, map_start, pgoff);
}

int dso__read(const struct dso *dso, uint64_t off, void *buf, size_t len)
{
	if (!dso->raw || off > dso->raw_size || len > dso->raw_size - off)
		return -EFAULT;
	memcpy(buf, dso->raw + off, len);
	return 0;
}

static bool elf__has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

static bool elf__has_debug_info(Elf *elf)
{
	GElf_Shdr shdr;

	return (elf_section__find(elf, ".debug_info", &shdr) && shdr.sh_type == SHT_PROGBITS) ||
	       (elf_section__find(elf, ".zdebug_info", &shdr) && shdr.sh_type == SHT_PROGBITS);
}

/* A separate debug file: the first candidate of the finder chain's debug
 * finders (archive, ..., /usr/lib/debug) whose build-id matches and that has
 * what want() asks for (.symtab for symbols, .debug_info for DWARF). */
static int dso__try_debuginfo(const struct dso *dso, const char *path, const uint8_t *id,
			      size_t id_size, bool (*want)(Elf *), int *fdp, Elf **elfp)
{
	uint8_t got[XPU_MMAP_BUILD_ID_MAX];
	struct stat st;
	Elf *elf;
	int fd = path__open(path, 0, NULL);

	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || fstat(fd, &st) || elf__check_complete(elf, (uint64_t)st.st_size) ||
	    elf__build_id(elf, got, sizeof(got)) != id_size ||
	    memcmp(got, id, id_size) || !want(elf)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOENT;
	}
	*fdp = fd;
	*elfp = elf;
	debug(1, "%s: %s from %s", dso->path, want == elf__has_symtab ? "symbols" : "DWARF",
	      path);
	return 0;
}

static int dso__open_debuginfo(const struct dso *dso, bool (*want)(Elf *), int *fdp, Elf **elfp)
{
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	size_t id_size = dso->build_id_size;
	char path[4096];

	if (id_size)
		memcpy(id, dso->build_id, id_size);
	else
		id_size = elf__build_id(dso->elf, id, sizeof(id));
	if (id_size < 2)
		return -ENOENT;
	for (int slot = 0; slot < DSO_FIND_NR_SLOTS; slot++) {
		const struct dso_finder *f = &dso->dsos->finders[slot];

		if (f->find_debug && !f->find_debug(id, id_size, path, sizeof(path), f->ctx) &&
		    !dso__try_debuginfo(dso, path, id, id_size, want, fdp, elfp))
			return 0;
	}
	return -ENOENT;
}

Elf *dso__dwarf_elf(struct dso *dso, int *fd)
{
	if (dso->dwarf_searched || dso->status != DSO_OK)
		goto out;
	dso->dwarf_searched = true;
	if (!dso->symtab_loaded)	/* its debug file may hold the DWARF too */
		dso__find_symbol(dso, 0);
	if (elf__has_debug_info(dso->elf)) {
		dso->dwarf_elf = dso->elf;
		dso->dwarf_elf_fd = dso->fd;
	} else if (dso->debug_elf && elf__has_debug_info(dso->debug_elf)) {
		dso->dwarf_elf = dso->debug_elf;
		dso->dwarf_elf_fd = dso->debug_fd;
	} else if (!dso__open_debuginfo(dso, elf__has_debug_info, &dso->dwarf_fd,
				      &dso->dwarf_own_elf)) {
		dso->dwarf_elf = dso->dwarf_own_elf;
		dso->dwarf_elf_fd = dso->dwarf_fd;
	}
out:
	*fd = dso->dwarf_elf_fd;
	return dso->dwarf_elf;
}

struct symbol *dso__find_symbol(struct dso *dso, uint64_t vaddr)
{
	if (dso->status != DSO_OK)
		return NULL;
	if (!dso->symtab_loaded) {
		uint64_t t0 = phase__now();

		dso->symtab_loaded = true;
		if (!elf__has_symtab(dso->elf))
			dso__open_debuginfo(dso, elf__has_symtab, &dso->debug_fd, &dso->debug_elf);
		if (dso->debug_elf && !symtab__load_elf(&dso->symtab, dso->debug_elf, true)) {
			dso->symtab_from = "debuginfo";
		} else {
			bool full = elf__has_symtab(dso->elf);
			bool dyn = !symtab__load_elf(&dso->symtab, dso->elf, true);

			/* stripped with MiniDebugInfo: .dynsym + the static
			 * functions of .gnu_debugdata's .symtab */
			if (!full)
				dso->mini_elf = minidebug__open(dso->elf, &dso->mini_buf);
			if (dso->mini_elf && !symtab__load_elf(&dso->symtab, dso->mini_elf, false))
				dso->symtab_from = "dynsym+minidebuginfo";
			else if (dyn)
				dso->symtab_from = full ? "symtab" : "dynsym";
			else
				debug(1, "%s: no symbol table", dso->file);
			/* a stripped CPython: its eval loop under no symbol */
			if (!full && dyn)
				pyeval__add_symbols(&dso->symtab, dso->elf, NULL, NULL);
		}
		dso->symtab_ns = phase__now() - t0;
		if (phase__on) {
			phase__stats.ns[PHASE_SYMTAB] += dso->symtab_ns;
			phase__stats.calls[PHASE_SYMTAB]++;
		}
	}
	return symtab__lookup(&dso->symtab, vaddr);
}
