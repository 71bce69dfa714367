/* SPDX-License-Identifier: MIT */
/* The rank variables of a process's environment (procenv.c). */
#ifndef XPU_RECORD_KERNEL_PROCENV_H
#define XPU_RECORD_KERNEL_PROCENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xpu_writer;

/* the rank variables of a process's environment as one
 * XPU_REC_PROC_ENV record. The keys copied (NULL-terminated list): */
extern const char *const procenv_keys[];
#define PROCENV_READ_MAX	(1u << 20)	/* environ bytes read at most */
#define PROCENV_PAIRS_MAX	8192		/* bytes of pairs at most */
/* The wanted "KEY=VALUE" entries of env (len bytes of NUL-separated
 * entries) as "KEY\0VALUE\0" pairs in out (cap bytes); returns the bytes
 * used. An entry not terminated inside len (cut by the read limit) is left
 * out. */
size_t procenv__pick(const char *env, size_t len, char *out, size_t cap);
/* Reads /proc/PID/environ (at most PROCENV_READ_MAX bytes) and writes the
 * record, with time that of the exec it follows. Returns 0 or -errno (the
 * process is gone, or its environment is not readable yet: no record). */
int procenv__write(struct xpu_writer *w, pid_t pid, uint64_t time);

#endif
