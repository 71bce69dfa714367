/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU records (XPU_REC_OFFCPU) into the profile: the stack where the
 * thread blocked, ending in one "[off-cpu] REASON" frame, weighted by the
 * time off CPU at the sampling frequency (ORIGIN_OFFCPU), and handed to the
 * session's CPU-event subscribers. The reason is the innermost kernel
 * function below the scheduler (futex_wait_queue, do_nanosleep, pipe_read),
 * else the system call, else the task state. See
 * Documentation/design-offcpu.md.
 */
#ifndef XPU_REPORT_OFFCPU_H
#define XPU_REPORT_OFFCPU_H

#include "report/session/session.h"

/* Pass 2: one OFFCPU record. */
void offcpu__record(struct session *s, const struct xpu_record *rec);

/* The name of an x86-64 system call number, NULL when not in our table. */
const char *offcpu__syscall_name(int nr);

#endif
