// SPDX-License-Identifier: MIT
/* The printers of the record types, one line of fields each (--dump). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "common/buildid.h"
#include "common/utf8.h"
#include "record_types.h"

_Static_assert(XPU_MMAP_BUILD_ID_MAX == BUILD_ID_MAX, "common/buildid.h and the format disagree");

static int print__done(FILE *fp)
{
	return ferror(fp) ? -EIO : 0;
}

/* A string as --dump shows it: valid UTF-8 as is (common/utf8.h: strict,
 * so no surrogate or overlong form); control characters, backslashes and
 * bytes that are not UTF-8 (a name read from freed memory, a damaged
 * trace) as \xNN, so every line is text whatever the trace holds. At most
 * max bytes; a NUL ends it. */
static void print__text(FILE *fp, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strnlen(str, max);
	uint32_t c;

	for (size_t i = 0, k; i < n; i += k) {
		k = utf8__next(str + i, n - i, &c);
		if (c == UTF8_BAD) {
			for (size_t j = 0; j < k; j++)
				fprintf(fp, "\\x%02x", s[i + j]);
		} else if (c < 0x20 || c == 0x7f || c == '\\') {
			fprintf(fp, "\\x%02x", (unsigned)c);
		} else {
			fwrite(str + i, 1, k, fp);
		}
	}
}

/* The trailing string, or "?" where it is not terminated. */
static void print__tail(FILE *fp, const struct xpu_record *r)
{
	const char *s = xpu_record__tail(r);

	print__text(fp, s ? s : "?", SIZE_MAX);
}

/* " key=value", both escaped */
static void print__pair(FILE *fp, const char *key, const char *val)
{
	fputc(' ', fp);
	print__text(fp, key, SIZE_MAX);
	fputc('=', fp);
	print__text(fp, val, SIZE_MAX);
}

static int print__meta(FILE *fp, const struct xpu_record *r)
{
	const char *key, *val;

	if (!xpu_record__meta(r, &key, &val))
		print__pair(fp, key, val);
	return print__done(fp);
}

static int print__comm(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_comm *c = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u comm=", c->time, c->pid, c->tid);
	print__text(fp, c->comm, sizeof(c->comm));
	if (c->flags & XPU_COMM_EXEC)
		fputs(" exec", fp);
	return print__done(fp);
}

static int print__fork(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_fork *f = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u ppid=%u ptid=%u", f->time, f->pid,
		f->tid, f->ppid, f->ptid);
	return print__done(fp);
}

static int print__exit(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_exit *e = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u", e->time, e->pid, e->tid);
	if (e->flags & XPU_EXIT_HAS_STATUS)
		fprintf(fp, " status=%#x", (unsigned)e->status);
	return print__done(fp);
}

static int print__mmap(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_mmap *m = r->body;
	char hex[2 * XPU_MMAP_BUILD_ID_MAX + 1];

	build_id__hex(m->build_id, m->build_id_size <= XPU_MMAP_BUILD_ID_MAX ?
		      m->build_id_size : 0, hex);
	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u [%#" PRIx64 "-%#" PRIx64 ") pgoff=%#"
		PRIx64 " prot=%#x build-id=%s ", m->time, m->pid, m->tid, m->start,
		m->start + m->len, m->pgoff, m->prot, hex[0] ? hex : "-");
	print__tail(fp, r);
	return print__done(fp);
}

static int print__sample(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_sample *s = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u cpu=%u weight=%u", s->time, s->pid,
		s->tid, s->cpu, s->weight);
	return xpu_stack__fprintf(fp, &s->stack, r->body_size - offsetof(struct xpu_sample, stack));
}

static int print__lost(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_lost *l = r->body;

	fprintf(fp, " time=%" PRIu64 " source=%s pid=%u count=%" PRIu64, l->time,
		xpu_lost_source__name(l->source), l->pid, l->count);
	return print__done(fp);
}

static int print__ksym(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_ksym *k = r->body;

	fprintf(fp, " %#" PRIx64 " size=%" PRIu64 " ", k->addr, k->size);
	print__tail(fp, r);
	return print__done(fp);
}

static int print__perf_map(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_perf_map *p = r->body;

	fprintf(fp, " pid=%u %#" PRIx64 " size=%" PRIu64 " ", p->pid, p->start, p->size);
	print__tail(fp, r);
	return print__done(fp);
}

static int print__string(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_string *s = r->body;

	fprintf(fp, " pid=%u id=%u ", s->pid, s->id);
	print__tail(fp, r);
	return print__done(fp);
}

static int print__finish(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_finish *f = r->body;

	fprintf(fp, " time=%" PRIu64 " samples=%" PRIu64 " corr=%" PRIu64 " gpu=%" PRIu64
		" lost=%" PRIu64, f->time, f->nr_samples, f->nr_corr, f->nr_gpu, f->nr_lost);
	return print__done(fp);
}

static int print__offcpu(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_offcpu *o = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " off=%" PRIu64 " pid=%u tid=%u cpu=%u"
		" state=%#x flags=%#x syscall=%d", o->start, o->end, o->off_ns, o->pid, o->tid,
		o->cpu, o->state, o->flags, o->syscall);
	return xpu_stack__fprintf(fp, &o->stack, r->body_size - offsetof(struct xpu_offcpu, stack));
}

static int print__py_stack(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_py_stack *p = r->body;
	const uint8_t *f = (const uint8_t *)r->body + sizeof(*p);
	size_t room = (r->body_size - sizeof(*p)) / sizeof(struct xpu_py_frame);

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u frames=%u version=%#x flags=%#x", p->time,
		p->pid, p->tid, p->nr_frames, p->version, p->flags);
	if (p->nr_frames > room) {
		fprintf(fp, " frames=<malformed>");
		return print__done(fp);
	}
	for (unsigned i = 0; i < p->nr_frames && i < 4; i++) {
		struct xpu_py_frame fr;

		memcpy(&fr, f + i * sizeof(fr), sizeof(fr));
		fprintf(fp, " f%u=%#" PRIx64 "/%04x+%u%s", i, fr.code, fr.code_key, fr.offset,
			fr.flags & XPU_PY_FRAME_ENTRY ? "e" : "");
	}
	return print__done(fp);
}

static int print__py_code(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_py_code *c = r->body;
	const char *q = (const char *)r->body + sizeof(*c);
	size_t room = r->body_size - sizeof(*c);

	fprintf(fp, " pid=%u addr=%#" PRIx64 "/%04x version=%#x firstlineno=%d linetable=%u",
		c->pid, c->addr, c->code_key, c->version, c->firstlineno, c->linetable_size);
	if ((size_t)c->qualname_size + c->filename_size + c->linetable_size > room ||
	    !c->qualname_size || !c->filename_size || q[c->qualname_size - 1] ||
	    q[c->qualname_size + c->filename_size - 1]) {
		fprintf(fp, " names=<malformed>");
	} else {
		fputc(' ', fp);
		print__text(fp, q, c->qualname_size);
		fputc(' ', fp);
		print__text(fp, q + c->qualname_size, c->filename_size);
	}
	return print__done(fp);
}

static int print__gpu_kernel(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_kernel *k = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
		" name_id=%u dev=%u stream=%u graph=%u", k->start, k->end, k->pid,
		k->correlation_id, k->name_id, k->device, k->stream, k->graph_id);
	return print__done(fp);
}

static int print__gpu_memcpy(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_memcpy *m = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
		" bytes=%" PRIu64 " kind=%u", m->start, m->end, m->pid, m->correlation_id,
		m->bytes, m->copy_kind);
	return print__done(fp);
}

static int print__gpu_memset(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_memset *m = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64
		" bytes=%" PRIu64, m->start, m->end, m->pid, m->correlation_id, m->bytes);
	return print__done(fp);
}

static int print__gpu_sync(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_sync *y = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u corr=%" PRIu64 " type=%u",
		y->start, y->end, y->pid, y->correlation_id, y->type);
	return print__done(fp);
}

static int print__gpu_api(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_api *a = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u tid=%u corr=%" PRIu64
		" domain=%u cbid=%u ret=%d", a->start, a->end, a->pid, a->tid,
		a->correlation_id, a->domain, a->cbid, a->ret);
	return print__done(fp);
}

static int print__gpu_corr(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_corr *c = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u corr=%" PRIu64 " domain=%u cbid=%u",
		c->time, c->pid, c->tid, c->correlation_id, c->domain, c->cbid);
	return xpu_stack__fprintf(fp, &c->stack,
				  r->body_size - offsetof(struct xpu_gpu_corr, stack));
}

static int print__gpu_device(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_device *d = r->body;

	fprintf(fp, " pid=%u id=%u sm=%u cc=%u.%u mem=%" PRIu64 " ", d->pid, d->id,
		d->sm_count, d->cc_major, d->cc_minor, d->global_memory);
	print__tail(fp, r);
	return print__done(fp);
}

static int print__gpu_nvtx(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_nvtx *n = r->body;

	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " range=%" PRIu64 " pid=%u tid=%u"
		" end_tid=%u domain_id=%u message_id=%u flags=%#x depth=%u", n->start, n->end,
		n->range_id, n->pid, n->tid, n->end_tid, n->domain_id, n->message_id, n->flags,
		n->depth);
	return print__done(fp);
}

static int print__gpu_graph_node(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_graph_node *n = r->body;

	fprintf(fp, " time=%" PRIu64 " node=%" PRIu64 " orig_node=%" PRIu64 " api_corr=%" PRIu64
		" pid=%u tid=%u graph=%u orig_graph=%u type=%u flags=%#x", n->time, n->node_id,
		n->orig_node_id, n->api_correlation_id, n->pid, n->tid, n->graph_id,
		n->orig_graph_id, n->node_type, n->flags);
	return print__done(fp);
}

static int print__gpu_pc_sample(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_pc_stall *st;
	struct xpu_gpu_pc_sample s;

	if (xpu_pc_sample__stalls(r, &s, &st)) {
		fprintf(fp, " stalls=<malformed>");
		return print__done(fp);
	}
	fprintf(fp, " start=%" PRIu64 " end=%" PRIu64 " pid=%u name_id=%u crc=%#" PRIx64
		" pc=%#" PRIx64 " corr=%u device=%u context=%u", s.start, s.end, s.pid, s.name_id,
		s.cubin_crc, s.pc_offset, s.correlation_id, s.device, s.context);
	for (unsigned i = 0; i < s.nr_stalls; i++)
		fprintf(fp, " s%u=%u", st[i].reason, st[i].samples);
	return print__done(fp);
}

static int print__gpu_stall_reason(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_gpu_stall_reason *s = r->body;

	fprintf(fp, " pid=%u device=%u index=%u ", s->pid, s->device, s->index);
	print__tail(fp, r);
	return print__done(fp);
}

static int print__gpu_cubin(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_cubin c;
	const void *data;

	if (xpu_cubin__data(r, &c, &data)) {
		fprintf(fp, " cubin=<malformed>");
		return print__done(fp);
	}
	fprintf(fp, " pid=%u crc=%#" PRIx64 " size=%" PRIu64 "%s", c.pid, c.crc, c.size,
		(c.flags & XPU_CUBIN_SKIPPED) ? " skipped" :
		(c.flags & XPU_CUBIN_REDUCED) ? " reduced" : "");
	return print__done(fp);
}

static int print__gpu_pc_range(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_pc_range g;

	memcpy(&g, r->body, sizeof(g));
	fprintf(fp, " pid=%u device=%u context=%u start=%" PRIu64 " end=%" PRIu64, g.pid, g.device,
		g.context, g.start, g.end);
	return print__done(fp);
}

static int print__gpu_memory(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_memory m;

	memcpy(&m, r->body, sizeof(m));
	fprintf(fp, " time=%" PRIu64 " pid=%u device=%u context=%u stream=%u op=%u kind=%u"
		" address=0x%" PRIx64 " bytes=%" PRIu64 " corr=%" PRIu64 " pool=0x%" PRIx64
		" pool_type=%u flags=0x%x", m.time, m.pid, m.device, m.context, m.stream, m.op,
		m.memory_kind, m.address, m.bytes, m.correlation_id, m.pool_address, m.pool_type,
		m.flags);
	return print__done(fp);
}

static int print__gpu_mempool(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_mempool m;

	memcpy(&m, r->body, sizeof(m));
	fprintf(fp, " time=%" PRIu64 " pid=%u device=%u op=%u type=%u address=0x%" PRIx64
		" size=%" PRIu64 " utilized=%" PRIu64 " threshold=%" PRIu64 " corr=%" PRIu64,
		m.time, m.pid, m.device, m.op, m.pool_type, m.address, m.size, m.utilized,
		m.release_threshold, m.correlation_id);
	return print__done(fp);
}

static int print__gpu_block(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_block b;

	memcpy(&b, r->body, sizeof(b));
	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u op=%u source=%u device=%d ptr=0x%" PRIx64
		" size=%" PRIu64 " stream=0x%" PRIx64 " stack=%" PRIu64, b.time, b.pid, b.tid, b.op,
		b.source, b.device, b.ptr, b.size, b.stream, b.stack_id);
	return print__done(fp);
}

static int print__gpu_mem_state(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_mem_state m;

	memcpy(&m, r->body, sizeof(m));
	fprintf(fp, " time=%" PRIu64 " pid=%u device=%u free=%" PRIu64 " total=%" PRIu64
		" used_before=%" PRIu64 " flags=0x%x", m.time, m.pid, m.device, m.free, m.total,
		m.used_before, m.flags);
	return print__done(fp);
}

static int print__gpu_oom(FILE *fp, const struct xpu_record *r)
{
	struct xpu_gpu_oom o;

	memcpy(&o, r->body, sizeof(o));
	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u device=%d source=%u bytes=%" PRIu64
		" corr=%" PRIu64 " domain=%u cbid=%u ret=%d", o.time, o.pid, o.tid, o.device,
		o.source, o.bytes, o.correlation_id, o.domain, o.cbid, o.ret);
	return print__done(fp);
}

static int print__proc_env(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_proc_env *e = r->body;
	const char *key, *val;
	size_t pos = 0;

	fprintf(fp, " time=%" PRIu64 " pid=%u%s", e->time, e->pid,
		(e->flags & XPU_PROC_ENV_TRUNCATED) ? " truncated" : "");
	while (xpu_proc_env__next(r, &pos, &key, &val))
		print__pair(fp, key, val);
	return print__done(fp);
}

static int print__autograd(FILE *fp, const struct xpu_record *r)
{
	const struct xpu_autograd *a = r->body;

	fprintf(fp, " time=%" PRIu64 " pid=%u tid=%u kind=%s seq=%" PRIu64 " node=%#" PRIx64,
		a->time, a->pid, a->tid, a->kind == XPU_AUTOGRAD_NODE ? "node" :
		a->kind == XPU_AUTOGRAD_EVAL ? "eval" : "?", a->seq, a->node);
	return print__done(fp);
}

/* --dump's printer of each type: a row for every row of the record-type
 * table (tests/unit/test_format_spec.c checks that). */
static xpu_record_print_fn *const printers[XPU_REC_MAX] = {
	[XPU_REC_META]		= print__meta,
	[XPU_REC_COMM]		= print__comm,
	[XPU_REC_FORK]		= print__fork,
	[XPU_REC_EXIT]		= print__exit,
	[XPU_REC_MMAP]		= print__mmap,
	[XPU_REC_SAMPLE]	= print__sample,
	[XPU_REC_LOST]		= print__lost,
	[XPU_REC_KSYM]		= print__ksym,
	[XPU_REC_PERF_MAP]	= print__perf_map,
	[XPU_REC_STRING]	= print__string,
	[XPU_REC_FINISH]	= print__finish,
	[XPU_REC_OFFCPU]	= print__offcpu,
	[XPU_REC_PY_STACK]	= print__py_stack,
	[XPU_REC_PY_CODE]	= print__py_code,
	[XPU_REC_PROC_ENV]	= print__proc_env,
	[XPU_REC_AUTOGRAD]	= print__autograd,
	[XPU_REC_GPU_KERNEL]	= print__gpu_kernel,
	[XPU_REC_GPU_MEMCPY]	= print__gpu_memcpy,
	[XPU_REC_GPU_MEMSET]	= print__gpu_memset,
	[XPU_REC_GPU_SYNC]	= print__gpu_sync,
	[XPU_REC_GPU_API]	= print__gpu_api,
	[XPU_REC_GPU_CORR]	= print__gpu_corr,
	[XPU_REC_GPU_DEVICE]	= print__gpu_device,
	[XPU_REC_GPU_NVTX]	= print__gpu_nvtx,
	[XPU_REC_GPU_GRAPH_NODE] = print__gpu_graph_node,
	[XPU_REC_GPU_PC_SAMPLE]	= print__gpu_pc_sample,
	[XPU_REC_GPU_STALL_REASON] = print__gpu_stall_reason,
	[XPU_REC_GPU_CUBIN]	= print__gpu_cubin,
	[XPU_REC_GPU_PC_RANGE]	= print__gpu_pc_range,
	[XPU_REC_GPU_MEMORY]	= print__gpu_memory,
	[XPU_REC_GPU_MEMPOOL]	= print__gpu_mempool,
	[XPU_REC_GPU_BLOCK]	= print__gpu_block,
	[XPU_REC_GPU_MEM_STATE]	= print__gpu_mem_state,
	[XPU_REC_GPU_OOM]	= print__gpu_oom,
};

xpu_record_print_fn *xpu_record__printer(uint16_t type)
{
	return xpu_rectype__get(type) ? printers[type] : NULL;
}

int xpu_record__fprintf(FILE *fp, const struct xpu_record *rec)
{
	xpu_record_print_fn *print = xpu_record__printer(rec->type);

	if (!print || rec->body_size < xpu_rectype__get(rec->type)->min_size)
		return print__done(fp);
	return print(fp, rec);
}

int xpu_stack__fprintf(FILE *fp, const void *stack, size_t avail)
{
	struct xpu_stack_view v;

	if (xpu_stack__parse(stack, avail, &v)) {
		fprintf(fp, " stack=<malformed>");
		return print__done(fp);
	}
	fprintf(fp, " kips=%u uips=%u regs=%u stack=%u flags=%#x", v.hdr->nr_kernel_ips,
		v.hdr->nr_user_ips, v.hdr->nr_regs, v.hdr->stack_size, v.hdr->flags);
	if (v.hdr->nr_regs > XPU_X86_RIP && v.hdr->arch == XPU_ARCH_X86_64)
		fprintf(fp, " ip=%#" PRIx64 " sp=%#" PRIx64, v.regs[XPU_X86_RIP], v.regs[XPU_X86_RSP]);
	for (unsigned i = 0; i < v.hdr->nr_kernel_ips && i < 4; i++)
		fprintf(fp, " k%u=%#" PRIx64, i, v.kernel_ips[i]);
	for (unsigned i = 0; i < v.hdr->nr_user_ips && i < 4; i++)
		fprintf(fp, " u%u=%#" PRIx64, i, v.user_ips[i]);
	return print__done(fp);
}

const char *xpu_lost_source__name(uint32_t source)
{
	switch (source) {
	case XPU_LOST_SAMPLES:		return "samples";
	case XPU_LOST_CORR:		return "correlation";
	case XPU_LOST_SIDEBAND:		return "sideband";
	case XPU_LOST_CUPTI:		return "cupti";
	case XPU_LOST_GPU_CHANNEL:	return "gpu-channel";
	case XPU_LOST_STACK_READ:	return "stack-read";
	case XPU_LOST_OUTPUT:		return "output";
	case XPU_LOST_OFFCPU:		return "off-cpu";
	case XPU_LOST_NVTX:		return "nvtx";
	case XPU_LOST_PYTHON:		return "python";
	case XPU_LOST_PC_SAMPLES:	return "pc-samples";
	case XPU_LOST_GPU_UNCONNECTED:	return "gpu-unconnected";
	case XPU_LOST_GPU_BLOCK:	return "gpu-blocks";
	}
	return "other";
}
