/* SPDX-License-Identifier: MIT */
/* libxpu-cupti.so into a running process, -p (inject.c;
 * Documentation/design-attach.md). */
#ifndef XPU_RECORD_GPU_INJECT_H
#define XPU_RECORD_GPU_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts;
struct channel;

/* libxpu-cupti.so into a running process (-p), design-attach.md */
struct inject_result {
	pid_t tid;			/* the thread borrowed */
	double stop_ms;			/* from its stop to its run of our code */
	double run_ms;			/* dlopen and the attach entry */
	double total_ms;		/* from its stop to its own code again */
	int step, ret;			/* the trampoline's step reached, the entry's return */
	int syscall_stops;		/* the thread's system calls meanwhile, each a stop */
	bool reloaded;			/* the library was loaded already */
	bool memfd;			/* through a memfd (a container) */
	bool cuda_app;			/* -ENOENT: CUDA libraries mapped, libcuda not yet */
	char dl_error[256];
};
/* Loads lib in pid and calls its attach entry with config (cupti/attach.h);
 * marker(ctx, path) places the marker's uprobe on a memfd copy of lib.
 * Returns 0, or -errno with one line in msg: -ENOENT the process has not
 * loaded libcuda or has no live thread (CPU only), -EPERM/-EACCES no
 * permission, -ENOEXEC not an x86-64 process or the library would not
 * load, -EALREADY recorded already, -ENODATA no mappings, -EOPNOTSUPP a
 * thread under seccomp (never injected), -EISCONN another xpu-record -p's
 * attach records (refused at once), others. */
typedef int (*inject_marker_fn)(void *ctx, const char *path);
/* The name of the memfd a copy of the library is loaded from, where the
 * process does not see our file (a container): its mappings read
 * "/memfd:xpu-cupti (deleted)"; the recorder writes them as the file. */
#define INJECT_MEMFD_NAME	"xpu-cupti"
int inject__attach(pid_t pid, const char *lib, const char *config, inject_marker_fn marker,
		   void *marker_ctx, struct inject_result *res, char *msg, size_t msglen);
/* Each -p process gets the library (a process without libcuda, or recorded
 * already, is warned about and recorded CPU only). Returns 0 or an exit
 * code with one line in err; *nr_attached: the processes attached. */
int inject__pids(const struct record_opts *o, const char *lib, struct channel *ch, bool walk,
		 inject_marker_fn marker, void *marker_ctx, int *nr_attached, char *err, size_t errlen);

#endif
