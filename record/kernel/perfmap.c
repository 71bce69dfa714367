// SPDX-License-Identifier: MIT
/*
 * perf-map files: /tmp/perf-PID.map, written by JITs and by Python 3.12
 * (-X perf or PYTHONPERFSUPPORT=1), one "START SIZE name" line (hex) per
 * generated function. At the end of a recording each file of a process the
 * sideband saw is copied into the trace as XPU_REC_PERF_MAP records, so the
 * report can name those frames on another machine. A file older than the
 * recording is skipped (a recycled pid's leftover) unless its pid was given
 * with -p. JITs that delete their map at exit lose it: none we know of does.
 * A map is a regular file of at most FILE_TEXT_MAX bytes, read with a time
 * bound and lines of at most 64 KiB (a FIFO, /dev/zero or a sparse file of
 * that name must not hang the end of the recording or fill its memory).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/bounded.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/kernel/perfmap.h"
#include "record/options.h"
#include "record/kernel/sideband.h"

#define PERFMAP_DIR	"/tmp"

/* One line of a perf map at a time, read in chunks with the time bound
 * (common/bounded.h); a line longer than a chunk is skipped whole. */
struct perfmap_lines {
	int fd;
	uint64_t off;		/* file offset of buf[0] */
	size_t len, pos;
	bool eof;
	char buf[BOUNDED_READ_MAX + 1];
};

/* The next line (NUL-terminated, no newline), NULL at the end; *skipped
 * counts the lines too long to read. */
static char *perfmap_lines__next(struct perfmap_lines *l, uint64_t *skipped)
{
	for (;;) {
		char *s = l->buf + l->pos, *nl = memchr(s, '\n', l->len - l->pos);
		long n;

		if (nl) {
			*nl = '\0';
			l->pos = nl + 1 - l->buf;
			return s;
		}
		if (l->eof) {
			if (l->pos == l->len)
				return NULL;
			l->buf[l->len] = '\0';	/* a last line without newline */
			l->pos = l->len;
			return s;
		}
		if (l->pos == 0 && l->len == BOUNDED_READ_MAX) {
			(*skipped)++;		/* no newline in a whole chunk */
			l->off += l->len;
			l->len = 0;
			for (;;) {		/* to the end of that line */
				n = bounded__pread(l->fd, l->buf, BOUNDED_READ_MAX, l->off);
				if (n <= 0) {
					l->eof = true;
					break;
				}
				nl = memchr(l->buf, '\n', (size_t)n);
				if (nl) {
					l->len = (size_t)n;
					l->pos = nl + 1 - l->buf;
					break;
				}
				l->off += (uint64_t)n;
			}
			continue;
		}
		memmove(l->buf, s, l->len - l->pos);
		l->off += l->pos;
		l->len -= l->pos;
		l->pos = 0;
		n = bounded__pread(l->fd, l->buf + l->len, BOUNDED_READ_MAX - l->len,
				   l->off + l->len);
		if (n <= 0)
			l->eof = true;	/* the end, or an error (a stuck read): what came */
		else
			l->len += (size_t)n;
	}
}

/* Copies one file; returns the number of records written. *python_only
 * says whether every entry was a Python trampoline ("py::..."). */
static uint64_t perfmap__copy_file(struct xpu_writer *w, pid_t pid, const char *path,
				   bool *python_only)
{
	struct xpu_perf_map pm = { .pid = (uint32_t)pid };
	uint64_t n = 0, bad = 0, long_lines = 0;
	struct perfmap_lines *l;
	char *line;
	/* never follow a link planted in /tmp: we run as root; a regular
	 * file only (common/file.h) */
	int fd = file__open_regular(path, O_NOFOLLOW, FILE_TEXT_MAX, NULL);

	if (fd < 0) {
		debug(1, "%s: not a readable regular file of at most %llu bytes: %s: skipped", path,
		      (unsigned long long)FILE_TEXT_MAX, strerror(-fd));
		return 0;
	}
	l = xzalloc(sizeof(*l));
	l->fd = fd;
	while ((line = perfmap_lines__next(l, &long_lines)) != NULL) {
		unsigned long long start, size;
		struct iovec iov[2];
		int name_off = 0;
		size_t len;

		if (sscanf(line, "%llx %llx %n", &start, &size, &name_off) < 2 || !name_off) {
			bad++;
			continue;
		}
		len = strlen(line + name_off);
		if (strncmp(line + name_off, "py::", 4))
			*python_only = false;
		pm.start = start;
		pm.size = size;
		iov[0] = (struct iovec){ &pm, sizeof(pm) };
		iov[1] = (struct iovec){ line + name_off, len + 1 };
		if (xpu_writer__addv(w, XPU_REC_PERF_MAP, 0, iov, 2))
			break;
		n++;
	}
	if (bad || long_lines)
		debug(1, "%s: %llu malformed lines and %llu lines over %d bytes skipped", path,
		      (unsigned long long)bad, (unsigned long long)long_lines, BOUNDED_READ_MAX);
	free(l);
	close(fd);
	return n;
}

static bool perfmap__given(const struct record_opts *o, pid_t pid)
{
	for (int i = 0; i < o->nr_pids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

int perfmap__copy(struct xpu_writer *w, struct sideband *sb, const struct record_opts *o,
		  time_t since)
{
	DIR *d = opendir(PERFMAP_DIR);
	struct dirent *de;
	uint64_t recs = 0;
	int files = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char path[300], tail;
		bool python_only;
		struct stat st;
		int pid;

		if (sscanf(de->d_name, "perf-%d.ma%c", &pid, &tail) != 2 || tail != 'p' ||
		    strcmp(strrchr(de->d_name, '.'), ".map") || pid <= 0 ||
		    !sideband__seen(sb, pid))
			continue;
		snprintf(path, sizeof(path), PERFMAP_DIR "/%s", de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (st.st_mtime < since && !perfmap__given(o, pid)) {
			debug(1, "%s: older than the recording: skipped", path);
			continue;
		}
		python_only = true;
		recs += perfmap__copy_file(w, pid, path, &python_only);
		files++;
		/* A map of Python trampolines only, written during the recording
		 * because we set PYTHONPERFSUPPORT=1: ours to clean up, and the
		 * trace holds it now. A JIT's own map is left alone. */
		if (o->perfmap_cleanup && python_only && st.st_mtime >= since && unlink(path))
			debug(1, "%s: cannot remove: %s", path, strerror(errno));
	}
	closedir(d);
	if (files)
		debug(1, "perf maps: %llu symbols from %d files", (unsigned long long)recs, files);
	return files;
}
