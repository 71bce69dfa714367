// SPDX-License-Identifier: MIT
/* --dump: every record on one readable line (perf script -D, lite), through
 * the printers of the record-type table (format/record_types.h). */
#include <errno.h>
#include <inttypes.h>
#include "format/record_types.h"
#include "report/output/output.h"

static void dump__record(FILE *fp, const struct xpu_record *r)
{
	fprintf(fp, "%-10s", xpu_record__type_name(r->type));
	xpu_record__fprintf(fp, r);
	fprintf(fp, " (chunk %" PRIu64 ", %u bytes)\n", r->chunk_index, r->body_size);
}

int output__dump(struct session *s, FILE *fp)
{
	struct xpu_record rec;
	size_t shown = SIZE_MAX;

	/* merged inputs: their records in turn, pids and times as the report
	 * sees them (report/session/merge.h) */
	session__rewind(s);
	while (session__next(s, &rec) == 1) {
		if (s->nr_inputs > 1 && shown != s->cur_input) {
			shown = s->cur_input;
			fprintf(fp, "# input %zu: %s (pids + %u, times %+lld ns)\n", shown,
				s->inputs[shown].path, s->inputs[shown].pid_base,
				(long long)s->inputs[shown].shift);
		}
		dump__record(fp, &rec);
	}
	return ferror(fp) ? -EIO : 0;
}

static int dump__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	return output__dump(s, fp);
}

const struct report_output output_dump = {
	.name = "dump",
	.help = "every record, one line each",
	.needs = OUTPUT_NEEDS_RECORDS,
	.run = dump__run,
};
