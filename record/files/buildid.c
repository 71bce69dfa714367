// SPDX-License-Identifier: MIT
/*
 * GNU build-id of an ELF file, for mappings whose build-id the kernel did not
 * give (the page holding the note was not in memory) and for -p's existing
 * maps, read by the one reader the report uses too (common/elf_buildid.c).
 * The path is the system's, maybe replaced since it was mapped: a regular
 * file only (common/file.h), read with a time bound (common/bounded.h).
 * buildid__open_mapped() opens a mapped file for a copy (--buildid-cache):
 * the mapped inode itself, or the path without a link, read through one
 * descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/bounded.h"
#include "common/elf_buildid.h"
#include "common/file.h"
#include "format/xpu_format.h"
#include "record/files/buildid.h"

int buildid__open_elf(const char *path, int *fdp, Elf **ep)
{
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = file__open_regular(path, 0, FILE_ELF_MAX, NULL);
	if (fd < 0)
		return fd;
	*ep = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!*ep || elf_kind(*ep) != ELF_K_ELF) {
		if (*ep)
			elf_end(*ep);
		close(fd);
		return -EINVAL;
	}
	*fdp = fd;
	return 0;
}

struct buildid_job {
	char path[PATH_MAX];
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t size;
};

static int buildid__read_job(void *arg)
{
	struct buildid_job *j = arg;
	int fd, ret;
	Elf *e;

	ret = buildid__open_elf(j->path, &fd, &e);
	if (ret)
		return ret;
	j->size = (uint8_t)elf__build_id(e, j->id, XPU_MMAP_BUILD_ID_MAX);
	elf_end(e);
	close(fd);
	return j->size ? 0 : -ENOENT;
}

int buildid__read_file(const char *path, uint8_t *id, uint8_t *size)
{
	struct buildid_job j = { .size = 0 };
	int ret;

	*size = 0;
	if (strlen(path) >= sizeof(j.path))
		return -ENAMETOOLONG;
	strcpy(j.path, path);
	ret = bounded__call(buildid__read_job, NULL, &j, sizeof(j));
	if (ret)
		return ret;
	memcpy(id, j.id, j.size);
	*size = j.size;
	return 0;
}

struct buildid_mapped_job {
	char path[PATH_MAX];
	char mf[96];			/* /proc/PID/map_files/START-END, or "" */
	int fd;				/* out: the caller's now */
	struct stat st;
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t size;
	bool mapped;			/* fd is the mapped inode (map_files) */
};

static int buildid__mapped_job(void *arg)
{
	struct buildid_mapped_job *j = arg;
	Elf *e;

	/* map_files: a magic link to the mapped inode, whatever the path
	 * names now; gone with the process or the mapping */
	j->fd = j->mf[0] ? file__open_regular(j->mf, 0, FILE_ELF_MAX, &j->st) : -ENOENT;
	j->mapped = j->fd >= 0;
	if (j->fd < 0)
		j->fd = file__open_nolinks(j->path, FILE_ELF_MAX, &j->st);
	if (j->fd < 0)
		return j->fd;
	e = elf_begin(j->fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		j->size = (uint8_t)elf__build_id(e, j->id, XPU_MMAP_BUILD_ID_MAX);
	if (e)
		elf_end(e);
	if (!j->size) {
		close(j->fd);
		j->fd = -1;
		return -ENOENT;
	}
	return 0;
}

static void buildid__mapped_drop(void *arg)
{
	struct buildid_mapped_job *j = arg;

	if (j->fd >= 0)
		close(j->fd);
}

int buildid__open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path,
			 uint8_t *id, uint8_t *size, struct stat *st, bool *mapped)
{
	struct buildid_mapped_job j = { .fd = -1 };
	int ret;

	*size = 0;
	if (strlen(path) >= sizeof(j.path))
		return -ENAMETOOLONG;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	strcpy(j.path, path);
	if (pid > 0 && end > start)
		snprintf(j.mf, sizeof(j.mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 start, end);
	ret = bounded__call(buildid__mapped_job, buildid__mapped_drop, &j, sizeof(j));
	if (ret)
		return ret;
	memcpy(id, j.id, j.size);
	*size = j.size;
	*st = j.st;
	*mapped = j.mapped;
	return j.fd;
}
