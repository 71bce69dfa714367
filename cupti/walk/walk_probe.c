// SPDX-License-Identifier: MIT
/*
 * The launch walk of Documentation/design-gpu.md ("The capture path this
 * calls for"), the default: launch stacks walked in the launching thread
 * with xpu-record's own rules, instead of the marker's uprobe.
 *
 * XPU_CUPTI_MARKER=walk   set by xpu-record --launch-stacks=walk (which
 *                         also hands each CUDA process a rule table with
 *                         the channel's ready byte, record/unwind/launch_rules.c):
 *                         at each marked call, walk the stack from the
 *                         state the marker would have had (rsp and rbp as
 *                         CUPTI entered the callback, which tail-calls the
 *                         marker: cupti_callbacks.c) with the table's simple
 *                         rules (common/unwind_simple.h), or check it
 *                         against the thread's memo of earlier walks. A
 *                         walk that reaches its end becomes the launch's
 *                         GPU_CORR record, with the thread's Python frames
 *                         as a PY_STACK before it (walk_python.c), sent with
 *                         the activity records; a pc not in the table,
 *                         code bytes that differ from the rule's, a read
 *                         outside the copy the marker would have taken, or
 *                         a Python layout not yet proved calls the marker,
 *                         whose stack xpu-record unwinds and learns from.
 * XPU_CUPTI_MARKER=walk+  both, always: the marker's stacks, to compare
 *                         (XPU_CUPTI_UNW_DUMP=FILE: every 997th walk's
 *                         frames with its correlation id).
 *
 * Reads stay inside [rsp, rsp + 131064) and the thread's own stack, the
 * bytes the marker's copy would hold, so the walk ends where the
 * recorder's would and never faults; a launch whose rsp is not in the
 * thread's stack as pthread_getattr_np() gives it (a sigaltstack, a
 * coroutine's stack) takes the marker. Its buffers are the thread's, on
 * the heap (a few hundred bytes of the application's stack); a launch made
 * during a walk (a signal handler's) takes the marker. At exit its counts go into the
 * trace (META cupti.launch_walk), and on stderr with XPU_CUPTI_VERBOSE=1.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unwind_simple_walk.h"
#include "common/unwind_table.h"
#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "walk_probe.h"
#include "walk_python.h"
#include "cupti/channel/wire.h"

#define WALK_MAX_FRAMES 512		/* the report's CALLCHAIN_MAX */
#define WALK_COPY_MAX 131064		/* the marker's default copy */
#define WALK_DUMP_EVERY 997
#define WALK_URGENT_GAP_NS 1000000	/* a thread's wakeups: one a millisecond at most */
#define WALK_DUMP_MISSES 64		/* the first pcs with no rule, then every 997th */

static const struct unwind_table_hdr *walk_table;
static struct xpu_walk_py walk_py;	/* the interpreter's layout, once proved: */
static _Atomic bool walk_py_ready;	/* set (release) after walk_py is written */
static pthread_mutex_t walk_py_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct xpu_walk_hdr *walk_hdr;	/* the shared header (py.valid raised there) */
static _Atomic bool walk_py_process;	/* CPython is in this process, its frames wanted */
static uint32_t walk_pid;
static _Atomic uint64_t walk_py_stacks, walk_py_frames;
static _Atomic uint64_t walk_py_wait;	/* launches left to the marker: layout not proved yet */
static struct xpu_client *walk_client;	/* where walks' records go; NULL: walk+ */
static bool walk_no_code_check;		/* XPU_CUPTI_WALK_NO_CODE=1: its price, for benchmarks */
static bool walk_memo_on = true;	/* XPU_CUPTI_WALK_MEMO=0: always walk (benchmarks) */
static bool walk_also_marker;
static FILE *walk_dump;
static bool walk_verbose;		/* XPU_CUPTI_VERBOSE=1 (xpu-record -v): the counts on stderr */
static bool walk_finished;
static _Atomic uint64_t walk_walks, walk_hits, walk_frames, walk_no_rule, walk_stale,
	walk_outside, walk_ns, walk_memo_hits;

static inline uint64_t walk__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The memo: a thread's last complete walks from up to WALK_MEMOS start
 * states (rsp, and rbp where the walk used its value), each with every word
 * it read, stack and code, in the
 * order it read them. A walk from the same state whose words all read the
 * same again gives the same frames (the rules of a pc never change in the
 * table), so it is checked instead of walked: no rule lookups. The order
 * makes the check safe: a code word is read only after the stack word that
 * gave its pc read the same, so that pc is a live return address and its
 * code is mapped. (Taking an earlier walk's upper frames where a walk from
 * a new start meets them was built and timed: slower on PyTorch, so not
 * here; Documentation/design-gpu.md.)
 */
#define WALK_MEMOS 8
#define WALK_MEMO_READS 256
#define WALK_MEMO_FRAMES 128

struct walk_memo {
	uint64_t sp, bp;		/* sp 0: empty; several may share one */
	bool bp_used;			/* false: the frames did not depend on bp */
	unsigned nr_reads, nr_frames;
	struct unwind_simple_read reads[WALK_MEMO_READS];
	uint64_t pcs[WALK_MEMO_FRAMES];
};

/* A thread's walk state, on the heap: nothing of it on the application's
 * stack, whose threads may have little (the walk runs deep in a launch). */
struct walk_memos {
	struct walk_memo m[WALK_MEMOS];
	unsigned next;			/* the slot a new walk takes: round robin */
	bool busy;			/* a walk in progress (a launch from a signal
					 * handler during one takes the marker) */
	uint64_t urgent_at;		/* when this thread last asked for a wakeup */
	struct unwind_frame frames[WALK_MAX_FRAMES];
	uint64_t pcs[WALK_MAX_FRAMES];
	struct unwind_simple_read log[WALK_MEMO_READS];
	uint64_t rec[(sizeof(struct xpu_gpu_corr) + 8 * WALK_MAX_FRAMES) / 8];	/* GPU_CORR */
	uint64_t py[(sizeof(struct xpu_py_stack) +
		     sizeof(struct xpu_py_frame) * XPU_WALK_PY_FRAMES) / 8];	/* PY_STACK */
};

struct walk_ctx {
	uint64_t lo, hi;		/* readable: [lo, hi) */
	bool outside;			/* a read outside it */
	bool stale;			/* code bytes that differ from the rule's */
	struct unwind_simple_trail *trail;	/* for a memo, or NULL */
	uint64_t miss_pc;		/* the pc with no rule, for the dump */
};

static pthread_key_t walk_memo_key;
static bool walk_key_ok;
static __thread struct walk_memos *tls_memos;	/* a thread's, made at its first walk */

static struct walk_memos *walk__memos(void)
{
	if (!tls_memos && walk_key_ok && (tls_memos = calloc(1, sizeof(*tls_memos))))
		pthread_setspecific(walk_memo_key, tls_memos);	/* freed at the thread's end */
	return tls_memos;
}

/* A marker call for a walk that found no rule (or no proved Python layout
 * yet): XPU_WALK_MARKER_URGENT, so that the recorder is woken to unwind its
 * stack and publish the rules at once, not at its next poll (20 ms: a
 * burst of launches from new code would all miss until then); at most one
 * a millisecond a thread, so that code the walk never takes (a pc with no
 * simple rule) costs a wakeup a millisecond at most. */
static int walk__miss(struct walk_memos *ts)
{
	uint64_t now = walk__now();

	if (now - ts->urgent_at < WALK_URGENT_GAP_NS)
		return XPU_WALK_MARKER;
	ts->urgent_at = now;
	return XPU_WALK_MARKER_URGENT;
}

/* XPU_CUPTI_UNW_DUMP: a walk that met a pc with no rule (dladdr() names
 * its file; outside a walk, so the lock it may take is not held by us) */
static void walk__dump_miss(uint64_t corr, uint64_t pc)
{
	Dl_info info;

	if (pc && dladdr((void *)(uintptr_t)pc, &info) && info.dli_fname)
		fprintf(walk_dump, "corr %llu miss %s+%#llx\n", (unsigned long long)corr,
			info.dli_fname, (unsigned long long)(pc - (uint64_t)(uintptr_t)info.dli_fbase));
	else
		fprintf(walk_dump, "corr %llu miss %#llx\n", (unsigned long long)corr,
			(unsigned long long)pc);
}

/* The frames of the memo of (sp, bp) when its reads still hold, or -1. */
static int walk__check_memo(struct walk_memo *m, uint64_t *pcs)
{
	for (unsigned i = 0; i < m->nr_reads; i++)
		if (*(const uint64_t *)(uintptr_t)m->reads[i].addr != m->reads[i].val)
			return -1;
	memcpy(pcs, m->pcs, m->nr_frames * sizeof(*pcs));
	return (int)m->nr_frames;
}

/* This thread's stack, [lo, hi); hi 0: not known yet, or not to be known */
static __thread uint64_t tls_stack_lo, tls_stack_hi;
static __thread bool tls_stack_asked;

/* Whether sp lies in this thread's own stack (not a sigaltstack, a
 * coroutine's or a fiber's heap stack): only then is every byte from sp to
 * the stack's end mapped, and the walk's reads safe. *hi: that end. */
static bool walk__stack(uint64_t sp, uint64_t *hi)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (!tls_stack_asked) {
		tls_stack_asked = true;
		if (!pthread_getattr_np(pthread_self(), &a)) {
			if (!pthread_attr_getstack(&a, &addr, &size) && size) {
				tls_stack_lo = (uint64_t)(uintptr_t)addr;
				tls_stack_hi = tls_stack_lo + size;
			}
			pthread_attr_destroy(&a);
		}
	}
	*hi = tls_stack_hi;
	return tls_stack_hi && sp >= tls_stack_lo && sp < tls_stack_hi;
}

static inline __attribute__((always_inline)) bool walk__rule(uint64_t pc, struct unwind_simple_rule *out,
							      void *arg)
{
	struct walk_ctx *c = arg;
	const struct unwind_table_entry *e = unwind_table__find(walk_table, pc);

	if (!e) {
		c->miss_pc = pc;
		return false;
	}
	/* the code the rule was read for (its mapping may have been replaced):
	 * one 8-byte compare */
	{
		uint64_t want, have;

		_Static_assert(UNWIND_TABLE_CODE == 8, "one word of code");
		if (walk_no_code_check)
			goto rule;
		memcpy(&want, e->code, 8);
		memcpy(&have, (const void *)(uintptr_t)(pc + 1 - UNWIND_TABLE_CODE), 8);
		if (want != have) {
			c->stale = true;
			return false;
		}
		unwind_simple__log(c->trail, pc + 1 - UNWIND_TABLE_CODE, have);
	}
rule:
	*out = e->rule;
	return true;
}

static inline __attribute__((always_inline)) bool walk__read(uint64_t addr, uint64_t *val, void *arg)
{
	struct walk_ctx *c = arg;

	if (addr < c->lo || addr > c->hi - 8 || addr % 8) {
		c->outside = true;
		return false;
	}
	*val = *(const uint64_t *)(uintptr_t)addr;
	return true;
}

/* The walk's counts, one line: for stderr (-v) and the trace's META. */
static void walk__summary(char *buf, size_t len)
{
	uint64_t n = atomic_load(&walk_walks), hits = atomic_load(&walk_hits);
	uint64_t py = atomic_load(&walk_py_stacks);

	snprintf(buf, len, "pid %u: %llu walks, %llu to their end (%.1f frames mean), "
		 "%llu met a pc not in the table, %llu stale code, %llu a read outside the copy "
		 "or not on the thread's stack; table: %u rules; %llu checked against a memo "
		 "instead; %.0f ns a walk (timed inside, clock reads included); %llu Python "
		 "stacks (%.1f frames mean), %llu launches before the Python layout was proved",
		 walk_pid, (unsigned long long)n, (unsigned long long)hits,
		 hits ? (double)atomic_load(&walk_frames) / hits : 0.0,
		 (unsigned long long)atomic_load(&walk_no_rule),
		 (unsigned long long)atomic_load(&walk_stale),
		 (unsigned long long)atomic_load(&walk_outside),
		 walk_table ? (unsigned)walk_table->nr_used : 0,
		 (unsigned long long)atomic_load(&walk_memo_hits),
		 n ? (double)atomic_load(&walk_ns) / n : 0.0,
		 (unsigned long long)py, py ? (double)atomic_load(&walk_py_frames) / py : 0.0,
		 (unsigned long long)atomic_load(&walk_py_wait));
}

void xpu_walk_probe__finish(struct xpu_client *client)
{
	char line[512];

	if (!walk_table || walk_finished)
		return;
	walk_finished = true;
	walk__summary(line, sizeof(line));
	/* a process that made no CUDA call keeps quiet: the report shows the
	 * last process's value of a key */
	if (atomic_load(&walk_walks) || atomic_load(&walk_py_wait))
		xpu_client__meta(client, XPU_META_CUPTI_LAUNCH_WALK, line);
	if (walk_verbose)
		fprintf(stderr, "xpu-cupti walk probe: %s\n", line);
	if (walk_dump)
		fclose(walk_dump);
	walk_dump = NULL;
}

int xpu_walk_probe__init(const char *spec, struct xpu_client *client, uint32_t pid)
{
	int rules_fd = client->rules_fd;
	const struct xpu_walk_hdr *h;
	struct stat st;
	uint8_t *mem;
	const char *dump;

	if (!spec || strncmp(spec, "walk", 4) || (spec[4] && strcmp(spec + 4, "+")))
		return 0;
	if (rules_fd < 0 || fstat(rules_fd, &st) || (size_t)st.st_size < XPU_WALK_TABLE_OFF ||
	    (mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, rules_fd, 0)) == MAP_FAILED)
		return -1;
	h = (const struct xpu_walk_hdr *)mem;
	walk_table = h->magic == XPU_WALK_MAGIC && h->table_off == XPU_WALK_TABLE_OFF ?
		     unwind_table__open(mem + h->table_off, (size_t)st.st_size - h->table_off) : NULL;
	if (!walk_table) {
		munmap(mem, (size_t)st.st_size);
		return -1;
	}
	walk_hdr = h;
	/* Python frames only where the recording reads them (the marker's
	 * stacks then have none either) */
	walk_py_process = !(h->flags & XPU_WALK_NO_PYTHON) && xpu_walk_python__init();
	walk_pid = pid;
	walk_also_marker = spec[4] == '+';
	walk_client = walk_also_marker ? NULL : client;
	walk_no_code_check = getenv("XPU_CUPTI_WALK_NO_CODE") && !strcmp(getenv("XPU_CUPTI_WALK_NO_CODE"), "1");
	walk_memo_on = !(getenv("XPU_CUPTI_WALK_MEMO") && !strcmp(getenv("XPU_CUPTI_WALK_MEMO"), "0"));
	/* an attach after an earlier one (cupti/attach.h): the counts are this
	 * recording's; the memos stay (a pc's frames do not change) */
	if (!walk_key_ok)
		walk_key_ok = !pthread_key_create(&walk_memo_key, free);
	walk_finished = false;
	atomic_store(&walk_py_ready, false);
	walk_walks = walk_hits = walk_frames = walk_no_rule = walk_stale = walk_outside = 0;
	walk_ns = walk_memo_hits = walk_py_stacks = walk_py_frames = walk_py_wait = 0;
	dump = getenv("XPU_CUPTI_UNW_DUMP");
	if (dump && *dump)
		walk_dump = fopen(dump, "w");
	walk_verbose = getenv(XPU_CUPTI_VERBOSE_ENV) && !strcmp(getenv(XPU_CUPTI_VERBOSE_ENV), "1");
	return 1;
}

/* The walk's GPU_CORR record, as xpu-record writes the marker's: the
 * clock of bpf_ktime_get_ns, the frames (XPU_STACK_UNWOUND); and the
 * PY_STACK before it where the thread runs Python, queued together. */
static void walk__emit(struct walk_memos *ts, uint64_t corr, uint32_t cbid, uint32_t domain,
		       const uint64_t *pcs, unsigned nr)
{
	struct xpu_gpu_corr r = {
		.time = walk__now(), .pid = walk_pid, .tid = (uint32_t)gettid(),
		.domain = domain, .correlation_id = corr, .cbid = cbid,
		.stack = { .nr_user_ips = (uint16_t)nr, .arch = XPU_ARCH_X86_64,
			   .flags = XPU_STACK_UNWOUND | XPU_STACK_PRUNED | XPU_STACK_PRUNED_CFI },
	};
	struct xpu_py_stack py = { .time = r.time, .pid = r.pid, .tid = r.tid,
				   .version = walk_py.version };
	uint8_t *buf = (uint8_t *)ts->rec, *pbuf = (uint8_t *)ts->py;
	unsigned npy = 0;
	int cpu = sched_getcpu();

	r.cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), pcs, nr * sizeof(*pcs));
	if (atomic_load_explicit(&walk_py_ready, memory_order_acquire))
		npy = xpu_walk_python(&walk_py, (struct xpu_py_frame *)(pbuf + sizeof(py)), &py.flags);
	if (npy) {
		py.nr_frames = (uint16_t)npy;
		memcpy(pbuf, &py, sizeof(py));
		atomic_fetch_add_explicit(&walk_py_stacks, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&walk_py_frames, npy, memory_order_relaxed);
	}
	if (npy)
		xpu_client__add_pair(walk_client, XPU_REC_PY_STACK, pbuf,
				     sizeof(py) + npy * sizeof(struct xpu_py_frame), XPU_REC_GPU_CORR,
				     buf, sizeof(r) + nr * sizeof(*pcs));
	else
		xpu_client__add(walk_client, XPU_REC_GPU_CORR, buf, sizeof(r) + nr * sizeof(*pcs));
}

/* A walk (or a memo's check) from (sp, bp) with the thread's state ts:
 * XPU_WALK_DONE, or the marker must run (XPU_WALK_MARKER, _URGENT). */
static int walk__run(struct walk_memos *ts, uint64_t corr, uint32_t cbid, uint32_t domain,
		      uint64_t sp, uint64_t bp)
{
	struct unwind_simple_regs regs = { (uint64_t)(uintptr_t)xpu_cupti_marker, sp, bp };
	struct walk_memos *ms = walk_memo_on ? ts : NULL;
	struct unwind_simple_trail trail = { ts->log, 0, WALK_MEMO_READS, false };
	struct walk_ctx c = { sp, sp + WALK_COPY_MAX, false, false, ms ? &trail : NULL };
	uint64_t hi, t0 = walk__now(), walk, *pcs = ts->pcs;
	bool memo_hit = false;
	struct walk_memo *m;
	int n = -1;

	if (!walk__stack(sp, &hi))
		c.outside = true;	/* not the thread's own stack: the marker */
	else if (hi < c.hi)
		c.hi = hi;
	/* every memo of this start (two call paths may start at one rsp) */
	for (unsigned i = 0; ms && !c.outside && i < WALK_MEMOS && !memo_hit; i++)
		if (ms->m[i].sp == sp && (!ms->m[i].bp_used || ms->m[i].bp == bp) &&
		    (n = walk__check_memo(&ms->m[i], pcs)) >= 0)
			memo_hit = true;
	if (!memo_hit && !c.outside && c.hi > c.lo) {
		n = unwind_simple__walk(&regs, walk__rule, walk__read, &c, ts->frames, WALK_MAX_FRAMES,
					c.trail);
		for (int i = 0; i < n; i++)
			pcs[i] = ts->frames[i].pc;
		/* a complete walk, all its reads kept: the memo of its start */
		if (n >= 0 && !c.outside && ms && trail.nr <= trail.max && n <= WALK_MEMO_FRAMES) {
			m = &ms->m[ms->next];
			ms->next = (ms->next + 1) % WALK_MEMOS;
			m->sp = sp;
			m->bp = bp;
			m->bp_used = trail.bp_used;
			m->nr_reads = trail.nr;
			m->nr_frames = (unsigned)n;
			memcpy(m->reads, ts->log, trail.nr * sizeof(*ts->log));
			memcpy(m->pcs, pcs, (size_t)n * sizeof(*pcs));
		}
	}
	atomic_fetch_add_explicit(&walk_ns, walk__now() - t0, memory_order_relaxed);
	walk = atomic_fetch_add_explicit(&walk_walks, 1, memory_order_relaxed) + 1;
	if (n < 0 || c.outside) {
		uint64_t misses = atomic_fetch_add_explicit(c.outside ? &walk_outside : c.stale ?
							    &walk_stale : &walk_no_rule, 1,
							    memory_order_relaxed);

		if (walk_dump && !c.outside && !c.stale &&
		    (misses < WALK_DUMP_MISSES || misses % WALK_DUMP_EVERY == 0))
			walk__dump_miss(corr, c.miss_pc);
		return c.outside || c.stale ? XPU_WALK_MARKER : walk__miss(ts);
	}
	atomic_fetch_add_explicit(&walk_hits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&walk_frames, (uint64_t)n, memory_order_relaxed);
	if (memo_hit)
		atomic_fetch_add_explicit(&walk_memo_hits, 1, memory_order_relaxed);
	if (walk_client)
		walk__emit(ts, corr, cbid, domain, pcs, (unsigned)n);
	if (walk_dump && walk % WALK_DUMP_EVERY == 0) {
		fprintf(walk_dump, "corr %llu n %d:", (unsigned long long)corr, n);
		for (int i = 0; i < n; i++)
			fprintf(walk_dump, " %llx", (unsigned long long)pcs[i]);
		fputc('\n', walk_dump);
	}
	return walk_also_marker ? XPU_WALK_MARKER : XPU_WALK_DONE;
}

int xpu_walk_probe__hit(uint64_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp)
{
	struct walk_memos *ts;
	int ret;

	if (!walk_table || !(ts = walk__memos()) || ts->busy)
		return XPU_WALK_MARKER;	/* no room for a walk, or inside one */
	/* a Python process: its frames are the marker's (its BPF walk) until
	 * xpu-record has proved the layout on it */
	if (walk_py_process && !atomic_load_explicit(&walk_py_ready, memory_order_acquire) &&
	    (__atomic_load_n(&walk_hdr->flags, __ATOMIC_ACQUIRE) & XPU_WALK_NO_PYTHON))
		walk_py_process = false;	/* an interpreter the recorder cannot read */
	if (walk_py_process && !atomic_load_explicit(&walk_py_ready, memory_order_acquire)) {
		if (__atomic_load_n(&walk_hdr->py.valid, __ATOMIC_ACQUIRE) != XPU_WALK_PY_PROVEN) {
			atomic_fetch_add_explicit(&walk_py_wait, 1, memory_order_relaxed);
			return walk__miss(ts);	/* the proof comes from its stacks */
		}
		pthread_mutex_lock(&walk_py_lock);
		if (!atomic_load_explicit(&walk_py_ready, memory_order_relaxed)) {
			walk_py = walk_hdr->py;	/* written before valid (release) */
			atomic_store_explicit(&walk_py_ready, true, memory_order_release);
		}
		pthread_mutex_unlock(&walk_py_lock);
	}
	ts->busy = true;
	ret = walk__run(ts, corr, cbid, domain, sp, bp);
	ts->busy = false;
	return ret;
}
