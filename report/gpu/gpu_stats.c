// SPDX-License-Identifier: MIT
/* GPU summary from the activity records (pass 1 session tool). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/symbols/demangle.h"
#include "report/gpu/gpu_stats.h"

const char *memcpy_kind__name(unsigned kind)
{
	static const char *const names[] = {
		"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
		"HtoH", "PtoP",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

static void gpu_xfer__add(struct gpu_xfer *x, uint64_t start, uint64_t end, uint64_t bytes)
{
	x->count++;
	x->bytes += bytes;
	x->ns += end > start ? end - start : 0;
}

static struct gpu_devstat *gpu_stats__dev(struct gpu_stats *g, const struct session *s,
					   uint32_t pid, uint32_t device)
{
	uint32_t input = (uint32_t)(session__input_of(s, pid) - s->inputs);

	for (size_t i = 0; i < g->nr_devs; i++)
		if (g->devs[i].input == input && g->devs[i].device == device)
			return &g->devs[i];
	g->devs = xgrow(g->devs, &g->devs_cap, g->nr_devs + 1, sizeof(*g->devs));
	g->devs[g->nr_devs] = (struct gpu_devstat){ .input = input, .device = device };
	return &g->devs[g->nr_devs++];
}

/* Work on a device: its count and time, and the interval for busy time. */
static void gpu_devstat__add(struct gpu_devstat *d, uint64_t start, uint64_t end, bool kernel)
{
	uint64_t ns = end > start ? end - start : 0;

	if (kernel) {
		d->kernels++;
		d->kernel_ns += ns;
	} else {
		d->copies++;
		d->copy_ns += ns;
	}
	if (!ns)
		return;
	d->iv = xgrow(d->iv, &d->iv_cap, d->nr_iv + 2, sizeof(*d->iv));
	d->iv[d->nr_iv++] = start;
	d->iv[d->nr_iv++] = end;
}

static int iv__cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int gpu_devstat__cmp(const void *a, const void *b)
{
	const struct gpu_devstat *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->device < y->device ? -1 : x->device > y->device;
}

/* Busy time: the union of the device's intervals (overlapping kernels of
 * several streams count once). */
static void gpu_devstat__finish(struct gpu_devstat *d)
{
	uint64_t end = 0;

	xpu_qsort(d->iv, d->nr_iv / 2, 2 * sizeof(*d->iv), iv__cmp);
	d->busy_ns = 0;
	for (size_t i = 0; i < d->nr_iv; i += 2) {
		uint64_t a = d->iv[i] > end ? d->iv[i] : end, b = d->iv[i + 1];

		if (b > a)
			d->busy_ns += b - a;
		if (b > end)
			end = b;
	}
	free(d->iv);
	d->iv = NULL;
	d->nr_iv = d->iv_cap = 0;
}

static int gpu_stats__record(struct session *s, const struct xpu_record *rec, int pass,
			     void *priv)
{
	struct gpu_stats *g = priv;

	if (pass != 1)
		return 0;
	switch (rec->type) {
	case XPU_REC_STRING: {
		const struct xpu_string *str = rec->body;
		const char *txt = (const char *)(str + 1);
		size_t max = rec->body_size - sizeof(*str);
		uint32_t key[2] = { str->pid, str->id };
		bool found;
		void **slot;

		if (rec->body_size <= sizeof(*str) || !memchr(txt, '\0', max))
			break;
		slot = bmap__slot(&g->names, key, sizeof(key), &found);
		if (found)
			free(*slot);
		*slot = xstrdup(txt);
		break;
	}
	case XPU_REC_GPU_KERNEL: {
		const struct xpu_gpu_kernel *k = rec->body;
		uint64_t key = (uint64_t)k->pid << 32 | k->name_id;
		uint64_t *slot = u64map__slot(&g->by_key, key), ns;
		struct gpu_kstat *ks;

		if (!*slot) {
			g->raw = xgrow(g->raw, &g->raw_cap, g->nr_raw + 1, sizeof(*g->raw));
			g->keys = xrealloc(g->keys, g->raw_cap * sizeof(*g->keys));
			g->raw[g->nr_raw] = (struct gpu_kstat){ .min_ns = UINT64_MAX };
			g->keys[g->nr_raw] = key;
			*slot = ++g->nr_raw;
		}
		ks = &g->raw[*slot - 1];
		ns = k->end > k->start ? k->end - k->start : 0;
		ks->calls++;
		ks->total_ns += ns;
		if (ns < ks->min_ns)
			ks->min_ns = ns;
		if (ns > ks->max_ns)
			ks->max_ns = ns;
		g->kernel_ns += ns;
		g->nr_kernel_calls++;
		gpu_devstat__add(gpu_stats__dev(g, s, k->pid, k->device), k->start, k->end, true);
		break;
	}
	case XPU_REC_GPU_MEMCPY: {
		const struct xpu_gpu_memcpy *m = rec->body;

		gpu_devstat__add(gpu_stats__dev(g, s, m->pid, m->device), m->start, m->end, false);
		gpu_xfer__add(&g->memcpy[m->copy_kind < 11 ? m->copy_kind : 0], m->start, m->end,
			      m->bytes);
		break;
	}
	case XPU_REC_GPU_MEMSET: {
		const struct xpu_gpu_memset *m = rec->body;

		gpu_devstat__add(gpu_stats__dev(g, s, m->pid, m->device), m->start, m->end, false);
		gpu_xfer__add(&g->memset, m->start, m->end, m->bytes);
		break;
	}
	case XPU_REC_GPU_SYNC: {
		const struct xpu_gpu_sync *y = rec->body;

		gpu_xfer__add(&g->sync, y->start, y->end, 0);
		break;
	}
	}
	return 0;
}

static void gpu_stats__delete(void *priv)
{
	struct gpu_stats *g = priv;

	for (size_t i = 0; i < g->nr_kernels; i++)
		free(g->kernels[i].name);
	for (size_t i = 0; i < g->nr_devs; i++)
		free(g->devs[i].iv);
	free(g->devs);
	free(g->kernels);
	free(g->raw);
	free(g->keys);
	bmap__exit(&g->names, free);
	u64map__exit(&g->by_key);
	free(g);
}

int gpu_stats__attach(struct session *s)
{
	struct gpu_stats *g = xzalloc(sizeof(*g));

	bmap__init(&g->names);
	u64map__init(&g->by_key);
	g->s = s;
	g->tool = (struct session_tool){ .name = GPU_STATS_TOOL, .record = gpu_stats__record,
					 .exit = gpu_stats__delete, .priv = g };
	session__add_tool(s, &g->tool);
	return 0;
}

static int gpu_kstat__cmp(const void *a, const void *b)
{
	const struct gpu_kstat *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

void gpu_stats__finish(struct gpu_stats *g)
{
	struct bmap by_name;

	if (g->finished)
		return;
	g->finished = true;
	bmap__init(&by_name);
	g->kernels = xcalloc(g->nr_raw + 1, sizeof(*g->kernels));
	for (size_t i = 0; i < g->nr_raw; i++) {
		uint32_t key[2] = { (uint32_t)(g->keys[i] >> 32), (uint32_t)g->keys[i] };
		const char *mangled = bmap__find(&g->names, key, sizeof(key));
		char *name = mangled ? demangle(mangled, true) : NULL;
		struct gpu_kstat *k, *r = &g->raw[i];
		bool found;
		void **slot;

		if (!name)
			name = mangled ? xstrdup(mangled) :
					 xasprintf("[kernel name %u of pid %u]", key[1], key[0]);
		slot = bmap__slot(&by_name, name, strlen(name), &found);
		if (!found) {
			*slot = (void *)(uintptr_t)(++g->nr_kernels);
			g->kernels[g->nr_kernels - 1] = (struct gpu_kstat){ .name = name,
									    .min_ns = UINT64_MAX };
		} else {
			free(name);
		}
		k = &g->kernels[(uintptr_t)*slot - 1];
		k->calls += r->calls;
		k->total_ns += r->total_ns;
		if (r->min_ns < k->min_ns)
			k->min_ns = r->min_ns;
		if (r->max_ns > k->max_ns)
			k->max_ns = r->max_ns;
	}
	bmap__exit(&by_name, NULL);
	xpu_qsort(g->kernels, g->nr_kernels, sizeof(*g->kernels), gpu_kstat__cmp);
	for (size_t i = 0; i < g->nr_devs; i++)
		gpu_devstat__finish(&g->devs[i]);
	xpu_qsort(g->devs, g->nr_devs, sizeof(*g->devs), gpu_devstat__cmp);
}

bool gpu_stats__has_activity(const struct gpu_stats *g)
{
	if (g->nr_kernel_calls || g->memset.count || g->sync.count)
		return true;
	for (size_t i = 0; i < 11; i++)
		if (g->memcpy[i].count)
			return true;
	return false;
}

/* 227687 ns -> "227.7us": compact, so kernel names keep room at 80 columns. */
const char *gpu__ns_str(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, size, "%.2fs", ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	return buf;
}

int gpu_stats__fprint(struct gpu_stats *g, FILE *fp, size_t nr)
{
	char t[4][32];
	bool any_copy = false;

	gpu_stats__finish(g);
	fprintf(fp, "# GPU summary (exact, from the activity records):\n");
	if (!gpu_stats__has_activity(g)) {
		fprintf(fp, "#   no GPU activity in this trace\n");
		return ferror(fp) ? -EIO : 0;
	}
	fprintf(fp, "#   kernels: %" PRIu64 " launches of %zu kernels, %s in total\n",
		g->nr_kernel_calls, g->nr_kernels, gpu__ns_str(g->kernel_ns, t[0], sizeof(t[0])));
	if (g->nr_kernels)
		fprintf(fp, "#  %5s %8s %6s %8s %8s %8s  %s\n", "time", "total", "calls", "avg",
			"min", "max", "kernel");
	for (size_t i = 0; i < g->nr_kernels && i < nr; i++) {
		const struct gpu_kstat *k = &g->kernels[i];

		fprintf(fp, "#  %4.1f%% %8s %6" PRIu64 " %8s %8s %8s  %s\n",
			g->kernel_ns ? 100.0 * k->total_ns / g->kernel_ns : 0,
			gpu__ns_str(k->total_ns, t[0], sizeof(t[0])), k->calls,
			gpu__ns_str(k->calls ? k->total_ns / k->calls : 0, t[1], sizeof(t[1])),
			gpu__ns_str(k->min_ns, t[2], sizeof(t[2])), gpu__ns_str(k->max_ns, t[3], sizeof(t[3])),
			k->name);
	}
	if (g->nr_kernels > nr)
		fprintf(fp, "#   ... %zu more kernels\n", g->nr_kernels - nr);
	for (size_t i = 0; i < 11; i++) {
		const struct gpu_xfer *x = &g->memcpy[i];

		if (!x->count)
			continue;
		if (!any_copy)
			fprintf(fp, "#   %-8s %8s  %14s  %8s  %s\n", "memcpy", "count", "bytes",
				"time", "bandwidth");
		any_copy = true;
		fprintf(fp, "#   %-8s %8" PRIu64 "  %14" PRIu64 "  %8s  %.2f GB/s\n",
			memcpy_kind__name((unsigned)i), x->count, x->bytes,
			gpu__ns_str(x->ns, t[0], sizeof(t[0])), x->ns ? (double)x->bytes / x->ns : 0);
	}
	if (!any_copy)
		fprintf(fp, "#   memcpy: none\n");
	if (g->nr_devs)
		fprintf(fp, "#   %-24s %8s %8s %10s %8s %10s\n", "device", "busy", "kernels",
			"kern time", "copies", "copy time");
	for (size_t i = 0; i < g->nr_devs; i++) {
		const struct gpu_devstat *d = &g->devs[i];
		char name[96];

		if (g->s && g->s->nr_inputs > 1 && d->input < g->s->nr_inputs)
			snprintf(name, sizeof(name), "%u [%s]", d->device,
				 g->s->inputs[d->input].label ? g->s->inputs[d->input].label : "?");
		else
			snprintf(name, sizeof(name), "%u", d->device);
		fprintf(fp, "#   %-24s %8s %8" PRIu64 " %10s %8" PRIu64 " %10s\n", name,
			gpu__ns_str(d->busy_ns, t[0], sizeof(t[0])), d->kernels,
			gpu__ns_str(d->kernel_ns, t[1], sizeof(t[1])), d->copies,
			gpu__ns_str(d->copy_ns, t[2], sizeof(t[2])));
	}
	fprintf(fp, "#   memset:  %" PRIu64 " calls, %" PRIu64 " bytes, %s\n", g->memset.count,
		g->memset.bytes, gpu__ns_str(g->memset.ns, t[0], sizeof(t[0])));
	fprintf(fp, "#   sync:    %" PRIu64 " waits, %s\n", g->sync.count,
		gpu__ns_str(g->sync.ns, t[0], sizeof(t[0])));
	return ferror(fp) ? -EIO : 0;
}

int gpu_stats__header(const struct session *s, FILE *fp)
{
	struct gpu_stats *g = session__tool(s, GPU_STATS_TOOL);

	/* Per-kernel and per-copy totals, exact from the activity records
	 * (Nsight's kernel summary): only when there is GPU work. */
	if (!g || !gpu_stats__has_activity(g))
		return 0;
	fputs("#\n", fp);
	return gpu_stats__fprint(g, fp, 20);
}
