// SPDX-License-Identifier: MIT
/* Folded stacks (Brendan Gregg's flamegraph.pl / stackcollapse format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

size_t folded__frame(const struct frame *f, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return 0;
	/* ';' separates frames and a line ends the stack: neither may be in a
	 * name; other control characters split lines for some readers
	 * (Python's splitlines) and are never meant */
	for (const char *c = f->name; *c && n + 1 < size; c++)
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
		*(double *)*slot += pe->weight;
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
		lines = xgrow(lines, &cap, nr_lines + 1, sizeof(*lines));
		lines[nr_lines++] = l;
	}
	bmap__exit(&agg, free);
	bmap__exit(&comms, NULL);

	folded_segs__rank(&sg);
	if (nr_lines > 1)
		qsort_r(lines, nr_lines, sizeof(*lines), folded_line__cmp, &sg);
	flockfile(fp);
	for (size_t i = 0; i < nr_lines; i++) {
		double w = lines[i].weight;
		long long count;

		while (i + 1 < nr_lines && !folded_line__cmp(&lines[i], &lines[i + 1], &sg))
			w += lines[++i].weight;
		count = (long long)(w + 0.5);	/* weights are >= 0 */
		if (count > 0) {
			folded_line__print(&lines[i], &sg, fp);
			fprintf(fp, " %lld\n", count);
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
