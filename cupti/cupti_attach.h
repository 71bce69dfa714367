/* SPDX-License-Identifier: MIT */
/*
 * xpu-record -p on this process, the CUPTI side (attach.h has the parts
 * without CUPTI, Documentation/design-attach.md the design): the attach
 * entry, its thread (start, record until the recorder ends it, detach) and
 * the detach that leaves the process as it was: what CUPTI holds flushed
 * and sent, activity and callbacks off, unsubscribed, CUPTI finalized, the
 * socket closed. One attach at a time; a later attach starts it all again.
 */
#ifndef XPU_CUPTI_CUPTI_ATTACH_H
#define XPU_CUPTI_CUPTI_ATTACH_H
#include <stdbool.h>

/* The entry the injector calls (wire.h): copies config, starts the attach
 * thread and returns at once. 0, -EISCONN (one records), -EALREADY (the
 * last one still ends), -EBUSY (a launched process records already),
 * -EINVAL, -errno. */
int xpu_cupti_attach(const char *config);
/* An attach thread runs: the launched start must not. */
bool inject__attaching(void);
/* pthread_atfork's child handler, for the launched start too: the child
 * stays silent, no attach thread and no flush thread are in it. */
void inject__atfork_child(void);
#endif
