// SPDX-License-Identifier: MIT
/*
 * libdebuginfod, loaded when first used instead of at start-up. Linked
 * normally it brings 27 more libraries (libcurl, gnutls, krb5, ldap, ...)
 * whose loading and constructors cost every run of xpu-report about 6 ms,
 * a third of a short report, though debuginfod is only asked when
 * DEBUGINFOD_URLS is set. As libdwfl does, the library is dlopen()ed on the
 * first call; these definitions stand in for the ones report/finders/find_debuginfod.c
 * calls (the executable does not export them, so nothing else binds to them).
 */
#ifdef HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <elfutils/debuginfod.h>
#include "common/log.h"

#define DEBUGINFOD_DL_SONAME "libdebuginfod.so.1"

static struct {
	bool tried;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
} debuginfod_dl;

static bool debuginfod_dl__load(void)
{
	void *h;

	if (debuginfod_dl.tried)
		return debuginfod_dl.begin != NULL;
	debuginfod_dl.tried = true;
	h = dlopen(DEBUGINFOD_DL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		debug(1, "debuginfod: %s (install libdebuginfod1)", dlerror());
		return false;
	}
	*(void **)&debuginfod_dl.end = dlsym(h, "debuginfod_end");
	*(void **)&debuginfod_dl.find_executable = dlsym(h, "debuginfod_find_executable");
	*(void **)&debuginfod_dl.begin = dlsym(h, "debuginfod_begin");
	if (!debuginfod_dl.end || !debuginfod_dl.find_executable || !debuginfod_dl.begin) {
		debug(1, "debuginfod: %s lacks a function: %s", DEBUGINFOD_DL_SONAME, dlerror());
		debuginfod_dl.begin = NULL;
		return false;
	}
	return true;
}

__attribute__((visibility("hidden")))
debuginfod_client *debuginfod_begin(void)
{
	return debuginfod_dl__load() ? debuginfod_dl.begin() : NULL;
}

__attribute__((visibility("hidden")))
void debuginfod_end(debuginfod_client *c)
{
	if (c && debuginfod_dl__load())
		debuginfod_dl.end(c);
}

__attribute__((visibility("hidden")))
int debuginfod_find_executable(debuginfod_client *c, const unsigned char *build_id,
			       int build_id_len, char **path)
{
	if (!debuginfod_dl__load())
		return -ENOSYS;
	return debuginfod_dl.find_executable(c, build_id, build_id_len, path);
}
#endif
