// SPDX-License-Identifier: MIT
/* The header/statistics screen: the --header sections (metadata, record
 * counts, damage, lost events, GPU join and summary), then the profile's
 * totals. */
#ifdef HAVE_NCURSES
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/output/header.h"
#include "report/tui/views.h"

struct tui_view *header_view__new(struct tui *t)
{
	struct session *s = t->s;
	const struct profile *p = &s->profile;
	double freq = s->sample_freq;
	char *buf = NULL, **lines = NULL, *line, *save = NULL;
	size_t len = 0, nr = 0, cap = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp) {
		tui__msg(t, "cannot build the header screen: out of memory");
		return NULL;
	}
	header__fprint(s, fp);
	fprintf(fp, "#\n# profile: %.0f CPU samples, GPU work = %.0f samples", p->total[ORIGIN_CPU],
		p->total[ORIGIN_GPU]);
	if (freq > 0)
		fprintf(fp, " (%.3f s at %.0f Hz)", p->total[ORIGIN_GPU] / freq, freq);
	fprintf(fp, "\n#   samples read %llu, filtered out %llu, malformed %llu\n",
		(unsigned long long)s->nr_samples, (unsigned long long)s->nr_samples_filtered,
		(unsigned long long)s->nr_samples_bad);
	if (fclose(fp)) {
		free(buf);
		tui__msg(t, "cannot build the header screen: out of memory");
		return NULL;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines = xgrow(lines, &cap, nr + 1, sizeof(*lines));
		lines[nr++] = xstrdup(line);
	}
	free(buf);
	struct tui_view *v = text_view__new("Header and statistics", lines, NULL, nr, -1);

	if (v)
		v->name = "header";	/* the browser opens one at a time */
	return v;
}
#endif
