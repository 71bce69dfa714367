/* SPDX-License-Identifier: MIT */
/*
 * The library's side of xpu-record -p on a CUDA process (record/gpu/inject.c,
 * Documentation/design-attach.md): the injector dlopen()s the library in
 * the running process and calls its xpu_cupti_attach(config) (wire.h).
 * config is what the environment says for a launched process, as
 * "KEY=VALUE" lines: XPU_CUPTI_SOCKET=..., XPU_CUPTI_MARKER=walk, ... The
 * entry copies it and returns at once; a thread of ours does the rest
 * (connect, subscribe, record) so that the thread the injector borrowed is
 * back within milliseconds. That thread then watches the socket: the
 * recorder ends the recording by shutting its side down (EOF), and a
 * recorder that died closes it too; either way the library flushes what it
 * has, turns CUPTI off, unsubscribes, finalizes, closes the socket and the
 * thread ends: the process runs on as before the attach. A later attach
 * starts it all again.
 *
 * Does not include cupti.h: the fake CUPTI library uses it.
 */
#ifndef XPU_CUPTI_ATTACH_H
#define XPU_CUPTI_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#define XPU_ATTACH_CFG_MAX	4096

struct xpu_attach_cfg {
	char text[XPU_ATTACH_CFG_MAX];	/* KEY=VALUE\0KEY=VALUE\0\0 */
	bool on;			/* an attach: the keys come from here */
};

/* Copies "KEY=VALUE\n..." lines. Returns 0 or -EINVAL (too long, no '='). */
int xpu_attach_cfg__parse(struct xpu_attach_cfg *c, const char *text);
/* An attach's value of key, or, when the library was loaded at start (no
 * attach), getenv(key). NULL when not set. */
const char *xpu_attach_cfg__get(const struct xpu_attach_cfg *c, const char *key);

/* Waits up to timeout_ms for the recorder to close or shut down its side
 * of fd (what it sends after the ready byte is read and ignored). Returns
 * true at EOF or a socket error (the recording is over), false on
 * timeout. */
bool xpu_attach__ended(int fd, int timeout_ms);

/* Whether the process's CUDA driver was initialised (cuInit): libcuda's
 * cuCtxGetCurrent() does not say CUDA_ERROR_NOT_INITIALIZED. An attach to a
 * process that has loaded libcuda but not called cuInit yet stops there:
 * subscribing to CUPTI would initialise CUDA in it. True when it cannot
 * tell (no such function). */
bool xpu_attach__cuda_initialised(void);
/* The META cupti.attach value of an attach that stopped there; the
 * recorder warns when it sees a value starting with "not attached". */
#define XPU_ATTACH_NOT_INITIALISED "not attached: CUDA is not initialised in the process " \
	"yet (libcuda loaded, no cuInit): attach again once it runs CUDA"

/* Starts fn(arg) on a detached thread with every signal blocked (the
 * application's handlers must not run on it). Returns 0 or -errno. */
int xpu_attach__thread(void *(*fn)(void *), void *arg);

#endif
