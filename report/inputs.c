// SPDX-License-Identifier: MIT
/* xpu-report's -i arguments: files, or directories of *.data files. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "report/output/output.h"

static int inputs__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A trace's name: NAME.data, or NAME.data.<timestamp> (the files of
 * xpu-record --switch-output and --flight-recorder, perf's naming). */
static bool inputs__trace_name(const char *name)
{
	size_t len = strlen(name);
	const char *dot;

	if (name[0] == '.')
		return false;
	if (len > 5 && !strcmp(name + len - 5, ".data"))
		return true;
	dot = strrchr(name, '.');
	if (!dot || dot - name < 6 || strncmp(dot - 5, ".data", 5) || !dot[1])
		return false;
	return strspn(dot + 1, "0123456789") == strlen(dot + 1);
}

/* Appends the trace files of dir, sorted (so a rotated recording's files
 * come in order); returns how many. Their number has no limit here: a
 * rotated recording's files are one recording to the session. */
static size_t inputs__dir(const char *dir, const char ***list, size_t *nr, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t first = *nr;

	if (!d)
		die(XPU_EXIT_INPUT, "cannot read the directory %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char *path;
		struct stat st;

		if (!inputs__trace_name(de->d_name))
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		*list = xgrow(*list, cap, *nr + 1, sizeof(**list));
		(*list)[(*nr)++] = path;
	}
	closedir(d);
	xpu_qsort(*list + first, *nr - first, sizeof(**list), inputs__cmp);
	return *nr - first;
}

void report__set_inputs(struct report_opts *o, char **args, size_t n)
{
	const char **list = NULL;
	bool *optional = NULL;
	size_t nr = 0, cap = 0, ocap = 0;

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size_t from = nr;
		bool dir = !stat(args[i], &st) && S_ISDIR(st.st_mode);

		if (dir) {
			if (!inputs__dir(args[i], &list, &nr, &cap))
				die(XPU_EXIT_INPUT, "%s holds no *.data trace to report", args[i]);
		} else {
			list = xgrow(list, &cap, nr + 1, sizeof(*list));
			list[nr++] = args[i];	/* missing or unreadable: the session says so */
		}
		optional = xgrow(optional, &ocap, nr, sizeof(*optional));
		for (size_t j = from; j < nr; j++)	/* a file of a directory */
			optional[j] = dir;
	}
	if (!nr)
		return;
	o->inputs = list;
	o->inputs_optional = optional;
	o->nr_inputs = nr;
	o->input = list[0];
}
