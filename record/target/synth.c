// SPDX-License-Identifier: MIT
/*
 * For -p: what perf would have reported had we been there from the start:
 * a COMM per thread, a FORK per non-leader thread, and an MMAP per
 * executable mapping in /proc/PID/maps, build-ids read from the files, and
 * its rank variables. What belongs to the process (maps, map_files,
 * environ) is read through a live thread: a main thread that called
 * pthread_exit() shows none (common/file.h). Files are read as the side band reads them: regular
 * files only, with a time bound (record/files/buildid.c).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "format/writer.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/target/synth.h"
#include "record/files/buildid.h"
#include "record/kernel/procenv.h"
#include "record/clock.h"

static void synth__comm(struct xpu_writer *w, pid_t pid, pid_t tid, uint64_t now)
{
	struct xpu_comm c = { .time = now, .pid = pid, .tid = tid };
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = file__fopen_regular(path, 0, FILE_TEXT_MAX);
	if (!f)
		return;
	if (fgets(c.comm, sizeof(c.comm), f))
		c.comm[strcspn(c.comm, "\n")] = 0;
	fclose(f);
	xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c));
}

/* synth__set_alias(): a memfd copy of the CUPTI library written as it */
static char *synth_alias_from, *synth_alias_to;

void synth__set_alias(const char *from, const char *to)
{
	free(synth_alias_from);
	free(synth_alias_to);
	synth_alias_from = from && to ? xstrdup(from) : NULL;
	synth_alias_to = from && to ? xstrdup(to) : NULL;
}

/* mm: a live thread of pid (its main thread may have exited) */
static void synth__maps(struct xpu_writer *w, pid_t pid, pid_t mm, uint64_t now)
{
	char path[64], line[4096 + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", mm);
	f = file__fopen_regular(path, 0, FILE_TEXT_MAX);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct xpu_mmap m = { .time = now, .pid = pid, .tid = pid };
		uint64_t start, end, off;
		char perms[8], file[4096] = "", mf[96];
		struct iovec iov[2];
		int n = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms,
			   &off, &n) < 4 || perms[2] != 'x')
			continue;
		if (n > 0)
			sscanf(line + n, "%4095[^\n]", file);
		if (!file[0])
			continue;	/* anonymous executable memory (JIT): no file to name */
		m.start = start;
		m.len = end - start;
		m.pgoff = off;
		m.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0);
		m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		if (file[0] == '/') {
			/* map_files reaches the mapped inode even if deleted or in
			 * another mount namespace. */
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, mm, start, end);
			if (buildid__read_file(mf, m.build_id, &m.build_id_size))
				buildid__read_file(file, m.build_id, &m.build_id_size);
		}
		if (synth_alias_from && !strcmp(file, synth_alias_from))
			snprintf(file, sizeof(file), "%s", synth_alias_to);
		iov[0] = (struct iovec){ &m, sizeof(m) };
		iov[1] = (struct iovec){ file, strlen(file) + 1 };
		xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
	}
	fclose(f);
}

int synth__process(struct xpu_writer *w, pid_t pid)
{
	uint64_t now = record__now_ns();
	pid_t mm = file__proc_live_tid(pid);
	char path[64];
	struct dirent *de;
	DIR *d;

	if (mm < 0)
		return mm;	/* no live thread: nothing to read */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	synth__comm(w, pid, pid, now);
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		struct xpu_fork fk = { now, pid, tid, pid, pid };

		xpu_writer__add(w, XPU_REC_FORK, &fk, sizeof(fk));
		synth__comm(w, pid, tid, now);
	}
	closedir(d);
	synth__maps(w, pid, mm, now);
	procenv__write(w, pid, now);	/* its environment as of its last exec */
	return 0;
}
