// SPDX-License-Identifier: MIT
/*
 * --pprof: the profile of the view as gzip'd profile.proto (github.com/google/
 * pprof), what `go tool pprof`, Pyroscope and Parca read; encoded with
 * libprotobuf-c from the schema Debian ships (golang-github-google-pprof-dev),
 * compiled by protoc-c at build time.
 *
 *  sample types   samples/count (the default), then one KIND/nanoseconds type
 *                 per kind of weight present in the view: cpu, gpu_time (the
 *                 name Parca uses), off_cpu, gpu_idle, sync_wait; a sample
 *                 holds its entry's weight in samples (rounded) and in ns in
 *                 its own kind's column, 0 in the others
 *  locations      one per profile frame (frames are functions: xpu-report has
 *                 folded instructions into functions already); address: the
 *                 symbol's start in its module, 0 when unknown; unsymbolized
 *                 frames keep their "module+0xOFFSET" name
 *  mappings       one per module name
 *  labels         pid, tid (numbers), comm, origin (cpu, gpu, off-cpu, ...)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/output/output.h"

#ifdef HAVE_PROTOBUF_C
#include <zlib.h>
#include "common/hashmap.h"
#include "common/xalloc.h"
#include "profile.pb-c.h"

struct pprof {
	char **strs;
	size_t nr_strs, strs_cap;
	struct bmap str_idx;		/* string -> index + 1 */
};

static int64_t pprof__str(struct pprof *pp, const char *s)
{
	size_t len = strlen(s);
	bool found;
	void **slot = bmap__slot(&pp->str_idx, s, len, &found);

	if (found)
		return (int64_t)(uintptr_t)*slot - 1;
	pp->strs = xgrow(pp->strs, &pp->strs_cap, pp->nr_strs + 1, sizeof(*pp->strs));
	pp->strs[pp->nr_strs] = xstrdup(s);
	*slot = (void *)(uintptr_t)(pp->nr_strs + 1);
	return (int64_t)pp->nr_strs++;
}

static const struct { unsigned origin; const char *type, *label; } pprof__kinds[] = {
	{ ORIGIN_CPU, "cpu", "cpu" },
	{ ORIGIN_GPU, "gpu_time", "gpu" },
	{ ORIGIN_OFFCPU, "off_cpu", "off-cpu" },
	{ ORIGIN_GPU_IDLE, "gpu_idle", "gpu-idle" },
	{ ORIGIN_SYNC_WAIT, "sync_wait", "sync-wait" },
};
#define PPROF_NR_KINDS (sizeof(pprof__kinds) / sizeof(pprof__kinds[0]))

/* gzip of buf into fp (pprof files are gzip'd). */
static int pprof__gzip(const uint8_t *buf, size_t len, FILE *fp)
{
	z_stream z = { 0 };
	uint8_t out[65536];
	int ret;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		if (fwrite(out, 1, sizeof(out) - z.avail_out, fp) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int output__pprof(const struct session *s, FILE *fp, enum profile_view view)
{
	const struct profile *p = &s->profile;
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType *vt, **vtp;
	Perftools__Profiles__Function *fn, **fnp;
	Perftools__Profiles__Location *loc, **locp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Mapping **mapp = NULL;
	Perftools__Profiles__Sample *smp, **smpp;
	Perftools__Profiles__Label *lab, **labp;
	struct pprof pp = { 0 };
	struct bmap mod_idx;
	size_t nr_maps = 0, maps_cap = 0, nr_smp = 0, col[PPROF_NR_KINDS], nr_cols = 1;
	uint64_t *locs, *map_of;
	int64_t *vals;
	uint8_t *buf;
	size_t len;
	int err;

	bmap__init(&pp.str_idx);
	bmap__init(&mod_idx);
	pprof__str(&pp, "");

	/* sample types: samples/count, then the kinds present in the view */
	vt = xcalloc(PPROF_NR_KINDS + 1, sizeof(*vt));
	vtp = xcalloc(PPROF_NR_KINDS + 1, sizeof(*vtp));
	perftools__profiles__value_type__init(&vt[0]);
	vt[0].type = pprof__str(&pp, "samples");
	vt[0].unit = pprof__str(&pp, "count");
	vtp[0] = &vt[0];
	for (size_t k = 0; k < PPROF_NR_KINDS; k++) {
		col[k] = 0;
		if (!(view & pprof__kinds[k].origin) || !(p->total[pprof__kinds[k].origin] > 0))
			continue;
		perftools__profiles__value_type__init(&vt[nr_cols]);
		vt[nr_cols].type = pprof__str(&pp, pprof__kinds[k].type);
		vt[nr_cols].unit = pprof__str(&pp, "nanoseconds");
		vtp[nr_cols] = &vt[nr_cols];
		col[k] = nr_cols++;
	}
	pr.sample_type = vtp;
	pr.n_sample_type = nr_cols;
	pr.default_sample_type = vt[0].type;

	/* functions, locations and mappings: one per frame / module */
	fn = xcalloc(p->nr_frames + 1, sizeof(*fn));
	fnp = xcalloc(p->nr_frames + 1, sizeof(*fnp));
	loc = xcalloc(p->nr_frames + 1, sizeof(*loc));
	locp = xcalloc(p->nr_frames + 1, sizeof(*locp));
	line = xcalloc(p->nr_frames + 1, sizeof(*line));
	linep = xcalloc(p->nr_frames + 1, sizeof(*linep));
	map_of = xcalloc(p->nr_frames + 1, sizeof(*map_of));
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct frame *f = profile__frame(p, (uint32_t)i);
		char name[4096];
		bool found;
		void **slot;

		folded__frame(f, name, sizeof(name));
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = fn[i].system_name = pprof__str(&pp, name);
		fnp[i] = &fn[i];
		if (f->module[0]) {
			slot = bmap__slot(&mod_idx, f->module, strlen(f->module), &found);
			if (!found) {
				Perftools__Profiles__Mapping *m = xzalloc(sizeof(*m));

				perftools__profiles__mapping__init(m);
				m->id = ++nr_maps;
				m->filename = pprof__str(&pp, f->module);
				m->has_functions = true;
				mapp = xgrow(mapp, &maps_cap, nr_maps, sizeof(*mapp));
				mapp[nr_maps - 1] = m;
				*slot = (void *)(uintptr_t)nr_maps;
			}
			map_of[i] = (uint64_t)(uintptr_t)*slot;
		}
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = i + 1;
		linep[i] = &line[i];
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		loc[i].mapping_id = map_of[i];
		loc[i].address = f->addr;
		loc[i].line = &linep[i];
		loc[i].n_line = 1;
		locp[i] = &loc[i];
	}
	pr.function = fnp;
	pr.n_function = p->nr_frames;
	pr.location = locp;
	pr.n_location = p->nr_frames;
	pr.mapping = mapp;
	pr.n_mapping = nr_maps;

	/* samples: one per entry in the view; location ids leaf first */
	smp = xcalloc(p->nr_entries + 1, sizeof(*smp));
	smpp = xcalloc(p->nr_entries + 1, sizeof(*smpp));
	lab = xcalloc(4 * p->nr_entries + 1, sizeof(*lab));
	labp = xcalloc(4 * p->nr_entries + 1, sizeof(*labp));
	locs = xcalloc(p->nr_stack_frames + 1, sizeof(*locs));
	vals = xcalloc(nr_cols * p->nr_entries + 1, sizeof(*vals));
	{
		size_t nl = 0, nloc = 0;
		int64_t k_pid = pprof__str(&pp, "pid"), k_tid = pprof__str(&pp, "tid");
		int64_t k_comm = pprof__str(&pp, "comm"), k_origin = pprof__str(&pp, "origin");

		for (size_t e = 0; e < p->nr_entries; e++) {
			const struct profile_entry *en = &p->entries[e];
			const uint32_t *fr;
			size_t n, k;

			if (!profile__in_view(en, view) || !(en->weight > 0))
				continue;
			for (k = 0; k < PPROF_NR_KINDS && pprof__kinds[k].origin != en->origin; k++)
				;
			fr = profile__stack(p, en->stack, &n);
			perftools__profiles__sample__init(&smp[nr_smp]);
			smp[nr_smp].location_id = &locs[nloc];
			smp[nr_smp].n_location_id = n;
			for (size_t j = 0; j < n; j++)
				locs[nloc++] = fr[n - 1 - j] + 1;
			smp[nr_smp].value = &vals[nr_smp * nr_cols];
			smp[nr_smp].n_value = nr_cols;
			vals[nr_smp * nr_cols] = (int64_t)(en->weight + 0.5);
			if (k < PPROF_NR_KINDS && col[k])
				vals[nr_smp * nr_cols + col[k]] = (int64_t)(en->weight / s->sample_freq * 1e9 + 0.5);
			smp[nr_smp].label = &labp[nl];
			smp[nr_smp].n_label = 4;
			for (int j = 0; j < 4; j++)
				perftools__profiles__label__init(&lab[nl + j]);
			lab[nl].key = k_pid, lab[nl].num = session__pid(s, en->pid);
			lab[nl + 1].key = k_tid, lab[nl + 1].num = session__pid(s, en->tid);
			lab[nl + 2].key = k_comm, lab[nl + 2].str = pprof__str(&pp, profile__str(p, en->comm));
			lab[nl + 3].key = k_origin;
			lab[nl + 3].str = pprof__str(&pp, k < PPROF_NR_KINDS ? pprof__kinds[k].label : "?");
			for (int j = 0; j < 4; j++)
				labp[nl + j] = &lab[nl + j];
			nl += 4;
			smpp[nr_smp] = &smp[nr_smp];
			nr_smp++;
		}
	}
	pr.sample = smpp;
	pr.n_sample = nr_smp;
	pr.period = 1;
	pr.period_type = &vt[0];
	pr.time_nanos = (int64_t)s->header.realtime_ns;
	if (s->last_time > s->first_time)
		pr.duration_nanos = (int64_t)(s->last_time - s->first_time);
	pr.string_table = pp.strs;
	pr.n_string_table = pp.nr_strs;

	len = perftools__profiles__profile__get_packed_size(&pr);
	buf = xmalloc(len + 1);
	perftools__profiles__profile__pack(&pr, buf);
	err = pprof__gzip(buf, len, fp);

	free(buf);
	free(vals);
	free(locs);
	free(labp);
	free(lab);
	free(smpp);
	free(smp);
	for (size_t i = 0; i < nr_maps; i++)
		free(mapp[i]);
	free(mapp);
	free(map_of);
	free(linep);
	free(line);
	free(locp);
	free(loc);
	free(fnp);
	free(fn);
	free(vtp);
	free(vt);
	for (size_t i = 0; i < pp.nr_strs; i++)
		free(pp.strs[i]);
	free(pp.strs);
	bmap__exit(&pp.str_idx, NULL);
	bmap__exit(&mod_idx, NULL);
	return err ? err : ferror(fp) ? -EIO : 0;
}

static const char *pprof__unavailable(void)
{
	return NULL;
}
#else
static const char *pprof__unavailable(void)
{
	return "--pprof: this xpu-report was built without libprotobuf-c (install "
	       "libprotobuf-c-dev, protobuf-c-compiler and golang-github-google-pprof-dev, "
	       "then make)";
}

int output__pprof(const struct session *s, FILE *fp, enum profile_view view)
{
	return -ENOTSUP;
}
#endif

static int pprof__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__pprof(s, fp, o->view);
}

const struct report_output output_pprof = {
	.name = "pprof",
	.help = "gzip'd profile.proto for go tool pprof, Pyroscope, Parca\n"
		"(xpu-report --pprof > profile.pb.gz)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.unavailable = pprof__unavailable,
	.run = pprof__run,
};
