// SPDX-License-Identifier: MIT
/*
 * The launch walk's rules, xpu-record's half (Documentation/design-gpu.md,
 * "The capture path this calls for"): each CUDA process that connects to
 * the channel gets a table (common/unwind_table.h) in a memfd, handed over
 * with the channel's ready byte (record/gpu/channel.c); the recorder's stack
 * unwinding (record/unwind/unwind_reads.c) adds the simple rule of every pc of the
 * process's marker stacks, with the code bytes that end at it, read from
 * the process. libxpu-cupti.so maps the table read-only and walks its
 * launch stacks with it, calling the marker where a pc is not there yet.
 *
 * The default with DWARF stacks (--launch-stacks=walk; cupti/walk/walk_probe.c
 * reads the tables). Tables live until the end of the recording (a
 * process's last stacks may be unwound after it disconnected).
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/xalloc.h"
#include "bpf/xpu_events.h"
#include "cupti/channel/wire.h"
#include "record/unwind/launch_rules.h"

/* 32,768 entries, 2.3 MB: a GPT-2 training run's launch stacks hold a few
 * thousand distinct pcs */
#define LAUNCH_RULES_SLOTS	32768
/* a Python layout is proved after this many BPF walks and frames */
#define LAUNCH_RULES_PY_WALKS	8
#define LAUNCH_RULES_PY_FRAMES	32

struct lr_table {
	uint32_t pid;
	void *mem;			/* the memfd's mapping: header, then the table */
	size_t size;
	struct unwind_table_hdr *t;
};

struct launch_rules {
	pthread_mutex_t lock;		/* the channel's thread adds, the prune's reads */
	struct lr_table *tables;
	size_t nr, cap;
	launch_rules_py_fn py;		/* the Python layouts, or NULL */
	void *py_arg;
};

/* pid's table (the newest, for a reused pid), or NULL; entries never move
 * their mappings, so the copy stays good after the lock. */
static bool launch_rules__find(struct launch_rules *lr, uint32_t pid, struct lr_table *out)
{
	bool found = false;

	pthread_mutex_lock(&lr->lock);
	for (size_t i = lr->nr; i-- > 0 && !found; )
		if (lr->tables[i].pid == pid) {
			*out = lr->tables[i];
			found = true;
		}
	pthread_mutex_unlock(&lr->lock);
	return found;
}

struct launch_rules *launch_rules__new(void)
{
	struct launch_rules *lr;

	lr = xzalloc(sizeof(*lr));
	pthread_mutex_init(&lr->lock, NULL);
	return lr;
}

void launch_rules__free(struct launch_rules *lr)
{
	if (!lr)
		return;
	for (size_t i = 0; i < lr->nr; i++)
		munmap(lr->tables[i].mem, lr->tables[i].size);
	free(lr->tables);
	pthread_mutex_destroy(&lr->lock);
	free(lr);
}

void launch_rules__set_python(struct launch_rules *lr, launch_rules_py_fn fn, void *arg)
{
	if (!lr)
		return;
	lr->py = fn;
	lr->py_arg = arg;
}

/* The interpreter walk's layout of pid, as the BPF walk has it; returns
 * LAUNCH_RULES_PY_* (out zeroed unless a layout). */
static int launch_rules__python(struct launch_rules *lr, uint32_t pid, struct xpu_walk_py *out)
{
	struct xpu_bpf_py_cfg c;
	int state;

	_Static_assert(XPU_WALK_PY_INSTR_LASTI == XPU_PY_INSTR_LASTI &&
		       XPU_WALK_PY_INSTR_PTR == XPU_PY_INSTR_PTR &&
		       XPU_WALK_PY_ENTRY_ALL == XPU_PY_ENTRY_ALL &&
		       XPU_WALK_PY_ENTRY_FLAG == XPU_PY_ENTRY_FLAG &&
		       XPU_WALK_PY_ENTRY_SHIM == XPU_PY_ENTRY_SHIM &&
		       XPU_WALK_PY_NO_CFRAME == XPU_PY_NO_CFRAME &&
		       XPU_WALK_PY_FRAMES == XPU_BPF_PY_FRAMES, "wire.h's Python kinds");
	memset(out, 0, sizeof(*out));
	if (!lr->py)
		return LAUNCH_RULES_PY_UNKNOWN;
	state = lr->py(lr->py_arg, pid, &c);
	if (state != LAUNCH_RULES_PY_LAYOUT)
		return state;
	/* proved: the BPF walk found thread states and code objects with it
	 * (8 walks, 32 frames at least), and at most one in a hundred it did
	 * not fit. A sample can catch a frame being pushed or a thread state
	 * being made (a bad code object now and then, which the walk checks
	 * and drops); a layout that does not fit the build fails almost every
	 * time. */
	*out = (struct xpu_walk_py){
		.code_type = c.code_type, .version = c.version, .ts_thread_id = c.ts_thread_id,
		.ts_cframe = c.ts_cframe, .cur_frame = c.cur_frame, .fr_code = c.fr_code,
		.fr_previous = c.fr_previous, .fr_instr = c.fr_instr, .fr_entry = c.fr_entry,
		.co_code = c.co_code, .co_qualname = c.co_qualname, .co_filename = c.co_filename,
		.co_firstlineno = c.co_firstlineno, .instr_kind = c.instr_kind,
		.entry_kind = c.entry_kind, .owner_cstack = c.owner_cstack,
		.valid = c.walks >= LAUNCH_RULES_PY_WALKS && c.frames >= LAUNCH_RULES_PY_FRAMES &&
			 c.bad_thread * 100 <= c.walks && c.bad_code * 100 <= c.frames ?
			 XPU_WALK_PY_PROVEN : XPU_WALK_PY_UNPROVEN,
	};
	return state;
}


/* pid's table header: its Python layout raised to what record/python/python.c
 * knows now (its BPF walk's self-checks), unless proved already. */
static void launch_rules__python_check(struct launch_rules *lr, uint32_t pid,
				       struct xpu_walk_hdr *h)
{
	struct xpu_walk_py py;

	if (!lr->py || __atomic_load_n(&h->py.valid, __ATOMIC_RELAXED) == XPU_WALK_PY_PROVEN ||
	    (__atomic_load_n(&h->flags, __ATOMIC_RELAXED) & XPU_WALK_NO_PYTHON))
		return;
	if (launch_rules__python(lr, pid, &py) == LAUNCH_RULES_PY_NATIVE) {
		/* native stacks only: the library stops waiting for a layout */
		__atomic_fetch_or(&h->flags, XPU_WALK_NO_PYTHON, __ATOMIC_RELEASE);
		return;
	}
	if (!py.valid)
		return;
	/* the layout first, then valid (the library reads valid, then the
	 * layout); it is written once: 0 or 1 before, and the same layout */
	memcpy(&h->py, &py, offsetof(struct xpu_walk_py, valid));
	__atomic_store_n(&h->py.valid, py.valid, __ATOMIC_RELEASE);
}

int launch_rules__attach(struct launch_rules *lr, uint32_t pid)
{
	size_t size = XPU_WALK_TABLE_OFF + unwind_table__size(LAUNCH_RULES_SLOTS);
	struct xpu_walk_hdr *h;
	void *mem;
	int fd, err;

	if (!lr)
		return -EINVAL;
	fd = memfd_create("xpu-launch-rules", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    (mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	h = mem;
	h->magic = XPU_WALK_MAGIC;
	h->table_off = XPU_WALK_TABLE_OFF;
	h->flags = !lr->py || launch_rules__python(lr, pid, &h->py) == LAUNCH_RULES_PY_NATIVE ?
		   XPU_WALK_NO_PYTHON : 0;
	unwind_table__init((uint8_t *)mem + XPU_WALK_TABLE_OFF, LAUNCH_RULES_SLOTS);
	pthread_mutex_lock(&lr->lock);
	for (size_t i = 0; i < lr->nr; i++)
		if (lr->tables[i].pid == pid) {	/* a pid reused, or a reconnect: the new one */
			lr->tables[i].pid = 0;
		}
	lr->tables = xgrow(lr->tables, &lr->cap, lr->nr + 1, sizeof(*lr->tables));
	lr->tables[lr->nr++] = (struct lr_table){ pid, mem, size,
						  (struct unwind_table_hdr *)((uint8_t *)mem +
									      XPU_WALK_TABLE_OFF) };
	pthread_mutex_unlock(&lr->lock);
	return fd;
}

struct unwind_table_hdr *launch_rules__table(struct launch_rules *lr, uint32_t pid)
{
	struct lr_table e;

	if (!lr || !launch_rules__find(lr, pid, &e))
		return NULL;
	launch_rules__python_check(lr, pid, e.mem);
	return e.t;
}

void launch_rules__stats(struct launch_rules *lr, uint64_t *tables, uint64_t *rules,
			 uint64_t *full)
{
	*tables = *rules = *full = 0;
	if (!lr)
		return;
	pthread_mutex_lock(&lr->lock);
	*tables = lr->nr;
	for (size_t i = 0; i < lr->nr; i++) {
		*rules += lr->tables[i].t->nr_used;
		*full += lr->tables[i].t->nr_full;
	}
	pthread_mutex_unlock(&lr->lock);
}
