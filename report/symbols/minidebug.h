/* SPDX-License-Identifier: MIT */
/*
 * MiniDebugInfo: the .gnu_debugdata section some distributions (Fedora,
 * RHEL, openSUSE) leave in stripped binaries: an xz-compressed ELF whose
 * .symtab holds the function symbols .dynsym lacks (static and hidden
 * functions), so a stack through them has names without debug packages.
 * See gdb's "MiniDebugInfo" documentation.
 */
#ifndef XPU_REPORT_MINIDEBUG_H
#define XPU_REPORT_MINIDEBUG_H

#include <stddef.h>
#include <gelf.h>

/* Decompressed ELFs larger than this are refused (a symbol table of a few
 * MB is the usual size; the cap bounds what a hostile file can make us
 * allocate). */
#define MINIDEBUG_MAX_SIZE (256u << 20)

/* The embedded ELF of elf's .gnu_debugdata, or NULL when it has none or it
 * does not decompress to an ELF within MINIDEBUG_MAX_SIZE. *buf gets the
 * memory the returned Elf reads: free it after elf_end(). */
Elf *minidebug__open(Elf *elf, void **buf);

#endif
