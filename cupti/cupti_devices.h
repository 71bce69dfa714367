/* SPDX-License-Identifier: MIT */
/*
 * The process's devices, described once, at the first context creation (or
 * at once on an attach: the contexts exist): a GPU_DEVICE record per device
 * and the driver's and runtime's versions in META.
 */
#ifndef XPU_CUPTI_DEVICES_H
#define XPU_CUPTI_DEVICES_H
void inject__devices(void);
#endif
