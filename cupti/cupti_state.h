/* SPDX-License-Identifier: MIT */
/*
 * The state of one recording in this process, shared by the library's
 * CUPTI glue (cupti_*.c of this folder, cupti/README.md): what the
 * recorder asked for, the channel to it, CUPTI's subscriber, and the parts
 * every producer writes through (names, conversion, NVTX, PC sampling).
 * The other concerns keep their state in a struct of their own file:
 * marking and the exit duties in cupti_callbacks.c, the flush thread in
 * cupti_flush.c, the attach in cupti_attach.c.
 *
 * Also the glue's common helpers: one warning line, a CUPTI failure that
 * turns the library off, the recording's clock.
 */
#ifndef XPU_CUPTI_STATE_H
#define XPU_CUPTI_STATE_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "cupti/activity/bufsize.h"
#include "cupti/activity/cupti_convert.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/nvtx/nvtx.h"
#include "cupti/pcsamp/pcsamp.h"
#include "cupti/walk/apis.h"
#include "attach.h"

#define INJECT_SEND_TIMEOUT_MS	200		/* periodic flush */
#define INJECT_EXIT_TIMEOUT_MS	2000		/* final flush at exit */

enum inject_state { INJECT_NONE, INJECT_ACTIVE, INJECT_OFF };

struct inject {
	_Atomic int state;		/* enum inject_state */
	atomic_flag devices_done;
	atomic_flag nested_noted;
	atomic_flag finished;
	uint32_t pid;
	CUpti_SubscriberHandle sub;
	int subscribed;
	/* xpu-record -p (attach.h): the configuration of the attach in
	 * progress; off when the library was loaded at start (the
	 * environment then says) */
	struct xpu_attach_cfg cfg;
	struct xpu_client client;
	struct xpu_names names;
	struct xpu_convert conv;
	struct xpu_apis apis;
	struct xpu_nvtx nvtx;
	struct xpu_pcsamp pcsamp;	/* --gpu-pc-sampling */
	struct xpu_bufsize bufsize;	/* CUPTI's activity buffers */
	int pc_period;			/* xpu_pcsamp__parse(): 0 off */
	struct xpu_pcsamp_duty pc_duty;	/* xpu_pcsamp__parse_duty() */
	bool nvtx_on;			/* NVTX callbacks enabled */
	bool no_marker;			/* XPU_CUPTI_MARKER=off */
	bool unw_probe;			/* XPU_CUPTI_MARKER=unw:LIB or unw+:LIB */
	bool walk_probe;		/* XPU_CUPTI_MARKER=walk or walk+ */
	bool gpu_memory;		/* --gpu-memory (wire.h: XPU_CHANNEL_GPU_MEMORY) */
};
extern struct inject inj;

/* The setting key of this recording: an attach's, else the environment's. */
#define inject__cfg(key) xpu_attach_cfg__get(&inj.cfg, key)

__attribute__((format(printf, 1, 2)))
void inject__warn(const char *fmt, ...);
const char *inject__strerr(CUptiResult r);
/* A CUPTI call failed: say so once, store it in the trace, stop collecting.
 * Callbacks check the state first, so the app only pays a load per call. */
void inject__fail(const char *what, CUptiResult r);
#define CUPTI_TRY(call) ({						\
	CUptiResult _r = (call);					\
	if (_r != CUPTI_SUCCESS)					\
		inject__fail(#call, _r);				\
	_r == CUPTI_SUCCESS;						\
})
/* The recording's clock (CLOCK_MONOTONIC ns), also CUPTI's timestamps. */
uint64_t CUPTIAPI inject__timestamp(void);
/* Every activity kind a recording may have enabled, disabled (best effort). */
void inject__disable_kinds(void);
/* META key = v, in decimal. */
void inject__meta_u(const char *key, unsigned long long v);
#endif
