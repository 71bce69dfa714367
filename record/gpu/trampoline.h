/* SPDX-License-Identifier: MIT */
/* The code xpu-record -p runs in a borrowed thread (trampoline.c). */
#ifndef XPU_RECORD_GPU_TRAMPOLINE_H
#define XPU_RECORD_GPU_TRAMPOLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct user_regs_struct;

#define TRAMPOLINE_MAX		1024
#define TRAMPOLINE_MAGIC_SYSCALL 0x58505500	/* "XPU": no such syscall (-ENOSYS) */
#define TRAMPOLINE_STAGE_MEMFD	10		/* rdi at the magic stop after memfd_create */

struct trampoline {
	uint8_t b[TRAMPOLINE_MAX];
	size_t n;			/* may pass TRAMPOLINE_MAX: too long, not written */
};

/* What it calls, at the process's addresses (0: not there). */
struct trampoline_calls {
	uint64_t dlopen, dlsym, dlerror;
	uint64_t errno_location;	/* libc's __errno_location, or 0 */
	bool libc_private;		/* __libc_dlopen_mode: old glibc */
	uint64_t attach;		/* the loaded library's entry, or 0: dlsym it */
	bool memfd;			/* the library goes through a memfd */
};

/* Its frame below the thread's stack: the xsave area, the strings. */
struct trampoline_frame {
	uint64_t xsave, path, config, sym, name, errno_slot;
	bool xsave_ok;			/* xsave, else fxsave */
};

/* The code that runs t's calls with fa's frame and then resumes the thread
 * at back. Results for the tracer at the magic syscall: rdi the step
 * reached (0 the entry ran, 1 dlopen failed, 2 no entry, 3 no memfd, 4
 * the tracer refused the memfd), rsi the entry's return value, rdx
 * dlerror()'s string or 0. */
void trampoline__build(struct trampoline *c, const struct trampoline_calls *t,
		       const struct trampoline_frame *fa, const struct user_regs_struct *back);

#endif
