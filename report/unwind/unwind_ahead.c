// SPDX-License-Identifier: MIT
/* A chunk's stacks unwound on several threads before pass 2 reads them. See
 * unwind_ahead.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/knobs.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "format/reader.h"
#include "format/xpu_format.h"
#include "report/unwind/unwind_ahead.h"

#define UNWIND_AHEAD_MAX_THREADS 4

struct ua_job {
	const uint64_t *regs;		/* the key: where the record's registers are */
	struct proc *proc;
	uint32_t pid;
	uint64_t time, sig;
	struct xpu_stack_view v;
	int nr;				/* frames found, or -1 */
	int thread;			/* whose buffer holds them */
	size_t at;			/* where in it */
};

struct ua_thread {
	struct unwind_ahead *ua;
	struct unwind_worker *w;
	pthread_t th;
	bool started;
	struct unwind_frame *buf;	/* this chunk's frames found by this thread */
	size_t len, cap;
	struct unwind_frame *scratch;	/* max frames */
};

struct unwind_ahead {
	struct machine *m;
	int max;
	pthread_rwlock_t machine_lock;	/* the workers' lock around the machine */
	int nr_threads;			/* the caller's included */
	struct ua_thread *t;
	/* one round per chunk: the caller sets jobs and bumps round */
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	uint64_t round;
	int busy;			/* workers not done with this round */
	bool stop;
	struct ua_job *jobs;
	size_t nr_jobs, jobs_cap;
	size_t next;			/* the next job to take (atomic) */
	struct u64map of_regs;		/* regs pointer -> job index + 1 */
	uint64_t stacks, taken;		/* unwound here; of them, used (-v) */
};

static int unwind_ahead__nr_threads(void)
{
	long long n = knob__int(KNOB_UNWIND_THREADS);

	/* Two where there are 4 CPUs or more: the reader's decode threads and
	 * the rest of the machine need the others (on 2 CPUs a second
	 * unwinder made a gcc report's unwinding slower, 19 -> 34 ms), and on
	 * an H100 host a GPT-2 report took 0.67 s median with 2, 0.69 with 4
	 * (each worker finds every pc's rule once for itself). */
	if (n < 0)
		n = sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? 2 : 1;
	return n < 1 ? 1 : n > UNWIND_AHEAD_MAX_THREADS ? UNWIND_AHEAD_MAX_THREADS : (int)n;
}

/* Takes jobs until none is left. */
static void unwind_ahead__work(struct ua_thread *t)
{
	struct unwind_ahead *ua = t->ua;
	size_t i;

	t->len = 0;
	while ((i = __atomic_fetch_add(&ua->next, 1, __ATOMIC_RELAXED)) < ua->nr_jobs) {
		struct ua_job *j = &ua->jobs[i];
		int nr = unwind_worker__stack(t->w, j->proc, j->time, j->sig, &j->v, t->scratch,
					      ua->max);

		j->nr = nr;
		if (nr <= 0)
			continue;
		t->buf = xgrow(t->buf, &t->cap, t->len + (size_t)nr, sizeof(*t->buf));
		memcpy(t->buf + t->len, t->scratch, (size_t)nr * sizeof(*t->buf));
		j->thread = (int)(t - ua->t);
		j->at = t->len;
		t->len += (size_t)nr;
	}
}

static void *unwind_ahead__thread(void *arg)
{
	struct ua_thread *t = arg;
	struct unwind_ahead *ua = t->ua;
	uint64_t seen = 0;

	pthread_mutex_lock(&ua->lock);
	for (;;) {
		while (ua->round == seen && !ua->stop)
			pthread_cond_wait(&ua->wake, &ua->lock);
		if (ua->stop)
			break;
		seen = ua->round;
		pthread_mutex_unlock(&ua->lock);
		unwind_ahead__work(t);
		pthread_mutex_lock(&ua->lock);
		if (--ua->busy == 0)
			pthread_cond_signal(&ua->done);
	}
	pthread_mutex_unlock(&ua->lock);
	return NULL;
}

struct unwind_ahead *unwind_ahead__new(struct machine *m, int max)
{
	int n = unwind_ahead__nr_threads();
	struct unwind_ahead *ua;

	if (n <= 1 || unwind__checking() || max <= 0)
		return NULL;
	ua = xzalloc(sizeof(*ua));
	ua->m = m;
	ua->max = max;
	pthread_rwlock_init(&ua->machine_lock, NULL);
	pthread_mutex_init(&ua->lock, NULL);
	pthread_cond_init(&ua->wake, NULL);
	pthread_cond_init(&ua->done, NULL);
	u64map__init(&ua->of_regs);
	ua->t = xcalloc((size_t)n, sizeof(*ua->t));
	for (int i = 0; i < n; i++) {
		struct ua_thread *t = &ua->t[i];

		t->ua = ua;
		t->w = unwind_worker__new(m, &ua->machine_lock);
		t->scratch = xmalloc((size_t)max * sizeof(*t->scratch));
		ua->nr_threads = i + 1;
		if (i && pthread_create(&t->th, NULL, unwind_ahead__thread, t) == 0)
			t->started = true;
		else if (i)
			break;	/* the threads started do the work */
	}
	return ua;
}

void unwind_ahead__free(struct unwind_ahead *ua)
{
	if (!ua)
		return;
	debug(1, "unwind: %llu stacks unwound ahead on %d threads, %llu of them used",
	      (unsigned long long)ua->stacks, unwind_ahead__threads(ua),
	      (unsigned long long)ua->taken);
	pthread_mutex_lock(&ua->lock);
	ua->stop = true;
	pthread_cond_broadcast(&ua->wake);
	pthread_mutex_unlock(&ua->lock);
	for (int i = 0; i < ua->nr_threads; i++) {
		struct ua_thread *t = &ua->t[i];

		if (t->started)
			pthread_join(t->th, NULL);
		unwind_worker__free(t->w);
		free(t->buf);
		free(t->scratch);
	}
	free(ua->t);
	free(ua->jobs);
	u64map__exit(&ua->of_regs);
	pthread_cond_destroy(&ua->wake);
	pthread_cond_destroy(&ua->done);
	pthread_mutex_destroy(&ua->lock);
	pthread_rwlock_destroy(&ua->machine_lock);
	free(ua);
}

int unwind_ahead__threads(const struct unwind_ahead *ua)
{
	int n = 1;

	for (int i = 1; ua && i < ua->nr_threads; i++)
		n += ua->t[i].started;
	return ua ? n : 1;
}

/* The stack part of a record that pass 2 unwinds, with its process and time. */
static bool unwind_ahead__stack_of(uint16_t type, const uint8_t *body, size_t size,
				   uint32_t *pid, uint64_t *time, struct xpu_stack_view *v)
{
	size_t off;

	switch (type) {
	case XPU_REC_SAMPLE: {
		const struct xpu_sample *smp = (const void *)body;

		off = offsetof(struct xpu_sample, stack);
		*pid = smp->pid;
		*time = smp->time;
		break;
	}
	case XPU_REC_OFFCPU: {
		const struct xpu_offcpu *o = (const void *)body;

		off = offsetof(struct xpu_offcpu, stack);
		*pid = o->pid;
		*time = o->start;
		break;
	}
	case XPU_REC_GPU_CORR: {
		const struct xpu_gpu_corr *c = (const void *)body;

		off = offsetof(struct xpu_gpu_corr, stack);
		*pid = c->pid;
		*time = c->time;
		break;
	}
	default:
		return false;
	}
	if (size < off || xpu_stack__parse(body + off, size - off, v))
		return false;
	/* recorded PCs (fp mode) are not unwound */
	return v->hdr->nr_regs && !v->hdr->nr_user_ips;
}

void unwind_ahead__chunk(struct unwind_ahead *ua, const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf ? p + len : p;

	ua->nr_jobs = 0;
	u64map__exit(&ua->of_regs);
	u64map__init(&ua->of_regs);
	while (end - p >= (ptrdiff_t)sizeof(struct xpu_record_header)) {
		struct xpu_record_header rh;
		struct ua_job *j;
		struct xpu_stack_view v;
		struct proc *proc;
		uint32_t pid;
		uint64_t time;

		memcpy(&rh, p, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size > (size_t)(end - p))
			break;	/* checked when the chunk was read: not met */
		if (xpu_record__min_size(rh.type) &&
		    unwind_ahead__stack_of(rh.type, p + sizeof(rh), rh.size - sizeof(rh), &pid,
					   &time, &v) &&
		    (proc = machine__find_proc(ua->m, pid)) != NULL) {
			ua->jobs = xgrow(ua->jobs, &ua->jobs_cap, ua->nr_jobs + 1, sizeof(*ua->jobs));
			j = &ua->jobs[ua->nr_jobs++];
			*j = (struct ua_job){
				.regs = v.regs, .proc = proc, .pid = pid, .time = time,
				.sig = unwind__maps_sig(ua->m, pid, time), .v = v, .nr = -1,
			};
			*u64map__slot(&ua->of_regs, (uint64_t)(uintptr_t)v.regs) = ua->nr_jobs;
		}
		p += rh.size;
	}
	if (!ua->nr_jobs)
		return;
	ua->next = 0;
	pthread_mutex_lock(&ua->lock);
	ua->busy = unwind_ahead__threads(ua) - 1;
	ua->round++;
	pthread_cond_broadcast(&ua->wake);
	pthread_mutex_unlock(&ua->lock);
	unwind_ahead__work(&ua->t[0]);
	pthread_mutex_lock(&ua->lock);
	while (ua->busy > 0)
		pthread_cond_wait(&ua->done, &ua->lock);
	pthread_mutex_unlock(&ua->lock);
	for (size_t i = 0; i < ua->nr_jobs; i++)
		ua->stacks += ua->jobs[i].nr > 0;
}

int unwind_ahead__get(struct unwind_ahead *ua, const uint64_t *regs, uint32_t pid,
		      uint64_t time, struct unwind_frame *frames, int max)
{
	const uint64_t *slot = u64map__find(&ua->of_regs, (uint64_t)(uintptr_t)regs);
	const struct ua_job *j;

	if (!slot || max != ua->max)
		return -1;
	j = &ua->jobs[*slot - 1];
	if (j->nr <= 0 || j->pid != pid || j->time != time)
		return -1;
	memcpy(frames, ua->t[j->thread].buf + j->at, (size_t)j->nr * sizeof(*frames));
	ua->taken++;
	return j->nr;
}
