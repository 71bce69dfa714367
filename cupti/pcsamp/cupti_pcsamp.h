/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling through CUPTI's PC Sampling API (cupti_pcsampling.h), in
 * continuous mode, per context: enabled at each context's creation (or,
 * attached, for the primary contexts that exist), its data fetched with
 * cuptiPCSamplingGetData by the flush thread, before a module unloads and a
 * context goes, and at the end (then disabled). The records are pcsamp.h's.
 * The PC Sampling entry points are looked up in the libcupti we link with
 * (dlsym), so a libcupti without them leaves the rest of the recording as
 * it is: every failure is one line on stderr and META cupti.pc_sampling.
 */
#ifndef XPU_CUPTI_CUPTI_PCSAMP_H
#define XPU_CUPTI_CUPTI_PCSAMP_H

#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>
#include <cupti.h>

struct xpu_pcsamp;
struct xpu_pcsamp_duty;

/* period: xpu_pcsamp__parse()'s value (> 0 or -1). Enables the resource
 * callbacks it needs on sub. Returns 0, or -errno when PC sampling is off
 * (META cupti.pc_sampling says why). */
int xpu_cupti_pcsamp__setup(struct xpu_pcsamp *s, CUpti_SubscriberHandle sub, int period,
			    const struct xpu_pcsamp_duty *duty, uint64_t (*now)(void));
/* Resource callbacks (cupti_callbacks.c hands each on while set up). */
void xpu_cupti_pcsamp__resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);
/* Sampling on for ctx, the context of an API call the application made,
 * unless it is already or its time has not come (--gpu-pc-duty's after:,
 * the default: launched or attached, contexts are enabled here, at an API
 * exit on the application's threads, once that time has passed; attached,
 * always here). A clock read and a compare once enabled. */
void xpu_cupti_pcsamp__context(CUcontext ctx);
/* Duty-cycled (--gpu-pc-duty=ON:OFF): sampling in ctx started or stopped
 * when its time has come, in the API exit callbacks on the application's
 * threads (cupti_callbacks.c): a clock read and a compare when none is due. */
void xpu_cupti_pcsamp__tick(CUcontext ctx);
/* The data of every context so far (the flush thread). */
void xpu_cupti_pcsamp__flush(void);
/* The last data, sampling disabled in every context. */
void xpu_cupti_pcsamp__finish(void);
bool xpu_cupti_pcsamp__on(void);

#endif
