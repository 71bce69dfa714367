// SPDX-License-Identifier: MIT
/* --header: what the trace holds and what it lost, as sections (header.h).
 * Damage and lost lines are always printed, also when zero, so "nothing
 * lost" is a stated fact. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_idle.h"
#include "report/gpu/gpu_memory_tool.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/gpu/gpu_stats.h"
#include "report/gpu/gpu_sync_wait.h"
#include "report/output/header.h"
#include "report/output/output.h"

static const struct { uint64_t bit; const char *name; } header__features[] = {
	{ XPU_FEAT_CPU_SAMPLES, "cpu-samples" },
	{ XPU_FEAT_DWARF_STACKS, "dwarf-stacks" },
	{ XPU_FEAT_FP_STACKS, "fp-stacks" },
	{ XPU_FEAT_GPU, "gpu" },
	{ XPU_FEAT_KERNEL_STACKS, "kernel-stacks" },
	{ XPU_FEAT_OFF_CPU, "off-cpu" },
	{ XPU_FEAT_NVTX, "nvtx" },
	{ XPU_FEAT_PYTHON, "python" },
	{ XPU_FEAT_GPU_MEMORY, "gpu-memory" },
};

static int header__file(const struct session *s, FILE *fp)
{
	const struct xpu_file_header *h = &s->header;
	uint64_t known = h->features;
	time_t rt = (time_t)(h->realtime_ns / 1000000000ULL);
	char when[64] = "?";
	struct tm tm;

	if (gmtime_r(&rt, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(fp, "# file: %s\n", s->path);
	fprintf(fp, "# format version: %u.%u\n", h->major, h->minor);
	fprintf(fp, "# recorded: %s\n", when);
	fprintf(fp, "# features:");
	for (size_t i = 0; i < sizeof(header__features) / sizeof(header__features[0]); i++) {
		if (h->features & header__features[i].bit)
			fprintf(fp, " %s", header__features[i].name);
		known &= ~header__features[i].bit;
	}
	if (known)
		fprintf(fp, " unknown(%#" PRIx64 ")", known);
	fprintf(fp, "%s\n", h->features ? "" : " none");
	return ferror(fp) ? -EIO : 0;
}

/* GPU records, the gpu feature, or a CUPTI conflict or error (why none came) */
static bool header__gpu_data(const struct session *s)
{
	if ((s->header.features & XPU_FEAT_GPU) ||
	    session__meta(s, XPU_META_GPU_SUBSCRIBER_CONFLICT) || session__meta(s, XPU_META_GPU_ERROR))
		return true;
	for (int t = 0; t < XPU_REC_MAX; t++)
		if (xpu_rectype__is(t, XPU_RECF_GPU) && s->nr_records[t])
			return true;
	return false;
}

/* How GPU recording was set up: said only where GPU data came (the gpu
 * key itself stays: off, or requested with no CUDA process seen). */
static bool header__gpu_key(const char *key)
{
	return !strcmp(key, XPU_META_NVTX) || !strcmp(key, XPU_META_CUPTI_LIB) ||
	       !strcmp(key, XPU_META_LAUNCH_STACKS) || !strncmp(key, "gpu.", 4) ||
	       !strncmp(key, "cupti.", 6) || !strncmp(key, "cuda.", 5);
}

static int header__meta(const struct session *s, FILE *fp)
{
	bool gpu = header__gpu_data(s);
	char left[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < s->nr_meta && !gpu; i++)
		if (header__gpu_key(s->meta_keys[i]) && len < sizeof(left))
			len += snprintf(left + len, sizeof(left) - len, "%s%s", len ? ", " : "",
					s->meta_keys[i]);
	fprintf(fp, "#\n# metadata:\n");
	for (size_t i = 0; i < s->nr_meta; i++) {
		if (!gpu && header__gpu_key(s->meta_keys[i]))
			continue;
		fprintf(fp, "#   %s: %s\n", s->meta_keys[i], s->meta_vals[i]);
		if (left[0] && !strcmp(s->meta_keys[i], XPU_META_GPU)) {
			fprintf(fp, "#   (no GPU data recorded: %s not shown)\n", left);
			left[0] = 0;	/* once */
		}
	}
	if (left[0])
		fprintf(fp, "#   (no GPU data recorded: %s not shown)\n", left);
	if (!s->nr_meta)
		fprintf(fp, "#   (none)\n");
	return ferror(fp) ? -EIO : 0;
}

/*
 * The span the duration line gives: a rotated or flight-recorder file's
 * window (META window.*: its own, not stretched by an off-CPU block that
 * began before it), the windows of several such files added up (one
 * recording's windows do not overlap); files of bounded capture written
 * before window.* by their records' spans (an off-CPU block counted from
 * its end); else the records' first and last times. *recording: the
 * recording's span up to the (last) window's end, 0 when not known.
 */
static uint64_t header__duration(const struct session *s, uint64_t *recording, size_t *windows)
{
	uint64_t sum = 0, end = 0, start = 0, first = 0, last = 0;
	size_t n = 0;

	*recording = 0;
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct session_input *in = &s->inputs[i];

		if (in->window_end > in->window_start && in->window_start) {
			sum += in->window_end - in->window_start;
			end = in->window_end > end ? in->window_end : end;
			if (in->recording_start && (!start || in->recording_start < start))
				start = in->recording_start;
			n++;
		}
		if (in->first_time && (!first || in->first_time < first))
			first = in->first_time;
		last = in->last_time > last ? in->last_time : last;
	}
	*windows = n;
	if (n && n == s->nr_inputs) {
		*recording = start && end > start ? end - start : 0;
		return sum;
	}
	*windows = 0;
	if (s->nr_inputs && s->inputs[0].recording_id)
		return last > first ? last - first : 0;
	return s->last_time > s->first_time ? s->last_time - s->first_time : 0;
}

static int header__records(const struct session *s, FILE *fp)
{
	uint64_t dur, rec;
	size_t windows;

	const struct xpu_reader_stats *st = xpu_reader__stats(s->reader);

	fprintf(fp, "#\n# records by type:\n");
	for (int t = 0; t < XPU_REC_MAX; t++) {
		if (!s->nr_records[t])
			continue;
		fprintf(fp, "#   %-12s %12" PRIu64, xpu_record__type_name((uint16_t)t),
			s->nr_records[t]);
		if (t == XPU_REC_LOST)	/* records of counts, not losses */
			fprintf(fp, "   (loss counters; events lost: %" PRIu64 ", below)",
				session__lost_total(s));
		fputc('\n', fp);
	}
	fprintf(fp, "#   %-12s %12" PRIu64 "\n", "unknown", st->unknown_records);
	dur = header__duration(s, &rec, &windows);
	if (dur && windows == 1)
		fprintf(fp, "#   duration     %12.3f s   (this file's window)\n", dur / 1e9);
	else if (dur && windows)
		fprintf(fp, "#   duration     %12.3f s   (%zu windows of one recording)\n", dur / 1e9,
			windows);
	else if (dur)
		fprintf(fp, "#   duration     %12.3f s\n", dur / 1e9);
	if (rec)
		fprintf(fp, "#   recording    %12.3f s   (from its start to the window's end)\n",
			rec / 1e9);
	return ferror(fp) ? -EIO : 0;
}

/* window.gpu_lag in words: how far the GPU records lagged the window's end */
static void header__gpu_lag(const char *v, char *buf, size_t size)
{
	unsigned long long lag, flush;

	if (sscanf(v, "lag_ns=%llu flush_ns=%llu", &lag, &flush) == 2)
		snprintf(buf, size, "newest GPU record %.3f s before the window's end, flush period "
			 "%.3f s", lag / 1e9, flush / 1e9);
	else if (!strncmp(v, "none: no CUDA process", 21))
		snprintf(buf, size, "none: no CUDA process had connected by the window's end (no GPU "
			 "records)");
	else if (sscanf(v, "none: no GPU record yet; flush_ns=%llu", &flush) == 1)
		snprintf(buf, size, "none: no GPU record yet (a CUDA process had connected), flush "
			 "period %.3f s", flush / 1e9);
	else
		snprintf(buf, size, "%s", v);
}

/* Rotated and flight-recorder files: each one's window, where it lies in
 * the recording, the GPU side's lag; what -i DIR skipped as read before. */
static int header__window(const struct session *s, FILE *fp)
{
	const char *why = session__meta(s, XPU_META_RECORDING_WINDOW);
	bool any = false;
	char lag[192];

	for (size_t i = 0; i < s->nr_inputs; i++)
		any |= s->inputs[i].window_end != 0;
	if (!any)
		return 0;
	if (s->nr_inputs == 1) {
		const struct session_input *in = &s->inputs[0];
		uint64_t base = in->recording_start ? in->recording_start : in->window_start;

		fprintf(fp, "#\n# window: %s\n", why ? why : "a rotated file");
		fprintf(fp, "#   from %.3f s to %.3f s of the recording\n",
			(double)(int64_t)(in->window_start - base) / 1e9,
			(double)(int64_t)(in->window_end - base) / 1e9);
		if (in->gpu_lag) {
			header__gpu_lag(in->gpu_lag, lag, sizeof(lag));
			fprintf(fp, "#   gpu lag: %s\n", lag);
		}
		return ferror(fp) ? -EIO : 0;
	}
	fprintf(fp, "#\n# windows:\n");
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct session_input *in = &s->inputs[i];
		uint64_t base = in->recording_start ? in->recording_start : in->window_start;

		if (!in->window_end)
			continue;
		fprintf(fp, "#   %zu: %.3f s to %.3f s of its recording", i,
			(double)(int64_t)(in->window_start - base) / 1e9,
			(double)(int64_t)(in->window_end - base) / 1e9);
		if (in->gpu_lag) {
			header__gpu_lag(in->gpu_lag, lag, sizeof(lag));
			fprintf(fp, "; gpu lag: %s", lag);
		}
		fputc('\n', fp);
	}
	return ferror(fp) ? -EIO : 0;
}

static int header__damage(const struct session *s, FILE *fp)
{
	const struct xpu_reader_stats *st = xpu_reader__stats(s->reader);

	fprintf(fp, "#\n# damage:\n");
	fprintf(fp, "#   chunks ok:       %" PRIu64 "\n", st->chunks_ok);
	fprintf(fp, "#   chunks skipped:  %" PRIu64 "\n", st->chunks_bad);
	fprintf(fp, "#   bytes skipped:   %" PRIu64 "\n", st->bytes_skipped);
	fprintf(fp, "#   truncated:       %s\n", st->truncated ? "yes" : "no");
	if (st->first_error[0])
		fprintf(fp, "#   first error:     %s\n", st->first_error);
	fprintf(fp, "#   finished cleanly: %s\n", s->has_finish ? "yes" : "no (no FINISH record)");
	return ferror(fp) ? -EIO : 0;
}

static int header__lost(const struct session *s, FILE *fp)
{
	uint64_t lost_by_src[XPU_LOST_MAX] = { 0 };

	fprintf(fp, "#\n# lost events:\n");
	for (size_t i = 0; i < s->nr_lost; i++)
		lost_by_src[s->lost[i].source < XPU_LOST_MAX ? s->lost[i].source : 0] += s->lost[i].count;
	for (uint32_t src = XPU_LOST_SAMPLES; src < XPU_LOST_MAX; src++)
		fprintf(fp, "#   %-15s %9" PRIu64 "\n", xpu_lost_source__name(src), lost_by_src[src]);
	if (lost_by_src[0])
		fprintf(fp, "#   %-15s %9" PRIu64 "\n", "other", lost_by_src[0]);
	for (size_t i = 0; i < s->nr_lost; i++)
		if (s->lost[i].pid)
			fprintf(fp, "#     pid %u: %s %" PRIu64 "\n", s->lost[i].pid,
				xpu_lost_source__name(s->lost[i].source), s->lost[i].count);
	fprintf(fp, "#   total        %12" PRIu64 "\n", session__lost_total(s));
	return ferror(fp) ? -EIO : 0;
}

static int header__finish(const struct session *s, FILE *fp)
{
	const char *unseen = session__meta(s, XPU_META_CPU_SAMPLES);

	if (s->has_finish)
		fprintf(fp, "#\n# recorder's final counts: samples %" PRIu64 ", correlation %"
			PRIu64 ", gpu %" PRIu64 ", lost %" PRIu64 "\n", s->finish.nr_samples,
			s->finish.nr_corr, s->finish.nr_gpu, s->finish.nr_lost);
	if (unseen)	/* xpu-record expected samples and got none */
		fprintf(fp, "#   WARNING: CPU samples: %s\n", unseen);
	return ferror(fp) ? -EIO : 0;
}

static int header__offcpu(const struct session *s, FILE *fp)
{
	const char *min = session__meta(s, XPU_META_OFF_CPU);

	if (!s->offcpu.records && !(s->header.features & XPU_FEAT_OFF_CPU))
		return 0;
	fprintf(fp, "#\n# off-cpu (%s): %" PRIu64 " records, %.3f s off CPU in all threads\n",
		min ? min : "?", s->offcpu.records, (double)s->offcpu.ns / 1e9);
	fprintf(fp, "#   in system calls     %12.3f s\n", (double)s->offcpu.syscall_ns / 1e9);
	fprintf(fp, "#   preempted           %12.3f s\n", (double)s->offcpu.preempted_ns / 1e9);
	fprintf(fp, "#   short blocks        %12.3f s   (under the threshold: no stack)\n",
		(double)s->offcpu.short_ns / 1e9);
	fprintf(fp, "#   other               %12.3f s   (page faults, ...)\n",
		(double)(s->offcpu.ns - s->offcpu.syscall_ns - s->offcpu.preempted_ns -
			 s->offcpu.short_ns) / 1e9);
	fprintf(fp, "#   leaf-only stacks    %12" PRIu64 "   (blocks outside a system call)\n",
		s->offcpu.leaf_only);
	fprintf(fp, "#   see --off-cpu and --wall\n");
	return ferror(fp) ? -EIO : 0;
}

static const struct header_section header_sections[] = {
	{ "file",		NULL,			header__file },
	{ "inputs",		NULL,			header_job__inputs },	/* merged */
	{ "metadata",		NULL,			header__meta },
	{ "records",		NULL,			header__records },
	{ "window",		NULL,			header__window },
	{ "damage",		NULL,			header__damage },
	{ "lost",		NULL,			header__lost },
	{ "finish",		NULL,			header__finish },
	{ "off-cpu",		NULL,			header__offcpu },
	{ "ranks",		header_job__ranks_prepare, header_job__ranks },
	{ "gpu",		NULL,			gpu__header },	/* join counts, GPU losses, devices */
	{ "gpu-summary",	gpu_stats__attach,	gpu_stats__header },
	{ "gpu-idle",		gpu_idle__header_prepare, gpu_idle__header },
	{ "sync-wait",		gpu_sync_wait__header_prepare, gpu_sync_wait__header },
	{ "gpu-memory",		gpu_memory__header_prepare, gpu_memory__header },
	{ "nvtx",		gpu_nvtx__header_prepare, gpu_nvtx__header },	/* top ranges */
};

int header__prepare(struct session *s)
{
	int err;

	for (size_t i = 0; i < sizeof(header_sections) / sizeof(header_sections[0]); i++)
		if (header_sections[i].prepare && (err = header_sections[i].prepare(s)))
			return err;
	return 0;
}

int header__fprint(const struct session *s, FILE *fp)
{
	for (size_t i = 0; i < sizeof(header_sections) / sizeof(header_sections[0]); i++)
		if (header_sections[i].print(s, fp))
			return -EIO;
	return ferror(fp) ? -EIO : 0;
}

static int header__output_prepare(struct session *s, const struct report_opts *o)
{
	return header__prepare(s);
}

static int header__output_run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return header__fprint(s, fp);
}

const struct report_output output_header = {
	.name = "header",
	.help = "metadata, record counts, damage and lost-event statistics",
	.needs = OUTPUT_NEEDS_HEADER,
	.prepare = header__output_prepare,
	.run = header__output_run,
};
