/* SPDX-License-Identifier: MIT */
/* Kernel symbols of the kernel IPs seen in samples (ksyms.c). */
#ifndef XPU_RECORD_KERNEL_KSYMS_H
#define XPU_RECORD_KERNEL_KSYMS_H

#include <stdint.h>

struct u64map;
struct xpu_writer;

/* Kernel IPs seen in samples, for XPU_REC_KSYM. */
void ksyms__note(struct u64map *seen, const uint64_t *ips, unsigned int n);
int ksyms__write(struct xpu_writer *w, struct u64map *seen);

#endif
