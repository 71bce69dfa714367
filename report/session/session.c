// SPDX-License-Identifier: MIT
/* The two-pass report session: sideband first, then samples. */
#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/progress.h"
#include "report/phase/phase.h"
#include "common/xalloc.h"
#include "report/finders/find_chain.h"
#include "format/encode.h"
#include "report/session/merge.h"
#include "report/session/offcpu.h"
#include "report/session/session.h"
#include "report/unwind/unwind.h"

/* Clock shifts: every input's times on the clock of the one that started
 * first. wall = realtime + (t - monotonic), so t on the reference's clock
 * is t + (realtime_i - monotonic_i) - (realtime_ref - monotonic_ref).
 * Once all inputs are added (the first rewind): linear in the inputs. */
static void session__align(struct session *s)
{
	const struct xpu_file_header *ref = &s->inputs[0].header;

	for (size_t i = 1; i < s->nr_inputs; i++)
		if (s->inputs[i].header.realtime_ns < ref->realtime_ns)
			ref = &s->inputs[i].header;
	/* The files of one recording (--switch-output, --flight-recorder)
	 * are one pid space on one clock: numbered and shifted as their
	 * group's first; one group alone is read as one recording. */
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct xpu_file_header *h = &s->inputs[s->inputs[i].group].header;
		size_t g = s->inputs[i].group_nr;

		s->inputs[i].pid_base = s->nr_groups > 1 ? (uint32_t)g << MERGE_PID_SHIFT : 0;
		s->inputs[i].shift = s->nr_groups > 1 ?
			((int64_t)h->realtime_ns - (int64_t)h->monotonic_ns) -
			((int64_t)ref->realtime_ns - (int64_t)ref->monotonic_ns) : 0;
	}
	s->aligned = true;
}

/* The recording of the new input: the one whose first file has its
 * recording_id, else a new one (SESSION_MAX_RECORDINGS at most). */
static int session__group(struct session *s, struct session_input *in)
{
	for (size_t g = 0; g < s->nr_groups && in->recording_id; g++) {
		const struct session_input *first = &s->inputs[s->group_first[g]];

		if (first->recording_id && !strcmp(first->recording_id, in->recording_id)) {
			in->group = s->group_first[g];
			in->group_nr = g;
			return 0;
		}
	}
	if (s->nr_groups == SESSION_MAX_RECORDINGS)
		return -SESSION_ERECORDINGS;
	s->group_first = xrealloc(s->group_first, (s->nr_groups + 1) * sizeof(*s->group_first));
	in->group = s->nr_inputs;
	in->group_nr = s->nr_groups;
	s->group_first[s->nr_groups++] = s->nr_inputs;
	return 0;
}

/* The META recording_id of the input's first chunk (the files of a rotated
 * or flight recording start with it), or NULL; the reader is rewound. */
static char *session__recording_id(struct xpu_reader *r)
{
	struct xpu_record rec;
	char *id = NULL;

	while (!id && xpu_reader__next(r, &rec) == 1 && !rec.chunk_index) {
		const char *key = rec.body, *val;
		size_t klen;

		if (rec.type != XPU_REC_META || !rec.body_size ||
		    !memchr(rec.body, 0, rec.body_size))
			continue;
		klen = strlen(key) + 1;
		val = key + klen;
		if (!strcmp(key, XPU_META_RECORDING_ID) && klen < rec.body_size &&
		    memchr(val, 0, rec.body_size - klen))
			id = xstrdup(val);
	}
	xpu_reader__rewind(r);
	return id;
}

int session__add_input(struct session *s, const char *path)
{
	struct session_input *in;
	int err = 0;

	s->inputs = xgrow(s->inputs, &s->inputs_cap, s->nr_inputs + 1, sizeof(*s->inputs));
	in = &s->inputs[s->nr_inputs];
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->reader = xpu_reader__open(path, &err);
	if (!in->reader)
		return err ? err : -XPU_READER_EIO;
	in->header = *xpu_reader__header(in->reader);
	in->recording_id = session__recording_id(in->reader);
	xpu_reader__release(in->reader);	/* the chunk read for it: until pass 1 */
	xpu_reader__rewind(in->reader);
	err = session__group(s, in);
	if (err) {
		xpu_reader__close(in->reader);
		free(in->recording_id);
		return err;
	}
	u64map__init(&in->dup);
	s->nr_inputs++;
	s->aligned = false;
	return 0;
}

int session__open(struct session *s, const char *path)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = session__add_input(s, path);
	if (err) {
		free(s->inputs);
		free(s->group_first);
		s->inputs = NULL;
		s->group_first = NULL;
		return err;
	}
	s->path = path;
	s->reader = s->inputs[0].reader;
	s->header = s->inputs[0].header;
	profile__init(&s->profile);
	machine__init(&s->machine, &s->profile);
	callchain__init(&s->callchain, &s->machine, &s->profile);
	pyframes__init(&s->py);
	s->callchain.py = &s->py;
	u64map__init(&s->last_stack);
	ranks__init(&s->ranks);
	u64map__init(&s->label_frames);
	u64map__init(&s->chunk_seen);
	return 0;
}

void session__rewind(struct session *s)
{
	if (!s->aligned)
		session__align(s);
	s->cur_input = 0;
	for (size_t i = 0; i < s->nr_inputs; i++) {
		xpu_reader__rewind(s->inputs[i].reader);
		s->inputs[i].cur_chunk = 0;
	}
}

/*
 * Whether the chunk of rec (the input's) is one that another file of its
 * recording held before: the same bytes (both CRCs, sizes, records), as
 * the flight windows of an older xpu-record shared chunks (a window wrote
 * the whole ring: the next one began where this one began, not where it
 * ended). Decided once per chunk, the same in every pass; counted
 * (--header) are the events such chunks held, not the state and kernel
 * symbols every file of a recording starts with.
 */
/* A record of something that happened (a time of its own): not state. */
static bool session__is_event(const struct xpu_record *rec)
{
	return xpu_rectype__is(rec->type, XPU_RECF_TIME) && !(rec->flags & XPU_RECORD_REPEATED);
}

static bool session__dup_chunk(struct session *s, struct session_input *in,
			       const struct xpu_record *rec)
{
	const struct xpu_chunk_header *ch;
	uint64_t *d, key, *seen;

	if (rec->chunk_index + 1 == in->cur_chunk)
		return in->cur_dup;
	in->cur_chunk = rec->chunk_index + 1;
	d = u64map__slot(&in->dup, rec->chunk_index);
	if (*d) {
		in->cur_dup = *d == 1;
		return in->cur_dup;
	}
	ch = xpu_reader__chunk_header(in->reader);
	key = xpu_hash_u64(((uint64_t)ch->payload_crc << 32 | ch->header_crc) ^
			   xpu_hash_u64((uint64_t)ch->comp_size << 32 | ch->raw_size) ^
			   xpu_hash_u64((uint64_t)ch->nr_records << 32 | in->group));
	seen = u64map__slot(&s->chunk_seen, key);
	in->cur_dup = *seen != 0;
	*seen = 1;
	*d = in->cur_dup ? 1 : 2;
	if (in->cur_dup) {	/* counted: its events (what it held besides state) */
		uint64_t events = session__is_event(rec);
		struct xpu_record r;
		const void *rest;
		size_t len, off = 0;

		xpu_reader__chunk_rest(in->reader, &rest, &len);
		while (xpu_batch__next(rest, len, &off, &r) == 1)
			events += session__is_event(&r);
		s->dup_chunks += events != 0;
		s->dup_records += events;
	}
	return in->cur_dup;
}

int session__next(struct session *s, struct xpu_record *rec)
{
	if (!s->aligned)
		session__align(s);
	while (s->cur_input < s->nr_inputs) {
		struct session_input *in = &s->inputs[s->cur_input];

		if (xpu_reader__next(in->reader, rec) == 1) {
			if (s->nr_inputs > 1 && in->recording_id && session__dup_chunk(s, in, rec))
				continue;
			merge__rewrite(rec, in->pid_base, in->shift, &s->scratch, &s->scratch_cap);
			return 1;
		}
		/* read: what its reader holds goes (the files of a rotated
		 * recording, a thousand or more, each held its decoded chunks
		 * and decode threads to the end) */
		if (s->nr_inputs > 1)
			xpu_reader__release(in->reader);
		s->cur_input++;
	}
	return 0;
}

void session__close(struct session *s)
{
	uint64_t k, v;

	if (!s->reader)
		return;
	for (size_t i = 0; u64map__next(&s->machine.procs, &i, &k, &v); ) {
		unwind__proc_exit((struct proc *)(uintptr_t)v);
		callchain__proc_exit((struct proc *)(uintptr_t)v);
	}
	unwind__machine_exit(&s->machine);
	for (size_t i = 0; i < s->nr_tools; i++)
		if (s->tools[i]->exit)
			s->tools[i]->exit(s->tools[i]->priv);
	s->nr_tools = 0;
	callchain__exit(&s->callchain);
	pyframes__exit(&s->py);
	u64map__exit(&s->last_stack);
	machine__exit(&s->machine);
	profile__exit(&s->profile);
	for (size_t i = 0; i < s->nr_meta; i++) {
		free(s->meta_keys[i]);
		free(s->meta_vals[i]);
	}
	free(s->meta_keys);
	free(s->meta_vals);
	free(s->lost);
	filter__exit(&s->filter);
	ranks__exit(&s->ranks);
	u64map__exit(&s->label_frames);
	for (size_t i = 0; i < s->nr_inputs; i++) {
		xpu_reader__close(s->inputs[i].reader);
		free(s->inputs[i].hostname);
		free(s->inputs[i].arch);
		free(s->inputs[i].tool_version);
		free(s->inputs[i].label);
		free(s->inputs[i].recording_id);
		free(s->inputs[i].gpu_lag);
		u64map__exit(&s->inputs[i].dup);
	}
	u64map__exit(&s->chunk_seen);
	free(s->inputs);
	free(s->group_first);
	free(s->scratch);
	for (size_t i = 0; i < s->nr_skipped; i++)
		free(s->skipped[i].path);
	free(s->skipped);
	s->skipped = NULL;
	s->nr_skipped = 0;
	s->inputs = NULL;
	s->group_first = NULL;
	s->nr_groups = 0;
	s->nr_inputs = 0;
	s->reader = NULL;
}

void session__add_tool(struct session *s, struct session_tool *tool)
{
	BUG_ON(s->nr_tools >= SESSION_MAX_TOOLS);
	for (size_t i = 0; i < s->nr_tools; i++)
		BUG_ON(!strcmp(s->tools[i]->name, tool->name));
	s->tools[s->nr_tools++] = tool;
}

/* A later value of a key replaces the earlier one, but for keys each CUDA
 * process sends about itself alone ("pid N: ..."): every one is kept, in
 * order (the header lists them all; session__meta() gives the first). */
static bool session__meta_per_process(const char *key)
{
	return !strcmp(key, XPU_META_CUPTI_LAUNCH_WALK);
}

static void session__set_meta(struct session *s, const char *key, const char *val)
{
	for (size_t i = 0; !session__meta_per_process(key) && i < s->nr_meta; i++) {
		if (!strcmp(s->meta_keys[i], key)) {
			free(s->meta_vals[i]);
			s->meta_vals[i] = xstrdup(val);
			return;
		}
	}
	if (s->nr_meta + 1 > s->meta_cap) {
		size_t cap = s->meta_cap;

		s->meta_keys = xgrow(s->meta_keys, &cap, s->nr_meta + 1, sizeof(char *));
		s->meta_vals = xrealloc(s->meta_vals, cap * sizeof(char *));
		s->meta_cap = cap;
	}
	s->meta_keys[s->nr_meta] = xstrdup(key);
	s->meta_vals[s->nr_meta++] = xstrdup(val);
}

const char *session__meta(const struct session *s, const char *key)
{
	for (size_t i = 0; i < s->nr_meta; i++)
		if (!strcmp(s->meta_keys[i], key))
			return s->meta_vals[i];
	return NULL;
}

void *session__tool(const struct session *s, const char *name)
{
	for (size_t i = 0; i < s->nr_tools; i++)
		if (!strcmp(s->tools[i]->name, name))
			return s->tools[i]->priv;
	return NULL;
}

/* The recording frequency and the GPU ns -> samples factor, once. */
static void session__set_freq(struct session *s)
{
	const char *v = session__meta(s, XPU_META_SAMPLE_FREQ);

	s->sample_freq = v ? strtod(v, NULL) : 0;
	s->freq_assumed = !(s->sample_freq > 0);
	if (s->freq_assumed)
		s->sample_freq = XPU_DEFAULT_SAMPLE_FREQ;
}

static void session__add_lost(struct session *s, const struct xpu_lost *l)
{
	for (size_t i = 0; i < s->nr_lost; i++) {
		if (s->lost[i].source == l->source && s->lost[i].pid == l->pid) {
			s->lost[i].count += l->count;
			return;
		}
	}
	s->lost = xgrow(s->lost, &s->lost_cap, s->nr_lost + 1, sizeof(*s->lost));
	s->lost[s->nr_lost++] = (struct lost_count){ l->source, l->pid, l->count };
}

static void session__see_time(struct session *s, uint64_t t)
{
	if (!t)
		return;
	if (!s->first_time || t < s->first_time)
		s->first_time = t;
	if (t > s->last_time)
		s->last_time = t;
}

/* A rotated or flight-recorder file's window (META window.*), on the
 * session's clock. */
static void session__window_meta(struct session_input *in, const char *key, const char *val)
{
	uint64_t *field = !strcmp(key, XPU_META_WINDOW_START) ? &in->window_start :
			  !strcmp(key, XPU_META_WINDOW_END) ? &in->window_end :
			  !strcmp(key, XPU_META_WINDOW_RECORDING_START) ? &in->recording_start : NULL;
	char *end;
	uint64_t v;

	if (!strcmp(key, XPU_META_WINDOW_GPU_LAG)) {
		free(in->gpu_lag);
		in->gpu_lag = xstrdup(val);
		return;
	}
	if (!field)
		return;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (!errno && end != val && !*end && v)
		*field = v + in->shift;
}

static void session__pass1_record(struct session *s, const struct xpu_record *rec)
{
	struct machine *m = &s->machine;
	const char *str, *key, *val;
	uint64_t t;

	if (rec->type < XPU_REC_MAX)
		s->nr_records[rec->type]++;
	/* a record repeated at the start of a rotated file happened before it */
	if (xpu_record__time(rec, &t) && !(rec->flags & XPU_RECORD_REPEATED)) {
		struct session_input *in = &s->inputs[s->cur_input];

		session__see_time(s, t);
		/* the input's span: when its records were made; an off-CPU
		 * block is written at its last switch-in, and one that began
		 * long before (a parent in waitpid) must not stretch the span
		 * of the rotated file that holds it back to the start */
		if (rec->type == XPU_REC_OFFCPU && rec->body_size >= 2 * sizeof(t))
			memcpy(&t, (const char *)rec->body + sizeof(t), sizeof(t));
		if (t && (!in->first_time || t < in->first_time))
			in->first_time = t;
		if (t > in->last_time)
			in->last_time = t;
	}

	switch (rec->type) {
	case XPU_REC_META:
		if (!xpu_record__meta(rec, &key, &val)) {
			struct session_input *in = &s->inputs[s->cur_input];
			char **field = !strcmp(key, XPU_META_HOSTNAME) ? &in->hostname :
				       !strcmp(key, XPU_META_ARCH) ? &in->arch :
				       !strcmp(key, XPU_META_TOOL_VERSION) ? &in->tool_version : NULL;

			session__set_meta(s, key, val);
			session__window_meta(in, key, val);
			if (field) {
				free(*field);
				*field = xstrdup(val);
			}
		}
		break;
	case XPU_REC_PROC_ENV:
		ranks__add(&s->ranks, rec);
		break;
	case XPU_REC_COMM: {
		const struct xpu_comm *c = rec->body;
		char name[17];

		memcpy(name, c->comm, 16);
		name[16] = '\0';
		machine__add_comm(m, c->pid, c->tid, c->time, name,
				  (c->flags & XPU_COMM_EXEC) != 0);
		break;
	}
	case XPU_REC_FORK: {
		const struct xpu_fork *f = rec->body;

		machine__add_fork(m, f->pid, f->tid, f->ppid, f->ptid, f->time);
		pyframes__fork(&s->py, f->pid, f->ppid);
		break;
	}
	case XPU_REC_MMAP: {
		const struct xpu_mmap *mm = rec->body;

		str = xpu_record__string(rec, sizeof(*mm));
		if (str && mm->build_id_size <= XPU_MMAP_BUILD_ID_MAX)
			machine__add_mmap(m, mm->pid, mm->time, mm->start, mm->len, mm->pgoff,
					  str, mm->build_id, mm->build_id_size);
		break;
	}
	case XPU_REC_KSYM: {
		const struct xpu_ksym *k = rec->body;

		str = xpu_record__string(rec, sizeof(*k));
		if (str)
			machine__add_ksym(m, k->addr, k->size, str);
		break;
	}
	case XPU_REC_PERF_MAP: {
		const struct xpu_perf_map *pm = rec->body;

		str = xpu_record__string(rec, sizeof(*pm));
		if (str)
			machine__add_jit(m, pm->pid, pm->start, pm->size, str);
		break;
	}
	case XPU_REC_LOST:
		session__add_lost(s, rec->body);
		break;
	case XPU_REC_PY_CODE:
		pyframes__code(&s->py, rec);
		break;
	case XPU_REC_OFFCPU: {
		const struct xpu_offcpu *o = rec->body;

		s->offcpu.records++;
		s->offcpu.ns += o->off_ns;
		if (o->flags & XPU_OFFCPU_SHORT)
			s->offcpu.short_ns += o->off_ns;
		else if (o->flags & XPU_OFFCPU_PREEMPTED)
			s->offcpu.preempted_ns += o->off_ns;
		else if (o->flags & XPU_OFFCPU_SYSCALL)
			s->offcpu.syscall_ns += o->off_ns;
		if (o->flags & XPU_OFFCPU_LEAF_ONLY)
			s->offcpu.leaf_only++;
		break;
	}
	case XPU_REC_FINISH:
		if (s->nr_inputs > 1 && s->has_finish) {	/* merged: the counts add up */
			struct xpu_finish f;

			memcpy(&f, rec->body, sizeof(f));
			s->finish.time = f.time > s->finish.time ? f.time : s->finish.time;
			s->finish.nr_samples += f.nr_samples;
			s->finish.nr_corr += f.nr_corr;
			s->finish.nr_gpu += f.nr_gpu;
			s->finish.nr_lost += f.nr_lost;
			break;
		}
		memcpy(&s->finish, rec->body, sizeof(s->finish));
		s->has_finish = true;
		break;
	}
}

int session__rank(const struct session *s, uint32_t pid, enum rank_kind kind, uint32_t *out)
{
	return ranks__get(&s->ranks, &s->machine, pid, kind, out);
}

/* --rank: the pids that have one of the ranks (a process without a rank
 * has none of them). */
static void session__resolve_ranks(struct session *s)
{
	uint64_t k, v;

	for (size_t i = 0; s->filter.nr_ranks && u64map__next(&s->machine.procs, &i, &k, &v); ) {
		uint32_t rank;

		if (session__rank(s, (uint32_t)k, RANK_GLOBAL, &rank))
			continue;
		for (size_t j = 0; j < s->filter.nr_ranks; j++)
			if (s->filter.ranks[j] == rank)
				*u64map__slot(&s->filter.rank_pids, k) = 1;
	}
}

/* Merged inputs with --input-frame: "[host rank R]" as the root of every
 * stack of pid. */
static size_t session__label_filter(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				    uint32_t *frames, size_t n, size_t cap, void *priv)
{
	uint64_t *slot = u64map__slot(&s->label_frames, pid);

	if (n + 1 > cap)
		return n;
	if (!*slot) {
		const struct session_input *in = session__input_of(s, pid);
		char name[256];
		uint32_t rank;

		if (!session__rank(s, pid, RANK_GLOBAL, &rank))
			snprintf(name, sizeof(name), "[%s rank %u]", in->label, rank);
		else
			snprintf(name, sizeof(name), "[%s]", in->label);
		*slot = 1 + profile__intern_frame(&s->profile, FRAME_MARKER, SESSION_INPUT_MODULE,
						  name, 0, false);
	}
	memmove(frames + 1, frames, n * sizeof(*frames));
	frames[0] = (uint32_t)(*slot - 1);
	return n + 1;
}

uint32_t session__label_stack(struct session *s, uint32_t pid, uint32_t stack)
{
	uint32_t frames[PROFILE_MAX_DEPTH + 1];
	const uint32_t *fr;
	size_t n;

	if (s->nr_groups < 2 || !s->input_frames)
		return stack;
	fr = profile__stack(&s->profile, stack, &n);
	if (n > PROFILE_MAX_DEPTH)
		return stack;
	if (n)
		memcpy(frames, fr, n * sizeof(*frames));
	n = session__label_filter(s, pid, 0, 0, frames, n, PROFILE_MAX_DEPTH + 1, NULL);
	return profile__intern_stack(&s->profile, frames, n);
}

/* Each input's name in labels: its host, or host:file where two inputs
 * have the same host, and #N (its number) after a file name seen twice
 * (a/x.data and b/x.data). */
static void session__label_inputs(struct session *s)
{
	size_t n = s->nr_groups;
	bool *dup = xcalloc(n, sizeof(*dup));

	/* the [label] frames name a recording by its first input
	 * (session__input_of): only those are labelled, among themselves */
	for (size_t g = 0; g < n; g++) {
		struct session_input *in = &s->inputs[s->group_first[g]];
		const char *host = in->hostname ? in->hostname : "?";
		const char *base = strrchr(in->path, '/');
		bool unique = true;

		for (size_t h = 0; h < n; h++) {
			const struct session_input *o = &s->inputs[s->group_first[h]];

			if (h != g && !strcmp(o->hostname ? o->hostname : "?", host))
				unique = false;
		}
		free(in->label);
		in->label = unique ? xstrdup(host) :
				     xasprintf("%s:%s", host, base ? base + 1 : in->path);
	}
	for (size_t g = 0; g < n; g++)
		for (size_t h = 0; h < n; h++)
			if (h != g && !strcmp(s->inputs[s->group_first[h]].label,
					      s->inputs[s->group_first[g]].label))
				dup[g] = true;
	for (size_t g = 0; g < n; g++) {
		struct session_input *in = &s->inputs[s->group_first[g]];
		char *l;

		if (!dup[g])
			continue;
		l = xasprintf("%s#%zu", in->label, s->group_first[g]);
		free(in->label);
		in->label = l;
	}
	free(dup);
}

const char *session__check_inputs(struct session *s, char *buf, size_t size)
{
	const struct session_input *a = &s->inputs[0];

	for (size_t i = 1; i < s->nr_inputs; i++) {
		const struct session_input *b = &s->inputs[i];

		if (a->header.major != b->header.major) {
			snprintf(buf, size, "cannot merge %s (format %u.%u) with %s (format %u.%u): "
				 "different major versions", a->path, a->header.major,
				 a->header.minor, b->path, b->header.major, b->header.minor);
			return buf;
		}
		if (a->arch && b->arch && strcmp(a->arch, b->arch)) {
			snprintf(buf, size, "cannot merge %s (%s) with %s (%s): recordings of "
				 "different architectures", a->path, a->arch, b->path, b->arch);
			return buf;
		}
	}
	for (size_t i = 1; i < s->nr_inputs; i++) {
		const struct session_input *b = &s->inputs[i];

		if (a->tool_version && b->tool_version && strcmp(a->tool_version, b->tool_version)) {
			warn("merging recordings of different xpu-record versions: %s (%s), %s (%s)",
			     a->path, a->tool_version, b->path, b->tool_version);
			break;
		}
	}
	return NULL;
}

int session__pass1(struct session *s)
{
	struct xpu_record rec;
	struct progress pr;
	uint64_t n = 0;
	int err;

	progress__start(&pr);
	session__rewind(s);
	/* no stack is read before pass 2: the coded ones are not rebuilt */
	for (size_t i = 0; i < s->nr_inputs; i++)
		xpu_reader__skip_stacks(s->inputs[i].reader);
	while (session__next(s, &rec) == 1) {
		progress__update(&pr, "pass 1: reading records", -1, ++n);
		session__pass1_record(s, &rec);
		for (size_t i = 0; i < s->nr_tools; i++)
			if (s->tools[i]->record &&
			    (err = s->tools[i]->record(s, &rec, 1, s->tools[i]->priv))) {
				progress__end(&pr);
				return err;
			}
	}
	progress__end(&pr);
	machine__finish(&s->machine);
	session__set_freq(s);
	s->filter.time_base = s->first_time;
	session__resolve_ranks(s);
	if (s->nr_groups > 1) {
		session__label_inputs(s);
		if (s->input_frames)
			session__add_stack_filter(s, session__label_filter, NULL);
	}
	for (size_t i = 0; i < s->nr_tools; i++)
		if (s->tools[i]->pass1_done &&
		    (err = s->tools[i]->pass1_done(s, s->tools[i]->priv)))
			return err;
	return 0;
}

void session__subscribe_cpu(struct session *s, cpu_event_fn fn, void *priv)
{
	BUG_ON(s->nr_cpu_subs >= SESSION_MAX_TOOLS);
	s->cpu_subs[s->nr_cpu_subs].fn = fn;
	s->cpu_subs[s->nr_cpu_subs++].priv = priv;
}

void session__emit_cpu(struct session *s, const struct cpu_event *ev)
{
	for (size_t i = 0; i < s->nr_cpu_subs; i++)
		s->cpu_subs[i].fn(s, ev, s->cpu_subs[i].priv);
}

void session__add_stack_filter(struct session *s, stack_filter_fn fn, void *priv)
{
	BUG_ON(s->nr_stack_filters >= SESSION_MAX_TOOLS);
	s->stack_filters[s->nr_stack_filters].fn = fn;
	s->stack_filters[s->nr_stack_filters++].priv = priv;
}

size_t session__filter_stack(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
			     uint32_t *frames, size_t n, size_t cap)
{
	for (size_t i = 0; i < s->nr_stack_filters; i++)
		n = s->stack_filters[i].fn(s, pid, tid, time, frames, n, cap,
					   s->stack_filters[i].priv);
	return n;
}

uint32_t session__filter_stack_id(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				  uint32_t stack)
{
	uint32_t frames[PROFILE_MAX_DEPTH + SESSION_STACK_ROOM];
	const uint32_t *fr;
	size_t n, m;

	if (!s->nr_stack_filters)
		return stack;
	fr = profile__stack(&s->profile, stack, &n);
	if (n)		/* the empty stack has no frame array */
		memcpy(frames, fr, n * sizeof(*frames));
	m = session__filter_stack(s, pid, tid, time, frames, n, sizeof(frames) / sizeof(*frames));
	fr = profile__stack(&s->profile, stack, &n);	/* the filters may have interned */
	if (m == n && (!n || !memcmp(frames, fr, n * sizeof(*frames))))
		return stack;
	return profile__intern_stack(&s->profile, frames, m);
}

static void session__sample(struct session *s, const struct xpu_record *rec)
{
	const struct xpu_sample *smp = rec->body;
	struct xpu_stack_view v;
	uint32_t frames[CALLCHAIN_MAX + SESSION_STACK_ROOM], comm, stack, leaf;
	uint64_t leaf_vaddr;
	double weight = smp->weight ? smp->weight : 1;
	size_t n;

	s->nr_samples++;
	if (xpu_stack__parse(&smp->stack, rec->body_size - offsetof(struct xpu_sample, stack),
			     &v)) {
		s->nr_samples_bad++;
		return;
	}
	if (!filter__match_task(&s->filter, smp->pid, smp->tid, smp->time)) {
		s->nr_samples_filtered++;
		return;
	}
	comm = machine__comm(&s->machine, smp->pid, smp->tid, smp->time);
	if (!filter__match_comm(&s->filter, profile__str(&s->profile, comm))) {
		s->nr_samples_filtered++;
		return;
	}
	n = callchain__resolve(&s->callchain, smp->pid, smp->tid, smp->time, &v, frames,
			       CALLCHAIN_MAX, &leaf_vaddr);
	/* annotate's: the function of the sampled pc (its frame, not the
	 * frame of a function inlined there) */
	leaf = n ? s->callchain.leaf_func : 0;
	/* callers for leaf-only off-CPU records, as resolved: the filters run
	 * on the off-CPU stack after it borrowed them */
	if (s->nr_records[XPU_REC_OFFCPU] && s->nr_stack_filters)
		*u64map__slot(&s->last_stack, smp->tid) = profile__intern_stack(&s->profile, frames, n);
	n = session__filter_stack(s, smp->pid, smp->tid, smp->time, frames, n,
				  sizeof(frames) / sizeof(*frames));
	stack = profile__intern_stack(&s->profile, frames, n);
	profile__add(&s->profile, stack, smp->pid, smp->tid, comm, ORIGIN_CPU, weight);
	profile__add_locs(&s->profile, s->callchain.locs, weight);
	profile__add_pcs(&s->profile, s->callchain.locs, s->callchain.pcs, weight);
	if (n && leaf_vaddr)
		profile__add_addr(&s->profile, leaf, leaf_vaddr, weight);
	if (s->nr_records[XPU_REC_OFFCPU] && !s->nr_stack_filters)
		*u64map__slot(&s->last_stack, smp->tid) = stack;
	if (s->nr_cpu_subs) {
		struct cpu_event ev = {
			.kind = CPU_EVENT_SAMPLE, .pid = smp->pid, .tid = smp->tid, .comm = comm,
			.start = smp->time, .end = smp->time, .stack = stack, .weight = weight,
		};

		session__emit_cpu(s, &ev);
	}
}

/* Pass 2: one OFFCPU record (offcpu.h: its reason frame, the callers a
 * leaf-only block borrows) into the profile and to the CPU-event subscribers. */
static void session__offcpu(struct session *s, const struct xpu_record *rec)
{
	const struct xpu_offcpu *o = rec->body;
	uint32_t frames[CALLCHAIN_MAX + SESSION_STACK_ROOM + 1], comm, stack;
	struct xpu_stack_view v;
	struct xpu_stack hdr;
	struct cpu_event ev;
	size_t n, skip;

	s->nr_offcpu++;
	if (xpu_stack__parse(&o->stack, rec->body_size - offsetof(struct xpu_offcpu, stack), &v) ||
	    o->end < o->start) {
		s->nr_offcpu_bad++;
		return;
	}
	comm = machine__comm(&s->machine, o->pid, o->tid, o->start);
	if (!filter__match(&s->filter, o->pid, o->tid, o->start, profile__str(&s->profile, comm))) {
		s->nr_offcpu_filtered++;
		return;
	}
	/* drop the recorder's frames: the stack starts at __schedule */
	skip = offcpu__bpf_depth(&s->profile, &s->callchain, &v);
	hdr = *v.hdr;
	hdr.nr_kernel_ips -= (uint16_t)skip;
	v.hdr = &hdr;
	v.kernel_ips += skip;
	n = callchain__resolve(&s->callchain, o->pid, o->tid, o->start, &v, frames,
			       CALLCHAIN_MAX, NULL);
	if (o->flags & XPU_OFFCPU_LEAF_ONLY)
		n = offcpu__borrow_callers(&s->profile, &s->last_stack, o->tid, frames, n);
	n = session__filter_stack(s, o->pid, o->tid, o->start, frames, n,
				  CALLCHAIN_MAX + SESSION_STACK_ROOM);
	frames[n++] = offcpu__reason_frame(&s->profile, &s->callchain, o, &v);
	stack = profile__intern_stack(&s->profile, frames, n);
	ev = (struct cpu_event){
		.kind = CPU_EVENT_OFFCPU, .pid = o->pid, .tid = o->tid, .comm = comm,
		.start = o->start, .end = o->end, .off_ns = o->off_ns, .stack = stack,
		.weight = session__ns_weight(s, o->off_ns),
	};
	profile__add(&s->profile, stack, o->pid, o->tid, comm, ORIGIN_OFFCPU, ev.weight);
	profile__add_locs(&s->profile, s->callchain.locs, ev.weight);
	profile__add_pcs(&s->profile, s->callchain.locs, s->callchain.pcs, ev.weight);
	session__emit_cpu(s, &ev);
}

int session__pass2(struct session *s)
{
	struct xpu_record rec;
	struct progress pr;
	struct xpu_reader_stats st;
	uint64_t n = 0, total, t0, wait0, chunk = UINT64_MAX;
	int err = 0;

	session__reader_stats(s, &st);
	total = st.records;
	wait0 = 0;
	for (size_t i = 0; i < s->nr_inputs; i++)
		wait0 += xpu_reader__wait_ns(s->inputs[i].reader);

	progress__start(&pr);
	/* a chunk's stacks are unwound on several threads when pass 2 meets
	 * its first record (one input: several have their records rewritten) */
	if (s->nr_inputs == 1)
		s->callchain.ahead = unwind_ahead__new(&s->machine, CALLCHAIN_MAX);
	/* Pass 2 unwinds and symbolizes: one thread decodes chunks faster
	 * than it reads them, and holds 2 decoded chunks instead of 5 (with
	 * coded PyTorch stacks, 20 MB each); two when the stacks are unwound
	 * on other threads, or pass 2 waits for them */
	for (size_t i = 0; i < s->nr_inputs; i++)
		xpu_reader__limit_threads(s->inputs[i].reader, s->callchain.ahead ? 2 : 1);
	session__rewind(s);
	while (session__next(s, &rec) == 1) {
		n++;
		progress__update(&pr, "pass 2: resolving stacks", total ? (double)n / total : -1, n);
		if (s->callchain.ahead && rec.chunk_index != chunk) {
			const void *rest;
			size_t len;
			uint64_t t1 = phase__begin();

			chunk = rec.chunk_index;
			xpu_reader__chunk_rest(s->inputs[0].reader, &rest, &len);
			/* the record just read, then the rest: one run of bytes
			 * (else nothing is unwound ahead: the last chunk's
			 * results go, their addresses may be reused) */
			if ((const uint8_t *)rec.body + rec.body_size == (const uint8_t *)rest || !len)
				unwind_ahead__chunk(s->callchain.ahead, (const uint8_t *)rec.body -
						    sizeof(struct xpu_record_header),
						    sizeof(struct xpu_record_header) + rec.body_size + len);
			else
				unwind_ahead__chunk(s->callchain.ahead, NULL, 0);
			if (phase__on)
				phase__stats.ns[PHASE_UNWIND] += phase__now() - t1;
		}
		if (rec.type == XPU_REC_PY_STACK)	/* for the record that follows */
			pyframes__record(&s->py, &rec);
		else if (rec.type == XPU_REC_SAMPLE)
			session__sample(s, &rec);
		else if (rec.type == XPU_REC_OFFCPU)
			session__offcpu(s, &rec);
		for (size_t i = 0; i < s->nr_tools; i++)
			if (s->tools[i]->record &&
			    (err = s->tools[i]->record(s, &rec, 2, s->tools[i]->priv))) {
				progress__end(&pr);
				unwind_ahead__free(s->callchain.ahead);
				s->callchain.ahead = NULL;
				return err;
			}
		if (rec.type != XPU_REC_PY_STACK)	/* one its record did not take */
			pyframes__record(&s->py, &rec);
	}
	unwind_ahead__free(s->callchain.ahead);
	s->callchain.ahead = NULL;
	if (phase__on) {
		uint64_t wait1 = 0;

		for (size_t i = 0; i < s->nr_inputs; i++)
			wait1 += xpu_reader__wait_ns(s->inputs[i].reader);
		phase__stats.ns[PHASE_READ] += wait1 - wait0;
		phase__stats.calls[PHASE_READ]++;
	}
	if (pr.shown)	/* a slow pass 2: the join may be slow too */
		progress__step(&pr, "joining GPU work");
	t0 = phase__begin();
	for (size_t i = 0; i < s->nr_tools; i++)
		if (s->tools[i]->finish && (err = s->tools[i]->finish(s, s->tools[i]->priv)))
			break;
	phase__end(PHASE_FINISH, t0);
	progress__end(&pr);
	return err;
}

void session__reader_stats(const struct session *s, struct xpu_reader_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct xpu_reader_stats *r = xpu_reader__stats(s->inputs[i].reader);

		st->chunks_ok += r->chunks_ok;
		st->chunks_bad += r->chunks_bad;
		st->bytes_skipped += r->bytes_skipped;
		st->records += r->records;
		st->unknown_records += r->unknown_records;
		st->truncated |= r->truncated;
		if (!st->first_error[0] && r->first_error[0]) {
			/* the input's name first when merging; cut to fit */
			size_t n = s->nr_inputs > 1 ? (size_t)snprintf(st->first_error,
				sizeof(st->first_error), "%.60s: ", s->inputs[i].path) : 0;

			memcpy(st->first_error + n, r->first_error,
			       strnlen(r->first_error, sizeof(st->first_error) - n - 1));
			st->first_error[sizeof(st->first_error) - 1] = '\0';
		}
	}
}

bool session__damaged(const struct session *s)
{
	if (s->nr_skipped)
		return true;
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct xpu_reader_stats *st = xpu_reader__stats(s->inputs[i].reader);

		if (st->chunks_bad || st->truncated || st->bytes_skipped)
			return true;
	}
	return false;
}

uint64_t session__lost_total(const struct session *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_lost; i++)
		n += s->lost[i].count;
	return n;
}

uint64_t session__lost_of(const struct session *s, uint32_t source)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_lost; i++)
		if (s->lost[i].source == source)
			n += s->lost[i].count;
	return n;
}

/* CUDA processes whose GPU records never came (XPU_LOST_GPU_UNCONNECTED):
 * processes, not events, so a line of their own, with their pids. */
static void session__warn_unconnected(const struct session *s)
{
	uint64_t n = session__lost_of(s, XPU_LOST_GPU_UNCONNECTED);
	char list[160] = "";
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < s->nr_lost; i++)
		if (s->lost[i].source == XPU_LOST_GPU_UNCONNECTED && s->lost[i].pid &&
		    len < sizeof(list) - 16)
			len += snprintf(list + len, sizeof(list) - len, "%s%u", len ? " " : "",
					s->lost[i].pid);
	if (len >= sizeof(list) - 16)
		snprintf(list + len, sizeof(list) - len, " ...");
	warn("%llu CUDA process%s could not send GPU records%s%s%s: %s GPU work is missing "
	     "(lost: gpu-unconnected); see --header", (unsigned long long)n, n == 1 ? "" : "es",
	     len ? " (pid " : "", list, len ? ")" : "", n == 1 ? "its" : "their");
}

void session__warn(const struct session *s)
{
	for (size_t i = 0; i < s->nr_inputs; i++) {
		const struct xpu_reader_stats *st = xpu_reader__stats(s->inputs[i].reader);

		if (st->chunks_bad || st->truncated || st->bytes_skipped)
			warn("%s is damaged: %llu chunk(s) skipped, %llu bytes not decoded%s "
			     "(first: %s); the report shows the rest", s->inputs[i].path,
			     (unsigned long long)st->chunks_bad,
			     (unsigned long long)st->bytes_skipped,
			     st->truncated ? ", truncated tail" : "",
			     st->first_error[0] ? st->first_error : "?");
	}
	if (session__lost_total(s) > session__lost_of(s, XPU_LOST_GPU_UNCONNECTED)) {
		char buf[512];
		size_t len = 0;
		uint64_t per[XPU_LOST_MAX] = { 0 };	/* [0]: sources this reader does not know */

		for (size_t i = 0; i < s->nr_lost; i++)
			per[s->lost[i].source < XPU_LOST_MAX ? s->lost[i].source : 0] +=
				s->lost[i].count;
		per[XPU_LOST_GPU_UNCONNECTED] = 0;	/* processes: said below */
		for (uint32_t src = 0; src < XPU_LOST_MAX; src++)
			if (per[src] && len < sizeof(buf))
				len += snprintf(buf + len, sizeof(buf) - len, "%s%s %llu",
						len ? ", " : "", xpu_lost_source__name(src),
						(unsigned long long)per[src]);
		warn("%llu events were lost while recording (%s); see --header",
		     (unsigned long long)(session__lost_total(s) -
					  session__lost_of(s, XPU_LOST_GPU_UNCONNECTED)), buf);
	}
	session__warn_unconnected(s);
	if (session__meta(s, XPU_META_CPU_SAMPLES) && !s->nr_records[XPU_REC_SAMPLE])
		warn("%s: CPU samples: %s (see --header)", s->path,
		     session__meta(s, XPU_META_CPU_SAMPLES));
	if (!s->has_finish && s->nr_records[XPU_REC_META] + s->nr_records[XPU_REC_SAMPLE])
		warn("%s has no FINISH record: the recording did not end cleanly", s->path);
	if (s->nr_samples_bad)
		warn("%llu malformed sample records skipped", (unsigned long long)s->nr_samples_bad);
	for (size_t i = 0; i < s->machine.dsos.nr; i++) {
		const struct dso *d = s->machine.dsos.list[i];

		if (!d->frames_unsymbolized)
			continue;
		if (d->status == DSO_MISMATCH)
			warn("%s: build-id mismatch, frames left unsymbolized (%llu)",
			     d->path, (unsigned long long)d->frames_unsymbolized);
		else if (d->status == DSO_MISSING)
			debug(1, "%s: file not found, %llu frames unsymbolized", d->path,
			      (unsigned long long)d->frames_unsymbolized);
	}
	find_chain__warn(&s->machine.dsos);	/* the total, by reason */
	if (s->callchain.stats.kernel_unknown) {
		const struct callchain_stats *cs = &s->callchain.stats;

		if (!s->nr_records[XPU_REC_KSYM])
			warn("%llu of %llu kernel addresses stayed unnamed ([unknown]_[k]): the trace "
			     "holds no kernel symbols (xpu-record could not read /proc/kallsyms "
			     "addresses: kernel.kptr_restrict, or not root)",
			     (unsigned long long)cs->kernel_unknown, (unsigned long long)cs->kernel_pcs);
		else if (cs->kernel_unknown * 10 > cs->kernel_pcs)
			warn("%llu of %llu kernel addresses stayed unnamed ([unknown]_[k]): none of "
			     "the trace's %llu kernel symbols covers them", (unsigned long long)
			     cs->kernel_unknown, (unsigned long long)cs->kernel_pcs,
			     (unsigned long long)s->nr_records[XPU_REC_KSYM]);
	}
	if (xpu_verbose >= 1) {
		struct unwind_stats us;

		unwind__stats(&s->machine, &us);
		debug(1, "unwind: %llu stacks, %llu by libdwfl, %llu checked; CFI of %llu files; "
		      "%llu stacks unwound by xpu-record (their frames in the trace)",
		      (unsigned long long)us.stacks, (unsigned long long)us.slow,
		      (unsigned long long)us.checked, (unsigned long long)us.files,
		      (unsigned long long)s->callchain.stats.recorded_frames);
		debug(1, "unwind: libdwfl's process Dwfls: %llu builds, %llu times new mappings "
		      "added instead", (unsigned long long)us.dwfl_rebuilds,
		      (unsigned long long)us.dwfl_grows);
	}
}


/* Permission denied: whose file it is and how to read it (xpu-record under
 * sudo gives its traces to the sudo user; older ones, or -p, are root's). */
static void __attribute__((noreturn)) session__die_noperm(const char *path)
{
	struct passwd *pw;
	struct stat st;
	char owner[64], me[64];

	if (stat(path, &st))
		die(XPU_EXIT_NOPERM, "cannot read %s: %s (a directory on its path is not searchable "
		    "by you): run %s with sudo", path, strerror(errno), xpu_progname);
	pw = getpwuid(st.st_uid);
	if (pw)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "uid %u", (unsigned)st.st_uid);
	if (st.st_uid == geteuid())
		die(XPU_EXIT_NOPERM, "cannot read %s: it is yours but mode %04o: `chmod u+r %s`",
		    path, (unsigned)(st.st_mode & 07777), path);
	pw = getpwuid(getuid());
	if (pw)
		snprintf(me, sizeof(me), "%s", pw->pw_name);
	else
		snprintf(me, sizeof(me), "%u", (unsigned)getuid());
	die(XPU_EXIT_NOPERM, "cannot read %s: owned by %s, mode %04o: run %s with sudo, or "
	    "`sudo chown %s %s`", path, owner, (unsigned)(st.st_mode & 07777), xpu_progname,
	    me, path);
}

/* /proc/sys/vm/max_map_count, or -1. */
static long session__max_map_count(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static void session__die_open(int err, const char *path, const char *verb)
{
	switch (-err) {
	case 0:
		return;
	case XPU_READER_EIO:
		if (errno == EACCES || errno == EPERM)
			session__die_noperm(path);
		if (errno == ENOMEM) {	/* mmap: each input stays mapped */
			long maps = session__max_map_count();

			die(XPU_EXIT_INPUT, "cannot read %s: %s: each input file is mapped while "
			    "the report runs, and the kernel's vm.max_map_count (%ld) bounds how "
			    "many: raise it (sysctl), or report fewer files", path,
			    strerror(ENOMEM), maps);
		}
		die(XPU_EXIT_INPUT, "cannot read %s: %s (record one with xpu-record, or give -i FILE)",
		    path, strerror(errno));
	case XPU_READER_EMAGIC:
		die(XPU_EXIT_INPUT, "%s is not an xpu.data trace (bad magic); give an xpu-record "
		    "output with -i FILE", path);
	case XPU_READER_EVERSION: {
		struct xpu_file_header h = { 0 };
		FILE *f = fopen(path, "rb");	/* the reader refused it: read the version */

		if (f) {
			if (fread(&h, 1, sizeof(h), f) < offsetof(struct xpu_file_header, header_size))
				h.major = 0;
			fclose(f);
		}
		die(XPU_EXIT_VERSION, "%s was written by a newer xpu-record (format %u.x, this "
		    "%s reads %u.x): upgrade %s", path, (unsigned)h.major, xpu_progname,
		    XPU_VERSION_MAJOR, xpu_progname);
	}
	case XPU_READER_ENOTREG: {
		struct stat st;
		const char *kind = "not a regular file";

		if (!stat(path, &st))
			kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" :
			       S_ISSOCK(st.st_mode) ? "a socket" : "a device";
		die(XPU_EXIT_INPUT, "cannot read %s: it is %s, not a trace file: give the path of "
		    "an xpu-record output", path, kind);
	}
	case XPU_READER_ESHORT:
		die(XPU_EXIT_CORRUPT, "%s is truncated inside its file header: nothing to %s",
		    path, verb);
	case SESSION_ERECORDINGS:
		die(XPU_EXIT_MERGE, "%s: more than %u recordings to merge, the most one %s "
		    "reads (the files of one recording, from xpu-record --switch-output or "
		    "--flight-recorder, count as one)", path, SESSION_MAX_RECORDINGS,
		    xpu_progname);
	default:
		die(XPU_EXIT_INPUT, "cannot open %s (error %d)", path, err);
	}
}

void session__open_or_die(struct session *s, const char *path, const char *verb)
{
	session__die_open(session__open(s, path), path, verb);
}

/* Why a file of a directory was left out, for the warning and --header. */
const char *session__skipped_why(int err)
{
	return -err == XPU_READER_ESHORT ? "empty or cut inside its file header" :
	       "not an xpu.data trace (bad magic)";
}

void session__open_many_or_die(struct session *s, const char *const *paths, size_t n,
			       const bool *optional, const char *verb)
{
	struct session_skipped *skipped = NULL;
	size_t nr_skipped = 0, cap = 0;
	bool open = false;

	BUG_ON(!n);
	for (size_t i = 0; i < n; i++) {
		int err = open ? session__add_input(s, paths[i]) : session__open(s, paths[i]);

		/* one bad file of a directory (a recorder killed while it
		 * created it, a stray *.data) leaves the others readable;
		 * the last one left: its error */
		if ((err == -XPU_READER_ESHORT || err == -XPU_READER_EMAGIC) &&
		    optional && optional[i] && (open || i + 1 < n)) {
			warn("%s is %s: left out, the %s reads the other files", paths[i],
			     session__skipped_why(err), verb);
			skipped = xgrow(skipped, &cap, nr_skipped + 1, sizeof(*skipped));
			skipped[nr_skipped++] = (struct session_skipped){ xstrdup(paths[i]), err };
			continue;
		}
		if (err) {
			if (open)
				session__close(s);
			for (size_t j = 0; j < nr_skipped; j++)
				free(skipped[j].path);
			free(skipped);
			session__die_open(err, paths[i], verb);
		}
		open = true;
	}
	session__align(s);
	s->skipped = skipped;
	s->nr_skipped = nr_skipped;
}
