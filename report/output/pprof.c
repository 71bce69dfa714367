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
 *                 holds its weight in samples (rounded) and in ns in its own
 *                 kind's column, 0 in the others; period: cpu/nanoseconds,
 *                 the sampling period
 *  samples        one per entry and (location array, address array) it got
 *                 weight under (profile.h: profile_pcs, kept because
 *                 prepare() asks), the rest of the entry (frames without
 *                 them) in one more
 *  locations      one per (mapping, sampled address, the frames there with
 *                 their source lines): a function and what is inlined at
 *                 that pc are one location of several lines, innermost
 *                 first, as pprof expects; the address is the looked-up pc
 *                 as an ELF virtual address (kernel: the kernel address);
 *                 frames without one (GPU work, the report's frames) get
 *                 the symbol's start; unsymbolized frames keep their
 *                 "module+0xOFFSET" name
 *  functions      one per (frame, source file); kernel names without _[k]
 *                 (the mapping says kernel), inlined ones without
 *                 " (inlined)" (the location says it)
 *  mappings       one per module name, the program first (pprof takes
 *                 mapping 1 for it), the kernel last; when the trace's mmap
 *                 records name one build-id for it: that build-id (hex), the
 *                 recorded path, and, when the file was found, its
 *                 executable segment (memory_start/limit = p_vaddr,
 *                 + p_memsz; file_offset = p_offset), since location
 *                 addresses are ELF virtual addresses: a server symbolizing
 *                 by build-id gets the file offset as address -
 *                 memory_start + file_offset. Without the file, addresses
 *                 are file offsets (what the report computed) and the
 *                 mapping starts at 0.
 *  labels         pid, tid (numbers), thread (its name), comm (its
 *                 process's), origin (cpu, gpu, off-cpu, ...), rank; GPU
 *                 work also device, stream, kernel and graph_id (strings:
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
#include "common/sort.h"
#include "common/utf8.h"
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

/* One row's share of an event: under stack, weight samples and ns. */
static void pprof__gpu_row(struct pprof_gpu *g, const struct gpu_event *ev, uint32_t stack,
			   double weight, uint64_t ns)
{
	uint32_t key[7] = { stack, ev->pid, ev->tid, ev->comm, ev->device, ev->stream,
			    ev->graph_id };
	bool found;
	void **slot = bmap__slot(&g->idx, key, sizeof(key), &found);
	struct pprof_gpu_row *r;

	if (!found) {
		g->rows = xgrow(g->rows, &g->cap, g->nr + 1, sizeof(*g->rows));
		r = &g->rows[g->nr++];
		*r = (struct pprof_gpu_row){ stack, ev->pid, ev->tid, ev->comm, ev->device,
					     ev->stream, ev->graph_id, 0, 0 };
		*slot = (void *)(uintptr_t)g->nr;
	}
	r = &g->rows[(uintptr_t)*slot - 1];
	r->weight += weight;
	r->ns += ns;
}

struct pprof_gpu_share {
	struct pprof_gpu *g;
	const struct gpu_event *ev;
	uint64_t ns;
};

/* A kernel's GPU PC sample share (gpu_join__pc_split) */
static void pprof__gpu_share(void *priv, uint32_t stack, double weight, double frac)
{
	struct pprof_gpu_share *sh = priv;

	pprof__gpu_row(sh->g, sh->ev, stack, weight, (uint64_t)((double)sh->ns * frac + 0.5));
}

static void pprof__gpu_event(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct pprof_gpu_share sh = { priv, ev, ev->end > ev->start ? ev->ns : 0 };

	if (!gpu_join__pc_split(s, ev, pprof__gpu_share, &sh))
		pprof__gpu_row(priv, ev, ev->stack, ev->weight, sh.ns);
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

	/* locations are addresses: each frame's, with its source lines */
	s->callchain.want_pcs = true;
	s->profile.pcs.on = true;
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

/* The index of s in the string table. profile.proto's strings are proto3
 * strings, which must be UTF-8 (Go's decoder refuses the file otherwise):
 * a name that is not is interned as utf8__fix() writes it. */
static int64_t pprof__str(struct pprof *pp, const char *s)
{
	size_t len = strlen(s);
	char *fixed = utf8__valid(s, len) ? NULL : utf8__xdup(s);
	bool found;
	void **slot;

	if (fixed)
		s = fixed, len = strlen(fixed);
	slot = bmap__slot(&pp->str_idx, s, len, &found);
	if (found) {
		free(fixed);
		return (int64_t)(uintptr_t)*slot - 1;
	}
	pp->strs = xgrow(pp->strs, &pp->strs_cap, pp->nr_strs + 1, sizeof(*pp->strs));
	pp->strs[pp->nr_strs] = fixed ? fixed : xstrdup(s);
	*slot = (void *)(uintptr_t)(pp->nr_strs + 1);
	return (int64_t)pp->nr_strs++;
}

static const struct { unsigned origin; const char *type, *label; } pprof__kinds[] = {
	{ ORIGIN_CPU, "cpu", "cpu" },
	{ ORIGIN_GPU, "gpu_time", "gpu" },
	{ ORIGIN_OFFCPU, "off_cpu", "off-cpu" },
	{ ORIGIN_GPU_IDLE, "gpu_idle", "gpu-idle" },
	{ ORIGIN_SYNC_WAIT, "sync_wait", "sync-wait" },
	{ ORIGIN_GPU_MEM, "inuse_space", "gpu-memory" },	/* its own types: pprof__mem_types */
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

#define PPROF_MAX_LABELS 11

static int64_t pprof__num(struct pprof *pp, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return pprof__str(pp, buf);
}

/* Where output__pprof() builds its samples, locations and functions. */
struct pprof_out {
	struct session *s;
	const struct profile *p;
	struct pprof *pp;
	/* samples: their values and labels in flat arrays, their location ids
	 * in one (offsets until the end: the arrays grow) */
	Perftools__Profiles__Sample *smp;
	size_t nr_smp, smp_cap, loc_off_cap, lab_off_cap, line_off_cap;
	size_t *loc_off;		/* sample -> offset into loc_ids */
	uint64_t *loc_ids;
	size_t nr_loc_ids, loc_ids_cap;
	Perftools__Profiles__Label *lab;
	size_t nl, lab_cap;
	size_t *lab_off;		/* sample -> offset into lab */
	int64_t *vals;
	size_t nr_vals, vals_cap;
	double *wt;			/* sample -> its weight in samples: the */
	size_t wt_cap;			/* counts are apportioned at the end */
	size_t nr_cols;
	const size_t *col;
	/* locations: (mapping, address, the (frame, location) pairs of its
	 * lines) -> id; functions: (frame, file) -> id */
	Perftools__Profiles__Location *loc;
	size_t nr_loc, loc_cap;
	Perftools__Profiles__Line *line;
	size_t nr_line, line_cap;
	size_t *line_off;		/* location -> offset into line */
	struct bmap loc_idx, fn_idx;
	Perftools__Profiles__Function *fn;
	size_t nr_fn, fn_cap;
	const uint64_t *map_of;		/* frame -> mapping id (0: none) */
	/* the message's arrays of pointers into those above (pprof__link) */
	Perftools__Profiles__Sample **smpp;
	Perftools__Profiles__Label **labp;
	Perftools__Profiles__Line **linep;
	Perftools__Profiles__Location **locp;
	Perftools__Profiles__Function **fnp;
	int64_t k_pid, k_tid, k_thread, k_comm, k_origin, k_rank, k_device, k_stream, k_kernel,
		k_graph, k_stall;
	bool mem;			/* --gpu-memory: values are (objects, bytes) */
};

/* The function of frame f in file (a string id of the profile, 0: none). */
static uint64_t pprof__function(struct pprof_out *po, uint32_t f, uint32_t file)
{
	uint32_t key[2] = { f, file };
	const struct frame *fr = profile__frame(po->p, f);
	Perftools__Profiles__Function *fn;
	char name[4096];
	size_t len;
	bool found;
	void **slot = bmap__slot(&po->fn_idx, key, sizeof(key), &found);

	if (found)
		return (uint64_t)(uintptr_t)*slot;
	/* the mapping says kernel, the location's lines say inlined */
	len = folded__frame(fr, name, sizeof(name));
	if (fr->kind == FRAME_CPU_KERNEL && len >= 4 && !strcmp(name + len - 4, "_[k]"))
		name[len -= 4] = '\0';
	if (fr->inlined && len >= 10 && !strcmp(name + len - 10, " (inlined)"))
		name[len -= 10] = '\0';
	po->fn = xgrow(po->fn, &po->fn_cap, po->nr_fn + 1, sizeof(*po->fn));
	fn = &po->fn[po->nr_fn++];
	perftools__profiles__function__init(fn);
	fn->id = po->nr_fn;
	fn->name = fn->system_name = pprof__str(po->pp, name);
	fn->filename = file ? pprof__str(po->pp, profile__str(po->p, file)) : 0;
	*slot = (void *)(uintptr_t)fn->id;
	return fn->id;
}

/* The location of frames fr[k..i] (fr[k] the function, those after it
 * inlined into it), at addr, with their source locations loc[k..i]. */
static uint64_t pprof__location(struct pprof_out *po, const uint32_t *fr, const uint32_t *loc,
				size_t k, size_t i, uint64_t addr)
{
	uint32_t key[2 * 64 + 3];
	size_t nk = 0;
	Perftools__Profiles__Location *l;
	bool found;
	void **slot;

	if (i - k >= 64)
		k = i - 63;
	key[nk++] = (uint32_t)po->map_of[fr[k]];
	key[nk++] = (uint32_t)addr;
	key[nk++] = (uint32_t)(addr >> 32);
	for (size_t j = k; j <= i; j++) {
		key[nk++] = fr[j];
		key[nk++] = loc[j];
	}
	slot = bmap__slot(&po->loc_idx, key, nk * sizeof(*key), &found);
	if (found)
		return (uint64_t)(uintptr_t)*slot;
	po->loc = xgrow(po->loc, &po->loc_cap, po->nr_loc + 1, sizeof(*po->loc));
	po->line_off = xgrow(po->line_off, &po->line_off_cap, po->nr_loc + 1, sizeof(*po->line_off));
	l = &po->loc[po->nr_loc];
	perftools__profiles__location__init(l);
	l->id = po->nr_loc + 1;
	l->mapping_id = po->map_of[fr[k]];
	/* no sampled address (GPU work, a frame the report added): the
	 * symbol's start, as before addresses were kept */
	l->address = addr ? addr : profile__frame(po->p, fr[k])->addr;
	po->line_off[po->nr_loc] = po->nr_line;
	po->line = xgrow(po->line, &po->line_cap, po->nr_line + (i - k + 1), sizeof(*po->line));
	for (size_t j = i + 1; j-- > k; ) {	/* innermost first */
		const struct profile_loc *sl = loc[j] ? profile__loc(po->p, loc[j]) : NULL;
		Perftools__Profiles__Line *ln = &po->line[po->nr_line++];

		perftools__profiles__line__init(ln);
		ln->function_id = pprof__function(po, fr[j], sl ? sl->file : 0);
		ln->line = sl ? sl->line : 0;
	}
	l->n_line = i - k + 1;
	po->nr_loc++;
	*slot = (void *)(uintptr_t)l->id;
	return l->id;
}


/* One sample: the stack, leaf first, a location per function with its
 * inlined frames (locs, pcs: the entry's location and address arrays, 0:
 * none); its weight in samples (rounded) and in ns in its kind's column;
 * the labels, with GPU work's device, stream, kernel, graph. */
static void pprof__sample(struct pprof_out *po, uint32_t stack, uint32_t locs, uint32_t pcs,
			  uint32_t pid, uint32_t tid, uint32_t comm, unsigned origin,
			  double weight, double ns, const struct pprof_gpu_row *gpu)
{
	const struct profile *p = po->p;
	Perftools__Profiles__Sample *sm;
	Perftools__Profiles__Label *l;
	uint32_t *loc, proc_comm, rank;
	uint64_t *addr;
	const uint32_t *fr;
	size_t n, k, nl = 0;
	int64_t *v;

	for (k = 0; k < PPROF_NR_KINDS && pprof__kinds[k].origin != origin; k++)
		;
	fr = profile__stack(p, stack, &n);
	po->smp = xgrow(po->smp, &po->smp_cap, po->nr_smp + 1, sizeof(*po->smp));
	po->loc_off = xgrow(po->loc_off, &po->loc_off_cap, po->nr_smp + 1, sizeof(*po->loc_off));
	po->lab_off = xgrow(po->lab_off, &po->lab_off_cap, po->nr_smp + 1, sizeof(*po->lab_off));
	sm = &po->smp[po->nr_smp];
	perftools__profiles__sample__init(sm);

	/* locations, leaf first */
	loc = xcalloc(n + 1, sizeof(*loc));
	addr = xcalloc(n + 1, sizeof(*addr));
	profile__stack_locs(p, locs, fr, n, loc);
	profile__stack_pcs(p, pcs, fr, n, addr);
	po->loc_off[po->nr_smp] = po->nr_loc_ids;
	po->loc_ids = xgrow(po->loc_ids, &po->loc_ids_cap, po->nr_loc_ids + n + 1,
			    sizeof(*po->loc_ids));
	for (size_t i = n; i-- > 0; ) {
		size_t j = i;

		/* "bar (inlined)" is inlined into the frame above it */
		while (j > 0 && profile__frame(p, fr[j])->inlined)
			j--;
		po->loc_ids[po->nr_loc_ids++] = pprof__location(po, fr, loc, j, i, addr[j]);
		i = j;
	}
	sm->n_location_id = po->nr_loc_ids - po->loc_off[po->nr_smp];
	free(addr);
	free(loc);

	po->vals = xgrow(po->vals, &po->vals_cap, po->nr_vals + po->nr_cols, sizeof(*po->vals));
	v = &po->vals[po->nr_vals];
	memset(v, 0, po->nr_cols * sizeof(*v));
	po->nr_vals += po->nr_cols;
	sm->n_value = po->nr_cols;
	po->wt = xgrow(po->wt, &po->wt_cap, po->nr_smp + 1, sizeof(*po->wt));
	po->wt[po->nr_smp] = weight;	/* v[0]: output__apportion() at the end */
	if (po->mem) {		/* Go's heap profiles: objects, then bytes */
		v[0] = (int64_t)(ns + 0.5);
		v[1] = (int64_t)(weight + 0.5);
	} else if (k < PPROF_NR_KINDS && po->col[k]) {
		v[po->col[k]] = (int64_t)(ns + 0.5);
	}

	po->lab = xgrow(po->lab, &po->lab_cap, po->nl + PPROF_MAX_LABELS, sizeof(*po->lab));
	l = &po->lab[po->nl];
	for (int j = 0; j < PPROF_MAX_LABELS; j++)
		perftools__profiles__label__init(&l[j]);
	proc_comm = machine__comm(&po->s->machine, pid, pid, po->s->last_time);
	l[nl].key = po->k_pid, l[nl++].num = session__pid(po->s, pid);	/* merged: the input's own */
	l[nl].key = po->k_tid, l[nl++].num = session__pid(po->s, tid);
	/* thread: its name (the latest it had: machine__comm's); comm: its
	 * process's, as `ps -o comm` shows them */
	l[nl].key = po->k_thread, l[nl++].str = pprof__str(po->pp, profile__str(p, comm));
	l[nl].key = po->k_comm;
	l[nl++].str = pprof__str(po->pp, profile__str(p, proc_comm ? proc_comm : comm));
	l[nl].key = po->k_origin;
	l[nl++].str = pprof__str(po->pp, k < PPROF_NR_KINDS ? pprof__kinds[k].label : "?");
	if (!session__rank(po->s, pid, RANK_GLOBAL, &rank))	/* strings: see device */
		l[nl].key = po->k_rank, l[nl++].str = pprof__num(po->pp, rank);
	if (gpu) {	/* strings: pprof drops numeric labels of value 0 (device 0) */
		l[nl].key = po->k_device, l[nl++].str = pprof__num(po->pp, gpu->device);
		if (gpu->stream != ~0u)
			l[nl].key = po->k_stream, l[nl++].str = pprof__num(po->pp, gpu->stream);
		if (n && profile__frame(p, fr[n - 1])->kind == FRAME_GPU_KERNEL) {
			const char *kn = profile__frame(p, fr[n - 1])->name;

			/* a GPU PC sample's leaf: ...;[GPU_Kernel]k;[sass]...;[stall]reason
			 * (report/gpu/gpu_pcsamp.h) */
			if (!strncmp(kn, "[stall]", 7)) {
				l[nl].key = po->k_stall, l[nl++].str = pprof__str(po->pp, kn + 7);
				kn = n >= 3 ? profile__frame(p, fr[n - 3])->name : "";
			}
			if (!strncmp(kn, "[GPU_Kernel]", 12))	/* the frame's prefix */
				kn += 12;
			if (*kn)
				l[nl].key = po->k_kernel, l[nl++].str = pprof__str(po->pp, kn);
		}
		if (gpu->graph_id)
			l[nl].key = po->k_graph, l[nl++].str = pprof__num(po->pp, gpu->graph_id);
	}
	po->lab_off[po->nr_smp] = po->nl;
	sm->n_label = nl;
	po->nl += nl;
	po->nr_smp++;
}

/* Mappings in pprof's order: the program first (pprof takes mapping 1 for
 * it: the module not a shared library nor the report's, with the most
 * weight in the stacks), the kernel's last; frame -> mapping id into
 * map_of. Returns the mappings (*nr of them). */
static Perftools__Profiles__Mapping **pprof__mappings(struct pprof *pp, struct session *s,
						      enum profile_view view, uint64_t *map_of,
						      size_t *nr)
{
	const struct profile *p = &s->profile;
	struct bmap mod_idx;
	const char **mods = NULL;
	double *w = NULL, best = 0;
	int *rank = NULL;
	size_t nr_mods = 0, cap = 0, main = ~(size_t)0, *order;
	Perftools__Profiles__Mapping **mapp;
	uint64_t *mod_of = xcalloc(p->nr_frames + 1, sizeof(*mod_of));

	bmap__init(&mod_idx);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct frame *f = profile__frame(p, (uint32_t)i);
		bool found;
		void **slot;

		if (!f->module[0])
			continue;
		slot = bmap__slot(&mod_idx, f->module, strlen(f->module), &found);
		if (!found) {
			mods = xgrow(mods, &cap, nr_mods + 1, sizeof(*mods));
			mods[nr_mods++] = f->module;
			*slot = (void *)(uintptr_t)nr_mods;
		}
		mod_of[i] = (uint64_t)(uintptr_t)*slot;
	}
	w = xcalloc(nr_mods + 1, sizeof(*w));
	for (size_t e = 0; e < p->nr_entries; e++) {
		const struct profile_entry *en = &p->entries[e];
		const uint32_t *fr;
		size_t n;

		if (!profile__in_view(en, view))
			continue;
		fr = profile__stack(p, en->stack, &n);
		for (size_t j = 0; j < n; j++)
			if (mod_of[fr[j]] && (!j || mod_of[fr[j - 1]] != mod_of[fr[j]]))
				w[mod_of[fr[j]] - 1] += en->weight;
	}
	rank = xcalloc(nr_mods + 1, sizeof(*rank));
	for (size_t m = 0; m < nr_mods; m++) {
		const char *name = mods[m];

		if (name[0] == '[')	/* the kernel's, then the report's */
			rank[m] = strstr(name, "kernel") || strcmp(name, "[vdso]") ? 3 : 1;
		else
			rank[m] = 1;
		if (name[0] != '[' && !strstr(name, ".so") && w[m] > best) {
			best = w[m];
			main = m;
		}
	}
	for (size_t i = 0; i < p->nr_frames; i++)	/* kernel modules: "[nvidia]" */
		if (mod_of[i] && profile__frame(p, (uint32_t)i)->kind == FRAME_CPU_KERNEL)
			rank[mod_of[i] - 1] = 3;
	for (size_t m = 0; m < nr_mods; m++)
		if (rank[m] == 3 && !strcmp(mods[m], "[kernel.kallsyms]"))
			rank[m] = 4;	/* the kernel itself last */
		else if (rank[m] != 3 && mods[m][0] == '[' && strcmp(mods[m], "[vdso]"))
			rank[m] = 2;
	if (main != ~(size_t)0)
		rank[main] = 0;
	order = xcalloc(nr_mods + 1, sizeof(*order));
	for (size_t m = 0, at = 0; m < nr_mods; m++) {	/* stable by rank */
		at = 0;
		for (size_t o = 0; o < nr_mods; o++)
			at += rank[o] < rank[m] || (rank[o] == rank[m] && o < m);
		order[m] = at + 1;		/* module -> mapping id */
	}
	mapp = xcalloc(nr_mods + 1, sizeof(*mapp));
	for (size_t m = 0; m < nr_mods; m++) {
		Perftools__Profiles__Mapping *mp = xzalloc(sizeof(*mp));

		perftools__profiles__mapping__init(mp);
		mp->id = order[m];
		pprof__mapping(pp, s, mods[m], mp);
		mp->has_functions = true;
		mp->has_filenames = true;
		mp->has_line_numbers = true;
		mp->has_inline_frames = true;
		mapp[order[m] - 1] = mp;
	}
	for (size_t i = 0; i < p->nr_frames; i++)
		map_of[i] = mod_of[i] ? order[mod_of[i] - 1] : 0;
	*nr = nr_mods;
	free(order);
	free(rank);
	free(w);
	free(mods);
	free(mod_of);
	bmap__exit(&mod_idx, NULL);
	return mapp;
}

/* --gpu-memory: a heap profile as Go writes them, objects/count then
 * space/bytes, "inuse_" (the live set) or "alloc_" (allocated over the
 * recording); into vt and vtp as below. Returns 2. */
static size_t pprof__mem_types(struct pprof *pp, bool alloc, Perftools__Profiles__ValueType *vt,
			       Perftools__Profiles__ValueType **vtp, size_t *col)
{
	for (size_t k = 0; k < PPROF_NR_KINDS; k++)
		col[k] = 0;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vtp[i] = &vt[i];
	}
	vt[0].type = pprof__str(pp, alloc ? "alloc_objects" : "inuse_objects");
	vt[0].unit = pprof__str(pp, "count");
	vt[1].type = pprof__str(pp, alloc ? "alloc_space" : "inuse_space");
	vt[1].unit = pprof__str(pp, "bytes");
	return 2;
}

/* The sample types: samples/count, then one per kind of weight present in
 * the view, into vt and vtp (PPROF_NR_KINDS + 1 each); col[k]: kind k's
 * column, 0 when absent. Returns the count of columns. */
static size_t pprof__sample_types(struct pprof *pp, const struct profile *p,
				  enum profile_view view, Perftools__Profiles__ValueType *vt,
				  Perftools__Profiles__ValueType **vtp, size_t *col)
{
	size_t nr_cols = 1;

	perftools__profiles__value_type__init(&vt[0]);
	vt[0].type = pprof__str(pp, "samples");
	vt[0].unit = pprof__str(pp, "count");
	vtp[0] = &vt[0];
	for (size_t k = 0; k < PPROF_NR_KINDS; k++) {
		col[k] = 0;
		if (!(view & pprof__kinds[k].origin) || !(p->total[pprof__kinds[k].origin] > 0))
			continue;
		perftools__profiles__value_type__init(&vt[nr_cols]);
		vt[nr_cols].type = pprof__str(pp, pprof__kinds[k].type);
		vt[nr_cols].unit = pprof__str(pp, "nanoseconds");
		vtp[nr_cols] = &vt[nr_cols];
		col[k] = nr_cols++;
	}
	return nr_cols;
}

static void pprof_out__init(struct pprof_out *po, struct session *s, struct pprof *pp,
			    size_t nr_cols, const size_t *col, const uint64_t *map_of)
{
	*po = (struct pprof_out){
		.s = s, .p = &s->profile, .pp = pp, .nr_cols = nr_cols, .col = col,
		.map_of = map_of,
		.k_pid = pprof__str(pp, "pid"), .k_tid = pprof__str(pp, "tid"),
		.k_thread = pprof__str(pp, "thread"),
		.k_comm = pprof__str(pp, "comm"), .k_origin = pprof__str(pp, "origin"),
		.k_rank = pprof__str(pp, "rank"),
		.k_device = pprof__str(pp, "device"),
		.k_stream = pprof__str(pp, "stream"),
		.k_kernel = pprof__str(pp, "kernel"),
		.k_graph = pprof__str(pp, "graph_id"),
		.k_stall = pprof__str(pp, "stall"),
	};
	bmap__init(&po->loc_idx);
	bmap__init(&po->fn_idx);
}

static void pprof_out__exit(struct pprof_out *po)
{
	free(po->fnp);
	free(po->locp);
	free(po->linep);
	free(po->labp);
	free(po->smpp);
	free(po->smp);
	free(po->loc_off);
	free(po->loc_ids);
	free(po->lab);
	free(po->lab_off);
	free(po->vals);
	free(po->wt);
	free(po->loc);
	free(po->line);
	free(po->line_off);
	free(po->fn);
	bmap__exit(&po->loc_idx, NULL);
	bmap__exit(&po->fn_idx, NULL);
}

/* The rows of the joined events, when they are the profile's GPU weight
 * split finer; else NULL (weight from elsewhere: the entries are kept,
 * without labels). */
static const struct pprof_gpu *pprof__gpu_rows(const struct session *s)
{
	const struct pprof_gpu *g = session__tool(s, PPROF_GPU_TOOL);
	double sum = 0;

	if (!g)
		return NULL;
	for (size_t i = 0; i < g->nr; i++)
		sum += g->rows[i].weight;
	if (fabs(sum - s->profile.total[ORIGIN_GPU]) > 1e-6 * (1 + s->profile.total[ORIGIN_GPU]))
		return NULL;
	return g;
}

/* One sample per entry in the view and (source lines, addresses) it was
 * sampled at, in the order seen, the rest of its weight in one more; GPU
 * entries left out when the joined events' rows replace them. */
static void pprof__entry_samples(struct pprof_out *po, enum profile_view view, bool gpu_rows)
{
	const struct profile *p = po->p;
	size_t nr_w = p->pcs.nr_w;
	struct xpu_sort_pair *by_entry = xcalloc(nr_w + 1, sizeof(*by_entry));

	/* the (lines, addresses) weights of each entry, in the order seen */
	for (size_t i = 0; i < nr_w; i++)
		by_entry[i] = (struct xpu_sort_pair){ p->pcs.w[i].entry, i };
	xpu_radix_sort(by_entry, nr_w);
	for (size_t e = 0, wi = 0; e < p->nr_entries; e++) {
		const struct profile_entry *en = &p->entries[e];
		double left = en->weight, f = 1e9 / po->s->sample_freq;

		for (; wi < nr_w && p->pcs.w[by_entry[wi].val].entry < e; wi++)
			;
		if (!profile__in_view(en, view) || !(en->weight > 0))
			continue;
		if (gpu_rows && en->origin == ORIGIN_GPU)
			continue;
		for (; wi < nr_w && p->pcs.w[by_entry[wi].val].entry == e; wi++) {
			const struct profile_pcw *w = &p->pcs.w[by_entry[wi].val];

			if (!(w->weight > 0))
				continue;
			pprof__sample(po, en->stack, w->locs, w->pcs, en->pid, en->tid, en->comm,
				      en->origin, w->weight, w->weight * f, NULL);
			left -= w->weight;
		}
		if (left > 1e-9 * en->weight)	/* memory: bytes and its blocks */
			pprof__sample(po, en->stack, 0, 0, en->pid, en->tid, en->comm, en->origin,
				      left, po->mem ? (double)en->count : left * f, NULL);
	}
	free(by_entry);
}

/* One sample per row of the joined GPU events, with their labels. */
static void pprof__gpu_samples(struct pprof_out *po, const struct pprof_gpu *g,
			       enum profile_view view)
{
	for (size_t i = 0; g && (view & ORIGIN_GPU) && i < g->nr; i++)
		if (g->rows[i].weight > 0)
			pprof__sample(po, g->rows[i].stack, 0, 0, g->rows[i].pid, g->rows[i].tid,
				      g->rows[i].comm, ORIGIN_GPU, g->rows[i].weight,
				      (double)g->rows[i].ns, &g->rows[i]);
}

/* samples/count: the weights rounded so that they sum to the total
 * rounded, as --folded's lines do (each rounded alone, a GPU view of
 * many small PC-sample lines summed to 0) */
static void pprof__counts(struct pprof_out *po)
{
	int64_t *cnt = xcalloc(po->nr_smp + 1, sizeof(*cnt));

	output__apportion(po->wt, cnt, po->nr_smp);
	for (size_t i = 0; i < po->nr_smp; i++)
		po->vals[i * po->nr_cols] = cnt[i];
	free(cnt);
}

/* The arrays are complete: the message's pointers into them. */
static void pprof__link(struct pprof_out *po, Perftools__Profiles__Profile *pr)
{
	po->smpp = xcalloc(po->nr_smp + 1, sizeof(*po->smpp));
	po->labp = xcalloc(po->nl + 1, sizeof(*po->labp));
	for (size_t i = 0; i < po->nl; i++)
		po->labp[i] = &po->lab[i];
	for (size_t i = 0; i < po->nr_smp; i++) {
		Perftools__Profiles__Sample *sm = &po->smp[i];

		sm->location_id = sm->n_location_id ? &po->loc_ids[po->loc_off[i]] : NULL;
		sm->value = &po->vals[i * po->nr_cols];
		sm->label = sm->n_label ? &po->labp[po->lab_off[i]] : NULL;
		po->smpp[i] = sm;
	}
	po->linep = xcalloc(po->nr_line + 1, sizeof(*po->linep));
	for (size_t i = 0; i < po->nr_line; i++)
		po->linep[i] = &po->line[i];
	po->locp = xcalloc(po->nr_loc + 1, sizeof(*po->locp));
	for (size_t i = 0; i < po->nr_loc; i++) {
		po->loc[i].line = &po->linep[po->line_off[i]];
		po->locp[i] = &po->loc[i];
	}
	po->fnp = xcalloc(po->nr_fn + 1, sizeof(*po->fnp));
	for (size_t i = 0; i < po->nr_fn; i++)
		po->fnp[i] = &po->fn[i];
	pr->function = po->fnp;
	pr->n_function = po->nr_fn;
	pr->location = po->locp;
	pr->n_location = po->nr_loc;
	pr->sample = po->smpp;
	pr->n_sample = po->nr_smp;
}

/* The sampling period, as Go's CPU profiles and Pyroscope's say it, and
 * the trace's start and duration. */
static void pprof__period(const struct session *s, struct pprof *pp,
			  Perftools__Profiles__Profile *pr,
			  Perftools__Profiles__ValueType *period_type)
{
	perftools__profiles__value_type__init(period_type);
	period_type->type = pprof__str(pp, "cpu");
	period_type->unit = pprof__str(pp, "nanoseconds");
	pr->period_type = period_type;
	pr->period = s->sample_freq ? (int64_t)(1e9 / s->sample_freq + 0.5) : 0;
	pr->time_nanos = (int64_t)s->header.realtime_ns;
	if (s->last_time > s->first_time)
		pr->duration_nanos = (int64_t)(s->last_time - s->first_time);
}

/* The message packed and gzip'd into fp. */
static int pprof__write(const Perftools__Profiles__Profile *pr, FILE *fp)
{
	size_t len = perftools__profiles__profile__get_packed_size(pr);
	uint8_t *buf = xmalloc(len + 1);
	int err;

	perftools__profiles__profile__pack(pr, buf);
	err = pprof__gzip(buf, len, fp);
	free(buf);
	return err;
}

static void pprof__exit(struct pprof *pp)
{
	for (size_t i = 0; i < pp->nr_strs; i++)
		free(pp->strs[i]);
	free(pp->strs);
	bmap__exit(&pp->str_idx, NULL);
}

int output__pprof(struct session *s, FILE *fp, enum profile_view view)
{
	const struct profile *p = &s->profile;
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType *vt, **vtp, period_type;
	Perftools__Profiles__Mapping **mapp;
	struct pprof pp = { 0 };
	struct pprof_out po;
	const struct pprof_gpu *g;
	size_t nr_maps = 0, col[PPROF_NR_KINDS], nr_cols;
	uint64_t *map_of;
	int err;

	bmap__init(&pp.str_idx);
	pprof__str(&pp, "");

	vt = xcalloc(PPROF_NR_KINDS + 1, sizeof(*vt));
	vtp = xcalloc(PPROF_NR_KINDS + 1, sizeof(*vtp));
	if (view == VIEW_GPU_MEM) {
		const struct gpu_memory *gm = gpu_memory__find(s);

		nr_cols = pprof__mem_types(&pp, gm && gpu_memory__opts(gm)->mode == GPU_MEM_ALLOCS &&
					   !gpu_memory__opts(gm)->at_given, vt, vtp, col);
	} else {
		nr_cols = pprof__sample_types(&pp, p, view, vt, vtp, col);
	}
	pr.sample_type = vtp;
	pr.n_sample_type = nr_cols;
	pr.default_sample_type = vt[view == VIEW_GPU_MEM].type;

	map_of = xcalloc(p->nr_frames + 1, sizeof(*map_of));
	mapp = pprof__mappings(&pp, s, view, map_of, &nr_maps);
	pr.mapping = mapp;
	pr.n_mapping = nr_maps;

	pprof_out__init(&po, s, &pp, nr_cols, col, map_of);
	po.mem = view == VIEW_GPU_MEM;
	g = pprof__gpu_rows(s);
	pprof__entry_samples(&po, view, g != NULL);
	pprof__gpu_samples(&po, g, view);
	if (!po.mem)
		pprof__counts(&po);
	pprof__link(&po, &pr);
	pprof__period(s, &pp, &pr, &period_type);
	if (po.mem) {		/* exact, not sampled: one byte */
		period_type.type = pprof__str(&pp, "space");
		period_type.unit = pprof__str(&pp, "bytes");
		pr.period = 1;
	}
	pr.string_table = pp.strs;
	pr.n_string_table = pp.nr_strs;
	err = pprof__write(&pr, fp);

	pprof_out__exit(&po);
	for (size_t i = 0; i < nr_maps; i++)
		free(mapp[i]);
	free(mapp);
	free(map_of);
	free(vtp);
	free(vt);
	pprof__exit(&pp);
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

int output__pprof(struct session *s, FILE *fp, enum profile_view view)
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
	.lines = true,
	.addresses = true,
	.unavailable = pprof__unavailable,
	.prepare = pprof__prepare,
	.run = pprof__run,
};
