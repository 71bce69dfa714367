// SPDX-License-Identifier: MIT
/*
 * The library's memfd copy in a process being attached (record/gpu/
 * memfd.c): the recorder writes only into the empty writable memfd the
 * target made, taken with pidfd_getfd(). A child holds, at the descriptor
 * numbers the injector is told, a read-only file of root's (what its other
 * threads could dup2() there during an attach), a writable plain file, a
 * memfd of another name, and the memfd: only the last is written, and the
 * files are left as they were. Before memfd.c the injector reopened
 * /proc/PID/fd/N O_WRONLY as root, which wrote through the first two.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/gpu/memfd.h"
#include "test.h"

#define NAME "xpu-cupti"
enum { FD_RO = 40, FD_RW, FD_OTHER, FD_MEMFD };

static char victim[] = "/tmp/test_record_memfd.victim.XXXXXX";
static char lib[] = "/tmp/test_record_memfd.lib.XXXXXX";
static pid_t child;
static int ready[2];

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/* The child: its descriptors at the numbers above, then it waits. */
static void child_run(void)
{
	int ro = open(victim, O_RDONLY), rw = open(victim, O_RDWR);
	int other = memfd_create("someone-else", 0), mfd = memfd_create(NAME, MFD_CLOEXEC);

	if (ro < 0 || rw < 0 || other < 0 || mfd < 0 || dup2(ro, FD_RO) < 0 ||
	    dup2(rw, FD_RW) < 0 || dup2(other, FD_OTHER) < 0 || dup2(mfd, FD_MEMFD) < 0)
		_exit(1);
	if (write(ready[1], "x", 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

static void setup(void)
{
	int v = mkstemp(victim), l = mkstemp(lib);
	char c;

	TEST_ASSERT(v >= 0 && l >= 0);
	TEST_ASSERT_EQ(write(v, "root's secret\n", 14), 14);
	TEST_ASSERT_EQ(write(l, "\177ELF our library", 16), 16);
	close(v);
	close(l);
	TEST_ASSERT(!pipe(ready));
	child = fork();
	TEST_ASSERT(child >= 0);
	if (!child)
		child_run();
	TEST_ASSERT_EQ(read(ready[0], &c, 1), 1);
}

static void test_refused(void)
{
	static const int fds[] = { FD_RO, FD_RW, FD_OTHER, 77 /* none */ };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		int mfd = memfd__take(child, fds[i], NAME);

		if (mfd >= 0) {
			memfd__fill(mfd, lib, NULL);
			close(mfd);
		}
		TEST_ASSERT(mfd < 0);
	}
	TEST_ASSERT_EQ(size_of(victim), 14);
}

static void test_memfd_filled(void)
{
	char path[64], buf[32];
	int mfd = memfd__take(child, FD_MEMFD, NAME), in;

	TEST_ASSERT(mfd >= 0);
	TEST_ASSERT_EQ(memfd__fill(mfd, lib, NULL), 0);
	close(mfd);
	/* the child's memfd holds the library now */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", child, FD_MEMFD);
	in = open(path, O_RDONLY);
	TEST_ASSERT(in >= 0);
	TEST_ASSERT_EQ(read(in, buf, sizeof(buf)), 16);
	TEST_ASSERT(!memcmp(buf, "\177ELF our library", 16));
	close(in);
	/* and it is not empty any more: a second fill is refused */
	TEST_ASSERT(memfd__take(child, FD_MEMFD, NAME) < 0);
}

int main(void)
{
	setup();
	TEST_RUN(test_refused);
	TEST_RUN(test_memfd_filled);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	unlink(victim);
	unlink(lib);
	TEST_EXIT();
}
