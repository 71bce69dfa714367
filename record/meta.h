/* SPDX-License-Identifier: MIT */
/* Recording metadata, written first (meta.c). */
#ifndef XPU_RECORD_META_H
#define XPU_RECORD_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts;
struct xpu_writer;

/* The META nvtx value: whether NVTX is injected, and by whom. */
const char *meta__nvtx(const struct record_opts *o, bool gpu, char *buf, size_t size);
int meta__write_start(struct xpu_writer *w, const struct record_opts *o, int argc, char **argv,
		      bool gpu, const char *cupti_lib);

#endif
