// SPDX-License-Identifier: MIT
/*
 * --timeline FILE: the trace as a Perfetto trace (protobuf, perfetto.dev's
 * TracePacket stream), what ui.perfetto.dev and Perfetto's trace processor
 * open. Documentation/output-timeline.md has the mapping; in short:
 *
 *  process  a process track (pid, comm), its threads below it;
 *  thread   a thread track (pid, tid, comm) with child tracks "NVTX"
 *           (push/pop ranges), "CUDA API" (each API call, its launch stack as
 *           the slice's callstack) and "off-CPU" (each block, named by its
 *           reason, its stack as callstack); its CPU samples are PerfSample
 *           packets, which Perfetto shows as the thread's callstack samples
 *           (flame graph of a selected range);
 *  GPU      a track per device with a child per (stream, process): kernels,
 *           each CUDA graph launch a slice "graph G" around the work it
 *           replayed on that stream,
 *           memcpy (bytes, GB/s), memset as slices; synchronization records
 *           on the launching process's "CUDA sync" track; a flow arrow from
 *           each launching API call to its GPU work (same pid and correlation
 *           id);
 *  memory   with GPU memory records, per process and device: counter tracks
 *           of the PyTorch allocator's allocated and reserved bytes and of
 *           the CUDA-level bytes by memory kind, and a track of the large
 *           allocations (at least 1% of the peak, or 64 MiB) from
 *           allocation to free, each with its stack (gpu_memory_tool.h);
 *  files    several inputs (-i DIR of rotated files): a track "recording
 *           files", a slice per file over the span of its records;
 *  time     the trace's CLOCK_MONOTONIC ns, declared as the trace's clock by
 *           a ClockSnapshot that also gives REALTIME at the recording's start.
 *
 * Names, callstacks, frames and modules are interned (InternedData, sent
 * with the first packet that uses them), so a stack costs one varint per use;
 * a mapping carries its file's build-id (raw bytes, as traced_perf writes it).
 * Slices of one track must nest: a slice that overlaps another without
 * nesting goes to a second lane, a sibling track "NAME (2)".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_memory_tool.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/output/output.h"

#ifdef HAVE_PROTOBUF_C
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "perfetto_trace.pb-c.h"

/* Above this many slices and samples Perfetto UI (in a browser tab) gets slow
 * to load; the report says so and how to cut the trace. */
#define TL_WARN_EVENTS	(4u << 20)
#define TL_MAX_LANES	32		/* beyond: the slice is cut to fit the last lane */
#define TL_SEQ		1		/* our one packet sequence */

typedef Perfetto__Protos__TracePacket pb_packet;

/* ---- what the passes collect ----------------------------------------------------------- */

struct tl_api {				/* a GPU_API record */
	uint64_t start, end, corr;
	uint32_t pid, tid, domain, cbid;
	int32_t ret;
};

struct tl_sample {
	uint64_t time;
	uint32_t pid, tid, stack;
};

struct tl_off {				/* an off-CPU block */
	uint64_t start, end, off_ns;
	uint32_t pid, tid, comm, stack;
};

struct tl_gpu {				/* a joined piece of GPU work */
	uint64_t start, end, corr, bytes, graph_node_id;
	uint64_t ns;			/* the views' GPU time (less than end - start: PC sampling slowed it) */
	enum gpu_kind kind;
	enum gpu_match match;
	uint32_t pid, tid, device, stream, graph_id, leaf, comm;
	uint32_t api;			/* the launching API record (on the timeline): index + 1 */
	char *stalls, *lines;		/* a kernel's GPU PC samples: shares by reason, by line */
};

/* ---- tracks and slices ------------------------------------------------------------------ */

enum tl_tkind { TL_PROCESS, TL_THREAD, TL_CHILD, TL_GPU, TL_FILES };

struct tl_tkey {			/* bmap key */
	uint32_t kind, a, b, c;
};

struct tl_track {
	enum tl_tkind kind;
	uint32_t parent;		/* track index + 1; 0: top level */
	uint32_t pid, tid;
	int32_t rank;			/* among its siblings */
	char *name;
	uint32_t nr_lanes;
	uint64_t uuid;			/* lane k: uuid + k */
	bool counter;			/* a counter track of bytes (GPU memory) */
};

enum tl_skind { TL_S_API, TL_S_OFF, TL_S_NVTX, TL_S_GPU, TL_S_GRAPH, TL_S_FILE, TL_S_MEM };

struct tl_count {			/* a counter track's value from time on */
	uint64_t time;
	uint32_t track;
	int64_t value;
};

struct tl_graph {			/* one graph launch's work on one stream */
	uint64_t start, end, corr;
	uint32_t pid, graph_id, track, n;
};

struct tl_slice {
	uint64_t start, end;
	uint32_t track, lane;
	uint32_t name;			/* event name iid */
	uint32_t stack;			/* profile stack id; 0: none */
	enum tl_skind kind;
	uint32_t ref;			/* index into apis, offs, nvtx messages, gpus, graphs or inputs */
};

/* Debug annotation names, interned in the first packet (iid = value). */
enum {
	TL_A_CORR = 1, TL_A_RET, TL_A_BYTES, TL_A_GBPS, TL_A_DEVICE, TL_A_STREAM,
	TL_A_GRAPH, TL_A_GRAPH_NODE, TL_A_LAUNCHER, TL_A_MATCH, TL_A_OFF_NS, TL_A_MESSAGE,
	TL_A_DEPTH, TL_A_REPLAYED, TL_A_FILE, TL_A_STALLS, TL_A_LINES, TL_A_UNSAMPLED_NS, TL_A_NR
};
static const char *const tl_arg_names[TL_A_NR] = {
	[TL_A_CORR] = "correlation_id", [TL_A_RET] = "return", [TL_A_BYTES] = "bytes",
	[TL_A_GBPS] = "GB/s", [TL_A_DEVICE] = "device", [TL_A_STREAM] = "stream",
	[TL_A_GRAPH] = "graph_id", [TL_A_GRAPH_NODE] = "graph_node_id",
	[TL_A_LAUNCHER] = "launched by", [TL_A_MATCH] = "launch stack",
	[TL_A_OFF_NS] = "off-CPU ns", [TL_A_MESSAGE] = "message", [TL_A_DEPTH] = "depth",
	[TL_A_REPLAYED] = "replayed work",
	[TL_A_FILE] = "file", [TL_A_STALLS] = "pc samples: stalls",
	[TL_A_LINES] = "pc samples: lines",
	[TL_A_UNSAMPLED_NS] = "GPU ns unsampled",
};

struct timeline {
	struct session_tool tool;
	struct session *s;
	enum profile_view view;

	struct tl_api *apis;
	size_t nr_apis, apis_cap;
	struct tl_sample *samples;
	size_t nr_samples, samples_cap;
	struct tl_off *offs;
	size_t nr_offs, offs_cap;
	size_t nr_short;		/* off-CPU "short blocks" records */
	struct tl_gpu *gpus;
	size_t nr_gpus, gpus_cap;
	struct tl_graph *graphs;	/* graph launches (tl__build) */
	size_t nr_graphs, graphs_cap;
	struct u64map devices;		/* device -> name (char *) */

	struct tl_track *tracks;
	size_t nr_tracks, tracks_cap;
	struct bmap track_idx;		/* struct tl_tkey -> index + 1 */
	struct tl_slice *slices;
	size_t nr_slices, slices_cap;
	char **msgs;			/* NVTX messages, by slice ref */
	size_t nr_msgs, msgs_cap;
	size_t nr_cut;			/* slices cut to fit the last lane */
	struct tl_count *counts;	/* GPU memory counters, in replay order */
	size_t nr_counts, counts_cap;
	uint64_t *mem_bytes;		/* TL_S_MEM slices' sizes, by ref */
	size_t nr_mem, mem_cap;
	size_t nr_flows;

	/* interning */
	struct bmap names;		/* event name -> iid */
	char **name_strs;		/* iid - 1 -> name */
	size_t nr_names, name_strs_cap;
	uint8_t *name_sent;		/* by iid */
	size_t name_sent_cap;
	uint64_t *flow_ids;		/* per API record, the flows it starts ... */
	uint32_t *flow_off;		/* ... flow_ids[flow_off[i], flow_off[i + 1]) */
	uint8_t *stack_sent, *frame_sent;	/* by profile id */
	size_t stack_sent_cap, frame_sent_cap;
	struct bmap modules;		/* module name -> mapping iid */
	uint32_t nr_modules;
	struct bmap build_ids;		/* module name -> its DSO, one with a build-id */

	/* the next packet's interned data */
	Perfetto__Protos__EventName *i_names;
	size_t n_i_names, i_names_cap;
	Perfetto__Protos__InternedString *i_funcs, *i_paths, *i_bids;
	size_t n_i_funcs, i_funcs_cap, n_i_paths, i_paths_cap, n_i_bids, i_bids_cap;
	Perfetto__Protos__Frame *i_frames;
	size_t n_i_frames, i_frames_cap;
	Perfetto__Protos__Callstack *i_stacks;
	size_t n_i_stacks, i_stacks_cap;
	uint64_t *i_ids;		/* frame ids of the callstacks, back to back */
	size_t n_i_ids, i_ids_cap;
	Perfetto__Protos__Mapping *i_maps;
	size_t n_i_maps, i_maps_cap;
	uint64_t *i_map_paths;		/* one path id per mapping */
	size_t i_map_paths_cap;
	void **ptrs;			/* pointer arrays protobuf-c wants */
	size_t ptrs_cap;
	char **fixed;			/* tl__text()'s copies */
	size_t nr_fixed, fixed_cap;

	uint8_t *buf;			/* one packed packet */
	size_t buf_cap;
	FILE *fp;
	bool err;
	bool first;			/* the next packet starts the sequence */
	uint64_t nr_packets;
};

#define TL_TOOL "timeline"

/* ---- pass 1 and the subscriptions ------------------------------------------------------- */

static int tl__record(struct session *s, const struct xpu_record *rec, int pass, void *priv)
{
	struct timeline *tl = priv;

	if (pass != 1)
		return 0;
	if (rec->type == XPU_REC_GPU_API && rec->body_size >= sizeof(struct xpu_gpu_api)) {
		struct xpu_gpu_api a;

		memcpy(&a, rec->body, sizeof(a));
		if (a.end < a.start)
			return 0;
		tl->apis = xgrow(tl->apis, &tl->apis_cap, tl->nr_apis + 1, sizeof(*tl->apis));
		tl->apis[tl->nr_apis++] = (struct tl_api){
			.start = a.start, .end = a.end, .corr = a.correlation_id, .pid = a.pid,
			.tid = a.tid, .domain = a.domain, .cbid = a.cbid, .ret = a.ret,
		};
	} else if (rec->type == XPU_REC_GPU_DEVICE &&
		   rec->body_size >= sizeof(struct xpu_gpu_device)) {
		struct xpu_gpu_device d;
		const char *name = xpu_record__string(rec, sizeof(d));
		uint64_t *slot;

		memcpy(&d, rec->body, sizeof(d));
		slot = u64map__slot(&tl->devices, d.id);
		if (!*slot && name)
			*slot = (uint64_t)(uintptr_t)utf8__xdup(name);
	}
	return 0;
}

/* The join resolves the correlation records of calls that launched work;
 * every call's stack is wanted here. */
static int tl__pass1_done(struct session *s, void *priv)
{
	struct timeline *tl = priv;
	struct gpu_join *g = gpu_join__find(s);

	for (size_t i = 0; i < tl->nr_apis; i++)
		gpu_join__want_corr(g, tl->apis[i].pid, tl->apis[i].corr);
	return 0;
}

static void tl__cpu(struct session *s, const struct cpu_event *ev, void *priv)
{
	struct timeline *tl = priv;

	if (ev->kind == CPU_EVENT_SAMPLE) {
		if (!(tl->view & ORIGIN_CPU))
			return;
		tl->samples = xgrow(tl->samples, &tl->samples_cap, tl->nr_samples + 1,
				    sizeof(*tl->samples));
		tl->samples[tl->nr_samples++] = (struct tl_sample){
			.time = ev->start, .pid = ev->pid, .tid = ev->tid, .stack = ev->stack,
		};
		return;
	}
	if (!(tl->view & (ORIGIN_CPU | ORIGIN_OFFCPU)))
		return;
	tl->offs = xgrow(tl->offs, &tl->offs_cap, tl->nr_offs + 1, sizeof(*tl->offs));
	tl->offs[tl->nr_offs++] = (struct tl_off){
		.start = ev->start, .end = ev->end, .off_ns = ev->off_ns, .pid = ev->pid,
		.tid = ev->tid, .comm = ev->comm, .stack = ev->stack,
	};
}

/* A kernel's GPU PC samples (gpu_join__pc_split), summed by stall reason
 * (the [stall] leaf) and by source line (the "(file:line)" of the [sass]
 * frame above it; the PC where it has none). */
#define TL_SHARES	16		/* distinct reasons or lines kept; the rest "other" */
#define TL_SHARES_SHOWN	5

struct tl_share {
	const char *key;
	size_t len;
	double frac;
};

struct tl_shares {
	struct session *s;
	struct tl_share r[2][TL_SHARES + 1];	/* [0] reasons, [1] lines; + "other" */
	size_t n[2];
};

static void tl__share_add(struct tl_shares *sh, int k, const char *key, size_t len, double frac)
{
	struct tl_share *r = sh->r[k];
	size_t i;

	for (i = 0; i < sh->n[k]; i++)
		if (r[i].len == len && !memcmp(r[i].key, key, len))
			break;
	if (i == sh->n[k] && sh->n[k] >= TL_SHARES) {	/* full: to "other" (the last slot) */
		key = "other";
		len = 5;
		for (i = 0; i < sh->n[k]; i++)
			if (r[i].len == len && !memcmp(r[i].key, key, len))
				break;
	}
	if (i == sh->n[k]) {
		r[i] = (struct tl_share){ key, len, 0 };
		sh->n[k]++;
	}
	r[i].frac += frac;
}

static void tl__pc_share(void *priv, uint32_t stack, double weight, double frac)
{
	struct tl_shares *sh = priv;
	size_t n;
	const uint32_t *fr = profile__stack(&sh->s->profile, stack, &n);
	const char *stall, *sass, *open, *close;

	(void)weight;
	if (n < 2)
		return;
	stall = profile__frame(&sh->s->profile, fr[n - 1])->name;
	sass = profile__frame(&sh->s->profile, fr[n - 2])->name;
	if (!strncmp(stall, "[stall]", 7))
		stall += 7;
	if (!strncmp(sass, "[sass]", 6))
		sass += 6;
	tl__share_add(sh, 0, stall, strlen(stall), frac);
	open = strrchr(sass, '(');
	close = open ? strchr(open, ')') : NULL;
	if (open && close)
		tl__share_add(sh, 1, open + 1, (size_t)(close - open - 1), frac);
	else
		tl__share_add(sh, 1, sass, strlen(sass), frac);
}

static int tl_share__cmp(const void *a, const void *b)
{
	const struct tl_share *x = a, *y = b;

	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->len != y->len ? (x->len < y->len ? -1 : 1) : memcmp(x->key, y->key, x->len);
}

/* "long_scoreboard 57.6%, lg_throttle 39.2%, ..." (the largest first). */
static char *tl__shares_text(struct tl_share *r, size_t n)
{
	char buf[1024];
	size_t len = 0;

	xpu_qsort(r, n, sizeof(*r), tl_share__cmp);
	buf[0] = '\0';
	for (size_t i = 0; i < n && i < TL_SHARES_SHOWN && len < sizeof(buf) - 1; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%.*s %.1f%%", i ? ", " : "",
					(int)r[i].len, r[i].key, 100.0 * r[i].frac);
	if (n > TL_SHARES_SHOWN && len < sizeof(buf) - 1)
		snprintf(buf + len, sizeof(buf) - len, ", ...");
	return utf8__xdup(buf);
}

static void tl__gpu(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct timeline *tl = priv;
	struct tl_shares sh = { .s = s };
	struct tl_gpu *w;

	if (!(tl->view & ORIGIN_GPU) || ev->end < ev->start)
		return;
	tl->gpus = xgrow(tl->gpus, &tl->gpus_cap, tl->nr_gpus + 1, sizeof(*tl->gpus));
	w = &tl->gpus[tl->nr_gpus++];
	*w = (struct tl_gpu){
		.start = ev->start, .end = ev->end, .ns = ev->ns, .corr = ev->correlation_id,
		.bytes = ev->bytes, .graph_node_id = ev->graph_node_id, .kind = ev->kind,
		.match = ev->match, .pid = ev->pid, .tid = ev->tid, .device = ev->device,
		.stream = ev->stream, .graph_id = ev->graph_id, .leaf = ev->leaf,
		.comm = ev->comm,
	};
	if (gpu_join__pc_split(s, ev, tl__pc_share, &sh) && sh.n[0]) {
		w->stalls = tl__shares_text(sh.r[0], sh.n[0]);
		w->lines = tl__shares_text(sh.r[1], sh.n[1]);
	}
}

static void tl__delete(void *priv)
{
	struct timeline *tl = priv;
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&tl->devices, &i, &k, &v); )
		free((char *)(uintptr_t)v);
	u64map__exit(&tl->devices);
	for (size_t i = 0; i < tl->nr_tracks; i++)
		free(tl->tracks[i].name);
	for (size_t i = 0; i < tl->nr_msgs; i++)
		free(tl->msgs[i]);
	for (size_t i = 0; i < tl->nr_names; i++)
		free(tl->name_strs[i]);
	free(tl->name_strs);
	for (size_t i = 0; i < tl->nr_fixed; i++)
		free(tl->fixed[i]);
	free(tl->fixed);
	free(tl->name_sent);
	free(tl->flow_ids);
	free(tl->flow_off);
	bmap__exit(&tl->track_idx, NULL);
	bmap__exit(&tl->names, NULL);
	bmap__exit(&tl->modules, NULL);
	free(tl->apis);
	free(tl->samples);
	free(tl->offs);
	for (size_t i = 0; i < tl->nr_gpus; i++) {
		free(tl->gpus[i].stalls);
		free(tl->gpus[i].lines);
	}
	free(tl->gpus);
	free(tl->graphs);
	bmap__exit(&tl->build_ids, NULL);
	free(tl->i_bids);
	free(tl->tracks);
	free(tl->slices);
	free(tl->counts);
	free(tl->mem_bytes);
	free(tl->msgs);
	free(tl->stack_sent);
	free(tl->frame_sent);
	free(tl->i_names);
	free(tl->i_funcs);
	free(tl->i_paths);
	free(tl->i_frames);
	free(tl->i_stacks);
	free(tl->i_ids);
	free(tl->i_maps);
	free(tl->i_map_paths);
	free(tl->ptrs);
	free(tl->buf);
	free(tl);
}

static int timeline__prepare(struct session *s, const struct report_opts *o)
{
	struct timeline *tl;

	if (o->view & (ORIGIN_GPU_IDLE | ORIGIN_SYNC_WAIT))
		die(XPU_EXIT_USAGE, "--timeline shows GPU gaps and synchronizing calls as they "
		    "happened: give it no --gpu-idle or --sync-wait (of the views it takes "
		    "--cpu-only, --gpu-only, --off-cpu, --wall)");
	tl = xzalloc(sizeof(*tl));
	tl->s = s;
	tl->view = o->view;
	tl->tool = (struct session_tool){ .name = TL_TOOL, .record = tl__record,
					  .pass1_done = tl__pass1_done, .exit = tl__delete,
					  .priv = tl };
	u64map__init(&tl->devices);
	bmap__init(&tl->track_idx);
	bmap__init(&tl->names);
	bmap__init(&tl->modules);
	bmap__init(&tl->build_ids);
	session__add_tool(s, &tl->tool);
	gpu_memory__attach(s, &o->gpu_mem);	/* its counters and large allocations */
	session__subscribe_cpu(s, tl__cpu, tl);
	gpu_join__subscribe(gpu_join__find(s), tl__gpu, tl);
	return 0;
}

/* ---- tracks ----------------------------------------------------------------------------- */

static uint32_t tl__track(struct timeline *tl, enum tl_tkind kind, uint32_t a, uint32_t b,
			  uint32_t c, bool *created)
{
	struct tl_tkey key = { kind, a, b, c };
	bool found;
	void **slot = bmap__slot(&tl->track_idx, &key, sizeof(key), &found);

	*created = !found;
	if (found)
		return (uint32_t)(uintptr_t)*slot - 1;
	tl->tracks = xgrow(tl->tracks, &tl->tracks_cap, tl->nr_tracks + 1, sizeof(*tl->tracks));
	tl->tracks[tl->nr_tracks] = (struct tl_track){ .kind = kind, .nr_lanes = 1 };
	*slot = (void *)(uintptr_t)(tl->nr_tracks + 1);
	return (uint32_t)tl->nr_tracks++;
}

static const char *tl__comm(struct timeline *tl, uint32_t pid, uint32_t tid, uint64_t time)
{
	return profile__str(&tl->s->profile, machine__comm(&tl->s->machine, pid, tid, time));
}

static uint32_t tl__process(struct timeline *tl, uint32_t pid, uint64_t time)
{
	bool created;
	uint32_t t = tl__track(tl, TL_PROCESS, pid, 0, 0, &created);

	if (created) {
		tl->tracks[t].pid = pid;
		/* the name it had last: a thread renamed after its first
		 * sample (prctl(PR_SET_NAME), pthread_setname_np) by its new
		 * name, as --folded's later lines and pprof's labels say */
		tl->tracks[t].name = utf8__xdup(tl__comm(tl, pid, pid, UINT64_MAX));
	}
	return t;
}

static uint32_t tl__thread(struct timeline *tl, uint32_t pid, uint32_t tid, uint64_t time)
{
	bool created;
	uint32_t p = tl__process(tl, pid, time);
	uint32_t t = tl__track(tl, TL_THREAD, pid, tid, 0, &created);

	if (created) {
		tl->tracks[t] = (struct tl_track){
			.kind = TL_THREAD, .parent = p + 1, .pid = pid, .tid = tid,
			.name = utf8__xdup(tl__comm(tl, pid, tid, UINT64_MAX)), .nr_lanes = 1,
		};
	}
	return t;
}

/* A named child (id, id2) of track parent, rank among its siblings. */
static uint32_t tl__child2(struct timeline *tl, uint32_t parent, uint32_t id, uint32_t id2,
			   const char *name, int32_t rank)
{
	bool created;
	uint32_t t = tl__track(tl, TL_CHILD, parent, id, id2, &created);

	if (created) {
		tl->tracks[t].parent = parent + 1;
		tl->tracks[t].name = utf8__xdup(name);
		tl->tracks[t].rank = rank;
		tl->tracks[t].pid = tl->tracks[parent].pid;
		tl->tracks[t].tid = tl->tracks[parent].tid;
	}
	return t;
}

static uint32_t tl__child(struct timeline *tl, uint32_t parent, uint32_t id, const char *name,
			  int32_t rank)
{
	return tl__child2(tl, parent, id, 0, name, rank);
}

enum { TL_C_NVTX, TL_C_API, TL_C_OFF, TL_C_NVTX_SE, TL_C_SYNC };

static uint32_t tl__gpu_track(struct timeline *tl, const struct tl_gpu *g)
{
	const uint64_t *dname = u64map__find(&tl->devices, g->device);
	bool created;
	uint32_t d = tl__track(tl, TL_GPU, g->device, 0, 0, &created);
	char name[512];

	if (created) {
		if (dname)
			snprintf(name, sizeof(name), "GPU %u: %s", g->device,
				 (const char *)(uintptr_t)*dname);
		else
			snprintf(name, sizeof(name), "GPU %u", g->device);
		tl->tracks[d].name = utf8__xdup(name);
		tl->tracks[d].rank = (int32_t)g->device;
	}
	snprintf(name, sizeof(name), "stream %u: %s (pid %u)", g->stream,
		 profile__str(&tl->s->profile, g->comm), g->pid);
	/* streams under their device, ordered by number */
	return tl__child2(tl, d, g->pid, g->stream, name, (int32_t)(g->stream & 0x7fffffff));
}

/* ---- slices ----------------------------------------------------------------------------- */

static uint32_t tl__name(struct timeline *tl, const char *name)
{
	size_t len = strlen(name);
	bool found;
	void **slot = bmap__slot(&tl->names, name, len, &found);

	if (!found) {
		tl->name_strs = xgrow(tl->name_strs, &tl->name_strs_cap, tl->nr_names + 1,
				      sizeof(*tl->name_strs));
		tl->name_strs[tl->nr_names] = utf8__xdup(name);
		*slot = (void *)(uintptr_t)++tl->nr_names;
	}
	return (uint32_t)(uintptr_t)*slot;
}

static void tl__slice(struct timeline *tl, uint32_t track, uint64_t start, uint64_t end,
		      const char *name, uint32_t stack, enum tl_skind kind, uint32_t ref)
{
	tl->slices = xgrow(tl->slices, &tl->slices_cap, tl->nr_slices + 1, sizeof(*tl->slices));
	tl->slices[tl->nr_slices++] = (struct tl_slice){
		.start = start, .end = end < start ? start : end, .track = track,
		.name = tl__name(tl, name), .stack = stack, .kind = kind, .ref = ref,
	};
}

/* "[GPU_Kernel]name" -> "name", "[GPU_Memcpy HtoD]" -> "Memcpy HtoD",
 * "[GPU_Sync]StreamSynchronize" -> "Sync StreamSynchronize". */
static const char *tl__gpu_name(const char *leaf, char *buf, size_t size)
{
	const char *close = strchr(leaf, ']');

	if (strncmp(leaf, "[GPU_", 5) || !close)
		return leaf;
	if (!strncmp(leaf, "[GPU_Kernel]", 12))
		return leaf + 12;
	snprintf(buf, size, "%.*s%s%s", (int)(close - leaf - 5), leaf + 5, close[1] ? " " : "",
		 close + 1);
	return buf;
}

static bool tl__keep(struct timeline *tl, uint32_t pid, uint32_t tid, uint64_t time)
{
	const struct filter *f = &tl->s->filter;

	if (!filter__match_task(f, pid, tid, time))
		return false;
	return !f->nr_comms || filter__match_comm(f, tl__comm(tl, pid, tid, time));
}

/* Several inputs (-i DIR of rotated or triggered files, -i a -i b): a
 * top-level track "recording files" with a slice per file over the span of
 * its records, named by the file, so that what each file covers, and the
 * gaps between them, show on the time axis. */
static void tl__files(struct timeline *tl)
{
	struct session *s = tl->s;
	uint32_t t = 0;
	bool created;

	if (s->nr_inputs < 2)
		return;
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct session_input *in = &s->inputs[i];
		const char *base = strrchr(in->path, '/');

		if (!in->first_time)
			continue;
		if (!t) {
			t = tl__track(tl, TL_FILES, 0, 0, 0, &created) + 1;
			tl->tracks[t - 1].name = xstrdup("recording files");
		}
		tl__slice(tl, t - 1, in->first_time, in->last_time, base ? base + 1 : in->path, 0,
			  TL_S_FILE, (uint32_t)i);
	}
}

/* Adds work w of track t to its graph launch: the work of one launch (its
 * API call's correlation id) on one stream. */
static void tl__graph(struct timeline *tl, struct bmap *graph_of, const struct tl_gpu *w,
		      uint32_t t)
{
	struct { uint64_t corr; uint32_t pid, track; } key = { w->corr, w->pid, t };
	bool found;
	void **slot = bmap__slot(graph_of, &key, sizeof(key), &found);
	struct tl_graph *gr;

	if (!found) {
		tl->graphs = xgrow(tl->graphs, &tl->graphs_cap, tl->nr_graphs + 1,
				   sizeof(*tl->graphs));
		tl->graphs[tl->nr_graphs] = (struct tl_graph){
			.start = w->start, .end = w->end, .corr = w->corr, .pid = w->pid,
			.graph_id = w->graph_id, .track = t,
		};
		*slot = (void *)(uintptr_t)++tl->nr_graphs;
	}
	gr = &tl->graphs[(uintptr_t)*slot - 1];
	if (w->start < gr->start)
		gr->start = w->start;
	if (w->end > gr->end)
		gr->end = w->end;
	gr->n++;
}

/* ---- GPU memory ------------------------------------------------------------------------- */

static void tl__write(struct timeline *tl, pb_packet *pkt);

enum { TL_M_ALLOCATED, TL_M_RESERVED, TL_M_LARGE, TL_M_KIND };	/* + memory kind */
#define TL_MEM_LARGE (64ULL << 20)

static const char *const tl_mem_kinds[GPU_MEM_NR_KINDS] = {
	"unknown", "pageable", "pinned", "device", "array", "managed", "device static",
	"managed static",
};

/* The track of one memory counter (or the large allocations) of a space. */
static uint32_t tl__mem_track(struct timeline *tl, const struct gpu_mem_space *sp, int what)
{
	uint32_t p = tl__process(tl, sp->pid, 0);
	char name[96];

	if (what == TL_M_ALLOCATED)
		snprintf(name, sizeof(name), "GPU %u memory: allocated (PyTorch)", sp->device);
	else if (what == TL_M_RESERVED)
		snprintf(name, sizeof(name), "GPU %u memory: reserved (PyTorch segments)",
			 sp->device);
	else if (what == TL_M_LARGE)
		snprintf(name, sizeof(name), "GPU %u memory: large allocations", sp->device);
	else
		snprintf(name, sizeof(name), "GPU %u memory: CUDA %s", sp->device,
			 tl_mem_kinds[what - TL_M_KIND]);
	/* ids above the thread children's, a pair per (device, what) */
	return tl__child2(tl, p, 0x10000 + sp->device, (uint32_t)what, name, 100 + what);
}

static void tl__count(struct timeline *tl, uint32_t track, uint64_t time, uint64_t value)
{
	tl->tracks[track].counter = true;
	tl->counts = xgrow(tl->counts, &tl->counts_cap, tl->nr_counts + 1, sizeof(*tl->counts));
	tl->counts[tl->nr_counts++] = (struct tl_count){ time, track, (int64_t)value };
}

struct tl_mem {
	struct timeline *tl;
	const struct gpu_mem *m;
	uint64_t (*last)[TL_M_KIND + GPU_MEM_NR_KINDS];	/* per space: the value + 1 */
};

/* Each counter of the event's space whose value changed. */
static void tl__mem_point(const struct gpu_mem_point *pt, void *priv)
{
	struct tl_mem *tm = priv;
	const struct gpu_mem_space *sp = &tm->m->spaces[pt->space];
	uint64_t *last = tm->last[pt->space];
	uint64_t v[TL_M_KIND + GPU_MEM_NR_KINDS] = { 0 };

	if (!tl__keep(tm->tl, sp->pid, 0, FILTER_NO_TIME) ||
	    !filter__match_device(&tm->tl->s->filter, sp->device))
		return;
	v[TL_M_ALLOCATED] = pt->live[GPU_MEM_BLOCK];
	v[TL_M_RESERVED] = pt->live[GPU_MEM_CUDA];
	for (int k = 0; k < GPU_MEM_NR_KINDS; k++)
		v[TL_M_KIND + k] = pt->kind[k];
	for (int w = 0; w < TL_M_KIND + GPU_MEM_NR_KINDS; w++) {
		if (w == TL_M_LARGE || ((w == TL_M_ALLOCATED || w == TL_M_RESERVED) && !sp->torch))
			continue;
		if (last[w] == v[w] + 1 || (!last[w] && !v[w]))
			continue;	/* unchanged, or a kind never used */
		last[w] = v[w] + 1;
		tl__count(tm->tl, tl__mem_track(tm->tl, sp, w), pt->ev->time, v[w]);
	}
}

/* The counters, and a slice per large allocation with its stack. */
static void tl__memory(struct timeline *tl)
{
	const struct gpu_mem *m = gpu_memory__result(gpu_memory__find(tl->s));
	struct tl_mem tm = { tl, m, NULL };
	char buf[32];

	if (!m || !m->nr_evs)
		return;
	tm.last = xcalloc(m->nr_spaces + 1, sizeof(*tm.last));
	gpu_mem__replay(m, tl__mem_point, &tm);
	free(tm.last);
	for (size_t i = 0; i < m->nr_blks; i++) {
		const struct gpu_mem_blk *b = &m->blks[i];
		const struct gpu_mem_space *sp = &m->spaces[b->space];
		const struct gpu_mem_ev *a = &m->evs[b->ev];
		uint64_t th = sp->peak / 100 < TL_MEM_LARGE ? sp->peak / 100 : TL_MEM_LARGE;
		uint64_t end = b->free_seq != UINT64_MAX ? m->evs[b->free_seq].time :
			       tl->s->last_time;

		if (a->layer != gpu_mem_space__layer(sp) || a->bytes < th || !th ||
		    !tl__keep(tl, sp->pid, 0, FILTER_NO_TIME) ||
		    !filter__match_device(&tl->s->filter, sp->device))
			continue;
		tl->mem_bytes = xgrow(tl->mem_bytes, &tl->mem_cap, tl->nr_mem + 1,
				      sizeof(*tl->mem_bytes));
		tl->mem_bytes[tl->nr_mem] = a->bytes;
		tl__slice(tl, tl__mem_track(tl, sp, TL_M_LARGE), a->time, end,
			  gpu_mem__bytes_str(a->bytes, buf, sizeof(buf)), a->stack, TL_S_MEM,
			  (uint32_t)tl->nr_mem++);
	}
}

/* The counters' values, in replay order (Perfetto sorts by time). */
static void tl__counters(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nr_counts && !tl->err; i++) {
		pb_packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;

		pkt.has_timestamp = true;
		pkt.timestamp = tl->counts[i].time;
		ev.has_track_uuid = ev.has_type = ev.has_counter_value = true;
		ev.track_uuid = tl->tracks[tl->counts[i].track].uuid;
		ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
		ev.counter_value = tl->counts[i].value;
		pkt.track_event = &ev;
		tl__write(tl, &pkt);
	}
}

static void tl__build(struct timeline *tl)
{
	struct session *s = tl->s;
	const struct gpu_join *g = gpu_join__find(s);
	struct gpu_nvtx *nv = gpu_nvtx__find(s);
	struct u64map api_of;		/* pid << 32 | corr -> api index + 1 */
	struct bmap graph_of;		/* (pid, corr, track) -> graph index + 1 */
	size_t k;
	char name[4096], buf[512];

	u64map__init_seq(&api_of);
	bmap__init(&graph_of);
	/* threads first, in order of their first sample, so that the tracks of
	 * the busiest program come first */
	for (size_t i = 0; i < tl->nr_samples; i++)
		tl__thread(tl, tl->samples[i].pid, tl->samples[i].tid, tl->samples[i].time);
	for (size_t i = 0; i < tl->nr_apis; i++) {
		const struct tl_api *a = &tl->apis[i];
		const char *api = gpu_cbid__name(a->domain, a->cbid);
		uint32_t t, stack = 0, tid;

		if (!tl__keep(tl, a->pid, a->tid, a->start))
			continue;
		t = tl__child(tl, tl__thread(tl, a->pid, a->tid, a->start), TL_C_API, "CUDA API",
			      TL_C_API);
		if (!api) {
			snprintf(buf, sizeof(buf), "%s_%u", a->domain == XPU_API_DRIVER ?
				 "cuda_driver_api" : "cuda_api", a->cbid);
			api = buf;
		}
		gpu_join__call_stack(g, a->pid, a->corr, &stack, &tid);
		tl__slice(tl, t, a->start, a->end, api, stack, TL_S_API, (uint32_t)i);
		if (a->corr < (1ULL << 32))
			*u64map__slot(&api_of, (uint64_t)a->pid << 32 | a->corr) = i + 1;
	}
	for (size_t i = 0; i < tl->nr_offs; i++) {
		const struct tl_off *o = &tl->offs[i];
		size_t n;
		const uint32_t *fr = profile__stack(&s->profile, o->stack, &n);
		const char *reason = n ? profile__frame(&s->profile, fr[n - 1])->name : "[off-cpu]";
		uint32_t t;

		/* the sum of many short blocks since the last such record: no
		 * one interval of its own, so a slice over the time they were
		 * summed in, their total in its "off-CPU ns" (the trace's whole
		 * off-CPU time stays in the file, as in every other output) */
		if (!strcmp(reason, "[off-cpu] short blocks"))
			tl->nr_short++;
		t = tl__child(tl, tl__thread(tl, o->pid, o->tid, o->start), TL_C_OFF, "off-CPU",
			      TL_C_OFF);
		if (!strncmp(reason, "[off-cpu] ", 10))
			reason += 10;
		else if (!strcmp(reason, "[off-cpu]"))	/* no reason known */
			reason = "off-CPU";
		tl__slice(tl, t, o->start, o->end, reason, o->stack, TL_S_OFF, (uint32_t)i);
	}
	for (size_t i = 0; nv && i < gpu_nvtx__nr_ranges(nv); i++) {
		struct gpu_nvtx_range r;
		uint32_t t, th;

		gpu_nvtx__range(nv, i, &r, name, sizeof(name));
		if (!tl__keep(tl, r.pid, r.tid, r.start))
			continue;
		th = tl__thread(tl, r.pid, r.tid, r.start);
		if (r.startend)		/* may end on another thread: the process's */
			t = tl__child(tl, tl->tracks[th].parent - 1, TL_C_NVTX_SE, "NVTX start/end",
				      -1);
		else
			t = tl__child(tl, th, TL_C_NVTX, "NVTX", TL_C_NVTX);
		if (!r.end) {		/* never closed: to the end of the recording */
			r.end = s->last_time > r.start ? s->last_time : r.start;
			strncat(name, " (never closed)", sizeof(name) - strlen(name) - 1);
		}
		tl->msgs = xgrow(tl->msgs, &tl->msgs_cap, tl->nr_msgs + 1, sizeof(*tl->msgs));
		tl->msgs[tl->nr_msgs] = r.message ? utf8__xdup(r.message) : NULL;
		tl__slice(tl, t, r.start, r.end, name, 0, TL_S_NVTX, (uint32_t)tl->nr_msgs++);
	}
	for (size_t i = 0; i < tl->nr_gpus; i++) {
		struct tl_gpu *w = &tl->gpus[i];
		const uint64_t *api = w->corr < (1ULL << 32) ?
			u64map__find(&api_of, (uint64_t)w->pid << 32 | w->corr) : NULL;
		const char *leaf = profile__frame(&s->profile, w->leaf)->name;
		uint32_t t;

		if (w->kind == GPU_KIND_SYNC)	/* no device recorded: the process's waits */
			t = tl__child(tl, tl__process(tl, w->pid, w->start), TL_C_SYNC, "CUDA sync",
				      -2);
		else
			t = tl__gpu_track(tl, w);
		w->api = api ? (uint32_t)*api : 0;
		tl->nr_flows += api != NULL;
		tl__slice(tl, t, w->start, w->end, tl__gpu_name(leaf, buf, sizeof(buf)), 0,
			  TL_S_GPU, (uint32_t)i);
		if (w->graph_id && w->kind != GPU_KIND_SYNC)
			tl__graph(tl, &graph_of, w, t);
	}
	/* a graph launch: a slice around the work it replayed on each stream */
	for (size_t i = 0; i < tl->nr_graphs; i++) {
		const struct tl_graph *gr = &tl->graphs[i];

		snprintf(buf, sizeof(buf), "graph %u", gr->graph_id);
		tl__slice(tl, gr->track, gr->start, gr->end, buf, 0, TL_S_GRAPH, (uint32_t)i);
	}
	bmap__exit(&graph_of, NULL);
	u64map__exit(&api_of);
	tl__memory(tl);
	tl__files(tl);
	/* the flows each API call starts: one per piece of work it launched (a
	 * graph launch starts many), id = the work's index + 1 */
	tl->flow_off = xcalloc(tl->nr_apis + 2, sizeof(*tl->flow_off));
	tl->flow_ids = xcalloc(tl->nr_flows + 1, sizeof(*tl->flow_ids));
	for (size_t i = 0; i < tl->nr_gpus; i++)
		if (tl->gpus[i].api)
			tl->flow_off[tl->gpus[i].api + 1]++;
	for (k = 1; k <= tl->nr_apis + 1; k++)
		tl->flow_off[k] += tl->flow_off[k - 1];
	for (size_t i = 0; i < tl->nr_gpus; i++)	/* flow_off[a + 1]: a's fill point */
		if (tl->gpus[i].api)
			tl->flow_ids[tl->flow_off[tl->gpus[i].api]++] = i + 1;
	/* now flow_off[a + 1] is a's end, flow_off[a] its start */
}

static int tl_slice__cmp(const void *a, const void *b)
{
	const struct tl_slice *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)		/* the enclosing one first */
		return x->end > y->end ? -1 : 1;
	if ((x->kind == TL_S_GRAPH) != (y->kind == TL_S_GRAPH))	/* a graph around its work */
		return x->kind == TL_S_GRAPH ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* Each track's slices into lanes in which they nest: a slice goes to the
 * first lane whose innermost open slice encloses it (or has none open). */
static void tl__lanes(struct timeline *tl)
{
	uint64_t *open[TL_MAX_LANES] = { 0 };
	size_t depth[TL_MAX_LANES] = { 0 }, cap[TL_MAX_LANES] = { 0 };

	xpu_qsort(tl->slices, tl->nr_slices, sizeof(*tl->slices), tl_slice__cmp);
	for (size_t i = 0; i < tl->nr_slices; i++) {
		struct tl_slice *sl = &tl->slices[i];
		struct tl_track *t = &tl->tracks[sl->track];
		uint32_t l;

		if (!i || sl->track != sl[-1].track)
			memset(depth, 0, sizeof(depth));
		for (l = 0; l < TL_MAX_LANES; l++) {
			while (depth[l] && open[l][depth[l] - 1] <= sl->start)
				depth[l]--;
			if (!depth[l] || open[l][depth[l] - 1] >= sl->end)
				break;
		}
		if (l == TL_MAX_LANES) {	/* pathological: cut it to fit */
			l = TL_MAX_LANES - 1;
			sl->end = open[l][depth[l] - 1];
			tl->nr_cut++;
		}
		sl->lane = l;
		if (l + 1 > t->nr_lanes)
			t->nr_lanes = l + 1;
		open[l] = xgrow(open[l], &cap[l], depth[l] + 1, sizeof(**open));
		open[l][depth[l]++] = sl->end;
	}
	for (size_t l = 0; l < TL_MAX_LANES; l++)
		free(open[l]);
	/* lanes apart, for the writer's walk */
	xpu_qsort(tl->slices, tl->nr_slices, sizeof(*tl->slices), tl_slice__cmp);
}

/* ---- the writer ------------------------------------------------------------------------- */

/* Pointers to the n elements of base, at tl->ptrs[*used...]. */
static void tl__ptrs(struct timeline *tl, size_t *used, void *base, size_t n, size_t esize)
{
	for (size_t i = 0; i < n; i++)
		tl->ptrs[(*used)++] = (char *)base + i * esize;
}

static void tl__put_varint(uint8_t *p, size_t *len, uint64_t v)
{
	while (v >= 0x80) {
		p[(*len)++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[(*len)++] = (uint8_t)v;
}

/* Writes pkt as one "packet" field of the Trace message, with the pending
 * interned data and the sequence's fields. */
static void tl__write(struct timeline *tl, pb_packet *pkt)
{
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	size_t used = 0, off = 0, len, hlen = 0;
	uint8_t hdr[16];

	if (tl->err)
		return;
	if (tl->n_i_names || tl->n_i_funcs || tl->n_i_frames || tl->n_i_stacks || tl->n_i_maps) {
		/* pointers only now: the arrays may have moved while growing */
		tl->ptrs = xgrow(tl->ptrs, &tl->ptrs_cap, tl->n_i_names + tl->n_i_funcs +
				 tl->n_i_frames + tl->n_i_stacks + tl->n_i_maps + tl->n_i_paths +
				 tl->n_i_bids, sizeof(*tl->ptrs));
		in.event_names = (Perfetto__Protos__EventName **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_names, in.n_event_names = tl->n_i_names,
			 sizeof(*tl->i_names));
		in.function_names = (Perfetto__Protos__InternedString **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_funcs, in.n_function_names = tl->n_i_funcs,
			 sizeof(*tl->i_funcs));
		in.frames = (Perfetto__Protos__Frame **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_frames, in.n_frames = tl->n_i_frames,
			 sizeof(*tl->i_frames));
		in.callstacks = (Perfetto__Protos__Callstack **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_stacks, in.n_callstacks = tl->n_i_stacks,
			 sizeof(*tl->i_stacks));
		in.mappings = (Perfetto__Protos__Mapping **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_maps, in.n_mappings = tl->n_i_maps, sizeof(*tl->i_maps));
		in.mapping_paths = (Perfetto__Protos__InternedString **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_paths, in.n_mapping_paths = tl->n_i_paths,
			 sizeof(*tl->i_paths));
		in.build_ids = (Perfetto__Protos__InternedString **)tl->ptrs + used;
		tl__ptrs(tl, &used, tl->i_bids, in.n_build_ids = tl->n_i_bids,
			 sizeof(*tl->i_bids));
		for (size_t i = 0; i < tl->n_i_stacks; i++) {
			tl->i_stacks[i].frame_ids = tl->i_ids + off;
			off += tl->i_stacks[i].n_frame_ids;
		}
		for (size_t i = 0; i < tl->n_i_maps; i++)
			tl->i_maps[i].path_string_ids = &tl->i_map_paths[i];
		pkt->interned_data = &in;
	}
	pkt->has_trusted_packet_sequence_id = true;
	pkt->trusted_packet_sequence_id = TL_SEQ;
	pkt->has_sequence_flags = true;
	pkt->sequence_flags = tl->first ?
		PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED :
		PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	tl->first = false;
	len = perfetto__protos__trace_packet__get_packed_size(pkt);
	tl->buf = xgrow(tl->buf, &tl->buf_cap, len, 1);
	perfetto__protos__trace_packet__pack(pkt, tl->buf);
	hdr[hlen++] = 1 << 3 | 2;	/* Trace.packet: field 1, length-delimited */
	tl__put_varint(hdr, &hlen, len);
	if (fwrite(hdr, 1, hlen, tl->fp) != hlen || fwrite(tl->buf, 1, len, tl->fp) != len)
		tl->err = true;
	tl->nr_packets++;
	tl->n_i_names = tl->n_i_funcs = tl->n_i_frames = tl->n_i_stacks = 0;
	tl->n_i_ids = tl->n_i_maps = tl->n_i_paths = tl->n_i_bids = 0;
}

/* s as a string of the trace: Perfetto's strings are UTF-8 (utf8.h), so a
 * name that is not is written as a fixed copy, kept until the end. */
static const char *tl__text(struct timeline *tl, const char *s)
{
	if (utf8__valid(s, strlen(s)))
		return s;
	tl->fixed = xgrow(tl->fixed, &tl->fixed_cap, tl->nr_fixed + 1, sizeof(*tl->fixed));
	return tl->fixed[tl->nr_fixed++] = utf8__xdup(s);
}

static uint64_t tl__module(struct timeline *tl, const char *module)
{
	size_t len = strlen(module);
	bool found;
	void **slot = bmap__slot(&tl->modules, module, len, &found);
	Perfetto__Protos__Mapping *m;
	Perfetto__Protos__InternedString *path, *bid;
	const struct dso *dso;

	if (found)
		return (uint64_t)(uintptr_t)*slot;
	*slot = (void *)(uintptr_t)++tl->nr_modules;
	tl->i_paths = xgrow(tl->i_paths, &tl->i_paths_cap, tl->n_i_paths + 1, sizeof(*tl->i_paths));
	path = &tl->i_paths[tl->n_i_paths++];
	*path = (Perfetto__Protos__InternedString)PERFETTO__PROTOS__INTERNED_STRING__INIT;
	path->has_iid = path->has_str = true;
	path->iid = tl->nr_modules;
	path->str.data = (uint8_t *)tl__text(tl, module);	/* the profile's copy, if UTF-8 */
	path->str.len = strlen((const char *)path->str.data);
	tl->i_maps = xgrow(tl->i_maps, &tl->i_maps_cap, tl->n_i_maps + 1, sizeof(*tl->i_maps));
	tl->i_map_paths = xgrow(tl->i_map_paths, &tl->i_map_paths_cap, tl->n_i_maps + 1,
				sizeof(*tl->i_map_paths));
	tl->i_map_paths[tl->n_i_maps] = tl->nr_modules;
	m = &tl->i_maps[tl->n_i_maps++];
	*m = (Perfetto__Protos__Mapping)PERFETTO__PROTOS__MAPPING__INIT;
	m->has_iid = true;
	m->iid = tl->nr_modules;
	m->n_path_string_ids = 1;
	dso = bmap__find(&tl->build_ids, module, len);
	if (dso) {	/* its build-id, raw bytes, as traced_perf writes it */
		tl->i_bids = xgrow(tl->i_bids, &tl->i_bids_cap, tl->n_i_bids + 1,
				   sizeof(*tl->i_bids));
		bid = &tl->i_bids[tl->n_i_bids++];
		*bid = (Perfetto__Protos__InternedString)PERFETTO__PROTOS__INTERNED_STRING__INIT;
		bid->has_iid = bid->has_str = true;
		bid->iid = tl->nr_modules;
		bid->str.data = (uint8_t *)dso->build_id;
		bid->str.len = dso->build_id_size;
		m->has_build_id = true;
		m->build_id = tl->nr_modules;
	}
	return tl->nr_modules;
}

static bool tl__sent(uint8_t **bits, size_t *cap, uint32_t id)
{
	bool was;

	if ((size_t)id / 8 >= *cap) {
		size_t old = *cap;

		*bits = xgrow(*bits, cap, (size_t)id / 8 + 1, 1);
		memset(*bits + old, 0, *cap - old);
	}
	was = (*bits)[id / 8] & (1u << (id % 8));
	(*bits)[id / 8] |= (uint8_t)(1u << (id % 8));
	return was;
}

/* Stack id as the callstack iid, frame id + 1 as frame and function-name iid. */
static uint64_t tl__callstack(struct timeline *tl, uint32_t stack)
{
	const struct profile *p = &tl->s->profile;
	Perfetto__Protos__Callstack *cs;
	const uint32_t *fr;
	size_t n;

	if (!stack)
		return 0;
	if (tl__sent(&tl->stack_sent, &tl->stack_sent_cap, stack))
		return stack;
	fr = profile__stack(p, stack, &n);
	for (size_t i = 0; i < n; i++) {
		const struct frame *f = profile__frame(p, fr[i]);
		Perfetto__Protos__InternedString *fn;
		Perfetto__Protos__Frame *pf;

		if (tl__sent(&tl->frame_sent, &tl->frame_sent_cap, fr[i]))
			continue;
		tl->i_funcs = xgrow(tl->i_funcs, &tl->i_funcs_cap, tl->n_i_funcs + 1,
				    sizeof(*tl->i_funcs));
		fn = &tl->i_funcs[tl->n_i_funcs++];
		*fn = (Perfetto__Protos__InternedString)PERFETTO__PROTOS__INTERNED_STRING__INIT;
		fn->has_iid = fn->has_str = true;
		fn->iid = fr[i] + 1;
		fn->str.data = (uint8_t *)tl__text(tl, f->name);
		fn->str.len = strlen((const char *)fn->str.data);
		tl->i_frames = xgrow(tl->i_frames, &tl->i_frames_cap, tl->n_i_frames + 1,
				     sizeof(*tl->i_frames));
		pf = &tl->i_frames[tl->n_i_frames++];
		*pf = (Perfetto__Protos__Frame)PERFETTO__PROTOS__FRAME__INIT;
		pf->has_iid = pf->has_function_name_id = pf->has_mapping_id = true;
		pf->has_rel_pc = pf->has_kind = true;
		pf->iid = fr[i] + 1;
		pf->function_name_id = fr[i] + 1;
		/* module "" (report frames: [off-cpu], [nvtx]): a mapping named "" */
		pf->mapping_id = tl__module(tl, f->module);
		pf->rel_pc = f->addr;
		pf->kind = f->kind == FRAME_CPU_KERNEL ? PERFETTO__PROTOS__FRAME__KIND__KIND_KERNEL :
			   PERFETTO__PROTOS__FRAME__KIND__KIND_NATIVE;
	}
	tl->i_stacks = xgrow(tl->i_stacks, &tl->i_stacks_cap, tl->n_i_stacks + 1,
			     sizeof(*tl->i_stacks));
	cs = &tl->i_stacks[tl->n_i_stacks++];
	*cs = (Perfetto__Protos__Callstack)PERFETTO__PROTOS__CALLSTACK__INIT;
	cs->has_iid = true;
	cs->iid = stack;
	cs->n_frame_ids = n;
	tl->i_ids = xgrow(tl->i_ids, &tl->i_ids_cap, tl->n_i_ids + n, sizeof(*tl->i_ids));
	for (size_t i = 0; i < n; i++)		/* root first, as Perfetto wants */
		tl->i_ids[tl->n_i_ids++] = fr[i] + 1;
	return stack;
}

/* The first packet: the clocks, the argument names. */
static void tl__start(struct timeline *tl)
{
	pb_packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[2] = {
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
	};
	Perfetto__Protos__ClockSnapshot__Clock *cp[2] = { &c[0], &c[1] };
	Perfetto__Protos__DebugAnnotationName an[TL_A_NR];
	Perfetto__Protos__DebugAnnotationName *anp[TL_A_NR];
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	const struct xpu_file_header *h = &tl->s->header;

	c[0].has_clock_id = c[0].has_timestamp = true;
	c[0].clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	c[0].timestamp = h->monotonic_ns;
	c[1].has_clock_id = c[1].has_timestamp = true;
	c[1].clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME;
	c[1].timestamp = h->realtime_ns;
	cs.n_clocks = h->realtime_ns ? 2 : 1;
	cs.clocks = cp;
	cs.has_primary_trace_clock = true;
	cs.primary_trace_clock = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	for (int i = 1; i < TL_A_NR; i++) {
		an[i] = (Perfetto__Protos__DebugAnnotationName)
			PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
		an[i].has_iid = true;
		an[i].iid = (uint64_t)i;
		an[i].name = (char *)tl_arg_names[i];
		anp[i - 1] = &an[i];
	}
	in.n_debug_annotation_names = TL_A_NR - 1;
	in.debug_annotation_names = anp;
	pkt.has_timestamp = true;
	pkt.timestamp = h->monotonic_ns;
	pkt.clock_snapshot = &cs;
	/* tl__write() sets interned_data only when it has some of its own */
	tl->first = true;
	pkt.interned_data = &in;
	tl__write(tl, &pkt);
}

static void tl__descriptors(struct timeline *tl)
{
	uint64_t uuid = 1;

	for (size_t i = 0; i < tl->nr_tracks; i++) {
		tl->tracks[i].uuid = uuid;
		uuid += tl->tracks[i].nr_lanes;
	}
	for (size_t i = 0; i < tl->nr_tracks; i++) {
		const struct tl_track *t = &tl->tracks[i];

		for (uint32_t l = 0; l < t->nr_lanes; l++) {
			pb_packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
			Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
			Perfetto__Protos__ProcessDescriptor pd =
				PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
			Perfetto__Protos__ThreadDescriptor td =
				PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
			Perfetto__Protos__CounterDescriptor cd =
				PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
			char name[600];

			d.has_uuid = true;
			d.uuid = t->uuid + l;
			if (t->parent) {
				d.has_parent_uuid = true;
				d.parent_uuid = tl->tracks[t->parent - 1].uuid;
			}
			/* our order for the children of threads (NVTX, CUDA API,
			 * off-CPU) and of devices (streams by number); Perfetto's
			 * for processes and threads */
			if (t->kind == TL_THREAD || t->kind == TL_GPU) {
				d.has_child_ordering = true;
				d.child_ordering =
					PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
			}
			if (t->kind == TL_CHILD) {
				d.has_sibling_order_rank = true;
				d.sibling_order_rank = t->rank;
			}
			switch (t->kind) {
			case TL_PROCESS:
				pd.has_pid = true;
				pd.pid = (int32_t)t->pid;
				pd.process_name = t->name;
				d.process = &pd;
				break;
			case TL_THREAD:
				td.has_pid = td.has_tid = true;
				td.pid = (int32_t)t->pid;
				td.tid = t->tid;
				td.thread_name = t->name;
				d.thread = &td;
				break;
			case TL_CHILD:
			case TL_GPU:
			case TL_FILES:
				if (l)
					snprintf(name, sizeof(name), "%s (%u)", t->name, l + 1);
				else
					snprintf(name, sizeof(name), "%s", t->name);
				name[utf8__trim(name, strlen(name))] = '\0';
				d.name = name;
				break;
			}
			if (t->counter) {
				cd.has_unit = true;
				cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
				d.counter = &cd;
			}
			pkt.track_descriptor = &d;
			tl__write(tl, &pkt);
		}
	}
}

static Perfetto__Protos__DebugAnnotation *tl__arg(Perfetto__Protos__DebugAnnotation *a,
						  size_t *n, int name)
{
	Perfetto__Protos__DebugAnnotation *d = &a[(*n)++];

	*d = (Perfetto__Protos__DebugAnnotation)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	d->has_name_iid = true;
	d->name_iid = (uint64_t)name;
	return d;
}

static void tl__arg_u(Perfetto__Protos__DebugAnnotation *a, size_t *n, int name, uint64_t v)
{
	Perfetto__Protos__DebugAnnotation *d = tl__arg(a, n, name);

	d->has_uint_value = true;
	d->uint_value = v;
}

static void tl__arg_s(Perfetto__Protos__DebugAnnotation *a, size_t *n, int name, char *v)
{
	tl__arg(a, n, name)->string_value = v;
}

static const char *const tl_match_names[] = {
	[GPU_MATCH_ID] = "by correlation id", [GPU_MATCH_TIME] = "by time",
	[GPU_MATCH_NONE] = "unknown",
};

/* The event name iid, its EventName in the packet's interned data the first time. */
static uint64_t tl__event_name(struct timeline *tl, uint32_t iid)
{
	Perfetto__Protos__EventName *en;

	if (tl__sent(&tl->name_sent, &tl->name_sent_cap, iid))
		return iid;
	tl->i_names = xgrow(tl->i_names, &tl->i_names_cap, tl->n_i_names + 1, sizeof(*tl->i_names));
	en = &tl->i_names[tl->n_i_names++];
	*en = (Perfetto__Protos__EventName)PERFETTO__PROTOS__EVENT_NAME__INIT;
	en->has_iid = true;
	en->iid = iid;
	en->name = tl->name_strs[iid - 1];
	return iid;
}

static void tl__event(struct timeline *tl, const struct tl_slice *sl, bool begin, uint64_t ts)
{
	pb_packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__DebugAnnotation a[16], *ap[16], *d;
	uint64_t flow;
	size_t na = 0;
	char launcher[128];

	pkt.has_timestamp = true;
	pkt.timestamp = ts;
	ev.has_track_uuid = ev.has_type = true;
	ev.track_uuid = tl->tracks[sl->track].uuid + sl->lane;
	pkt.track_event = &ev;
	if (!begin) {
		ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		tl__write(tl, &pkt);
		return;
	}
	ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	ev.has_name_iid = true;
	ev.name_iid = tl__event_name(tl, sl->name);
	if (sl->stack) {
		ev.has_callstack_iid = true;
		ev.callstack_iid = tl__callstack(tl, sl->stack);
	}
	switch (sl->kind) {
	case TL_S_API: {
		const struct tl_api *api = &tl->apis[sl->ref];

		tl__arg_u(a, &na, TL_A_CORR, api->corr);
		if (api->ret) {
			d = tl__arg(a, &na, TL_A_RET);
			d->has_int_value = true;
			d->int_value = api->ret;
		}
		ev.n_flow_ids = tl->flow_off[sl->ref + 1] - tl->flow_off[sl->ref];
		ev.flow_ids = tl->flow_ids + tl->flow_off[sl->ref];
		break;
	}
	case TL_S_OFF:
		tl__arg_u(a, &na, TL_A_OFF_NS, tl->offs[sl->ref].off_ns);
		break;
	case TL_S_NVTX:
		if (tl->msgs[sl->ref])
			tl__arg_s(a, &na, TL_A_MESSAGE, tl->msgs[sl->ref]);
		break;
	case TL_S_GRAPH: {
		const struct tl_graph *gr = &tl->graphs[sl->ref];

		tl__arg_u(a, &na, TL_A_CORR, gr->corr);
		tl__arg_u(a, &na, TL_A_GRAPH, gr->graph_id);
		tl__arg_u(a, &na, TL_A_REPLAYED, gr->n);
		break;
	}
	case TL_S_GPU: {
		const struct tl_gpu *w = &tl->gpus[sl->ref];

		tl__arg_u(a, &na, TL_A_CORR, w->corr);
		if (w->kind != GPU_KIND_SYNC) {
			tl__arg_u(a, &na, TL_A_DEVICE, w->device);
			tl__arg_u(a, &na, TL_A_STREAM, w->stream);
		}
		if (w->kind == GPU_KIND_MEMCPY || w->kind == GPU_KIND_MEMSET) {
			tl__arg_u(a, &na, TL_A_BYTES, w->bytes);
			d = tl__arg(a, &na, TL_A_GBPS);
			d->has_double_value = true;	/* bytes per ns is GB/s */
			d->double_value = w->end > w->start ?
				(double)w->bytes / (double)(w->end - w->start) : 0;
		}
		if (w->graph_id) {
			tl__arg_u(a, &na, TL_A_GRAPH, w->graph_id);
			tl__arg_u(a, &na, TL_A_GRAPH_NODE, w->graph_node_id);
		}
		snprintf(launcher, sizeof(launcher), "%s %u/%u",
			 profile__str(&tl->s->profile, w->comm), w->pid, w->tid);
		tl__arg_s(a, &na, TL_A_LAUNCHER, (char *)tl__text(tl, launcher));
		tl__arg_s(a, &na, TL_A_MATCH, (char *)tl_match_names[w->match]);
		if (w->stalls) {
			tl__arg_s(a, &na, TL_A_STALLS, w->stalls);
			tl__arg_s(a, &na, TL_A_LINES, w->lines);
		}
		if (w->ns != w->end - w->start)	/* PC sampling slowed it: its time unsampled */
			tl__arg_u(a, &na, TL_A_UNSAMPLED_NS, w->ns);
		if (w->api) {	/* the flow its API call started ends here */
			flow = sl->ref + 1;
			ev.n_terminating_flow_ids = 1;
			ev.terminating_flow_ids = &flow;
		}
		break;
	}
	case TL_S_FILE:
		tl__arg_s(a, &na, TL_A_FILE, (char *)tl__text(tl, tl->s->inputs[sl->ref].path));
		break;
	case TL_S_MEM:
		tl__arg_u(a, &na, TL_A_BYTES, tl->mem_bytes[sl->ref]);
		break;
	}
	for (size_t i = 0; i < na; i++)
		ap[i] = &a[i];
	ev.n_debug_annotations = na;
	ev.debug_annotations = ap;
	tl__write(tl, &pkt);
}

/* Each lane's slices as BEGIN/END pairs in nesting order. Perfetto sorts
 * by time, events of one time in file order: an END at t comes before a
 * BEGIN at t, a zero-length slice's BEGIN before its END. */
static void tl__slices(struct timeline *tl)
{
	const struct tl_slice **open = NULL;
	size_t depth = 0, cap = 0;

	for (size_t i = 0; i <= tl->nr_slices; i++) {
		const struct tl_slice *sl = i < tl->nr_slices ? &tl->slices[i] : NULL;
		bool same = sl && depth && open[0]->track == sl->track && open[0]->lane == sl->lane;

		while (depth && (!same || open[depth - 1]->end <= sl->start)) {
			depth--;
			tl__event(tl, open[depth], false, open[depth]->end);
		}
		if (!sl)
			break;
		tl__event(tl, sl, true, sl->start);
		open = xgrow(open, &cap, depth + 1, sizeof(*open));
		open[depth++] = sl;
	}
	free(open);
}

static void tl__samples(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nr_samples && !tl->err; i++) {
		const struct tl_sample *sm = &tl->samples[i];
		pb_packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;

		pkt.has_timestamp = true;
		pkt.timestamp = sm->time;
		ps.has_pid = ps.has_tid = true;
		ps.pid = sm->pid;
		ps.tid = sm->tid;
		if (sm->stack) {
			ps.has_callstack_iid = true;
			ps.callstack_iid = tl__callstack(tl, sm->stack);
		}
		pkt.perf_sample = &ps;
		tl__write(tl, &pkt);
	}
}

/* The build-id of each module name (frames name their module by its short
 * name): the first file of that name that has one. */
static void tl__build_ids(struct timeline *tl)
{
	const struct dsos *d = &tl->s->machine.dsos;

	for (size_t i = 0; i < d->nr; i++) {
		struct dso *dso = d->list[i];
		bool found;
		void **slot;

		if (!dso->build_id_size)
			continue;
		slot = bmap__slot(&tl->build_ids, dso->short_name, strlen(dso->short_name), &found);
		if (!found)
			*slot = dso;
	}
}

static int timeline__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	struct timeline *tl = session__tool(s, TL_TOOL);
	size_t events;

	tl->fp = fp;
	tl__build_ids(tl);
	tl__build(tl);
	tl__lanes(tl);
	events = tl->nr_slices + tl->nr_samples;
	if (events > TL_WARN_EVENTS)
		warn("the timeline holds %zu slices and %zu CPU samples: Perfetto UI may be slow "
		     "to open it or run out of memory; show a part with --time START,END (or "
		     "--pid/--tid, --gpu-only, --cpu-only)", tl->nr_slices, tl->nr_samples);
	if (tl->nr_cut)
		warn("timeline: %zu slices overlapped %d others on their track without nesting: "
		     "they end early on the timeline (see -v for the track counts)", tl->nr_cut,
		     TL_MAX_LANES);
	debug(1, "timeline: %zu tracks, %zu slices, %zu samples, %zu flows, %zu short "
	      "off-CPU records left out", tl->nr_tracks, tl->nr_slices, tl->nr_samples,
	      tl->nr_flows, tl->nr_short);
	tl__start(tl);
	tl__descriptors(tl);
	tl__slices(tl);
	tl__counters(tl);
	tl__samples(tl);
	return tl->err || ferror(fp) ? -EIO : 0;
}

static const char *timeline__unavailable(void)
{
	return NULL;
}
#else
static int timeline__prepare(struct session *s, const struct report_opts *o)
{
	return -ENOTSUP;
}

static int timeline__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return -ENOTSUP;
}

static const char *timeline__unavailable(void)
{
	return "--timeline needs xpu-report built with libprotobuf-c (install "
	       "libprotobuf-c-dev, protobuf-c-compiler and golang-github-google-pprof-dev, "
	       "then make)";
}
#endif

const struct report_output output_timeline = {
	.name = "timeline",
	.help = "a Perfetto trace for ui.perfetto.dev: threads with their samples, CUDA\n"
		"calls, off-CPU and NVTX; GPU streams; launch flows (--timeline t.pftrace)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.takes_file = true,
	.unavailable = timeline__unavailable,
	.prepare = timeline__prepare,
	.run = timeline__run,
};
