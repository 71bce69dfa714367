// SPDX-License-Identifier: MIT
/*
 * --header sections about the job rather than one trace: the inputs of a
 * merged report (host, architecture, version, clock shift of each), and
 * the ranks of the processes (RANK, LOCAL_RANK, WORLD_SIZE and
 * CUDA_VISIBLE_DEVICES from their PROC_ENV records, or their parent's).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/header.h"
#include "report/session/merge.h"

#define HEADER_RANKS_TOOL "header-ranks"
#define HEADER_RANKS_MAX 64		/* rows printed; the rest counted */

int header_job__inputs(const struct session *s, FILE *fp)
{
	if (s->nr_inputs < 2 && !s->nr_skipped)
		return 0;
	if (s->nr_inputs < 2)
		fprintf(fp, "#\n# inputs: 1 file\n");
	else if (s->nr_groups == 1)	/* xpu-record --switch-output, --flight-recorder */
		fprintf(fp, "#\n# inputs: %zu files of one recording (its processes and clock)\n",
			s->nr_inputs);
	else if (s->nr_groups == s->nr_inputs)
		fprintf(fp, "#\n# inputs: %zu recordings merged (times on the clock of the first "
			"to start, by each file's wall-clock time)\n", s->nr_inputs);
	else
		fprintf(fp, "#\n# inputs: %zu recordings merged, in %zu files (times on the clock "
			"of the first to start, by each file's wall-clock time)\n", s->nr_groups,
			s->nr_inputs);
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct session_input *in = &s->inputs[i];

		fprintf(fp, "#   %zu: %s  host %s, %s, xpu-perf %s, format %u.%u, clock %+.3f ms",
			i, in->path, in->hostname ? in->hostname : "?", in->arch ? in->arch : "?",
			in->tool_version ? in->tool_version : "?", in->header.major,
			in->header.minor, (double)in->shift / 1e6);
		if (in->group != i)
			fprintf(fp, ", recording of %zu", in->group);
		fputc('\n', fp);
	}
	if (s->nr_skipped)	/* files of a directory that are no trace */
		fprintf(fp, "#   %zu file%s left out:\n", s->nr_skipped, s->nr_skipped == 1 ? "" : "s");
	for (size_t i = 0; i < s->nr_skipped; i++)
		fprintf(fp, "#     %s: %s\n", s->skipped[i].path,
			session__skipped_why(s->skipped[i].err));
	/* files of one recording that hold the same chunks (the overlapping
	 * flight windows of an older xpu-record): read once */
	if (s->nr_groups < s->nr_inputs)
		fprintf(fp, "#   read before: %" PRIu64 " chunks, %" PRIu64 " records of events (held "
			"by an earlier file of the same recording: skipped)\n", s->dup_chunks,
			s->dup_records);
	return ferror(fp) ? -EIO : 0;
}

struct rank_row {
	uint32_t pid;
	uint32_t input;
	uint32_t rank, local, world;	/* UINT32_MAX: not set */
	char comm[32];
	char devices[64];
};

struct header_ranks {
	struct session_tool tool;
	struct rank_row *rows;
	size_t nr, cap;
};

static int rank_row__cmp(const void *a, const void *b)
{
	const struct rank_row *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* After pass 1: every process with a rank, or with CUDA_VISIBLE_DEVICES. */
static int header_ranks__pass1_done(struct session *s, void *priv)
{
	struct header_ranks *hr = priv;
	uint64_t k, v;

	for (size_t i = 0; s->ranks.nr && u64map__next(&s->machine.procs, &i, &k, &v); ) {
		uint32_t pid = (uint32_t)k;
		const struct proc_env *e = ranks__env(&s->ranks, &s->machine, pid);
		const char *cvd = proc_env__get(e, "CUDA_VISIBLE_DEVICES");
		struct rank_row r = { .pid = pid, .rank = UINT32_MAX, .local = UINT32_MAX,
				      .world = UINT32_MAX };

		if (!e)
			continue;
		session__rank(s, pid, RANK_GLOBAL, &r.rank);
		session__rank(s, pid, RANK_LOCAL, &r.local);
		session__rank(s, pid, RANK_WORLD_SIZE, &r.world);
		if (r.rank == UINT32_MAX && !cvd)
			continue;
		r.input = (uint32_t)(session__input_of(s, pid) - s->inputs);
		snprintf(r.comm, sizeof(r.comm), "%s",
			 profile__str(&s->profile, machine__comm(&s->machine, pid, pid, UINT64_MAX)));
		snprintf(r.devices, sizeof(r.devices), "%s", cvd ? cvd : "");
		hr->rows = xgrow(hr->rows, &hr->cap, hr->nr + 1, sizeof(*hr->rows));
		hr->rows[hr->nr++] = r;
	}
	xpu_qsort(hr->rows, hr->nr, sizeof(*hr->rows), rank_row__cmp);
	return 0;
}

static void header_ranks__delete(void *priv)
{
	struct header_ranks *hr = priv;

	free(hr->rows);
	free(hr);
}

int header_job__ranks_prepare(struct session *s)
{
	struct header_ranks *hr = xzalloc(sizeof(*hr));

	hr->tool = (struct session_tool){ .name = HEADER_RANKS_TOOL,
					  .pass1_done = header_ranks__pass1_done,
					  .exit = header_ranks__delete, .priv = hr };
	session__add_tool(s, &hr->tool);
	return 0;
}

static void rank__str(uint32_t v, char *buf, size_t size)
{
	if (v == UINT32_MAX)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%u", v);
}

int header_job__ranks(const struct session *s, FILE *fp)
{
	const struct header_ranks *hr = session__tool(s, HEADER_RANKS_TOOL);

	if (!hr || !hr->nr)
		return 0;
	fprintf(fp, "#\n# ranks (from each process's environment at exec; see --rank):\n");
	fprintf(fp, "#   %7s %-16s %5s %5s %5s  %-20s%s\n", "pid", "comm", "rank", "local",
		"world", "CUDA_VISIBLE_DEVICES", s->nr_inputs > 1 ? "  input" : "");
	for (size_t i = 0; i < hr->nr && i < HEADER_RANKS_MAX; i++) {
		const struct rank_row *r = &hr->rows[i];
		char rk[16], lo[16], wo[16];

		rank__str(r->rank, rk, sizeof(rk));
		rank__str(r->local, lo, sizeof(lo));
		rank__str(r->world, wo, sizeof(wo));
		fprintf(fp, "#   %7u %-16s %5s %5s %5s  %-*s", s->nr_inputs > 1 ? merge__pid(r->pid) :
			r->pid, r->comm, rk, lo, wo, s->nr_inputs > 1 ? 20 : 0,
			r->devices[0] ? r->devices : "-");
		if (s->nr_inputs > 1)
			fprintf(fp, "  %s", s->inputs[r->input].label ? s->inputs[r->input].label : "?");
		fputc('\n', fp);
	}
	if (hr->nr > HEADER_RANKS_MAX)
		fprintf(fp, "#   ... %zu more processes\n", hr->nr - HEADER_RANKS_MAX);
	return ferror(fp) ? -EIO : 0;
}
