// SPDX-License-Identifier: MIT
/* perf report --stdio --children style table over the profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

struct stdio_row {
	uint32_t comm, frame;
	double self, children;
	double self_count;		/* samples (records) with this frame as leaf */
	uint32_t loc;			/* its heaviest source line (profile.h), 0: none */
};

#define STDIO_SYM_WIDTH 48		/* the Symbol column, when Source:Line follows */

/* Each row's heaviest source line in the view: the weight of every entry
 * under each location array, summed per (row, line). */
static bool stdio__locs(const struct profile *p, enum profile_view view, struct bmap *idx,
			struct stdio_row *rows, size_t nr_rows)
{
	struct loc_vote votes = { 0 };
	uint32_t *best;
	bool any = false;

	if (!p->lines.nr_w)
		return false;
	for (size_t i = 0; i < p->lines.nr_w; i++) {
		const struct profile_locw *w = &p->lines.w[i];
		const struct profile_entry *e = &p->entries[w->entry];
		uint32_t lo[PROFILE_MAX_DEPTH];
		const uint32_t *fr;
		size_t n;

		if (!profile__in_view(e, view))
			continue;
		fr = profile__stack(p, e->stack, &n);
		profile__stack_locs(p, w->locs, fr, n, lo);
		for (size_t j = 0; j < n; j++) {
			uint32_t key[2] = { e->comm, fr[j] };
			void *row;

			if (lo[j] && (row = bmap__find(idx, key, sizeof(key))))
				loc_vote__add(&votes, (uint32_t)(uintptr_t)row - 1, lo[j], w->weight);
		}
	}
	best = xcalloc(nr_rows + 1, sizeof(*best));
	loc_vote__best(&votes, best, nr_rows);
	for (size_t i = 0; i < nr_rows; i++) {
		rows[i].loc = best[i];
		any |= best[i] != 0;
	}
	free(best);
	loc_vote__exit(&votes);
	return any;
}

static int stdio_row__cmp(const void *a, const void *b)
{
	const struct stdio_row *x = a, *y = b;

	if (x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int output__stdio(const struct session *s, FILE *fp, enum profile_view view)
{
	const struct profile *p = &s->profile;
	double total = profile__total(p, view);
	uint32_t *seen = xcalloc(p->nr_frames + 1, sizeof(*seen));
	struct stdio_row *rows = NULL;
	size_t nr_rows = 0, cap = 0;
	struct bmap idx;
	uint64_t nr_records = 0;
	bool locs;
	int symw = 0;
	char loc[256];

	bmap__init(&idx);
	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(p, e->stack, &n);

		if (!profile__in_view(e, view))
			continue;
		nr_records += e->count;
		/* seen[] marks frames already credited for this entry: a
		 * recursive function counts once in children */
		for (size_t j = n; j-- > 0; ) {
			uint32_t key[2] = { e->comm, fr[j] };
			bool found;
			void **slot = bmap__slot(&idx, key, sizeof(key), &found);
			struct stdio_row *r;

			if (!found) {
				rows = xgrow(rows, &cap, nr_rows + 1, sizeof(*rows));
				rows[nr_rows] = (struct stdio_row){ .comm = e->comm, .frame = fr[j] };
				*slot = (void *)(uintptr_t)(++nr_rows);
			}
			r = &rows[(uintptr_t)*slot - 1];
			if (j == n - 1) {
				r->self += e->weight;
				r->self_count += (double)e->count;
			}
			if (seen[fr[j]] != i + 1) {
				seen[fr[j]] = (uint32_t)(i + 1);
				r->children += e->weight;
			}
		}
	}
	locs = stdio__locs(p, view, &idx, rows, nr_rows);
	bmap__exit(&idx, NULL);
	free(seen);
	xpu_qsort(rows, nr_rows, sizeof(*rows), stdio_row__cmp);
	/* with source lines, Symbol is a column as wide as its longest entry
	 * (up to STDIO_SYM_WIDTH; longer ones push their line right) */
	for (size_t i = 0; locs && i < nr_rows; i++) {
		int len = 4 + (int)strlen(profile__frame(p, rows[i].frame)->name);

		if (len > symw)
			symw = len > STDIO_SYM_WIDTH ? STDIO_SYM_WIDTH : len;
	}

	fprintf(fp, "# Total: %.0f samples (%llu records)%s%s\n", total,
		(unsigned long long)nr_records, view == VIEW_MERGED ? "" : ", ",
		view == VIEW_MERGED ? "" : profile_view__name(view));
	fprintf(fp, "# Lost events: %llu\n", (unsigned long long)session__lost_total(s));
	fprintf(fp, "#\n# %8s  %8s  %8s  %-16s  %-24s  %s%*s%s\n", "Children", "Self", "Samples",
		"Command", "Shared Object", "Symbol", locs ? symw - 6 + 2 : 0, "",
		locs ? "Source:Line" : "");
	fprintf(fp, "# ........  ........  ........  ................  ........................  ......"
		"%*s%s\n#\n", locs ? symw - 6 + 2 : 0, "", locs ? "..........." : "");
	for (size_t i = 0; i < nr_rows; i++) {
		const struct stdio_row *r = &rows[i];
		const struct frame *f = profile__frame(p, r->frame);
		const char *tag = f->kind == FRAME_CPU_KERNEL ? "[k]" :
				  f->kind == FRAME_CPU_USER ? "[.]" : "[g]";

		profile__loc_str(p, r->loc, loc, sizeof(loc));
		fprintf(fp, "  %8.2f%%  %7.2f%%  %8.0f  %-16s  %-24s  %s %-*s%s%s\n",
			total > 0 ? 100.0 * r->children / total : 0,
			total > 0 ? 100.0 * r->self / total : 0,
			r->self, profile__str(p, r->comm),
			f->module[0] ? f->module : "[unknown]", tag, loc[0] ? symw - 4 : 0, f->name,
			loc[0] ? "  " : "", loc);
	}
	free(rows);
	return ferror(fp) ? -EIO : 0;
}

static int stdio__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__stdio(s, fp, o->view);
}

const struct report_output output_stdio = {
	.name = "stdio",
	.help = "table: children %, self %, samples, command, module, symbol and its\n"
		"hottest source line (default when stdout is not a terminal)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.lines = true,
	.run = stdio__run,
};
