/* SPDX-License-Identifier: MIT */
/*
 * Opening files whose paths the recorder did not choose: those a traced
 * program mapped (read again for build-ids, symbols, CFI), the same seen
 * through /proc/PID/root, the perf maps in /tmp, its /proc files. By the
 * time they are read a path may name a FIFO (open() blocks until a writer
 * comes), a terminal or a device (reads never end, /dev/zero), a directory
 * or a sparse file of terabytes. file__open_regular() opens without
 * blocking and hands out only a regular file of at most a given size;
 * reading one that blocks (a FUSE or NFS server that no longer answers) is
 * common/bounded.h's part.
 */
#ifndef XPU_COMMON_FILE_H
#define XPU_COMMON_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/*
 * The largest ELF file read (build-ids, symbols, CFI, the build-id cache's
 * copies): libtorch_cpu.so is 0.5 GB, the largest CUDA libraries 1-2 GB.
 * Bigger is taken for a file that is not a library (a sparse file put in its
 * place) and left alone.
 */
#define FILE_ELF_MAX	(8ULL << 30)
/* The largest text file read whole or by lines (perf maps, /proc files,
 * which all say 0 bytes) */
#define FILE_TEXT_MAX	(1ULL << 30)

/*
 * Opens path read-only (O_NONBLOCK | O_NOCTTY | O_CLOEXEC, plus flags such
 * as O_NOFOLLOW) and returns the descriptor of a regular file of at most
 * max bytes, O_NONBLOCK cleared again; st (may be NULL) gets its fstat().
 * Else -errno: open()'s, -EISDIR for a directory, -EINVAL for any other
 * file that is not regular (FIFO, socket, device), -EFBIG over max. Links
 * are followed unless flags say otherwise (/proc/PID/root/..., lib*.so
 * links are meant to be).
 */
int file__open_regular(const char *path, int flags, uint64_t max, struct stat *st);

/*
 * file__open_regular() of an absolute path that follows no symbolic link,
 * in any of its components: -ELOOP where one is met, -EINVAL for a
 * relative path or a "." or ".." component. For the paths the kernel names
 * mapped files by (which hold no links) when the file is copied: a path
 * swapped for a link, or a directory above it swapped for one, reaches
 * nothing but what was there (the link to /etc/shadow is not followed).
 * A file of the same name put in its place is still opened: check what
 * was opened (its build-id) through the descriptor.
 */
int file__open_nolinks(const char *path, uint64_t max, struct stat *st);

/* The directory name in the one open at dfd (AT_FDCWD: the current one),
 * opened read-only without following a link: its descriptor, or -errno,
 * -ELOOP for a symbolic link, -ENOTDIR for another file. */
int file__open_dir_nofollow(int dfd, const char *name);

/* The same as a stdio stream ("re"); NULL with errno set. */
FILE *file__fopen_regular(const char *path, int flags, uint64_t max);

/*
 * A small /proc file (a stat, syscall or comm: the kernel gives it whole
 * in one read) into buf, NUL-terminated, at most size - 1 bytes: its
 * length, or -1 (no such process, or nothing read).
 */
long file__read_proc(const char *path, char *buf, size_t size);
/* The fields of /proc/PID/stat after the command name (which may hold
 * spaces and parentheses): from the state on, read into buf; NULL as
 * file__read_proc() fails or when the line has no ')'. */
const char *file__proc_stat(int pid, char *buf, size_t size);
/*
 * A thread of process pid whose /proc/TID shows the process's memory and
 * files: pid itself while its main thread lives; else the first live one
 * of /proc/PID/task. A main thread that called pthread_exit() is a zombie
 * while the others run on, and its /proc/PID/maps is empty, its map_files,
 * fd and environ empty, its mem, exe and root gone; /proc/TID/... of a
 * live thread shows them all (the same mm, files and root). -ESRCH when no
 * thread lives (the process has exited, its parent has not reaped it, or
 * it is gone).
 */
int file__proc_live_tid(int pid);
/* Whether thread tid of process pid runs: not gone, not a zombie (Z) nor
 * dead (X), as /proc/PID/task/TID/stat says. */
bool file__proc_task_live(int pid, int tid);

#endif
