/* SPDX-License-Identifier: MIT */
/*
 * Annotate a GPU kernel: its GPU PC samples (gpu_pcsamp.h) per SASS
 * instruction and per source line. The SASS text comes from the toolkit's
 * nvdisasm run on the cubin the trace holds ($CUDA_HOME/bin/nvdisasm, else
 * /usr/local/cuda/bin/nvdisasm when CUDA_HOME is not set, else PATH):
 * capstone does not decode SASS. Where there is no nvdisasm, or the trace
 * holds no cubin or only its line table (a cubin reduced by the recorder),
 * one line says so and the samples are shown per PC and per line.
 *
 * The result is lines any renderer shows: the TUI's annotate on a
 * [GPU_Kernel] or [sass] frame (report/tui/view_annotate.c), or
 * `xpu-report --annotate KERNEL` (report/output/annotate.c).
 */
#ifndef XPU_REPORT_GPU_ANNOTATE_H
#define XPU_REPORT_GPU_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report/session/session.h"

enum gpu_annotate_kind {
	GPU_ANNOTATE_NOTE,		/* the summary, what is not shown and why */
	GPU_ANNOTATE_HEAD,		/* a table's heading */
	GPU_ANNOTATE_LINE,		/* one source line's samples */
	GPU_ANNOTATE_SOURCE,		/* "file.cu:15" before the instructions of a line */
	GPU_ANNOTATE_INSN,		/* one instruction (or, without SASS text, one PC) */
};

struct gpu_annotate_line {
	enum gpu_annotate_kind kind;
	uint64_t samples;
	char *text;
};

struct gpu_annotation {
	char *title;			/* "fake_kernel(int) (GPU kernel _Z11fake_kerneli)" */
	struct gpu_annotate_line *lines;
	size_t nr, cap;
	uint64_t total;			/* PC samples shown */
	size_t hottest;			/* index of the heaviest INSN line */
	bool sass;			/* with nvdisasm's text */
};

/* Whether the frame name is a kernel's ([GPU_Kernel]... or [sass]...). */
bool gpu_annotate__is_kernel_frame(const char *frame_name);

/* The annotation of the kernel named name: mangled, demangled with or
 * without its parameters, or a [GPU_Kernel] or [sass] frame's name. After
 * the session's pass 1. Returns 0, or -ENOENT with a one-line reason in err
 * (no such kernel with PC samples, no GPU join). */
int gpu_annotate__kernel(struct gpu_annotation *a, struct session *s, const char *name,
			 char *err, size_t errlen);
void gpu_annotation__exit(struct gpu_annotation *a);
int gpu_annotation__fprint(const struct gpu_annotation *a, FILE *fp);

#endif
