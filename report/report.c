// SPDX-License-Identifier: MIT
/*
 * report__run(): one output over one trace, the passes it needs, the errors
 * and warnings every output shares (output.h). xpu-report's main() parses
 * options and calls it; tests call it with outputs of their own.
 */
#include <errno.h>
#include <string.h>
#include "common/log.h"
#include "report/util/find_chain.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/gpu/gpu_idle.h"
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

	session__close(s);
	if (damaged)
		die(XPU_EXIT_CORRUPT, "%s is damaged and no samples could be read from what "
		    "remains", input);
	if (!nr_samples && !nr_sample_recs)
		die(XPU_EXIT_NODATA, "%s holds no samples%s: nothing to report (was the "
		    "workload too short? try a higher -F)", input, gpu ? " for this view" : "");
	die(XPU_EXIT_NODATA, "none of the %llu samples in %s match the filters or view",
	    (unsigned long long)nr_samples, input);
}

int report__run(const struct report_output *out, struct report_opts *o, FILE *fp)
{
	struct session s;
	struct gpu_join *gpu;
	int err = 0, code = XPU_EXIT_OK;

	if (o->nr_inputs > 1)
		session__open_many_or_die(&s, o->inputs, o->nr_inputs, "report");
	else
		session__open_or_die(&s, o->input, "report");
	find_chain__install(&s.machine.dsos, o->input, o->symfs);
	s.filter = o->filter;			/* the session owns it now */
	memset(&o->filter, 0, sizeof(o->filter));
	s.callchain.no_kernel = o->no_kernel;
	s.callchain.no_inline = o->no_inline;
	s.callchain.no_srcline = o->no_srcline || !out->lines;
	gpu = gpu_join__attach(&s);		/* the CPU->GPU join */
	if (out->needs == OUTPUT_NEEDS_PROFILE)	/* [nvtx] frames, before any header's attach */
		gpu_nvtx__attach(&s, !o->no_nvtx);
	/* after the join, which hands them its events; --header and the TUI
	 * attach them too (header.c), other outputs only for their view */
	if ((o->view & ORIGIN_GPU_IDLE) || o->idle_from_start)
		gpu_idle__attach(&s, o->idle_from_start);
	if (o->view & ORIGIN_SYNC_WAIT)
		gpu_sync_wait__attach(&s);
	if (out->prepare && out->prepare(&s, o))
		die(XPU_EXIT_FAILURE, "preparing the %s output failed", out->name);
	if (session__pass1(&s))
		die(XPU_EXIT_FAILURE, "reading %s failed", o->input);
	if (s.nr_inputs > 1) {
		char why[1024];

		if (session__check_inputs(&s, why, sizeof(why))) {
			session__close(&s);
			die(XPU_EXIT_MERGE, "%s", why);
		}
	}

	switch (out->needs) {
	case OUTPUT_NEEDS_RECORDS:
		break;
	case OUTPUT_NEEDS_HEADER:
		/* the GPU section reports the join, which runs in pass 2 */
		if (gpu_join__has_activity(gpu) && session__pass2(&s))
			die(XPU_EXIT_FAILURE, "processing %s failed", o->input);
		break;
	case OUTPUT_NEEDS_PROFILE:
		if (session__pass2(&s))
			die(XPU_EXIT_FAILURE, "processing %s failed", o->input);
		session__warn(&s);
		if (profile__total(&s.profile, o->view) <= 0)
			report__die_empty(&s, o->input, o->view);
		break;
	}
	err = out->run(&s, o, fp);
	if (out->needs != OUTPUT_NEEDS_PROFILE) {
		struct xpu_reader_stats st;

		session__reader_stats(&s, &st);
		if (session__damaged(&s))
			session__warn(&s);
		else if (!st.records) {
			session__close(&s);
			die(XPU_EXIT_NODATA, "%s holds no records: nothing to report", o->input);
		}
	}
	if (fflush(fp) || err) {
		session__close(&s);
		die(XPU_EXIT_OUTPUT, "writing the report failed: %s", strerror(errno ? errno : EIO));
	}
	if (session__damaged(&s))
		code = XPU_EXIT_CORRUPT;
	session__close(&s);
	return code;
}
