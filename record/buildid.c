// SPDX-License-Identifier: MIT
/*
 * GNU build-id of an ELF file, for mappings whose build-id the kernel did not
 * give (the page holding the note was not in memory) and for -p's existing
 * maps, read by the one reader the report uses too (common/elf_buildid.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/elf_buildid.h"
#include "format/xpu_format.h"
#include "record/record.h"

int buildid__open_elf(const char *path, int *fdp, Elf **ep)
{
	struct stat st;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* a path from the system, maybe replaced since it was mapped: never
	 * block on a FIFO or a device, read regular files only */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
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

int buildid__read_file(const char *path, uint8_t *id, uint8_t *size)
{
	int fd, ret;
	Elf *e;

	*size = 0;
	ret = buildid__open_elf(path, &fd, &e);
	if (ret)
		return ret;
	*size = (uint8_t)elf__build_id(e, id, XPU_MMAP_BUILD_ID_MAX);
	elf_end(e);
	close(fd);
	return *size ? 0 : -ENOENT;
}
