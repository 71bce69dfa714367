// SPDX-License-Identifier: MIT
/* What GPU PC sampling did to the kernels it sampled: see gpu_pcsamp_perturb.h. */
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "report/symbols/demangle.h"
#include "report/gpu/gpu_pcsamp_perturb.h"

void gpu_pcs_perturb__init(struct gpu_pcs_perturb *pp)
{
	memset(pp, 0, sizeof(*pp));
	u64map__init(&pp->kidx);
}

void gpu_pcs_perturb__exit(struct gpu_pcs_perturb *pp)
{
	free(pp->r);
	free(pp->k);
	u64map__exit(&pp->kidx);
	memset(pp, 0, sizeof(*pp));
}

void gpu_pcs_perturb__range(struct gpu_pcs_perturb *pp, const struct xpu_record *rec)
{
	struct xpu_gpu_pc_range g;

	memcpy(&g, rec->body, sizeof(g));	/* the reader checked the size */
	if (g.end < g.start) {
		pp->malformed++;
		return;
	}
	pp->r = xgrow(pp->r, &pp->cap, pp->nr + 1, sizeof(*pp->r));
	pp->r[pp->nr++] = (struct gpu_pcs_range){ g.start, g.end, g.pid, g.device };
	if (g.end - g.start > pp->max_len)
		pp->max_len = g.end - g.start;
}

static int range__cmp(const void *a, const void *b)
{
	const struct gpu_pcs_range *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void gpu_pcs_perturb__prepare(struct gpu_pcs_perturb *pp)
{
	xpu_qsort(pp->r, pp->nr, sizeof(*pp->r), range__cmp);
}

/* Whether [start, end] overlaps a range of (pid, device). */
static bool perturb__sampled(const struct gpu_pcs_perturb *pp, uint32_t pid, uint32_t device,
			     uint64_t start, uint64_t end)
{
	struct gpu_pcs_range key = { .pid = pid, .device = device,
				     .start = start > pp->max_len ? start - pp->max_len : 0 };
	size_t lo = 0, hi = pp->nr;

	while (lo < hi) {	/* the first range not before key */
		size_t mid = lo + (hi - lo) / 2;

		if (range__cmp(&pp->r[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pp->nr && pp->r[lo].pid == pid && pp->r[lo].device == device &&
	       pp->r[lo].start <= end; lo++)
		if (pp->r[lo].end >= start)
			return true;
	return false;
}

static struct gpu_pcs_kstat *perturb__kstat(struct gpu_pcs_perturb *pp, uint32_t pid,
					    uint32_t name_id, bool add)
{
	uint64_t key = (uint64_t)pid << 32 | name_id, *slot;

	if (!add) {
		slot = u64map__find(&pp->kidx, key);
		return slot ? &pp->k[*slot - 1] : NULL;
	}
	slot = u64map__slot(&pp->kidx, key);
	if (!*slot) {
		pp->k = xgrow(pp->k, &pp->kcap, pp->nk + 1, sizeof(*pp->k));
		pp->k[pp->nk] = (struct gpu_pcs_kstat){ .pid = pid, .name_id = name_id, .factor = 1 };
		*slot = ++pp->nk;
	}
	return &pp->k[*slot - 1];
}

void gpu_pcs_perturb__kernel(struct gpu_pcs_perturb *pp, uint32_t pid, uint32_t device,
			     uint32_t name_id, uint64_t start, uint64_t end)
{
	struct gpu_pcs_kstat *k;

	if (!pp->nr || end < start)
		return;
	k = perturb__kstat(pp, pid, name_id, true);
	if (perturb__sampled(pp, pid, device, start, end)) {
		k->n_sampled++;
		k->ns_sampled += (double)(end - start);
	} else {
		k->n_unsampled++;
		k->ns_unsampled += (double)(end - start);
	}
}

static double kstat__ratio(const struct gpu_pcs_kstat *k)
{
	if (!k->n_sampled || !k->n_unsampled || k->ns_unsampled <= 0)
		return 0;
	return (k->ns_sampled / (double)k->n_sampled) / (k->ns_unsampled / (double)k->n_unsampled);
}

void gpu_pcs_perturb__finish(struct gpu_pcs_perturb *pp)
{
	for (size_t i = 0; i < pp->nk; i++) {
		struct gpu_pcs_kstat *k = &pp->k[i];
		double r = kstat__ratio(k);

		k->factor = 1;
		if (k->n_sampled >= GPU_PCS_PERTURB_MIN_LAUNCHES &&
		    k->n_unsampled >= GPU_PCS_PERTURB_MIN_LAUNCHES && r >= GPU_PCS_PERTURB_FACTOR)
			k->factor = r;
	}
}

double gpu_pcs_perturb__ns(struct gpu_pcs_perturb *pp, uint32_t pid, uint32_t device,
			   uint32_t name_id, uint64_t start, uint64_t end)
{
	const struct gpu_pcs_kstat *k;
	double ns = (double)(end - start);

	if (!pp->nr || end < start || !(k = perturb__kstat(pp, pid, name_id, false)) ||
	    k->factor <= 1 || !perturb__sampled(pp, pid, device, start, end))
		return ns;
	pp->corrected++;
	pp->corrected_ns += ns - ns / k->factor;
	return ns / k->factor;
}

size_t gpu_pcs_perturb__inflated(const struct gpu_pcs_perturb *pp, const struct gpu_pcs_kstat **worst)
{
	size_t n = 0;

	if (worst)
		*worst = NULL;
	for (size_t i = 0; i < pp->nk; i++)
		if (pp->k[i].factor > 1) {
			n++;
			if (worst && (!*worst || pp->k[i].factor > (*worst)->factor))
				*worst = &pp->k[i];
		}
	return n;
}

static int kstat__by_time(const void *a, const void *b)
{
	const struct gpu_pcs_kstat *x = *(const struct gpu_pcs_kstat *const *)a;
	const struct gpu_pcs_kstat *y = *(const struct gpu_pcs_kstat *const *)b;
	double tx = x->ns_sampled + x->ns_unsampled, ty = y->ns_sampled + y->ns_unsampled;

	return tx > ty ? -1 : tx < ty;
}

#define PERTURB_HEADER_ROWS	10

void gpu_pcs_perturb__header(const struct gpu_pcs_perturb *pp, FILE *fp,
			     const char *(*names)(const void *ctx, uint32_t pid, uint32_t name_id),
			     const void *ctx)
{
	const struct gpu_pcs_kstat **by = NULL;
	double s_ns = 0, u_ns = 0, s_n = 0, u_n = 0;
	size_t inflated = gpu_pcs_perturb__inflated(pp, NULL);

	if (!pp->nr) {
		fprintf(fp, "#   pc sampling perturbation: not measured (continuous sampling: no "
			"unsampled launches to compare; record with the default --gpu-pc-duty)\n");
		return;
	}
	for (size_t i = 0; i < pp->nk; i++) {
		s_n += (double)pp->k[i].n_sampled;
		u_n += (double)pp->k[i].n_unsampled;
		s_ns += pp->k[i].ns_sampled;
		u_ns += pp->k[i].ns_unsampled;
	}
	fprintf(fp, "#   pc sampling perturbation: %zu sampling ranges; %.0f kernel launches sampled, "
		"%.0f not; %zu kernels %.2fx or more slower sampled (>= %d launches each way): "
		"their sampled launches' GPU time taken from the unsampled (%.3f ms taken off %llu "
		"launches)%s\n", pp->nr, s_n, u_n, inflated, GPU_PCS_PERTURB_FACTOR,
		GPU_PCS_PERTURB_MIN_LAUNCHES, pp->corrected_ns / 1e6,
		(unsigned long long)pp->corrected,
		pp->malformed ? " (malformed ranges skipped)" : "");
	by = xcalloc(pp->nk ? pp->nk : 1, sizeof(*by));
	for (size_t i = 0; i < pp->nk; i++)
		by[i] = &pp->k[i];
	xpu_qsort(by, pp->nk, sizeof(*by), kstat__by_time);
	for (size_t i = 0; i < pp->nk && i < PERTURB_HEADER_ROWS; i++) {
		const struct gpu_pcs_kstat *k = by[i];
		const char *mangled = names(ctx, k->pid, k->name_id);
		char *dem = mangled ? demangle(mangled, true) : NULL;
		double r = kstat__ratio(k);

		fprintf(fp, "#     pid %u %s: sampled %.3f ms mean (%llu launches), unsampled %.3f ms "
			"(%llu): ", k->pid, dem ? dem : mangled ? mangled : "[unknown]",
			k->n_sampled ? k->ns_sampled / (double)k->n_sampled / 1e6 : 0.0,
			(unsigned long long)k->n_sampled,
			k->n_unsampled ? k->ns_unsampled / (double)k->n_unsampled / 1e6 : 0.0,
			(unsigned long long)k->n_unsampled);
		if (k->factor > 1)
			fprintf(fp, "%.2fx, GPU time from the unsampled launches\n", k->factor);
		else if (r > 0)
			fprintf(fp, "%.2fx\n", r);
		else
			fprintf(fp, "not comparable\n");
		free(dem);
	}
	free(by);
}
