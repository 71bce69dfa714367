/* SPDX-License-Identifier: MIT */
/*
 * --flight-recorder: the last seconds kept in memory as the writer's
 * compressed chunks, written as a window on SIGUSR2, a trigger or at the
 * end (flight.c). Private to record/capture/ (struct rotate:
 * rotate_impl.h).
 */
#ifndef XPU_RECORD_CAPTURE_FLIGHT_H
#define XPU_RECORD_CAPTURE_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLIGHT_SEAL_MS		200	/* the ring's time resolution */

struct rotate;
struct xpu_writer_chunk;

/* The sink's chunk into the ring, sealed now; the ring is trimmed. With
 * the lock. */
void flight__push(struct rotate *r, const void *chunk, size_t len,
		  const struct xpu_writer_chunk *info);
/* Writes the window that ends at cut (WINDOW_END_OPEN: the end of the
 * recording), why: what asked for it (META recording_window). flush: the
 * recorder's writer is open. Without the lock. */
void flight__write(struct rotate *r, const char *why, uint64_t cut, bool flush);
/* The ring's chunks. */
void flight__free(struct rotate *r);

#endif
