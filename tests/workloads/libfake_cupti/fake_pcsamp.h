/* SPDX-License-Identifier: MIT */
/* The fake CUPTI library's PC sampling: see fake_pcsamp.c. */
#ifndef XPU_FAKE_PCSAMP_H
#define XPU_FAKE_PCSAMP_H

#include <stdint.h>

struct xpu_client;
struct xpu_names;

/* setting: XPU_CUPTI_PC_SAMPLING's value (NULL: off). */
void fake_pcsamp__start(struct xpu_client *c, struct xpu_names *names, uint32_t pid,
			uint32_t device, const char *setting);
/* A launch: its samples added to the open window (duty: if sampling is
 * on, toggled first when due). Returns the factor of its duration
 * (XPU_FAKE_PC_INFLATE while sampling, else 1). */
double fake_pcsamp__launch(void);
void fake_pcsamp__flush(void);
void fake_pcsamp__finish(void);

#endif
