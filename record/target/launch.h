/* SPDX-License-Identifier: MIT */
/* Starting the command perf-style (launch.c). */
#ifndef XPU_RECORD_TARGET_LAUNCH_H
#define XPU_RECORD_TARGET_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Call before changing any signal disposition or the mask: the command is
 * started with the state saved here. */
void launch__save_signals(void);
struct launch {
	pid_t pid;
	int go_fd;			/* write end: closing it releases the child */
};
/* With cupti_lib, the child gets CUDA_INJECTION64_PATH and the GPU channel;
 * nvtx also points NVTX_INJECTION64_PATH at cupti_lib unless the user set it
 * (nvtx false: XPU_CUPTI_NVTX=off, so the library leaves NVTX alone); walk
 * sets XPU_CUPTI_MARKER=walk unless the user set it (the launch walk). */
int launch__fork(struct launch *l, const char *path, char **argv, const char *cupti_lib,
		 const char *socket_path, bool nvtx, bool walk);
int launch__go(struct launch *l);
void launch__abort(struct launch *l);

#endif
