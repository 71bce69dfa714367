// SPDX-License-Identifier: MIT
/*
 * Sideband from perf itself: a PERF_COUNT_SW_DUMMY event per CPU reports
 * mmaps (with build-ids), comm/exec, fork and exit of every task, stamped
 * with CLOCK_MONOTONIC like the BPF samples. We read the perf rings directly
 * and keep only the records of tracked processes.
 *
 * Tracking in user space: a pid is tracked when the BPF map has it (the fork
 * tracepoint adds children synchronously), when sideband__track() named it,
 * or when we saw its FORK from a tracked parent. Each drain handles all FORK
 * records of all rings first, so a child's mmaps read from one CPU's ring
 * before its fork from another's are still kept. Pids are not forgotten on
 * exit: a pid recycled during the same recording would only add a few spare
 * mmap records.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/kernel/sideband.h"
#include "record/kernel/bpf.h"
#include "record/python/python.h"
#include "record/files/buildid.h"
#include "record/kernel/procenv.h"

#define SB_DATA_PAGES	64

struct sb_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;		/* data bytes, a power of two */
	uint64_t head;		/* snapshot for the current drain */
};

struct sideband {
	struct sb_ring *rings;
	int nr;
	bool mem;		/* rings from sideband__open_rings(): not ours to unmap */
	struct xpu_writer *w;
	struct record_bpf *b;
	struct python *py;		/* told of mappings, forks, execs */
	/* told of mappings (the GPU channel counts the library's loads) */
	void (*on_mapping)(void *ctx, pid_t pid, const char *path, const uint8_t *bid,
			   size_t bid_size);
	void *on_mapping_ctx;
	struct u64map tracked;
	struct bmap build_ids;	/* path -> cached uint8_t[1 + 20] (size, id) */
	char *alias_from, *alias_to;	/* sideband__set_alias() */
	uint64_t lost;
	uint8_t *tmp;
	size_t tmp_cap;
	bool procenv;		/* PROC_ENV after each exec (not for ring tests) */
	/* execs whose environment read empty (caught mid-exec): pid << 32 ^
	 * tries -> the exec's time; tried again at the next drains */
	struct u64map env_pending;
};

/* Drains an exec's environment is tried at (about 20 ms each, or 1 ms). */
#define SB_ENV_TRIES	50

struct sb_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct sb_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct sb_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

struct sb_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

static void sideband__init(struct sideband *sb, struct xpu_writer *w, struct record_bpf *b,
			   int max_rings)
{
	sb->w = w;
	sb->b = b;
	u64map__init(&sb->tracked);
	u64map__init(&sb->env_pending);
	bmap__init(&sb->build_ids);
	sb->rings = xcalloc(max_rings, sizeof(*sb->rings));
}

int sideband__open_rings(struct sideband **out, struct xpu_writer *w, struct record_bpf *b,
			 struct perf_event_mmap_page **meta, uint8_t **data, int nr, uint64_t size)
{
	struct sideband *sb;

	*out = NULL;
	if (nr < 1 || !size || (size & (size - 1)))
		return -EINVAL;
	sb = xzalloc(sizeof(*sb));
	*out = sb;
	sideband__init(sb, w, b, nr);
	sb->mem = true;
	for (int i = 0; i < nr; i++)
		sb->rings[sb->nr++] = (struct sb_ring){ .fd = -1, .meta = meta[i], .data = data[i],
							.size = size };
	return 0;
}

int sideband__open(struct sideband **out, struct xpu_writer *w, struct record_bpf *b)
{
	struct sideband *sb = xzalloc(sizeof(*sb));
	int ncpu = libbpf_num_possible_cpus(), ret;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1, .mmap2 = 1, .build_id = 1,
		.comm = 1, .comm_exec = 1, .task = 1,
		.sample_id_all = 1,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC,
		.watermark = 1, .wakeup_watermark = SB_DATA_PAGES * 4096 / 4,
	};

	*out = sb;
	sideband__init(sb, w, b, ncpu);
	sb->procenv = true;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct sb_ring *r = &sb->rings[sb->nr];
		void *base;

		r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0) {
			if (errno == ENODEV)
				continue;
			ret = -errno;
			error("cannot open the sideband perf event on CPU %d: %s", cpu, strerror(-ret));
			return ret;
		}
		base = mmap(NULL, (SB_DATA_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (base == MAP_FAILED) {
			ret = -errno;
			close(r->fd);
			error("cannot map the sideband ring of CPU %d: %s", cpu, strerror(-ret));
			return ret;
		}
		r->meta = base;
		r->data = (uint8_t *)base + page;
		r->size = SB_DATA_PAGES * page;
		sb->nr++;
	}
	return 0;
}

static bool sideband__tracked(struct sideband *sb, uint32_t pid)
{
	if (u64map__find(&sb->tracked, pid))
		return true;
	if (sb->b && record_bpf__is_tracked(sb->b, pid)) {
		*u64map__slot(&sb->tracked, pid) = 1;
		return true;
	}
	return false;
}

void sideband__set_python(struct sideband *sb, struct python *py)
{
	sb->py = py;
}

void sideband__set_on_mapping(struct sideband *sb,
			      void (*fn)(void *ctx, pid_t pid, const char *path, const uint8_t *bid,
					 size_t bid_size), void *ctx)
{
	sb->on_mapping = fn;
	sb->on_mapping_ctx = ctx;
}

void sideband__track(struct sideband *sb, pid_t pid)
{
	*u64map__slot(&sb->tracked, pid) = 1;
}

int sideband__nr_fds(struct sideband *sb)
{
	return sb->nr;
}

int sideband__fd(struct sideband *sb, int i)
{
	return sb->rings[i].fd;
}

uint64_t sideband__lost(struct sideband *sb)
{
	return sb->lost;
}

bool sideband__seen(struct sideband *sb, pid_t pid)
{
	return u64map__find(&sb->tracked, (uint64_t)pid) != NULL;
}

/* Points at the record at pos, copied out when it wraps around the ring. */
static const struct perf_event_header *sb_ring__record(struct sideband *sb, struct sb_ring *r,
							uint64_t pos)
{
	uint64_t off = pos & (r->size - 1);
	struct perf_event_header h;

	if (off + sizeof(h) <= r->size) {
		memcpy(&h, r->data + off, sizeof(h));
	} else {
		size_t first = r->size - off;

		memcpy(&h, r->data + off, first);
		memcpy((char *)&h + first, r->data, sizeof(h) - first);
	}
	if (h.size < sizeof(h))
		return NULL;
	if (off + h.size <= r->size)
		return (const void *)(r->data + off);
	sb->tmp = xgrow(sb->tmp, &sb->tmp_cap, h.size, 1);
	memcpy(sb->tmp, r->data + off, r->size - off);
	memcpy(sb->tmp + (r->size - off), r->data, h.size - (r->size - off));
	return (const void *)sb->tmp;
}

static uint64_t sb__trailer_time(const struct perf_event_header *h)
{
	uint64_t t;

	memcpy(&t, (const char *)h + h->size - sizeof(t), sizeof(t));
	return t;
}

static void sideband__mmap(struct sideband *sb, const struct sb_mmap2 *m)
{
	size_t max = m->h.size - sizeof(*m) - 16;	/* minus the sample_id trailer */
	const char *path = m->filename;
	struct xpu_mmap x = { 0 };
	struct iovec iov[2];

	if (!(m->prot & PROT_EXEC) || m->h.size < sizeof(*m) + 16 || !memchr(path, 0, max))
		return;
	if (sb->alias_from && !strcmp(path, sb->alias_from))
		path = sb->alias_to;
	x.time = sb__trailer_time(&m->h);
	x.pid = m->pid;
	x.tid = m->tid;
	x.start = m->addr;
	x.len = m->len;
	x.pgoff = m->pgoff;
	x.prot = m->prot;
	x.flags = m->flags;
	if (m->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		x.build_id_size = m->build_id_size > XPU_MMAP_BUILD_ID_MAX ? XPU_MMAP_BUILD_ID_MAX
									     : m->build_id_size;
		memcpy(x.build_id, m->build_id, x.build_id_size);
	} else if (path[0] == '/') {
		bool found;
		void **slot = bmap__slot(&sb->build_ids, path, strlen(path), &found);
		uint8_t *c = *slot;

		if (!found) {
			c = xzalloc(1 + XPU_MMAP_BUILD_ID_MAX);
			buildid__read_file(path, c + 1, &c[0]);
			*slot = c;
		}
		x.build_id_size = c[0];
		memcpy(x.build_id, c + 1, c[0]);
	}
	iov[0] = (struct iovec){ &x, sizeof(x) };
	iov[1] = (struct iovec){ (void *)path, strlen(path) + 1 };
	xpu_writer__addv(sb->w, XPU_REC_MMAP, 0, iov, 2);
	if (sb->py && path[0] == '/')
		python__mapping(sb->py, m->pid, path, m->addr, m->pgoff, x.time);
	if (sb->b && path[0] == '/')
		record_bpf__mapping(sb->b, (pid_t)m->pid, m->addr, m->addr + m->len, path);
	if (sb->on_mapping)
		sb->on_mapping(sb->on_mapping_ctx, (pid_t)m->pid, path, x.build_id,
			       x.build_id_size);
}

static void sideband__record(struct sideband *sb, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct sb_mmap2 *m = (const void *)h;

		if (h->size >= sizeof(*m) && sideband__tracked(sb, m->pid))
			sideband__mmap(sb, m);
		break;
	}
	case PERF_RECORD_COMM: {
		const struct sb_comm *c = (const void *)h;
		struct xpu_comm x = { 0 };
		size_t n;

		if (h->size < sizeof(*c) + 16 || !sideband__tracked(sb, c->pid))
			break;
		x.time = sb__trailer_time(h);
		x.pid = c->pid;
		x.tid = c->tid;
		x.flags = (h->misc & PERF_RECORD_MISC_COMM_EXEC) ? XPU_COMM_EXEC : 0;
		if (x.flags & XPU_COMM_EXEC)
			python__exec(sb->py, c->pid, x.time);
		n = strnlen(c->comm, h->size - sizeof(*c) - 16);
		memcpy(x.comm, c->comm, n < sizeof(x.comm) ? n : sizeof(x.comm) - 1);
		xpu_writer__add(sb->w, XPU_REC_COMM, &x, sizeof(x));
		/* the new image's environment: which rank it is (torchrun's
		 * workers get RANK at their exec). Read now, at the drain: a
		 * process gone since gets none and its parent's in reports. */
		if (x.flags & XPU_COMM_EXEC && sb->procenv &&
		    procenv__write(sb->w, c->pid, x.time) == -ENODATA)
			/* read between the exec's start (its COMM) and its
			 * new stack: the reader is woken that early now */
			*u64map__slot(&sb->env_pending, (uint64_t)c->pid << 32) = x.time;
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct sb_task *t = (const void *)h;

		if (h->size < sizeof(*t) || !sideband__tracked(sb, t->pid))
			break;
		if (h->type == PERF_RECORD_FORK) {
			struct xpu_fork x = { t->time, t->pid, t->tid, t->ppid, t->ptid };

			if (t->pid != t->ppid)	/* a new process: its parent's memory */
				python__fork(sb->py, t->ppid, t->pid, t->time);

			xpu_writer__add(sb->w, XPU_REC_FORK, &x, sizeof(x));
		} else {
			struct xpu_exit x = { .time = t->time, .pid = t->pid, .tid = t->tid };

			xpu_writer__add(sb->w, XPU_REC_EXIT, &x, sizeof(x));
			if (sb->b && t->pid == t->tid)	/* a new process of that pid needs its own */
				record_bpf__exit(sb->b, (pid_t)t->pid);
		}
		break;
	}
	case PERF_RECORD_LOST: {
		const struct sb_lost *l = (const void *)h;

		if (h->size >= sizeof(*l))
			sb->lost += l->lost;
		break;
	}
	}
}

/* The environments that read empty at their exec's COMM, once more (at
 * most 32 waiting; more are dropped: their processes get their parent's). */
static void sideband__env_retry(struct sideband *sb)
{
	uint64_t key, time, again[2 * 32];
	size_t iter = 0;
	int n = 0;

	if (!sb->env_pending.len)
		return;
	while (u64map__next(&sb->env_pending, &iter, &key, &time)) {
		pid_t pid = (pid_t)(key >> 32);
		uint32_t tries = (uint32_t)key + 1;

		if (procenv__write(sb->w, pid, time) == -ENODATA && tries < SB_ENV_TRIES &&
		    n < (int)(sizeof(again) / sizeof(again[0]))) {
			again[n++] = (uint64_t)pid << 32 | tries;
			again[n++] = time;
		}
	}
	u64map__exit(&sb->env_pending);
	u64map__init(&sb->env_pending);
	for (int i = 0; i < n; i += 2)
		*u64map__slot(&sb->env_pending, again[i]) = again[i + 1];
}

int sideband__drain(struct sideband *sb)
{
	/* Pass 1: new processes of tracked parents, from every ring. */
	for (int i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->rings[i];
		uint64_t pos = r->meta->data_tail;

		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		while (pos < r->head) {
			const struct perf_event_header *h = sb_ring__record(sb, r, pos);
			const struct sb_task *t = (const void *)h;

			if (!h)
				break;
			if (h->type == PERF_RECORD_FORK && h->size >= sizeof(*t) &&
			    t->pid != t->ppid && sideband__tracked(sb, t->ppid))
				sideband__track(sb, t->pid);
			pos += h->size;
		}
	}
	/* Pass 2: write what belongs to tracked processes, free the space. */
	for (int i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->rings[i];
		uint64_t pos = r->meta->data_tail;

		while (pos < r->head) {
			const struct perf_event_header *h = sb_ring__record(sb, r, pos);

			if (!h) {	/* cannot happen with a sane kernel: resync */
				pos = r->head;
				break;
			}
			sideband__record(sb, h);
			pos += h->size;
		}
		__atomic_store_n(&r->meta->data_tail, pos, __ATOMIC_RELEASE);
	}
	sideband__env_retry(sb);
	return 0;
}

static void sideband__free_val(void *v)
{
	free(v);
}

void sideband__close(struct sideband *sb)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!sb)
		return;
	for (int i = 0; i < sb->nr && !sb->mem; i++) {
		munmap(sb->rings[i].meta, (SB_DATA_PAGES + 1) * page);
		close(sb->rings[i].fd);
	}
	free(sb->rings);
	u64map__exit(&sb->tracked);
	u64map__exit(&sb->env_pending);
	bmap__exit(&sb->build_ids, sideband__free_val);
	free(sb->tmp);
	free(sb->alias_from);
	free(sb->alias_to);
	free(sb);
}

void sideband__set_alias(struct sideband *sb, const char *from, const char *to)
{
	free(sb->alias_from);
	free(sb->alias_to);
	sb->alias_from = from ? xstrdup(from) : NULL;
	sb->alias_to = from && to ? xstrdup(to) : NULL;
}
