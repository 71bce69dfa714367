// SPDX-License-Identifier: MIT
/*
 * Bounded capture (rotate.h, Documentation/xpu-record.md "Bounded capture").
 *
 * The recorder's writer makes chunks as always, but hands each finished
 * one (compressed) to rotate__sink() instead of a file:
 *
 *   --switch-output   the sink appends it to the current file; a switch
 *                     cuts at its time, the chunks sealed after the cut
 *                     are held until the late records of before it came
 *                     (the lag: rotate__lag()), then split between the two
 *                     files by their records' times (window.c); the file
 *                     gets its window, lost counts and FINISH and the name
 *                     FILE.<timestamp>, and the next file starts with the
 *                     state (state.c);
 *   --flight-recorder the sink keeps it in a ring, with the time it was
 *                     sealed, and drops the oldest beyond SECONDS (or
 *                     beyond the ring's byte limit); a window (SIGUSR2,
 *                     the end, a trigger) ends at its time and starts
 *                     where the last one ended, and is written after the
 *                     lag as FILE.<timestamp>: the state and the ring's
 *                     records of its time.
 *
 * Every record passes rotate__tap() first: the state keeps what describes
 * the processes, triggers look at NVTX ranges and GPU activity, --activate
 * drops events before its instant, and the recorder's own lost counts and
 * FINISH (written at the end for the whole recording) are replaced by each
 * file's own, and the kernel IPs of stacks are noted so that each file gets
 * the kernel symbols (KSYM) of the kernel frames seen so far.
 *
 * A thread of ours does the switches and writes (the writer's thread and
 * the drain thread never wait for a file) and, for the flight recorder,
 * seals the open chunk every FLIGHT_SEAL_MS so the ring is cut finely.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "record/output.h"
#include "record/kernel/bpf.h"
#include "record/kernel/sideband.h"
#include "record/gpu/channel.h"
#include "record/kernel/ksyms.h"
#include "record/clock.h"
#include "record/capture/state.h"
#include "record/capture/rotate.h"
#include "record/capture/rotate_impl.h"
#include "record/capture/trigger.h"
#include "record/capture/window.h"

#define ROTATE_TICK_MS		20
#define FLIGHT_SEAL_MS		200	/* the ring's time resolution */

static uint64_t rotate__clock(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static atomic_int rotate_sigusr2;

static void rotate__on_sigusr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&rotate_sigusr2, 1);
}

/* FILE.<timestamp>, perf's: local time YYYYmmddHHMMSS and hundredths; a
 * name taken (two files in one hundredth) gets the next hundredth. */
static char *rotate__name(const char *path)
{
	struct timespec ts;
	struct tm tm;
	char stamp[32];
	unsigned long long n;
	struct stat st;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	n = strtoull(stamp, NULL, 10) * 100 + ts.tv_nsec / 10000000;
	for (;;) {
		char *name = xasprintf("%s.%llu", path, n);

		if (lstat(name, &st))
			return name;
		free(name);
		n++;
	}
}

/* ---- the series of files ------------------------------------------------------ */

static void rotate__window_meta(struct rotate *r, struct xpu_writer *fw, uint64_t start,
				uint64_t end);
static uint64_t rotate__lag(struct rotate *r);
static void rotate__pend(struct rotate *r, uint64_t cut, const char *why, bool trig);

static void rotate__lost_now(struct rotate *r, struct lost_counts *lc)
{
	struct record_bpf_lost bl = { 0 };

	memset(lc, 0, sizeof(*lc));
	if (r->b) {
		record_bpf__lost(r->b, &bl);
		lc->v[XPU_LOST_SAMPLES] = bl.samples;
		lc->v[XPU_LOST_CORR] = bl.corr;
		lc->v[XPU_LOST_STACK_READ] = bl.stack_read;
		lc->v[XPU_LOST_OFFCPU] = bl.offcpu;
		lc->v[XPU_LOST_PYTHON] = bl.python;
	}
	if (r->sb)
		lc->v[XPU_LOST_SIDEBAND] = sideband__lost(r->sb);
	if (r->ch)
		lc->v[XPU_LOST_GPU_CHANNEL] = channel__lost(r->ch);
}

/* Opens a new file of the recording that starts with the state, less the
 * processes gone before since (CLOCK_MONOTONIC ns: a second before the
 * file's first data, for events drained late). It is made as -o is
 * (record/output.c: O_EXCL under a hidden name beside want, mode 0600,
 * the sudo user's) and *f says where it is: want, when take and want is
 * free (the current --switch-output file at -o, perf's way; a file there
 * that another recording wrote stays as it is), else the hidden name (a
 * flight window is named when written: flight__write). */
static struct xpu_writer *rotate__open_file(struct rotate *r, const char *want, uint64_t since,
					    bool take, struct rotate_file *f)
{
	struct xpu_writer_opts fo = { .features = atomic_load(&r->features), .zstd_level = 3 };
	struct xpu_writer *fw;
	struct output out;
	char err[512];
	int e;

	if (output__create(&out, want, err, sizeof(err))) {
		warn("%s: the recording goes on without it", err);
		return NULL;
	}
	*f = (struct rotate_file){ .name = out.tmp, .dev = out.dev, .ino = out.ino };
	if (take && !(e = output__move(f->dev, f->ino, f->name, want))) {
		free(f->name);
		f->name = xstrdup(want);
	} else if (take && !r->warned_taken) {
		r->warned_taken = true;
		if (e == -EEXIST)
			warn("%s is not this recording's: left as it is; the current file is written "
			     "as %s until it gets its FILE.<timestamp> name", want, f->name);
		else
			warn("cannot name the current file %s: %s: it is written as %s until it gets "
			     "its FILE.<timestamp> name", want, strerror(-e), f->name);
	}
	fw = xpu_writer__fdopen(out.fd, &fo);
	if (!fw) {
		warn("cannot write %s: %s: the recording goes on without it", f->name,
		     strerror(errno));
		close(out.fd);
		output__remove(f->dev, f->ino, f->name);
		free(f->name);
		f->name = NULL;
		return NULL;
	}
	if (since > 1000000000ull)
		state__expire(r->state, since - 1000000000ull);
	state__emit(r->state, fw);
	/* a flight window: the name it is to get */
	xpu_writer__meta(fw, XPU_META_RECORDING_FILE, take ? f->name : want);
	xpu_writer__flush(fw);
	return fw;
}

/* Names our file f want, or FILE.<timestamp> (want NULL, or a name taken
 * meanwhile: the next one). false: not renamed (said why); f->name is then
 * freed. */
static bool rotate__name_file(struct rotate *r, struct rotate_file *f, const char *want)
{
	for (int tries = 0; tries < 100; tries++) {
		char *name = want && !tries ? xstrdup(want) : rotate__name(r->path);
		int err = output__move(f->dev, f->ino, f->name, name);

		if (!err) {
			free(f->name);
			f->name = name;
			return true;
		}
		free(name);
		if (err == -EEXIST)
			continue;
		if (err == -ESTALE)
			warn("%s is no longer this recording's file (moved or replaced meanwhile): "
			     "not renamed, not removed", f->name);
		else
			warn("cannot rename %s: %s", f->name, strerror(-err));
		break;
	}
	free(f->name);
	f->name = NULL;
	return false;
}

/* The kernel symbols of the kernel frames seen so far (a copy of the IPs:
 * reading /proc/kallsyms takes a while, the tap must not wait for it). */
static void rotate__ksyms(struct rotate *r, struct xpu_writer *fw)
{
	struct u64map copy;
	uint64_t ip, v;

	u64map__init(&copy);
	pthread_mutex_lock(&r->klock);
	for (size_t it = 0; u64map__next(&r->kips, &it, &ip, &v); )
		*u64map__slot(&copy, ip) = 1;
	pthread_mutex_unlock(&r->klock);
	ksyms__write(fw, &copy);
	u64map__exit(&copy);
}

/* The file's own lost counts (what was lost since the last file) and
 * FINISH, its features; closes it. Returns 0 or -errno. */
static int rotate__finish_file(struct rotate *r, struct xpu_writer *fw)
{
	struct lost_counts now;
	struct xpu_writer_stats st;
	struct xpu_finish f = { 0 };
	uint64_t gpu = 0, total = 0;

	rotate__lost_now(r, &now);
	for (int s = 1; s <= XPU_LOST_PYTHON; s++) {
		struct xpu_lost l = { .time = record__now_ns(), .source = s };

		if (now.v[s] < r->lost_base.v[s])
			continue;
		l.count = now.v[s] - r->lost_base.v[s];
		if (!l.count && s != XPU_LOST_SAMPLES)
			continue;
		xpu_writer__add(fw, XPU_REC_LOST, &l, sizeof(l));
		total += l.count;
	}
	r->lost_base = now;
	xpu_writer__stats(fw, &st);
	if (st.dropped) {
		struct xpu_lost l = { .time = record__now_ns(), .source = XPU_LOST_OUTPUT,
				      .count = st.dropped };

		xpu_writer__add(fw, XPU_REC_LOST, &l, sizeof(l));
		total += st.dropped;
	}
	for (int t = 0; t < XPU_REC_MAX; t++)
		if (xpu_rectype__is(t, XPU_RECF_GPU) && t != XPU_REC_GPU_CORR)
			gpu += st.per_type[t];
	f.time = record__now_ns();
	f.nr_samples = st.per_type[XPU_REC_SAMPLE];
	f.nr_corr = st.per_type[XPU_REC_GPU_CORR];
	f.nr_gpu = gpu;
	f.nr_lost = total;
	xpu_writer__add(fw, XPU_REC_FINISH, &f, sizeof(f));
	xpu_writer__set_features(fw, atomic_load(&r->features));
	return xpu_writer__close(fw);
}

/* A file finished: kept in the list; beyond --switch-max-files the oldest
 * is removed, if it is still the file this recording made. With the lock. */
static void rotate__done(struct rotate *r, const struct rotate_file *f)
{
	r->done = xgrow(r->done, &r->cap_done, r->nr_done + 1, sizeof(*r->done));
	r->done[r->nr_done++] = *f;
	r->nr_written++;
	while (r->o.max_files && r->nr_done > (size_t)r->o.max_files) {
		int err = output__remove(r->done[0].dev, r->done[0].ino, r->done[0].name);

		if (err == -ESTALE)
			warn("--switch-max-files: %s is no longer this recording's file: not removed",
			     r->done[0].name);
		else if (err && err != -ENOENT)
			warn("--switch-max-files: cannot remove %s: %s", r->done[0].name,
			     strerror(-err));
		else
			debug(1, "--switch-max-files: removed %s", r->done[0].name);
		free(r->done[0].name);
		memmove(r->done, r->done + 1, --r->nr_done * sizeof(*r->done));
		r->nr_removed++;
	}
}

/* --switch-output: the current file gets its name, the next one starts.
 * last: no next one. With the lock. */
static void rotate__switch_locked(struct rotate *r, bool last)
{
	if (r->fw) {
		int err;

		rotate__window_meta(r, r->fw, r->last_cut,
				    r->stop_mono ? r->stop_mono : record__now_ns());
		err = rotate__finish_file(r, r->fw);

		r->fw = NULL;
		if (err)
			warn("writing %s failed: %s: the file lacks records", r->cur.name,
			     strerror(-err));
		if (rotate__name_file(r, &r->cur, NULL)) {
			debug(1, "--switch-output: %s", r->cur.name);
			rotate__done(r, &r->cur);
		}
		r->cur.name = NULL;
	}
	if (!last)
		r->fw = rotate__open_file(r, r->path, record__now_ns(), true, &r->cur);
	atomic_store(&r->size_full, false);
}

/* --switch-output: a chunk sealed after a cut, held until the switch.
 * With the lock. */
static void rotate__hold(struct rotate *r, const void *chunk, size_t len,
			 const struct xpu_writer_chunk *info)
{
	struct flight_chunk *c;

	r->held = xgrow(r->held, &r->cap_held, r->nr_held + 1, sizeof(*r->held));
	c = &r->held[r->nr_held++];
	memset(c, 0, sizeof(*c));
	c->len = len;
	c->info = *info;
	c->data = xmalloc(len);
	memcpy(c->data, chunk, len);
}

/* The held chunks' records: those of before cut to old, the others to fw
 * (either may be NULL: not written). With the lock. */
static int rotate__split_held(struct rotate *r, struct xpu_writer *old, struct xpu_writer *fw,
			      uint64_t cut)
{
	int err = 0;

	for (size_t i = 0; i < r->nr_held; i++) {
		struct flight_chunk *c = &r->held[i];

		if (old)
			err = window__take(old, c->data, c->len, &c->info, 0, cut, true, NULL) ?: err;
		if (fw)
			err = window__take(fw, c->data, c->len, &c->info, cut, WINDOW_END_OPEN,
					   false, NULL) ?: err;
		free(c->data);
	}
	r->nr_held = 0;
	r->holding = false;
	return err;
}

/* --switch-output: the cut at time cut (now), whose file is finished once
 * the records of before it came (rotate__switch). */
static void rotate__cut(struct rotate *r, uint64_t cut)
{
	pthread_mutex_lock(&r->lock);
	r->holding = true;
	pthread_mutex_unlock(&r->lock);
	rotate__pend(r, cut, "switch", false);
	atomic_store(&r->size_full, false);
}

/* --switch-output: a switch. Under the lock the current file is renamed
 * to its FILE.<timestamp> name and the next one opened in its place, and
 * the chunks held since the cut are split between them by their records'
 * times; the sink (the writer's thread) then writes its chunks to the new
 * one. Then, without the lock, the old one gets the kernel symbols
 * (/proc/kallsyms: ~0.1 s, the sink must not wait for them) of every
 * kernel IP noted so far, which are those of all its records (the tap
 * notes a record's IPs before its chunk reaches a file), its window, lost
 * counts and FINISH. Reading the symbols before the switch left the
 * chunks the sink wrote in between with kernel IPs no KSYM named (a
 * fresh-clone make check: "1 of 4 kernel addresses stayed unnamed" in a
 * rotated file). flush: the recorder's writer is open (the records of
 * before now go to the held chunks first).
 */
static void rotate__switch(struct rotate *r, uint64_t cut, bool flush)
{
	struct xpu_writer *old;
	struct rotate_file done = { 0 };
	uint64_t start = r->last_cut;
	bool named = false;
	int err;

	if (flush)
		xpu_writer__flush(r->w);	/* everything so far */
	pthread_mutex_lock(&r->lock);
	old = r->fw;
	if (old) {
		done = r->cur;
		r->cur.name = NULL;
		named = rotate__name_file(r, &done, NULL);	/* else it is left where it is */
	}
	r->fw = rotate__open_file(r, r->path, cut, true, &r->cur);
	err = rotate__split_held(r, old, r->fw, cut);
	r->last_cut = cut;
	pthread_mutex_unlock(&r->lock);
	if (err)
		warn("--switch-output: records around a switch could not be written: %s",
		     strerror(-err));
	if (!old)
		return;
	rotate__ksyms(r, old);
	rotate__window_meta(r, old, start, cut);
	err = rotate__finish_file(r, old);
	if (err)
		warn("writing %s failed: %s: the file lacks records", named ? done.name : r->path,
		     strerror(-err));
	if (!named)
		return;
	debug(1, "--switch-output: %s", done.name);
	pthread_mutex_lock(&r->lock);
	rotate__done(r, &done);
	pthread_mutex_unlock(&r->lock);
}

/* ---- the flight recorder's ring ------------------------------------------------ */

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

/* How long a cut waits for its records: a GPU flush period's lag once a
 * CUDA process connected, the rings' drain otherwise. */
static uint64_t rotate__lag(struct rotate *r)
{
	return r->ch && channel__accepted(r->ch) ? ROTATE_LAG_GPU_NS : ROTATE_LAG_CPU_NS;
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

static void flight__push(struct rotate *r, const void *chunk, size_t len,
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

/* The file's window, as its META says it (window.h). */
static void rotate__window_meta(struct rotate *r, struct xpu_writer *fw, uint64_t start,
				uint64_t end)
{
	struct window_span ws = {
		.start = start, .end = end, .rec_start = r->start_mono,
		.cuda = r->ch && channel__accepted(r->ch),
		.gpu_newest = atomic_load(&r->gpu_newest),
		.flush_ns = ROTATE_GPU_FLUSH_MS * 1000000ull,
	};

	/* the newest GPU record before the end, or at it: newer ones came */
	if (ws.gpu_newest > end)
		ws.gpu_newest = end;
	window__meta(fw, &ws);
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
static void flight__write(struct rotate *r, const char *why, uint64_t cut, bool flush)
{
	char *name = rotate__name(r->path);
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
	fw = rotate__open_file(r, name, ws, false, &f);
	if (!fw) {
		free(name);
		return;
	}
	xpu_writer__meta(fw, XPU_META_RECORDING_WINDOW, why);
	rotate__ksyms(r, fw);
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
	rotate__window_meta(r, fw, ws, end);
	err = rotate__finish_file(r, fw) ?: err;
	if (err)
		warn("writing %s failed: %s: the window lacks records", f.name, strerror(-err));
	debug(1, "flight recorder: %s: %llu records of [%llu, %llu)", name,
	      (unsigned long long)taken, (unsigned long long)ws, (unsigned long long)end);
	/* the window takes its name once whole */
	if (rotate__name_file(r, &f, name)) {
		if (!xpu_quiet)
			fprintf(stderr, "xpu-record: flight recorder: %s: %.1f s written to %s\n",
				why, (end - ws) / 1e9, f.name);
		rotate__done(r, &f);
	}
	pthread_mutex_unlock(&r->lock);
	free(name);
}

/* ---- the writer's tap and sink ---------------------------------------------------- */

static bool rotate__is_state(uint16_t type)
{
	switch (type) {
	case XPU_REC_META: case XPU_REC_COMM: case XPU_REC_FORK: case XPU_REC_EXIT:
	case XPU_REC_MMAP: case XPU_REC_KSYM: case XPU_REC_PERF_MAP: case XPU_REC_STRING:
	case XPU_REC_PY_CODE: case XPU_REC_PROC_ENV: case XPU_REC_GPU_DEVICE:
	case XPU_REC_GPU_GRAPH_NODE:
		return true;
	}
	return false;
}

/* The kernel IPs of a SAMPLE or OFFCPU record (they follow the fixed part,
 * as record/kernel/bpf.c notes them for the end's KSYM). */
static void rotate__note_kips(struct rotate *r, uint16_t type, const struct iovec *iov)
{
	size_t fixed = type == XPU_REC_SAMPLE ? sizeof(struct xpu_sample) :
		       type == XPU_REC_OFFCPU ? sizeof(struct xpu_offcpu) : 0;
	struct xpu_stack st;

	if (!fixed || iov->iov_len < fixed)
		return;
	memcpy(&st, (const char *)iov->iov_base + fixed - sizeof(st), sizeof(st));
	if (!st.nr_kernel_ips || st.nr_kernel_ips > (iov->iov_len - fixed) / 8)
		return;
	pthread_mutex_lock(&r->klock);
	ksyms__note(&r->kips, (const uint64_t *)((const char *)iov->iov_base + fixed),
		    st.nr_kernel_ips);
	pthread_mutex_unlock(&r->klock);
}

static bool rotate__tap(void *ctx, uint16_t type, uint16_t flags, const struct iovec *iov, int n)
{
	struct rotate *r = ctx;
	uint64_t t;

	if (n < 1 || !iov[0].iov_len)
		return false;
	if (r->act_mono && !rotate__is_state(type) && xpu_rectype__is(type, XPU_RECF_TIME) &&
	    iov[0].iov_len >= sizeof(t)) {
		memcpy(&t, iov[0].iov_base, sizeof(t));
		if (t < r->act_mono)
			return true;	/* before --activate */
	}
	if (rotate_opts__files(&r->o)) {
		/* the whole recording's counts, written at the end: each file
		 * has its own (rotate__finish_file) */
		if (type == XPU_REC_FINISH)
			return true;
		if (type == XPU_REC_LOST && n == 1 && iov[0].iov_len >= sizeof(struct xpu_lost)) {
			const struct xpu_lost *l = iov[0].iov_base;

			if (!l->pid && l->source != XPU_LOST_CUPTI && l->source != XPU_LOST_NVTX)
				return true;
		}
		state__note(r->state, type, flags, iov, n);
		if (n == 1)
			rotate__note_kips(r, type, &iov[0]);
		if (type >= XPU_REC_GPU_KERNEL && type <= XPU_REC_GPU_API &&
		    iov[0].iov_len >= sizeof(t)) {
			uint64_t seen = atomic_load(&r->gpu_newest);

			memcpy(&t, iov[0].iov_base, sizeof(t));
			while (t > seen && !atomic_compare_exchange_weak(&r->gpu_newest, &seen, t))
				;
		}
	}
	if (!r->o.nr_triggers || n != 1)
		return false;
	trigger__tap(&r->trig, type, &iov[0]);
	return false;
}

static int rotate__sink(void *ctx, const void *chunk, size_t len, const struct xpu_writer_chunk *info)
{
	struct rotate *r = ctx;
	int err = 0;

	if (r->w)
		atomic_store(&r->features, xpu_writer__features(r->w));
	pthread_mutex_lock(&r->lock);
	r->chunks_in++;
	if (r->o.flight_secs) {
		flight__push(r, chunk, len, info);
	} else if (r->holding) {
		rotate__hold(r, chunk, len, info);
	} else if (r->fw || (!r->ended &&
			     (r->fw = rotate__open_file(r, r->path, 0, true, &r->cur)))) {
		struct xpu_writer_stats st;

		err = xpu_writer__append_chunk(r->fw, chunk, len, info);
		if (r->o.switch_mode == ROTATE_SWITCH_SIZE) {
			xpu_writer__stats(r->fw, &st);
			if (st.file_bytes >= r->o.switch_bytes)
				atomic_store(&r->size_full, true);
		}
	} else {
		err = -EIO;	/* no file could be opened: counted as dropped */
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* ---- the thread ---------------------------------------------------------------- */

/* A window (or switch) cut at cut, done once its late records came. */
static void rotate__pend(struct rotate *r, uint64_t cut, const char *why, bool trig)
{
	r->pend.on = true;
	r->pend.cut = cut;
	r->pend.due = cut + rotate__lag(r);
	r->pend_trig = trig;
	snprintf(r->pend.why, sizeof(r->pend.why), "%s", why);
}

static void *rotate__thread(void *arg)
{
	struct rotate *r = arg;
	int seen_usr2 = atomic_load(&rotate_sigusr2);
	uint64_t next_switch = record__now_ns() + (uint64_t)(r->o.switch_secs * 1e9);
	uint64_t next_seal = record__now_ns() + FLIGHT_SEAL_MS * 1000000ull;

	while (!atomic_load(&r->stop)) {
		struct timespec ts = { 0, ROTATE_TICK_MS * 1000000L };
		uint64_t now;
		int usr2;

		nanosleep(&ts, NULL);
		now = record__now_ns();
		usr2 = atomic_load(&rotate_sigusr2);
		if (r->o.switch_mode) {
			bool go = false;

			if (usr2 != seen_usr2 && r->o.switch_mode == ROTATE_SWITCH_SIGNAL)
				go = true;
			if (r->o.switch_mode == ROTATE_SWITCH_TIME && now >= next_switch) {
				go = true;
				next_switch += (uint64_t)(r->o.switch_secs * 1e9);
				if (next_switch <= now)	/* a slow switch: no catching up */
					next_switch = now + (uint64_t)(r->o.switch_secs * 1e9);
			}
			if (atomic_load(&r->size_full) && !r->pend.on)
				go = true;
			if (go && !r->pend.on)
				rotate__cut(r, now);
			else if (go)
				r->again = now;
			if (r->pend.on && now >= r->pend.due) {
				rotate__switch(r, r->pend.cut, true);
				r->pend.on = false;
				if (r->again)	/* asked while this one waited: cut now */
					rotate__cut(r, now);
				r->again = 0;
			}
		}
		if (r->o.flight_secs) {
			char why[sizeof(r->pend.why)];
			uint64_t due;

			if (now >= next_seal) {
				xpu_writer__handoff(r->w);	/* the ring's resolution */
				next_seal = now + FLIGHT_SEAL_MS * 1000000ull;
			}
			if (usr2 != seen_usr2 && !r->pend.on)
				rotate__pend(r, now, "SIGUSR2", false);
			else if (usr2 != seen_usr2 && !r->again)
				r->again = now;
			if (!r->pend.on && (due = trigger__due(&r->trig, now, why, sizeof(why))))
				rotate__pend(r, due, why, true);
			if (r->pend.on && now >= r->pend.due) {
				flight__write(r, r->pend.why, r->pend.cut, true);
				r->pend.on = false;
				if (r->pend_trig)
					trigger__clear(&r->trig);
				if (r->again)	/* a SIGUSR2 while it waited: its window */
					rotate__pend(r, r->again, "SIGUSR2", false);
				r->again = 0;
			}
		}
		seen_usr2 = usr2;
	}
	return NULL;
}

struct rotate *rotate__new(const struct rotate_opts *ro, const char *path,
			   struct xpu_writer_opts *wo)
{
	struct rotate *r = xcalloc(1, sizeof(*r));

	r->o = *ro;
	r->path = path;
	r->state = state__new();
	pthread_mutex_init(&r->lock, NULL);
	trigger__init(&r->trig, &r->o);
	pthread_mutex_init(&r->klock, NULL);
	u64map__init(&r->kips);
	atomic_store(&r->features, wo->features);
	if (ro->activate) {
		uint64_t rt = rotate__clock(CLOCK_REALTIME), mono = rotate__clock(CLOCK_MONOTONIC);

		r->act_mono = ro->activate_ns > rt ? mono + (ro->activate_ns - rt) : mono;
	}
	wo->tap = rotate__tap;
	wo->tap_ctx = r;
	if (rotate_opts__files(ro)) {
		wo->sink = rotate__sink;
		wo->sink_ctx = r;
		/* background compression: the writer's thread hands chunks
		 * over; the switch waits for it (xpu_writer__flush) */
	}
	return r;
}

int rotate__start(struct rotate *r, struct xpu_writer *w, struct record_bpf *b,
		  struct sideband *sb, struct channel *ch)
{
	struct sigaction sa = { .sa_handler = rotate__on_sigusr2 };
	char id[40];
	int err;

	r->w = w;
	r->b = b;
	r->sb = sb;
	r->ch = ch;
	r->start_mono = r->last_cut = record__now_ns();
	/* the files of one recording share its processes: xpu-report -i DIR
	 * merges them as one (report/session/session.c) */
	snprintf(id, sizeof(id), "%d-%llu", (int)getpid(),
		 (unsigned long long)rotate__clock(CLOCK_REALTIME));
	xpu_writer__meta(w, XPU_META_RECORDING_ID, id);
	if (!rotate_opts__files(&r->o))
		return 0;
	if (r->o.switch_mode) {
		pthread_mutex_lock(&r->lock);
		if (!r->fw)
			r->fw = rotate__open_file(r, r->path, 0, true, &r->cur);
		pthread_mutex_unlock(&r->lock);
		if (!r->fw)
			return -EIO;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (r->o.switch_mode == ROTATE_SWITCH_SIGNAL || r->o.flight_secs)
		sigaction(SIGUSR2, &sa, NULL);
	err = pthread_create(&r->thread, NULL, rotate__thread, r);
	if (err)
		return -err;
	r->started = true;
	return 0;
}

void rotate__stop(struct rotate *r)
{
	if (!r || !r->started)
		return;
	r->stop_mono = record__now_ns();	/* the end of the last window */
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	r->started = false;
}

int rotate__end(struct rotate *r, bool quiet)
{
	size_t recs, bytes;

	if (!r || r->ended)
		return 0;
	rotate__stop(r);
	r->ended = true;
	if (!rotate_opts__files(&r->o) || !r->w)
		return 0;
	/* the recorder's writer is closed: no sink call any more */
	if (r->o.switch_mode) {
		if (r->pend.on)		/* a switch that waited for these records */
			rotate__switch(r, r->pend.cut, false);
		r->pend.on = false;
		if (r->fw)
			rotate__ksyms(r, r->fw);
		pthread_mutex_lock(&r->lock);
		rotate__switch_locked(r, true);
		pthread_mutex_unlock(&r->lock);
	} else {
		if (r->pend.on)		/* a window that waited for these records */
			flight__write(r, r->pend.why, r->pend.cut, false);
		r->pend.on = false;
		flight__write(r, "end of the recording", WINDOW_END_OPEN, false);
	}
	state__size(r->state, &recs, &bytes);
	debug(1, "bounded capture: state of %zu records, %.1f KB; %llu chunks in; flight ring peak "
	      "%.1f KB (%llu chunks dropped for its byte limit); triggers fired %llu (%llu more "
	      "inside a window already due)", recs, bytes / 1024.0,
	      (unsigned long long)r->chunks_in, r->ring_peak / 1024.0,
	      (unsigned long long)r->ring_dropped, (unsigned long long)r->trig.nr_fired,
	      (unsigned long long)r->trig.nr_merged);
	if (!quiet)
		fprintf(stderr, "xpu-record: %zu file%s written%s (%zu kept%s), the last %s\n",
			r->nr_written, r->nr_written == 1 ? "" : "s",
			r->o.flight_secs ? " by the flight recorder" : "", r->nr_done,
			r->nr_removed ? " by --switch-max-files" : "",
			r->nr_done ? r->done[r->nr_done - 1].name : "none");
	return 0;
}

void rotate__free(struct rotate *r)
{
	if (!r)
		return;
	rotate__stop(r);
	if (r->fw)
		xpu_writer__close(r->fw);
	while (r->ring_nr)
		flight__drop_oldest(r);
	free(r->ring);
	for (size_t i = 0; i < r->nr_held; i++)
		free(r->held[i].data);
	free(r->held);
	for (size_t i = 0; i < r->nr_done; i++)
		free(r->done[i].name);
	free(r->done);
	free(r->cur.name);
	state__free(r->state);
	pthread_mutex_destroy(&r->lock);
	trigger__exit(&r->trig);
	pthread_mutex_destroy(&r->klock);
	u64map__exit(&r->kips);
	free(r);
}
