// SPDX-License-Identifier: MIT
/*
 * The attach entry's common parts (cupti/attach.c): the configuration the
 * injector hands over (KEY=VALUE lines, its keys alone once an attach is
 * on, the environment otherwise) and the end of a recording as the socket
 * tells it (the recorder's shutdown or death: end-of-file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"
#include "cupti/attach.h"

static void test_cfg_keys(void)
{
	static struct xpu_attach_cfg c;

	TEST_ASSERT_EQ(xpu_attach_cfg__parse(&c, "XPU_CUPTI_SOCKET=/tmp/x/gpu.sock\n"
					     "XPU_CUPTI_MARKER=walk\n\nXPU_CUPTI_NVTX=off"), 0);
	TEST_ASSERT(!strcmp(xpu_attach_cfg__get(&c, "XPU_CUPTI_SOCKET"), "/tmp/x/gpu.sock"));
	TEST_ASSERT(!strcmp(xpu_attach_cfg__get(&c, "XPU_CUPTI_MARKER"), "walk"));
	TEST_ASSERT(!strcmp(xpu_attach_cfg__get(&c, "XPU_CUPTI_NVTX"), "off"));
	/* a key's prefix is not the key */
	TEST_ASSERT(xpu_attach_cfg__get(&c, "XPU_CUPTI_SOCK") == NULL);
	/* an attach's keys only: the process's own environment is not asked */
	setenv("XPU_CUPTI_APIS", "cudaFoo", 1);
	TEST_ASSERT(xpu_attach_cfg__get(&c, "XPU_CUPTI_APIS") == NULL);
	/* no attach: the environment */
	TEST_ASSERT(!strcmp(xpu_attach_cfg__get(NULL, "XPU_CUPTI_APIS"), "cudaFoo"));
	unsetenv("XPU_CUPTI_APIS");
}

static void test_cfg_bad(void)
{
	static struct xpu_attach_cfg c;
	char *big = malloc(XPU_ATTACH_CFG_MAX + 16);

	TEST_ASSERT_EQ(xpu_attach_cfg__parse(&c, "no equals sign"), -EINVAL);
	memset(big, 'a', XPU_ATTACH_CFG_MAX + 15);
	big[0] = 'K';
	big[1] = '=';
	big[XPU_ATTACH_CFG_MAX + 15] = 0;
	TEST_ASSERT_EQ(xpu_attach_cfg__parse(&c, big), -EINVAL);
	free(big);
	TEST_ASSERT_EQ(xpu_attach_cfg__parse(&c, ""), 0);
	TEST_ASSERT(xpu_attach_cfg__get(&c, "XPU_CUPTI_SOCKET") == NULL);
}

static void test_ended(void)
{
	int sv[2];

	TEST_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	/* the recorder says nothing: still recording */
	TEST_ASSERT(!xpu_attach__ended(sv[0], 10));
	/* the ready byte, or anything else it sends, is not the end */
	TEST_ASSERT_EQ(write(sv[1], "R", 1), 1);
	TEST_ASSERT(!xpu_attach__ended(sv[0], 10));
	TEST_ASSERT(!xpu_attach__ended(sv[0], 10));
	/* its side shut down (the end of a recording) */
	TEST_ASSERT_EQ(shutdown(sv[1], SHUT_WR), 0);
	TEST_ASSERT(xpu_attach__ended(sv[0], 10));
	close(sv[0]);
	close(sv[1]);
	/* the recorder died: its fd closed */
	TEST_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	TEST_ASSERT(xpu_attach__ended(sv[0], 10));
	close(sv[0]);
	TEST_ASSERT(xpu_attach__ended(-1, 10));
}

int main(void)
{
	TEST_RUN(test_cfg_keys);
	TEST_RUN(test_cfg_bad);
	TEST_RUN(test_ended);
	TEST_EXIT();
}
