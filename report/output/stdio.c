// SPDX-License-Identifier: MIT
/*
 * perf report --stdio style table over the profile, with perf report's
 * everyday options (struct table_opts): --sort comm,pid,dso,sym (rows keyed
 * by those; the columns are the keys, in their order, as perf's: --sort sym
 * has no Shared Object column), --children (default) or
 * --no-children, --percent-limit, --symbols/--dsos and -g call chains under
 * each row (stdio_callgraph.c). GPU keys (device, stream, kernel) make a
 * table of GPU work instead (stdio_gpu.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "report/output/output.h"

static const char *const sort_key_names[SORT_NR_KEYS] = {
	[SORT_COMM] = "comm", [SORT_PID] = "pid", [SORT_DSO] = "dso", [SORT_SYM] = "sym",
	[SORT_DEVICE] = "device", [SORT_STREAM] = "stream", [SORT_KERNEL] = "kernel",
};

static bool sort_key__gpu(enum sort_key k)
{
	return k == SORT_DEVICE || k == SORT_STREAM || k == SORT_KERNEL;
}

int table_opts__parse_sort(struct table_opts *t, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;
	bool cpu = false, gpu = false;
	int err = 0;

	t->nr_sort = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < SORT_NR_KEYS && strcmp(tok, sort_key_names[k]); k++)
			;
		for (size_t i = 0; k < SORT_NR_KEYS && i < t->nr_sort; i++)
			if (t->sort[i] == (enum sort_key)k)
				k = SORT_NR_KEYS;	/* twice */
		if (k == SORT_NR_KEYS) {
			err = -EINVAL;
			break;
		}
		cpu |= k == SORT_DSO || k == SORT_SYM;
		gpu |= sort_key__gpu(k);
		t->sort[t->nr_sort++] = k;
	}
	free(copy);
	if (!err && (!t->nr_sort || (cpu && gpu)))
		err = -EINVAL;
	return err;
}

int table_opts__parse_callgraph(struct table_opts *t, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	char *end;

	t->callgraph_min = 0.5;			/* perf's default threshold */
	if (!len || (len == 6 && !strncmp(arg, "caller", 6)))
		t->callgraph = CALLGRAPH_CALLER;
	else if (len == 6 && !strncmp(arg, "callee", 6))
		t->callgraph = CALLGRAPH_CALLEE;
	else if (len == 4 && !strncmp(arg, "none", 4))
		t->callgraph = CALLGRAPH_NONE;
	else
		return -EINVAL;
	if (comma) {
		t->callgraph_min = strtod(comma + 1, &end);
		if (end == comma + 1 || *end || t->callgraph_min < 0 || t->callgraph_min > 100)
			return -EINVAL;
	}
	return 0;
}

bool table_opts__gpu(const struct table_opts *t)
{
	for (size_t i = 0; i < t->nr_sort; i++)
		if (sort_key__gpu(t->sort[i]))
			return true;
	return false;
}

static const struct table_opts table_defaults = {
	.sort = { SORT_COMM, SORT_DSO, SORT_SYM }, .nr_sort = 3, .callgraph_min = 0.5,
};

struct stdio_row {
	uint32_t comm, pid, dso, frame;	/* the keys in use; ~0u for the others */
	uint32_t pid_comm;		/* with pid: the comm its first entry had */
	double self, children;
	double self_count;		/* samples (records) with this row as leaf */
	uint32_t loc;			/* its heaviest source line (profile.h), 0: none */
};

#define STDIO_SYM_WIDTH 48		/* the Symbol column, when Source:Line follows */
#define NO_KEY (~0u)

/* Each row's heaviest source line in the view: the weight of every entry
 * under each location array, summed per (row, line). Rows keyed by symbol
 * only. */
static bool stdio__locs(const struct profile *p, enum profile_view view,
			uint32_t (*row_of)(void *, const struct profile_entry *, uint32_t), void *ctx,
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
			uint32_t row;

			if (lo[j] && (row = row_of(ctx, e, fr[j])) != NO_KEY)
				loc_vote__add(&votes, row, lo[j], w->weight);
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

struct stdio_keys {
	const struct profile *p;
	const struct table_opts *t;
	bool key[SORT_NR_KEYS];
	uint32_t *dso_of;		/* frame -> module id */
	const char **mod_names;		/* module id - 1 -> name */
	struct bmap mods;		/* module name -> id */
	struct bmap idx;		/* row key -> index + 1 */
	bool *keep;			/* frame passes --symbols/--dsos */
};

static bool stdio__listed(char *const *list, size_t n, const char *s)
{
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

static void stdio_keys__init(struct stdio_keys *k, const struct profile *p,
			     const struct table_opts *t)
{
	memset(k, 0, sizeof(*k));
	k->p = p;
	k->t = t;
	for (size_t i = 0; i < t->nr_sort; i++)
		k->key[t->sort[i]] = true;
	bmap__init(&k->mods);
	bmap__init(&k->idx);
	k->dso_of = xcalloc(p->nr_frames + 1, sizeof(*k->dso_of));
	k->keep = xcalloc(p->nr_frames + 1, sizeof(*k->keep));
	k->mod_names = xcalloc(p->nr_frames + 1, sizeof(*k->mod_names));
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct frame *f = profile__frame(p, (uint32_t)i);
		const char *mod = f->module[0] ? f->module : "[unknown]";
		bool found;
		void **slot = bmap__slot(&k->mods, mod, strlen(mod), &found);

		if (!found) {
			*slot = (void *)(uintptr_t)(k->mods.len);
			k->mod_names[k->mods.len - 1] = mod;
		}
		k->dso_of[i] = (uint32_t)(uintptr_t)*slot;
		k->keep[i] = stdio__listed(t->symbols, t->nr_symbols, f->name) &&
			     stdio__listed(t->dsos, t->nr_dsos, mod);
	}
}

static void stdio_keys__exit(struct stdio_keys *k)
{
	bmap__exit(&k->mods, NULL);
	bmap__exit(&k->idx, NULL);
	free(k->dso_of);
	free(k->keep);
	free(k->mod_names);
}

static void stdio_keys__of(const struct stdio_keys *k, const struct profile_entry *e,
			   uint32_t frame, uint32_t key[4])
{
	key[0] = k->key[SORT_COMM] ? e->comm : NO_KEY;
	key[1] = k->key[SORT_PID] ? e->pid : NO_KEY;
	key[2] = k->key[SORT_DSO] || k->key[SORT_SYM] ? k->dso_of[frame] : NO_KEY;
	key[3] = k->key[SORT_SYM] ? frame : NO_KEY;
}

static uint32_t stdio_keys__row(void *ctx, const struct profile_entry *e, uint32_t frame)
{
	struct stdio_keys *k = ctx;
	uint32_t key[4];
	void *row;

	stdio_keys__of(k, e, frame, key);
	row = bmap__find(&k->idx, key, sizeof(key));
	return row ? (uint32_t)(uintptr_t)row - 1 : NO_KEY;
}

static bool stdio__no_children;

static int stdio_row__cmp(const void *a, const void *b)
{
	const struct stdio_row *x = a, *y = b;

	if (!stdio__no_children && x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (stdio__no_children && x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return x->dso < y->dso ? -1 : x->dso > y->dso;
}

/* The width of the Symbol column when another column follows it: the symbol
 * and, with source lines, its Source:Line (STDIO_LOC_WIDTH). */
#define STDIO_LOC_WIDTH 32

static int stdio__sym_width(bool locs, int symw)
{
	return locs ? symw + 2 + STDIO_LOC_WIDTH : symw;
}

/* One cell: padded to its width and two spaces unless it is the last. */
static void stdio__cell(FILE *fp, const char *s, int width, bool last)
{
	if (last)
		fputs(s, fp);
	else
		fprintf(fp, "%-*s  ", width, s);
}

/* The header of the column of key k (dots: its underline). */
static void stdio__head(FILE *fp, enum sort_key k, bool last, bool locs, int symw, bool dots)
{
	static const char dotline[] = "........................";

	switch (k) {
	case SORT_COMM:
		stdio__cell(fp, dots ? dotline + 8 : "Command", 16, last);
		break;
	case SORT_PID:
		stdio__cell(fp, dots ? dotline : "Pid:Command", 24, last);
		break;
	case SORT_DSO:
		stdio__cell(fp, dots ? dotline : "Shared Object", 24, last);
		break;
	case SORT_SYM:
		if (!locs) {
			stdio__cell(fp, dots ? "......" : "Symbol", symw, last);
			break;
		}
		fprintf(fp, "%s%*s%s", dots ? "......" : "Symbol", symw - 6 + 2, "",
			dots ? "..........." : "Source:Line");
		if (!last)
			fprintf(fp, "%*s  ", STDIO_LOC_WIDTH - 11, "");
		break;
	default:
		break;
	}
}

/* Under the table, one note per [module] row shown with sampled addresses
 * (stdio_unknown.c), once per module however many rows it has. */
static void stdio__unknown_notes(const struct session *s, FILE *fp,
				 const struct stdio_unknown *unk, const struct stdio_row *rows,
				 size_t nr_rows, double total, const struct table_opts *t)
{
	const struct profile *p = &s->profile;
	bool *done, first = true;

	if (!unk)
		return;
	done = xcalloc(p->nr_frames, sizeof(*done));
	for (size_t i = 0; i < nr_rows; i++) {
		const struct stdio_row *r = &rows[i];
		double pct = total > 0 ? 100.0 * (t->no_children ? r->self : r->children) / total : 0;
		double self = 0;

		if (pct < t->percent_limit || done[r->frame] || !unk[r->frame].nr_addrs)
			continue;
		done[r->frame] = true;
		for (size_t j = 0; j < nr_rows; j++)	/* its self over every row */
			if (rows[j].frame == r->frame)
				self += rows[j].self;
		fprintf(fp, "%s", first ? "#\n" : "");
		first = false;
		stdio_unknown__note(unk, s, fp, r->frame, total > 0 ? 100.0 * self / total : 0);
	}
	free(done);
}

/* What output__stdio() builds and prints. */
struct stdio_table {
	const struct session *s;
	const struct profile *p;
	const struct table_opts *t;
	enum profile_view view;
	FILE *fp;
	double total;
	struct stdio_keys k;
	struct stdio_row *rows;
	size_t nr_rows, cap;
	uint32_t *seen;			/* while building: row -> the last entry + 1 */
	size_t seen_cap;		/* credited to it */
	uint64_t nr_records;
	int64_t *selfn;			/* row -> its Samples */
	struct stdio_unknown *unk;	/* Symbol rows' sampled addresses, or NULL */
	bool locs;			/* a Source:Line column */
	int symw;			/* the Symbol column's width */
};

/* The table with the default keys, and the other options as given. */
static int stdio__default_keys(const struct session *s, FILE *fp, enum profile_view view,
			       const struct table_opts *t)
{
	struct table_opts *d = xmalloc(sizeof(*d));
	int err;

	*d = table_defaults;
	if (t) {
		memcpy(d, t, sizeof(*d));
		memcpy(d->sort, table_defaults.sort, sizeof(d->sort));
		d->nr_sort = table_defaults.nr_sort;
	}
	err = output__stdio(s, fp, view, d);
	free(d);
	return err;
}

/* The index of the row of frame's keys in entry e; a new row (not yet
 * seen) the first time. */
static size_t stdio__row_of(struct stdio_table *tb, const struct profile_entry *e,
			    uint32_t frame)
{
	uint32_t key[4];
	bool found;
	void **slot;

	stdio_keys__of(&tb->k, e, frame, key);
	slot = bmap__slot(&tb->k.idx, key, sizeof(key), &found);
	if (!found) {
		tb->rows = xgrow(tb->rows, &tb->cap, tb->nr_rows + 1, sizeof(*tb->rows));
		tb->rows[tb->nr_rows] = (struct stdio_row){ .comm = key[0], .pid = key[1],
							    .dso = key[2], .frame = key[3],
							    .pid_comm = e->comm };
		*slot = (void *)(uintptr_t)(++tb->nr_rows);
		tb->seen = xgrow(tb->seen, &tb->seen_cap, tb->nr_rows, sizeof(*tb->seen));
		tb->seen[tb->nr_rows - 1] = 0;
	}
	return (uintptr_t)*slot - 1;
}

/* Every kept frame of every entry in the view credited to its row: self
 * where it is the leaf, children once per entry. */
static void stdio__rows(struct stdio_table *tb)
{
	const struct profile *p = tb->p;

	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *e = &p->entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(p, e->stack, &n);

		if (!profile__in_view(e, tb->view))
			continue;
		tb->nr_records += e->count;
		/* seen[] marks rows already credited for this entry: a
		 * recursive function counts once in children */
		for (size_t j = n; j-- > 0; ) {
			struct stdio_row *r;
			size_t ri;

			if (!tb->k.keep[fr[j]])
				continue;
			ri = stdio__row_of(tb, e, fr[j]);
			r = &tb->rows[ri];
			if (j == n - 1) {
				r->self += e->weight;
				r->self_count += (double)e->count;
			}
			if (tb->seen[ri] != i + 1) {
				tb->seen[ri] = (uint32_t)(i + 1);
				r->children += e->weight;
			}
		}
	}
}

/* Symbol is a column as wide as its longest entry (up to STDIO_SYM_WIDTH;
 * longer ones push what follows right). */
static int stdio__sym_col(const struct stdio_table *tb)
{
	int symw = 0;

	for (size_t i = 0; tb->k.key[SORT_SYM] && i < tb->nr_rows; i++) {
		int len = 4 + (int)strlen(profile__frame(tb->p, tb->rows[i].frame)->name);

		if (len > symw)
			symw = len > STDIO_SYM_WIDTH ? STDIO_SYM_WIDTH : len;
	}
	return symw;
}

/* Samples: each row's self weight as an integer, the column summing to the
 * total rounded, as --folded's lines do (GPU weights are fractions of a
 * sample: rounded one by one, rows of a kernel split by its PC samples
 * printed 0 where they held the total) */
static void stdio__samples(struct stdio_table *tb)
{
	double *selfw = xcalloc(tb->nr_rows + 1, sizeof(*selfw));

	tb->selfn = xcalloc(tb->nr_rows + 1, sizeof(*tb->selfn));
	for (size_t i = 0; i < tb->nr_rows; i++)
		selfw[i] = tb->rows[i].self;
	output__apportion(selfw, tb->selfn, tb->nr_rows);
	free(selfw);
}

/* The totals, then the column headers and their underlines. */
static void stdio__header(const struct stdio_table *tb)
{
	const struct table_opts *t = tb->t;
	FILE *fp = tb->fp;

	const char *unit = tb->view == VIEW_GPU_MEM ? "Bytes" : "Samples";
	char b[32];

	if (tb->view == VIEW_GPU_MEM)	/* records: blocks, a count per allocation */
		fprintf(fp, "# Total: %.0f bytes (%s) in %llu blocks, %s\n", tb->total,
			gpu_mem__bytes_str((uint64_t)(tb->total + 0.5), b, sizeof(b)),
			(unsigned long long)tb->nr_records, profile_view__name(tb->view));
	else
		fprintf(fp, "# Total: %.0f samples (%llu records)%s%s\n", tb->total,
			(unsigned long long)tb->nr_records, tb->view == VIEW_MERGED ? "" : ", ",
			tb->view == VIEW_MERGED ? "" : profile_view__name(tb->view));
	fprintf(fp, "# Lost events: %llu\n", (unsigned long long)session__lost_total(tb->s));
	fprintf(fp, "#\n# ");
	if (t->no_children)
		fprintf(fp, "%8s  %8s  ", "Overhead", unit);
	else
		fprintf(fp, "%8s  %8s  %8s  ", "Children", "Self", unit);
	/* the columns are the sort keys, in their order, as perf report's */
	for (size_t c = 0; c < t->nr_sort; c++)
		stdio__head(fp, t->sort[c], c + 1 == t->nr_sort, tb->locs, tb->symw, false);
	fprintf(fp, "\n# ........  ........  %s", t->no_children ? "" : "........  ");
	for (size_t c = 0; c < t->nr_sort; c++)
		stdio__head(fp, t->sort[c], c + 1 == t->nr_sort, tb->locs, tb->symw, true);
	fprintf(fp, "\n#\n");
}

/* The Symbol cell: [k], [.] or [g], the name, and its Source:Line (or, for
 * a [module] row, its sampled addresses). */
static void stdio__sym_cell(const struct stdio_table *tb, const struct stdio_row *r,
			    const struct frame *f, bool last)
{
	const char *tag = f->kind == FRAME_CPU_KERNEL ? "[k]" :
			  f->kind == FRAME_CPU_USER ? "[.]" : "[g]";
	char loc[256], symbuf[1024];

	profile__loc_str(tb->p, r->loc, loc, sizeof(loc));
	if (!loc[0])	/* a [module] row: its addresses */
		stdio_unknown__cell(tb->unk, tb->p, r->frame, loc, sizeof(loc));
	/* a name too long for it ends between two characters (utf8.h) */
	if (snprintf(symbuf, sizeof(symbuf), "%s %-*s%s%s", tag,
		     loc[0] || (!last && tb->locs) ? tb->symw - 4 : 0, f->name,
		     loc[0] || (!last && tb->locs) ? "  " : "", loc) >= (int)sizeof(symbuf))
		symbuf[utf8__trim(symbuf, sizeof(symbuf) - 1)] = '\0';
	stdio__cell(tb->fp, symbuf, stdio__sym_width(tb->locs, tb->symw), last);
}

/* One row: its percentages and Samples, then a cell per sort key. */
static void stdio__row(const struct stdio_table *tb, size_t i, double pct)
{
	const struct table_opts *t = tb->t;
	const struct stdio_row *r = &tb->rows[i];
	const struct frame *f = r->frame != NO_KEY ? profile__frame(tb->p, r->frame) : NULL;
	FILE *fp = tb->fp;
	char pidbuf[64];

	if (t->no_children)
		fprintf(fp, "  %7.2f%%  %8lld  ", pct, (long long)tb->selfn[i]);
	else
		fprintf(fp, "  %8.2f%%  %7.2f%%  %8lld  ", pct,
			tb->total > 0 ? 100.0 * r->self / tb->total : 0, (long long)tb->selfn[i]);
	for (size_t c = 0; c < t->nr_sort; c++) {
		bool last = c + 1 == t->nr_sort;

		switch (t->sort[c]) {
		case SORT_COMM:
			stdio__cell(fp, profile__str(tb->p, r->comm), 16, last);
			break;
		case SORT_PID:
			snprintf(pidbuf, sizeof(pidbuf), "%u:%s", r->pid,
				 profile__str(tb->p, r->pid_comm));
			stdio__cell(fp, pidbuf, 24, last);
			break;
		case SORT_DSO:
			stdio__cell(fp, tb->k.mod_names[r->dso - 1], 24, last);
			break;
		case SORT_SYM:
			stdio__sym_cell(tb, r, f, last);
			break;
		default:
			break;
		}
	}
	fprintf(fp, "\n");
	if (t->callgraph != CALLGRAPH_NONE && f)
		stdio__callgraph(tb->p, fp, tb->view, r->frame, r->comm, tb->total, t);
}

/* The rows over --percent-limit, and how many were not. */
static void stdio__print_rows(const struct stdio_table *tb)
{
	const struct table_opts *t = tb->t;
	size_t shown = 0;

	for (size_t i = 0; i < tb->nr_rows; i++) {
		const struct stdio_row *r = &tb->rows[i];
		double pct = tb->total > 0 ?
			     100.0 * (t->no_children ? r->self : r->children) / tb->total : 0;

		if (pct < t->percent_limit)
			continue;
		shown++;
		stdio__row(tb, i, pct);
	}
	if (shown < tb->nr_rows)
		fprintf(tb->fp, "#\n# %zu rows under --percent-limit %.2f%% not shown\n",
			tb->nr_rows - shown, t->percent_limit);
}

int output__stdio(const struct session *s, FILE *fp, enum profile_view view,
		  const struct table_opts *t)
{
	struct stdio_table tb = { .s = s, .p = &s->profile, .t = t, .view = view, .fp = fp };

	if (!t || !t->nr_sort)
		return stdio__default_keys(s, fp, view, t);
	if (table_opts__gpu(t))
		return stdio_gpu__print(s, fp, t);
	tb.total = profile__total(tb.p, view);
	stdio_keys__init(&tb.k, tb.p, t);
	stdio__rows(&tb);
	tb.locs = tb.k.key[SORT_SYM] &&
		  stdio__locs(tb.p, view, stdio_keys__row, &tb.k, tb.rows, tb.nr_rows);
	free(tb.seen);
	stdio__no_children = t->no_children;
	xpu_qsort(tb.rows, tb.nr_rows, sizeof(*tb.rows), stdio_row__cmp);
	tb.symw = stdio__sym_col(&tb);
	stdio__samples(&tb);
	tb.unk = tb.k.key[SORT_SYM] ? stdio_unknown__new(tb.p) : NULL;
	stdio__header(&tb);
	stdio__print_rows(&tb);
	stdio__unknown_notes(s, fp, tb.unk, tb.rows, tb.nr_rows, tb.total, t);
	free(tb.unk);
	stdio_keys__exit(&tb.k);
	free(tb.rows);
	free(tb.selfn);
	return ferror(fp) ? -EIO : 0;
}

static int stdio__prepare(struct session *s, const struct report_opts *o)
{
	return table_opts__gpu(&o->table) ? stdio_gpu__prepare(s, &o->table) : 0;
}

static int stdio__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__stdio(s, fp, o->view, &o->table);
}

const struct report_output output_stdio = {
	.name = "stdio",
	.help = "table: children %, self %, samples, command, module, symbol and its\n"
		"hottest source line (default when stdout is not a terminal)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.lines = true,
	.prepare = stdio__prepare,
	.run = stdio__run,
};
