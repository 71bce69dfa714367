/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU records (XPU_REC_OFFCPU): the parts of a block's stack the
 * session's pass 2 (session.c, session__offcpu) puts into the profile,
 * weighted by the time off CPU at the sampling frequency (ORIGIN_OFFCPU),
 * and hands to the session's CPU-event subscribers: the stack where the
 * thread blocked, without the recorder's own frames, ending in one
 * "[off-cpu] REASON" frame. The reason is the innermost kernel function
 * below the scheduler (futex_wait_queue, do_nanosleep, pipe_read), else the
 * system call, else the task state. See Documentation/design-offcpu.md.
 *
 * Below the session: these work on the profile and the call-chain resolver
 * the session hands them, and do not include session.h.
 */
#ifndef XPU_REPORT_OFFCPU_H
#define XPU_REPORT_OFFCPU_H

#include <stddef.h>
#include <stdint.h>
#include "common/hashmap.h"
#include "format/record_view.h"
#include "report/profile/profile.h"
#include "report/unwind/callchain.h"

/* How many innermost kernel ips are the tracepoint's and the BPF program's. */
size_t offcpu__bpf_depth(struct profile *p, struct callchain *cc, const struct xpu_stack_view *v);

/* The "[off-cpu] REASON" marker frame of block o. */
uint32_t offcpu__reason_frame(struct profile *p, struct callchain *cc, const struct xpu_offcpu *o,
			      const struct xpu_stack_view *v);

/*
 * A block outside a system call (preemption, a page fault) comes with the
 * user registers only: the leaf function, no callers. The thread's latest
 * CPU sample in the same function (last_stack: tid -> stack) knows them:
 * frames[0..n) gets its user frames down to that function. Returns the new n.
 */
size_t offcpu__borrow_callers(struct profile *p, const struct u64map *last_stack, uint32_t tid,
			      uint32_t *frames, size_t n);

/* The name of an x86-64 system call number, NULL when not in our table. */
const char *offcpu__syscall_name(int nr);

#endif
