// SPDX-License-Identifier: MIT
/* Python frames of the interpreter walk (pyframes.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/utf8.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "report/unwind/pyframes.h"

struct py_code {
	char *qualname, *filename;
	int32_t firstlineno;
	uint16_t version;
	uint8_t *table;
	uint32_t table_size;
};

struct py_code_key {
	uint32_t pid;
	uint16_t code_key, pad;
	uint64_t addr;
};

struct py_frame_key {
	uint32_t pid, offset;
	uint64_t code;
	uint16_t code_key, pad[3];
};

/*
 * The cache's entries used last, direct-mapped by the key's hash: a
 * thread's outer Python frames are the same sample after sample, and a
 * GPT-2 recording resolves 1.5 million frames through a handful of
 * thousand keys. A hit costs a multiply and a 24-byte compare instead of
 * the hash map's byte hash and probe (a tenth of that report's pass 2).
 */
#define PY_RECENT_BITS 12
struct py_recent {
	struct py_frame_key key;
	uint64_t val;			/* as in cache; 0: empty */
};

static struct py_recent *py_recent__slot(struct pyframes *py, const struct py_frame_key *k)
{
	uint64_t h = (k->code ^ (uint64_t)k->offset << 40 ^ (uint64_t)k->pid << 20 ^ k->code_key) *
		     0x9e3779b97f4a7c15ULL;

	return &py->recent[h >> (64 - PY_RECENT_BITS)];
}

void pyframes__init(struct pyframes *py)
{
	memset(py, 0, sizeof(*py));
	bmap__init(&py->codes);
	bmap__init(&py->cache);
	u64map__init(&py->parents);
	py->recent = xcalloc(1u << PY_RECENT_BITS, sizeof(*py->recent));
}

static void pyframes__free_code(void *v)
{
	struct py_code *c = v;

	if (!c)
		return;
	free(c->qualname);
	free(c->filename);
	free(c->table);
	free(c);
}

void pyframes__exit(struct pyframes *py)
{
	bmap__exit(&py->codes, pyframes__free_code);
	bmap__exit(&py->cache, NULL);
	u64map__exit(&py->parents);
	free(py->recent);
	py->recent = NULL;
}

void pyframes__fork(struct pyframes *py, uint32_t pid, uint32_t ppid)
{
	if (pid != ppid)
		*u64map__slot(&py->parents, pid) = ppid;
}

void pyframes__code(struct pyframes *py, const struct xpu_record *rec)
{
	struct xpu_py_code c;
	const char *q;
	struct py_code_key key = { 0 };
	struct py_code *pc;
	size_t room;
	bool found;
	void **slot;

	if (rec->body_size < sizeof(c))
		return;
	memcpy(&c, rec->body, sizeof(c));
	q = (const char *)rec->body + sizeof(c);
	room = rec->body_size - sizeof(c);
	if ((size_t)c.qualname_size + c.filename_size + c.linetable_size > room ||
	    !c.qualname_size || !c.filename_size || q[c.qualname_size - 1] ||
	    q[c.qualname_size + c.filename_size - 1] || !pyframes__text_ok(q) ||
	    !pyframes__text_ok(q + c.qualname_size))
		return;		/* malformed: its frames stay unnamed */
	key.pid = c.pid;
	key.code_key = c.code_key;
	key.addr = c.addr;
	slot = bmap__slot(&py->codes, &key, sizeof(key), &found);
	pyframes__free_code(found ? *slot : NULL);	/* a later one (a reused address) wins */
	pc = xzalloc(sizeof(*pc));
	pc->qualname = xstrdup(q);
	pc->filename = xstrdup(q + c.qualname_size);
	pc->firstlineno = c.firstlineno;
	pc->version = c.version;
	pc->table_size = c.linetable_size;
	pc->table = xmalloc(c.linetable_size ? c.linetable_size : 1);
	memcpy(pc->table, q + c.qualname_size + c.filename_size, c.linetable_size);
	*slot = pc;
}

/* Names and paths CPython made are valid UTF-8 without control characters.
 * Anything else was read from a code object freed or reused while the
 * recorder read it (seen on a 2-rank DDP run): those frames stay unnamed,
 * py::[code 0x...], rather than print bytes that break every output. */
bool pyframes__text_ok(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		int n = *u < 0x80 ? 0 : (*u & 0xe0) == 0xc0 ? 1 : (*u & 0xf0) == 0xe0 ? 2 :
			(*u & 0xf8) == 0xf0 ? 3 : -1;

		if (n < 0 || *u < 0x20 || *u == 0x7f || (n == 1 && *u < 0xc2))
			return false;
		u++;
		for (; n > 0; n--, u++)
			if ((*u & 0xc0) != 0x80)
				return false;
	}
	return true;
}

void pyframes__record(struct pyframes *py, const struct xpu_record *rec)
{
	struct xpu_py_stack st;

	/* a record with no stack between a PY_STACK and its record (a side-band
	 * MMAP that recorders before format 1.6's fix wrote there) leaves it
	 * pending */
	if (rec->type == XPU_REC_AUTOGRAD) {	/* its own (report/gpu/gpu_autograd.c) */
		py->pending = py->taken = false;
		return;
	}
	if (rec->type != XPU_REC_PY_STACK && !xpu_rectype__is(rec->type, XPU_RECF_STACK))
		return;
	if (py->pending && !py->taken)
		py->unmatched++;
	py->pending = py->taken = false;
	if (rec->type != XPU_REC_PY_STACK)
		return;
	if (rec->body_size < sizeof(st))
		return;
	memcpy(&st, rec->body, sizeof(st));
	py->stacks++;
	if (st.nr_frames > sizeof(py->fr) / sizeof(py->fr[0]) ||
	    (rec->body_size - sizeof(st)) / sizeof(struct xpu_py_frame) < st.nr_frames)
		return;
	memcpy(py->fr, (const uint8_t *)rec->body + sizeof(st), st.nr_frames * sizeof(py->fr[0]));
	py->nr = st.nr_frames;
	py->pid = st.pid;
	py->tid = st.tid;
	py->time = st.time;
	py->pending = true;
}

const struct xpu_py_frame *pyframes__take(struct pyframes *py, uint32_t tid, uint64_t time,
					  uint16_t *nr)
{
	if (!py->pending || py->tid != tid || py->time != time)
		return NULL;
	if (!py->taken)
		py->used++;
	py->taken = true;
	*nr = py->nr;
	return py->fr;
}

bool pyframes__is_eval(const char *name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	return !strncmp(name, eval, sizeof(eval) - 1) &&
	       (name[sizeof(eval) - 1] == '\0' || name[sizeof(eval) - 1] == '.');
}

/* The length of name without its ":LINE" suffix (all digits), or 0 when it
 * is not a Python frame with one. */
static size_t py__name_len(const char *name)
{
	size_t len = strlen(name), i = len;

	if (strncmp(name, "py::", 4))
		return 0;
	while (i > 4 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	return i < len && name[i - 1] == ':' ? i - 1 : 0;
}

bool pyframes__same_function(const char *a, const char *b)
{
	size_t la = py__name_len(a), lb = py__name_len(b);

	return la && la == lb && !memcmp(a, b, la);
}

/* 3.11+ location table varints: 6 bits a byte, bit 6 continues. */
static uint32_t py__varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t b, val, shift = 0;

	if (*p >= end)
		return 0;
	b = *(*p)++;
	val = b & 63;
	while (b & 64 && *p < end && shift < 26) {
		b = *(*p)++;
		shift += 6;
		val |= (b & 63) << shift;
	}
	return val;
}

static int32_t py__svarint(const uint8_t **p, const uint8_t *end)
{
	uint32_t u = py__varint(p, end);

	return u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
}

int pyframes__line(uint16_t version, const uint8_t *table, size_t size, int firstlineno,
		   uint32_t offset)
{
	const uint8_t *p = table, *end = table + size;
	int line = firstlineno;
	uint32_t addr = 0;

	if (offset == XPU_PY_NO_OFFSET)
		return -1;
	if (version < 0x030b) {		/* PEP 626: (byte delta, line delta) pairs */
		for (; p + 1 < end; p += 2) {
			uint32_t next = addr + p[0];
			int8_t ld = (int8_t)p[1];
			int cur = -1;

			if (ld != -128) {
				line += ld;
				cur = line;
			}
			if (offset >= addr && offset < next)
				return cur;
			addr = next;
		}
		return -1;
	}
	offset /= 2;			/* the location table counts code units */
	while (p < end) {
		uint8_t b = *p++;
		uint32_t code = (b >> 3) & 15, len = (b & 7) + 1;
		int32_t ld = 0;

		if (!(b & 0x80))
			return -1;	/* not at an entry's start: malformed */
		switch (code) {
		case 15:		/* no location */
			break;
		case 14:		/* long form */
			ld = py__svarint(&p, end);
			py__varint(&p, end);
			py__varint(&p, end);
			py__varint(&p, end);
			break;
		case 13:		/* no column */
			ld = py__svarint(&p, end);
			break;
		case 10: case 11: case 12:	/* one line, two column bytes */
			ld = (int32_t)code - 10;
			p += 2;
			break;
		default:		/* short form: same line, one column byte */
			p += 1;
			break;
		}
		line += ld;
		if (offset < addr + len)
			return code == 15 ? -1 : line;
		addr += len;
	}
	return -1;
}

uint32_t pyframes__frame(struct pyframes *py, struct profile *p, uint32_t pid,
			 const struct xpu_py_frame *f, uint32_t *loc)
{
	struct py_frame_key fk = { .pid = pid, .offset = py->no_lines ? 0 : f->offset,
				   .code = f->code, .code_key = f->code_key };
	struct py_code_key ck = { .pid = pid, .code_key = f->code_key, .addr = f->code };
	struct py_recent *r = py_recent__slot(py, &fk);
	struct py_code *c;
	char buf[1024];
	int n;
	uint32_t frame;
	bool found;
	void **slot;
	int line;

	if (r->val && !memcmp(&r->key, &fk, sizeof(fk))) {
		*loc = (uint32_t)(r->val >> 32);
		return (uint32_t)r->val - 1;
	}
	slot = bmap__slot(&py->cache, &fk, sizeof(fk), &found);
	if (found) {
		r->key = fk;
		r->val = (uint64_t)(uintptr_t)*slot;
		*loc = (uint32_t)((uintptr_t)*slot >> 32);
		return (uint32_t)(uintptr_t)*slot - 1;
	}
	c = bmap__find(&py->codes, &ck, sizeof(ck));
	for (int up = 0; !c && up < 8; up++) {	/* read in an ancestor? */
		const uint64_t *pp = u64map__find(&py->parents, ck.pid);

		if (!pp)
			break;
		ck.pid = (uint32_t)*pp;
		c = bmap__find(&py->codes, &ck, sizeof(ck));
	}
	*loc = 0;
	if (!c) {
		py->unknown_code++;
		snprintf(buf, sizeof(buf), "py::[code %#llx]", (unsigned long long)f->code);
		frame = profile__intern_frame(p, FRAME_CPU_USER, "[python]", buf, 0, true);
	} else {
		line = py->no_lines ? -1 : pyframes__line(c->version, c->table, c->table_size,
							   c->firstlineno, f->offset);
		if (line >= 0) {
			n = snprintf(buf, sizeof(buf), "py::%s:%s:%d", c->qualname, c->filename,
				     line);
			*loc = profile__intern_loc(p, c->filename, (uint32_t)line);
		} else {
			n = snprintf(buf, sizeof(buf), "py::%s:%s", c->qualname, c->filename);
		}
		/* a name too long for buf ends between two characters */
		if (n >= (int)sizeof(buf))
			buf[utf8__trim(buf, sizeof(buf) - 1)] = '\0';
		frame = profile__intern_frame(p, FRAME_CPU_USER, "[python]", buf, 0, false);
	}
	*slot = (void *)(uintptr_t)((uint64_t)*loc << 32 | (frame + 1));
	r->key = fk;
	r->val = (uint64_t)(uintptr_t)*slot;
	return frame;
}
