/* SPDX-License-Identifier: MIT */
/*
 * Opening files whose names come from a trace, or from what a trace leads to.
 *
 * A trace is input like any other file: its mapping paths may name a FIFO
 * (a blocking open() would hang), a device, /proc/self/mem, /etc/shadow, or
 * with --symfs DIR climb out of DIR with "..". Every file xpu-report and
 * xpu-archive read on a trace's behalf is opened here, and nowhere else:
 * ELF candidates of the finder chain (report/symbols/dso.c, find_*.c), separate debug
 * files, the archive beside the trace, and annotate's source files.
 *
 * Every open: no side effects before the checks (stat/statfs, or an O_PATH
 * descriptor), then O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, then fstat
 * again. Only a regular file outside the kernel's pseudo file systems (proc,
 * sys, debugfs, tracefs, cgroup, bpf, ...) is accepted, and it must be the
 * one that was checked. Rules of PATH_FROM_TRACE (a name the trace chose):
 * nothing under /proc, /sys or /dev is looked at, and a private file that
 * nobody may execute (no x bit, not readable by others: /etc/shadow, SSH
 * keys) is never opened; ELF objects are executable or world-readable.
 * Documentation/design-offline.md ("Files a trace names") describes this.
 */
#ifndef XPU_REPORT_PATH_H
#define XPU_REPORT_PATH_H

#include <stdio.h>

enum path_flags {
	PATH_FROM_TRACE	= 1 << 0,	/* the name came from a trace: the rules above */
};

/* Why a file was not opened (returned as -EPERM). */
enum path_refusal {
	PATH_OK,
	PATH_NOT_REGULAR,	/* FIFO, device, socket or directory */
	PATH_SPECIAL,		/* under /proc, /sys, /dev or on a kernel pseudo file system */
	PATH_PRIVATE,		/* not executable and not readable by others */
	PATH_ESCAPES,		/* resolves outside the directory it must stay beneath */
	PATH_REFUSAL_NR
};

/* Opens path for reading. Returns the descriptor (O_CLOEXEC, blocking), or
 * -errno; -EPERM when a rule refused the file, *why (may be NULL) says which. */
int path__open(const char *path, unsigned int flags, enum path_refusal *why);

/* The same for path resolved beneath the directory dirfd, never outside it:
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); where the kernel lacks
 * openat2, a path with a ".." component is refused instead. Leading slashes
 * of path are skipped (DIR + recorded path). */
int path__open_beneath(int dirfd, const char *path, unsigned int flags,
		       enum path_refusal *why);

/* path__open() as a stdio stream ("r"), NULL with errno set when refused. */
FILE *path__fopen(const char *path, unsigned int flags, enum path_refusal *why);

/* "not a regular file", ... for a refusal. */
const char *path__refusal_str(enum path_refusal why);

/* For tests: 1 to behave as if the kernel had no openat2 (the ".." check). */
extern int path__no_openat2;

#endif
