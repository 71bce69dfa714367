// SPDX-License-Identifier: MIT
/*
 * Test helper for the record_*.sh tests: reads a trace with format/reader.h
 * and prints facts the tests assert on, one "key value" per line.
 *
 *   record_check FILE                  counts per record type, damage, meta
 *   record_check FILE corr             one line per GPU_CORR record
 *   record_check FILE tids             one line per sample: pid, tid, stack bytes
 *   record_check FILE hits PATH VADDR SIZE
 *       how many samples and GPU_CORR records hold, in their user PCs or
 *       in their copied stack, an address inside [VADDR, VADDR+SIZE) of the
 *       ELF file PATH (mapped as the MMAP records of the same pid say):
 *       "the stack reaches this function" without an unwinder; and one
 *       "sample_hit PID TID 0|1" line per sample.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/reader.h"

#define MAX_MAPS 4096
static struct { uint32_t pid; uint64_t start, len, pgoff; } maps[MAX_MAPS];
static int nr_maps;
/* fork children inherit their parent's maps: child pid -> parent pid */
static struct { uint32_t pid, ppid; } forks[MAX_MAPS];
static int nr_forks;

static uint32_t map_owner(uint32_t pid)
{
	for (int depth = 0; depth < 16; depth++) {
		int i;

		for (int m = 0; m < nr_maps; m++)
			if (maps[m].pid == pid)
				return pid;
		for (i = 0; i < nr_forks && forks[i].pid != pid; i++)
			;
		if (i == nr_forks)
			return pid;
		pid = forks[i].ppid;
	}
	return pid;
}

static int stack_hits(uint32_t pid, const void *stk, size_t avail, uint64_t lo, uint64_t hi)
{
	struct xpu_stack_view v;
	uint64_t w;

	if (xpu_stack__parse(stk, avail, &v))
		return -1;
	pid = map_owner(pid);
	for (int m = 0; m < nr_maps; m++) {
		uint64_t rlo, rhi;

		if (maps[m].pid != pid)
			continue;
		/* runtime = start - pgoff + vaddr (vaddr == file offset in the workloads) */
		rlo = maps[m].start - maps[m].pgoff + lo;
		rhi = maps[m].start - maps[m].pgoff + hi;
		for (unsigned i = 0; i < v.hdr->nr_user_ips; i++) {
			memcpy(&w, &v.user_ips[i], 8);
			if (w >= rlo && w < rhi)
				return 1;
		}
		for (unsigned i = 0; i + 8 <= v.hdr->stack_size; i += 8) {
			memcpy(&w, v.stack + i, 8);
			if (w >= rlo && w < rhi)
				return 1;
		}
		if (v.hdr->nr_regs > XPU_X86_RIP) {
			memcpy(&w, &v.regs[XPU_X86_RIP], 8);
			if (w >= rlo && w < rhi)
				return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "summary";
	uint64_t counts[XPU_REC_MAX] = { 0 }, lo = 0, hi = 0;
	uint64_t s_hit = 0, s_all = 0, c_hit = 0, c_all = 0, lost = 0, trunc = 0, stack_bytes = 0;
	uint64_t user_ips = 0, kernel_ips = 0, with_regs = 0, unwound = 0;
	struct xpu_record rec;
	struct xpu_reader *r;
	const char *path = NULL;
	int err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: record_check FILE [corr|tids|hits PATH VADDR SIZE]\n");
		return 2;
	}
	if (!strcmp(mode, "hits")) {
		if (argc < 6)
			return 2;
		path = argv[3];
		lo = strtoull(argv[4], NULL, 0);
		hi = lo + strtoull(argv[5], NULL, 0);
	}
	r = xpu_reader__open(argv[1], &err);
	if (!r) {
		fprintf(stderr, "record_check: cannot open %s (error %d)\n", argv[1], err);
		return 1;
	}
	printf("features %#" PRIx64 "\n", xpu_reader__header(r)->features);
	/* Maps first: the sideband reaches the file after the samples it covers. */
	while (path && xpu_reader__next(r, &rec) == 1) {
		const struct xpu_mmap *m = rec.body;
		const char *p;

		if (rec.type == XPU_REC_FORK && nr_forks < MAX_MAPS) {
			const struct xpu_fork *f = rec.body;

			if (f->pid != f->ppid) {
				forks[nr_forks].pid = f->pid;
				forks[nr_forks].ppid = f->ppid;
				nr_forks++;
			}
		}
		if (rec.type != XPU_REC_MMAP || nr_maps >= MAX_MAPS)
			continue;
		p = xpu_record__string(&rec, sizeof(*m));
		if (p && !strcmp(p, path)) {
			maps[nr_maps].pid = m->pid;
			maps[nr_maps].start = m->start;
			maps[nr_maps].len = m->len;
			maps[nr_maps].pgoff = m->pgoff;
			nr_maps++;
		}
	}
	xpu_reader__rewind(r);
	while (xpu_reader__next(r, &rec) == 1) {
		if (rec.type < XPU_REC_MAX)
			counts[rec.type]++;
		if (rec.type == XPU_REC_META && !strcmp(mode, "summary")) {
			const char *k, *val;

			if (!xpu_record__meta(&rec, &k, &val))
				printf("meta.%s %s\n", k, val);
		} else if (rec.type == XPU_REC_MMAP && !strcmp(mode, "summary")) {
			if (((const struct xpu_mmap *)rec.body)->build_id_size)
				counts[0]++;	/* mmaps with a build-id */
		} else if (rec.type == XPU_REC_SAMPLE) {
			const struct xpu_sample *s = rec.body;

			if (!strcmp(mode, "tids"))
				printf("sample %u %u %u\n", s->pid, s->tid, s->stack.stack_size);
			if (s->stack.flags & XPU_STACK_USER_TRUNCATED)
				trunc++;
			stack_bytes += s->stack.stack_size;
			user_ips += s->stack.nr_user_ips;
			kernel_ips += s->stack.nr_kernel_ips;
			with_regs += s->stack.nr_regs == XPU_X86_NR_REGS;
			unwound += (s->stack.flags & XPU_STACK_UNWOUND) && s->stack.nr_user_ips &&
				   !s->stack.nr_regs;
			if (path) {
				int h = stack_hits(s->pid, &s->stack, rec.body_size - offsetof(struct xpu_sample, stack), lo, hi);

				s_all++;
				s_hit += h == 1;
				printf("sample_hit %u %u %d\n", s->pid, s->tid, h == 1);
			}
		} else if (rec.type == XPU_REC_GPU_CORR) {
			const struct xpu_gpu_corr *c = rec.body;

			if (!strcmp(mode, "corr"))
				printf("corr pid=%u tid=%u id=%" PRIu64 " cbid=%u domain=%u regs=%u ips=%u stack=%u\n",
				       c->pid, c->tid, c->correlation_id, c->cbid, c->domain, c->stack.nr_regs,
				       c->stack.nr_user_ips, c->stack.stack_size);
			if (path) {
				int h = stack_hits(c->pid, &c->stack, rec.body_size - offsetof(struct xpu_gpu_corr, stack), lo, hi);

				c_all++;
				c_hit += h == 1;
				if (h != 1)
					printf("corr_miss id=%" PRIu64 " time=%" PRIu64 "\n", c->correlation_id, c->time);
			}
		} else if (rec.type == XPU_REC_LOST && !strcmp(mode, "summary")) {
			const struct xpu_lost *l = rec.body;

			printf("lost.%u %" PRIu64 "\n", l->source, l->count);
			lost += l->count;
		} else if (rec.type == XPU_REC_EXIT && !strcmp(mode, "summary")) {
			const struct xpu_exit *x = rec.body;

			if (x->flags & XPU_EXIT_HAS_STATUS)
				printf("exit_status %d\n", x->status);
		}
	}
	if (path) {
		printf("samples_hit %" PRIu64 " %" PRIu64 "\n", s_hit, s_all);
		printf("corr_hit %" PRIu64 " %" PRIu64 "\n", c_hit, c_all);
		printf("maps %d\n", nr_maps);
	}
	if (!strcmp(mode, "summary")) {
		for (int t = 1; t < XPU_REC_MAX; t++)
			if (counts[t])
				printf("%s %" PRIu64 "\n", xpu_record__type_name(t), counts[t]);
		printf("mmap_with_build_id %" PRIu64 "\n", counts[0]);
		printf("lost_total %" PRIu64 "\n", lost);
		printf("truncated_stacks %" PRIu64 "\n", trunc);
		printf("stack_bytes_total %" PRIu64 "\n", stack_bytes);
		printf("user_ips_total %" PRIu64 "\n", user_ips);
		printf("kernel_ips_total %" PRIu64 "\n", kernel_ips);
		printf("samples_with_regs %" PRIu64 "\n", with_regs);
		printf("samples_unwound %" PRIu64 "\n", unwound);	/* frames written at record time */
		printf("chunks_ok %" PRIu64 "\n", xpu_reader__stats(r)->chunks_ok);
		printf("chunks_bad %" PRIu64 "\n", xpu_reader__stats(r)->chunks_bad);
		printf("file_truncated %d\n", xpu_reader__stats(r)->truncated);
	}
	xpu_reader__close(r);
	return 0;
}
