// SPDX-License-Identifier: MIT
/*
 * xpu-record's build-id reader (record/files/buildid.c) on the paths a system may
 * hold by the time it looks: the recorded file replaced by a FIFO must not
 * block the recorder (alarm() turns a hang into a failure), a non-ELF is
 * refused, a real ELF gives its build-id.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "format/xpu_format.h"
#include "record/files/buildid.h"

static void test_fifo_does_not_block(void)
{
	char dir[] = "/tmp/xpu-test-rbid-XXXXXX", path[64];
	uint8_t id[XPU_MMAP_BUILD_ID_MAX], size = 99;

	TEST_ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0);
	alarm(5);		/* a blocking open would hang here: SIGALRM fails the test */
	TEST_ASSERT(buildid__read_file(path, id, &size) < 0);
	alarm(0);
	TEST_ASSERT_EQ(size, 0);
	unlink(path);
	rmdir(dir);
}

static void test_regular_files(void)
{
	char path[] = "/tmp/xpu-test-rbid-XXXXXX";
	uint8_t id[XPU_MMAP_BUILD_ID_MAX], size = 0;
	int fd = mkstemp(path);

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT(write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	TEST_ASSERT(buildid__read_file(path, id, &size) < 0);
	unlink(path);
	TEST_ASSERT_EQ(buildid__read_file("/proc/self/exe", id, &size), 0);
	TEST_ASSERT_EQ(size, 20);
}

int main(void)
{
	TEST_RUN(test_fifo_does_not_block);
	TEST_RUN(test_regular_files);
	TEST_EXIT();
}
