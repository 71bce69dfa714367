/* SPDX-License-Identifier: MIT */
/* The reader thread (drain.c). */
#ifndef XPU_RECORD_DRAIN_H
#define XPU_RECORD_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_bpf;
struct xpu_writer;
struct sideband;
struct channel;

/* the reader thread; keep_coding: CUDA processes' stacks stay STACK_DELTA
 * coded once they connect (XPU_GPU_PLAIN=0) */
struct drain;
int drain__start(struct drain **out, struct xpu_writer *w, struct record_bpf *b,
		 struct sideband *sb, struct channel *ch, bool keep_coding);
/* What the final drain took, in seconds: the BPF rings, the sideband (with
 * the build-ids of the mappings seen last), the GPU clients; and the reader
 * thread's CPU time over the whole recording. */
struct drain_final {
	double rings_s, sideband_s, gpu_s;
	double cpu_s;
};
void drain__stop(struct drain *d, struct drain_final *fin);	/* final drain, then join */
/* Ends the attaches (channel__shutdown_clients() in the reader thread) and
 * waits up to timeout_s for the libraries to send the rest and close;
 * returns the clients still connected. */
int drain__end_attaches(struct drain *d, double timeout_s);

#endif
