/* SPDX-License-Identifier: MIT */
/* CPU time of the recorded processes (cpu_time.c). */
#ifndef XPU_RECORD_TARGET_CPU_TIME_H
#define XPU_RECORD_TARGET_CPU_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CPU time (user + system) in ns, or -1 when unknown */
/* xpu-record's waited-for children's, with what they waited for */
int64_t cpu_time__children(void);
/* a process's, with its waited-for children's (/proc/PID/stat) */
int64_t cpu_time__proc(pid_t pid);

#endif
