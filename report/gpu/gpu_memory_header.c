// SPDX-License-Identifier: MIT
/* The GPU memory section of --header (gpu_memory_tool.h): per process and
 * device the peaks, the top holders, fragmentation, the attach baseline and
 * the OOM; then the unknown and double frees. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "report/gpu/gpu_memory_tool.h"

#define GPU_MEMORY_TOP 5

/* A Python frame's "py::FUNC:FILE:LINE" as "FUNC:LINE", for a caller. */
static void gpu_memory__py_short(const char *name, char *buf, size_t size)
{
	const char *fn = name + 4, *colon = strchr(fn, ':'), *line = strrchr(name, ':');

	if (!colon || line == colon)
		snprintf(buf, size, "%s", fn);
	else
		snprintf(buf, size, "%.*s%s", (int)(colon - fn), fn, line);
}

#define GPU_MEMORY_CALLERS 2	/* Python callers named after a holder's frame */

/* What names a holder: the leaf-most Python frame when the stack has one,
 * followed by its Python callers' "FUNC:LINE" (a helper that allocates for
 * many is told apart by who called it); else the leaf-most frame of code
 * (not the CUDA API frame). */
static const char *gpu_memory__holder(const struct profile *p, uint32_t stack, char *buf,
				      size_t size)
{
	size_t n, len = 0, callers = 0;
	const uint32_t *fr = profile__stack(p, stack, &n);
	const char *code = NULL;

	buf[0] = 0;
	for (size_t i = n; i-- > 0 && callers <= GPU_MEMORY_CALLERS; ) {
		const struct frame *f = profile__frame(p, fr[i]);
		char sh[256];

		if (!strncmp(f->name, "py::", 4)) {
			if (!callers++) {
				len = (size_t)snprintf(buf, size, "%s", f->name);
				continue;
			}
			gpu_memory__py_short(f->name, sh, sizeof(sh));
			if (len < size)
				len += (size_t)snprintf(buf + len, size - len, " < %s", sh);
		}
		if (!callers && !code && (f->kind == FRAME_CPU_USER || f->kind == FRAME_CPU_KERNEL))
			code = f->name;
	}
	if (callers)
		return buf;
	return code ? code : n ? profile__frame(p, fr[n - 1])->name : "[no stack]";
}

static double gpu_memory__secs(const struct session *s, uint64_t t)
{
	return t >= s->first_time ? (double)(t - s->first_time) / 1e9 : 0;
}

static const char *gpu_memory__rows_title(const struct gpu_mem_space *sp,
					  const struct gpu_memory_opts *o, char *buf, size_t size)
{
	if (sp->taken_at_oom)
		return "at the out-of-memory failure";
	switch (o->at_given ? GPU_MEM_AT : o->mode) {
	case GPU_MEM_PEAK:	return "at the peak";
	case GPU_MEM_ALLOCS:	return "allocated over the recording";
	case GPU_MEM_LEAK:	return "live at the end (leaks), with the oldest's age";
	case GPU_MEM_AT:
		snprintf(buf, size, "live at %.6f s", o->at);
		return buf;
	}
	return "?";
}

/* The top rows of space i. */
static void gpu_memory__holders(const struct session *s, const struct gpu_mem *m, size_t i,
				const struct gpu_memory_opts *o, FILE *fp)
{
	const struct gpu_mem_space *sp = &m->spaces[i];
	uint64_t total = 0;
	size_t shown = 0;
	char b[32], t[48], h[768];

	for (size_t r = 0; r < m->nr_rows; r++)
		if (m->rows[r].space == i)
			total += m->rows[r].bytes;
	if (!total)
		return;
	fprintf(fp, "#     top holders %s:\n", gpu_memory__rows_title(sp, o, t, sizeof(t)));
	for (size_t r = 0; r < m->nr_rows && shown < GPU_MEMORY_TOP; r++) {
		const struct gpu_mem_row *row = &m->rows[r];

		if (row->space != i)
			continue;
		shown++;
		fprintf(fp, "#       %5.1f%% %10s %6" PRIu64 " block%s  %s", 100.0 * (double)row->bytes /
			(double)total, gpu_mem__bytes_str(row->bytes, b, sizeof(b)), row->count,
			row->count == 1 ? " " : "s", gpu_memory__holder(&s->profile, row->stack, h, sizeof(h)));
		if (o->mode == GPU_MEM_LEAK && !o->at_given)
			fprintf(fp, "  (age %.6f s)", (double)(sp->taken - row->oldest) / 1e9);
		fputc('\n', fp);
	}
}

static void gpu_memory__space(const struct session *s, const struct gpu_mem *m, size_t i,
			      const struct gpu_memory_opts *o, FILE *fp)
{
	const struct gpu_mem_space *sp = &m->spaces[i];
	char a[32], b[32], c[32], h[768];

	fprintf(fp, "#   pid %u device %u (%s):\n", session__pid(s, sp->pid), sp->device,
		sp->torch ? "PyTorch blocks; reserved: its CUDA-level segments" : "CUDA-level");
	fprintf(fp, "#     peak allocated %s (%" PRIu64 " bytes) at %.6f s\n",
		gpu_mem__bytes_str(sp->peak, a, sizeof(a)), sp->peak,
		gpu_memory__secs(s, sp->peak_time));
	fprintf(fp, "#     peak reserved  %s (%" PRIu64 " bytes) at %.6f s\n",
		gpu_mem__bytes_str(sp->reserved_peak, a, sizeof(a)), sp->reserved_peak,
		gpu_memory__secs(s, sp->reserved_peak_time));
	if (sp->torch && sp->other_peak)
		fprintf(fp, "#     other CUDA-level memory (not its segments: cuBLAS, NCCL, the program's "
			"cudaMalloc): peak %s (%" PRIu64 " bytes) at %.6f s\n",
			gpu_mem__bytes_str(sp->other_peak, a, sizeof(a)), sp->other_peak,
			gpu_memory__secs(s, sp->other_peak_time));
	if (sp->torch)
		fprintf(fp, "#     fragmentation at the peak: %s (reserved %s - allocated %s)\n",
			gpu_mem__bytes_str(sp->reserved_at_peak > sp->peak ?
					   sp->reserved_at_peak - sp->peak : 0, a, sizeof(a)),
			gpu_mem__bytes_str(sp->reserved_at_peak, b, sizeof(b)),
			gpu_mem__bytes_str(sp->peak, c, sizeof(c)));
	fprintf(fp, "#     allocations %" PRIu64 " (%s), live at the end %s in %" PRIu64
		" block%s\n", sp->nr_allocs, gpu_mem__bytes_str(sp->alloc_bytes, a, sizeof(a)),
		gpu_mem__bytes_str(sp->live_end, b, sizeof(b)), sp->nr_live_end,
		sp->nr_live_end == 1 ? "" : "s");
	if (sp->has_baseline && sp->attached)
		fprintf(fp, "#     before the attach: %s in use on the device at %.6f s "
			"(no stack known)\n", gpu_mem__bytes_str(sp->used_before, a, sizeof(a)),
			gpu_memory__secs(s, sp->baseline_time));
	if (sp->oom)
		fprintf(fp, "#     out of memory at %.6f s: %s asked, in %s\n",
			gpu_memory__secs(s, sp->oom_time),
			sp->oom_bytes ? gpu_mem__bytes_str(sp->oom_bytes, a, sizeof(a)) : "? bytes",
			gpu_memory__holder(&s->profile, sp->oom_stack, h, sizeof(h)));
	gpu_memory__holders(s, m, i, o, fp);
}

int gpu_memory__header(const struct session *s, FILE *fp)
{
	const struct gpu_memory *gm = gpu_memory__find(s);
	const struct gpu_mem *m = gpu_memory__result(gm);

	if (!gpu_memory__active(gm) || !m)
		return 0;
	fprintf(fp, "#\n# gpu memory (PyTorch blocks where a process has them, else "
		"CUDA-level allocations; see --gpu-memory):\n");
	for (size_t i = 0; i < m->nr_spaces; i++)
		if (filter__match_task(&s->filter, m->spaces[i].pid, 0, FILTER_NO_TIME) &&
		    filter__match_device(&s->filter, m->spaces[i].device))
			gpu_memory__space(s, m, i, gpu_memory__opts(gm), fp);
	fprintf(fp, "#   frees of unknown pointers: %" PRIu64 " (PyTorch %" PRIu64
		", CUDA-level %" PRIu64 ")\n",
		m->unknown_frees[GPU_MEM_BLOCK] + m->unknown_frees[GPU_MEM_CUDA],
		m->unknown_frees[GPU_MEM_BLOCK], m->unknown_frees[GPU_MEM_CUDA]);
	fprintf(fp, "#   double frees: %" PRIu64 " (PyTorch %" PRIu64 ", CUDA-level %" PRIu64 ")\n",
		m->double_frees[GPU_MEM_BLOCK] + m->double_frees[GPU_MEM_CUDA],
		m->double_frees[GPU_MEM_BLOCK], m->double_frees[GPU_MEM_CUDA]);
	if (gpu_memory__bad_records(gm))
		fprintf(fp, "#   memory records skipped for values out of range: %" PRIu64 "\n",
			gpu_memory__bad_records(gm));
	return ferror(fp) ? -EIO : 0;
}
