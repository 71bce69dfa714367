// SPDX-License-Identifier: MIT
/*
 * GNU build-id of an ELF file, for mappings whose build-id the kernel did not
 * give (the page holding the note was not in memory) and for -p's existing
 * maps, read by the one reader the report uses too (common/elf_buildid.c).
 * The path is the system's, maybe replaced since it was mapped: a regular
 * file only (common/file.h), read with a time bound (common/bounded.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "common/bounded.h"
#include "common/elf_buildid.h"
#include "common/file.h"
#include "format/xpu_format.h"
#include "record/record.h"

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
