// SPDX-License-Identifier: MIT
/*
 * common/buildid_cache.c: the mode of a copy (never wider than its source,
 * private unless the source is world-readable); who may read a source by
 * its mode bits for a cache owner and their groups; entries stored and
 * found (a link at the entry's name does not count as the entry and is
 * replaced, never followed); and symbolic links planted at xpu-perf,
 * .build-id and xx refused (-ELOOP) with nothing written through them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "common/buildid_cache.h"

static char dir[] = "/tmp/xpu-test-bidcache-XXXXXX";
static const uint8_t id[20] = { 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
				16, 17, 18 };
#define ENTRY_DIR "xpu-perf/.build-id/ab"
#define ENTRY ENTRY_DIR "/cd0102030405060708090a0b0c0d0e0f101112"

static void test_copy_mode(void)
{
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0755), 0644);
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0644), 0644);
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0444), 0444);	/* no write added */
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0700), 0600);
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0750), 0600);	/* its group is not ours */
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0640), 0600);
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0500), 0400);
	TEST_ASSERT_EQ(buildid_cache__copy_mode(0711), 0600);	/* exec-only is not read */
	TEST_ASSERT_EQ(buildid_cache__copy_mode(04755), 0644);	/* no set-id bits */
}

static void test_owner_may_read(void)
{
	gid_t groups[] = { 50, 60 };
	struct buildid_cache c = { .uid = 1000, .gid = 100, .as_owner = true,
				   .groups = groups, .nr_groups = 2 };
	struct stat st = { .st_uid = 0, .st_gid = 0, .st_mode = S_IFREG | 0700 };

	TEST_ASSERT(!buildid_cache__owner_may_read(&c, &st));
	st.st_mode = S_IFREG | 0755;
	TEST_ASSERT(buildid_cache__owner_may_read(&c, &st));
	st.st_mode = S_IFREG | 0750;
	TEST_ASSERT(!buildid_cache__owner_may_read(&c, &st));
	st.st_gid = 60;					/* one of their groups */
	TEST_ASSERT(buildid_cache__owner_may_read(&c, &st));
	st.st_gid = 100;				/* their own group */
	TEST_ASSERT(buildid_cache__owner_may_read(&c, &st));
	st.st_uid = 1000;				/* theirs, but not for them */
	st.st_mode = S_IFREG | 0070;
	TEST_ASSERT(!buildid_cache__owner_may_read(&c, &st));
	st.st_mode = S_IFREG | 0400;
	TEST_ASSERT(buildid_cache__owner_may_read(&c, &st));
	c.as_owner = false;				/* our own cache: the open said so */
	st.st_mode = S_IFREG;
	TEST_ASSERT(buildid_cache__owner_may_read(&c, &st));
}

/* in dir/NAME: a cache, and a source file */
static int source(const char *name, struct stat *st)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, "\177ELF copy", 9) != 9 || fstat(fd, st))
		return -1;
	return fd;
}

static int cache_open(const char *name, struct buildid_cache *c, char *msg, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	setenv("XDG_CACHE_HOME", path, 1);
	return buildid_cache__open(c, msg, len);
}

static bool empty_dir(const char *name)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "[ -z \"$(ls -A %s/%s)\" ]", dir, name);
	return system(cmd) == 0;
}

static void test_store(void)
{
	struct buildid_cache c;
	char msg[512], path[512], buf[16];
	struct stat st;
	int fd = source("src", &st), out;

	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(cache_open("c1/made", &c, msg, sizeof(msg)), 0);	/* made */
	TEST_ASSERT(!buildid_cache__has(&c, id, sizeof(id), ""));
	TEST_ASSERT_EQ(buildid_cache__store(&c, id, sizeof(id), "", fd, st.st_size,
					    buildid_cache__copy_mode(st.st_mode), NULL, NULL), 0);
	TEST_ASSERT(buildid_cache__has(&c, id, sizeof(id), ""));
	TEST_ASSERT(!buildid_cache__has(&c, id, sizeof(id), ".debug"));
	snprintf(path, sizeof(path), "%s/c1/made/" ENTRY, dir);
	TEST_ASSERT_EQ(stat(path, &st), 0);
	TEST_ASSERT_EQ(st.st_mode & 07777, 0644);
	out = open(path, O_RDONLY);
	TEST_ASSERT(out >= 0);
	TEST_ASSERT_EQ(read(out, buf, sizeof(buf)), 9);
	close(out);
	TEST_ASSERT(!memcmp(buf, "\177ELF copy", 9));
	/* the entry a link to a file outside: not the entry; replaced */
	snprintf(path, sizeof(path), "%s/c1/made/" ENTRY, dir);
	unlink(path);
	snprintf(msg, sizeof(msg), "%s/victim", dir);
	out = open(msg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	TEST_ASSERT(out >= 0);
	close(out);
	TEST_ASSERT_EQ(symlink(msg, path), 0);
	TEST_ASSERT(!buildid_cache__has(&c, id, sizeof(id), ""));
	TEST_ASSERT_EQ(buildid_cache__store(&c, id, sizeof(id), "", fd, 9, 0600, NULL, NULL), 0);
	TEST_ASSERT_EQ(lstat(path, &st), 0);
	TEST_ASSERT(S_ISREG(st.st_mode));
	TEST_ASSERT_EQ(stat(msg, &st), 0);
	TEST_ASSERT_EQ(st.st_size, 0);			/* the victim untouched */
	buildid_cache__close(&c);
	close(fd);
}

static void test_planted_links(void)
{
	static const char *const planted[] = { "xpu-perf", "xpu-perf/.build-id" };
	struct buildid_cache c;
	char msg[512], path[512], out[512];
	struct stat st;
	int fd = source("src", &st);

	TEST_ASSERT(fd >= 0);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/c2%d/%s", dir, i, planted[i]);
		snprintf(out, sizeof(out), "%s/out2%d", dir, i);
		TEST_ASSERT_EQ(mkdir(out, 0755), 0);
		snprintf(msg, sizeof(msg), "mkdir -p %s/c2%d/xpu-perf", dir, i);
		TEST_ASSERT_EQ(system(msg), 0);
		if (!i)
			rmdir(path);
		TEST_ASSERT_EQ(symlink(out, path), 0);
		snprintf(path, sizeof(path), "c2%d", i);
		TEST_ASSERT_EQ(cache_open(path, &c, msg, sizeof(msg)), -ELOOP);
		TEST_ASSERT(strstr(msg, "is a symbolic link, which is never followed") != NULL);
		snprintf(path, sizeof(path), "out2%d", i);
		TEST_ASSERT(empty_dir(path));
	}
	/* xx a link: the store refuses, nothing is made there */
	TEST_ASSERT_EQ(cache_open("c3", &c, msg, sizeof(msg)), 0);
	snprintf(out, sizeof(out), "%s/out3", dir);
	TEST_ASSERT_EQ(mkdir(out, 0755), 0);
	snprintf(path, sizeof(path), "%s/c3/" ENTRY_DIR, dir);
	TEST_ASSERT_EQ(symlink(out, path), 0);
	TEST_ASSERT(!buildid_cache__has(&c, id, sizeof(id), ""));
	TEST_ASSERT_EQ(buildid_cache__store(&c, id, sizeof(id), "", fd, st.st_size, 0600, NULL,
					    NULL), -ELOOP);
	TEST_ASSERT(empty_dir("out3"));
	buildid_cache__close(&c);
	close(fd);
}

int main(void)
{
	char cmd[256];

	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_copy_mode);
	TEST_RUN(test_owner_may_read);
	TEST_RUN(test_store);
	TEST_RUN(test_planted_links);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	TEST_EXIT();
}
