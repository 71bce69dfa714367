// SPDX-License-Identifier: MIT
/*
 * --speedscope: the profile of the view in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json), which speedscope and
 * its embedders open: one sampled profile per thread for CPU-side weight
 * (on-CPU samples, off-CPU time, GPU idle and sync waits charged to it) and
 * one "GPU" profile per process for GPU work, stacks root first, weights in
 * nanoseconds (a sample counts one sampling period). Frames are shared;
 * names are the folded names (kernel frames end in _[k]).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

static void json__str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

struct ss_ent {
	uint64_t key;			/* profile: pid << 32 | tid, GPU: 1 << 63 | pid */
	uint32_t e;			/* entry index */
};

static int ss_ent__cmp(const void *a, const void *b)
{
	const struct ss_ent *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->e > y->e) - (x->e < y->e);
}

#define SS_GPU (1ULL << 63)

int output__speedscope(const struct session *s, FILE *fp, enum profile_view view)
{
	const struct profile *p = &s->profile;
	struct ss_ent *ents = xcalloc(p->nr_entries + 1, sizeof(*ents));
	double ns_per_sample = 1e9 / s->sample_freq;
	const char *cmd = session__meta(s, XPU_META_CMDLINE);
	size_t n = 0, nr_profiles = 0;
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

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":",
	      fp);
	json__str(fp, "xpu-report " XPU_VERSION);
	fputs(",\"name\":", fp);
	json__str(fp, cmd ? cmd : s->path);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", fp);
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
		size_t j;
		double total = 0;

		for (j = i; j < n && ents[j].key == ents[i].key; j++)
			total += p->entries[ents[j].e].weight * ns_per_sample;
		if (ents[i].key & SS_GPU)
			snprintf(name, sizeof(name), "GPU work of %s (pid %u)",
				 profile__str(p, first->comm), session__pid(s, first->pid));
		else
			snprintf(name, sizeof(name), "%s (pid %u, tid %u)",
				 profile__str(p, first->comm), session__pid(s, first->pid),
				 session__pid(s, first->tid));
		fputs(nr_profiles++ ? ",{\"type\":\"sampled\",\"name\":" :
		      "{\"type\":\"sampled\",\"name\":", fp);
		json__str(fp, name);
		fprintf(fp, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%.0f,\"samples\":[",
			total);
		for (size_t k = i; k < j; k++) {
			size_t nf;
			const uint32_t *fr = profile__stack(p, p->entries[ents[k].e].stack, &nf);

			fputs(k > i ? ",[" : "[", fp);
			for (size_t m = 0; m < nf; m++)
				fprintf(fp, m ? ",%u" : "%u", fr[m]);
			fputc(']', fp);
		}
		fputs("],\"weights\":[", fp);
		for (size_t k = i; k < j; k++)
			fprintf(fp, k > i ? ",%.0f" : "%.0f",
				p->entries[ents[k].e].weight * ns_per_sample);
		fputs("]}", fp);
		i = j;
	}
	fputs("]}\n", fp);
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
	.run = speedscope__run,
};
