/* SPDX-License-Identifier: MIT */
/* The processes below a process, from /proc (descendants.c). */
#ifndef XPU_RECORD_TARGET_DESCENDANTS_H
#define XPU_RECORD_TARGET_DESCENDANTS_H

#include <sys/types.h>

/* --pid-tree: root and every process below it now (parents from
 * /proc/PID/stat), root first, parents before children: their count and
 * the pids in *out (malloc'ed), or -errno. */
int descendants__of(pid_t root, pid_t **out);

#endif
