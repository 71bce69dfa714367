/* SPDX-License-Identifier: MIT */
/*
 * Debug files with their DWARF stored uncompressed, kept by build-id in the
 * build-id cache ($XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest.debug). Debian
 * compresses its debug packages' sections (zlib, SHF_COMPRESSED) and libdw
 * inflates every DWARF section it reads each time it opens one: libc6-dbg's
 * took 30% of a python3.11 report's time, every report. The first report
 * that reads such a file writes a plain copy; later ones find it in the
 * cache before the system's (dsos' build-id cache finder) and read it as is.
 * XPU_NO_DEBUG_CACHE=1 turns the writing off.
 */
#ifndef XPU_REPORT_DEBUG_PLAIN_H
#define XPU_REPORT_DEBUG_PLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* Whether elf holds a compressed DWARF section (.debug_*, SHF_COMPRESSED). */
bool debug_plain__compressed(Elf *elf);

/* Writes the plain copy of the debug file open at fd (build-id id) into
 * the cache, unless one is there. 0, or -errno (nothing is left behind). */
int debug_plain__save(int fd, const uint8_t *id, size_t id_size);

/* Where the copy of a build-id lives: 0, or -ENOENT (no cache directory)
 * or -ENAMETOOLONG. */
int debug_plain__path(char *buf, size_t len, const uint8_t *id, size_t id_size);

#endif
