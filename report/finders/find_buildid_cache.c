// SPDX-License-Identifier: MIT
/*
 * The local build-id cache: $XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest (or
 * ~/.cache/...), one plain file per build-id, filled by
 * `xpu-record --buildid-cache` (record/files/buildid_cache.c); both take the
 * location from common/buildid.c. Debug files: the plain copies of
 * compressed ones (xx/rest.debug, report/symbols/debug_plain.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "report/symbols/debug_plain.h"
#include "report/finders/find_chain.h"

static int find_buildid_cache__find(const struct dso *dso, char *buf, size_t len,
				    enum path_refusal *why, void *ctx)
{
	const char *dir = ctx;
	int err = buildid__dir_path(buf, len, dir, dso->build_id, dso->build_id_size);

	if (err) {
		buf[0] = '\0';
		return err;
	}
	return path__open(buf, 0, why);
}

/* A debug file: the plain copy report/symbols/debug_plain.c keeps. */
static int find_buildid_cache__find_debug(const uint8_t *id, size_t size, char *buf, size_t len,
					  void *ctx)
{
	(void)ctx;
	return debug_plain__path(buf, len, id, size);
}

void find_buildid_cache__install(struct dsos *d)
{
	static char dir[4096];

	if (buildid_cache__dir(dir, sizeof(dir)))
		return;
	dsos__set_finder(d, DSO_FIND_BUILDID_CACHE, "build-id cache",
			 find_buildid_cache__find, dir);
	dsos__set_debug_finder(d, DSO_FIND_BUILDID_CACHE, find_buildid_cache__find_debug);
}
