/* SPDX-License-Identifier: MIT */
#ifndef XPU_CUPTI_WALK_PROBE_H
#define XPU_CUPTI_WALK_PROBE_H
#include <stdbool.h>
#include <stdint.h>

/* The launch walk with xpu-record's rules (walk_probe.c). 1: on, 0: not
 * asked, -1: asked but no table (the marker stays). Takes the mapping of
 * the client's rule table (client->rules_fd), and queues each complete
 * walk's records (its PY_STACK, if any, right before its GPU_CORR) on the
 * client, as xpu-record writes the marker's (walk mode; walk+ leaves the
 * records to the marker). pid: the process's, for the records. */
struct xpu_client;
int xpu_walk_probe__init(const char *marker_spec, struct xpu_client *client, uint32_t pid);
/* At a marked call, with rsp and rbp as the callback was entered:
 * XPU_WALK_DONE (the walk sent the stack), XPU_WALK_MARKER (the marker must
 * be called: a miss, or walk+), or XPU_WALK_MARKER_URGENT (the same, with
 * XPU_MARKER_URGENT in its domain: the walk missed for want of a rule the
 * marker's stack will teach the recorder, which should wake now). */
enum { XPU_WALK_DONE, XPU_WALK_MARKER, XPU_WALK_MARKER_URGENT };
int xpu_walk_probe__hit(uint64_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp);
/* At exit, before the last flush: the walk's counts as META
 * "cupti.launch_walk" on client ("pid N: ...", unless the process made no
 * marked call), and on stderr with XPU_CUPTI_VERBOSE=1. */
void xpu_walk_probe__finish(struct xpu_client *client);

#endif
