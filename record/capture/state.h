/* SPDX-License-Identifier: MIT */
/* The recording's state, re-emitted at the start of each file (state.c). */
#ifndef XPU_RECORD_CAPTURE_STATE_H
#define XPU_RECORD_CAPTURE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct xpu_writer;

struct state;
struct state *state__new(void);
void state__note(struct state *st, uint16_t type, uint16_t flags, const struct iovec *iov, int n);
int state__emit(struct state *st, struct xpu_writer *w);
/* Drops the records of processes that exited (images replaced) before
 * this CLOCK_MONOTONIC ns. */
void state__expire(struct state *st, uint64_t before);
void state__size(struct state *st, size_t *records, size_t *bytes);
void state__free(struct state *st);

#endif
