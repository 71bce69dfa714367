/* SPDX-License-Identifier: MIT */
/*
 * Bounded capture for long runs (Documentation/xpu-record.md, "Bounded
 * capture"): --switch-output rotates the trace into FILE.<timestamp> files,
 * --flight-recorder keeps the last seconds in memory as compressed chunks
 * and writes them on SIGUSR2, at the end or on a --trigger, --activate
 * delays the recording to a wall-clock instant. Each file written is
 * readable alone: it starts with the recording's state (state.c).
 */
#ifndef XPU_RECORD_ROTATE_H
#define XPU_RECORD_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "format/writer.h"
#include "record/capture/rotate_opts.h"

/* Options (record/options.c hands them over): a one-line usage error on a
 * bad value. */
void rotate_opts__switch_output(struct rotate_opts *ro, const char *arg);
void rotate_opts__max_files(struct rotate_opts *ro, const char *arg);
void rotate_opts__flight(struct rotate_opts *ro, const char *arg);
void rotate_opts__trigger(struct rotate_opts *ro, const char *arg);
void rotate_opts__activate(struct rotate_opts *ro, const char *arg);
/* After all options: the combinations that make no sense. */
void rotate_opts__check(const struct rotate_opts *ro);
/* Whether the trace goes through rotate.c (rotated, flight, activated). */
bool rotate_opts__active(const struct rotate_opts *ro);
/* Whether files are written by rotate.c rather than to -o itself. */
bool rotate_opts__files(const struct rotate_opts *ro);

/* --activate: the seconds until the instant (0: none, or passed). */
double activate__delay(const struct rotate_opts *ro);
/* --activate: sleeps until the instant (SIGINT/SIGTERM end the wait: false). */
bool activate__wait(const struct rotate_opts *ro, volatile int *stop);

/* state.c: the recording's state, re-emitted at the start of each file. */
struct state;
struct state *state__new(void);
void state__note(struct state *st, uint16_t type, uint16_t flags, const struct iovec *iov, int n);
int state__emit(struct state *st, struct xpu_writer *w);
/* Drops the records of processes that exited (images replaced) before
 * this CLOCK_MONOTONIC ns. */
void state__expire(struct state *st, uint64_t before);
void state__size(struct state *st, size_t *records, size_t *bytes);
void state__free(struct state *st);

/* rotate.c */
struct rotate;
struct record_bpf;
struct sideband;
struct channel;
/* Sets up wo (tap, sink) for the recorder's writer; path: -o. */
struct rotate *rotate__new(const struct rotate_opts *ro, const char *path,
			   struct xpu_writer_opts *wo);
/* The recorder's writer, and where lost counts come from (any may be
 * NULL); starts the thread that rotates, seals and writes windows. */
int rotate__start(struct rotate *r, struct xpu_writer *w, struct record_bpf *b,
		  struct sideband *sb, struct channel *ch);
/* Stops the thread (before the writer is closed). */
void rotate__stop(struct rotate *r);
/* The writer was closed (every chunk came): the last file is finished (or
 * the flight recorder's window written); prints what was written unless
 * quiet. Returns 0 or -errno. */
int rotate__end(struct rotate *r, bool quiet);
void rotate__free(struct rotate *r);

#endif
