// SPDX-License-Identifier: MIT
/* NVTX ranges as [nvtx] frames and a --header table; see gpu_nvtx.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_nvtx.h"
#include "report/unwind/pyframes.h"
#include "report/gpu/gpu_stats.h"

#define NVTX_MAX_ACTIVE	SESSION_STACK_ROOM	/* ranges put into one stack */
#define NVTX_MAX_WALK	4096			/* enclosing ranges looked at per stack */
#define NVTX_OPEN	UINT64_MAX		/* end of a range never closed */

struct nvtx_range {
	uint64_t start, end;		/* end NVTX_OPEN: never closed */
	uint64_t range_id;
	uint32_t pid, tid;
	uint32_t domain_id, message_id;
	uint32_t flags;			/* XPU_NVTX_PUSHPOP or XPU_NVTX_STARTEND */
	uint32_t depth;
	uint32_t parent;		/* push/pop: index + 1 of the range open around
					 * it on its thread when it was pushed; 0: none */
	uint32_t frame;			/* its [nvtx] frame + 1, once interned */
	uint32_t push;			/* profile stack id of the push stack ... */
	bool have_push;			/* ... when resolved */
	bool pushed;			/* a push stack was recorded for it */
	bool unclosed;			/* its end was not recorded (end 0) */
};

struct gpu_nvtx {
	struct session_tool tool;
	bool frames;			/* the stack filter is installed */
	bool ready;			/* pass1_done ran: the filter may work */
	struct gpu_nvtx_stats stats;
	struct nvtx_range *ranges;	/* after pass 1: push/pop ones first, by
					 * (pid, tid, start, depth), then start/end */
	size_t nr_ranges, ranges_cap;
	size_t nr_pushpop;
	struct u64map threads;		/* pid << 32 | tid -> first << 32 | count */
	struct u64map by_id;		/* pid << 32 | range id -> index + 1 (push/pop) */
	uint64_t *pushed;		/* pass 1: pid << 32 | range id of each push stack */
	size_t nr_pushed, pushed_cap;
	struct u64map strs;		/* pid << 32 | string id -> char * */
	struct gpu_api_names api_names;
	uint32_t *scratch;		/* the filter's output */
	size_t scratch_cap;
	struct gpu_nvtx_row *rows;
	size_t nr_rows;
	bool rows_done;
};

/* ---- names -------------------------------------------------------------------- */

void gpu_nvtx__label(const char *domain, const char *message, char *buf, size_t size)
{
	/* PyTorch's emit_nvtx(): "name, seq = N, op_id = N, sizes = [...], ..." */
	static const char *const details[] = {
		", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ",
	};
	size_t len = strlen(message);

	for (size_t i = 0; i < sizeof(details) / sizeof(details[0]); i++) {
		const char *d = strstr(message, details[i]);

		if (d && (size_t)(d - message) < len)
			len = (size_t)(d - message);
	}
	if (domain)
		snprintf(buf, size, "%s:%.*s", domain, (int)len, message);
	else
		snprintf(buf, size, "%.*s", (int)len, message);
}

static const char *gpu_nvtx__str(const struct gpu_nvtx *nv, uint32_t pid, uint32_t id)
{
	const uint64_t *slot = id ? u64map__find(&nv->strs, (uint64_t)pid << 32 | id) : NULL;

	return slot ? (const char *)(uintptr_t)*slot : NULL;
}

static void gpu_nvtx__range_label(const struct gpu_nvtx *nv, const struct nvtx_range *r,
				  char *buf, size_t size)
{
	const char *msg = gpu_nvtx__str(nv, r->pid, r->message_id);
	const char *dom = gpu_nvtx__str(nv, r->pid, r->domain_id);

	if (!msg)
		msg = r->message_id ? "[unknown message]" : "(no message)";
	if (!dom && r->domain_id)
		dom = "[unknown domain]";
	gpu_nvtx__label(dom, msg, buf, size);
}

static uint32_t gpu_nvtx__frame(struct gpu_nvtx *nv, struct profile *p, struct nvtx_range *r)
{
	char label[1024], name[1100];

	if (!r->frame) {
		gpu_nvtx__range_label(nv, r, label, sizeof(label));
		snprintf(name, sizeof(name), GPU_NVTX_MODULE "%s", label);
		r->frame = profile__intern_frame(p, FRAME_MARKER, GPU_NVTX_MODULE, name, 0,
						 false) + 1;
	}
	return r->frame - 1;
}

/* ---- pass 1 ------------------------------------------------------------------- */

static void gpu_nvtx__add_string(struct gpu_nvtx *nv, const struct xpu_record *rec)
{
	const struct xpu_string *st = rec->body;
	const char *str = xpu_record__string(rec, sizeof(*st));
	uint64_t *slot;

	if (!str)
		return;
	slot = u64map__slot(&nv->strs, (uint64_t)st->pid << 32 | st->id);
	if (!*slot)		/* re-sent after a drop: the same text */
		*slot = (uint64_t)(uintptr_t)xstrdup(str);
}

static void gpu_nvtx__add_range(struct gpu_nvtx *nv, const struct xpu_record *rec)
{
	struct xpu_gpu_nvtx n;
	uint32_t kind;

	memcpy(&n, rec->body, sizeof(n));
	kind = n.flags & (XPU_NVTX_PUSHPOP | XPU_NVTX_STARTEND | XPU_NVTX_MARK);
	if (kind == XPU_NVTX_MARK) {
		nv->stats.marks++;
		return;
	}
	if ((kind != XPU_NVTX_PUSHPOP && kind != XPU_NVTX_STARTEND) || (n.end && n.end < n.start)) {
		nv->stats.bad++;
		return;
	}
	if (kind == XPU_NVTX_PUSHPOP)
		nv->stats.pushpop++;
	else
		nv->stats.startend++;
	nv->stats.never_closed += !n.end;
	nv->ranges = xgrow(nv->ranges, &nv->ranges_cap, nv->nr_ranges + 1, sizeof(*nv->ranges));
	nv->ranges[nv->nr_ranges++] = (struct nvtx_range){
		.start = n.start, .end = n.end ? n.end : NVTX_OPEN, .range_id = n.range_id,
		.pid = n.pid, .tid = n.tid, .domain_id = n.domain_id, .message_id = n.message_id,
		.flags = kind, .depth = n.depth, .unclosed = !n.end,
	};
}

static int gpu_nvtx__record(struct session *s, const struct xpu_record *rec, int pass,
			    void *priv)
{
	struct gpu_nvtx *nv = priv;

	if (pass != 1)
		return 0;
	switch (rec->type) {
	case XPU_REC_STRING:
		gpu_nvtx__add_string(nv, rec);
		break;
	case XPU_REC_GPU_NVTX:
		gpu_nvtx__add_range(nv, rec);
		break;
	case XPU_REC_GPU_CORR: {
		struct xpu_gpu_corr c;

		memcpy(&c, rec->body, sizeof(c));
		if (c.domain != XPU_API_NVTX)
			break;
		nv->stats.push_records++;
		if (c.correlation_id > UINT32_MAX)	/* not a range id of ours */
			break;
		nv->pushed = xgrow(nv->pushed, &nv->pushed_cap, nv->nr_pushed + 1,
				   sizeof(*nv->pushed));
		nv->pushed[nv->nr_pushed++] = (uint64_t)c.pid << 32 | (c.correlation_id & UINT32_MAX);
		break;
	}
	}
	return 0;
}

/* ---- between the passes ----------------------------------------------------------- */

static int nvtx_range__cmp(const void *a, const void *b)
{
	const struct nvtx_range *x = a, *y = b;

	if (x->flags != y->flags)
		return x->flags == XPU_NVTX_PUSHPOP ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)	/* pushed at the same ns: the outer one first */
		return x->depth < y->depth ? -1 : 1;
	return x->range_id < y->range_id ? -1 : x->range_id > y->range_id;
}

/*
 * The enclosing range of each push/pop range of one thread, by a sweep in
 * start order with a stack of ranges still open: each range's parent is the
 * top once those closed by its start are popped. Every range open at a
 * time t is then on the parent chain of the last range started by t (it was
 * open when that one started, so on the stack below it), which is what the
 * filter walks. Ranges of different domains need not nest; ones that closed
 * early stay on the chain and the filter checks each.
 */
static void gpu_nvtx__parents(struct gpu_nvtx *nv, size_t first, size_t n)
{
	uint32_t *stack = xmalloc((n + 1) * sizeof(*stack));
	size_t top = 0;

	for (size_t i = first; i < first + n; i++) {
		struct nvtx_range *r = &nv->ranges[i];

		while (top && nv->ranges[stack[top - 1]].end <= r->start)
			top--;
		r->parent = top ? stack[top - 1] + 1 : 0;
		stack[top++] = (uint32_t)i;
	}
	free(stack);
}

static bool gpu_nvtx__nvtx_frame(const struct frame *f)
{
	return !f->unknown && (!strncmp(f->name, "nvtx", 4) ||
			       !strncmp(f->module, "libnvToolsExt", 13) ||
			       !strncmp(f->module, "libnvtx3interop", 15));
}

/* A push stack resolved and cut where NVTX, CUPTI and our library begin:
 * the frames the application was in when it pushed. */
static void gpu_nvtx__push_stack(struct gpu_nvtx *nv, struct session *s,
				 const struct xpu_record *rec)
{
	uint32_t frames[CALLCHAIN_MAX];
	struct xpu_stack_view v;
	struct xpu_gpu_corr c;
	struct nvtx_range *r;
	const uint64_t *slot;
	size_t n;

	memcpy(&c, rec->body, sizeof(c));
	if (c.domain != XPU_API_NVTX || c.correlation_id > UINT32_MAX ||
	    !(slot = u64map__find(&nv->by_id, (uint64_t)c.pid << 32 | c.correlation_id)))
		return;
	r = &nv->ranges[*slot - 1];
	if (r->have_push || r->tid != c.tid ||
	    xpu_stack__parse((const uint8_t *)rec->body + offsetof(struct xpu_gpu_corr, stack),
			     rec->body_size - offsetof(struct xpu_gpu_corr, stack), &v))
		return;
	n = callchain__resolve(&s->callchain, c.pid, c.tid, c.time, &v, frames, CALLCHAIN_MAX,
			       NULL);
	n = gpu__stack_cut(&s->profile, &nv->api_names, frames, n);
	while (n && gpu_nvtx__nvtx_frame(profile__frame(&s->profile, frames[n - 1])))
		n--;
	r->push = profile__intern_stack(&s->profile, frames, n);
	r->have_push = true;
	nv->stats.push_stacks++;
}

/*
 * Push/pop ranges of one thread whose end was not recorded (issue 31: NCCL
 * pops with NVTX's payload extension, which older recorders did not see;
 * a program that never pops; a recording that stopped first). With a push
 * stack the filter keeps each to the stacks still inside the code that
 * pushed it (a push stack recorded but not resolved: open to the end);
 * without one it ends where its thread next pushed a range in
 * its domain (had it still been open, that one would have nested in it,
 * which nothing recorded says), else it stays open to the end. Ranges only
 * shrink, so the parent chains stay valid.
 */
static void gpu_nvtx__cap(struct gpu_nvtx *nv, size_t first, size_t n)
{
	struct u64map next;		/* domain id -> start of the next range */

	u64map__init(&next);
	for (size_t i = first + n; i-- > first; ) {
		struct nvtx_range *r = &nv->ranges[i];
		uint64_t *slot = u64map__slot(&next, r->domain_id);

		if (r->unclosed && r->pushed) {
			nv->stats.unclosed_stack++;
		} else if (r->unclosed && *slot > r->start) {
			r->end = *slot;
			nv->stats.unclosed_cut++;
		} else if (r->unclosed) {
			nv->stats.unclosed_open++;
		}
		*slot = r->start;
	}
	u64map__exit(&next);
}

static int gpu_nvtx__prepare(struct session *s, void *priv)
{
	struct gpu_nvtx *nv = priv;
	struct xpu_record rec;

	xpu_qsort(nv->ranges, nv->nr_ranges, sizeof(*nv->ranges), nvtx_range__cmp);
	for (size_t i = 0; i < nv->nr_ranges && nv->ranges[i].flags == XPU_NVTX_PUSHPOP; ) {
		const struct nvtx_range *r = &nv->ranges[i];
		size_t j = i;

		while (j < nv->nr_ranges && nv->ranges[j].flags == XPU_NVTX_PUSHPOP &&
		       nv->ranges[j].pid == r->pid && nv->ranges[j].tid == r->tid)
			j++;
		*u64map__slot(&nv->threads, (uint64_t)r->pid << 32 | r->tid) =
			(uint64_t)i << 32 | (j - i);
		gpu_nvtx__parents(nv, i, j - i);
		i = j;
	}
	nv->nr_pushpop = nv->stats.pushpop;
	for (size_t i = 0; i < nv->nr_pushpop; i++)
		if (nv->ranges[i].range_id <= UINT32_MAX)
			*u64map__slot(&nv->by_id, (uint64_t)nv->ranges[i].pid << 32 |
				      nv->ranges[i].range_id) = i + 1;
	for (size_t i = 0; i < nv->nr_pushed; i++) {
		const uint64_t *slot = u64map__find(&nv->by_id, nv->pushed[i]);

		if (slot)
			nv->ranges[*slot - 1].pushed = true;
	}
	free(nv->pushed);
	nv->pushed = NULL;
	nv->nr_pushed = nv->pushed_cap = 0;
	if (nv->frames && nv->nr_pushpop && nv->stats.push_records) {
		/* the extra read: push stacks before pass 2 needs them, with
		 * the Python frames of their PY_STACK (pass 2's counts kept) */
		uint64_t counts[4] = { s->py.stacks, s->py.used, s->py.unmatched,
				       s->py.unknown_code };

		session__rewind(s);
		while (session__next(s, &rec) == 1) {
			if (rec.type == XPU_REC_GPU_CORR)
				gpu_nvtx__push_stack(nv, s, &rec);
			pyframes__record(&s->py, &rec);
		}
		pyframes__record(&s->py, &(struct xpu_record){ .type = XPU_REC_META });
		s->py.stacks = counts[0], s->py.used = counts[1];
		s->py.unmatched = counts[2], s->py.unknown_code = counts[3];
		debug(1, "nvtx: %llu of %llu push/pop ranges have their push stack",
		      (unsigned long long)nv->stats.push_stacks, (unsigned long long)nv->stats.pushpop);
	}
	for (size_t i = 0; i < nv->nr_pushpop; ) {
		size_t j = i;

		while (j < nv->nr_pushpop && nv->ranges[j].pid == nv->ranges[i].pid &&
		       nv->ranges[j].tid == nv->ranges[i].tid)
			j++;
		gpu_nvtx__cap(nv, i, j - i);
		i = j;
	}
	nv->ready = true;
	return 0;
}

/* ---- the stack filter --------------------------------------------------------------- */

/* How many frames, from the root, the stack shares with r's push stack;
 * after the root when the push stack is unknown. *whole: all of it. */
static size_t gpu_nvtx__depth(const struct session *s, const struct nvtx_range *r,
			      const uint32_t *frames, size_t n, bool *whole)
{
	const uint32_t *push;
	size_t m, i;

	*whole = true;
	if (!r->have_push)
		return n ? 1 : 0;
	push = profile__stack(&s->profile, r->push, &m);
	/* frames of one Python function match at any line: the range was
	 * pushed at one line of it, the work it holds runs at others */
	for (i = 0; i < n && i < m && (frames[i] == push[i] ||
		     pyframes__same_function(profile__frame(&s->profile, frames[i])->name,
					     profile__frame(&s->profile, push[i])->name)); i++)
		;
	*whole = i == m;
	return i;
}

static size_t gpu_nvtx__filter(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
			       uint32_t *frames, size_t n, size_t cap, void *priv)
{
	struct gpu_nvtx *nv = priv;
	uint32_t active[NVTX_MAX_ACTIVE];
	size_t at[NVTX_MAX_ACTIVE];
	size_t first, count, lo, hi, na = 0, k, j = 0;
	const uint64_t *slot;

	if (!nv->ready || !(slot = u64map__find(&nv->threads, (uint64_t)pid << 32 | tid)))
		return n;
	first = (size_t)(*slot >> 32);
	count = (size_t)(uint32_t)*slot;
	for (lo = 0, hi = count; lo < hi; ) {	/* ranges started by time: [0, lo) */
		size_t mid = lo + (hi - lo) / 2;

		if (nv->ranges[first + mid].start <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* innermost first, up the chain of enclosing ranges; one whose end was
	 * not recorded only while the stack is inside the code that pushed it */
	for (uint32_t i = lo ? (uint32_t)(first + lo) : 0, walk = 0; i && walk < NVTX_MAX_WALK;
	     i = nv->ranges[i - 1].parent, walk++) {
		const struct nvtx_range *r = &nv->ranges[i - 1];
		bool whole;

		if (r->start > time || time >= r->end || na == NVTX_MAX_ACTIVE)
			continue;
		if (r->unclosed && r->have_push && (gpu_nvtx__depth(s, r, frames, n, &whole), !whole))
			continue;
		active[na++] = i - 1;
	}
	if (!na)
		return n;
	if (na > cap - n)	/* no room for all: the outermost ones */
		na = cap - n;
	if (!na)
		return n;
	/* outermost first: where each goes, never above the one around it */
	for (k = 0; k < na; k++) {
		const struct nvtx_range *r = &nv->ranges[active[na - 1 - k]];
		bool whole;

		at[k] = gpu_nvtx__depth(s, r, frames, n, &whole);
		if (k && at[k] < at[k - 1])
			at[k] = at[k - 1];
	}
	nv->scratch = xgrow(nv->scratch, &nv->scratch_cap, n + na, sizeof(*nv->scratch));
	k = 0;
	for (size_t i = 0; i <= n; i++) {
		for (; k < na && at[k] == i; k++)
			nv->scratch[j++] = gpu_nvtx__frame(nv, &s->profile,
							   &nv->ranges[active[na - 1 - k]]);
		if (i < n)
			nv->scratch[j++] = frames[i];
	}
	memcpy(frames, nv->scratch, j * sizeof(*frames));
	return j;
}

/* ---- the tool ------------------------------------------------------------------------- */

static void gpu_nvtx__delete(void *priv)
{
	struct gpu_nvtx *nv = priv;
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&nv->strs, &i, &k, &v); )
		free((char *)(uintptr_t)v);
	for (size_t i = 0; i < nv->nr_rows; i++)
		free(nv->rows[i].name);
	free(nv->rows);
	free(nv->ranges);
	free(nv->pushed);
	free(nv->scratch);
	u64map__exit(&nv->strs);
	u64map__exit(&nv->threads);
	u64map__exit(&nv->by_id);
	gpu_api_names__exit(&nv->api_names);
	free(nv);
}

struct gpu_nvtx *gpu_nvtx__find(const struct session *s)
{
	return session__tool(s, GPU_NVTX_TOOL);
}

struct gpu_nvtx *gpu_nvtx__attach(struct session *s, bool frames)
{
	struct gpu_nvtx *nv = gpu_nvtx__find(s);

	if (nv)
		return nv;
	nv = xzalloc(sizeof(*nv));
	nv->tool = (struct session_tool){ .name = GPU_NVTX_TOOL, .record = gpu_nvtx__record,
					  .pass1_done = gpu_nvtx__prepare,
					  .exit = gpu_nvtx__delete, .priv = nv };
	u64map__init(&nv->strs);
	u64map__init(&nv->threads);
	u64map__init_seq(&nv->by_id);	/* pid << 32 | range ids 1, 2, ... */
	gpu_api_names__init(&nv->api_names);
	session__add_tool(s, &nv->tool);
	nv->frames = frames;
	if (frames)
		session__add_stack_filter(s, gpu_nvtx__filter, nv);
	return nv;
}

const struct gpu_nvtx_stats *gpu_nvtx__stats(const struct gpu_nvtx *nv)
{
	return &nv->stats;
}

size_t gpu_nvtx__nr_ranges(const struct gpu_nvtx *nv)
{
	return nv->nr_ranges;
}

void gpu_nvtx__range(const struct gpu_nvtx *nv, size_t i, struct gpu_nvtx_range *out,
		     char *label, size_t size)
{
	const struct nvtx_range *r = &nv->ranges[i];

	*out = (struct gpu_nvtx_range){
		.start = r->start, .end = r->unclosed ? 0 : r->end,
		.pid = r->pid, .tid = r->tid, .depth = r->depth,
		.startend = r->flags == XPU_NVTX_STARTEND,
		.message = gpu_nvtx__str(nv, r->pid, r->message_id),
	};
	gpu_nvtx__range_label(nv, r, label, size);
}

/* ---- --header ---------------------------------------------------------------------------- */

static int gpu_nvtx_row__cmp(const void *a, const void *b)
{
	const struct gpu_nvtx_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int gpu_nvtx_row__cmp_count(const void *a, const void *b)
{
	const struct gpu_nvtx_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

const struct gpu_nvtx_row *gpu_nvtx__rows(struct gpu_nvtx *nv, size_t *nr)
{
	struct bmap by_name;
	char label[1024];

	if (!nv->rows_done) {
		nv->rows_done = true;
		bmap__init(&by_name);
		for (size_t i = 0; i < nv->nr_ranges; i++) {
			const struct nvtx_range *r = &nv->ranges[i];
			struct gpu_nvtx_row *row;
			uint64_t ns;
			bool found;
			void **slot;

			if (r->unclosed)
				continue;
			gpu_nvtx__range_label(nv, r, label, sizeof(label));
			slot = bmap__slot(&by_name, label, strlen(label), &found);
			if (!found) {
				nv->rows = xrealloc(nv->rows, (nv->nr_rows + 1) * sizeof(*nv->rows));
				nv->rows[nv->nr_rows] = (struct gpu_nvtx_row){ .name = xstrdup(label) };
				*slot = (void *)(uintptr_t)(++nv->nr_rows);
			}
			row = &nv->rows[(uintptr_t)*slot - 1];
			ns = r->end - r->start;
			row->count++;
			row->total_ns += ns;
			if (ns > row->max_ns)
				row->max_ns = ns;
		}
		bmap__exit(&by_name, NULL);
		xpu_qsort(nv->rows, nv->nr_rows, sizeof(*nv->rows), gpu_nvtx_row__cmp);
	}
	*nr = nv->nr_rows;
	return nv->rows;
}

/* The ranges whose end was not recorded: how many, what the stacks make of
 * them (gpu_nvtx__cap) and their names, most first. */
static void gpu_nvtx__header_unclosed(const struct gpu_nvtx *nv, FILE *fp)
{
	const struct gpu_nvtx_stats *st = &nv->stats;
	struct gpu_nvtx_row *rows = NULL;
	size_t nr = 0, pushpop = 0;
	struct bmap by_name;
	char label[1024];

	if (!st->never_closed)
		return;
	bmap__init(&by_name);
	for (size_t i = 0; i < nv->nr_ranges; i++) {
		const struct nvtx_range *r = &nv->ranges[i];
		bool found;
		void **slot;

		if (!r->unclosed)
			continue;
		pushpop += r->flags == XPU_NVTX_PUSHPOP;
		gpu_nvtx__range_label(nv, r, label, sizeof(label));
		slot = bmap__slot(&by_name, label, strlen(label), &found);
		if (!found) {
			rows = xrealloc(rows, (nr + 1) * sizeof(*rows));
			rows[nr] = (struct gpu_nvtx_row){ .name = xstrdup(label) };
			*slot = (void *)(uintptr_t)(++nr);
		}
		rows[(uintptr_t)*slot - 1].count++;
	}
	bmap__exit(&by_name, NULL);
	xpu_qsort(rows, nr, sizeof(*rows), gpu_nvtx_row__cmp_count);
	fprintf(fp, "#   never closed: %zu push/pop, %" PRIu64 " start/end (their end was not "
		"recorded):", pushpop, st->never_closed - pushpop);
	for (size_t i = 0; i < nr && i < 5; i++)
		fprintf(fp, "%s %s %" PRIu64, i ? "," : "", rows[i].name, rows[i].count);
	fprintf(fp, "%s\n", nr > 5 ? ", ..." : "");
	if (pushpop)
		fprintf(fp, "#     push/pop ones: %" PRIu64 " only on stacks inside the code that "
			"pushed them, %" PRIu64 " cut where their thread next pushed in their "
			"domain, %" PRIu64 " open to the end\n", st->unclosed_stack,
			st->unclosed_cut, st->unclosed_open);
	for (size_t i = 0; i < nr; i++)
		free(rows[i].name);
	free(rows);
}

int gpu_nvtx__header_prepare(struct session *s)
{
	gpu_nvtx__attach(s, false);
	return 0;
}

int gpu_nvtx__header(const struct session *s, FILE *fp)
{
	struct gpu_nvtx *nv = gpu_nvtx__find(s);
	const struct gpu_nvtx_stats *st;
	const struct gpu_nvtx_row *rows;
	char t[3][32];
	size_t nr;

	if (!nv || !(nv->stats.pushpop + nv->stats.startend + nv->stats.marks + nv->stats.bad))
		return 0;
	st = &nv->stats;
	rows = gpu_nvtx__rows(nv, &nr);
	fprintf(fp, "#\n# NVTX ranges (exact, from the GPU_NVTX records):\n");
	fprintf(fp, "#   push/pop %" PRIu64 ", start/end %" PRIu64 ", marks %" PRIu64
		", never closed %" PRIu64 ", malformed %" PRIu64 "\n", st->pushpop, st->startend,
		st->marks, st->never_closed, st->bad);
	fprintf(fp, "#   push stacks recorded: %" PRIu64 "\n", st->push_records);
	if (nv->frames)
		fprintf(fp, "#   push/pop ranges with their push stack: %" PRIu64 " of %" PRIu64
			" (the others' frames go after the root)\n", st->push_stacks, st->pushpop);
	if (nr)
		fprintf(fp, "#  %8s %8s %8s %8s  %s\n", "total", "count", "mean", "max", "range");
	for (size_t i = 0; i < nr && i < 20; i++)
		fprintf(fp, "#  %8s %8" PRIu64 " %8s %8s  %s\n",
			gpu__ns_str(rows[i].total_ns, t[0], sizeof(t[0])), rows[i].count,
			gpu__ns_str(rows[i].total_ns / rows[i].count, t[1], sizeof(t[1])),
			gpu__ns_str(rows[i].max_ns, t[2], sizeof(t[2])), rows[i].name);
	if (nr > 20)
		fprintf(fp, "#   ... %zu more\n", nr - 20);
	gpu_nvtx__header_unclosed(nv, fp);
	return ferror(fp) ? -EIO : 0;
}
