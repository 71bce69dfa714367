// SPDX-License-Identifier: MIT
/* The attach entry's common parts (attach.h): its configuration, the end
 * of the recording as the socket says it, the thread. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attach.h"

int xpu_attach_cfg__parse(struct xpu_attach_cfg *c, const char *text)
{
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	while (text && *text) {
		size_t len = strcspn(text, "\n");

		if (len && (!memchr(text, '=', len) || n + len + 2 > sizeof(c->text)))
			return -EINVAL;
		if (len) {
			memcpy(c->text + n, text, len);
			n += len + 1;	/* the NUL memset left */
		}
		text += len + (text[len] == '\n');
	}
	c->on = true;
	return 0;
}

const char *xpu_attach_cfg__get(const struct xpu_attach_cfg *c, const char *key)
{
	size_t klen = strlen(key);

	if (!c || !c->on)
		return getenv(key);
	for (const char *p = c->text; *p; p += strlen(p) + 1)
		if (!strncmp(p, key, klen) && p[klen] == '=')
			return p + klen + 1;
	return NULL;
}

bool xpu_attach__ended(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char buf[64];
	ssize_t n;

	if (fd < 0)
		return true;
	if (poll(&p, 1, timeout_ms) <= 0)
		return false;
	if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
		return true;
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

int xpu_attach__thread(void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -err;
}

bool xpu_attach__cuda_initialised(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*get)(void **) = cuda ? (int (*)(void **))dlsym(cuda, "cuCtxGetCurrent") : NULL;
	void *ctx = NULL;
	bool ok = !get || get(&ctx) != 3;	/* CUDA_ERROR_NOT_INITIALIZED */

	if (cuda)
		dlclose(cuda);
	return ok;
}
