// SPDX-License-Identifier: MIT
/*
 * record/files/elf_funcs.c: the file offsets the autograd uprobes are placed at
 * (an offset off by a byte would put an int3 inside an instruction of the
 * profiled program). Checked on this test's own executable: the file's
 * bytes at each offset are the function's code as loaded in memory, for
 * functions found in one lookup; a name that is not there fails the lookup.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include "record/files/elf_funcs.h"
#include "tests/unit/test.h"

/* two functions of this executable, global so they are in its symbols */
__attribute__((noinline)) int test_elf_funcs_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int test_elf_funcs_b(int x)
{
	return x * 5 - 2;
}

static void test_offsets(void)
{
	const char *const names[3] = { "test_elf_funcs_a", "test_elf_funcs_b", "elf_funcs__offsets" };
	const void *addrs[3] = { (const void *)test_elf_funcs_a, (const void *)test_elf_funcs_b,
				 (const void *)elf_funcs__offsets };
	const char *const missing[2] = { "test_elf_funcs_a", "no_such_function_here" };
	uint64_t offs[3];
	int fd = open("/proc/self/exe", O_RDONLY);

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(elf_funcs__offsets("/proc/self/exe", names, 3, offs), 0);
	for (int i = 0; i < 3; i++) {
		uint8_t file[16];

		TEST_ASSERT(offs[i] != 0);
		TEST_ASSERT_EQ(pread(fd, file, sizeof(file), (off_t)offs[i]), (ssize_t)sizeof(file));
		TEST_ASSERT(!memcmp(file, addrs[i], sizeof(file)));
	}
	TEST_ASSERT(offs[0] != offs[1]);
	close(fd);
	TEST_ASSERT(elf_funcs__offsets("/proc/self/exe", missing, 2, offs) != 0);
	TEST_ASSERT(elf_funcs__offsets("/nonexistent/libtorch_cpu.so", names, 1, offs) != 0);
	TEST_ASSERT_EQ(test_elf_funcs_a(1) + test_elf_funcs_b(1), 7);
}

/* A FIFO renamed over libtorch_cpu.so after it was mapped: refused at once
 * (it was opened with a blocking open(), which waited for a writer for
 * good: alarm() turns that hang into a failure); /dev/zero and a directory
 * too. */
static void test_not_regular(void)
{
	static const char *const names[1] = { "test_elf_funcs_a" };
	char dir[] = "/tmp/xpu-test-elff-XXXXXX", path[64], tmp[64];
	struct elf_funcs_file f;
	uint64_t offs[1];

	TEST_ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/libtorch_cpu.so", dir);
	snprintf(tmp, sizeof(tmp), "%s/fifo", dir);
	TEST_ASSERT_EQ(mkfifo(tmp, 0600), 0);
	TEST_ASSERT_EQ(rename(tmp, path), 0);
	alarm(5);
	TEST_ASSERT(elf_funcs__offsets(path, names, 1, offs) < 0);
	TEST_ASSERT(elf_funcs__open(path, names, 1, NULL, 0, &f) < 0);
	alarm(0);
	TEST_ASSERT_EQ(f.fd, -1);
	TEST_ASSERT(elf_funcs__offsets("/dev/zero", names, 1, offs) < 0);
	TEST_ASSERT(elf_funcs__offsets(dir, names, 1, offs) < 0);
	unlink(path);
	rmdir(dir);
	/* a file already known by its key: opened, not read again */
	TEST_ASSERT_EQ(elf_funcs__open("/proc/self/exe", names, 1, NULL, 0, &f), 0);
	TEST_ASSERT(f.read && f.ok && f.fd >= 0);
	close(f.fd);
	TEST_ASSERT_EQ(elf_funcs__open("/proc/self/exe", names, 1, &f.key, 1, &f), 0);
	TEST_ASSERT(!f.read && !f.ok && f.fd >= 0);
	close(f.fd);
}

int main(void)
{
	TEST_RUN(test_offsets);
	TEST_RUN(test_not_regular);
	TEST_EXIT();
}
