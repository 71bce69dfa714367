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
