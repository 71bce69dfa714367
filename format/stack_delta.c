// SPDX-License-Identifier: MIT
/* STACK_DELTA coding (see stack_delta.h and the spec, "STACK_DELTA"). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "record_types.h"
#include "stack_delta.h"

/* Threads remembered per chunk: a thread whose slot was taken by another
 * is written in full once more, nothing worse. */
#define DELTA_SLOTS	128
#define DELTA_PROBE	4
/* Each thread's last few stack records: the one sharing the most words
 * becomes the reference (a program going back and forth between a few
 * call paths, like a compiler's passes, finds its earlier stack). Stacks
 * above DELTA_BIG bytes keep one, to bound memory. */
#define DELTA_DEPTH	8
#define DELTA_BIG	(32u << 10)

struct delta_ref {
	uint32_t idx;			/* its record number in the chunk */
	uint32_t nr_regs;
	uint64_t sp;
	bool has_sp;
	uint64_t *words;		/* regs, then stack */
	size_t nr_words, cap;
};

struct delta_thread {
	uint64_t gen;			/* the chunk it belongs to; 0: never used */
	uint32_t tid;
	unsigned int n, next;		/* refs in use; where the next one goes */
	struct delta_ref ref[DELTA_DEPTH];
};

struct xpu_delta_enc {
	uint64_t gen;
	struct delta_thread th[DELTA_SLOTS];
	uint8_t *ops;			/* scratch: the ops, then the literals */
	size_t ops_cap;
	uint64_t *lits;
	size_t lits_cap;
};

/* Where a stack record keeps its thread id: the key of its reference. */
static bool delta__tid(uint16_t type, const uint8_t *body, size_t len, uint32_t *tid)
{
	size_t off;

	switch (type) {
	case XPU_REC_SAMPLE:
		off = offsetof(struct xpu_sample, tid);
		break;
	case XPU_REC_OFFCPU:
		off = offsetof(struct xpu_offcpu, tid);
		break;
	case XPU_REC_GPU_CORR:
		off = offsetof(struct xpu_gpu_corr, tid);
		break;
	default:
		return false;
	}
	if (len < off + sizeof(*tid))
		return false;
	memcpy(tid, body + off, sizeof(*tid));
	return true;
}

/* The sampled stack pointer, to pair stack words by address. */
static bool delta__sp(const struct xpu_stack *st, const uint8_t *regs, uint64_t *sp)
{
	if (st->arch != XPU_ARCH_X86_64 || st->nr_regs <= XPU_X86_RSP)
		return false;
	memcpy(sp, regs + 8 * XPU_X86_RSP, sizeof(*sp));
	return true;
}

struct xpu_delta_enc *xpu_delta_enc__new(void)
{
	struct xpu_delta_enc *e = calloc(1, sizeof(*e));

	if (e)
		e->gen = 1;
	return e;
}

void xpu_delta_enc__free(struct xpu_delta_enc *e)
{
	if (!e)
		return;
	for (int i = 0; i < DELTA_SLOTS; i++)
		for (int k = 0; k < DELTA_DEPTH; k++)
			free(e->th[i].ref[k].words);
	free(e->ops);
	free(e->lits);
	free(e);
}

void xpu_delta_enc__reset(struct xpu_delta_enc *e)
{
	e->gen++;
}

/* The thread's slot, emptied when it held another thread or chunk. */
static struct delta_thread *delta__thread(struct xpu_delta_enc *e, uint32_t tid)
{
	unsigned int h = (tid * 2654435761u) >> 25;	/* 7 bits: DELTA_SLOTS */
	struct delta_thread *free_slot = NULL, *t;

	for (int i = 0; i < DELTA_PROBE; i++) {
		t = &e->th[(h + i) % DELTA_SLOTS];
		if (t->gen == e->gen && t->tid == tid)
			return t;
		if (!free_slot && t->gen != e->gen)
			free_slot = t;
	}
	t = free_slot ? free_slot : &e->th[h % DELTA_SLOTS];
	t->gen = e->gen;
	t->tid = tid;
	t->n = t->next = 0;
	return t;
}

static bool delta__grow(void **p, size_t *cap, size_t need)
{
	void *n;

	if (need <= *cap)
		return true;
	n = realloc(*p, need);
	if (!n)
		return false;
	*p = n;
	*cap = need;
	return true;
}

static size_t delta__put_varint(uint8_t *p, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* The reference's word paired with word i of the record (nr_regs regs then
 * the stack), or false where the reference has none. The one pairing rule
 * of the encoder and the decoder. */
static inline bool delta__ref_word(const uint8_t *ref, uint32_t ref_regs, uint64_t ref_words,
				   uint32_t nr_regs, int32_t shift, uint64_t i, uint64_t *w)
{
	int64_t j;

	if (i < nr_regs) {
		if (i >= ref_regs)
			return false;
		j = (int64_t)i;
	} else {
		j = (int64_t)(i - nr_regs) + shift;
		if (j < 0 || (uint64_t)j >= ref_words - ref_regs)
			return false;
		j += ref_regs;
	}
	if (ref)
		memcpy(w, ref + 8 * (uint64_t)j, sizeof(*w));
	else			/* only whether it has one (stackless decoding) */
		*w = 0;
	return true;
}

/* How many of the record's words (nr_regs regs, then the stack) equal
 * their pair in c: delta__ref_word's pairing, by ranges. */
static uint64_t delta__same(const struct delta_ref *c, const uint8_t *words, uint32_t nr_regs,
			    uint64_t nr_words, int32_t shift)
{
	const uint8_t *ref = (const uint8_t *)c->words;
	uint64_t same = 0, n = nr_words - nr_regs, rn = c->nr_words - c->nr_regs;
	int64_t k0 = shift < 0 ? -(int64_t)shift : 0, k1 = (int64_t)rn - shift;

	for (uint32_t i = 0; i < nr_regs && i < c->nr_regs; i++)
		same += !memcmp(words + 8 * i, ref + 8 * i, 8);
	if (k1 > (int64_t)n)
		k1 = (int64_t)n;
	words += 8 * (uint64_t)nr_regs;
	for (int64_t k = k0; k < k1; k++) {
		int64_t j = (int64_t)c->nr_regs + shift + k;	/* >= nr_regs: k >= -shift */
		uint64_t a, b;

		memcpy(&a, words + 8 * k, 8);
		memcpy(&b, ref + 8 * j, 8);
		same += a == b;
	}
	return same;
}

/* Codes words against r into dst; 0 when it does not fit in cap. */
static size_t delta__code(struct xpu_delta_enc *e, const struct delta_ref *r, uint32_t idx,
			  uint16_t type, uint16_t flags, const uint8_t *body, size_t prefix,
			  uint32_t nr_regs, const uint8_t *words, uint64_t nr_words, int32_t shift,
			  uint8_t *dst, size_t cap)
{
	struct xpu_stack_delta dh = { .type = type, .flags = flags, .back = idx - r->idx,
				      .shift = shift };
	struct xpu_record_header rh = { .type = XPU_REC_STACK_DELTA };
	const uint8_t *ref = (const uint8_t *)r->words;
	size_t ops = 0, nl = 0, size, ops_pad;
	uint64_t i = 0;

	/* at most two counts of 5 bytes per word, and one literal per word */
	if (!delta__grow((void **)&e->ops, &e->ops_cap, 10 * nr_words + 10) ||
	    !delta__grow((void **)&e->lits, &e->lits_cap, 8 * nr_words + 8))
		return 0;
	while (i < nr_words) {
		uint64_t start = i, rw, w;

		while (i < nr_words &&
		       delta__ref_word(ref, r->nr_regs, r->nr_words, nr_regs, shift, i, &rw) &&
		       (memcpy(&w, words + 8 * i, 8), w == rw))
			i++;
		ops += delta__put_varint(e->ops + ops, (uint32_t)(i - start));
		if (i == nr_words)
			break;
		start = i;
		while (i < nr_words) {
			memcpy(&w, words + 8 * i, 8);
			if (delta__ref_word(ref, r->nr_regs, r->nr_words, nr_regs, shift, i, &rw) &&
			    w == rw)
				break;
			e->lits[nl++] = w;
			i++;
		}
		ops += delta__put_varint(e->ops + ops, (uint32_t)(i - start));
	}
	ops_pad = (ops + 7) & ~(size_t)7;
	size = sizeof(rh) + sizeof(dh) + prefix + ops_pad + 8 * nl;
	if (size >= cap)
		return 0;
	rh.size = (uint32_t)size;
	dh.ops_size = (uint32_t)ops;
	memcpy(dst, &rh, sizeof(rh));
	dst += sizeof(rh);
	memcpy(dst, &dh, sizeof(dh));
	dst += sizeof(dh);
	memcpy(dst, body, prefix);
	dst += prefix;
	memcpy(dst, e->ops, ops);
	memset(dst + ops, 0, ops_pad - ops);
	dst += ops_pad;
	memcpy(dst, e->lits, 8 * nl);
	return size;
}

size_t xpu_delta__encode(struct xpu_delta_enc *e, uint32_t idx, uint16_t type, uint16_t flags,
			 const void *body_, size_t len, void *dst, size_t cap)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);
	const uint8_t *body = body_;
	struct delta_ref *r = NULL, *slot;
	struct delta_thread *th;
	struct xpu_stack st;
	size_t prefix, size = 0;
	uint64_t nr_words, sp = 0, best = 0;
	bool has_sp;
	uint32_t tid;
	int32_t shift = 0;

	if (!t || !(t->flags & XPU_RECF_STACK) || !delta__tid(type, body, len, &tid) ||
	    len < t->stack_off + sizeof(st))
		return 0;
	memcpy(&st, body + t->stack_off, sizeof(st));
	prefix = t->stack_off + sizeof(st) + 8 * ((size_t)st.nr_kernel_ips + st.nr_user_ips);
	/* only records that are exactly their parts: the decoder rebuilds no more */
	if (st.stack_size % 8 || prefix % 8 ||
	    len != prefix + 8 * (size_t)st.nr_regs + st.stack_size)
		return 0;
	nr_words = st.nr_regs + (uint64_t)st.stack_size / 8;
	has_sp = delta__sp(&st, body + prefix, &sp);
	th = delta__thread(e, tid);
	/* newest first: when it shares nearly every word, it is the one */
	for (unsigned int j = 0; j < th->n; j++) {
		struct delta_ref *c = &th->ref[(th->next + DELTA_DEPTH - 1 - j) % DELTA_DEPTH];
		int64_t d = (int64_t)(sp - c->sp);
		uint64_t same;
		int32_t sh;

		if (c->idx >= idx)
			continue;
		/* stack words pair by address; without both stack pointers
		 * (or at an odd distance), by their distance from the top */
		if (has_sp && c->has_sp && d % 8 == 0 && d / 8 >= INT32_MIN && d / 8 <= INT32_MAX)
			sh = (int32_t)(d / 8);
		else
			sh = (int32_t)((int64_t)(c->nr_words - c->nr_regs) -
				       (int64_t)(nr_words - st.nr_regs));
		same = delta__same(c, body + prefix, st.nr_regs, nr_words, sh);
		if (!r || same > best) {
			r = c;
			best = same;
			shift = sh;
		}
		if (16 * best >= 15 * nr_words)
			break;
	}
	if (r && (uint64_t)idx - r->idx <= UINT32_MAX)
		size = delta__code(e, r, idx, type, flags, body, prefix, st.nr_regs,
				   body + prefix, nr_words, shift, dst, cap);
	/* This record is one of the thread's next references. */
	if (8 * nr_words > DELTA_BIG)
		th->n = th->next = 0;
	slot = &th->ref[th->next];
	if (!delta__grow((void **)&slot->words, &slot->cap, 8 * nr_words + 8)) {
		th->n = th->next = 0;
		return size;
	}
	memcpy(slot->words, body + prefix, 8 * nr_words);
	slot->idx = idx;
	slot->nr_regs = st.nr_regs;
	slot->nr_words = nr_words;
	slot->sp = sp;
	slot->has_sp = has_sp;
	th->next = (th->next + 1) % DELTA_DEPTH;
	if (th->n < DELTA_DEPTH)
		th->n++;
	return size;
}

/* ---- decoding ------------------------------------------------------------------ */

static int delta__get_varint(const uint8_t *p, size_t len, size_t *pos, uint32_t *v)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (x > UINT32_MAX)
				return -EINVAL;
			*v = (uint32_t)x;
			return 0;
		}
	}
	return -EINVAL;
}

static int delta__room(struct xpu_delta_dec *d, size_t need)
{
	size_t cap = d->cap ? d->cap : 1 << 16;

	if (d->len + need <= d->cap)
		return 0;
	while (cap < d->len + need)
		cap *= 2;
	return delta__grow((void **)&d->buf, &d->cap, cap) ? 0 : -ENOMEM;
}

#define DELTA_BAD(msg) do { *why = msg; return -EINVAL; } while (0)

/* Stackless decoding: what a record's successors need of it as their
 * reference, its words (the rebuilt record's, where it was coded). */
struct delta_meta {
	uint64_t nr_words;
	uint32_t nr_regs;
	bool stack;			/* a stack record: one can refer to it */
};

/* The meta of record rec (a plain record, its framing checked), as its
 * rebuilt bytes would give it to delta__decode_one(). */
static struct delta_meta delta__meta_of(const uint8_t *rec)
{
	struct xpu_record_header rh;
	const struct xpu_rectype *t;
	struct xpu_stack_view v;
	struct delta_meta m = { 0 };
	size_t rlen;

	memcpy(&rh, rec, sizeof(rh));
	t = xpu_rectype__get(rh.type);
	rlen = rh.size - sizeof(rh);
	if (!t || !(t->flags & XPU_RECF_STACK) || rlen < t->stack_off ||
	    xpu_stack__parse(rec + sizeof(rh) + t->stack_off, rlen - t->stack_off, &v))
		return m;
	m.stack = true;
	m.nr_regs = v.hdr->nr_regs;
	m.nr_words = m.nr_regs + (uint64_t)v.hdr->stack_size / 8;
	return m;
}

/* Rebuilds STACK_DELTA record number k (body, blen) at the end of d->buf. */
static int delta__decode_one(struct xpu_delta_dec *d, uint32_t k, const uint8_t *body,
			     size_t blen, size_t limit, const char **why)
{
	struct xpu_record_header rh = { 0 };
	struct xpu_stack_delta dh;
	const struct xpu_rectype *t;
	struct xpu_stack_view rv;
	struct xpu_stack st;
	const uint8_t *ops, *ref = NULL;
	uint8_t *out;
	uint64_t nr_words, size, out_size, ref_regs, ref_words, i = 0;
	size_t prefix, lit, pos = 0, rstart, rlen, stack_off;
	bool copy = !d->stackless;
	int ret;

	if (blen < sizeof(dh))
		DELTA_BAD("STACK_DELTA record shorter than its header");
	memcpy(&dh, body, sizeof(dh));
	t = xpu_rectype__get(dh.type);
	if (!t || !(t->flags & XPU_RECF_STACK))
		DELTA_BAD("STACK_DELTA record codes no stack record type");
	body += sizeof(dh);
	blen -= sizeof(dh);
	if (blen < t->stack_off + sizeof(st))
		DELTA_BAD("STACK_DELTA record shorter than the record it codes");
	stack_off = t->stack_off;
	memcpy(&st, body + stack_off, sizeof(st));
	prefix = t->stack_off + sizeof(st) + 8 * ((size_t)st.nr_kernel_ips + st.nr_user_ips);
	if (st.stack_size % 8 || prefix > blen || dh.ops_size > blen - prefix)
		DELTA_BAD("STACK_DELTA record sizes out of range");
	if (dh.back == 0 || dh.back > k)
		DELTA_BAD("STACK_DELTA reference outside its chunk");
	nr_words = st.nr_regs + (uint64_t)st.stack_size / 8;
	size = sizeof(rh) + prefix + 8 * nr_words;
	if (size > UINT32_MAX || size > limit || d->full > limit - size)
		return -E2BIG;
	out_size = copy ? size : sizeof(rh) + prefix;
	if ((ret = delta__room(d, out_size)))
		return ret;
	/* the reference, rebuilt already: a stack record of this chunk */
	if (copy) {
		rstart = d->off[k - dh.back];
		memcpy(&rh, d->buf + rstart, sizeof(rh));
		t = xpu_rectype__get(rh.type);
		rlen = rh.size - sizeof(rh);
		if (!t || !(t->flags & XPU_RECF_STACK) || rlen < t->stack_off ||
		    xpu_stack__parse(d->buf + rstart + sizeof(rh) + t->stack_off,
				     rlen - t->stack_off, &rv))
			DELTA_BAD("STACK_DELTA reference is not a stack record");
		ref = (const uint8_t *)rv.regs;
		ref_regs = rv.hdr->nr_regs;
		ref_words = ref_regs + rv.hdr->stack_size / 8;
	} else {
		const struct delta_meta *m = &d->meta[k - dh.back];

		if (!m->stack)
			DELTA_BAD("STACK_DELTA reference is not a stack record");
		ref_regs = m->nr_regs;
		ref_words = m->nr_words;
	}

	out = d->buf + d->len;
	rh = (struct xpu_record_header){ .type = dh.type, .flags = dh.flags,
					 .size = (uint32_t)out_size };
	memcpy(out, &rh, sizeof(rh));
	memcpy(out + sizeof(rh), body, prefix);
	if (!copy) {		/* the record without its registers and stack */
		struct xpu_stack none = st;

		none.nr_regs = 0;
		none.stack_size = 0;
		memcpy(out + sizeof(rh) + stack_off, &none, sizeof(none));
	}
	out += sizeof(rh) + prefix;
	ops = body + prefix;
	lit = prefix + (((size_t)dh.ops_size + 7) & ~(size_t)7);
	while (i < nr_words) {
		uint32_t n;
		uint64_t w;

		if (delta__get_varint(ops, dh.ops_size, &pos, &n) || n > nr_words - i)
			DELTA_BAD("STACK_DELTA copy count out of range");
		for (uint64_t end = i + n; i < end;) {
			/* delta__ref_word's pairing by runs: within the registers
			 * and within the stack, consecutive words pair with
			 * consecutive reference words, so a run is one memcpy
			 * once its first and last words are checked */
			uint64_t seg = i < st.nr_regs ? st.nr_regs : end, run;

			if (seg > end)
				seg = end;
			run = seg - i;
			if (!delta__ref_word(ref, ref_regs, ref_words, st.nr_regs, dh.shift, i, &w) ||
			    !delta__ref_word(ref, ref_regs, ref_words, st.nr_regs, dh.shift,
					     seg - 1, &w))
				DELTA_BAD("STACK_DELTA copies a word its reference lacks");
			if (copy)
				memcpy(out + 8 * i, ref + 8 * (i < st.nr_regs ? i :
					i - st.nr_regs + dh.shift + ref_regs), 8 * run);
			i = seg;
		}
		if (i == nr_words)
			break;
		if (delta__get_varint(ops, dh.ops_size, &pos, &n) || n > nr_words - i)
			DELTA_BAD("STACK_DELTA literal count out of range");
		if (lit > blen || n > (blen - lit) / 8)
			DELTA_BAD("STACK_DELTA literals run past the record");
		if (copy)
			memcpy(out + 8 * i, body + lit, 8 * (size_t)n);
		i += n;
		lit += 8 * (size_t)n;
	}
	if (pos != dh.ops_size)
		DELTA_BAD("STACK_DELTA ops longer than its words");
	d->len += out_size;
	d->full += size;
	if (!copy)
		d->meta[k] = (struct delta_meta){ nr_words, st.nr_regs, true };
	return 0;
}

int xpu_delta__decode(struct xpu_delta_dec *d, const uint8_t *in, size_t len, uint32_t nr,
		      size_t limit, const char **why)
{
	size_t off = 0;
	int ret;

	d->len = d->full = 0;
	if (!delta__grow((void **)&d->off, &d->off_cap, ((size_t)nr + 1) * sizeof(*d->off)) ||
	    (d->stackless &&
	     !delta__grow((void **)&d->meta, &d->meta_cap, ((size_t)nr + 1) * sizeof(*d->meta))))
		return -ENOMEM;
	for (uint32_t k = 0; k < nr && off < len; k++) {
		struct xpu_record_header rh;

		memcpy(&rh, in + off, sizeof(rh));	/* framing checked by the caller */
		if (d->full > UINT32_MAX) {
			*why = "chunk too large once rebuilt";
			return -E2BIG;
		}
		d->off[k] = (uint32_t)d->len;
		if (rh.type == XPU_REC_STACK_DELTA) {
			ret = delta__decode_one(d, k, in + off + sizeof(rh), rh.size - sizeof(rh),
						limit, why);
		} else if (rh.size > limit || d->full > limit - rh.size) {
			ret = -E2BIG;
		} else if (!(ret = delta__room(d, rh.size))) {
			memcpy(d->buf + d->len, in + off, rh.size);
			d->len += rh.size;
			d->full += rh.size;
			if (d->stackless)
				d->meta[k] = delta__meta_of(in + off);
		}
		if (ret == -E2BIG)
			*why = "chunk too large once rebuilt";
		else if (ret == -ENOMEM)
			*why = "out of memory for chunk";
		if (ret)
			return ret;
		off += rh.size;
	}
	return 0;
}

void xpu_delta_dec__free(struct xpu_delta_dec *d)
{
	free(d->buf);
	free(d->off);
	free(d->meta);
	memset(d, 0, sizeof(*d));
}
