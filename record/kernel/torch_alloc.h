/* SPDX-License-Identifier: MIT */
/* PyTorch's caching allocator probes in libc10_cuda.so (torch_alloc.c). */
#ifndef XPU_RECORD_KERNEL_TORCH_ALLOC_H
#define XPU_RECORD_KERNEL_TORCH_ALLOC_H

#include <stdint.h>
#include <sys/types.h>

struct xpu_record_bpf;
struct torch_alloc;

/* The probes' state, on the loaded skeleton's programs (--gpu-memory). */
struct torch_alloc *torch_alloc__new(struct xpu_record_bpf *skel);
/* A tracked process pid mapped path at [start, end): if it is a
 * libc10_cuda.so, its allocator probes for that process. */
void torch_alloc__mapping(struct torch_alloc *ta, pid_t pid, uint64_t start, uint64_t end,
			  const char *path);
/* The uprobe fallback: process pid's malloc returns to ra, which has no
 * probe yet (XPU_BPF_EV_ALLOC_SITE): one placed there. */
void torch_alloc__site(struct torch_alloc *ta, pid_t pid, uint64_t ra);
/* Process pid is gone: a later one of that pid gets probes of its own. */
void torch_alloc__exit(struct torch_alloc *ta, pid_t pid);
/* Processes probed so far, and how (for -v and the tests). */
void torch_alloc__stats(const struct torch_alloc *ta, int *usdt, int *uprobe);
/* The probes removed (each waits for an RCU grace period); then freed. */
void torch_alloc__detach(struct torch_alloc *ta);
void torch_alloc__free(struct torch_alloc *ta);

#endif
