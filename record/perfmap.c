// SPDX-License-Identifier: MIT
/*
 * perf-map files: /tmp/perf-PID.map, written by JITs and by Python 3.12
 * (-X perf or PYTHONPERFSUPPORT=1), one "START SIZE name" line (hex) per
 * generated function. At the end of a recording each file of a process the
 * sideband saw is copied into the trace as XPU_REC_PERF_MAP records, so the
 * report can name those frames on another machine. A file older than the
 * recording is skipped (a recycled pid's leftover) unless its pid was given
 * with -p. JITs that delete their map at exit lose it: none we know of does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "record/record.h"

#define PERFMAP_DIR	"/tmp"

/* Copies one file; returns the number of records written. *python_only
 * says whether every entry was a Python trampoline ("py::..."). */
static uint64_t perfmap__copy_file(struct xpu_writer *w, pid_t pid, const char *path,
				   bool *python_only)
{
	struct xpu_perf_map pm = { .pid = (uint32_t)pid };
	char *line = NULL;
	size_t cap = 0;
	uint64_t n = 0, bad = 0;
	struct stat st;
	FILE *f = NULL;
	/* never follow a link planted in /tmp: we run as root */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		debug(1, "%s: not a readable regular file: skipped", path);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, size;
		struct iovec iov[2];
		int name_off = 0;
		size_t len;

		if (sscanf(line, "%llx %llx %n", &start, &size, &name_off) < 2 || !name_off) {
			bad++;
			continue;
		}
		len = strcspn(line + name_off, "\n");
		if (strncmp(line + name_off, "py::", 4))
			*python_only = false;
		line[name_off + len] = '\0';
		pm.start = start;
		pm.size = size;
		iov[0] = (struct iovec){ &pm, sizeof(pm) };
		iov[1] = (struct iovec){ line + name_off, len + 1 };
		if (xpu_writer__addv(w, XPU_REC_PERF_MAP, 0, iov, 2))
			break;
		n++;
	}
	if (bad)
		debug(1, "%s: %llu malformed lines skipped", path, (unsigned long long)bad);
	free(line);
	fclose(f);
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
