// SPDX-License-Identifier: MIT
/* Folded stacks (Brendan Gregg's flamegraph.pl / stackcollapse format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
 * kept once per frame or comm. Lines are sorted by comparing segments:
 * the frames two stacks share are skipped by pointer, and only where they
 * differ are bytes compared, as strcmp() would compare the whole lines.
 * PyTorch stacks make lines of tens of KB (long C++ names, deep stacks):
 * a GPT-2 recording's lines were 110 MB of a 720 MB report.
 */
struct folded_line {
	const uint32_t *fr;		/* frames after the leading segments */
	size_t n;
	const char *lead[2];		/* the marker and/or the comm, or NULL */
	double weight;
};

static const char *const folded__unknown = "[unknown]";

static size_t folded_line__nseg(const struct folded_line *l)
{
	return (l->lead[0] != NULL) + (l->lead[1] != NULL) + l->n;
}

/* Segment k of l, or NULL past its end; names[] holds every frame's text. */
static const char *folded_line__seg(const struct folded_line *l, size_t k, char **names)
{
	size_t lead = (l->lead[0] != NULL) + (l->lead[1] != NULL);

	if (k < lead)
		return l->lead[0] ? (k ? l->lead[1] : l->lead[0]) : l->lead[1];
	if (k - lead < l->n)
		return names[l->fr[k - lead]];
	if (k == 0)			/* no comm and no frame: still counted */
		return folded__unknown;
	return NULL;
}

/* strcmp() of the two lines' texts; names: every frame's text. */
static int folded_line__cmp(const void *pa, const void *pb, void *names)
{
	const struct folded_line *a = pa, *b = pb;

	for (size_t k = 0; ; k++) {
		const char *sa = folded_line__seg(a, k, names);
		const char *sb = folded_line__seg(b, k, names);
		size_t la, lb;
		int c;

		if (!sa || !sb)		/* equal so far: the shorter line first */
			return sa ? 1 : sb ? -1 : 0;
		if (sa == sb)
			continue;
		la = strlen(sa);
		lb = strlen(sb);
		c = memcmp(sa, sb, la < lb ? la : lb);
		if (c)
			return c;
		if (la == lb)
			continue;
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

static void folded_line__print(const struct folded_line *l, char **names, FILE *fp)
{
	const char *seg;

	for (size_t k = 0; (seg = folded_line__seg(l, k, names)) != NULL; k++) {
		if (k)
			fputc(';', fp);
		fputs(seg, fp);
	}
}

/* The text of frame f, once. */
static char *folded__name(char **names, const struct profile *p, uint32_t f, char *buf,
			  size_t size)
{
	if (!names[f]) {
		folded__frame(profile__frame(p, f), buf, size);
		names[f] = xstrdup(buf);
	}
	return names[f];
}

int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o)
{
	char **names = xcalloc(p->nr_frames + 1, sizeof(*names));
	struct folded_line *lines = NULL;
	size_t nr_lines = 0, cap = 0;
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
	}

	for (size_t it = 0; bmap__next(&agg, &it, &e); ) {
		const uint32_t *key = e->key;
		size_t n;
		const uint32_t *fr = profile__stack(p, key[0], &n);
		struct folded_line l = { .weight = *(double *)e->val };

		if (o->comm) {
			const struct frame *f0 = n ? profile__frame(p, fr[0]) : NULL;
			bool found;
			void **slot;

			/* merged recordings: "[host rank R];comm;..." so that a
			 * flame graph splits by rank first */
			if (f0 && f0->kind == FRAME_MARKER && !strcmp(f0->module, SESSION_INPUT_MODULE)) {
				l.lead[0] = folded__name(names, p, fr[0], buf, sizeof(buf));
				fr++;
				n--;
			}
			slot = bmap__slot(&comms, &key[1], sizeof(key[1]), &found);
			if (!found) {
				struct frame cf = { .kind = FRAME_CPU_USER,
						    .name = profile__str(p, key[1]) };

				folded__frame(&cf, buf, sizeof(buf));
				*slot = xstrdup(buf);
			}
			/* an empty comm is no segment of its own, unless
			 * after the marker ("[host rank R];;frames") */
			l.lead[1] = *(char *)*slot || l.lead[0] ? *slot : NULL;
		}
		for (size_t i = 0; i < n; i++)
			folded__name(names, p, fr[i], buf, sizeof(buf));
		l.fr = fr;
		l.n = n;
		lines = xgrow(lines, &cap, nr_lines + 1, sizeof(*lines));
		lines[nr_lines++] = l;
	}
	bmap__exit(&agg, free);

	if (nr_lines > 1)
		qsort_r(lines, nr_lines, sizeof(*lines), folded_line__cmp, names);
	for (size_t i = 0; i < nr_lines; i++) {
		double w = lines[i].weight;
		long long count;

		while (i + 1 < nr_lines && !folded_line__cmp(&lines[i], &lines[i + 1], names))
			w += lines[++i].weight;
		count = (long long)(w + 0.5);	/* weights are >= 0 */
		if (count > 0) {
			folded_line__print(&lines[i], names, fp);
			fprintf(fp, " %lld\n", count);
		}
	}
	free(lines);
	bmap__exit(&comms, free);
	for (size_t i = 0; i <= p->nr_frames; i++)
		free(names[i]);
	free(names);
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
