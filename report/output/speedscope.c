// SPDX-License-Identifier: MIT
/*
 * --speedscope: the profile of the view in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json), which speedscope and
 * its embedders open: one sampled profile per thread for CPU-side weight
 * (on-CPU samples, off-CPU time, GPU idle and sync waits charged to it) and
 * one "GPU" profile per process for GPU work, stacks root first, weights in
 * nanoseconds (a sample counts one sampling period). Frames are shared;
 * names are the folded names (kernel frames end in _[k]).
 *
 * A thread's on- and off-CPU weight is its samples and off-CPU intervals in
 * the order they were recorded (the session's CPU events, prepare()
 * subscribes; a run of one stack is one sample of the run's weight), so
 * speedscope's "Time Order" view is the thread's time line; the format has
 * no timestamps, so the gaps between samples (the thread not running, in
 * views without off-CPU time) are not drawn. Weight of other kinds (GPU
 * idle, sync waits) follows, one sample per stack; --gpu-memory's weights
 * are bytes (unit "bytes"), one sample per stack. The file opens on the
 * profile with the most weight (activeProfileIndex). Threads and processes
 * are named by the name they had last (a thread renamed after its first
 * sample by its new name).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "report/output/output.h"

/* A JSON string: UTF-8 as JSON requires (utf8.h: bytes that are not, a
 * thread name cut by the kernel, as \ufffd), control characters escaped. */
static void json__str(FILE *fp, const char *s)
{
	size_t n = strlen(s);
	uint32_t c;

	fputc('"', fp);
	for (size_t i = 0, k; i < n; i += k) {
		k = utf8__next(s + i, n - i, &c);
		if (c == UTF8_BAD)
			fputs("\\ufffd", fp);
		else if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", (int)c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fwrite(s + i, 1, k, fp);
	}
	fputc('"', fp);
}

struct ss_ent {
	uint64_t key;			/* profile: pid << 32 | tid, GPU: 1 << 63 | pid */
	uint32_t e;			/* entry index (runs: run index) */
};

static int ss_ent__cmp(const void *a, const void *b)
{
	const struct ss_ent *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->e > y->e) - (x->e < y->e);
}

#define SS_GPU (1ULL << 63)
#define SS_TOOL "speedscope-order"

/* A run of one thread's CPU events with one stack, in recorded order. */
struct ss_run {
	uint32_t pid, tid, stack;
	uint32_t origin;		/* ORIGIN_CPU or ORIGIN_OFFCPU */
	double weight;
};

struct ss_order {
	struct ss_run *runs;
	size_t nr, cap;
	struct u64map last;		/* tid -> index + 1 of its latest run */
};

static void ss__cpu(struct session *s, const struct cpu_event *ev, void *priv)
{
	struct ss_order *o = priv;
	uint32_t origin = ev->kind == CPU_EVENT_OFFCPU ? ORIGIN_OFFCPU : ORIGIN_CPU;
	uint64_t *slot = u64map__slot(&o->last, (uint64_t)ev->pid << 32 | ev->tid);
	struct ss_run *r = *slot ? &o->runs[*slot - 1] : NULL;

	if (r && r->stack == ev->stack && r->origin == origin) {
		r->weight += ev->weight;
		return;
	}
	o->runs = xgrow(o->runs, &o->cap, o->nr + 1, sizeof(*o->runs));
	o->runs[o->nr++] = (struct ss_run){ ev->pid, ev->tid, ev->stack, origin, ev->weight };
	*slot = o->nr;
}

static void ss__exit(void *priv)
{
	struct ss_order *o = priv;

	free(o->runs);
	u64map__exit(&o->last);
	free(o);
}

static int speedscope__prepare(struct session *s, const struct report_opts *opts)
{
	struct session_tool *t = xzalloc(sizeof(*t));
	struct ss_order *o = xzalloc(sizeof(*o));

	u64map__init(&o->last);
	t->name = SS_TOOL;
	t->exit = ss__exit;
	t->priv = o;
	session__add_tool(s, t);
	session__subscribe_cpu(s, ss__cpu, o);
	return 0;
}

static void ss__sample(FILE *fp, bool *first, const struct profile *p, uint32_t stack)
{
	size_t nf;
	const uint32_t *fr = profile__stack(p, stack, &nf);

	fputs(*first ? "[" : ",[", fp);
	for (size_t m = 0; m < nf; m++)
		fprintf(fp, m ? ",%u" : "%u", fr[m]);
	fputc(']', fp);
	*first = false;
}

int output__speedscope(struct session *s, FILE *fp, enum profile_view view)
{
	const struct profile *p = &s->profile;
	struct ss_ent *ents = xcalloc(p->nr_entries + 1, sizeof(*ents));
	/* --gpu-memory: weights are bytes as they are */
	double ns_per_sample = view == VIEW_GPU_MEM ? 1 : 1e9 / s->sample_freq;
	const char *unit = view == VIEW_GPU_MEM ? "bytes" : "nanoseconds";
	const char *cmd = session__meta(s, XPU_META_CMDLINE);
	struct ss_order *ord = session__tool(s, SS_TOOL);
	struct ss_ent *runs = NULL;
	struct u64map ordered;		/* thread key -> 1: its CPU events are in order */
	size_t n = 0, nr_runs = 0, nr_profiles = 0, best = 0;
	double best_w = -1;
	unsigned in_order = view & (ORIGIN_CPU | ORIGIN_OFFCPU);
	char name[4096];

	for (size_t e = 0; e < p->nr_entries; e++) {
		const struct profile_entry *en = &p->entries[e];

		if (!profile__in_view(en, view) || !(en->weight > 0))
			continue;
		ents[n].key = en->origin == ORIGIN_GPU ? SS_GPU | en->pid :
			      (uint64_t)en->pid << 32 | en->tid;
		ents[n++].e = (uint32_t)e;
	}
	xpu_qsort(ents, n, sizeof(*ents), ss_ent__cmp);

	/* the runs of the view's CPU events, by thread, in recorded order;
	 * a thread whose runs do not sum to its entries' CPU weight (weight
	 * from elsewhere) keeps one sample per entry */
	u64map__init(&ordered);
	if (ord && in_order) {
		runs = xcalloc(ord->nr + 1, sizeof(*runs));
		for (size_t i = 0; i < ord->nr; i++)
			if (ord->runs[i].origin & in_order)
				runs[nr_runs++] = (struct ss_ent){
					(uint64_t)ord->runs[i].pid << 32 | ord->runs[i].tid,
					(uint32_t)i };
		xpu_qsort(runs, nr_runs, sizeof(*runs), ss_ent__cmp);
		for (size_t i = 0, j = 0, k; i < nr_runs; i = k) {
			double rw = 0, ew = 0;

			for (k = i; k < nr_runs && runs[k].key == runs[i].key; k++)
				rw += ord->runs[runs[k].e].weight;
			for (; j < n && ents[j].key < runs[i].key; j++)
				;
			for (; j < n && ents[j].key == runs[i].key; j++)
				if (p->entries[ents[j].e].origin & in_order)
					ew += p->entries[ents[j].e].weight;
			if (fabs(rw - ew) <= 1e-6 * (1 + ew))
				*u64map__slot(&ordered, runs[i].key) = 1;
		}
	}

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":",
	      fp);
	json__str(fp, "xpu-report " XPU_VERSION);
	fputs(",\"name\":", fp);
	json__str(fp, cmd ? cmd : s->path);
	/* the profile with the most weight opens first */
	for (size_t i = 0, j, k = 0; i < n; i = j, k++) {
		double w = 0;

		for (j = i; j < n && ents[j].key == ents[i].key; j++)
			w += p->entries[ents[j].e].weight;
		if (w > best_w) {
			best_w = w;
			best = k;
		}
	}
	fprintf(fp, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[", best);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct frame *f = profile__frame(p, (uint32_t)i);

		folded__frame(f, name, sizeof(name));
		fputs(i ? ",{\"name\":" : "{\"name\":", fp);
		json__str(fp, name);
		if (f->module[0]) {
			fputs(",\"file\":", fp);
			json__str(fp, f->module);
		}
		fputc('}', fp);
	}
	fputs("]},\"profiles\":[", fp);
	for (size_t i = 0; i < n; ) {
		const struct profile_entry *first = &p->entries[ents[i].e];
		bool in_time = !(ents[i].key & SS_GPU) && u64map__find(&ordered, ents[i].key);
		size_t j, r0 = 0, r1 = 0;
		double total = 0;
		bool f = true;
		/* the name it had last (machine__comm at the end) */
		uint32_t comm = machine__comm(&s->machine, first->pid,
					      ents[i].key & SS_GPU ? first->pid : first->tid,
					      UINT64_MAX);

		for (j = i; j < n && ents[j].key == ents[i].key; j++)
			total += p->entries[ents[j].e].weight * ns_per_sample;
		if (in_time) {
			for (; r0 < nr_runs && runs[r0].key < ents[i].key; r0++)
				;
			for (r1 = r0; r1 < nr_runs && runs[r1].key == ents[i].key; r1++)
				;
		}
		if (ents[i].key & SS_GPU)
			snprintf(name, sizeof(name), "GPU work of %s (pid %u)",
				 profile__str(p, comm), session__pid(s, first->pid));
		else
			snprintf(name, sizeof(name), "%s (pid %u, tid %u)",
				 profile__str(p, comm), session__pid(s, first->pid),
				 session__pid(s, first->tid));
		fputs(nr_profiles++ ? ",{\"type\":\"sampled\",\"name\":" :
		      "{\"type\":\"sampled\",\"name\":", fp);
		json__str(fp, name);
		fprintf(fp, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.0f,\"samples\":[",
			unit, total);
		for (size_t k = r0; k < r1; k++)
			ss__sample(fp, &f, p, ord->runs[runs[k].e].stack);
		for (size_t k = i; k < j; k++)
			if (!in_time || !(p->entries[ents[k].e].origin & in_order))
				ss__sample(fp, &f, p, p->entries[ents[k].e].stack);
		fputs("],\"weights\":[", fp);
		f = true;
		for (size_t k = r0; k < r1; k++, f = false)
			fprintf(fp, f ? "%.0f" : ",%.0f", ord->runs[runs[k].e].weight * ns_per_sample);
		for (size_t k = i; k < j; k++)
			if (!in_time || !(p->entries[ents[k].e].origin & in_order)) {
				fprintf(fp, f ? "%.0f" : ",%.0f",
					p->entries[ents[k].e].weight * ns_per_sample);
				f = false;
			}
		fputs("]}", fp);
		i = j;
	}
	fputs("]}\n", fp);
	u64map__exit(&ordered);
	free(runs);
	free(ents);
	return ferror(fp) ? -EIO : 0;
}

static int speedscope__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__speedscope(s, fp, o->view);
}

const struct report_output output_speedscope = {
	.name = "speedscope",
	.help = "speedscope's JSON: a profile per thread, GPU work per process\n"
		"(xpu-report --speedscope profile.speedscope.json)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.takes_file = true,
	.prepare = speedscope__prepare,
	.run = speedscope__run,
};
