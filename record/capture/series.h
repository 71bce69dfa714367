/* SPDX-License-Identifier: MIT */
/*
 * The files of the recording (series.c): --switch-output's current file
 * and its switches, and what every file of bounded capture gets (the
 * flight recorder's windows too, flight.c): the state first, the kernel
 * symbols, its window, its lost counts and FINISH, the name
 * FILE.<timestamp>, the --switch-max-files limit. Private to
 * record/capture/ (struct rotate: rotate_impl.h).
 */
#ifndef XPU_RECORD_CAPTURE_SERIES_H
#define XPU_RECORD_CAPTURE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rotate;
struct rotate_file;
struct xpu_writer;
struct xpu_writer_chunk;

/* FILE.<timestamp>, perf's: local time YYYYmmddHHMMSS and hundredths; a
 * name taken (two files in one hundredth) gets the next hundredth. */
char *series__name(const char *path);
/* Opens a new file of the recording that starts with the state, less the
 * processes gone before since (CLOCK_MONOTONIC ns: a second before the
 * file's first data, for events drained late). It is made as -o is
 * (record/output.c: O_EXCL under a hidden name beside want, mode 0600,
 * the sudo user's) and *f says where it is: want, when take and want is
 * free (the current --switch-output file at -o, perf's way; a file there
 * that another recording wrote stays as it is), else the hidden name (a
 * flight window is named when written: flight__write). */
struct xpu_writer *series__open_file(struct rotate *r, const char *want, uint64_t since, bool take,
				     struct rotate_file *f);
/* Names our file f want, or FILE.<timestamp> (want NULL, or a name taken
 * meanwhile: the next one). false: not renamed (said why); f->name is then
 * freed. */
bool series__name_file(struct rotate *r, struct rotate_file *f, const char *want);
/* The kernel symbols of the kernel frames seen so far. */
void series__ksyms(struct rotate *r, struct xpu_writer *fw);
/* The file's window, as its META says it (window.h). */
void series__window_meta(struct rotate *r, struct xpu_writer *fw, uint64_t start, uint64_t end);
/* The file's own lost counts (what was lost since the last file) and
 * FINISH, its features; closes it. Returns 0 or -errno. */
int series__finish_file(struct rotate *r, struct xpu_writer *fw);
/* A file finished: kept in the list; beyond --switch-max-files the oldest
 * is removed, if it is still the file this recording made. With the lock. */
void series__done(struct rotate *r, const struct rotate_file *f);

/* --switch-output: the first file, at -o. 0 or -EIO. */
int series__start(struct rotate *r);
/* --switch-output: the sink's chunk to the current file (held while a
 * switch waits). With the lock. 0 or -errno (-EIO: no file, dropped). */
int series__append(struct rotate *r, const void *chunk, size_t len,
		   const struct xpu_writer_chunk *info);
/* --switch-output: a cut now; the chunks from here on are held until its
 * switch (series__switch), once the records of before it came. */
void series__cut(struct rotate *r);
/* --switch-output: the switch at cut. flush: the recorder's writer is
 * open (the records of before now go to the held chunks first). */
void series__switch(struct rotate *r, uint64_t cut, bool flush);
/* --switch-output: the last file is finished and named (the recorder's
 * writer is closed, every chunk came). */
void series__end(struct rotate *r);
/* The current file (unfinished), the held chunks, the list of files. */
void series__free(struct rotate *r);

#endif
