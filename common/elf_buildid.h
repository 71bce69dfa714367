/* SPDX-License-Identifier: MIT */
/*
 * The GNU build-id of an ELF file: one reader for the recorder (mappings the
 * kernel gave no build-id for, -p's existing maps, the build-id cache) and
 * the report (checking that a found file is the recorded one), so the two
 * can never disagree about a file.
 */
#ifndef XPU_COMMON_ELF_BUILDID_H
#define XPU_COMMON_ELF_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* Copies up to max bytes of the build-id into out and returns how many (0:
 * none). Looks in the PT_NOTE segments first (what the loader maps, present
 * even when section headers are stripped), then in the SHT_NOTE sections. */
size_t elf__build_id(Elf *elf, uint8_t *out, size_t max);

#endif
