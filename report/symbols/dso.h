/* SPDX-License-Identifier: MIT */
/*
 * DSOs: one object per build-id (or per path when the recording has no
 * build-id), shared by every process that mapped it. A DSO knows the ELF file
 * it was resolved to, its PT_LOAD segments (for load biases) and its symbol
 * table, all loaded on first use.
 *
 * The file is located by dso__find_file() through a chain of finders tried in
 * a fixed order. Each slot may hold one finder; only the recorded path is
 * installed by default, the others are hooks for later work:
 *
 *	DSO_FIND_ARCHIVE	xpu.data.archive beside the trace   (issue 5)
 *	DSO_FIND_SYMFS		--symfs DIR                          (issue 5)
 *	DSO_FIND_BUILDID_CACHE	~/.cache/xpu-perf/.build-id/...      (issue 5)
 *	DSO_FIND_RECORDED_PATH	the path in the mmap record
 *	DSO_FIND_DEBUGINFOD	libdebuginfod, when DEBUGINFOD_URLS   (issue 5)
 *
 * A candidate whose build-id differs from the recorded one is NEVER used: the
 * chain goes on, and if nothing matches the DSO is marked DSO_MISMATCH and
 * its frames stay unsymbolized (module+offset). Finders open their candidate
 * through report/files/path.h only: a path from the trace never reaches open(2)
 * unchecked (no FIFO, device, /proc file, private file or symfs escape).
 */
#ifndef XPU_REPORT_DSO_H
#define XPU_REPORT_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include "common/elf_buildid.h"
#include "common/elf_segs.h"
#include "common/buildid.h"
#include "common/hashmap.h"
#include "format/xpu_format.h"
#include "report/files/path.h"
#include "report/symbols/symbol.h"

struct srcline_dso;

enum dso_status {
	DSO_UNLOADED,		/* not looked at yet */
	DSO_OK,			/* file found, build-id matches (or none recorded) */
	DSO_MISSING,		/* no finder produced a file */
	DSO_MISMATCH,		/* files found, but none with the recorded build-id */
	DSO_BAD_ELF,		/* file found but not a usable ELF */
	DSO_TRUNCATED,		/* an ELF whose headers point past its end */
	DSO_REFUSED,		/* not opened: dso->refused says why (report/files/path.h) */
	DSO_PSEUDO,		/* [vdso], anonymous memory, ...: nothing to open */
};

struct dso {
	char *path;			/* as recorded */
	const char *short_name;		/* basename of path */
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t build_id_size;		/* 0: not recorded */

	enum dso_status status;
	enum path_refusal refused;	/* DSO_REFUSED: why the candidates were not opened */
	char *file;			/* the file in use (DSO_OK), for messages */
	const char *found_by;		/* name of the finder that gave it */
	int fd;				/* the file in use: read it here, never by name */
	Elf *elf;
	const uint8_t *raw;		/* the whole file, mapped by libelf */
	size_t raw_size;
	bool exec_type;			/* ET_EXEC: fixed addresses */
	struct elf_seg *segs;		/* PT_LOAD segments (common/elf_segs.h) */
	size_t nr_segs;

	struct symtab symtab;
	bool symtab_loaded;
	int debug_fd;			/* separate debuginfo holding .symtab, if used */
	struct dsos *dsos;		/* the set it belongs to: its finders */
	Elf *debug_elf;
	const char *symtab_from;	/* "symtab", "dynsym", "debuginfo",
					 * "dynsym+minidebuginfo" or NULL */
	uint64_t symtab_ns;		/* time its symbol table took to load (-v) */
	Elf *mini_elf;			/* the .gnu_debugdata ELF (minidebug.h) */
	void *mini_buf;			/* its memory */
	/* DWARF for inline chains and source lines (report/symbols/srcline.h):
	 * the file's own .debug_info, else debug_elf's, else a separate debug
	 * file of its own (found once, on first use) */
	bool dwarf_searched;
	Elf *dwarf_elf;			/* NULL: none */
	int dwarf_elf_fd;		/* its descriptor */
	int dwarf_fd;			/* when dwarf_elf is neither elf nor debug_elf */
	Elf *dwarf_own_elf;
	struct srcline_dso *srcline;	/* srcline.c's per-file state */
	void (*srcline_exit)(struct dso *dso);	/* srcline.c's: frees it */

	uint64_t frames_unsymbolized;	/* frames in this DSO that got no name */
	uint64_t frames_total;
};

enum dso_find_slot {
	DSO_FIND_ARCHIVE,
	DSO_FIND_SYMFS,
	DSO_FIND_BUILDID_CACHE,
	DSO_FIND_RECORDED_PATH,
	DSO_FIND_DEBUGINFOD,
	DSO_FIND_NR_SLOTS
};

/* A finder opens its candidate with path__open() or path__open_beneath(),
 * names it in buf and returns the descriptor; else -ENOENT (nothing here),
 * -EPERM with *why set (refused), or another -errno. dso.c then checks that
 * it is a complete ELF file with the recorded build-id. */
typedef int (*dso_find_fn)(const struct dso *dso, char *buf, size_t len,
			   enum path_refusal *why, void *ctx);

/* A finder of separate debug files (the full .symtab of a stripped object) by
 * build-id: names a candidate in buf, 0 or -ENOENT. dso.c opens it like any
 * file from a trace and uses it only when its build-id matches. */
typedef int (*dso_find_debug_fn)(const uint8_t *id, size_t size, char *buf, size_t len,
				 void *ctx);

struct dso_finder {
	const char *name;
	dso_find_fn find;
	dso_find_debug_fn find_debug;	/* may be NULL */
	void *ctx;
	void (*release)(void *ctx);	/* frees ctx at dsos__exit (or replacement); may be NULL */
};

struct dsos {
	struct bmap by_key;		/* build-id or path -> struct dso * */
	struct dso **list;
	size_t nr, cap;
	struct dso_finder finders[DSO_FIND_NR_SLOTS];
};

void dsos__init(struct dsos *d);
void dsos__exit(struct dsos *d);

/* Installs (or with find == NULL removes) the finder of a slot. The finder
 * state ctx is the finder's own; with release set, dsos__exit() (or the next
 * finder of the slot) frees it: a finder keeps nothing in globals. */
void dsos__set_finder(struct dsos *d, enum dso_find_slot slot, const char *name,
		      dso_find_fn find, void *ctx);
void dsos__set_finder_owned(struct dsos *d, enum dso_find_slot slot, const char *name,
			    dso_find_fn find, void *ctx, void (*release)(void *ctx));
/* Adds the slot's finder of separate debug files (after dsos__set_finder*). */
void dsos__set_debug_finder(struct dsos *d, enum dso_find_slot slot, dso_find_debug_fn fn);

/* The DSO for a mapping: by build-id when one is recorded, else by path. */
struct dso *dsos__findnew(struct dsos *d, const char *path, const uint8_t *build_id,
			  size_t build_id_size);

/* Locates and opens the file through the finder chain (once). Returns 0 when
 * the DSO is usable (DSO_OK), else -ENOENT and dso->status says why. */
int dso__load(struct dso *dso, const struct dsos *d);

/* The load bias of a mapping of this DSO: runtime address = vaddr + bias.
 * map_start/pgoff are the mapping's; the segment holding pgoff decides. */
uint64_t dso__bias(const struct dso *dso, uint64_t map_start, uint64_t pgoff);

/* Reads len bytes at file offset off. Returns 0 or -EFAULT. */
int dso__read(const struct dso *dso, uint64_t off, void *buf, size_t len);

/* The function symbol at vaddr (file address space), after loading symbols. */
struct symbol *dso__find_symbol(struct dso *dso, uint64_t vaddr);

/* The ELF holding the DSO's DWARF (.debug_info): the file itself, or the
 * first separate debug file of the finder chain (archive, --symfs, build-id
 * cache, /usr/lib/debug, debuginfod) with its build-id and .debug_info.
 * NULL when there is none or the DSO is not loaded; else *fd is its
 * descriptor (the DSO's: valid while it lives). Looked up once. */
Elf *dso__dwarf_elf(struct dso *dso, int *fd);

/* Optional place for separate debug files, tried before /usr/lib/debug: writes
 * a candidate path for the build-id and returns 0 (report/finders/find_archive.c). */


/* 0 when the program and section headers of an ELF file of size bytes, and
 * the contents they describe, lie within the file; -ENODATA (truncated). */
int elf__check_complete(Elf *elf, uint64_t size);

/* "build-id mismatch", ... for a non-OK status. */
const char *dso__status_str(enum dso_status st);
/* The same for one DSO: for DSO_REFUSED, why its candidates were refused. */
const char *dso__reason(const struct dso *dso);


#endif
