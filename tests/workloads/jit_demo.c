/* SPDX-License-Identifier: MIT */
/*
 * jit_demo: a tiny "JIT" for the perf-map test (tests/shell/offline_perfmap.sh).
 * It writes a loop as x86-64 machine code into an anonymous executable
 * mapping, names it in /tmp/perf-PID.map as a JIT would (Python 3.12 -X perf
 * does the same), and spends its time there. Only the perf map can name
 * these frames: the mapping has no file and no symbols.
 *
 * Usage: jit_demo [SECONDS [NAME]]   (default 2 s, "jit_spin_hot"): NAME is
 * the code's name in the map, e.g. "py::train:train.py" as CPython 3.12
 * names its trampolines (tests/shell/report_svg_python.sh). It first
 * spends 30 ms in C (jit_demo_warm(), under main()), so a report always has
 * warm C frames beside the JIT ones, not only the few start-up samples
 * that may land anywhere. SECONDS and the 30 ms are CPU time (the process's
 * CPU clock), so the samples a test gets do not depend on how busy the
 * machine is. Prints "jit_demo: pid P" and "jit_demo: map FILE". x86-64
 * only.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* uint64_t jit_spin_hot(uint64_t n): x = 0; do x = x * 31 + n; while (--n); */
static const uint8_t jit_code[] = {
	0x31, 0xc0,			/* xor  eax, eax */
	0x48, 0x6b, 0xc0, 0x1f,		/* imul rax, rax, 31 */
	0x48, 0x01, 0xf8,		/* add  rax, rdi */
	0x48, 0xff, 0xcf,		/* dec  rdi */
	0x75, 0xf4,			/* jnz  imul */
	0xc3,				/* ret */
};

/* the CPU time this process has had */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* C code, on the CPU for ms milliseconds */
static __attribute__((noinline)) uint64_t jit_demo_warm(double ms)
{
	volatile uint64_t x = 0;

	for (double end = now() + ms / 1e3; now() < end; )
		for (int i = 0; i < 10000; i++)
			x = x * 31 + (uint64_t)i;
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, end;
	const char *name = argc > 2 ? argv[2] : "jit_spin_hot";
	uint64_t (*fn)(uint64_t), sum = 0;
	char path[64];
	FILE *map;
	void *mem;

#if !defined(__x86_64__)
	fprintf(stderr, "jit_demo: x86-64 only\n");
	return 2;
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit_demo: mmap");
		return 1;
	}
	memcpy(mem, jit_code, sizeof(jit_code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit_demo: mprotect");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror("jit_demo: perf map");
		return 1;
	}
	fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)mem, sizeof(jit_code), name);
	fclose(map);
	printf("jit_demo: pid %d\njit_demo: map %s\n", (int)getpid(), path);
	fflush(stdout);

	fn = (uint64_t (*)(uint64_t))mem;
	sum = jit_demo_warm(30);
	for (end = now() + secs; now() < end; )
		sum += fn(20000000);
	return sum == 42;	/* keeps the calls */
}
