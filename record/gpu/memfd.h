/* SPDX-License-Identifier: MIT */
/*
 * The library's memfd copy in a process being attached (-p into a container,
 * memfd.c): the process made the memfd; the recorder fills it. The target's
 * other threads run meanwhile and may put any file at that descriptor
 * number, so the recorder never reopens /proc/PID/fd/N (root's open would
 * follow the link to whatever file is there, writable): it takes the
 * target's own descriptor with pidfd_getfd(), whose access mode is the
 * target's, and writes only if that is an empty, writable memfd named
 * INJECT_MEMFD_NAME.
 */
#ifndef XPU_RECORD_GPU_MEMFD_H
#define XPU_RECORD_GPU_MEMFD_H

#include <sys/types.h>

/* The target's descriptor fd, checked: our fd of it, or -errno (-EPERM:
 * it is not an empty writable memfd of that name). pid: the process. */
int memfd__take(pid_t pid, int fd, const char *name);
/* Copies the file lib into the descriptor memfd__take() gave: 0 or -errno;
 * each() (may be NULL) after each block written. */
int memfd__fill(int mfd, const char *lib, void (*each)(void));

#endif
