/* SPDX-License-Identifier: MIT */
/* GNU build-ids of mapped files (buildid.c). */
#ifndef XPU_RECORD_FILES_BUILDID_H
#define XPU_RECORD_FILES_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>

int buildid__read_file(const char *path, uint8_t *id, uint8_t *size);
/* Opens path (from the system: regular files only, never blocking) as an
 * ELF file: 0 with *fd and *e (the caller ends both), or -errno. */
struct Elf;
int buildid__open_elf(const char *path, int *fd, struct Elf **e);

/* The file process pid mapped at [start, end) from path, opened to be
 * copied: through /proc/PID/map_files (the mapped inode itself, whatever
 * the path names now) while the mapping is there, else by path without
 * following any link (file__open_nolinks()). Its build-id, read through
 * that descriptor, goes to id/size, its fstat to st, and mapped says which
 * way it was opened. The descriptor (the caller closes it), or -errno
 * (-ENOENT: no build-id). With the time bound of common/bounded.h. */
struct stat;
int buildid__open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path,
			 uint8_t *id, uint8_t *size, struct stat *st, bool *mapped);

#endif
