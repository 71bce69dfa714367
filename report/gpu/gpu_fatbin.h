/* SPDX-License-Identifier: MIT */
/*
 * Source lines for the PC samples of kernels whose cubin the trace lacks: a
 * module loaded before an attach (CUPTI hands a cubin over only when its
 * module loads). The cubins with a line table in the .nv_fatbin sections
 * (fatbin.h) of the files the process had mapped, found through the same
 * finders as its symbols, are looked up by the kernel's mangled name, for
 * the device's SM architecture. Not by CUPTI's cubin CRC, whose function is
 * not known (Documentation/design-gpu.md): so a line is given only when
 * every such cubin that has the kernel agrees on it; otherwise the PC keeps
 * its offset alone and is counted ambiguous.
 *
 * Files whose .nv_fatbin is over GPU_FATBIN_SECTION_MAX (PyTorch's and the
 * CUDA libraries', hundreds of MB of kernels built without -lineinfo) are
 * not read: counted.
 *
 * Kernels loaded from memory (Triton's, torch.compile's: cuModuleLoadData)
 * are in no mapped file; `xpu-report --cubins DIR` adds the *.cubin files
 * under DIR (Triton's cache keeps one per compiled kernel), for any SM
 * architecture, to every process's candidates.
 */
#ifndef XPU_REPORT_GPU_FATBIN_LINES_H
#define XPU_REPORT_GPU_FATBIN_LINES_H

#include <stdint.h>
#include <stdio.h>
#include "common/hashmap.h"
#include "report/gpu/fatbin.h"

struct machine;

#define GPU_FATBIN_SECTION_MAX	(64u << 20)

struct gpu_fatbin {
	struct u64map dsos;		/* struct dso * -> struct gpu_fatbin_dso * */
	struct bmap kernels;		/* (pid, time span, mangled) -> its cubins: looked up once */
	struct fatbin_stats st;		/* over every section read */
	uint64_t files;			/* files with a .nv_fatbin read */
	uint64_t too_large;		/* ... not read: over GPU_FATBIN_SECTION_MAX */
	uint64_t cubins_lines;		/* cubins with a line table kept */
	uint64_t found, ambiguous;	/* PC lookups */
	char *dir;			/* --cubins DIR: read at the first lookup */
	struct gpu_fatbin_dso *dir_cubins;
	uint64_t dir_files;		/* *.cubin files read there */
};

void gpu_fatbin__init(struct gpu_fatbin *fb);
void gpu_fatbin__exit(struct gpu_fatbin *fb);

/* The file and line of offset pc in kernel mangled, from the cubins for SM
 * arch sm (0: any) of the files pid had mapped at time. 0, or -ENOENT (no
 * cubin has it, or they disagree). */
int gpu_fatbin__line(struct gpu_fatbin *fb, struct machine *m, uint32_t pid, uint64_t time,
		     unsigned sm, const char *mangled, uint64_t pc, const char **file,
		     uint32_t *line);

/* --cubins DIR (gpu_fatbin.h). */
void gpu_fatbin__set_dir(struct gpu_fatbin *fb, const char *dir);

/* One --header line when any lookup was made. */
void gpu_fatbin__header(const struct gpu_fatbin *fb, FILE *fp);

#endif
