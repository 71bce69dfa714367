// SPDX-License-Identifier: MIT
/*
 * common/file.c and common/bounded.c: what the recorder opens of a traced
 * program's files. file__open_regular() on a FIFO with no writer (an open
 * that would block: alarm() turns a hang into a failure), a directory,
 * /dev/zero, a sparse file over the size cap, a symlink with O_NOFOLLOW, a
 * /proc file and a regular file; file__open_nolinks() on links in the
 * file's place and above it; bounded__call() on work that ends, on
 * work that never ends until the test lets it (the call returns
 * -ETIMEDOUT, the thread is left behind and frees its job with drop()),
 * on more stuck work than BOUNDED_MAX_LEFT (-EBUSY), and bounded__pread();
 * file__read_proc() and file__proc_stat() on this process renamed to a
 * name with spaces and parentheses, and on a pid that does not exist;
 * file__proc_live_tid() on a process whose main thread has exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "common/bounded.h"
#include "common/file.h"

static char dir[] = "/tmp/xpu-test-file-XXXXXX";

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void test_open_regular(void)
{
	char path[128], link[128];
	struct stat st;
	FILE *f;
	int fd;

	TEST_ASSERT(mkdtemp(dir) != NULL);
	/* a FIFO nobody writes to: open(O_RDONLY) would wait for a writer */
	path_in(path, sizeof(path), "libtorch_cpu.so");
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0);
	alarm(5);
	TEST_ASSERT_EQ(file__open_regular(path, 0, FILE_ELF_MAX, NULL), -EINVAL);
	f = file__fopen_regular(path, 0, FILE_TEXT_MAX);
	TEST_ASSERT(f == NULL && errno == EINVAL);
	alarm(0);
	unlink(path);
	TEST_ASSERT_EQ(file__open_regular(dir, 0, FILE_ELF_MAX, NULL), -EISDIR);
	TEST_ASSERT_EQ(file__open_regular("/dev/zero", 0, FILE_ELF_MAX, NULL), -EINVAL);
	TEST_ASSERT_EQ(file__open_regular("/dev/null", 0, FILE_ELF_MAX, NULL), -EINVAL);
	TEST_ASSERT_EQ(file__open_regular(path, 0, FILE_ELF_MAX, NULL), -ENOENT);

	/* a sparse file one byte over the cap: no block of it is read */
	path_in(path, sizeof(path), "sparse.so");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(ftruncate(fd, (off_t)FILE_ELF_MAX + 1), 0);
	close(fd);
	TEST_ASSERT_EQ(file__open_regular(path, 0, FILE_ELF_MAX, NULL), -EFBIG);
	fd = file__open_regular(path, 0, FILE_ELF_MAX + 1, &st);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(st.st_size, (off_t)FILE_ELF_MAX + 1);
	TEST_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);	/* cleared again */
	TEST_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	unlink(path);

	/* a regular file, and a link to it: followed unless O_NOFOLLOW */
	path_in(path, sizeof(path), "plain");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(write(fd, "1 2 x\n", 6), 6);
	close(fd);
	path_in(link, sizeof(link), "link");
	TEST_ASSERT_EQ(symlink(path, link), 0);
	fd = file__open_regular(link, 0, 6, &st);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(st.st_size, 6);
	close(fd);
	TEST_ASSERT_EQ(file__open_regular(link, 0, 5, NULL), -EFBIG);
	TEST_ASSERT_EQ(file__open_regular(link, O_NOFOLLOW, 6, NULL), -ELOOP);
	unlink(link);
	unlink(path);
	/* procfs says 0 bytes: any cap takes it */
	f = file__fopen_regular("/proc/self/maps", 0, FILE_TEXT_MAX);
	TEST_ASSERT(f != NULL);
	fclose(f);
}

/* file__open_nolinks(): no link in any component, the file's nor a
 * directory's above it */
static void test_open_nolinks(void)
{
	char real[4096], sub[4200], path[4300], link[4300];
	struct stat st;
	int fd;

	TEST_ASSERT(realpath(dir, real) != NULL);
	snprintf(sub, sizeof(sub), "%s/sub", real);
	TEST_ASSERT_EQ(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/lib.so", sub);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(write(fd, "ELF", 3), 3);
	close(fd);
	fd = file__open_nolinks(path, 3, &st);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(st.st_size, 3);
	TEST_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	TEST_ASSERT_EQ(file__open_nolinks(path, 2, NULL), -EFBIG);
	/* the file a link, then a directory above it one */
	snprintf(link, sizeof(link), "%s/link.so", sub);
	TEST_ASSERT_EQ(symlink(path, link), 0);
	TEST_ASSERT_EQ(file__open_nolinks(link, 3, NULL), -ELOOP);
	unlink(link);
	snprintf(link, sizeof(link), "%s/dirlink", real);
	TEST_ASSERT_EQ(symlink(sub, link), 0);
	snprintf(link, sizeof(link), "%s/dirlink/lib.so", real);
	TEST_ASSERT_EQ(file__open_nolinks(link, 3, NULL), -ELOOP);
	fd = file__open_regular(link, 0, 3, NULL);	/* which file__open_regular() follows */
	TEST_ASSERT(fd >= 0);
	close(fd);
	snprintf(link, sizeof(link), "%s/dirlink", real);
	unlink(link);
	/* no relative path, no . or .. */
	TEST_ASSERT_EQ(file__open_nolinks("lib.so", 3, NULL), -EINVAL);
	snprintf(link, sizeof(link), "%s/../sub/lib.so", sub);
	TEST_ASSERT_EQ(file__open_nolinks(link, 3, NULL), -EINVAL);
	snprintf(link, sizeof(link), "%s/./lib.so", sub);
	TEST_ASSERT_EQ(file__open_nolinks(link, 3, NULL), -EINVAL);
	TEST_ASSERT_EQ(file__open_nolinks(sub, 3, NULL), -EISDIR);
	/* file__open_dir_nofollow(): a link to a directory is named one */
	snprintf(link, sizeof(link), "%s/dirlink", real);
	TEST_ASSERT_EQ(symlink(sub, link), 0);
	TEST_ASSERT_EQ(file__open_dir_nofollow(AT_FDCWD, link), -ELOOP);
	TEST_ASSERT_EQ(file__open_dir_nofollow(AT_FDCWD, path), -ENOTDIR);
	fd = file__open_dir_nofollow(AT_FDCWD, sub);
	TEST_ASSERT(fd >= 0);
	close(fd);
	unlink(link);
	unlink(path);
	rmdir(sub);
}

struct add_job {
	int a, b, sum;
};

static int add_fn(void *arg)
{
	struct add_job *j = arg;

	j->sum = j->a + j->b;
	return j->sum == 5 ? 0 : -EDOM;
}

/* Work stuck until the test writes to its pipe: a read that never ends. */
static int gate[2];
static atomic_int dropped, ended;

struct stuck_job {
	int fd;
	char got;
};

static int stuck_fn(void *arg)
{
	struct stuck_job *j = arg;

	if (read(j->fd, &j->got, 1) != 1)
		return -EIO;
	atomic_fetch_add(&ended, 1);
	return 0;
}

static void stuck_drop(void *arg)
{
	struct stuck_job *j = arg;

	(void)j;
	atomic_fetch_add(&dropped, 1);
}

static void test_bounded(void)
{
	struct add_job a = { 2, 3, 0 };
	struct stuck_job s = { .got = 'x' };
	struct bounded_stats st;
	char buf[8];
	int fd;

	TEST_ASSERT_EQ(bounded__call(add_fn, NULL, &a, sizeof(a)), 0);
	TEST_ASSERT_EQ(a.sum, 5);
	a.b = 4;
	TEST_ASSERT_EQ(bounded__call(add_fn, NULL, &a, sizeof(a)), -EDOM);
	TEST_ASSERT_EQ(a.sum, 6);	/* updated from the copy: the work ended */

	bounded__set_timeout_ms(50);
	TEST_ASSERT_EQ(pipe(gate), 0);
	s.fd = gate[0];
	alarm(10);
	for (int i = 0; i < BOUNDED_MAX_LEFT; i++)
		TEST_ASSERT_EQ(bounded__call(stuck_fn, stuck_drop, &s, sizeof(s)), -ETIMEDOUT);
	TEST_ASSERT_EQ(s.got, 'x');	/* left as it was */
	TEST_ASSERT_EQ(bounded__call(add_fn, NULL, &a, sizeof(a)), -EBUSY);
	bounded__stats(&st);
	TEST_ASSERT_EQ(st.timed_out, BOUNDED_MAX_LEFT);
	TEST_ASSERT_EQ(st.refused, 1);
	TEST_ASSERT_EQ(st.left, BOUNDED_MAX_LEFT);
	TEST_ASSERT_EQ(atomic_load(&dropped), 0);
	/* the reads end: each thread left behind drops its job and goes */
	TEST_ASSERT_EQ(write(gate[1], "abcd", BOUNDED_MAX_LEFT), BOUNDED_MAX_LEFT);
	while (atomic_load(&dropped) < BOUNDED_MAX_LEFT)
		usleep(1000);
	alarm(0);
	TEST_ASSERT_EQ(atomic_load(&ended), BOUNDED_MAX_LEFT);
	do {			/* the count drops right after drop() returns */
		bounded__stats(&st);
	} while (st.left);
	a.b = 3;
	TEST_ASSERT_EQ(bounded__call(add_fn, NULL, &a, sizeof(a)), 0);
	bounded__set_timeout_ms(0);

	/* a pread of a pipe: not a file (ESPIPE), and it does not wait */
	TEST_ASSERT_EQ(bounded__pread(gate[0], buf, sizeof(buf), 0), -ESPIPE);
	close(gate[0]);
	close(gate[1]);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(bounded__pread(fd, buf, 4, 0), 4);
	TEST_ASSERT(!memcmp(buf, "\177ELF", 4));
	close(fd);
}

static void test_proc(void)
{
	char buf[512], name[16] = { 0 }, want[32];
	const char *f;
	long n;

	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "a) b (c) d");
	f = file__proc_stat(getpid(), buf, sizeof(buf));
	TEST_ASSERT(f != NULL);
	snprintf(want, sizeof(want), " %d ", (int)getppid());
	TEST_ASSERT(f && (f[0] == 'R' || f[0] == 'S') && !strncmp(f + 1, want, strlen(want)));
	n = file__read_proc("/proc/self/comm", buf, sizeof(buf));
	TEST_ASSERT_EQ(n, (long)strlen("a) b (c) d\n"));
	TEST_ASSERT(!strcmp(buf, "a) b (c) d\n"));
	n = file__read_proc("/proc/self/comm", buf, 4);	/* cut to fit, terminated */
	TEST_ASSERT_EQ(n, 3L);
	TEST_ASSERT(!strcmp(buf, "a) "));
	prctl(PR_SET_NAME, name);
	TEST_ASSERT(file__proc_stat(0x3fffffff, buf, sizeof(buf)) == NULL);
	TEST_ASSERT_EQ(file__read_proc("/proc/self/comm", buf, 0), -1L);
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* the state letter of /proc/PID/stat, or 0 */
static char proc_state(int pid)
{
	char buf[512];
	const char *f = file__proc_stat(pid, buf, sizeof(buf));

	return f ? f[0] : 0;
}

/* file__proc_live_tid(): this process; a child whose main thread ended
 * (pthread_exit) while a thread sleeps: that thread, whose /proc/TID/maps
 * is the process's; the same child a zombie (killed, not reaped): -ESRCH;
 * a pid that does not exist: -ESRCH. */
static void test_live_tid(void)
{
	char path[64], buf[256];
	int pid, tid, i, status;

	TEST_ASSERT_EQ(file__proc_live_tid(getpid()), getpid());
	TEST_ASSERT_EQ(file__proc_live_tid(0x3fffffff), -ESRCH);
	pid = fork();
	TEST_ASSERT(pid >= 0);
	if (!pid) {
		pthread_t t;

		if (pthread_create(&t, NULL, sleeper, NULL))
			_exit(1);
		pthread_exit(NULL);
	}
	for (i = 0; i < 500 && proc_state(pid) != 'Z'; i++)
		usleep(2000);
	TEST_ASSERT_EQ(proc_state(pid), 'Z');
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	TEST_ASSERT_EQ(file__read_proc(path, buf, sizeof(buf)), -1L);	/* empty */
	tid = file__proc_live_tid(pid);
	TEST_ASSERT(tid > 0 && tid != pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	TEST_ASSERT(file__read_proc(path, buf, sizeof(buf)) > 0);
	kill(pid, SIGKILL);
	for (i = 0; i < 500 && file__proc_live_tid(pid) != -ESRCH; i++)
		usleep(2000);
	TEST_ASSERT_EQ(file__proc_live_tid(pid), -ESRCH);	/* a zombie */
	TEST_ASSERT_EQ(waitpid(pid, &status, 0), pid);
}

int main(void)
{
	TEST_RUN(test_proc);
	TEST_RUN(test_live_tid);
	TEST_RUN(test_open_regular);
	TEST_RUN(test_open_nolinks);
	TEST_RUN(test_bounded);
	rmdir(dir);
	TEST_EXIT();
}
