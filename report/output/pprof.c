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
 *  mappings       one per module name; when the trace's mmap records name
 *                 one build-id for it: that build-id (hex), the recorded
 *                 path, and, when the file was found, its executable
 *                 segment (memory_start/limit = p_vaddr, + p_memsz;
 *                 file_offset = p_offset), since location addresses are
 *                 ELF virtual addresses: a server symbolizing by build-id
 *                 gets the file offset as address - memory_start +
 *                 file_offset. Without the file, addresses are file
 *                 offsets (what the report computed) and the mapping
 *                 starts at 0.
 *  labels         pid, tid (numbers), comm, origin (cpu, gpu, off-cpu, ...);
 *                 GPU work also device, stream and graph_id (decimal strings:
 *                 pprof drops numeric labels equal to 0, device 0; stream
 *                 when the work has one, graph_id when replayed from a CUDA
 *                 graph), from the joined events (prepare() subscribes), so
 *                 its samples are split finer than the profile's entries
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/gpu/gpu.h"
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

static int64_t pprof__str(struct pprof *pp, const char *s);

/* GPU work summed per (stack, thread, device, stream, graph): the joined
 * events, since the profile's entries have no device or stream. */
struct pprof_gpu_row {
	uint32_t stack, pid, tid, comm, device, stream, graph_id;
	double weight;			/* samples */
	uint64_t ns;
};

struct pprof_gpu {
	struct pprof_gpu_row *rows;
	size_t nr, cap;
	struct bmap idx;		/* the key fields -> index + 1 */
	bool subscribed;
};

#define PPROF_GPU_TOOL "pprof-gpu"

static void pprof__gpu_event(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct pprof_gpu *g = priv;
	uint32_t key[7] = { ev->stack, ev->pid, ev->tid, ev->comm, ev->device, ev->stream,
			    ev->graph_id };
	bool found;
	void **slot = bmap__slot(&g->idx, key, sizeof(key), &found);
	struct pprof_gpu_row *r;

	if (!found) {
		g->rows = xgrow(g->rows, &g->cap, g->nr + 1, sizeof(*g->rows));
		r = &g->rows[g->nr++];
		*r = (struct pprof_gpu_row){ ev->stack, ev->pid, ev->tid, ev->comm, ev->device,
					     ev->stream, ev->graph_id, 0, 0 };
		*slot = (void *)(uintptr_t)g->nr;
	}
	r = &g->rows[(uintptr_t)*slot - 1];
	r->weight += ev->weight;
	r->ns += ev->end > ev->start ? ev->end - ev->start : 0;
}

static void pprof__gpu_exit(void *priv)
{
	struct pprof_gpu *g = priv;

	bmap__exit(&g->idx, NULL);
	free(g->rows);
	free(g);
}

static int pprof__prepare(struct session *s, const struct report_opts *o)
{
	struct gpu_join *j = gpu_join__find(s);
	struct session_tool *t;
	struct pprof_gpu *g;

	if (!j)
		return 0;
	g = xzalloc(sizeof(*g));
	bmap__init(&g->idx);
	t = xzalloc(sizeof(*t));
	t->name = PPROF_GPU_TOOL;
	t->exit = pprof__gpu_exit;
	t->priv = g;
	session__add_tool(s, t);
	gpu_join__subscribe(j, pprof__gpu_event, g);
	g->subscribed = true;
	return 0;
}

/* The one DSO of the trace with this short name, or NULL when none or
 * several (two libc.so.6 of different build-ids: the mapping stays bare). */
static const struct dso *pprof__dso(const struct session *s, const char *module)
{
	const struct dsos *d = &s->machine.dsos;
	const struct dso *one = NULL;

	for (size_t i = 0; i < d->nr; i++) {
		const struct dso *x = d->list[i];

		if (strcmp(x->short_name, module))
			continue;
		if (one && (one->build_id_size != x->build_id_size ||
			    memcmp(one->build_id, x->build_id, x->build_id_size)))
			return NULL;
		one = x;
	}
	return one;
}

static void pprof__mapping(struct pprof *pp, const struct session *s, const char *module,
			   Perftools__Profiles__Mapping *m)
{
	const struct dso *d = pprof__dso(s, module);
	char hex[2 * XPU_MMAP_BUILD_ID_MAX + 1];

	m->filename = pprof__str(pp, module);
	if (!d)
		return;
	if (d->path[0] == '/')
		m->filename = pprof__str(pp, d->path);
	if (d->build_id_size) {
		for (size_t i = 0; i < d->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", d->build_id[i]);
		m->build_id = pprof__str(pp, hex);
	}
	if (d->status != DSO_OK)
		return;
	for (size_t i = 0; i < d->nr_segs; i++) {
		if (!d->segs[i].exec)
			continue;
		m->memory_start = d->segs[i].vaddr;
		m->memory_limit = d->segs[i].vaddr + d->segs[i].memsz;
		m->file_offset = d->segs[i].offset;
		break;
	}
}

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

#define PPROF_MAX_LABELS 7

static int64_t pprof__num(struct pprof *pp, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return pprof__str(pp, buf);
}

/* Where output__pprof() builds its samples. */
struct pprof_out {
	const struct session *s;
	const struct profile *p;
	struct pprof *pp;
	Perftools__Profiles__Sample *smp, **smpp;
	Perftools__Profiles__Label *lab, **labp;
	const uint64_t *locs;		/* every stack's location ids, leaf first, at its
					 * own offset in the profile's stack_frames */
	int64_t *vals;
	size_t nr_cols;
	const size_t *col;
	size_t nr_smp, nl;
	int64_t k_pid, k_tid, k_comm, k_origin, k_device, k_stream, k_graph;
};

/* One sample: the stack, leaf first; its weight in samples (rounded) and in
 * ns in its kind's column; the labels, with gpu's device, stream, graph. */
static void pprof__sample(struct pprof_out *po, uint32_t stack, uint32_t pid, uint32_t tid,
			  uint32_t comm, unsigned origin, double weight, double ns,
			  const struct pprof_gpu_row *gpu)
{
	Perftools__Profiles__Sample *sm = &po->smp[po->nr_smp];
	Perftools__Profiles__Label *l = &po->lab[po->nl];
	const uint32_t *fr;
	size_t n, k, nl = 0;

	for (k = 0; k < PPROF_NR_KINDS && pprof__kinds[k].origin != origin; k++)
		;
	fr = profile__stack(po->p, stack, &n);
	perftools__profiles__sample__init(sm);
	/* samples of one stack share its array: entries of many threads, or of
	 * on- and off-CPU time, need no room of their own */
	sm->location_id = n ? (uint64_t *)&po->locs[fr - po->p->stack_frames] : NULL;
	sm->n_location_id = n;
	sm->value = &po->vals[po->nr_smp * po->nr_cols];
	sm->n_value = po->nr_cols;
	sm->value[0] = (int64_t)(weight + 0.5);
	if (k < PPROF_NR_KINDS && po->col[k])
		sm->value[po->col[k]] = (int64_t)(ns + 0.5);
	for (int j = 0; j < PPROF_MAX_LABELS; j++)
		perftools__profiles__label__init(&l[j]);
	l[nl].key = po->k_pid, l[nl++].num = session__pid(po->s, pid);	/* merged: the input's own */
	l[nl].key = po->k_tid, l[nl++].num = session__pid(po->s, tid);
	l[nl].key = po->k_comm, l[nl++].str = pprof__str(po->pp, profile__str(po->p, comm));
	l[nl].key = po->k_origin;
	l[nl++].str = pprof__str(po->pp, k < PPROF_NR_KINDS ? pprof__kinds[k].label : "?");
	if (gpu) {	/* strings: pprof drops numeric labels of value 0 (device 0) */
		l[nl].key = po->k_device, l[nl++].str = pprof__num(po->pp, gpu->device);
		if (gpu->stream != ~0u)
			l[nl].key = po->k_stream, l[nl++].str = pprof__num(po->pp, gpu->stream);
		if (gpu->graph_id)
			l[nl].key = po->k_graph, l[nl++].str = pprof__num(po->pp, gpu->graph_id);
	}
	sm->label = &po->labp[po->nl];
	sm->n_label = nl;
	for (size_t j = 0; j < nl; j++)
		po->labp[po->nl + j] = &l[j];
	po->nl += nl;
	po->smpp[po->nr_smp] = sm;
	po->nr_smp++;
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
	struct pprof_gpu *g;
	size_t nr_in;
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
				pprof__mapping(&pp, s, f->module, m);
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

	/* samples: one per entry in the view, GPU entries replaced by the
	 * finer rows of the joined events; location ids leaf first */
	g = session__tool(s, PPROF_GPU_TOOL);
	if (g) {
		double sum = 0;

		for (size_t i = 0; i < g->nr; i++)
			sum += g->rows[i].weight;
		/* the rows must be the profile's GPU weight, split finer; else
		 * (weight from elsewhere) keep the entries, without labels */
		if (fabs(sum - p->total[ORIGIN_GPU]) > 1e-6 * (1 + p->total[ORIGIN_GPU]))
			g = NULL;
	}
	nr_in = p->nr_entries + (g ? g->nr : 0);
	smp = xcalloc(nr_in + 1, sizeof(*smp));
	smpp = xcalloc(nr_in + 1, sizeof(*smpp));
	lab = xcalloc(PPROF_MAX_LABELS * nr_in + 1, sizeof(*lab));
	labp = xcalloc(PPROF_MAX_LABELS * nr_in + 1, sizeof(*labp));
	/* location ids of every interned stack, leaf first, where the stack's
	 * frames are (a location id is its frame id + 1) */
	locs = xcalloc(p->nr_stack_frames + 1, sizeof(*locs));
	for (size_t st = 1; st < p->nr_stacks; st++) {
		size_t n;
		const uint32_t *fr = profile__stack(p, (uint32_t)st, &n);
		uint64_t *out = &locs[fr - p->stack_frames];

		for (size_t j = 0; j < n; j++)
			out[j] = fr[n - 1 - j] + 1;
	}
	vals = xcalloc(nr_cols * nr_in + 1, sizeof(*vals));
	{
		struct pprof_out po = {
			.s = s, .p = p, .pp = &pp, .smp = smp, .smpp = smpp, .lab = lab, .labp = labp,
			.locs = locs, .vals = vals, .nr_cols = nr_cols, .col = col,
			.k_pid = pprof__str(&pp, "pid"), .k_tid = pprof__str(&pp, "tid"),
			.k_comm = pprof__str(&pp, "comm"), .k_origin = pprof__str(&pp, "origin"),
			.k_device = pprof__str(&pp, "device"),
			.k_stream = pprof__str(&pp, "stream"),
			.k_graph = pprof__str(&pp, "graph_id"),
		};

		for (size_t e = 0; e < p->nr_entries; e++) {
			const struct profile_entry *en = &p->entries[e];

			if (!profile__in_view(en, view) || !(en->weight > 0))
				continue;
			if (g && en->origin == ORIGIN_GPU)
				continue;
			pprof__sample(&po, en->stack, en->pid, en->tid, en->comm, en->origin,
				      en->weight, en->weight / s->sample_freq * 1e9, NULL);
		}
		for (size_t i = 0; g && (view & ORIGIN_GPU) && i < g->nr; i++)
			if (g->rows[i].weight > 0)
				pprof__sample(&po, g->rows[i].stack, g->rows[i].pid,
					      g->rows[i].tid, g->rows[i].comm, ORIGIN_GPU,
					      g->rows[i].weight, (double)g->rows[i].ns,
					      &g->rows[i]);
		nr_smp = po.nr_smp;
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

static int pprof__prepare(struct session *s, const struct report_opts *o)
{
	return 0;
}
#endif

static int pprof__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__pprof(s, fp, o->view);
}

const struct report_output output_pprof = {
	.name = "pprof",
	.help = "gzip'd profile.proto for go tool pprof, Pyroscope, Parca\n"
		"(xpu-report --pprof profile.pb.gz)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.takes_file = true,
	.addresses = true,
	.unavailable = pprof__unavailable,
	.prepare = pprof__prepare,
	.run = pprof__run,
};
