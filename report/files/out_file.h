/* SPDX-License-Identifier: MIT */
/*
 * The file an output of xpu-report writes (--svg FILE, --pprof FILE, ...),
 * created so that a failed or interrupted report never leaves a half-written
 * file, and so that a report run as root never writes through a path someone
 * else controls:
 *
 *   - a regular file (or a missing one) is written under a hidden temporary
 *     name beside it (O_EXCL, mode 0666 less the umask) and renamed over
 *     PATH once complete; until then PATH is untouched;
 *   - a FIFO or a character device (/dev/null, /dev/stdout on a pipe or a
 *     terminal) is written in place: there is nothing to rename;
 *   - a directory, a block device, a socket, and a symbolic link to a
 *     regular file are refused (the fix: give the file's own path).
 *
 * xpu-archive -o OUT follows the same rule through out_file__check(), and
 * refuses a FIFO or a character device too (it writes at offsets, then
 * renames).
 *
 * An exit before out_file__commit() (die(), a BUG_ON) removes the temporary
 * file: xpu-report has one output file, registered for that at its open.
 */
#ifndef XPU_REPORT_OUT_FILE_H
#define XPU_REPORT_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct out_file {
	const char *path;
	char *tmp;			/* the temporary name; NULL when written in place */
	FILE *fp;
};

enum { OUT_FILE_RENAME = 0, OUT_FILE_IN_PLACE = 1 };

/* The rules above for path, without opening it: OUT_FILE_RENAME (a regular
 * file, or none), OUT_FILE_IN_PLACE (a FIFO or a character device), or
 * -errno with a one-line message in err (the command is named as
 * xpu_progname; alt is appended to the fix for a path of the wrong kind). */
int out_file__check(const char *path, const char *alt, char *err, size_t errlen);

/* Opens path for writing. Returns 0, or -errno with a one-line message
 * naming path, the cause and the fix in err. */
int out_file__open(struct out_file *f, const char *path, char *err, size_t errlen);
/* Closes the file and renames it to its path. 0 or -errno (message in err);
 * on failure the temporary file is gone. */
int out_file__commit(struct out_file *f, char *err, size_t errlen);
/* Closes the file and removes the temporary one; PATH stays as it was. */
void out_file__abort(struct out_file *f);

#endif
