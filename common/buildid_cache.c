// SPDX-License-Identifier: MIT
/*
 * Writing the build-id cache through directory descriptors, never through
 * a link, as the cache's owner (common/buildid_cache.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "common/buildid.h"
#include "common/buildid_cache.h"
#include "common/file.h"

/* The file-system identity in force before buildid_cache__enter(). */
struct cache_self {
	int uid, gid;
};

/* From here on, files are made and opened as the cache's owner. */
static int buildid_cache__enter(const struct buildid_cache *c, struct cache_self *self)
{
	self->uid = self->gid = -1;
	if (!c->as_owner)
		return 0;
	self->gid = setfsgid(c->gid);
	self->uid = setfsuid(c->uid);
	/* setfsuid() says nothing of a failure: ask again */
	if ((uid_t)setfsuid((uid_t)-1) != c->uid || (gid_t)setfsgid((gid_t)-1) != c->gid)
		return -EPERM;
	return 0;
}

static void buildid_cache__leave(const struct cache_self *self)
{
	if (self->uid >= 0)
		setfsuid((uid_t)self->uid);
	if (self->gid >= 0)
		setfsgid((gid_t)self->gid);
}

/* name in the directory open at dfd, made (0755) where missing, opened
 * without following a link. */
static int buildid_cache__dir_at(int dfd, const char *name, bool make)
{
	int fd = file__open_dir_nofollow(dfd, name);

	if (fd != -ENOENT || !make)
		return fd;
	if (mkdirat(dfd, name, 0755) && errno != EEXIST)
		return -errno;
	return file__open_dir_nofollow(dfd, name);
}

/* mkdir -p of the base, links followed (the runner's choice), walked by
 * descriptors: a directory made is given to the owner of the one it is
 * made in, which is all its maker needs to reach. Its descriptor, or -errno. */
static int buildid_cache__open_base(const char *path)
{
	char name[NAME_MAX + 1];
	const char *p = path;
	int dfd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	for (;;) {
		struct stat st;
		size_t n;
		int fd;

		while (*p == '/')
			p++;
		if (!*p)
			return dfd;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			close(dfd);
			return -ENAMETOOLONG;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && !fstat(dfd, &st)) {
			struct buildid_cache owner = {
				.uid = st.st_uid, .gid = st.st_gid,
				.as_owner = !geteuid() && st.st_uid,
			};
			struct cache_self self;
			int err = buildid_cache__enter(&owner, &self);

			if (!err && mkdirat(dfd, name, 0755) && errno != EEXIST)
				err = -errno;
			buildid_cache__leave(&self);
			if (err) {
				close(dfd);
				return err;
			}
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (fd < 0) {
			int err = -errno;

			close(dfd);
			return err;
		}
		close(dfd);
		dfd = fd;
	}
}

/* The owner's groups, for buildid_cache__owner_may_read(). */
static void buildid_cache__owner_groups(struct buildid_cache *c)
{
	char buf[16384];
	struct passwd pw, *res = NULL;
	int n = 64;

	if (getpwuid_r(c->uid, &pw, buf, sizeof(buf), &res) || !res)
		return;
	for (int tries = 0; tries < 4; tries++) {
		gid_t *g = realloc(c->groups, (size_t)n * sizeof(*g));

		if (!g)
			return;
		c->groups = g;
		if (getgrouplist(pw.pw_name, c->gid, g, &n) >= 0) {
			c->nr_groups = n;
			return;
		}
	}
}

int buildid_cache__open(struct buildid_cache *c, char *msg, size_t len)
{
	char base[sizeof(c->dir)];
	struct cache_self self;
	struct stat st;
	int fd, top = -1, err;

	memset(c, 0, sizeof(*c));
	c->bid = -1;
	if ((err = buildid_cache__base(base, sizeof(base))) ||
	    (err = buildid_cache__dir(c->dir, sizeof(c->dir)))) {
		snprintf(msg, len, "%s", err == -ENOENT ? "neither XDG_CACHE_HOME nor HOME is set: "
			 "set one" : "its path is too long: set XDG_CACHE_HOME");
		return err;
	}
	fd = buildid_cache__open_base(base);
	if (fd < 0 || fstat(fd, &st)) {
		err = fd < 0 ? fd : -errno;
		snprintf(msg, len, "cannot make %s: %s", base, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	c->uid = st.st_uid;
	c->gid = st.st_gid;
	c->as_owner = !geteuid() && st.st_uid;
	if (c->as_owner)
		buildid_cache__owner_groups(c);
	err = buildid_cache__enter(c, &self);
	if (!err && (top = buildid_cache__dir_at(fd, BUILDID_CACHE_NAME, true)) < 0)
		err = top;
	else if (!err && (c->bid = buildid_cache__dir_at(top, ".build-id", true)) < 0)
		err = c->bid;
	buildid_cache__leave(&self);
	close(fd);
	if (top >= 0)
		close(top);
	if (err) {
		const char *what = top < 0 ? "" : "/.build-id";

		if (err == -ELOOP)
			snprintf(msg, len, "%s%s is a symbolic link, which is never followed: "
				 "remove it", c->dir, what);
		else
			snprintf(msg, len, "cannot make %s%s as uid %u: %s", c->dir, what,
				 (unsigned)c->uid, strerror(-err));
		c->bid = -1;
		buildid_cache__close(c);
		return err;
	}
	return 0;
}

void buildid_cache__close(struct buildid_cache *c)
{
	if (c->bid >= 0)
		close(c->bid);
	c->bid = -1;
	free(c->groups);
	c->groups = NULL;
	c->nr_groups = 0;
}

/* xx and rest+suffix of a build-id */
static int buildid_cache__names(const uint8_t *id, size_t size, const char *suffix,
				char xx[3], char *name, size_t len)
{
	char hex[2 * BUILD_ID_MAX + 1];

	if (!size || size > BUILD_ID_MAX)
		return -ENOENT;
	build_id__hex(id, size, hex);
	memcpy(xx, hex, 2);
	xx[2] = '\0';
	if (snprintf(name, len, "%s%s", hex + 2, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

bool buildid_cache__has(struct buildid_cache *c, const uint8_t *id, size_t size,
			const char *suffix)
{
	char xx[3], name[2 * BUILD_ID_MAX + 64];
	struct cache_self self;
	struct stat st;
	bool has = false;
	int fd;

	if (buildid_cache__names(id, size, suffix, xx, name, sizeof(name)))
		return false;
	if (!buildid_cache__enter(c, &self) && (fd = file__open_dir_nofollow(c->bid, xx)) >= 0) {
		has = !fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
		close(fd);
	}
	buildid_cache__leave(&self);
	return has;
}

bool buildid_cache__owner_may_read(const struct buildid_cache *c, const struct stat *st)
{
	if (!c->as_owner)
		return true;
	if (st->st_uid == c->uid)
		return st->st_mode & S_IRUSR;
	if (st->st_gid == c->gid)
		return st->st_mode & S_IRGRP;
	for (int i = 0; i < c->nr_groups; i++)
		if (st->st_gid == c->groups[i])
			return st->st_mode & S_IRGRP;
	return st->st_mode & S_IROTH;
}

mode_t buildid_cache__copy_mode(mode_t m)
{
	return m & (m & S_IROTH ? 0644 : 0600);
}

/* A new file of our own in dfd: .NAME.tmp.XXXXXX, six random letters. */
static int buildid_cache__tmp(int dfd, const char *name, char *tmp, size_t len)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		char x[7];
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)((ts.tv_nsec >> (4 * i)) ^ getpid() ^ tries);
		}
		for (size_t i = 0; i < sizeof(r); i++)
			x[i] = letters[r[i] % (sizeof(letters) - 1)];
		x[6] = '\0';
		if (snprintf(tmp, len, ".%s.tmp.%s", name, x) >= (int)len)
			return -ENAMETOOLONG;
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* in_size bytes of in to out: copy_file_range(), else read and write */
static int buildid_cache__copy(int in, int out, off_t in_size)
{
	char buf[65536];
	off_t off = 0;
	bool plain = false;

	while (off < in_size) {
		size_t want = (size_t)(in_size - off);
		ssize_t n;

		if (!plain) {
			off_t o = off;

			n = copy_file_range(in, &o, out, NULL, want, 0);
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP) && !off) {
				plain = true;
				continue;
			}
		} else {
			n = pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), off);
			if (n > 0) {
				ssize_t w = write(out, buf, (size_t)n);

				if (w != n)
					return w < 0 ? -errno : -EIO;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;	/* shorter than it was */
		off += n;
	}
	return 0;
}

int buildid_cache__store(struct buildid_cache *c, const uint8_t *id, size_t size,
			 const char *suffix, int in, off_t in_size, mode_t mode,
			 int (*edit)(int fd, void *arg), void *arg)
{
	char xx[3], name[2 * BUILD_ID_MAX + 64], tmp[sizeof(name) + 16];
	struct cache_self self;
	int dfd = -1, out = -1, err;

	if ((err = buildid_cache__names(id, size, suffix, xx, name, sizeof(name))))
		return err;
	if ((err = buildid_cache__enter(c, &self)))
		goto out;
	if ((dfd = buildid_cache__dir_at(c->bid, xx, true)) < 0) {
		err = dfd;
		goto out;
	}
	if ((out = buildid_cache__tmp(dfd, name, tmp, sizeof(tmp))) < 0) {
		err = out;
		goto out;
	}
	err = buildid_cache__copy(in, out, in_size);
	if (!err && edit)
		err = edit(out, arg);
	if (!err && fchmod(out, mode))
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, name))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
out:
	if (dfd >= 0)
		close(dfd);
	buildid_cache__leave(&self);
	return err;
}
