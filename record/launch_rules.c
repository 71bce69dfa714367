// SPDX-License-Identifier: MIT
/*
 * The launch walk's rules, xpu-record's half (Documentation/design-gpu.md,
 * "The capture path this calls for"): each CUDA process that connects to
 * the channel gets a table (common/unwind_table.h) in a memfd, handed over
 * with the channel's ready byte (record/channel.c); the recorder's stack
 * unwinding (record/unwind_reads.c) adds the simple rule of every pc of the
 * process's marker stacks, with the code bytes that end at it, read from
 * the process. libxpu-cupti.so maps the table read-only and walks its
 * launch stacks with it, calling the marker where a pc is not there yet.
 *
 * A probe for now: only with XPU_LAUNCH_RULES=1 (cupti/walk_probe.c reads
 * the tables). Tables live until the end of the recording (a process's
 * last stacks may be unwound after it disconnected).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/xalloc.h"
#include "record/launch_rules.h"

/* 32,768 entries, 2.3 MB: a GPT-2 training run's launch stacks hold a few
 * thousand distinct pcs */
#define LAUNCH_RULES_SLOTS	32768

struct lr_table {
	uint32_t pid;
	struct unwind_table_hdr *t;
	size_t size;
};

struct launch_rules {
	pthread_mutex_t lock;		/* the channel's thread adds, the prune's reads */
	struct lr_table *tables;
	size_t nr, cap;
};

struct launch_rules *launch_rules__new(void)
{
	const char *on = getenv("XPU_LAUNCH_RULES");
	struct launch_rules *lr;

	if (!on || strcmp(on, "1"))
		return NULL;
	lr = xzalloc(sizeof(*lr));
	pthread_mutex_init(&lr->lock, NULL);
	return lr;
}

void launch_rules__free(struct launch_rules *lr)
{
	if (!lr)
		return;
	for (size_t i = 0; i < lr->nr; i++)
		munmap(lr->tables[i].t, lr->tables[i].size);
	free(lr->tables);
	pthread_mutex_destroy(&lr->lock);
	free(lr);
}

int launch_rules__attach(struct launch_rules *lr, uint32_t pid)
{
	size_t size = unwind_table__size(LAUNCH_RULES_SLOTS);
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
	unwind_table__init(mem, LAUNCH_RULES_SLOTS);
	pthread_mutex_lock(&lr->lock);
	for (size_t i = 0; i < lr->nr; i++)
		if (lr->tables[i].pid == pid) {	/* a pid reused, or a reconnect: the new one */
			lr->tables[i].pid = 0;
		}
	lr->tables = xgrow(lr->tables, &lr->cap, lr->nr + 1, sizeof(*lr->tables));
	lr->tables[lr->nr++] = (struct lr_table){ pid, mem, size };
	pthread_mutex_unlock(&lr->lock);
	return fd;
}

struct unwind_table_hdr *launch_rules__table(struct launch_rules *lr, uint32_t pid)
{
	struct unwind_table_hdr *t = NULL;

	if (!lr)
		return NULL;
	pthread_mutex_lock(&lr->lock);
	for (size_t i = lr->nr; i-- > 0; )
		if (lr->tables[i].pid == pid) {
			t = lr->tables[i].t;
			break;
		}
	pthread_mutex_unlock(&lr->lock);
	return t;
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
