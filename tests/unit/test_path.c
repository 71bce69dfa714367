// SPDX-License-Identifier: MIT
/*
 * report/files/path.c, the one way files named by a trace are opened: each hostile
 * path below must be refused, with its reason, without hanging (an alarm
 * fails the test instead of a blocking open() of a FIFO); --symfs paths stay
 * beneath their directory with openat2 and with the fallback. Then
 * elf__check_complete() (report/symbols/dso.c): every cut of a real ELF file is
 * found truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "report/symbols/dso.h"
#include "report/files/path.h"
#include "test.h"

static char dir[] = "/tmp/test_path.XXXXXX";
static char root[256];		/* the --symfs directory: dir/root */
static int rootfd = -1;
static int nr_hostile;		/* hostile paths tried, printed at the end */

static const char *at(const char *name)
{
	static char buf[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *name, mode_t mode)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, "\177ELF", 4) != 4) {
		perror(name);
		exit(1);
	}
	close(fd);
	chmod(at(name), mode);
}

/* path must be refused with why; counts it as a hostile path */
#define REFUSED(call, want) do {					\
	enum path_refusal _why = PATH_OK;				\
	int _fd = (call);						\
	nr_hostile++;							\
	if (_fd >= 0)							\
		close(_fd);						\
	if (_fd != -EPERM || _why != (want))				\
		fprintf(stderr, "  %s: got %d (%s)\n", #call, _fd,	\
			_fd == -EPERM ? path__refusal_str(_why) : strerror(-_fd)); \
	TEST_ASSERT_EQ(_fd, -EPERM);					\
	TEST_ASSERT_EQ(_why, (want));					\
} while (0)
#define OPEN(p, fl)		path__open((p), (fl), &_why)
#define BENEATH(p, fl)		path__open_beneath(rootfd, (p), (fl), &_why)

static void test_setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	TEST_ASSERT(mkdtemp(dir) != NULL);
	snprintf(root, sizeof(root), "%s/root", dir);
	TEST_ASSERT_EQ(mkdir(root, 0755), 0);
	TEST_ASSERT_EQ(mkdir(at("root/sub"), 0755), 0);
	put("lib.so", 0644);
	put("prog", 0700);
	put("secret", 0600);
	put("group-secret", 0640);
	put("outside.so", 0644);
	put("root/inside.so", 0644);
	put("root/sub/deep.so", 0644);
	TEST_ASSERT_EQ(mkfifo(at("fifo"), 0644), 0);
	TEST_ASSERT_EQ(mkfifo(at("root/fifo"), 0644), 0);
	TEST_ASSERT_EQ(symlink(at("fifo"), at("to-fifo")), 0);
	TEST_ASSERT_EQ(symlink("/dev/null", at("to-null")), 0);
	TEST_ASSERT_EQ(symlink("/proc/self/mem", at("to-mem")), 0);
	TEST_ASSERT_EQ(symlink("/sys/kernel/notes", at("to-sysfs")), 0);
	TEST_ASSERT_EQ(symlink(at("outside.so"), at("root/abs-out")), 0);
	TEST_ASSERT_EQ(symlink("../outside.so", at("root/rel-out")), 0);
	TEST_ASSERT_EQ(symlink("sub/deep.so", at("root/rel-in")), 0);
	TEST_ASSERT_EQ(symlink("/proc/self/root", at("root/magic")), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	TEST_ASSERT(s >= 0 && !bind(s, (struct sockaddr *)&sa, sizeof(sa)));
	close(s);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	TEST_ASSERT(rootfd >= 0);
}

static void test_regular(void)
{
	enum path_refusal why;
	int fd;

	fd = path__open(at("lib.so"), PATH_FROM_TRACE, &why);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);	/* cleared after the checks */
	TEST_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = path__open(at("prog"), PATH_FROM_TRACE, &why);	/* private but executable */
	TEST_ASSERT(fd >= 0);
	close(fd);
	fd = path__open(at("secret"), 0, &why);	/* not named by a trace: ours */
	TEST_ASSERT(fd >= 0);
	close(fd);
	TEST_ASSERT_EQ(path__open(at("none"), PATH_FROM_TRACE, &why), -ENOENT);
	fd = path__open_beneath(rootfd, "/inside.so", PATH_FROM_TRACE, &why);
	TEST_ASSERT(fd >= 0);
	close(fd);
	fd = path__open_beneath(rootfd, "rel-in", PATH_FROM_TRACE, &why);	/* stays inside */
	TEST_ASSERT(fd >= 0);
	close(fd);
}

static void test_hostile(void)
{
	alarm(20);	/* a blocking open of a FIFO must fail the test, not hang it */
	REFUSED(OPEN(at("fifo"), PATH_FROM_TRACE), PATH_NOT_REGULAR);
	REFUSED(OPEN(at("fifo"), 0), PATH_NOT_REGULAR);
	REFUSED(OPEN(at("to-fifo"), PATH_FROM_TRACE), PATH_NOT_REGULAR);
	REFUSED(OPEN(at("sock"), PATH_FROM_TRACE), PATH_NOT_REGULAR);
	REFUSED(OPEN(dir, PATH_FROM_TRACE), PATH_NOT_REGULAR);
	REFUSED(OPEN(at("to-null"), PATH_FROM_TRACE), PATH_NOT_REGULAR);
	REFUSED(OPEN(at("to-mem"), PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN(at("to-mem"), 0), PATH_SPECIAL);
	REFUSED(OPEN(at("to-sysfs"), PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/proc/self/mem", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("//proc/self/mem", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/./proc/./self/mem", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/usr/../proc/self/mem", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/../../proc/self/environ", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/proc/self/fd/0", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/proc/kcore", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/sys/kernel/notes", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/dev/zero", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/dev/tty", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN("/dev/shm/../../proc/self/mem", PATH_FROM_TRACE), PATH_SPECIAL);
	REFUSED(OPEN(at("secret"), PATH_FROM_TRACE), PATH_PRIVATE);
	REFUSED(OPEN(at("group-secret"), PATH_FROM_TRACE), PATH_PRIVATE);
	if (!access("/etc/shadow", F_OK))
		REFUSED(OPEN("/etc/shadow", PATH_FROM_TRACE), PATH_PRIVATE);
	errno = 0;
	nr_hostile++;
	TEST_ASSERT(path__fopen(at("fifo"), PATH_FROM_TRACE, NULL) == NULL && errno == EPERM);
	alarm(0);
}

static void test_beneath(void)
{
	for (int pass = 0; pass < 2; pass++) {	/* openat2, then the ".." fallback */
		path__no_openat2 = pass;
		alarm(20);
		REFUSED(BENEATH("../outside.so", PATH_FROM_TRACE), PATH_ESCAPES);
		REFUSED(BENEATH("/../outside.so", PATH_FROM_TRACE), PATH_ESCAPES);
		REFUSED(BENEATH("sub/../../outside.so", PATH_FROM_TRACE), PATH_ESCAPES);
		REFUSED(BENEATH("/../../../../../../proc/self/mem", PATH_FROM_TRACE),
			PATH_ESCAPES);
		REFUSED(BENEATH("fifo", PATH_FROM_TRACE), PATH_NOT_REGULAR);
		REFUSED(BENEATH("sub", PATH_FROM_TRACE), PATH_NOT_REGULAR);
		alarm(0);
	}
	path__no_openat2 = 0;
	/* the kernel's resolution: links in DIR that leave it, magic links */
	REFUSED(BENEATH("abs-out", PATH_FROM_TRACE), PATH_ESCAPES);
	REFUSED(BENEATH("rel-out", PATH_FROM_TRACE), PATH_ESCAPES);
	REFUSED(BENEATH("magic/etc/passwd", PATH_FROM_TRACE), PATH_ESCAPES);
}

/* Every cut of a real ELF file (this program) is truncated; the whole is not. */
static void test_elf_truncated(void)
{
	int in = open("/proc/self/exe", O_RDONLY), cuts = 0;
	struct stat st;
	char *buf;

	TEST_ASSERT(in >= 0 && !fstat(in, &st));
	buf = malloc((size_t)st.st_size);
	TEST_ASSERT(buf && read(in, buf, (size_t)st.st_size) == st.st_size);
	close(in);
	elf_version(EV_CURRENT);
	for (off_t len = 64;; len += len < st.st_size - 4096 ? 997 : 61) {
		int fd = open(at("cut"), O_RDWR | O_CREAT | O_TRUNC, 0644);
		Elf *elf;
		int err;

		if (len > st.st_size)
			len = st.st_size;	/* end on the whole file */
		TEST_ASSERT(fd >= 0 && write(fd, buf, (size_t)len) == len);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		TEST_ASSERT(elf != NULL);
		err = elf__check_complete(elf, (uint64_t)len);
		elf_end(elf);
		close(fd);
		if (err != (len == st.st_size ? 0 : -ENODATA))
			fprintf(stderr, "  cut at %lld of %lld: %d\n", (long long)len,
				(long long)st.st_size, err);
		TEST_ASSERT_EQ(err, len == st.st_size ? 0 : -ENODATA);
		cuts++;
		if (len == st.st_size)
			break;
	}
	printf("# %d cuts of a %lld-byte ELF file checked\n", cuts, (long long)st.st_size);
	free(buf);
}

int main(void)
{
	char cmd[600];

	TEST_RUN(test_setup);
	TEST_RUN(test_regular);
	TEST_RUN(test_hostile);
	TEST_RUN(test_beneath);
	TEST_RUN(test_elf_truncated);
	printf("# %d hostile paths refused\n", nr_hostile);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	TEST_EXIT();
}
