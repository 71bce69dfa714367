// SPDX-License-Identifier: MIT
/* Stack words no unwinder reads (see stack_prune.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "record_types.h"
#include "stack_prune.h"

/* Slack around the copied stack: frame pointers and saved stack pointers
 * may point a little past the copy (a copy cut at its size limit) or below
 * the sampled stack pointer (the red zone). */
#define PRUNE_BELOW_SP	(64u << 10)
#define PRUNE_ABOVE	(256u << 10)

struct prune_range {
	uint64_t start, end;
};

/* Parent links followed at most this far: a process's code is its own
 * mappings' and its ancestors' (a forked child that never execs runs its
 * parent's). */
#define PRUNE_MAX_DEPTH	64

struct prune_proc {
	uint32_t pid;
	uint32_t ppid;			/* the parent at its FORK, 0: none known */
	bool dirty;			/* ranges added since the last sort */
	struct prune_range *r;
	size_t n, cap;
};

struct xpu_prune {
	pthread_mutex_t lock;
	struct prune_proc *procs;
	size_t n, cap;
	size_t last;			/* the process looked up last */
	struct xpu_prune_reads reads;	/* .reads NULL: none */
	uint8_t *read;			/* its bitmap, read_cap bytes */
	size_t read_cap;
	uint64_t unwound;		/* records written as their frames */
};

struct xpu_prune *xpu_prune__new(void)
{
	struct xpu_prune *p = calloc(1, sizeof(*p));

	if (p)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

void xpu_prune__free(struct xpu_prune *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->procs[i].r);
	free(p->procs);
	free(p->read);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static struct prune_proc *prune__proc(struct xpu_prune *p, uint32_t pid, bool create)
{
	struct prune_proc *n;

	if (p->last < p->n && p->procs[p->last].pid == pid)
		return &p->procs[p->last];
	for (size_t i = 0; i < p->n; i++) {
		if (p->procs[i].pid == pid) {
			p->last = i;
			return &p->procs[i];
		}
	}
	if (!create)
		return NULL;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;

		n = realloc(p->procs, cap * sizeof(*n));
		if (!n)
			return NULL;
		p->procs = n;
		p->cap = cap;
	}
	n = &p->procs[p->n];
	*n = (struct prune_proc){ .pid = pid };
	p->last = p->n++;
	return n;
}

static void prune__add(struct prune_proc *pp, uint64_t start, uint64_t end)
{
	if (pp->n == pp->cap) {
		size_t cap = pp->cap ? 2 * pp->cap : 16;
		struct prune_range *r = realloc(pp->r, cap * sizeof(*r));

		if (!r)
			return;
		pp->r = r;
		pp->cap = cap;
	}
	pp->r[pp->n++] = (struct prune_range){ start, end };
	pp->dirty = true;
}

static int prune__cmp(const void *a, const void *b)
{
	const struct prune_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorted, overlaps merged: one binary search per word. */
static void prune__sort(struct prune_proc *pp)
{
	size_t k = 0;

	qsort(pp->r, pp->n, sizeof(*pp->r), prune__cmp);
	for (size_t i = 0; i < pp->n; i++) {
		if (k && pp->r[i].start <= pp->r[k - 1].end) {
			if (pp->r[i].end > pp->r[k - 1].end)
				pp->r[k - 1].end = pp->r[i].end;
		} else {
			pp->r[k++] = pp->r[i];
		}
	}
	pp->n = k;
	pp->dirty = false;
}

/* The process and its known ancestors, nearest first (lock held): at most
 * PRUNE_MAX_DEPTH, none twice. The pointers hold until a process is added. */
static size_t prune__chain(struct xpu_prune *p, uint32_t pid,
			   struct prune_proc *chain[PRUNE_MAX_DEPTH])
{
	size_t n = 0;

	while (pid && n < PRUNE_MAX_DEPTH) {
		struct prune_proc *pp = prune__proc(p, pid, false);
		size_t k;

		if (!pp)
			break;
		for (k = 0; k < n && chain[k] != pp; k++)
			;
		if (k < n)		/* a loop of reused pids */
			break;
		chain[n++] = pp;
		pid = pp->ppid;
	}
	return n;
}

/* What the address rule needs: the fixed part of MMAP and FORK records. */
static void prune__note_rule(struct xpu_prune *p, uint16_t type, const void *body, size_t len)
{
	if (type == XPU_REC_MMAP && len >= sizeof(struct xpu_mmap)) {
		struct xpu_mmap m;
		struct prune_proc *pp;

		memcpy(&m, body, sizeof(m));
		if (!(m.prot & 4) || m.start + m.len < m.start)	/* PROT_EXEC */
			return;
		pthread_mutex_lock(&p->lock);
		pp = prune__proc(p, m.pid, true);
		if (pp)
			prune__add(pp, m.start, m.start + m.len);
		pthread_mutex_unlock(&p->lock);
	} else if (type == XPU_REC_FORK && len >= sizeof(struct xpu_fork)) {
		struct xpu_fork f;
		struct prune_proc *child;

		memcpy(&f, body, sizeof(f));
		if (f.pid == f.ppid)	/* a thread: the same process */
			return;
		pthread_mutex_lock(&p->lock);
		child = prune__proc(p, f.pid, true);
		if (child && child->ppid && child->ppid != f.ppid) {
			/* a reused pid: keep what the old process could run */
			struct prune_proc *chain[PRUNE_MAX_DEPTH];
			size_t n = prune__chain(p, f.pid, chain);

			for (size_t k = 1; k < n; k++)
				for (size_t i = 0; i < chain[k]->n; i++)
					prune__add(chain[0], chain[k]->r[i].start, chain[k]->r[i].end);
			child = chain[0];
		}
		/* A link, not a copy: the parent's own FORK and MMAP records may
		 * come after this one (the side-band ring is per CPU, so a
		 * grandchild's FORK can precede its parent's), and a link sees
		 * them whenever they come. */
		if (child)
			child->ppid = f.ppid;
		pthread_mutex_unlock(&p->lock);
	}
}

void xpu_prune__set_reads(struct xpu_prune *p, const struct xpu_prune_reads *r)
{
	pthread_mutex_lock(&p->lock);
	p->reads = *r;
	pthread_mutex_unlock(&p->lock);
}

bool xpu_prune__has_reads(struct xpu_prune *p)
{
	bool has;

	pthread_mutex_lock(&p->lock);
	has = p->reads.reads != NULL;
	pthread_mutex_unlock(&p->lock);
	return has;
}

void xpu_prune__notev(struct xpu_prune *p, uint16_t type, const struct iovec *iov, int n)
{
	if (n <= 0)
		return;
	if (p->reads.note && (type == XPU_REC_MMAP || type == XPU_REC_FORK ||
			      type == XPU_REC_COMM || type == XPU_REC_EXIT)) {
		const void *body = iov[0].iov_base;
		size_t len = iov[0].iov_len;
		uint8_t *flat = NULL;

		if (n > 1) {	/* an MMAP's path: the record in one piece */
			len = 0;
			for (int i = 0; i < n; i++)
				len += iov[i].iov_len;
			flat = malloc(len);
			if (flat) {
				len = 0;
				for (int i = 0; i < n; i++) {
					memcpy(flat + len, iov[i].iov_base, iov[i].iov_len);
					len += iov[i].iov_len;
				}
				body = flat;
			} else {
				len = iov[0].iov_len;
			}
		}
		pthread_mutex_lock(&p->lock);
		p->reads.note(p->reads.arg, type, body, len);
		pthread_mutex_unlock(&p->lock);
		free(flat);
	}
	prune__note_rule(p, type, iov[0].iov_base, iov[0].iov_len);
}

void xpu_prune__note(struct xpu_prune *p, uint16_t type, const void *body, size_t len)
{
	struct iovec iov = { .iov_base = (void *)body, .iov_len = len };

	xpu_prune__notev(p, type, &iov, 1);
}

static bool prune__is_code(struct prune_proc *pp, uint64_t w)
{
	size_t lo = 0, hi;

	if (!pp || !pp->n)
		return false;
	if (pp->dirty)
		prune__sort(pp);
	hi = pp->n;
	while (lo < hi) {	/* the last range starting at or below w */
		size_t mid = (lo + hi) / 2;

		if (pp->r[mid].start <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && w < pp->r[lo - 1].end;
}

/*
 * With the reads hook's frames: body becomes the frames in user_ips, no
 * regs or stack (XPU_STACK_UNWOUND). Only where they fit in place of the
 * regs and stack of a record that has no user_ips; *len: the new size.
 */
static bool prune__to_frames(struct xpu_prune *p, const struct xpu_rectype *t, uint8_t *body,
			     size_t *len, struct xpu_stack *st)
{
	const uint64_t *pcs;
	unsigned n = p->reads.frames(p->reads.arg, &pcs);
	size_t at = t->stack_off + sizeof(*st) + 8 * (size_t)st->nr_kernel_ips;
	size_t words = 8 * (size_t)st->nr_regs + st->stack_size;

	if (!n || n > XPU_UNWOUND_MAX || st->nr_user_ips || *len < at + words ||
	    8 * (size_t)n > words || (at + 8 * (size_t)n) % XPU_RECORD_ALIGN)
		return false;
	memcpy(body + at, pcs, 8 * (size_t)n);	/* where the regs began */
	st->nr_user_ips = (uint16_t)n;
	st->nr_regs = 0;
	st->stack_size = 0;
	st->flags |= XPU_STACK_UNWOUND;
	*len = at + 8 * (size_t)n;
	return true;
}

size_t xpu_prune__stack(struct xpu_prune *p, uint16_t type, void *body_, size_t *lenp, bool apply)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);
	uint8_t *body = body_;
	struct xpu_stack_view v;
	struct prune_proc *chain[PRUNE_MAX_DEPTH];
	struct xpu_stack st;
	uint64_t sp, lo, hi, nr_words;
	uint8_t *words;
	uint32_t pid;
	size_t zeroed = 0, nr_chain;
	const uint8_t *read;
	uint32_t reg_read = 0;
	size_t len = *lenp;
	bool unwound = false;

	if (!t || !(t->flags & XPU_RECF_STACK) || len < t->stack_off ||
	    xpu_stack__parse(body + t->stack_off, len - t->stack_off, &v))
		return 0;
	memcpy(&st, v.hdr, sizeof(st));
	/* without the stack pointer nothing tells stack addresses: keep all */
	if (st.arch != XPU_ARCH_X86_64 || st.nr_regs <= XPU_X86_RSP || st.nr_regs <= XPU_X86_RIP)
		return 0;
	/* pid is the second field of each stack record's fixed part */
	memcpy(&pid, body + (type == XPU_REC_OFFCPU ? offsetof(struct xpu_offcpu, pid)
						   : offsetof(struct xpu_sample, pid)), sizeof(pid));
	words = (uint8_t *)v.regs;
	memcpy(&sp, words + 8 * XPU_X86_RSP, sizeof(sp));
	lo = sp > PRUNE_BELOW_SP ? sp - PRUNE_BELOW_SP : 0;
	hi = sp + st.stack_size + PRUNE_ABOVE;
	if (hi < sp)
		hi = UINT64_MAX;
	nr_words = st.nr_regs + st.stack_size / 8;
	pthread_mutex_lock(&p->lock);
	nr_chain = prune__chain(p, pid, chain);
	/* the words the CFI unwinding of this record reads, when known */
	read = NULL;
	if (apply && p->reads.reads && st.stack_size >= 8) {
		uint64_t time;

		if (p->read_cap < st.stack_size / 8) {
			free(p->read);
			p->read_cap = st.stack_size / 8;
			p->read = malloc(p->read_cap);
			if (!p->read)
				p->read_cap = 0;
		}
		memcpy(&time, body, sizeof(time));	/* SAMPLE, GPU_CORR: time; OFFCPU: start */
		if (p->read) {
			memset(p->read, 0, st.stack_size / 8);
			if (p->reads.reads(p->reads.arg, pid, time, v.regs, st.nr_regs, v.stack,
					   st.stack_size, p->read, &reg_read))
				read = p->read;
		}
		if (read && p->reads.frames)
			unwound = prune__to_frames(p, t, body, lenp, &st);
		p->unwound += unwound;
	}
	for (uint64_t i = 0; i < nr_words && !unwound; i++) {
		uint64_t w;
		size_t k = 0;

		if (i == XPU_X86_RSP || i == XPU_X86_RIP)
			continue;
		memcpy(&w, words + 8 * i, sizeof(w));
		if (!w)
			continue;
		if (read && (i >= st.nr_regs ? !read[i - st.nr_regs]
					     : i >= 32 || !(reg_read & (1u << i))))
			goto zero;
		if (w >= lo && w < hi)
			continue;
		while (k < nr_chain && !prune__is_code(chain[k], w))
			k++;
		if (k < nr_chain)
			continue;
zero:
		zeroed++;
		if (apply)
			memset(words + 8 * i, 0, sizeof(w));
	}
	pthread_mutex_unlock(&p->lock);
	if (apply) {
		st.flags |= XPU_STACK_PRUNED | (read ? XPU_STACK_PRUNED_CFI : 0);
		memcpy(body + t->stack_off, &st, sizeof(st));
	}
	return zeroed;
}

uint64_t xpu_prune__unwound(struct xpu_prune *p)
{
	uint64_t n;

	pthread_mutex_lock(&p->lock);
	n = p->unwound;
	pthread_mutex_unlock(&p->lock);
	return n;
}
