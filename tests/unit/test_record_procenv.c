// SPDX-License-Identifier: MIT
/*
 * The rank variables picked from an environment (record/kernel/procenv.c): only
 * the listed keys, whole keys only, an entry cut by the read limit left
 * out, the output bound kept; and a PROC_ENV record of this very process
 * written and read back through the trace format.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/writer.h"
#include "format/reader.h"
#include "record/kernel/procenv.h"
#include "test.h"

static void test_pick(void)
{
	static const char env[] = "HOME=/root\0RANK=3\0SECRET_TOKEN=abc\0LOCAL_RANK=1\0"
				  "RANKX=9\0XRANK=8\0=odd\0noequals\0CUDA_VISIBLE_DEVICES=0,1\0"
				  "WORLD_SIZE=4";	/* no NUL: cut by the read limit */
	char out[256];
	size_t n = procenv__pick(env, sizeof(env) - 1, out, sizeof(out));
	static const char want[] = "RANK\0" "3\0" "LOCAL_RANK\0" "1\0"
				   "CUDA_VISIBLE_DEVICES\0" "0,1";

	TEST_ASSERT_EQ(n, sizeof(want));
	TEST_ASSERT(!memcmp(out, want, sizeof(want)));
	/* no room for the second pair: the first only */
	n = procenv__pick(env, sizeof(env) - 1, out, 12);
	TEST_ASSERT_EQ(n, 7);
	TEST_ASSERT(!memcmp(out, "RANK\0" "3", 7));
	TEST_ASSERT_EQ(procenv__pick("", 0, out, sizeof(out)), 0);
}

static void test_record_self(void)
{
	char path[] = "/tmp/test_record_procenv.XXXXXX";
	int fd = mkstemp(path), n = 0, err = 0;
	struct xpu_writer *w;
	struct xpu_reader *r;
	struct xpu_record rec;
	bool rank = false, world = false, other = false;

	TEST_ASSERT(fd >= 0);
	setenv("RANK", "5", 1);	/* not seen: environ is what the exec (main) set */
	w = xpu_writer__fdopen(fd, NULL);
	TEST_ASSERT(w);
	TEST_ASSERT_EQ(procenv__write(w, getpid(), 1234), 0);
	TEST_ASSERT(procenv__write(w, 0x7ffffff0, 1) < 0);	/* no such process: no record */
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	r = xpu_reader__open(path, &err);
	TEST_ASSERT(r);
	while (r && xpu_reader__next(r, &rec) == 1) {
		const struct xpu_proc_env *e = rec.body;
		const char *k, *v;
		size_t pos = 0;

		if (rec.type != XPU_REC_PROC_ENV)
			continue;
		n++;
		TEST_ASSERT_EQ(e->pid, (uint32_t)getpid());
		TEST_ASSERT_EQ(e->time, 1234);
		while (xpu_proc_env__next(&rec, &pos, &k, &v)) {
			if (!strcmp(k, "RANK") && !strcmp(v, "7"))
				rank = true;
			else if (!strcmp(k, "WORLD_SIZE") && !strcmp(v, "2"))
				world = true;
			else
				other = true;
		}
	}
	TEST_ASSERT_EQ(n, 1);
	TEST_ASSERT(rank && world && !other);
	if (r)
		xpu_reader__close(r);
	unlink(path);
}

int main(int argc, char **argv)
{
	/* a known environment: the rank keys and one that must not be copied */
	if (argc < 2) {
		char *env[] = { "RANK=7", "WORLD_SIZE=2", "PASSWORD=hunter2", "PATH=/usr/bin:/bin",
				NULL };
		char *args[] = { argv[0], "child", NULL };

		execve("/proc/self/exe", args, env);
		return 1;
	}
	TEST_RUN(test_pick);
	TEST_RUN(test_record_self);
	TEST_EXIT();
}
