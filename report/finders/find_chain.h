/* SPDX-License-Identifier: MIT */
/*
 * The finders of the DSO finder chain (report/symbols/dso.h) for reports on another
 * machine, in the order dso__load() tries them:
 *
 *	archive		TRACE.archive beside the trace (xpu-archive)    find_archive.c
 *	symfs		--symfs DIR: DIR/.build-id/xx/rest, DIR/PATH    find_symfs.c
 *	build-id cache	$XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest      find_buildid_cache.c
 *	recorded path	(installed by dsos__init)
 *	debuginfod	debuginfod_find_executable(), DEBUGINFOD_URLS  find_debuginfod.c
 *
 * Every candidate is checked against the recorded build-id by dso.c; one that
 * differs is never used. Documentation/design-offline.md describes the chain.
 */
#ifndef XPU_REPORT_FIND_CHAIN_H
#define XPU_REPORT_FIND_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include "report/symbols/dso.h"

/* Installs every finder that applies: the archive when TRACE.archive exists
 * (a damaged or foreign one is warned about), symfs when symfs is not NULL,
 * the build-id cache, debuginfod when built in and DEBUGINFOD_URLS is set.
 * Extracted files are removed at exit. */
void find_chain__install(struct dsos *d, const char *trace, const char *symfs);

/* Each finder on its own (find_chain__install calls them). */
int find_archive__install(struct dsos *d, const char *archive_path);
void find_symfs__install(struct dsos *d, const char *dir);
void find_buildid_cache__install(struct dsos *d);
int find_debuginfod__install(struct dsos *d);

/* buildid_cache__dir() and buildid__dir_path() are in common/buildid.h. */

/* One warning line: how many addresses stayed unsymbolized, in which files,
 * and why (file not found, build-id mismatch, stripped, not an ELF). */
void find_chain__warn(const struct dsos *d);

#endif
