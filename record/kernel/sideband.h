/* SPDX-License-Identifier: MIT */
/* Sideband from perf (sideband.c). */
#ifndef XPU_RECORD_KERNEL_SIDEBAND_H
#define XPU_RECORD_KERNEL_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_bpf;
struct xpu_writer;
struct python;

/* perf's mmap/comm/task records, filtered to tracked processes */
struct sideband;
struct perf_event_mmap_page;
int sideband__open(struct sideband **out, struct xpu_writer *w, struct record_bpf *b);
/* The same over nr rings already in memory, laid out as perf's: meta[i] the
 * control page, data[i] its size data bytes (a power of two). For tests,
 * which write perf records there by hand. b may be NULL: then the tracked
 * pids are those given to sideband__track() and their descendants. */
int sideband__open_rings(struct sideband **out, struct xpu_writer *w, struct record_bpf *b,
			 struct perf_event_mmap_page **meta, uint8_t **data, int nr, uint64_t size);
void sideband__track(struct sideband *sb, pid_t pid);
int sideband__nr_fds(struct sideband *sb);
int sideband__fd(struct sideband *sb, int i);
int sideband__drain(struct sideband *sb);
uint64_t sideband__lost(struct sideband *sb);
/* Whether pid was ever tracked during the recording. */
bool sideband__seen(struct sideband *sb, pid_t pid);
void sideband__close(struct sideband *sb);
/* Executable mappings of the file named from are written as mappings of
 * to: a memfd copy of the CUPTI library (its /proc name) as the library it
 * is a byte-for-byte copy of (inject.c), so that it is symbolized and
 * unwound as that file. */
void sideband__set_alias(struct sideband *sb, const char *from, const char *to);

/* sideband__open*(): the Python side learns of mappings, forks and execs. */
void sideband__set_python(struct sideband *sb, struct python *py);
/* fn(ctx, ...) learns of each executable mapping written (the GPU channel
 * counts the library's loads: channel__mapped()). */
void sideband__set_on_mapping(struct sideband *sb,
			      void (*fn)(void *ctx, pid_t pid, const char *path, const uint8_t *bid,
					 size_t bid_size), void *ctx);

#endif
