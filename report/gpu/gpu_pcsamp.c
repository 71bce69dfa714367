// SPDX-License-Identifier: MIT
/* GPU PC sampling in the report: see gpu_pcsamp.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "report/symbols/demangle.h"
#include "report/profile/profile.h"
#include "report/gpu/cubin_lines.h"
#include "report/gpu/gpu_pcsamp.h"

#define PCS_MODULE	"[gpu]"
#define PCS_REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"

struct gpu_pcs_cubin {
	uint32_t pid;
	uint64_t crc;
	uint32_t flags;			/* XPU_CUBIN_* */
	void *data;			/* as recorded (annotate's nvdisasm); NULL: skipped */
	size_t size;
	struct cubin_lines lines;
	struct gpu_pcs_cubin *next;	/* same hash */
};

void gpu_pcsamp__init(struct gpu_pcsamp *ps)
{
	memset(ps, 0, sizeof(*ps));
	u64map__init(&ps->groups);
	u64map__init(&ps->group_end);
	u64map__init(&ps->reasons);
	u64map__init(&ps->cubins);
	gpu_pcs_perturb__init(&ps->perturb);
}

void gpu_pcsamp__exit(struct gpu_pcsamp *ps)
{
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&ps->reasons, &i, &k, &v); )
		free((char *)(uintptr_t)(v - 1));
	for (size_t i = 0; u64map__next(&ps->cubins, &i, &k, &v); ) {
		struct gpu_pcs_cubin *c = (struct gpu_pcs_cubin *)(uintptr_t)v, *next;

		for (; c; c = next) {
			next = c->next;
			cubin_lines__exit(&c->lines);
			free(c->data);
			free(c);
		}
	}
	u64map__exit(&ps->groups);
	u64map__exit(&ps->group_end);
	u64map__exit(&ps->reasons);
	u64map__exit(&ps->cubins);
	gpu_pcs_perturb__exit(&ps->perturb);
	free(ps->e);
	memset(ps, 0, sizeof(*ps));
}

static uint64_t pcs__cubin_key(uint32_t pid, uint64_t crc)
{
	return crc ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ull);
}

static const struct gpu_pcs_cubin *pcs__cubin(const struct gpu_pcsamp *ps, uint32_t pid,
					      uint64_t crc)
{
	const uint64_t *v = u64map__find(&ps->cubins, pcs__cubin_key(pid, crc));

	for (const struct gpu_pcs_cubin *c = v ? (void *)(uintptr_t)*v : NULL; c; c = c->next)
		if (c->pid == pid && c->crc == crc)
			return c;
	return NULL;
}

static void pcs__add_cubin(struct gpu_pcsamp *ps, const struct xpu_record *rec)
{
	struct xpu_gpu_cubin h;
	struct gpu_pcs_cubin *c;
	const void *data;
	uint64_t *slot;

	if (xpu_cubin__data(rec, &h, &data)) {
		ps->stats.cubins_bad++;
		return;
	}
	if (pcs__cubin(ps, h.pid, h.crc))
		return;
	c = xzalloc(sizeof(*c));
	c->pid = h.pid;
	c->crc = h.crc;
	c->flags = h.flags;
	if (!data) {			/* kept, without lines: annotate says why */
		ps->stats.cubins_skipped++;
	} else if (cubin_lines__parse(&c->lines, data, h.size)) {
		ps->stats.cubins_bad++;
	} else {
		c->data = xmalloc(h.size ? h.size : 1);
		memcpy(c->data, data, h.size);
		c->size = h.size;
		ps->stats.cubins++;
		ps->stats.cubins_reduced += !!(h.flags & XPU_CUBIN_REDUCED);
	}
	slot = u64map__slot(&ps->cubins, pcs__cubin_key(h.pid, h.crc));
	c->next = (struct gpu_pcs_cubin *)(uintptr_t)*slot;
	*slot = (uint64_t)(uintptr_t)c;
}

void gpu_pcsamp__record(struct gpu_pcsamp *ps, const struct xpu_record *rec)
{
	switch (rec->type) {
	case XPU_REC_GPU_PC_RANGE:
		gpu_pcs_perturb__range(&ps->perturb, rec);
		break;
	case XPU_REC_GPU_STALL_REASON: {
		const struct xpu_gpu_stall_reason *r = rec->body;
		const char *name = xpu_record__tail(rec);
		uint64_t *slot;

		if (!name)
			return;
		slot = u64map__slot(&ps->reasons, (uint64_t)r->pid << 32 |
				    (uint64_t)(r->device & 0xffff) << 16 | (r->index & 0xffff));
		if (!*slot)
			*slot = (uint64_t)(uintptr_t)xstrdup(name) + 1;
		break;
	}
	case XPU_REC_GPU_CUBIN:
		pcs__add_cubin(ps, rec);
		break;
	case XPU_REC_GPU_PC_SAMPLE: {
		const struct xpu_gpu_pc_stall *st;
		struct xpu_gpu_pc_sample s;

		ps->stats.records++;
		if (xpu_pc_sample__stalls(rec, &s, &st)) {
			ps->stats.malformed++;
			return;
		}
		for (unsigned i = 0; i < s.nr_stalls; i++) {
			struct xpu_gpu_pc_stall x;

			memcpy(&x, &st[i], sizeof(x));
			if (!x.samples)
				continue;
			if (ps->nr == ps->cap) {
				ps->cap = ps->cap ? ps->cap * 2 : 256;
				ps->e = xrealloc(ps->e, ps->cap * sizeof(*ps->e));
			}
			ps->e[ps->nr++] = (struct gpu_pcs_entry){
				.start = s.start, .end = s.end, .crc = s.cubin_crc, .pc = s.pc_offset,
				.pid = s.pid, .name_id = s.name_id, .device = s.device,
				.reason = x.reason, .samples = x.samples,
			};
			ps->stats.samples += x.samples;
		}
		break;
	}
	}
}

static int pcs_entry__cmp(const void *a, const void *b)
{
	const struct gpu_pcs_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->name_id != y->name_id)
		return x->name_id < y->name_id ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

void gpu_pcsamp__prepare(struct gpu_pcsamp *ps)
{
	xpu_qsort(ps->e, ps->nr, sizeof(*ps->e), pcs_entry__cmp);
	gpu_pcs_perturb__prepare(&ps->perturb);
	for (size_t i = 0; i < ps->nr; i++) {
		uint64_t key = (uint64_t)ps->e[i].pid << 32 | ps->e[i].name_id;
		uint64_t *slot = u64map__slot(&ps->groups, key);

		if (!*slot)
			*slot = i + 1;
		*u64map__slot(&ps->group_end, key) = i + 1;
		if (ps->e[i].end > ps->e[i].start && ps->e[i].end - ps->e[i].start > ps->max_window)
			ps->max_window = ps->e[i].end - ps->e[i].start;
	}
}

const char *gpu_pcsamp__reason_name(const char *cupti_name)
{
	if (!strncmp(cupti_name, PCS_REASON_PREFIX, strlen(PCS_REASON_PREFIX)))
		return cupti_name + strlen(PCS_REASON_PREFIX);
	if (!strncmp(cupti_name, "smsp__pcsamp_", 13))
		return cupti_name + 13;
	return cupti_name;
}

const char *gpu_pcsamp__entry_reason(const struct gpu_pcsamp *ps, const struct gpu_pcs_entry *e)
{
	const uint64_t *v = u64map__find(&ps->reasons, (uint64_t)e->pid << 32 |
					 (uint64_t)(e->device & 0xffff) << 16 | (e->reason & 0xffff));

	return v ? gpu_pcsamp__reason_name((const char *)(uintptr_t)(*v - 1)) : NULL;
}

static const char *pcs__basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const void *gpu_pcsamp__cubin_data(const struct gpu_pcsamp *ps, uint32_t pid, uint64_t crc,
				   size_t *size, uint32_t *flags)
{
	const struct gpu_pcs_cubin *c = pcs__cubin(ps, pid, crc);

	*size = c ? c->size : 0;
	*flags = c ? c->flags : 0;
	return c ? c->data : NULL;
}

int gpu_pcsamp__line(const struct gpu_pcsamp *ps, uint32_t pid, uint64_t crc, const char *mangled,
		     uint64_t pc, const char **file, uint32_t *line)
{
	const struct gpu_pcs_cubin *c = pcs__cubin(ps, pid, crc);

	if (!c || !mangled)
		return -ENOENT;
	return cubin_lines__lookup(&c->lines, mangled, pc, file, line);
}

/* The entry's [sass] and [stall] frames, made once. */
static void pcs__frames(struct gpu_pcsamp *ps, struct profile *p, struct gpu_pcs_entry *e,
			const char *mangled)
{
	const struct gpu_pcs_cubin *c;
	const char *file = NULL, *reason;
	char *short_name, buf[1024];
	uint32_t line = 0;

	if (e->sass_frame)
		return;
	c = pcs__cubin(ps, e->pid, e->crc);
	if (c && mangled && !cubin_lines__lookup(&c->lines, mangled, e->pc, &file, &line))
		ps->stats.pcs_with_line++;
	else if (!c && mangled && ps->find_line &&
		 !ps->find_line(ps->find_ctx, e->pid, e->device, e->start, mangled, e->pc, &file,
				&line)) {
		ps->stats.pcs_with_line++;	/* gpu_fatbin's header line says how many */
	} else {
		file = NULL;
		ps->stats.pcs_without_line++;
	}
	short_name = mangled ? demangle(mangled, false) : NULL;
	if (file)
		snprintf(buf, sizeof(buf), "[sass]%s+%#" PRIx64 " (%s:%u)",
			 short_name ? short_name : mangled, e->pc, pcs__basename(file), line);
	else
		snprintf(buf, sizeof(buf), "[sass]%s+%#" PRIx64, short_name ? short_name :
			 mangled ? mangled : "[unknown]", e->pc);
	free(short_name);
	e->sass_frame = profile__intern_frame(p, FRAME_GPU_KERNEL, PCS_MODULE, buf, e->pc, false) + 1;
	reason = gpu_pcsamp__entry_reason(ps, e);
	if (reason)
		snprintf(buf, sizeof(buf), "[stall]%s", reason);
	else
		snprintf(buf, sizeof(buf), "[stall]reason_%u", e->reason);
	e->stall_frame = profile__intern_frame(p, FRAME_GPU_KERNEL, PCS_MODULE, buf, 0, !reason) + 1;
}

/* The first entry of [lo, hi) whose start is t or later. */
static size_t pcs__first_start(const struct gpu_pcs_entry *e, size_t lo, size_t hi, uint64_t t)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool gpu_pcsamp__split(struct gpu_pcsamp *ps, struct profile *p, struct u64map *memo,
		       uint32_t stack, uint32_t pid, uint32_t name_id, const char *mangled,
		       uint64_t start, uint64_t end, double weight, gpu_pcsamp_share_fn fn,
		       void *priv)
{
	uint64_t key = (uint64_t)pid << 32 | name_id, total = 0;
	const uint64_t *first, *last;
	size_t lo, hi, from, to;
	double given = 0;
	bool whole = false;

	if (ps->off || !ps->nr)
		return false;
	first = u64map__find(&ps->groups, key);
	last = u64map__find(&ps->group_end, key);
	if (!first || !last) {
		ps->stats.kernels_unsampled++;
		return false;
	}
	lo = *first - 1;
	hi = *last;
	/* the windows overlapping [start, end]: entries sorted by start, none
	 * longer than max_window */
	from = pcs__first_start(ps->e, lo, hi, start > ps->max_window ? start - ps->max_window : 0);
	to = pcs__first_start(ps->e, from, hi, end + 1);
	if (from == to) {
		from = lo;
		to = hi;
		whole = true;
	}
	for (size_t i = from; i < to; i++)
		if (ps->e[i].start <= end && ps->e[i].end >= start)
			total += ps->e[i].samples;
	if (!total) {
		from = lo;
		to = hi;
		whole = true;
		for (size_t i = from; i < to; i++)
			total += ps->e[i].samples;
	}
	if (!total)
		return false;
	if (fn == gpu_pcsamp__to_profile) {	/* counted once: by the profile's split */
		ps->stats.kernels_split++;
		ps->stats.kernels_whole += whole;
	}
	for (size_t i = from, left = 0; i < to; i++) {
		struct gpu_pcs_entry *e = &ps->e[i];
		uint32_t s;
		double w;

		if (!whole && !(e->start <= end && e->end >= start))
			continue;
		left += e->samples;
		pcs__frames(ps, p, e, mangled);
		s = profile__append(p, memo, stack, e->sass_frame - 1);
		s = profile__append(p, memo, s, e->stall_frame - 1);
		/* the last share takes the rest: the kernel's total is kept */
		w = left == total ? weight - given : weight * (double)e->samples / (double)total;
		given += w;
		fn(priv, s, w, weight > 0 ? w / weight : 0);
	}
	return true;
}

void gpu_pcsamp__to_profile(void *priv, uint32_t stack, double weight, double frac)
{
	const struct gpu_pcsamp_to_profile *t = priv;

	(void)frac;
	profile__add(t->p, stack, t->pid, t->tid, t->comm, ORIGIN_GPU, weight);
}

struct pcs_row {
	const char *label;
	uint64_t samples;
};

static int pcs_row__cmp(const void *a, const void *b)
{
	const struct pcs_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* label's samples added to rows (at most max distinct). */
static void pcs__tally(struct pcs_row *rows, size_t *n, size_t max, const char *label,
		       uint64_t samples)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(rows[i].label, label)) {
			rows[i].samples += samples;
			return;
		}
	if (*n < max)
		rows[(*n)++] = (struct pcs_row){ label, samples };
}

void gpu_pcsamp__header(const struct gpu_pcsamp *ps, FILE *fp,
			const char *(*names)(const void *ctx, uint32_t pid, uint32_t name_id),
			const void *ctx)
{
	const struct gpu_pcs_stats *st = &ps->stats;
	struct pcs_row reasons[64], lines[64];
	char (*labels)[160] = xcalloc(64, sizeof(*labels));
	char (*unknown)[24] = xcalloc(64, sizeof(*unknown));
	uint64_t k, v;

	fprintf(fp, "#   pc samples: %llu in %llu records (malformed %llu), cubins %llu (reduced "
		"%llu, skipped %llu, unreadable %llu), PCs with a line %llu, without %llu%s\n",
		(unsigned long long)st->samples, (unsigned long long)st->records,
		(unsigned long long)st->malformed, (unsigned long long)st->cubins,
		(unsigned long long)st->cubins_reduced, (unsigned long long)st->cubins_skipped,
		(unsigned long long)st->cubins_bad,
		(unsigned long long)st->pcs_with_line, (unsigned long long)st->pcs_without_line,
		ps->off ? "; not shown (--no-pc-sampling)" : "");
	if (st->kernels_split || st->kernels_unsampled)
		fprintf(fp, "#   kernels split by pc samples: %llu (%llu outside every window: "
			"their function's totals), without samples: %llu\n",
			(unsigned long long)st->kernels_split, (unsigned long long)st->kernels_whole,
			(unsigned long long)st->kernels_unsampled);
	if (st->records)
		gpu_pcs_perturb__header(&ps->perturb, fp, names, ctx);
	for (size_t it = 0; u64map__next(&ps->groups, &it, &k, &v); ) {
		uint64_t total = 0;
		size_t nr = 0, nl = 0, hi = *u64map__find(&ps->group_end, k);
		const char *mangled = names(ctx, (uint32_t)(k >> 32), (uint32_t)k);
		char *dem = mangled ? demangle(mangled, true) : NULL;
		const struct gpu_pcs_cubin *c;

		for (size_t i = v - 1; i < hi; i++) {
			const struct gpu_pcs_entry *e = &ps->e[i];
			const char *r = gpu_pcsamp__entry_reason(ps, e), *file;
			uint32_t line;

			total += e->samples;
			if (!r) {	/* as its [stall] frame says it */
				snprintf(unknown[e->reason % 64], sizeof(unknown[0]), "reason_%u", e->reason);
				r = unknown[e->reason % 64];
			}
			pcs__tally(reasons, &nr, 64, r, e->samples);
			c = pcs__cubin(ps, e->pid, e->crc);
			if (c && mangled && !cubin_lines__lookup(&c->lines, mangled, e->pc, &file, &line)) {
				char buf[160];

				snprintf(buf, sizeof(buf), "%s:%u", pcs__basename(file), line);
				for (size_t j = 0; j < nl; j++)
					if (!strcmp(lines[j].label, buf)) {
						lines[j].samples += e->samples;
						goto next;
					}
				if (nl < 64) {
					memcpy(labels[nl], buf, sizeof(buf));
					lines[nl] = (struct pcs_row){ labels[nl], e->samples };
					nl++;
				}
			}
next:
			;
		}
		xpu_qsort(reasons, nr, sizeof(*reasons), pcs_row__cmp);
		xpu_qsort(lines, nl, sizeof(*lines), pcs_row__cmp);
		fprintf(fp, "#   pc samples pid %u %s: %llu; stalls:", (uint32_t)(k >> 32),
			dem ? dem : mangled ? mangled : "[unknown]", (unsigned long long)total);
		for (size_t i = 0; i < nr; i++)
			fprintf(fp, " %s %llu (%.1f%%)", reasons[i].label,
				(unsigned long long)reasons[i].samples,
				100.0 * (double)reasons[i].samples / (double)total);
		fprintf(fp, "\n");
		if (nl) {
			fprintf(fp, "#     lines:");
			for (size_t i = 0; i < nl && i < 10; i++)
				fprintf(fp, " %s %llu (%.1f%%)", lines[i].label,
					(unsigned long long)lines[i].samples,
					100.0 * (double)lines[i].samples / (double)total);
			fprintf(fp, "\n");
		}
		free(dem);
	}
	free(labels);
	free(unknown);
}
