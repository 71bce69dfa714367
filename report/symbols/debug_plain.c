// SPDX-License-Identifier: MIT
/* Plain copies of compressed debug files in the build-id cache. See
 * debug_plain.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/knobs.h"
#include "common/buildid.h"
#include "common/buildid_cache.h"
#include "report/symbols/debug_plain.h"

/* Whether scn is a compressed DWARF section (.debug_*, SHF_COMPRESSED). */
static bool debug_plain__dwarf_z(Elf *elf, size_t shstrndx, Elf_Scn *scn)
{
	const char *name;
	GElf_Shdr sh;

	return gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
	       (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strncmp(name, ".debug_", 7);
}

bool debug_plain__compressed(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (debug_plain__dwarf_z(elf, shstrndx, scn))
			return true;
	return false;
}

int debug_plain__path(char *buf, size_t len, const uint8_t *id, size_t id_size)
{
	char dir[4096];
	size_t n;
	int err;

	if (buildid_cache__dir(dir, sizeof(dir)))
		return -ENOENT;
	if ((err = buildid__dir_path(buf, len, dir, id, id_size)))
		return err;
	n = strlen(buf);
	if (n + sizeof(".debug") > len)
		return -ENAMETOOLONG;
	memcpy(buf + n, ".debug", sizeof(".debug"));
	return 0;
}

/* Every compressed .debug_* section of the copy open at fd, inflated in
 * place (libelf lays the file out again). */
static int debug_plain__inflate(int fd, void *arg)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int err = 0;

	(void)arg;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		err = -EINVAL;
	while (!err && (scn = elf_nextscn(elf, scn)))
		if (debug_plain__dwarf_z(elf, shstrndx, scn) && elf_compress(scn, 0, 0) < 0)
			err = -EINVAL;
	if (!err && elf_update(elf, ELF_C_WRITE) < 0)
		err = -EIO;
	if (elf)
		elf_end(elf);
	return err;
}

int debug_plain__save(int fd, const uint8_t *id, size_t id_size)
{
	struct buildid_cache c;
	struct stat st;
	char msg[512];
	int err;

	if (knob__bool(KNOB_NO_DEBUG_CACHE))
		return -ENOENT;
	if (fstat(fd, &st))
		return -errno;
	if ((err = buildid_cache__open(&c, msg, sizeof(msg))))
		return err;
	if (!buildid_cache__has(&c, id, id_size, ".debug"))
		err = buildid_cache__store(&c, id, id_size, ".debug", fd, st.st_size,
					   buildid_cache__copy_mode(st.st_mode),
					   debug_plain__inflate, NULL);
	buildid_cache__close(&c);
	return err;
}
