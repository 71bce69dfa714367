// SPDX-License-Identifier: MIT
/*
 * A libc10_cuda.so a traced process mapped, read for the caching
 * allocator's probes (record/kernel/torch_alloc.c): its USDT notes
 * pytorch:malloc and pytorch:free (x86-64 wheels), else the functions
 * NativeCachingAllocator::malloc and ::free by demangled name (builds
 * without the notes: aarch64). The file is the program's: opened as
 * buildid.c opens a mapped file for a copy (the mapped inode, or the path
 * without a link), a regular file only, read with a time bound; the
 * descriptor read is handed out, so the probes go on the file read.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/bounded.h"
#include "common/file.h"
#include "record/files/c10_cuda.h"
#include "record/files/elf_demangled.h"
#include "record/files/stapsdt.h"

#define C10_CUDA_NOTES_MAX	64

void c10_cuda__read_fd(int fd, struct c10_cuda_file *out)
{
	static const char *const names[2] = { C10_CUDA_MALLOC, C10_CUDA_FREE };
	struct stapsdt_probe notes[C10_CUDA_NOTES_MAX];
	int n = stapsdt__read_fd(fd, notes, C10_CUDA_NOTES_MAX);

	out->probes = C10_CUDA_NONE;
	out->nr_notes = n > 0 ? n : 0;
	if (n > C10_CUDA_NOTES_MAX)
		n = C10_CUDA_NOTES_MAX;
	if (n > 0 && stapsdt__find(notes, n, "pytorch", "malloc") &&
	    stapsdt__find(notes, n, "pytorch", "free")) {
		out->probes = C10_CUDA_USDT;
		return;
	}
	if (elf_demangled__offsets(fd, names, 2, out->off) == 2)
		out->probes = C10_CUDA_UPROBE;
}

struct c10_cuda_job {
	char path[PATH_MAX];
	char mf[96];		/* /proc/PID/map_files/START-END, or "" */
	int nr_known;
	bool no_read;		/* open only */
	uint64_t known[C10_CUDA_KNOWN];
	struct c10_cuda_file out;
};

static int c10_cuda__job(void *arg)
{
	struct c10_cuda_job *j = arg;
	struct stat st;

	j->out.fd = j->mf[0] ? file__open_regular(j->mf, 0, FILE_ELF_MAX, &st) : -ENOENT;
	j->out.mapped = j->out.fd >= 0;
	if (j->out.fd < 0)
		j->out.fd = file__open_nolinks(j->path, FILE_ELF_MAX, &st);
	if (j->out.fd < 0)
		return j->out.fd;
	j->out.key = (uint64_t)st.st_dev << 40 ^ (uint64_t)st.st_ino;
	if (j->no_read)
		return 0;
	for (int i = 0; i < j->nr_known; i++)
		if (j->known[i] == j->out.key)
			return 0;
	j->out.read = true;
	c10_cuda__read_fd(j->out.fd, &j->out);
	return 0;
}

static void c10_cuda__drop(void *arg)
{
	struct c10_cuda_job *j = arg;

	if (j->out.fd >= 0)
		close(j->out.fd);
}

static int c10_cuda__run(pid_t pid, uint64_t start, uint64_t end, const char *path,
			 const uint64_t *known, int nr_known, bool no_read, struct c10_cuda_file *out)
{
	struct c10_cuda_job j = { .nr_known = nr_known, .no_read = no_read, .out.fd = -1 };
	int ret;

	*out = j.out;
	if (nr_known < 0 || nr_known > C10_CUDA_KNOWN)
		return -EINVAL;
	if (strlen(path) >= sizeof(j.path))
		return -ENAMETOOLONG;
	strcpy(j.path, path);
	if (pid > 0 && end > start)
		snprintf(j.mf, sizeof(j.mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 start, end);
	if (nr_known)
		memcpy(j.known, known, (size_t)nr_known * sizeof(*known));
	ret = bounded__call(c10_cuda__job, c10_cuda__drop, &j, sizeof(j));
	if (ret)
		return ret;
	*out = j.out;
	return 0;
}

int c10_cuda__open(pid_t pid, uint64_t start, uint64_t end, const char *path,
		   const uint64_t *known, int nr_known, struct c10_cuda_file *out)
{
	return c10_cuda__run(pid, start, end, path, known, nr_known, false, out);
}

int c10_cuda__open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	struct c10_cuda_file f;
	int ret = c10_cuda__run(pid, start, end, path, NULL, 0, true, &f);

	return ret ? ret : f.fd;
}
