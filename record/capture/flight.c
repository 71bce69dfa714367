// SPDX-License-Identifier: MIT
/*
 * The flight recorder's ring (flight.h, Documentation/xpu-record.md
 * "Bounded capture"): the sink keeps each chunk, with the time it was
 * sealed, and drops the oldest beyond SECONDS (or beyond the ring's byte
 * limit); a window (SIGUSR2, the end, a trigger) ends at its time and
 * starts where the last one ended, and is written after the lag (rotate.c)
 * as a file of the series (series.c): the state and the ring's records of
 * its time (window.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "format/writer.h"
#include "format/xpu_format.h"
#include "record/clock.h"
#include "record/capture/flight.h"
#include "record/capture/rotate_impl.h"
#include "record/capture/series.h"
#include "record/capture/window.h"

static struct flight_chunk *flight__at(struct rotate *r, size_t i)
{
	return &r->ring[(r->ring_head + i) % r->ring_cap];
}

static void flight__drop_oldest(struct rotate *r)
{
	struct flight_chunk *c = flight__at(r, 0);

	r->ring_bytes -= c->len;
	free(c->data);
	r->ring_head = (r->ring_head + 1) % r->ring_cap;
	r->ring_nr--;
}

/* Keeps the chunks that hold the last SECONDS before a cut that may still
 * wait for its late records: those sealed after now - SECONDS - the lag,
 * and the one before them (its records reach into the window); and not
 * more than the byte limit. With the lock. */
static void flight__trim(struct rotate *r, uint64_t now)
{
	uint64_t keep = r->o.flight_secs * 1e9 + ROTATE_LAG_GPU_NS + FLIGHT_SEAL_MS * 1000000ull;
	uint64_t cutoff = now > keep ? now - keep : 0;

	while (r->ring_nr >= 2 && flight__at(r, 1)->sealed <= cutoff)
		flight__drop_oldest(r);
	while (r->ring_nr >= 2 && r->ring_bytes > r->o.flight_max_bytes) {
		flight__drop_oldest(r);
		r->ring_dropped++;
	}
}

void flight__push(struct rotate *r, const void *chunk, size_t len,
		  const struct xpu_writer_chunk *info)
{
	struct flight_chunk *c;

	if (r->ring_nr == r->ring_cap) {
		size_t cap = r->ring_cap ? 2 * r->ring_cap : 64;
		struct flight_chunk *n = xcalloc(cap, sizeof(*n));

		for (size_t i = 0; i < r->ring_nr; i++)
			n[i] = *flight__at(r, i);
		free(r->ring);
		r->ring = n;
		r->ring_cap = cap;
		r->ring_head = 0;
	}
	c = &r->ring[(r->ring_head + r->ring_nr) % r->ring_cap];
	c->sealed = record__now_ns();
	c->below = 0;
	c->len = len;
	c->info = *info;
	c->data = xmalloc(len);
	memcpy(c->data, chunk, len);
	r->ring_nr++;
	r->ring_bytes += len;
	flight__trim(r, c->sealed);
	if (r->ring_bytes > r->ring_peak)
		r->ring_peak = r->ring_bytes;
}

/*
 * Writes the window that ends at cut (WINDOW_END_OPEN: the end of the
 * recording) as FILE.<timestamp>: the state and the kernel symbols
 * (without the lock: the sink goes on filling the ring), then, with it,
 * the records of the ring's chunks whose time is in the window. The
 * window starts where the last one ended (or SECONDS before cut, or at
 * the recording's start): each record goes to one window, by its time
 * (an off-CPU block or NVTX range: its end, xpu_rectype__done_time()). A
 * record of before that start that came only after the last window was
 * written (GPU activity later than the lag bound) goes to this one.
 * flush: the recorder's writer is open, its records of now go to the ring
 * first.
 */
void flight__write(struct rotate *r, const char *why, uint64_t cut, bool flush)
{
	char *name = series__name(r->path);
	struct rotate_file f;
	uint64_t keep = r->o.flight_secs * 1e9, end = cut != WINDOW_END_OPEN ? cut :
			r->stop_mono ? r->stop_mono : record__now_ns();
	uint64_t ws = end > keep ? end - keep : 0, taken = 0;
	struct xpu_writer *fw;
	bool late;
	int err = 0;

	if (ws <= r->last_cut)
		ws = r->last_cut;
	/* every chunk there was when the last window was written was read */
	late = ws == r->last_cut && r->last_cut > r->start_mono;
	if (ws < r->start_mono)
		ws = r->start_mono;
	if (flush)
		xpu_writer__flush(r->w);
	fw = series__open_file(r, name, ws, false, &f);
	if (!fw) {
		free(name);
		return;
	}
	xpu_writer__meta(fw, XPU_META_RECORDING_WINDOW, why);
	series__ksyms(r, fw);
	xpu_writer__flush(fw);
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->ring_nr && !err; i++) {
		struct flight_chunk *c = flight__at(r, i);
		/* a chunk never read from holds records of the window and
		 * of before it; of a window written before, only those that
		 * came after it (late: they go here, not nowhere) */
		uint64_t lo = c->below || !late ? ws : 0;

		err = window__take(fw, c->data, c->len, &c->info, lo, cut, !c->below, &taken);
		c->below = cut;
	}
	/* chunks whose every record went to a window: of no later one */
	while (r->ring_nr && flight__at(r, 0)->info.max_time < cut &&
	       flight__at(r, 0)->sealed < end)
		flight__drop_oldest(r);
	r->last_cut = end;
	series__window_meta(r, fw, ws, end);
	err = series__finish_file(r, fw) ?: err;
	if (err)
		warn("writing %s failed: %s: the window lacks records", f.name, strerror(-err));
	debug(1, "flight recorder: %s: %llu records of [%llu, %llu)", name,
	      (unsigned long long)taken, (unsigned long long)ws, (unsigned long long)end);
	/* the window takes its name once whole */
	if (series__name_file(r, &f, name)) {
		if (!xpu_quiet)
			fprintf(stderr, "xpu-record: flight recorder: %s: %.1f s written to %s\n",
				why, (end - ws) / 1e9, f.name);
		series__done(r, &f);
	}
	pthread_mutex_unlock(&r->lock);
	free(name);
}

void flight__free(struct rotate *r)
{
	while (r->ring_nr)
		flight__drop_oldest(r);
	free(r->ring);
}
