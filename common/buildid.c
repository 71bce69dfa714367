// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/buildid.h"

void build_id__hex(const uint8_t *id, size_t size, char *buf)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * size] = '\0';
}

int buildid__dir_path(char *buf, size_t len, const char *dir, const uint8_t *id, size_t size)
{
	char hex[2 * BUILD_ID_MAX + 1];

	if (!size || size > BUILD_ID_MAX)
		return -ENOENT;
	build_id__hex(id, size, hex);
	if (snprintf(buf, len, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int buildid_cache__dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s/xpu-perf", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/xpu-perf", home);
	else
		return -ENOENT;
	return n >= (int)len ? -ENAMETOOLONG : 0;
}

int buildid_cache__mkdirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

int buildid_cache__store(int in, off_t size, const char *dst, int (*edit)(int fd, void *arg),
			 void *arg)
{
	char tmp[4200];
	int out, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* a new file of our own: never through a link, never someone else's */
	unlink(tmp);
	out = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	for (off_t left = size, off = 0; left > 0; ) {
		ssize_t n = copy_file_range(in, &off, out, NULL, (size_t)left, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		left -= n;
	}
	if (!err && edit)
		err = edit(out, arg);
	if (close(out) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
