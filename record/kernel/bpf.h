/* SPDX-License-Identifier: MIT */
/* The BPF programs' life cycle (bpf.c): open, attach, the tracked set,
 * the rings, what was lost. */
#ifndef XPU_RECORD_KERNEL_BPF_H
#define XPU_RECORD_KERNEL_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts;
struct xpu_writer;
struct u64map;

struct record_bpf;
int record_bpf__open(struct record_bpf **out, const struct record_opts *o, char *err, size_t errlen);
int record_bpf__attach_marker(struct record_bpf *b, const char *lib, char *err, size_t errlen);
/* The marker's uprobe on a copy of the library (path: a process's memfd
 * through /proc, xpu-record -p into a container). Returns 0 or -errno. */
int record_bpf__attach_marker_copy(struct record_bpf *b, const char *path);
/* A tracked process mapped PATH at [start, end): if it is libtorch_cpu.so,
 * the autograd uprobes (once per file; not with --no-autograd or --no-gpu);
 * if it is libc10_cuda.so, the allocator probes (--gpu-memory,
 * torch_alloc.c). */
void record_bpf__mapping(struct record_bpf *b, pid_t pid, uint64_t start, uint64_t end,
			const char *path);

/* Process pid exited (its leader): forget its autograd probes' places. */
void record_bpf__exit(struct record_bpf *b, pid_t pid);

/* For -p: record_bpf__mapping() for each file pid has mapped executable. */
void record_bpf__scan_maps(struct record_bpf *b, pid_t pid);
void record_bpf__set_writer(struct record_bpf *b, struct xpu_writer *w);
struct u64map *record_bpf__kernel_ips(struct record_bpf *b);
/* The map of Python processes (bpf/xpu_python.bpf.h), and who gets the
 * PY_STACK records the programs send (NULL: they are written as they come). */
struct python;
int record_bpf__py_procs_fd(struct record_bpf *b);
struct python *record_bpf__python(struct record_bpf *b);	/* NULL: no walk */
void record_bpf__set_python(struct record_bpf *b, struct python *py);
/* Stack records are written with the words no unwinder reads zeroed
 * (format/stack_prune.h); sync drains the side-band first when a sample
 * may have run code whose mapping is still in its ring (drain thread). */
struct xpu_prune;
void record_bpf__set_prune(struct record_bpf *b, struct xpu_prune *p);
void record_bpf__set_sync(struct record_bpf *b, void (*sync)(void *ctx), void *ctx);
void record_bpf__detach(struct record_bpf *b);
size_t record_bpf__ring_bytes(struct record_bpf *b);	/* data bytes of the rings */
int record_bpf__sampled_cpus(struct record_bpf *b);	/* CPUs with a sampling event */
/* Makes the GPU correlation ring (the first CUDA process connected). */
int record_bpf__gpu_ring(struct record_bpf *b);
int record_bpf__track(struct record_bpf *b, pid_t pid);
bool record_bpf__is_tracked(struct record_bpf *b, pid_t pid);
/* The tracked processes: their count, and their pids in *pids (malloc'ed)
 * unless pids is NULL. Only current while the programs are attached. */
int record_bpf__tracked(struct record_bpf *b, pid_t **pids);
/* The fds that keep the tracked set current: the map and the fork and exit
 * tracepoint links (a link stays attached while any process holds its fd). */
int record_bpf__tracking_fds(struct record_bpf *b, int fds[3]);
int record_bpf__ring_fd(struct record_bpf *b);
/* Consumes both ring buffers, appending their records to the writer. */
int record_bpf__consume(struct record_bpf *b);
struct record_bpf_lost {
	uint64_t samples, corr, stack_read, offcpu;
	uint64_t python;		/* Python walks cut short or stopped by a check */
	uint64_t offcpu_blocks;		/* switch-outs seen (statistics) */
	uint64_t gpu_block;		/* --gpu-memory: allocator records, the ring full */
};
void record_bpf__lost(struct record_bpf *b, struct record_bpf_lost *l);
void record_bpf__close(struct record_bpf *b);

#endif
