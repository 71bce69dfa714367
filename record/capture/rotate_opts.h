/* SPDX-License-Identifier: MIT */
/*
 * The options of bounded capture (rotate.h: --switch-output,
 * --flight-recorder, --trigger, --activate) as struct record_opts holds
 * them (record/options.h), and their parsing (rotate_opts.c; --activate's
 * in activate.c).
 */
#ifndef XPU_RECORD_ROTATE_OPTS_H
#define XPU_RECORD_ROTATE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

enum { ROTATE_SWITCH_NONE, ROTATE_SWITCH_SIGNAL, ROTATE_SWITCH_SIZE, ROTATE_SWITCH_TIME };

#define ROTATE_TRIGGERS_MAX	8
/* The flight recorder's ring holds at most this many bytes of compressed
 * chunks, whatever SECONDS says (the oldest go first). */
#define FLIGHT_MAX_BYTES_DEFAULT	(256ull << 20)
/* While files are written (rotate_opts__files): the period at which the
 * CUPTI library hands its GPU records over, told it over the channel
 * (cupti/channel/wire.h: XPU_CHANNEL_CONFIG), so that they reach a file in time. */
#define ROTATE_GPU_FLUSH_MS		200

struct rotate_trigger {
	int kind;			/* ROTATE_TRIG_* */
	char name[128];			/* nvtx: the range's message */
	double ms;			/* nvtx: longer than this */
	double pct;			/* gpu-idle: idle more than this per cent */
};
/* oom: an allocation failed for want of memory (a GPU_OOM record) */
enum { ROTATE_TRIG_NVTX = 1, ROTATE_TRIG_GPU_IDLE, ROTATE_TRIG_OOM };

struct rotate_opts {
	int switch_mode;		/* ROTATE_SWITCH_* */
	uint64_t switch_bytes;		/* SIZE */
	double switch_secs;		/* TIME */
	int max_files;			/* --switch-max-files; 0: all kept */
	double flight_secs;		/* --flight-recorder; 0: off */
	uint64_t flight_max_bytes;
	struct rotate_trigger triggers[ROTATE_TRIGGERS_MAX];
	int nr_triggers;
	bool activate;			/* --activate given */
	uint64_t activate_ns;		/* ... its instant, CLOCK_REALTIME ns */
};

/* Options (record/options.c hands them over): a one-line usage error on a
 * bad value. */
void rotate_opts__switch_output(struct rotate_opts *ro, const char *arg);
void rotate_opts__max_files(struct rotate_opts *ro, const char *arg);
void rotate_opts__flight(struct rotate_opts *ro, const char *arg);
void rotate_opts__trigger(struct rotate_opts *ro, const char *arg);
/* After all options: the combinations that make no sense. gpu_memory:
 * --gpu-memory, without which no allocation is recorded (--trigger oom). */
void rotate_opts__check(const struct rotate_opts *ro, bool gpu_memory);
/* Whether the trace goes through rotate.c (rotated, flight, activated). */
bool rotate_opts__active(const struct rotate_opts *ro);
/* Whether files are written by rotate.c rather than to -o itself. */
bool rotate_opts__files(const struct rotate_opts *ro);
/* A number with a unit suffix; mult[] gives each suffix's factor. */
bool rotate_opts__number(const char *arg, const char *units, const double *mult, double *v);

#endif
