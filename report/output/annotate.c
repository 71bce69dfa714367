// SPDX-License-Identifier: MIT
/* --annotate KERNEL: a GPU kernel's PC samples per SASS instruction and per
 * source line as text, what the TUI's annotate shows on its [GPU_Kernel] or
 * [sass] frame (report/gpu/gpu_annotate.h). */
#include <errno.h>
#include "common/exitcodes.h"
#include "common/log.h"
#include "report/gpu/gpu_annotate.h"
#include "report/output/output.h"

static int annotate__run(struct session *s, const struct report_opts *o, FILE *fp)
{
	struct gpu_annotation a;
	char err[1024];
	int ret;

	if (gpu_annotate__kernel(&a, s, o->output_arg, err, sizeof(err)))
		die(XPU_EXIT_NODATA, "%s", err);
	ret = gpu_annotation__fprint(&a, fp);
	gpu_annotation__exit(&a);
	return ret;
}

const struct report_output output_annotate = {
	.name = "annotate",
	.arg = "KERNEL",
	.help = "a GPU kernel's PC samples per SASS instruction (nvdisasm) and\n"
		"per source line (--gpu-pc-sampling), as the TUI's annotate",
	.needs = OUTPUT_NEEDS_HEADER,
	.run = annotate__run,
};
