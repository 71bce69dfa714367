/* SPDX-License-Identifier: MIT */
/* The interpreter walk's user-space half (python.c). */
#ifndef XPU_RECORD_PYTHON_PYTHON_H
#define XPU_RECORD_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xpu_writer;
struct python;

/* the interpreter walk's user-space half: sets up each Python
 * process's entry in the BPF map, writes PY_CODE records for the code
 * objects PY_STACK records name (before them), checks at the end. map_fd:
 * the map of Python processes (record_bpf__py_procs_fd()): python.c calls
 * nothing of bpf.c, bpf.c hands it the PY_STACK records (python__stack). */
struct python *python__new(int map_fd, struct xpu_writer *w);
/* An executable file mapping of a tracked process (start maps pgoff), made
 * at time (0: unknown, a -p scan). */
void python__mapping(struct python *py, pid_t pid, const char *path, uint64_t start,
		     uint64_t pgoff, uint64_t time);
/* python__mapping() for each executable mapping in /proc/PID/maps (-p). */
void python__scan_maps(struct python *py, pid_t pid);
void python__fork(struct python *py, pid_t ppid, pid_t pid, uint64_t time);
/* An exec at time drops the process's entry, unless a mapping drained
 * before it (another CPU's sideband buffer) set it after the exec. */
void python__exec(struct python *py, pid_t pid, uint64_t time);
/* A launcher linked to libpython was mapped and its library not yet: the
 * reader should read the side-band every millisecond for now. */
bool python__waiting(struct python *py);
/* A PY_STACK body (len bytes) about to be written. */
void python__stack(struct python *py, const void *body, size_t len);
/* The layout registered for pid (its py_procs entry): false when none. */
struct xpu_bpf_py_cfg;
bool python__layout_of(struct python *py, pid_t pid, struct xpu_bpf_py_cfg *cfg);
/* pid runs a CPython the walk cannot read (a version it does not know, a
 * free-threaded build, no PyCode_Type): its stacks stay native. Any thread. */
bool python__native(struct python *py, pid_t pid);
/* The self-checks' warnings; returns the number of PY_STACK records seen. */
uint64_t python__finish(struct python *py);
void python__free(struct python *py);

#endif
