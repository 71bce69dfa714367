// SPDX-License-Identifier: MIT
/*
 * fifo_swap FILE SECONDS [bind|zero|map:BYTES]: maps FILE executable (say a copy of a
 * libtorch_cpu.so, which xpu-record reads for its autograd probes), then
 * puts a FIFO at FILE's path: made beside it and renamed over it (the
 * recorder's side band reads the mapping's path after that), or with bind
 * bind-mounted over it (run it in a mount namespace of its own: unshare -m;
 * the mapped file keeps its name in /proc/PID/maps, which -p reads). Nobody
 * ever writes to the FIFO: a reader that opens it blocking waits for good.
 * With zero, a character device like /dev/zero is renamed over it instead
 * (needs root): reads of it never end. With map:BYTES, nothing is swapped:
 * its perf map, /tmp/perf-PID.map, is made a sparse file of BYTES zeros
 * (one line with no end).
 * Prints "swapped PID", then spins for SECONDS and exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void swap_spin(double s)
{
	double end = now() + s;

	while (now() < end)
		for (int i = 0; i < 20000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	char fifo[4200];
	struct stat st;
	void *p;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: fifo_swap FILE SECONDS [bind|zero|map:BYTES]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	if (argc > 3 && !strncmp(argv[3], "map:", 4)) {
		snprintf(fifo, sizeof(fifo), "/tmp/perf-%d.map", (int)getpid());
		fd = open(fifo, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, atoll(argv[3] + 4))) {
			perror(fifo);
			return 1;
		}
		close(fd);
		printf("map %d\n", (int)getpid());
		fflush(stdout);
		swap_spin(atof(argv[2]));
		return 0;
	}
	snprintf(fifo, sizeof(fifo), "%s.fifo", argv[1]);
	if (argc > 3 && !strcmp(argv[3], "zero") ? mknod(fifo, S_IFCHR | 0600, makedev(1, 5)) :
	    mkfifo(fifo, 0600)) {
		perror(fifo);
		return 1;
	}
	if (argc > 3 && !strcmp(argv[3], "bind")) {
		if (mount(fifo, argv[1], NULL, MS_BIND, NULL)) {
			perror("mount --bind");
			return 1;
		}
	} else if (rename(fifo, argv[1])) {
		perror("rename");
		return 1;
	}
	printf("swapped %d\n", (int)getpid());
	fflush(stdout);
	swap_spin(atof(argv[2]));
	return 0;
}
