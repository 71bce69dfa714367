/* SPDX-License-Identifier: MIT */
/* xpu-record's options (options.c): one table of rows, --help and getopt
 * from it (common/opt_table.h). */
#ifndef XPU_RECORD_OPTIONS_H
#define XPU_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "record/capture/rotate_opts.h"

struct record_opts {
	const char *output;
	unsigned int freq;
	bool dwarf;
	unsigned int stack_bytes;
	size_t ring_size;		/* --ring-size: sample ring bytes; 0: sized for -F */
	double duration;		/* seconds; 0: until the command ends */
	bool no_gpu;
	const char *cupti_lib;		/* NULL: default location */
	bool buildid_cache;		/* copy mapped files into the build-id cache */
	int python_frames;		/* RECORD_PY_* */
	bool no_nvtx;			/* do not inject NVTX (NVTX_INJECTION64_PATH) */
	int pc_sampling;		/* --gpu-pc-sampling: 0 off, -1 CUPTI's period, else 2^N */
	const char *pc_duty;		/* --gpu-pc-duty: NULL the default */
	bool gpu_memory;		/* --gpu-memory: CUDA and PyTorch allocations */
	bool no_autograd;		/* no uprobes in libtorch_cpu.so (design-autograd.md) */
	int launch_stacks;		/* RECORD_LAUNCH_* */
	bool perfmap_cleanup;		/* remove the perf maps we caused, once copied */
	bool kill_on_exit;		/* end the command's tree when xpu-record exits */
	unsigned int offcpu_min_us;	/* off-CPU blocks kept with a stack; 0: no off-CPU */
	struct rotate_opts rot;		/* --switch-output, --flight-recorder, --trigger,
					 * --activate (rotate.h) */
	/* the environment's knobs (common/knobs.h, Documentation/environment.md) */
	int stack_prune;		/* XPU_STACK_PRUNE: RECORD_PRUNE_* */
	bool stack_delta;		/* XPU_STACK_DELTA: STACK_DELTA coding (default on) */
	bool gpu_plain;			/* XPU_GPU_PLAIN: no coding once a CUDA process
					 * connects (default on) */
	bool unwind_simple_check;	/* XPU_UNWIND_SIMPLE_CHECK */
	bool inject_memfd;		/* XPU_INJECT_MEMFD: an attach through a memfd */
	int inject_die_at;		/* XPU_INJECT_DIE_AT: attach step to die at; -1 none */
	int inject_hold_ms;		/* XPU_INJECT_HOLD_MS: wait at each attach step */
	pid_t *pids;			/* -p */
	int nr_pids;
	char **argv;			/* command after -- */
};

/* --python-frames: where Python frames come from. */
enum { RECORD_PY_WALK, RECORD_PY_PERF_MAP, RECORD_PY_OFF };

/* --launch-stacks: how a CUDA call's stack is taken (design-gpu.md). */
enum { RECORD_LAUNCH_WALK, RECORD_LAUNCH_MARKER };

/* XPU_STACK_PRUNE: frames where the recorder's unwinding knows them (the
 * default), whole copies (0), format 1.4's address rule, 1.5's CFI reads. */
enum { RECORD_PRUNE_FRAMES, RECORD_PRUNE_NONE, RECORD_PRUNE_ADDRESS, RECORD_PRUNE_CFI };

/* Off-CPU blocks shorter than this (us) are summed, not recorded one by one. */
#define RECORD_OFFCPU_DEFAULT_US 100

/* The command line, then the environment's knobs (knobs__parse). */
void record_opts__parse(struct record_opts *o, int argc, char **argv);

#endif
