// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int buildid_cache__base(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache", home);
	else
		return -ENOENT;
	return n >= (int)len ? -ENAMETOOLONG : 0;
}

int buildid_cache__dir(char *buf, size_t len)
{
	size_t n;
	int err = buildid_cache__base(buf, len);

	if (err)
		return err;
	n = strlen(buf);
	if (n + sizeof(BUILDID_CACHE_NAME) + 1 > len)
		return -ENAMETOOLONG;
	snprintf(buf + n, len - n, "/%s", BUILDID_CACHE_NAME);
	return 0;
}
