/* SPDX-License-Identifier: MIT */
/* File offsets of functions named by their demangled C++ names (elf_demangled.c). */
#ifndef XPU_RECORD_FILES_ELF_DEMANGLED_H
#define XPU_RECORD_FILES_ELF_DEMANGLED_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The file offsets of the functions of the ELF file at fd whose demangled
 * names (with their parameter lists, as c++filt prints them) are
 * names[0..n): offs[k] is 0 for one not found. Returns how many were found,
 * or -errno: -EINVAL when fd is not ELF, -ENOTSUP when demangling was built
 * out (no libiberty).
 */
int elf_demangled__offsets(int fd, const char *const *names, int n, uint64_t *offs);

/* The function's own name in a demangled name: "malloc" in
 * "ns::A::malloc(void**, int)", as the length-prefixed source name the
 * mangled one must hold ("6malloc") in buf; false when there is none. */
bool elf_demangled__key(const char *demangled, char *buf, int size);

#endif
