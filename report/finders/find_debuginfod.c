// SPDX-License-Identifier: MIT
/*
 * debuginfod, last in the chain: the executable or library by build-id from
 * the servers in DEBUGINFOD_URLS (libdebuginfod downloads it into its own
 * cache, ~/.cache/debuginfod_client). Only DSOs with a recorded build-id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "report/finders/find_chain.h"

#ifdef HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>

static void find_debuginfod__release(void *ctx)
{
	debuginfod_end(ctx);
}

static int find_debuginfod__find(const struct dso *dso, char *buf, size_t len,
				 enum path_refusal *why, void *ctx)
{
	debuginfod_client *c = ctx;
	char *path = NULL;
	int fd, err = 0;

	if (!dso->build_id_size)
		return -ENOENT;
	fd = debuginfod_find_executable(c, dso->build_id, dso->build_id_size, &path);
	if (fd < 0) {
		debug(1, "%s: debuginfod: %s", dso->path, strerror(-fd));
		return -ENOENT;
	}
	close(fd);
	if (snprintf(buf, len, "%s", path) >= (int)len)
		err = -ENAMETOOLONG;
	else
		err = path__open(path, 0, why);	/* its cache: checked like any file */
	free(path);
	return err;
}

int find_debuginfod__install(struct dsos *d)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;

	if (!urls || !*urls)
		return -ENOENT;
	c = debuginfod_begin();
	if (!c) {
		warn("DEBUGINFOD_URLS is set but the debuginfod client cannot start: not used");
		return -ENOMEM;
	}
	/* the client belongs to this finder slot: freed with the dsos */
	dsos__set_finder_owned(d, DSO_FIND_DEBUGINFOD, "debuginfod", find_debuginfod__find, c,
			       find_debuginfod__release);
	return 0;
}
#else
int find_debuginfod__install(struct dsos *d)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		debug(1, "DEBUGINFOD_URLS is set but xpu-report was built without "
		      "libdebuginfod (install libdebuginfod-dev and rebuild)");
	return -ENOTSUP;
}
#endif
