// SPDX-License-Identifier: MIT
/*
 * report__run(): one output over one trace, the passes it needs, the errors
 * and warnings every output shares (output.h). xpu-report's main() parses
 * options and calls it; tests call it with outputs of their own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "report/finders/find_chain.h"
#include "report/files/out_file.h"
#include "report/phase/phase.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/gpu/gpu_idle.h"
#include "report/gpu/gpu_memory_tool.h"
#include "report/gpu/gpu_sync_wait.h"
#include "report/output/output.h"

/* An empty profile is an error, with the reason. Does not return. */
static void report__die_empty(struct session *s, const char *input, enum profile_view view)
{
	if ((view & ORIGIN_OFFCPU) && !(view & ORIGIN_CPU) && !s->nr_records[XPU_REC_OFFCPU]) {
		session__close(s);
		die(XPU_EXIT_NODATA, "%s holds no off-CPU records: it was recorded with "
		    "--no-off-cpu or by an older xpu-record; record again", input);
	}
	if ((view & (ORIGIN_GPU_IDLE | ORIGIN_SYNC_WAIT)) && !s->nr_records[XPU_REC_GPU_KERNEL] &&
	    !s->nr_records[XPU_REC_GPU_MEMCPY] && !s->nr_records[XPU_REC_GPU_API]) {
		session__close(s);
		die(XPU_EXIT_NODATA, "%s holds no GPU activity, so there is no GPU idle or sync "
		    "time to show (was the program a CUDA program? see --header)", input);
	}
	if (view == VIEW_GPU_MEM) {
		bool any = gpu_memory__active(gpu_memory__find(s));
		bool filtered = !filter__empty(&s->filter);

		session__close(s);
		if (!any)
			die(XPU_EXIT_NODATA, "%s holds no GPU memory records (GPU_MEMORY, GPU_BLOCK): "
			    "record with xpu-record --gpu-memory", input);
		die(XPU_EXIT_NODATA, "no GPU memory in %s is live at that moment%s (see --header)",
		    input, filtered ? " in the filtered selection" : "");
	}
	if (view == VIEW_GPU_IDLE || view == VIEW_SYNC_WAIT) {
		bool filtered = !filter__empty(&s->filter);

		session__close(s);
		if (view == VIEW_GPU_IDLE)
			die(XPU_EXIT_NODATA, "no GPU in %s was idle between its first and last work%s "
			    "(see --header)", input, filtered ? " in the filtered selection" : "");
		die(XPU_EXIT_NODATA, "%s holds no synchronizing CUDA call (cudaStreamSynchronize, "
		    "cudaDeviceSynchronize, cudaEventSynchronize, a synchronous cudaMemcpy, ...)%s",
		    input, filtered ? " that matches the filters" : "");
	}
	bool damaged = session__damaged(s);
	uint64_t nr_samples = s->nr_samples, nr_sample_recs = s->nr_records[XPU_REC_SAMPLE];
	bool gpu = s->nr_records[XPU_REC_GPU_KERNEL] != 0;
	bool unseen = session__meta(s, XPU_META_CPU_SAMPLES) != NULL;	/* warned about */

	session__close(s);
	if (damaged)
		die(XPU_EXIT_CORRUPT, "%s is damaged and no samples could be read from what "
		    "remains", input);
	if (!nr_samples && !nr_sample_recs && unseen)
		die(XPU_EXIT_NODATA, "%s holds no samples%s: xpu-record did not see the command "
		    "run (above); nothing to report", input, gpu ? " for this view" : "");
	if (!nr_samples && !nr_sample_recs)
		die(XPU_EXIT_NODATA, "%s holds no samples%s: nothing to report (was the "
		    "workload too short? try a higher -F)", input, gpu ? " for this view" : "");
	die(XPU_EXIT_NODATA, "none of the %llu samples in %s match the filters or view",
	    (unsigned long long)nr_samples, input);
}

/* -v: the phase table, then the files whose symbol tables took longest. */
static void report__print_phases(const struct session *s, uint64_t t_all)
{
	const struct dsos *d = &s->machine.dsos;
	bool *done = xcalloc(d->nr + 1, sizeof(*done));

	phase__print(stderr, phase__now() - t_all, s->nr_samples);
	for (int k = 0; k < 5; k++) {
		size_t best = d->nr;

		for (size_t i = 0; i < d->nr; i++)
			if (!done[i] && d->list[i]->symtab_ns &&
			    (best == d->nr || d->list[i]->symtab_ns > d->list[best]->symtab_ns))
				best = i;
		if (best == d->nr)
			break;
		done[best] = true;
		fprintf(stderr, "#   symbol table %8.3f s  %zu symbols  %s\n",
			d->list[best]->symtab_ns / 1e9, d->list[best]->symtab.nr,
			d->list[best]->path);
	}
	free(done);
}

/* --max-stack N: the N frames nearest the leaf, as perf keeps them. */
static size_t report__max_stack(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				uint32_t *frames, size_t n, size_t cap, void *priv)
{
	size_t max = *(const unsigned *)priv;

	if (n <= max)
		return n;
	memmove(frames, frames + (n - max), max * sizeof(*frames));
	return max;
}

/* Opens input into s, moves o->filter into it and runs the passes out
 * needs: everything report__run() does before the output. */
static void report__load(struct session *s, const struct report_output *out,
			 struct report_opts *o, const char *input)
{
	struct gpu_join *gpu;
	uint64_t t0 = phase__begin();

	if (o->nr_inputs > 1 && input == o->input) {	/* -i a -i b ...: merged */
		session__open_many_or_die(s, o->inputs, o->nr_inputs, o->inputs_optional,
					  "report");
		input = s->path;	/* the first one read (a bad one is left out) */
	} else {
		session__open_or_die(s, input, "report");
	}
	phase__end(PHASE_OPEN, t0);
	find_chain__install(&s->machine.dsos, input, o->symfs);
	s->filter = o->filter;			/* the session owns it now */
	memset(&o->filter, 0, sizeof(o->filter));
	s->callchain.no_kernel = o->no_kernel;
	s->callchain.no_inline = o->no_inline;
	s->input_frames = o->input_frame;
	s->py.no_lines = o->no_py_lines;
	s->callchain.no_srcline = o->no_srcline || !out->lines;
	s->callchain.unknown_addrs = o->unknown_addrs || out->addresses;
	gpu = gpu_join__attach(s);		/* the CPU->GPU join */
	gpu_join__set_graph_attribution(gpu, o->graph_attr);
	gpu_join__set_autograd(gpu, !o->no_autograd);
	gpu_join__set_pc_sampling(gpu, !o->no_pc_sampling);
	gpu_join__set_cubins_dir(gpu, o->cubins_dir);
	if (out->needs == OUTPUT_NEEDS_PROFILE)	/* [nvtx] frames, before any header's attach */
		gpu_nvtx__attach(s, !o->no_nvtx);
	/* after the join, which hands them its events; --header and the TUI
	 * attach them too (header.c), other outputs only for their view */
	if ((o->view & ORIGIN_GPU_IDLE) || o->idle_from_start)
		gpu_idle__attach(s, o->idle_from_start);
	if (o->view & ORIGIN_SYNC_WAIT)
		gpu_sync_wait__attach(s);
	if (o->view & ORIGIN_GPU_MEM)
		gpu_memory__attach(s, &o->gpu_mem);
	if (o->max_stack)
		session__add_stack_filter(s, report__max_stack, &o->max_stack);
	if (out->prepare && out->prepare(s, o))
		die(XPU_EXIT_FAILURE, "preparing the %s output failed", out->name);
	t0 = phase__begin();
	if (session__pass1(s))
		die(XPU_EXIT_FAILURE, "reading %s failed", input);
	phase__end(PHASE_PASS1, t0);
	if (s->nr_inputs > 1) {
		char why[1024];

		if (session__check_inputs(s, why, sizeof(why))) {
			session__close(s);
			die(XPU_EXIT_MERGE, "%s", why);
		}
	}
	t0 = phase__begin();

	switch (out->needs) {
	case OUTPUT_NEEDS_RECORDS:
		break;
	case OUTPUT_NEEDS_HEADER:
		/* the GPU section reports the join, which runs in pass 2 */
		if ((gpu_join__has_activity(gpu) || gpu_memory__active(gpu_memory__find(s))) &&
		    session__pass2(s))
			die(XPU_EXIT_FAILURE, "processing %s failed", input);
		break;
	case OUTPUT_NEEDS_PROFILE:
		if (session__pass2(s))
			die(XPU_EXIT_FAILURE, "processing %s failed", input);
		session__warn(s);
		if (profile__total(&s->profile, o->view) <= 0)
			report__die_empty(s, input, o->view);
		break;
	}
	phase__end(PHASE_PASS2, t0);	/* with the GPU join: PHASE_FINISH says how much */
}

/* The FILE of an output that takes one (--svg FILE, ...), opened before the
 * passes, which may take minutes, so that a bad FILE fails at once; it
 * appears under its name only once complete (out_file.h). Returns the
 * stream to write: fp for "-" and outputs without a file. */
static FILE *report__open_output(const struct report_output *out, const struct report_opts *o,
				 struct out_file *file, FILE *fp)
{
	char msg[512];

	if (!out->takes_file || !o->output_file || !strcmp(o->output_file, "-"))
		return fp;
	if (out_file__open(file, o->output_file, msg, sizeof(msg)))
		die(XPU_EXIT_OUTPUT, "%s", msg);
	return file->fp;
}

/* After the output: its errors, then the file renamed into place. */
static void report__close_output(struct out_file *file, FILE *fp, int err)
{
	char msg[512];

	if (fflush(fp) || err) {
		if (file->fp)	/* die() removes the partial file */
			die(XPU_EXIT_OUTPUT, "writing %s failed: %s: choose another FILE (or free "
			    "space)", file->path, strerror(errno ? errno : EIO));
		die(XPU_EXIT_OUTPUT, "writing the report failed: %s", strerror(errno ? errno : EIO));
	}
	if (file->fp && out_file__commit(file, msg, sizeof(msg)))
		die(XPU_EXIT_OUTPUT, "%s", msg);
}

int report__run(const struct report_output *out, struct report_opts *o, FILE *fp)
{
	struct session s;
	struct out_file file = { 0 };
	uint64_t t0, t_all;
	int err = 0, code = XPU_EXIT_OK;

	phase__on = xpu_verbose >= 1;
	t_all = phase__begin();
	fp = report__open_output(out, o, &file, fp);
	report__load(&s, out, o, o->input);
	t0 = phase__begin();
	err = out->run(&s, o, fp);
	phase__end(PHASE_OUTPUT, t0);
	if (phase__on)
		report__print_phases(&s, t_all);
	if (out->needs != OUTPUT_NEEDS_PROFILE) {
		struct xpu_reader_stats st;

		session__reader_stats(&s, &st);
		if (session__damaged(&s))
			session__warn(&s);
		else if (!st.records) {
			const char *path = s.path;

			session__close(&s);
			die(XPU_EXIT_NODATA, "%s holds no records: nothing to report", path);
		}
	}
	if (session__damaged(&s))
		code = XPU_EXIT_CORRUPT;
	session__close(&s);
	report__close_output(&file, fp, err);
	return code;
}

int report__diff(struct report_opts *o, FILE *fp)
{
	/* what the diff outputs read: the profile; no source lines */
	static const struct report_output diff_out = {
		.name = "diff", .needs = OUTPUT_NEEDS_PROFILE,
	};
	struct session old, new;
	struct out_file file = { 0 };
	struct filter copy;
	int err, code = XPU_EXIT_OK;

	fp = report__open_output(o->output, o, &file, fp);
	filter__copy(&copy, &o->filter);	/* each session takes one */
	report__load(&old, &diff_out, o, o->diff_old);
	o->filter = copy;
	report__load(&new, &diff_out, o, o->diff_new);
	err = output__diff(&old, &new, o, fp);
	if (session__damaged(&old) || session__damaged(&new))
		code = XPU_EXIT_CORRUPT;
	session__close(&old);
	session__close(&new);
	report__close_output(&file, fp, err);
	return code;
}
