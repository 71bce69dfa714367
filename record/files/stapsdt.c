// SPDX-License-Identifier: MIT
/*
 * SystemTap SDT (USDT) probe notes, as <sys/sdt.h> writes them: one note a
 * probe in .note.stapsdt, owner "stapsdt", type 3, whose descriptor holds
 * the probe's address, the address of .stapsdt.base, the semaphore's address
 * (three words of the file's class), then provider, name and argument
 * strings, each NUL-terminated. xpu-record reads them to tell whether a
 * libc10_cuda.so carries PyTorch's allocator probes (pytorch:malloc,
 * pytorch:free) or needs the uprobe fallback (record/kernel/torch_alloc.c);
 * libbpf reads them again to attach. The file is the traced program's: every
 * size is checked against what is there.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "record/files/stapsdt.h"

#define STAPSDT_OWNER	"stapsdt"
#define STAPSDT_TYPE	3

static size_t stapsdt__align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Copies the NUL-terminated string at s (at most end - s bytes) to dst
 * (cut to fit); the bytes it took with its NUL, or 0 when it has none. */
static size_t stapsdt__str(const char *s, const char *end, char *dst)
{
	const char *nul = memchr(s, 0, (size_t)(end - s));
	size_t n;

	if (!nul)
		return 0;
	n = (size_t)(nul - s);
	if (dst) {
		size_t c = n < STAPSDT_NAME_MAX - 1 ? n : STAPSDT_NAME_MAX - 1;

		memcpy(dst, s, c);
		dst[c] = 0;
	}
	return n + 1;
}

/* One probe's descriptor (64-bit words): 0 or -EINVAL. */
static int stapsdt__desc(const char *d, size_t len, struct stapsdt_probe *p)
{
	const char *s = d + 24, *end = d + len;
	size_t n;

	if (len < 24 + 3)
		return -EINVAL;
	memcpy(&p->pc, d, 8);
	memcpy(&p->base, d + 8, 8);
	memcpy(&p->semaphore, d + 16, 8);
	if (!(n = stapsdt__str(s, end, p->provider)))
		return -EINVAL;
	s += n;
	if (!(n = stapsdt__str(s, end, p->name)))
		return -EINVAL;
	s += n;
	if (!stapsdt__str(s, end, NULL))	/* the arguments: unused here */
		return -EINVAL;
	return 0;
}

int stapsdt__parse(const void *notes, size_t len, struct stapsdt_probe *out, int max)
{
	const char *p = notes;
	size_t pos = 0;
	int count = 0;

	while (len - pos >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_at = pos + 12, desc_at, next;
		struct stapsdt_probe probe;

		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		if (namesz > len - name_at)
			return -EINVAL;
		desc_at = name_at + stapsdt__align4(namesz);
		if (desc_at > len || descsz > len - desc_at)
			return -EINVAL;
		next = desc_at + stapsdt__align4(descsz);
		if (type == STAPSDT_TYPE && namesz == sizeof(STAPSDT_OWNER) &&
		    !memcmp(p + name_at, STAPSDT_OWNER, sizeof(STAPSDT_OWNER))) {
			if (stapsdt__desc(p + desc_at, descsz, &probe))
				return -EINVAL;
			if (count < max)
				out[count] = probe;
			count++;
		}
		if (next >= len)
			break;
		pos = next;
	}
	return count;
}

int stapsdt__read_fd(int fd, struct stapsdt_probe *out, int max)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = 0;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -EINVAL;
	if (elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    elf_getshdrstrndx(e, &shstrndx)) {
		elf_end(e);
		return -EINVAL;
	}
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".note.stapsdt"))
			continue;
		/* raw bytes: the notes' words are the file's, which is the
		 * host's byte order for a library this process can map */
		if ((d = elf_rawdata(scn, NULL)) && d->d_buf)
			ret = stapsdt__parse(d->d_buf, d->d_size, out, max);
		break;
	}
	elf_end(e);
	return ret;
}

const struct stapsdt_probe *stapsdt__find(const struct stapsdt_probe *probes, int n,
					  const char *provider, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(probes[i].provider, provider) && !strcmp(probes[i].name, name))
			return &probes[i];
	return NULL;
}
