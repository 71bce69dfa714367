/* SPDX-License-Identifier: MIT */
/* Records for processes that already run, for -p (synth.c). */
#ifndef XPU_RECORD_TARGET_SYNTH_H
#define XPU_RECORD_TARGET_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xpu_writer;

/* records for processes that already run (-p) */
/* Returns 0, -ESRCH when no thread of pid lives (a zombie), or -errno. */
int synth__process(struct xpu_writer *w, pid_t pid);
/* Mappings of the file named from are written as mappings of to (see
 * sideband__set_alias()). */
void synth__set_alias(const char *from, const char *to);

#endif
