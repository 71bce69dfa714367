// SPDX-License-Identifier: MIT
/* Folded stacks (Brendan Gregg's flamegraph.pl / stackcollapse format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "report/output/output.h"

size_t folded__frame(const struct frame *f, char *buf, size_t size)
{
	size_t n = 0, max;

	if (!size)
		return 0;
	/* a name too long for buf ends between two characters (utf8.h);
	 * bytes that are not UTF-8 pass, as perf's do */
	max = utf8__cut(f->name, size - 1);
	/* ';' separates frames and a line ends the stack: neither may be in a
	 * name; other control characters split lines for some readers
	 * (Python's splitlines) and are never meant */
	for (const char *c = f->name; n < max; c++)
		buf[n++] = *c == ';' ? ':' : (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c;
	if (f->kind == FRAME_CPU_KERNEL)
		for (const char *c = "_[k]"; *c && n + 1 < size; c++)
			buf[n++] = *c;
	buf[n] = '\0';
	return n;
}

/*
 * A line is not built as text: it is its segments, ';'-separated (the
 * rank marker of a merged recording, the comm, the frames), each a string
 * kept once per frame or comm. Lines are sorted as strcmp() would sort
 * their texts, without building them: every distinct segment text gets its
 * rank in strcmp() order first, so two lines compare by the first segment
 * where their ranks differ, and only where the lower text is a prefix of
 * another (then ';' or the line's end decides) are bytes compared.
 * PyTorch stacks make lines of tens of KB (long C++ names, deep stacks):
 * a GPT-2 recording's lines were 110 MB of a 720 MB report.
 */
struct folded_line {
	const uint32_t *fr;		/* frames after the leading segments */
	size_t n;
	uint32_t lead[2];		/* segment ids of the marker and/or comm */
	uint32_t nlead;
	double weight;
	long long count;		/* the printed count (folded__apportion) */
	size_t idx;			/* equal texts keep this order */
};

/* Segment ids: frame ids, then the comms, then "[unknown]". */
struct folded_segs {
	char **text;			/* by segment id (NULL: unused) */
	size_t nr;
	uint32_t *rank;			/* by segment id */
	const char **by_rank;		/* a text of each rank */
	size_t *len;			/* by rank */
	bool *prefix;			/* by rank: a proper prefix of the next rank's text */
	uint32_t unknown;		/* the id of "[unknown]" */
};

#define FOLDED_END UINT32_MAX

static size_t folded_line__nseg(const struct folded_line *l)
{
	return l->nlead + l->n;
}

/* The rank of segment k of l, or FOLDED_END past its end. */
static uint32_t folded_line__seg(const struct folded_line *l, size_t k,
				 const struct folded_segs *sg)
{
	if (k < l->nlead)
		return sg->rank[l->lead[k]];
	if (k - l->nlead < l->n)
		return sg->rank[l->fr[k - l->nlead]];
	if (k == 0)			/* no comm and no frame: still counted */
		return sg->rank[sg->unknown];
	return FOLDED_END;
}

/* strcmp() of the two lines' texts. */
static int folded_line__cmp(const void *pa, const void *pb, void *ctx)
{
	const struct folded_line *a = pa, *b = pb;
	const struct folded_segs *sg = ctx;

	for (size_t k = 0; ; k++) {
		uint32_t ra = folded_line__seg(a, k, sg), rb = folded_line__seg(b, k, sg);
		const char *sa, *sb;
		size_t la, lb;

		if (ra == FOLDED_END || rb == FOLDED_END)	/* equal so far: the shorter first */
			return ra == rb ? 0 : ra == FOLDED_END ? -1 : 1;
		if (ra == rb)
			continue;
		/* different texts: in rank order, unless the lower one is a
		 * prefix of the other (only then of the next rank's text too:
		 * the texts between a prefix and its extension all start so) */
		if (!sg->prefix[ra < rb ? ra : rb])
			return ra < rb ? -1 : 1;
		sa = sg->by_rank[ra];
		sb = sg->by_rank[rb];
		la = sg->len[ra];
		lb = sg->len[rb];
		if (la < lb ? memcmp(sa, sb, la) : memcmp(sa, sb, lb))
			return ra < rb ? -1 : 1;
		/* one is a prefix of the other: the shorter line goes on with
		 * ';' or ends, the longer with its next byte */
		if (la < lb) {
			int next = k + 1 < folded_line__nseg(a) ? ';' : -1;

			return next < (unsigned char)sb[la] ? -1 : 1;
		} else {
			int next = k + 1 < folded_line__nseg(b) ? ';' : -1;

			return (unsigned char)sa[lb] < next ? -1 : 1;
		}
	}
}

/*
 * The sort: multikey quicksort (Bentley and Sedgewick) over the lines'
 * segments. Lines share long prefixes (a deep stack's root frames), and
 * comparing two from their first segment made the sort a tenth of a GPT-2
 * report; here each segment of a line is looked at about once per level
 * of partitioning at its depth. Segment k of a line, as a "character", is
 * its text followed by ';' when the line goes on, and nothing when it
 * ends: comparing those strings as strcmp() does orders the lines as
 * strcmp() orders their texts (no segment holds a ';').
 */
static int folded__char_cmp(const struct folded_segs *sg, uint32_t ra, bool ca, uint32_t rb,
			    bool cb)
{
	uint32_t lo;
	size_t ll;
	int next_lo, next_hi;

	if (ra == FOLDED_END || rb == FOLDED_END)
		return ra == rb ? 0 : ra == FOLDED_END ? -1 : 1;
	if (ra == rb)
		return ca == cb ? 0 : ca ? 1 : -1;	/* the line that ends first */
	lo = ra < rb ? ra : rb;
	if (!sg->prefix[lo])
		return ra < rb ? -1 : 1;
	ll = sg->len[lo];
	if (memcmp(sg->by_rank[ra], sg->by_rank[rb], ll < sg->len[ra ^ rb ^ lo] ? ll :
		   sg->len[ra ^ rb ^ lo]))
		return ra < rb ? -1 : 1;
	/* the lower text is a prefix of the other: the line with it goes on
	 * with ';' or ends, the other with its next byte */
	next_lo = (ra == lo ? ca : cb) ? ';' : -1;
	next_hi = (unsigned char)sg->by_rank[ra ^ rb ^ lo][ll];
	return (ra == lo) == (next_lo < next_hi) ? -1 : 1;
}

static uint32_t folded_line__rank(const struct folded_line *l, size_t k,
				  const struct folded_segs *sg, bool *cont)
{
	uint32_t r = folded_line__seg(l, k, sg);

	*cont = r != FOLDED_END && folded_line__seg(l, k + 1, sg) != FOLDED_END;
	return r;
}

/* The lines' order from segment k on (the segments before are equal). */
static int folded_line__cmp_from(const struct folded_line *a, const struct folded_line *b,
				 size_t k, const struct folded_segs *sg)
{
	for (;; k++) {
		bool ca, cb;
		uint32_t ra = folded_line__rank(a, k, sg, &ca), rb = folded_line__rank(b, k, sg, &cb);
		int c = folded__char_cmp(sg, ra, ca, rb, cb);

		if (c)
			return c;
		if (ra == FOLDED_END)
			return (a->idx > b->idx) - (a->idx < b->idx);
	}
}

static void folded_line__swap(struct folded_line *a, struct folded_line *b)
{
	struct folded_line t = *a;

	*a = *b;
	*b = t;
}

static int folded_line__idx_cmp(const void *pa, const void *pb)
{
	const struct folded_line *a = pa, *b = pb;

	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void folded__sort_idx(struct folded_line *l, size_t n)
{
	xpu_qsort(l, n, sizeof(*l), folded_line__idx_cmp);
}

static void folded__sort(struct folded_line *l, size_t n, size_t k, const struct folded_segs *sg)
{
	while (n > 1) {
		size_t lt = 0, i = 0, gt = n;
		uint32_t pr;
		bool pc;

		if (n < 12) {		/* insertion sort */
			for (size_t a = 1; a < n; a++)
				for (size_t b = a; b && folded_line__cmp_from(&l[b - 1], &l[b], k, sg) > 0;
				     b--)
					folded_line__swap(&l[b - 1], &l[b]);
			return;
		}
		folded_line__swap(&l[0], &l[n / 2]);
		pr = folded_line__rank(&l[0], k, sg, &pc);
		/* [0, lt) less, [lt, i) equal, [gt, n) greater */
		while (i < gt) {
			bool c;
			uint32_t r = folded_line__rank(&l[i], k, sg, &c);
			int d = folded__char_cmp(sg, r, c, pr, pc);

			if (d < 0)
				folded_line__swap(&l[lt++], &l[i++]);
			else if (d > 0)
				folded_line__swap(&l[i], &l[--gt]);
			else
				i++;
		}
		folded__sort(l, lt, k, sg);
		folded__sort(l + gt, n - gt, k, sg);
		l += lt;
		n = gt - lt;
		if (pr == FOLDED_END) {	/* the same text: in their first order */
			folded__sort_idx(l, n);
			return;
		}
		k++;
	}
}

static int folded__strcmp(const void *a, const void *b)
{
	return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/* Ranks every segment text in use: equal texts share a rank. */
static void folded_segs__rank(struct folded_segs *sg)
{
	char ***order = xmalloc((sg->nr + 1) * sizeof(*order));
	size_t n = 0, r = 0;

	for (size_t id = 0; id < sg->nr; id++)
		if (sg->text[id])
			order[n++] = &sg->text[id];
	xpu_qsort(order, n, sizeof(*order), folded__strcmp);
	sg->rank = xcalloc(sg->nr + 1, sizeof(*sg->rank));
	sg->by_rank = xcalloc(n + 1, sizeof(*sg->by_rank));
	sg->len = xcalloc(n + 1, sizeof(*sg->len));
	sg->prefix = xcalloc(n + 1, sizeof(*sg->prefix));
	for (size_t i = 0; i < n; i++) {
		const char *t = *order[i];

		if (i && strcmp(sg->by_rank[r - 1], t)) {
			size_t lp = sg->len[r - 1];

			sg->prefix[r - 1] = !strncmp(sg->by_rank[r - 1], t, lp);
		}
		if (!i || strcmp(sg->by_rank[r - 1], t)) {
			sg->by_rank[r] = t;
			sg->len[r] = strlen(t);
			r++;
		}
		sg->rank[order[i] - sg->text] = (uint32_t)(r - 1);
	}
	free(order);
}

/* Sorted lines of the same text (the same stack reached from several
 * profile entries' keys) as one, their weights summed; returns the count. */
static size_t folded__merge_same(struct folded_line *l, size_t n, const struct folded_segs *sg)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && !folded_line__cmp(&l[out - 1], &l[i], (void *)sg))
			l[out - 1].weight += l[i].weight;
		else
			l[out++] = l[i];
	}
	return out;
}

/* The counts the lines print: output__apportion()'s, so that the folded
 * total is every other output's. */
static void folded__apportion(struct folded_line *l, size_t n)
{
	double *w = xcalloc(n + 1, sizeof(*w));
	int64_t *c = xcalloc(n + 1, sizeof(*c));

	for (size_t i = 0; i < n; i++)
		w[i] = l[i].weight;
	output__apportion(w, c, n);
	for (size_t i = 0; i < n; i++)
		l[i].count = c[i];
	free(w);
	free(c);
}

static void folded_line__print(const struct folded_line *l, const struct folded_segs *sg,
			       FILE *fp)
{
	uint32_t r;

	for (size_t k = 0; (r = folded_line__seg(l, k, sg)) != FOLDED_END; k++) {
		if (k)
			putc_unlocked(';', fp);
		fwrite_unlocked(sg->by_rank[r], 1, sg->len[r], fp);
	}
}

/* The text of frame f, once. */
static void folded__name(struct folded_segs *sg, const struct profile *p, uint32_t f, char *buf,
			 size_t size)
{
	if (!sg->text[f]) {
		folded__frame(profile__frame(p, f), buf, size);
		sg->text[f] = xstrdup(buf);
	}
}

int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o)
{
	struct folded_segs sg = { 0 };
	struct folded_line *lines = NULL;
	size_t nr_lines = 0, cap = 0, nr_comms = 0;
	struct bmap agg, comms;
	struct bmap_entry *e;
	char buf[4096];

	/* same (comm, stack) from several threads: one line */
	bmap__init(&agg);
	bmap__init(&comms);
	for (size_t i = 0; i < p->nr_entries; i++) {
		const struct profile_entry *pe = &p->entries[i];
		uint32_t key[2] = { pe->stack, o->comm ? pe->comm : 0 };
		bool found;
		void **slot;

		if (!profile__in_view(pe, o->view))
			continue;
		slot = bmap__slot(&agg, key, sizeof(key), &found);
		if (!found)
			*slot = xzalloc(sizeof(double));
		*(double *)*slot += o->scale > 0 ? pe->weight * o->scale : pe->weight;
		if (o->comm) {
			slot = bmap__slot(&comms, &key[1], sizeof(key[1]), &found);
			if (!found)
				*slot = (void *)(uintptr_t)nr_comms++;
		}
	}
	/* frame ids, the comms after them, "[unknown]" last */
	sg.nr = p->nr_frames + 1 + nr_comms + 1;
	sg.text = xcalloc(sg.nr, sizeof(*sg.text));
	sg.unknown = (uint32_t)(sg.nr - 1);
	sg.text[sg.unknown] = xstrdup("[unknown]");
	for (size_t it = 0; bmap__next(&comms, &it, &e); ) {
		struct frame cf = { .kind = FRAME_CPU_USER, .name = profile__str(p, *(const uint32_t *)e->key) };

		folded__frame(&cf, buf, sizeof(buf));
		sg.text[p->nr_frames + 1 + (uintptr_t)e->val] = xstrdup(buf);
	}

	for (size_t it = 0; bmap__next(&agg, &it, &e); ) {
		const uint32_t *key = e->key;
		size_t n;
		const uint32_t *fr = profile__stack(p, key[0], &n);
		struct folded_line l = { .weight = *(double *)e->val };

		if (o->comm) {
			const struct frame *f0 = n ? profile__frame(p, fr[0]) : NULL;
			uint32_t comm = (uint32_t)(p->nr_frames + 1 +
						   (uintptr_t)bmap__find(&comms, &key[1], sizeof(key[1])));

			/* merged recordings: "[host rank R];comm;..." so that a
			 * flame graph splits by rank first */
			if (f0 && f0->kind == FRAME_MARKER && !strcmp(f0->module, SESSION_INPUT_MODULE)) {
				folded__name(&sg, p, fr[0], buf, sizeof(buf));
				l.lead[l.nlead++] = fr[0];
				fr++;
				n--;
			}
			/* an empty comm is no segment of its own, unless
			 * after the marker ("[host rank R];;frames") */
			if (*sg.text[comm] || l.nlead)
				l.lead[l.nlead++] = comm;
		}
		for (size_t i = 0; i < n; i++)
			folded__name(&sg, p, fr[i], buf, sizeof(buf));
		l.fr = fr;
		l.n = n;
		l.idx = nr_lines;
		lines = xgrow(lines, &cap, nr_lines + 1, sizeof(*lines));
		lines[nr_lines++] = l;
	}
	bmap__exit(&agg, free);
	bmap__exit(&comms, NULL);

	folded_segs__rank(&sg);
	folded__sort(lines, nr_lines, 0, &sg);
	nr_lines = folded__merge_same(lines, nr_lines, &sg);
	folded__apportion(lines, nr_lines);
	flockfile(fp);
	for (size_t i = 0; i < nr_lines; i++) {
		if (lines[i].count > 0) {
			folded_line__print(&lines[i], &sg, fp);
			fprintf(fp, " %lld\n", lines[i].count);
		}
	}
	funlockfile(fp);
	free(lines);
	for (size_t i = 0; i < sg.nr; i++)
		free(sg.text[i]);
	free(sg.text);
	free(sg.rank);
	free(sg.by_rank);
	free(sg.len);
	free(sg.prefix);
	return ferror(fp) ? -EIO : 0;
}

static int folded__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	struct folded_opts fo = { .view = o->view, .comm = !o->no_comm };

	return output__folded(&s->profile, fp, &fo);
}

const struct report_output output_folded = {
	.name = "folded",
	.help = "folded stacks for flamegraph.pl (comm;root;...;leaf COUNT)",
	.needs = OUTPUT_NEEDS_PROFILE,
	.run = folded__run,
};
