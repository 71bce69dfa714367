// SPDX-License-Identifier: MIT
/*
 * --pid-tree: a process and every process below it now, from /proc
 * (descendants.h). Read once, when the options are parsed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include "common/file.h"
#include "common/xalloc.h"
#include "record/target/descendants.h"

/* The parent pid of pid (/proc/PID/stat), or -1. */
static pid_t descendants__ppid(pid_t pid)
{
	char buf[512];
	const char *f = file__proc_stat(pid, buf, sizeof(buf));

	return f && f[0] && f[1] == ' ' ? (pid_t)strtol(f + 2, NULL, 10) : -1;
}

int descendants__of(pid_t root, pid_t **out)
{
	pid_t *all = NULL, *par = NULL, *res = NULL;
	size_t nr = 0, cap = 0, nres = 0, rcap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*out = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0)
			continue;
		all = xgrow(all, &cap, nr + 1, sizeof(*all));
		all[nr++] = pid;
	}
	closedir(d);
	par = xcalloc(nr ? nr : 1, sizeof(*par));
	for (size_t i = 0; i < nr; i++)
		par[i] = descendants__ppid(all[i]);
	/* breadth first from root: a pid joins when its parent has joined */
	res = xgrow(res, &rcap, 1, sizeof(*res));
	res[nres++] = root;
	for (size_t head = 0; head < nres; head++)
		for (size_t i = 0; i < nr; i++)
			if (par[i] == res[head] && all[i] != root) {
				res = xgrow(res, &rcap, nres + 1, sizeof(*res));
				res[nres++] = all[i];
			}
	free(all);
	free(par);
	*out = res;
	return (int)nres;
}
