/* SPDX-License-Identifier: MIT */
/*
 * Private to record/capture/: the state of bounded capture that its units
 * share (rotate.c, the life cycle and the thread; series.c, the files of
 * --switch-output; flight.c, the flight recorder's ring; trigger.c, the
 * triggers). Nothing outside this folder includes it: the rest of the
 * recorder sees struct rotate through rotate.h only.
 */
#ifndef XPU_RECORD_ROTATE_IMPL_H
#define XPU_RECORD_ROTATE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/hashmap.h"
#include "format/writer.h"
#include "format/xpu_format.h"
#include "record/capture/rotate_opts.h"
#include "record/capture/trigger.h"

/* How long a cut waits for the records of its time that come late: GPU
 * activity comes within about two of the CUPTI library's flush periods
 * (ROTATE_GPU_FLUSH_MS, told it over the channel: cupti/channel/wire.h), the BPF
 * rings and the sideband are drained every 20-100 ms. */
#define ROTATE_LAG_GPU_NS	(3ull * ROTATE_GPU_FLUSH_MS * 1000000ull)
#define ROTATE_LAG_CPU_NS	100000000ull

struct flight_chunk {
	uint64_t sealed;		/* CLOCK_MONOTONIC ns */
	uint64_t below;			/* its records before this went to a window; 0: none */
	size_t len;
	struct xpu_writer_chunk info;
	uint8_t *data;
};

struct lost_counts {		/* the recorder's own counters, by source */
	uint64_t v[XPU_LOST_MAX];
};

/* A file this recording made (record/output.c): renamed and removed only
 * while name is still that file, never another recording's. */
struct rotate_file {
	char *name;
	dev_t dev;
	ino_t ino;
};

struct state;
struct record_bpf;
struct sideband;
struct channel;

struct rotate {
	struct rotate_opts o;
	const char *path;
	struct state *state;
	struct xpu_writer *w;		/* the recorder's (a sink writer) */
	struct record_bpf *b;
	struct sideband *sb;
	struct channel *ch;
	uint64_t act_mono;		/* --activate on CLOCK_MONOTONIC; 0: none */
	_Atomic uint64_t features;

	pthread_mutex_t lock;		/* the current file, the ring, the lost base */
	struct xpu_writer *fw;		/* --switch-output: the file being written */
	struct rotate_file cur;		/* ... where it is: -o, or its own name */
	bool warned_taken;		/* said that -o is another's file */
	struct lost_counts lost_base;	/* counted in earlier files */
	struct rotate_file *done;	/* finished files, oldest first */
	size_t nr_done, cap_done, nr_written, nr_removed;
	struct flight_chunk *ring;	/* --flight-recorder: oldest first from ring_head */
	size_t ring_head, ring_nr, ring_cap;
	uint64_t ring_bytes, ring_peak, ring_dropped;
	uint64_t chunks_in;
	uint64_t start_mono;		/* the recording's start */
	uint64_t last_cut;		/* where the last window or file ended (start_mono) */
	uint64_t stop_mono;		/* rotate__stop(): the recording's end */
	_Atomic uint64_t gpu_newest;	/* the newest GPU activity time the tap saw */
	/* --switch-output: a switch at a cut waits for the records of before
	 * it; meanwhile the chunks are held, then split between the files */
	bool holding;
	struct flight_chunk *held;
	size_t nr_held, cap_held;

	struct trigger trig;		/* --trigger */
	/* a window (or a switch) cut at cut, written (done) once the records
	 * of before the cut came: at due */
	struct { bool on; uint64_t cut, due; char why[200]; } pend;
	uint64_t again;			/* a SIGUSR2 while one was pending: its time */
	bool pend_trig;			/* ... a trigger's window (trigger__due()) */

	pthread_mutex_t klock;		/* kips */
	struct u64map kips;		/* kernel IPs of the stacks seen (KSYM per file) */

	atomic_bool size_full;		/* --switch-output=SIZE reached */
	pthread_t thread;
	bool started, ended;
	atomic_bool stop;
};

#endif
