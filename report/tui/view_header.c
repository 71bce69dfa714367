// SPDX-License-Identifier: MIT
/* The header/statistics screen: the --header text (metadata, record counts,
 * damage, lost events) followed by the GPU summary and the profile totals. */
#ifdef HAVE_NCURSES
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/output.h"
#include "report/tui/browser.h"

#define HEADER_TOP_KERNELS 20

struct tui_view *header_view__new(struct tui *t)
{
	struct session *s = t->s;
	const struct profile *p = &s->profile;
	double freq = session__sample_freq(s);
	char *buf = NULL, **lines = NULL, *line, *save = NULL;
	size_t len = 0, nr = 0, cap = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp) {
		tui__msg(t, "cannot build the header screen: out of memory");
		return NULL;
	}
	output__header(s, fp);
	fprintf(fp, "#\n# profile: %.0f CPU samples, GPU work = %.0f samples", p->total[ORIGIN_CPU],
		p->total[ORIGIN_GPU]);
	if (freq > 0)
		fprintf(fp, " (%.3f s at %.0f Hz)", p->total[ORIGIN_GPU] / freq, freq);
	fprintf(fp, "\n#   samples read %llu, filtered out %llu, malformed %llu\n#\n",
		(unsigned long long)s->nr_samples, (unsigned long long)s->nr_samples_filtered,
		(unsigned long long)s->nr_samples_bad);
	if (t->gpu)
		gpu_stats__fprint(t->gpu, fp, HEADER_TOP_KERNELS);
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
	return text_view__new("Header and statistics", lines, NULL, nr, -1);
}
#endif
