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

struct folded_line {
	char *text;
	double weight;
};

static int folded_line__cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o)
{
	char **names = xcalloc(p->nr_frames + 1, sizeof(*names));
	struct folded_line *lines = NULL;
	size_t nr_lines = 0, cap = 0;
	struct bmap agg;
	struct bmap_entry *e;
	char buf[4096];

	/* same (comm, stack) from several threads: one line */
	bmap__init(&agg);
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
		size_t n, len = 0, cap_text = 256;
		const uint32_t *fr = profile__stack(p, key[0], &n);
		char *text = xmalloc(cap_text);

		text[0] = '\0';
		if (o->comm) {
			struct frame cf = { .kind = FRAME_CPU_USER, .name = profile__str(p, key[1]) };
			const struct frame *f0 = n ? profile__frame(p, fr[0]) : NULL;

			/* merged recordings: "[host rank R];comm;..." so that a
			 * flame graph splits by rank first */
			if (f0 && f0->kind == FRAME_MARKER && !strcmp(f0->module, SESSION_INPUT_MODULE)) {
				len = folded__frame(f0, buf, sizeof(buf) / 2);
				buf[len++] = ';';
				fr++;
				n--;
			}
			len += folded__frame(&cf, buf + len, sizeof(buf) - len);
			if (len + 1 > cap_text) {
				cap_text = len + 256;
				text = xrealloc(text, cap_text);
			}
			memcpy(text, buf, len + 1);
		}
		for (size_t i = 0; i < n; i++) {
			size_t fl;

			if (!names[fr[i]]) {
				folded__frame(profile__frame(p, fr[i]), buf, sizeof(buf));
				names[fr[i]] = xstrdup(buf);
			}
			fl = strlen(names[fr[i]]);
			if (len + fl + 2 > cap_text) {
				cap_text = (len + fl + 2) * 2;
				text = xrealloc(text, cap_text);
			}
			if (len)
				text[len++] = ';';
			memcpy(text + len, names[fr[i]], fl + 1);
			len += fl;
		}
		if (!len) {		/* no comm and no frame: still count it */
			free(text);
			text = xstrdup("[unknown]");
		}
		lines = xgrow(lines, &cap, nr_lines + 1, sizeof(*lines));
		lines[nr_lines++] = (struct folded_line){ text, *(double *)e->val };
	}
	bmap__exit(&agg, free);

	xpu_qsort(lines, nr_lines, sizeof(*lines), folded_line__cmp);
	for (size_t i = 0; i < nr_lines; i++) {
		double w = lines[i].weight;
		long long count;

		while (i + 1 < nr_lines && !strcmp(lines[i].text, lines[i + 1].text)) {
			free(lines[i].text);
			w += lines[++i].weight;
		}
		count = (long long)(w + 0.5);	/* weights are >= 0 */
		if (count > 0)
			fprintf(fp, "%s %lld\n", lines[i].text, count);
		free(lines[i].text);
	}
	free(lines);
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
