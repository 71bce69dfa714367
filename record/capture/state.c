// SPDX-License-Identifier: MIT
/*
 * What a report needs before the first sample of a file: the recording's
 * state, kept in memory so that each file --switch-output starts and each
 * window the flight recorder writes can be read on its own
 * (Documentation/xpu-record.md, "Bounded capture"). Every record the writer
 * is given passes through state__note(); the records that describe rather
 * than happen are kept: META (the last value of each key), the COMM, FORK,
 * MMAP (with their build-ids) and rank (PROC_ENV) records of the processes
 * and threads still alive, their Python code objects (PY_CODE), the GPU
 * side's interned strings (kernel names), devices and graph nodes, JIT
 * symbols and kernel symbols. state__emit() writes them again, in the order
 * they came, with their original times.
 *
 * A process that exits takes its records with it, an exec its image's
 * (mappings, code objects, strings): they are marked with the time and
 * dropped once no file or window can hold that process's events any more
 * (state__expire(): a second before the oldest data written), so the state
 * is the live processes', bounded on a machine that runs for weeks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "format/writer.h"
#include "format/xpu_format.h"
#include "record/capture/state.h"

struct state_rec {
	uint16_t type, flags;
	uint32_t pid, tid;
	uint32_t len;
	uint8_t *body;
	uint64_t dead;			/* its process exited, its image was replaced
					 * (CLOCK_MONOTONIC ns); 0: alive */
};

struct state {
	pthread_mutex_t lock;
	struct state_rec *recs;
	size_t nr, cap;
	size_t bytes;
};

struct state *state__new(void)
{
	struct state *st = xcalloc(1, sizeof(*st));

	pthread_mutex_init(&st->lock, NULL);
	return st;
}

void state__free(struct state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nr; i++)
		free(st->recs[i].body);
	free(st->recs);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Marks dead at time (0: drops) the records for which drop() is true,
 * keeping the order. */
static void state__filter(struct state *st, bool (*drop)(const struct state_rec *r, uint32_t pid,
							 uint32_t tid), uint32_t pid, uint32_t tid,
			  uint64_t time)
{
	size_t j = 0;

	for (size_t i = 0; i < st->nr; i++) {
		if (drop(&st->recs[i], pid, tid) && time) {
			if (!st->recs[i].dead)
				st->recs[i].dead = time;
		} else if (drop(&st->recs[i], pid, tid)) {
			st->bytes -= st->recs[i].len;
			free(st->recs[i].body);
			continue;
		}
		st->recs[j++] = st->recs[i];
	}
	st->nr = j;
}

static bool state__expired(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	uint64_t before = (uint64_t)pid << 32 | tid;

	return r->dead && r->dead < before;
}

void state__expire(struct state *st, uint64_t before)
{
	pthread_mutex_lock(&st->lock);
	state__filter(st, state__expired, before >> 32, (uint32_t)before, 0);
	pthread_mutex_unlock(&st->lock);
}

static bool state__of_process(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	(void)tid;
	return r->pid == pid && r->type != XPU_REC_META && r->type != XPU_REC_KSYM;
}

static bool state__of_thread(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	return r->pid == pid && r->tid == tid &&
	       (r->type == XPU_REC_COMM || r->type == XPU_REC_FORK);
}

/* What an exec replaces: the old image's mappings and what was read from it. */
static bool state__of_image(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	(void)tid;
	return r->pid == pid && r->type != XPU_REC_META && r->type != XPU_REC_KSYM &&
	       r->type != XPU_REC_FORK && r->type != XPU_REC_COMM;
}

static bool state__same_comm(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	return r->type == XPU_REC_COMM && r->pid == pid && r->tid == tid;
}

static bool state__same_env(const struct state_rec *r, uint32_t pid, uint32_t tid)
{
	(void)tid;
	return r->type == XPU_REC_PROC_ENV && r->pid == pid;
}

static void state__append(struct state *st, uint16_t type, uint16_t flags, uint32_t pid,
			  uint32_t tid, uint8_t *body, size_t len)
{
	st->recs = xgrow(st->recs, &st->cap, st->nr + 1, sizeof(*st->recs));
	st->recs[st->nr++] = (struct state_rec){ type, flags, pid, tid, (uint32_t)len, body };
	st->bytes += len;
}

void state__note(struct state *st, uint16_t type, uint16_t flags, const struct iovec *iov, int n)
{
	uint32_t pid = 0, tid = 0;
	size_t len = 0, off = 0;
	uint8_t *body;

	switch (type) {
	case XPU_REC_META: case XPU_REC_COMM: case XPU_REC_FORK: case XPU_REC_EXIT:
	case XPU_REC_MMAP: case XPU_REC_KSYM: case XPU_REC_PERF_MAP: case XPU_REC_STRING:
	case XPU_REC_PY_CODE: case XPU_REC_PROC_ENV: case XPU_REC_GPU_DEVICE:
	case XPU_REC_GPU_GRAPH_NODE:
		break;
	default:
		return;		/* events: in the chunks only */
	}
	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len < xpu_record__min_size(type) || len > UINT32_MAX)
		return;
	body = xmalloc(len + 1);
	for (int i = 0; i < n; i++) {
		memcpy(body + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	body[len] = 0;

	pthread_mutex_lock(&st->lock);
	switch (type) {
	case XPU_REC_META:
		/* the last value of each key */
		for (size_t i = 0; i < st->nr; i++) {
			struct state_rec *r = &st->recs[i];

			if (r->type == XPU_REC_META && !strcmp((char *)r->body, (char *)body)) {
				st->bytes += len - r->len;
				free(r->body);
				r->body = body;
				r->len = len;
				body = NULL;
				break;
			}
		}
		break;
	case XPU_REC_COMM: {
		const struct xpu_comm *c = (const void *)body;

		pid = c->pid;
		tid = c->tid;
		if ((c->flags & XPU_COMM_EXEC) && pid == tid)
			state__filter(st, state__of_image, pid, 0, c->time ? c->time : 1);
		state__filter(st, state__same_comm, pid, tid, 0);
		break;
	}
	case XPU_REC_FORK: {
		const struct xpu_fork *f = (const void *)body;

		pid = f->pid;
		tid = f->tid;
		break;
	}
	case XPU_REC_EXIT: {
		const struct xpu_exit *x = (const void *)body;

		if (x->pid == x->tid)
			state__filter(st, state__of_process, x->pid, 0, x->time ? x->time : 1);
		else
			state__filter(st, state__of_thread, x->pid, x->tid, x->time ? x->time : 1);
		free(body);
		body = NULL;
		break;
	}
	case XPU_REC_MMAP:
		pid = ((const struct xpu_mmap *)(const void *)body)->pid;
		tid = ((const struct xpu_mmap *)(const void *)body)->tid;
		break;
	case XPU_REC_PERF_MAP:
		pid = ((const struct xpu_perf_map *)(const void *)body)->pid;
		break;
	case XPU_REC_STRING:
		pid = ((const struct xpu_string *)(const void *)body)->pid;
		break;
	case XPU_REC_PY_CODE:
		pid = ((const struct xpu_py_code *)(const void *)body)->pid;
		break;
	case XPU_REC_PROC_ENV:
		pid = ((const struct xpu_proc_env *)(const void *)body)->pid;
		state__filter(st, state__same_env, pid, 0, 0);
		break;
	case XPU_REC_GPU_DEVICE:
		pid = ((const struct xpu_gpu_device *)(const void *)body)->pid;
		break;
	case XPU_REC_GPU_GRAPH_NODE:
		pid = ((const struct xpu_gpu_graph_node *)(const void *)body)->pid;
		tid = ((const struct xpu_gpu_graph_node *)(const void *)body)->tid;
		break;
	}
	if (body)
		state__append(st, type, flags, pid, tid, body, len);
	pthread_mutex_unlock(&st->lock);
}

int state__emit(struct state *st, struct xpu_writer *w)
{
	int err = 0;

	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nr && !err; i++) {
		struct iovec iov = { st->recs[i].body, st->recs[i].len };

		err = xpu_writer__addv(w, st->recs[i].type,
				       st->recs[i].flags | XPU_RECORD_REPEATED, &iov, 1);
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

void state__size(struct state *st, size_t *records, size_t *bytes)
{
	pthread_mutex_lock(&st->lock);
	*records = st->nr;
	*bytes = st->bytes + st->cap * sizeof(*st->recs);
	pthread_mutex_unlock(&st->lock);
}
