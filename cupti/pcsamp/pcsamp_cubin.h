/* SPDX-License-Identifier: MIT */
/*
 * A cubin reduced to what maps its PCs to source lines (GPU PC sampling,
 * format: XPU_REC_GPU_CUBIN with XPU_CUBIN_REDUCED). Cubins larger than the
 * library keeps whole (PyTorch's, cuBLAS': tens of MiB of SASS) still get
 * their lines: the report's reader (report/gpu/cubin_lines.c) needs only
 * .debug_line, its .rela.debug_line, .symtab with its string table and the
 * section names. The reduced cubin is an ELF64 file of the same header and
 * the same section headers (indices, sizes, links unchanged, so readelf and
 * the symbols' section indices stay right), with the bytes of only those
 * five sections; every other section becomes SHT_NOBITS, its size kept (a
 * function's .text size), and the program headers go. Libc only: this runs
 * inside the profiled process, at module load.
 *
 * Sizes (nvcc 13.0 -cubin -lineinfo -arch=sm_90): fake_kernel.cubin 10,280
 * bytes -> 3,280; multi_kernel.cubin (4 kernels) 28,064 -> 6,248; a module
 * of 64 template instances of an unrolled kernel 1,375,448 -> 47,136 (3.4%:
 * the SASS, 434,816 bytes, and the PTX text -lineinfo embeds, 740,929, go;
 * a third of what stays is the 210 section headers). Without -lineinfo the
 * same module (530,456 bytes) has no .debug_line and is skipped.
 */
#ifndef XPU_CUPTI_PCSAMP_CUBIN_H
#define XPU_CUPTI_PCSAMP_CUBIN_H

#include <stddef.h>

/* Reduces the cubin data[0..size) into *out (malloc'd, *out_size bytes, at
 * most max). Returns 0; -ENOENT when it has no line table to keep
 * (no -lineinfo: the reduced cubin would map nothing); -EINVAL when it is
 * not an ELF64 little-endian file with section headers inside it; -E2BIG
 * when the reduced cubin would be larger than max; -ENOMEM. Never reads
 * outside data. */
int xpu_pcsamp__reduce_cubin(const void *data, size_t size, size_t max, void **out,
			     size_t *out_size);

#endif
