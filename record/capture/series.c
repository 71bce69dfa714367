// SPDX-License-Identifier: MIT
/*
 * The files of the recording (series.h, Documentation/xpu-record.md
 * "Bounded capture"): each is made as -o is (record/output.c), starts
 * with the recording's state (state.c), gets the kernel symbols of the
 * kernel frames seen so far, its window (window.c), its own lost counts
 * and FINISH, and the name FILE.<timestamp> once whole; beyond
 * --switch-max-files the oldest is removed, if it is still ours.
 *
 * --switch-output: the sink appends each chunk to the current file; a
 * switch cuts at its time, the chunks sealed after the cut are held until
 * the late records of before it came (the lag: rotate.c), then split
 * between the two files by their records' times; the next file starts
 * with the state. The flight recorder's windows (flight.c) are files of
 * the same series.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "format/writer.h"
#include "record/output.h"
#include "record/kernel/bpf.h"
#include "record/kernel/sideband.h"
#include "record/kernel/ksyms.h"
#include "record/gpu/channel.h"
#include "record/clock.h"
#include "record/capture/rotate_impl.h"
#include "record/capture/series.h"
#include "record/capture/state.h"
#include "record/capture/window.h"

char *series__name(const char *path)
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

static void series__lost_now(struct rotate *r, struct lost_counts *lc)
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
		lc->v[XPU_LOST_GPU_BLOCK] = bl.gpu_block;
	}
	if (r->sb)
		lc->v[XPU_LOST_SIDEBAND] = sideband__lost(r->sb);
	if (r->ch)
		lc->v[XPU_LOST_GPU_CHANNEL] = channel__lost(r->ch);
}

struct xpu_writer *series__open_file(struct rotate *r, const char *want, uint64_t since, bool take,
				     struct rotate_file *f)
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

bool series__name_file(struct rotate *r, struct rotate_file *f, const char *want)
{
	for (int tries = 0; tries < 100; tries++) {
		char *name = want && !tries ? xstrdup(want) : series__name(r->path);
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

/* A copy of the IPs: reading /proc/kallsyms takes a while, the tap must
 * not wait for it. */
void series__ksyms(struct rotate *r, struct xpu_writer *fw)
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

void series__window_meta(struct rotate *r, struct xpu_writer *fw, uint64_t start, uint64_t end)
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

int series__finish_file(struct rotate *r, struct xpu_writer *fw)
{
	struct lost_counts now;
	struct xpu_writer_stats st;
	struct xpu_finish f = { 0 };
	uint64_t gpu = 0, total = 0;

	series__lost_now(r, &now);
	/* the library's own (CUPTI, NVTX, PC samples) come as its LOST
	 * records, in the file of their time; these are the recorder's */
	for (int s = 1; s < XPU_LOST_MAX; s++) {
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

void series__done(struct rotate *r, const struct rotate_file *f)
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

/* A chunk sealed after a cut, held until the switch. With the lock. */
static void series__hold(struct rotate *r, const void *chunk, size_t len,
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

int series__start(struct rotate *r)
{
	pthread_mutex_lock(&r->lock);
	if (!r->fw)
		r->fw = series__open_file(r, r->path, 0, true, &r->cur);
	pthread_mutex_unlock(&r->lock);
	return r->fw ? 0 : -EIO;
}

int series__append(struct rotate *r, const void *chunk, size_t len,
		   const struct xpu_writer_chunk *info)
{
	struct xpu_writer_stats st;
	int err;

	if (r->holding) {
		series__hold(r, chunk, len, info);
		return 0;
	}
	if (!r->fw && (r->ended || !(r->fw = series__open_file(r, r->path, 0, true, &r->cur))))
		return -EIO;	/* no file could be opened: counted as dropped */
	err = xpu_writer__append_chunk(r->fw, chunk, len, info);
	if (r->o.switch_mode == ROTATE_SWITCH_SIZE) {
		xpu_writer__stats(r->fw, &st);
		if (st.file_bytes >= r->o.switch_bytes)
			atomic_store(&r->size_full, true);
	}
	return err;
}

/* The held chunks' records: those of before cut to old, the others to fw
 * (either may be NULL: not written). With the lock. */
static int series__split_held(struct rotate *r, struct xpu_writer *old, struct xpu_writer *fw,
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

void series__cut(struct rotate *r)
{
	pthread_mutex_lock(&r->lock);
	r->holding = true;
	pthread_mutex_unlock(&r->lock);
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
void series__switch(struct rotate *r, uint64_t cut, bool flush)
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
		named = series__name_file(r, &done, NULL);	/* else it is left where it is */
	}
	r->fw = series__open_file(r, r->path, cut, true, &r->cur);
	err = series__split_held(r, old, r->fw, cut);
	r->last_cut = cut;
	pthread_mutex_unlock(&r->lock);
	if (err)
		warn("--switch-output: records around a switch could not be written: %s",
		     strerror(-err));
	if (!old)
		return;
	series__ksyms(r, old);
	series__window_meta(r, old, start, cut);
	err = series__finish_file(r, old);
	if (err)
		warn("writing %s failed: %s: the file lacks records", named ? done.name : r->path,
		     strerror(-err));
	if (!named)
		return;
	debug(1, "--switch-output: %s", done.name);
	pthread_mutex_lock(&r->lock);
	series__done(r, &done);
	pthread_mutex_unlock(&r->lock);
}

void series__end(struct rotate *r)
{
	/* its kernel symbols before the lock, as a switch's (series__switch) */
	if (r->fw)
		series__ksyms(r, r->fw);
	pthread_mutex_lock(&r->lock);
	if (r->fw) {
		int err;

		series__window_meta(r, r->fw, r->last_cut,
				    r->stop_mono ? r->stop_mono : record__now_ns());
		err = series__finish_file(r, r->fw);

		r->fw = NULL;
		if (err)
			warn("writing %s failed: %s: the file lacks records", r->cur.name,
			     strerror(-err));
		if (series__name_file(r, &r->cur, NULL)) {
			debug(1, "--switch-output: %s", r->cur.name);
			series__done(r, &r->cur);
		}
		r->cur.name = NULL;
	}
	atomic_store(&r->size_full, false);
	pthread_mutex_unlock(&r->lock);
}

void series__free(struct rotate *r)
{
	if (r->fw)
		xpu_writer__close(r->fw);
	for (size_t i = 0; i < r->nr_held; i++)
		free(r->held[i].data);
	free(r->held);
	for (size_t i = 0; i < r->nr_done; i++)
		free(r->done[i].name);
	free(r->done);
	free(r->cur.name);
}
