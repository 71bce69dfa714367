/* SPDX-License-Identifier: MIT */
/*
 * The record-type table: one row per value of enum xpu_record_type, holding
 * what code that handles records in general needs to know about a type
 * (after perf's perf_event__names[] and machines__deliver_event): its name,
 * the smallest body the reader accepts, where its time, stack and string
 * are, whether it comes from the GPU side; and the printer --dump uses.
 * The reader, the writer's checks, the report session, --dump, the
 * recorder's GPU counts and the fuzzers all go through the table, so a new
 * record type needs one row and one printer and no other list
 * (Documentation/design-report.md, "How to add a record type").
 */
#ifndef XPU_FORMAT_RECORD_TYPES_H
#define XPU_FORMAT_RECORD_TYPES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "record_view.h"

/* The body starts with the uint64_t CLOCK_MONOTONIC time of what the record
 * describes (the start, for intervals); reports take their time range from
 * these. FINISH has a time too but describes no event: it has no flag. */
#define XPU_RECF_TIME	(1u << 0)
/* The body holds a struct xpu_stack at stack_off; the stack runs to the end. */
#define XPU_RECF_STACK	(1u << 1)
/* A GPU-side record: XPU_REC_GPU_* (GPU_CORR too: its stack is the CPU's). */
#define XPU_RECF_GPU	(1u << 2)
/* A NUL-terminated string follows a fixed part of 'fixed' bytes. */
#define XPU_RECF_STRING	(1u << 3)

struct xpu_rectype {
	const char *name;		/* as in the spec; NULL: no such type */
	uint16_t min_size;		/* smallest body the reader hands out */
	uint16_t flags;			/* XPU_RECF_* */
	uint16_t fixed;			/* XPU_RECF_STRING: bytes before the string */
	uint16_t stack_off;		/* XPU_RECF_STACK: offset of struct xpu_stack */
};

/* Indexed by type (format/record_types.c); use the accessors below. */
extern const struct xpu_rectype xpu_rectypes[XPU_REC_MAX];

/* The row of a type, or NULL for a type this reader does not know. */
static inline const struct xpu_rectype *xpu_rectype__get(uint16_t type)
{
	return type < XPU_REC_MAX && xpu_rectypes[type].name ? &xpu_rectypes[type] : NULL;
}

/* Whether type is known and has every flag in flags. */
static inline bool xpu_rectype__is(uint16_t type, uint32_t flags)
{
	const struct xpu_rectype *t = xpu_rectype__get(type);

	return t && (t->flags & flags) == flags;
}

/* The record's time (XPU_RECF_TIME types). false: the type has none. */
static inline bool xpu_record__time(const struct xpu_record *rec, uint64_t *time)
{
	if (!xpu_rectype__is(rec->type, XPU_RECF_TIME) || rec->body_size < sizeof(*time))
		return false;
	memcpy(time, rec->body, sizeof(*time));
	return true;
}

/*
 * When what a record of type (body of len bytes) describes was over: the
 * end of the intervals written once they end (OFFCPU, a closed GPU_NVTX:
 * start and end are their first two fields), else its time. false: the
 * type has no time, or the time is 0. Where xpu-record cuts its windows
 * and rotated files (record/capture/window.c): an off-CPU block that began long
 * before goes to the window it ended in, where it was written.
 */
static inline bool xpu_rectype__done_time(uint16_t type, const void *body, size_t len,
					  uint64_t *t)
{
	uint64_t end;

	if (!xpu_rectype__is(type, XPU_RECF_TIME) || len < sizeof(*t))
		return false;
	memcpy(t, body, sizeof(*t));
	if ((type == XPU_REC_OFFCPU || type == XPU_REC_GPU_NVTX) && len >= 2 * sizeof(end)) {
		memcpy(&end, (const char *)body + sizeof(end), sizeof(end));
		if (end > *t)
			*t = end;
	}
	return *t != 0;
}

/* The trailing string of an XPU_RECF_STRING record, or NULL (another type,
 * or the string is not terminated inside the body). */
static inline const char *xpu_record__tail(const struct xpu_record *rec)
{
	const struct xpu_rectype *t = xpu_rectype__get(rec->type);

	return t && (t->flags & XPU_RECF_STRING) ? xpu_record__string(rec, t->fixed) : NULL;
}

/* The stack part of an XPU_RECF_STACK record. Returns 0, -ENOENT for a
 * type without one, or -EINVAL when its counts overflow the record. */
static inline int xpu_record__stack(const struct xpu_record *rec, struct xpu_stack_view *v)
{
	const struct xpu_rectype *t = xpu_rectype__get(rec->type);

	if (!t || !(t->flags & XPU_RECF_STACK))
		return -ENOENT;
	if (rec->body_size < t->stack_off)
		return -EINVAL;
	return xpu_stack__parse((const uint8_t *)rec->body + t->stack_off,
				rec->body_size - t->stack_off, v);
}

/* The stall array of a GPU_PC_SAMPLE record (body_size at least its
 * minimum). Returns 0, or -EINVAL when nr_stalls runs past the body. */
static inline int xpu_pc_sample__stalls(const struct xpu_record *rec,
					struct xpu_gpu_pc_sample *s,
					const struct xpu_gpu_pc_stall **stalls)
{
	if (rec->type != XPU_REC_GPU_PC_SAMPLE || rec->body_size < sizeof(*s))
		return -EINVAL;
	memcpy(s, rec->body, sizeof(*s));
	if ((rec->body_size - sizeof(*s)) / sizeof(**stalls) < s->nr_stalls)
		return -EINVAL;
	*stalls = (const struct xpu_gpu_pc_stall *)((const uint8_t *)rec->body + sizeof(*s));
	return 0;
}

/* The bytes of a GPU_CUBIN record: *data NULL for a skipped cubin.
 * Returns 0, or -EINVAL when size runs past the body. */
static inline int xpu_cubin__data(const struct xpu_record *rec, struct xpu_gpu_cubin *c,
				  const void **data)
{
	if (rec->type != XPU_REC_GPU_CUBIN || rec->body_size < sizeof(*c))
		return -EINVAL;
	memcpy(c, rec->body, sizeof(*c));
	*data = NULL;
	if (c->flags & XPU_CUBIN_SKIPPED)
		return 0;
	if (c->size > rec->body_size - sizeof(*c))
		return -EINVAL;
	*data = (const uint8_t *)rec->body + sizeof(*c);
	return 0;
}

/*
 * Printers, one per row of the table (format/record_print.c: kept apart so
 * that programs which only write traces, like xpu-record, link only the
 * table's data).
 * A printer writes the body's fields on one line, " name=value ..." without
 * a newline, for records as the reader hands them out (body_size at least
 * min_size). Returns 0, or -EIO when fp has an error.
 */
typedef int xpu_record_print_fn(FILE *fp, const struct xpu_record *rec);

/* The printer of a type, or NULL for a type this reader does not know. */
xpu_record_print_fn *xpu_record__printer(uint16_t type);

/* The record's fields through its type's printer; nothing for unknown types
 * or bodies shorter than the type's minimum. Returns 0 or -EIO. */
int xpu_record__fprintf(FILE *fp, const struct xpu_record *rec);

/* " kips=N uips=N regs=N stack=N flags=X", the sampled ip/sp and the first
 * ips of the stack part at 'stack' ('avail' bytes to the end of the body);
 * " stack=<malformed>" when it does not fit. */
int xpu_stack__fprintf(FILE *fp, const void *stack, size_t avail);

/* "samples", "correlation", ... for enum xpu_lost_source; "other" else. */
const char *xpu_lost_source__name(uint32_t source);

#endif
