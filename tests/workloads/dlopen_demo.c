// SPDX-License-Identifier: MIT
/*
 * dlopen_demo: spins in spin_between() between dlopen()s of a few system
 * libraries, so the process's mapping set grows while it is sampled, as a
 * Python program importing its extensions does (tests/shell/e2e_dlopen.sh:
 * xpu-report adds the new modules to its Dwfl instead of rebuilding it).
 * Each spin is 0.1 s of the process's CPU time, so the test gets its
 * samples however busy the machine is.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static volatile uint64_t sink;

/* the CPU time this process has had */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_between(double secs)
{
	double end = now() + secs;
	uint64_t x = 1;

	/* the CPU clock is a system call: read it every ~1 ms, so (almost) no
	 * sample is taken in it (vDSO stacks: e2e_stack_prune.sh's "known") */
	while (now() < end)
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

int main(void)
{
	static const char *const libs[] = {
		"libz.so.1", "libbz2.so.1.0", "liblzma.so.5", "libzstd.so.1", "libelf.so.1",
		"libcrypt.so.1", "libuuid.so.1", "libexpat.so.1",
	};
	int loaded = 0;

	spin_between(0.1);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (dlopen(libs[i], RTLD_NOW | RTLD_LOCAL))
			loaded++;
		spin_between(0.1);
	}
	printf("dlopen_demo: %d libraries loaded\n", loaded);
	return 0;
}
