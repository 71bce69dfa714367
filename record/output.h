/* SPDX-License-Identifier: MIT */
/* The trace file (output.c). */
#ifndef XPU_RECORD_OUTPUT_H
#define XPU_RECORD_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* the trace file, created new (O_EXCL, 0600, the sudo user's) under
 * a hidden name beside PATH; output__commit() moves an existing PATH to
 * PATH.old and the new file to PATH, output__abort() undoes it all after a
 * failed start. Errors are one line in err; return 0 or -errno. */
struct output {
	const char *path;		/* -o */
	char *tmp;			/* the new file's name until committed */
	int fd;				/* open for writing; the writer takes it */
	dev_t dev;			/* our file, so that only it is removed */
	ino_t ino;
	bool committed;			/* renamed to path */
	bool moved_old;			/* an existing path was renamed to path.old */
};
int output__create(struct output *out, const char *path, char *err, size_t errlen);
int output__commit(struct output *out, char *err, size_t errlen);
void output__abort(struct output *out);
/* The files of bounded capture (record/capture/rotate.c) are made by
 * output__create() too, then named and removed only while they are still
 * the file it made (dev, ino): another recording's file is never touched.
 * output__move: from (our file) to to, which must not exist; -EEXIST if it
 * does, -ESTALE if from is no longer our file. output__remove: unlinks
 * name if it is that file; -ESTALE if not. */
int output__move(dev_t dev, ino_t ino, const char *from, const char *to);
int output__remove(dev_t dev, ino_t ino, const char *name);

#endif
