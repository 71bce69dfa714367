/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges of one process, the library's CUDA-independent part (issue 9):
 * what a push, pop, start, end or mark turns into on the channel. The CUPTI
 * glue (cupti_nvtx.c) decodes CUPTI's NVTX callbacks into these calls; unit
 * tests call them directly.
 *
 *  - push/pop nest per thread and per NVTX domain: a pop closes the innermost
 *    open push of its domain on that thread. At most XPU_NVTX_MAX_DEPTH are
 *    kept per thread; deeper pushes are dropped (counted as XPU_LOST_NVTX)
 *    and their pops consumed, so the ranges kept stay paired: the domains of
 *    the first XPU_NVTX_MAX_DEPTH dropped are kept, so a pop consumes a
 *    dropped push of its own domain only (beyond, any pop consumes one).
 *  - start/end ranges are keyed by NVTX's own range id and may end on any
 *    thread; at most XPU_NVTX_MAX_STARTED are open at once.
 *  - marks are instants, sent at once.
 *  - Every range gets a per-process id (1, 2, ...). At a push or start the
 *    marker is called with (id, cbid, XPU_API_NVTX) from the application's
 *    thread, so xpu-record's uprobe stores the CPU stack of the push as a
 *    GPU_CORR record of domain 3. A GPU_NVTX record is queued when the range
 *    closes; ranges still open at xpu_nvtx__finish() or when their thread
 *    exits go out with end 0 (never closed).
 *  - Messages and domain names are STRING records interned per process with
 *    the kernel names (names.h). Distinct messages past XPU_NVTX_MAX_NAMES
 *    are sent with a fresh id each time instead of being kept: programs that
 *    put counters in messages do not grow the application's memory.
 *
 * Cost per range: a clock read by the caller, two uncontended mutexes (the
 * thread's, the channel queue's), the name lookup, and the marker's uprobe
 * at push/start. No system call: a thread's id is read once.
 */
#ifndef XPU_CUPTI_NVTX_H
#define XPU_CUPTI_NVTX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct xpu_client;
struct xpu_names;

#define XPU_NVTX_MAX_DEPTH	64	/* push/pop nesting kept per thread */
#define XPU_NVTX_MAX_STARTED	4096	/* start/end ranges open at once */
#define XPU_NVTX_MAX_HANDLES	1024	/* domains, and registered strings, remembered */
#define XPU_NVTX_MAX_NAMES	65536	/* distinct strings interned */

typedef void (*xpu_nvtx_marker_fn)(uint64_t range_id, uint32_t cbid, uint32_t domain);

/* What a push, start or mark carries. */
struct xpu_nvtx_event {
	uint64_t time;			/* CLOCK_MONOTONIC ns */
	uint64_t domain;		/* NVTX domain handle; 0: the default domain */
	uint32_t domain_id;		/* STRING id of its name; 0: default or unknown */
	uint32_t message_id;		/* STRING id; 0: none */
	uint32_t color;			/* ARGB; 0: none */
	uint32_t cbid;			/* CUPTI NVTX callback id, handed to the marker */
};

struct xpu_nvtx_range {			/* an open range */
	struct xpu_nvtx_event ev;
	uint64_t range_id;
	uint64_t key;			/* start/end: NVTX's range id */
	uint32_t tid;
	uint32_t depth;
};

struct xpu_nvtx;

struct xpu_nvtx_thread {
	pthread_mutex_t lock;		/* the owner thread vs. xpu_nvtx__finish() */
	struct xpu_nvtx *nv;
	uint32_t tid;
	uint32_t nr;			/* open pushes in stack[] */
	uint32_t nr_dropped;		/* pushes dropped for depth, domains in dropped[] */
	uint32_t overflow;		/* ... and newer ones past that, domain not kept */
	uint64_t dropped[XPU_NVTX_MAX_DEPTH];
	struct xpu_nvtx_range stack[XPU_NVTX_MAX_DEPTH];
	struct xpu_nvtx_thread *prev, *next;	/* nv->threads */
};

struct xpu_nvtx_handle {
	uint64_t handle;
	uint32_t id;			/* STRING id */
};

struct xpu_nvtx {
	struct xpu_client *client;
	struct xpu_names *names;
	uint32_t pid;
	xpu_nvtx_marker_fn marker;
	atomic_ullong next_id;
	pthread_key_t key;		/* the calling thread's struct xpu_nvtx_thread */
	bool have_key;

	pthread_mutex_t lock;		/* everything below */
	struct xpu_nvtx_thread *threads;
	struct xpu_nvtx_range *started;	/* open start/end ranges (allocated on use) */
	uint32_t nr_started;
	struct xpu_nvtx_handle domains[XPU_NVTX_MAX_HANDLES];
	struct xpu_nvtx_handle strings[XPU_NVTX_MAX_HANDLES];
	uint32_t nr_domains, nr_strings;
	atomic_bool finished;		/* xpu_nvtx__finish() ran: no more records */
	atomic_ullong nr_sent;		/* GPU_NVTX records queued */
	uint64_t nr_lost;		/* ranges dropped (depth, too many open, memory) */
	uint64_t lost_unreported;	/* not yet sent as XPU_LOST_NVTX */
	uint64_t nr_unmatched;		/* pops and ends of ranges we did not see open */
};

/* marker: xpu_cupti_marker in the library. Returns 0 or -errno. */
int xpu_nvtx__init(struct xpu_nvtx *nv, struct xpu_client *c, struct xpu_names *names,
		   uint32_t pid, xpu_nvtx_marker_fn marker);
/* Frees what is left (after xpu_nvtx__finish; threads still registered are freed). */
void xpu_nvtx__exit(struct xpu_nvtx *nv);

/* The calling thread's state, made on first use (its tid read once); freed
 * with its open ranges sent when the thread exits. NULL: out of memory. */
struct xpu_nvtx_thread *xpu_nvtx__self(struct xpu_nvtx *nv);
/* The same for a given thread id, for tests and callers that manage threads. */
struct xpu_nvtx_thread *xpu_nvtx__thread_new(struct xpu_nvtx *nv, uint32_t tid);
void xpu_nvtx__thread_exit(struct xpu_nvtx_thread *t);

/* A message or name as a STRING id (0 for NULL). */
uint32_t xpu_nvtx__intern(struct xpu_nvtx *nv, const char *text);
/* nvtxDomainCreate / nvtxDomainRegisterString: remember handle -> name. */
void xpu_nvtx__add_domain(struct xpu_nvtx *nv, uint64_t handle, const char *name);
void xpu_nvtx__add_string(struct xpu_nvtx *nv, uint64_t handle, const char *text);
/* STRING ids of a domain or registered string handle; 0 when unknown. */
uint32_t xpu_nvtx__domain_id(struct xpu_nvtx *nv, uint64_t handle);
uint32_t xpu_nvtx__string_id(struct xpu_nvtx *nv, uint64_t handle);

/* Returns the range id, 0 when the push was dropped. */
uint64_t xpu_nvtx__push(struct xpu_nvtx_thread *t, const struct xpu_nvtx_event *ev);
/* Returns 0, or -ENOENT when no push of the domain is open on the thread. */
int xpu_nvtx__pop(struct xpu_nvtx_thread *t, uint64_t time, uint64_t domain);
/* key: NVTX's id of the range, which its end names. Returns the range id or 0. */
uint64_t xpu_nvtx__start(struct xpu_nvtx_thread *t, uint64_t key, const struct xpu_nvtx_event *ev);
/* Returns 0, or -ENOENT when no open range has that key. */
int xpu_nvtx__end(struct xpu_nvtx_thread *t, uint64_t time, uint64_t key);
void xpu_nvtx__mark(struct xpu_nvtx_thread *t, const struct xpu_nvtx_event *ev);

/* Queues an XPU_LOST_NVTX record for drops not reported yet. */
void xpu_nvtx__report_lost(struct xpu_nvtx *nv);
/* At the end of the recording: every open range goes out with end 0; later
 * calls do nothing. */
void xpu_nvtx__finish(struct xpu_nvtx *nv);

#endif
