// SPDX-License-Identifier: MIT
/* The table of xpu-report outputs (output.h): one row each. */
#include <string.h>
#include "report/output/output.h"

const struct report_output *const report_outputs[] = {
	&output_folded,
	&output_svg,
	&output_pprof,
	&output_speedscope,
	&output_timeline,
	&output_tui,
	&output_stdio,
	&output_dump,
	&output_header,
	&output_annotate,
	NULL
};

const struct report_output *report_output__find(const char *name)
{
	for (size_t i = 0; report_outputs[i]; i++)
		if (!strcmp(report_outputs[i]->name, name))
			return report_outputs[i];
	return NULL;
}
