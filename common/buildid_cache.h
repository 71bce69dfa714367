/* SPDX-License-Identifier: MIT */
/*
 * Writing the build-id cache, BASE/xpu-perf/.build-id/xx/rest (naming in
 * common/buildid.h), for xpu-record --buildid-cache, which runs as root,
 * and for xpu-report's plain debug copies. What is written there is a copy
 * of a file a traced program named, in a directory others may write to
 * (a home under sudo -E, a CI home, a shared cache), so:
 *
 *   - BASE ($XDG_CACHE_HOME, else ~/.cache) is the choice of whoever runs
 *     the command: made where missing (each new directory given to the
 *     owner of the one it is made in) and opened following links. Below
 *     it, xpu-perf, .build-id and xx are opened one at a time relative to
 *     their parent's descriptor with O_NOFOLLOW | O_DIRECTORY and made with
 *     mkdirat() where missing: a symbolic link there is refused (-ELOOP),
 *     never followed, and nothing is written through it.
 *   - An entry is written to a new file of an unpredictable name in xx
 *     (O_CREAT | O_EXCL | O_NOFOLLOW) and renamed over the entry's name
 *     (renameat() replaces a link there, never follows it).
 *   - The cache belongs to BASE's owner. When root fills someone else's
 *     cache, everything below BASE is made with that owner's file-system
 *     identity (setfsuid/setfsgid): the new files and directories are
 *     theirs, as a trace under sudo is the sudo user's, and root writes
 *     nowhere in it they could not. A file they could not read is not
 *     copied for them (buildid_cache__owner_may_read()).
 *   - A copy's mode is never wider than its source's, and readable by
 *     group and others only when the source is world-readable
 *     (buildid_cache__copy_mode()).
 */
#ifndef XPU_COMMON_BUILDID_CACHE_H
#define XPU_COMMON_BUILDID_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct buildid_cache {
	char dir[4096];		/* BASE/xpu-perf, for messages */
	int bid;		/* BASE/xpu-perf/.build-id, opened without links */
	uid_t uid;		/* the owner (BASE's) */
	gid_t gid;
	bool as_owner;		/* root filling another's cache: made as them */
	gid_t *groups;		/* the owner's groups (for as_owner) */
	int nr_groups;
};

/*
 * Opens the cache, making what is missing (directories 0755). Returns 0 or
 * -errno with a one-line reason in msg naming the path (-ENOENT: neither
 * variable is set; -ELOOP: a symbolic link in the cache).
 */
int buildid_cache__open(struct buildid_cache *c, char *msg, size_t len);
void buildid_cache__close(struct buildid_cache *c);

/* Whether the entry for the build-id, with suffix ("" or ".debug")
 * appended to its name, is there as a regular file. */
bool buildid_cache__has(struct buildid_cache *c, const uint8_t *id, size_t size,
			const char *suffix);

/* Whether the cache's owner could read a file of this stat by its mode
 * bits (owner, their groups, others); always when the owner is root or
 * ourselves (the open already said so). Directories above the file are
 * not looked at. */
bool buildid_cache__owner_may_read(const struct buildid_cache *c, const struct stat *st);

/* The mode of a copy of a file of mode m: m & 0644 when m is readable by
 * others, else m & 0600. */
mode_t buildid_cache__copy_mode(mode_t m);

/*
 * Writes the in_size bytes of the regular file open at in as the entry
 * (id, suffix), with mode: to a new file beside it, then edit (may be NULL)
 * on that file open read-write, then renamed over the entry, so a reader
 * never sees half a file. 0, or -errno with nothing left behind: -ELOOP
 * when xx is a symbolic link.
 */
int buildid_cache__store(struct buildid_cache *c, const uint8_t *id, size_t size,
			 const char *suffix, int in, off_t in_size, mode_t mode,
			 int (*edit)(int fd, void *arg), void *arg);

#endif
