// SPDX-License-Identifier: MIT
/*
 * --stdio --sort with GPU keys (device, stream, kernel; with comm and pid):
 * a table of the GPU work the join delivered (after the filters), one row
 * per key, like Nsight Systems' kernel summary: share of the GPU time, total,
 * count, average, min and max. "kernel" is the GPU leaf frame: the kernel's
 * name, or [GPU_Memcpy HtoD], [GPU_Memset], [GPU_Sync]... Durations are the
 * records' own, in ns; nothing is scaled to samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_stats.h"
#include "report/output/output.h"

#define STDIO_GPU_TOOL "stdio-gpu"

struct gpu_row {
	uint32_t key[5];		/* comm, pid, device, stream, leaf frame; ~0u: unused */
	uint64_t ns, count, min, max;
};

struct stdio_gpu {
	struct gpu_row *rows;
	size_t nr, cap;
	struct bmap idx;
	bool key[SORT_NR_KEYS];		/* the keys asked for */
};

static void stdio_gpu__event(struct session *s, const struct gpu_event *ev, void *priv)
{
	struct stdio_gpu *g = priv;
	uint64_t ns = ev->end > ev->start ? ev->ns : 0;
	uint32_t key[5] = { ev->comm, ev->pid, ev->device, ev->stream, ev->leaf };
	bool found;
	void **slot;
	struct gpu_row *r;

	for (int i = 0; i < 5; i++) {
		static const enum sort_key k[5] = { SORT_COMM, SORT_PID, SORT_DEVICE, SORT_STREAM,
						    SORT_KERNEL };

		if (!g->key[k[i]])
			key[i] = ~0u;
	}
	slot = bmap__slot(&g->idx, key, sizeof(key), &found);
	if (!found) {
		g->rows = xgrow(g->rows, &g->cap, g->nr + 1, sizeof(*g->rows));
		r = &g->rows[g->nr++];
		memset(r, 0, sizeof(*r));
		memcpy(r->key, key, sizeof(key));
		r->min = UINT64_MAX;
		*slot = (void *)(uintptr_t)g->nr;
	}
	r = &g->rows[(uintptr_t)*slot - 1];
	r->ns += ns;
	r->count++;
	r->min = ns < r->min ? ns : r->min;
	r->max = ns > r->max ? ns : r->max;
}

static void stdio_gpu__exit(void *priv)
{
	struct stdio_gpu *g = priv;

	bmap__exit(&g->idx, NULL);
	free(g->rows);
	free(g);
}

int stdio_gpu__prepare(struct session *s, const struct table_opts *to)
{
	struct gpu_join *j = gpu_join__find(s);
	struct session_tool *t;
	struct stdio_gpu *g;

	if (!j)
		return 0;
	g = xzalloc(sizeof(*g));
	bmap__init(&g->idx);
	t = xzalloc(sizeof(*t));
	t->name = STDIO_GPU_TOOL;
	t->exit = stdio_gpu__exit;
	t->priv = g;
	session__add_tool(s, t);
	for (size_t i = 0; i < to->nr_sort; i++)
		g->key[to->sort[i]] = true;
	gpu_join__subscribe(j, stdio_gpu__event, g);
	return 0;
}

static int gpu_row__cmp(const void *a, const void *b)
{
	const struct gpu_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return memcmp(x->key, y->key, sizeof(x->key));
}

int stdio_gpu__print(const struct session *s, FILE *fp, const struct table_opts *t)
{
	struct stdio_gpu *g = session__tool(s, STDIO_GPU_TOOL);
	const struct profile *p = &s->profile;
	uint64_t total = 0, count = 0;
	size_t shown = 0;
	char a[32], b[32], c[32], d[32];

	if (!g)
		return -EINVAL;
	for (size_t i = 0; i < g->nr; i++) {
		total += g->rows[i].ns;
		count += g->rows[i].count;
	}
	xpu_qsort(g->rows, g->nr, sizeof(*g->rows), gpu_row__cmp);
	fprintf(fp, "# GPU work: %" PRIu64 " records, %s total (durations as recorded)\n", count,
		gpu__ns_str(total, a, sizeof(a)));
	fprintf(fp, "# Lost events: %llu\n#\n", (unsigned long long)session__lost_total(s));
	fprintf(fp, "# %8s  %10s  %8s  %10s  %10s  %10s  ", "GPU time", "Total", "Count", "Avg",
		"Min", "Max");
	for (size_t i = 0; i < t->nr_sort; i++) {
		static const char *const hdr[SORT_NR_KEYS] = {
			[SORT_COMM] = "%-16s  ", [SORT_PID] = "%-8s  ", [SORT_DEVICE] = "%-6s  ",
			[SORT_STREAM] = "%-6s  ", [SORT_KERNEL] = "%s",
		};
		static const char *const name[SORT_NR_KEYS] = {
			[SORT_COMM] = "Command", [SORT_PID] = "Pid", [SORT_DEVICE] = "Device",
			[SORT_STREAM] = "Stream", [SORT_KERNEL] = "Kernel",
		};

		fprintf(fp, hdr[t->sort[i]], name[t->sort[i]]);
	}
	fprintf(fp, "\n#\n");
	for (size_t i = 0; i < g->nr; i++) {
		const struct gpu_row *r = &g->rows[i];
		double pct = total ? 100.0 * (double)r->ns / (double)total : 0;

		if (pct < t->percent_limit)
			continue;
		shown++;
		fprintf(fp, "  %7.2f%%  %10s  %8" PRIu64 "  %10s  %10s  %10s  ", pct,
			gpu__ns_str(r->ns, a, sizeof(a)), r->count,
			gpu__ns_str(r->ns / r->count, b, sizeof(b)), gpu__ns_str(r->min, c, sizeof(c)),
			gpu__ns_str(r->max, d, sizeof(d)));
		for (size_t k = 0; k < t->nr_sort; k++) {
			switch (t->sort[k]) {
			case SORT_COMM:
				fprintf(fp, "%-16s  ", profile__str(p, r->key[0]));
				break;
			case SORT_PID:
				fprintf(fp, "%-8u  ", r->key[1]);
				break;
			case SORT_DEVICE:
				fprintf(fp, "%-6u  ", r->key[2]);
				break;
			case SORT_STREAM:
				if (r->key[3] == ~0u)
					fprintf(fp, "%-6s  ", "-");
				else
					fprintf(fp, "%-6u  ", r->key[3]);
				break;
			case SORT_KERNEL:
				fprintf(fp, "%s", profile__frame(p, r->key[4])->name);
				break;
			default:
				break;
			}
		}
		fprintf(fp, "\n");
	}
	if (shown < g->nr)
		fprintf(fp, "#\n# %zu rows under --percent-limit %.2f%% not shown\n", g->nr - shown,
			t->percent_limit);
	return ferror(fp) ? -EIO : 0;
}
