// SPDX-License-Identifier: MIT
/* --dump: every record on one readable line (perf script -D, lite). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "report/dso.h"
#include "report/output.h"

static void dump__stack(FILE *fp, const void *stack, size_t avail)
{
	struct xpu_stack_view v;

	if (xpu_stack__parse(stack, avail, &v)) {
		fprintf(fp, " stack=<malformed>");
		return;
	}
	fprintf(fp, " kips=%u uips=%u regs=%u stack=%u flags=%#x", v.hdr->nr_kernel_ips,
		v.hdr->nr_user_ips, v.hdr->nr_regs, v.hdr->stack_size, v.hdr->flags);
	if (v.hdr->nr_regs > XPU_X86_RIP && v.hdr->arch == XPU_ARCH_X86_64)
		fprintf(fp, " ip=%#" PRIx64 " sp=%#" PRIx64, v.regs[XPU_X86_RIP], v.regs[XPU_X86_RSP]);
	for (unsigned i = 0; i < v.hdr->nr_kernel_ips && i < 4; i++)
		fprintf(fp, " k%u=%#" PRIx64, i, v.kernel_ips[i]);
	for (unsigned i = 0; i < v.hdr->nr_user_ips && i < 4; i++)
		fprintf(fp, " u%u=%#" PRIx64, i, v.user_ips[i]);
}

static void dump__record(FILE *fp, const struct xpu_record *r)
{
	const void *b = r->body;
	const char *str, *key, *val;
	char hex[2 * XPU_MMAP_BUILD_ID_MAX + 1];

	fprintf(fp, "%-10s", xpu_record__type_name(r->type));
	switch (r->type) {
	case XPU_REC_META:
		if (!xpu_record__meta(r, &key, &val))
			fprintf(fp, " %s=%s", key, val);
		break;
	case XPU_REC_COMM: {
		const struct xpu_comm *c = b;

		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u comm=%.16s%s", c->time, c->pid,
			c->tid, c->comm, (c->flags & XPU_COMM_EXEC) ? " exec" : "");
		break;
	}
	case XPU_REC_FORK: {
		const struct xpu_fork *f = b;

		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u ppid=%u ptid=%u", f->time, f->pid,
			f->tid, f->ppid, f->ptid);
		break;
	}
	case XPU_REC_EXIT: {
		const struct xpu_exit *e = b;

		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u", e->time, e->pid, e->tid);
		if (e->flags & XPU_EXIT_HAS_STATUS)
			fprintf(fp, " status=%#x", (unsigned)e->status);
		break;
	}
	case XPU_REC_MMAP: {
		const struct xpu_mmap *m = b;

		str = xpu_record__string(r, sizeof(*m));
		build_id__hex(m->build_id, m->build_id_size <= XPU_MMAP_BUILD_ID_MAX ?
			      m->build_id_size : 0, hex);
		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u [%#" PRIx64 "-%#" PRIx64 ") pgoff=%#"
			PRIx64 " prot=%#x build-id=%s %s", m->time, m->pid, m->tid, m->start,
			m->start + m->len, m->pgoff, m->prot, hex[0] ? hex : "-", str ? str : "?");
		break;
	}
	case XPU_REC_SAMPLE: {
		const struct xpu_sample *s = b;

		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u cpu=%u weight=%u", s->time, s->pid,
			s->tid, s->cpu, s->weight);
		dump__stack(fp, &s->stack, r->body_size - offsetof(struct xpu_sample, stack));
		break;
	}
	case XPU_REC_LOST: {
		const struct xpu_lost *l = b;

		fprintf(fp, " time=%" PRIu64 " source=%s pid=%u count=%" PRIu64, l->time,
			lost_source__name(l->source), l->pid, l->count);
		break;
	}
	case XPU_REC_KSYM: {
		const struct xpu_ksym *k = b;

		str = xpu_record__string(r, sizeof(*k));
		fprintf(fp, " %#" PRIx64 " size=%" PRIu64 " %s", k->addr, k->size, str ? str : "?");
		break;
	}
	case XPU_REC_PERF_MAP: {
		const struct xpu_perf_map *p = b;

		str = xpu_record__string(r, sizeof(*p));
		fprintf(fp, " pid=%u %#" PRIx64 " size=%" PRIu64 " %s", p->pid, p->start, p->size,
			str ? str : "?");
		break;
	}
	case XPU_REC_STRING: {
		const struct xpu_string *s = b;

		str = xpu_record__string(r, sizeof(*s));
		fprintf(fp, " pid=%u id=%u %s", s->pid, s->id, str ? str : "?");
		break;
	}
	case XPU_REC_FINISH: {
		const struct xpu_finish *f = b;

		fprintf(fp, " time=%" PRIu64 " samples=%" PRIu64 " corr=%" PRIu64 " gpu=%" PRIu64
			" lost=%" PRIu64, f->time, f->nr_samples, f->nr_corr, f->nr_gpu, f->nr_lost);
		break;
	}
	case XPU_REC_GPU_KERNEL: {
		const struct xpu_gpu_kernel *k = b;

		fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
			" name_id=%u dev=%u stream=%u graph=%u", k->start, k->end, k->pid,
			k->correlation_id, k->name_id, k->device, k->stream, k->graph_id);
		break;
	}
	case XPU_REC_GPU_MEMCPY: {
		const struct xpu_gpu_memcpy *m = b;

		fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
			" bytes=%" PRIu64 " kind=%u", m->start, m->end, m->pid, m->correlation_id,
			m->bytes, m->copy_kind);
		break;
	}
	case XPU_REC_GPU_MEMSET: {
		const struct xpu_gpu_memset *m = b;

		fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
			" bytes=%" PRIu64, m->start, m->end, m->pid, m->correlation_id, m->bytes);
		break;
	}
	case XPU_REC_GPU_SYNC: {
		const struct xpu_gpu_sync *y = b;

		fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64 " type=%u",
			y->start, y->end, y->pid, y->correlation_id, y->type);
		break;
	}
	case XPU_REC_GPU_API: {
		const struct xpu_gpu_api *a = b;

		fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u tid=%u corr=%" PRIu64
			" domain=%u cbid=%u ret=%d", a->start, a->end, a->pid, a->tid,
			a->correlation_id, a->domain, a->cbid, a->ret);
		break;
	}
	case XPU_REC_GPU_CORR: {
		const struct xpu_gpu_corr *c = b;

		fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u corr=%" PRIu64 " domain=%u cbid=%u",
			c->time, c->pid, c->tid, c->correlation_id, c->domain, c->cbid);
		dump__stack(fp, &c->stack, r->body_size - offsetof(struct xpu_gpu_corr, stack));
		break;
	}
	case XPU_REC_GPU_DEVICE: {
		const struct xpu_gpu_device *d = b;

		str = xpu_record__string(r, sizeof(*d));
		fprintf(fp, " pid=%u id=%u sm=%u cc=%u.%u mem=%" PRIu64 " %s", d->pid, d->id,
			d->sm_count, d->cc_major, d->cc_minor, d->global_memory, str ? str : "?");
		break;
	}
	}
	fprintf(fp, " (chunk %" PRIu64 ", %u bytes)\n", r->chunk_index, r->body_size);
}

int output__dump(struct session *s, FILE *fp)
{
	struct xpu_record rec;

	xpu_reader__rewind(s->reader);
	while (xpu_reader__next(s->reader, &rec) == 1)
		dump__record(fp, &rec);
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
