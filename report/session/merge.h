/* SPDX-License-Identifier: MIT */
/*
 * Several recordings in one session (xpu-report -i a.data -i b.data): each
 * input's records are rewritten as they are read so that one machine holds
 * them all:
 *
 *  - pids and tids of recording g (the g-th distinct recording among the
 *    inputs: the files of one rotated or flight recording are one) get
 *    g << MERGE_PID_SHIFT added (Linux pids are below 2^22, PID_MAX_LIMIT),
 *    so processes of different hosts never collide, and at most 2^10
 *    recordings are merged; 0 (the whole recording, the idle task) stays 0;
 *  - times get the input's shift added: the offset between its monotonic
 *    clock and the reference input's (the one that started first), from
 *    the realtime/monotonic pair of each file header. Clocks line up as
 *    well as the hosts' wall clocks agree (NTP: ~1 ms; PTP: ~1 us); a
 *    time 0 (no time: an NVTX range never closed) stays 0.
 *
 * Every record type with a pid, tid or time lists their offsets in
 * merge.c's table; a type without a row there cannot be merged
 * (merge__covers(), checked by tests/unit/test_merge.c for every type of
 * the record-type table).
 */
#ifndef XPU_REPORT_MERGE_H
#define XPU_REPORT_MERGE_H

#include <stdbool.h>
#include <stdint.h>
#include "format/reader.h"

#define MERGE_PID_SHIFT	22
#define MERGE_PID_MASK	((1u << MERGE_PID_SHIFT) - 1)

/* The recording a (rewritten) pid came from, and the pid it had there. */
static inline uint32_t merge__input(uint32_t pid) { return pid >> MERGE_PID_SHIFT; }
static inline uint32_t merge__pid(uint32_t pid) { return pid & MERGE_PID_MASK; }

/* Whether merge.c knows the type's fields (META, KSYM: none to rewrite). */
bool merge__covers(uint16_t type);

/* Rewrites rec's body into *scratch (grown as needed, *cap bytes): pids
 * and tids + pid_base, times + shift. rec then points at the copy. */
void merge__rewrite(struct xpu_record *rec, uint32_t pid_base, int64_t shift,
		    uint8_t **scratch, size_t *cap);

#endif
