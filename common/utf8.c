// SPDX-License-Identifier: MIT
/* UTF-8 for the text a report writes (utf8.h). */
#include <string.h>
#include "common/utf8.h"
#include "common/xalloc.h"

size_t utf8__next(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range */
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		goto bad;			/* a continuation byte, C0, C1, F5-FF */
	/* what keeps out overlong forms, surrogates and past U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (size_t k = 1; k < len; k++) {
		if (k >= n || s[k] < lo || s[k] > hi) {
			*cp = UTF8_BAD;
			return k;	/* the maximal subpart: the bytes so far */
		}
		c = c << 6 | (s[k] & 0x3f);
		lo = 0x80, hi = 0xbf;
	}
	*cp = c;
	return len;
bad:
	*cp = UTF8_BAD;
	return 1;
}

size_t utf8__put(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

bool utf8__valid(const char *s, size_t n)
{
	uint32_t c;

	for (size_t i = 0; i < n; ) {
		i += utf8__next(s + i, n - i, &c);
		if (c == UTF8_BAD)
			return false;
	}
	return true;
}

size_t utf8__cut(const char *s, size_t max)
{
	size_t n = strlen(s), i = 0;
	uint32_t c;

	if (n <= max)
		return n;
	for (;;) {
		size_t k = utf8__next(s + i, n - i, &c);

		if (i + k > max)
			return i;
		i += k;
	}
}

size_t utf8__trim(const char *s, size_t len)
{
	size_t i = 0;
	uint32_t c;

	while (i < len) {
		size_t k = utf8__next(s + i, len - i, &c);

		/* bytes that start a character and run out at the end (a
		 * bad byte would have ended the subpart before it) */
		if (c == UTF8_BAD && i + k == len && (unsigned char)s[i] >= 0xc2 &&
		    (unsigned char)s[i] <= 0xf4)
			return i;
		i += k;
	}
	return len;
}

size_t utf8__count(const char *s)
{
	size_t n = strlen(s), nr = 0;
	uint32_t c;

	for (size_t i = 0; i < n; nr++)
		i += utf8__next(s + i, n - i, &c);
	return nr;
}

size_t utf8__chars(const char *s, size_t nr)
{
	size_t n = strlen(s), i = 0;
	uint32_t c;

	for (; i < n && nr; nr--)
		i += utf8__next(s + i, n - i, &c);
	return i;
}

size_t utf8__fix(char *buf, size_t size, const char *s)
{
	size_t n = strlen(s), len = 0;
	uint32_t c;

	for (size_t i = 0; i < n; ) {
		size_t k = utf8__next(s + i, n - i, &c);
		const char *from = c == UTF8_BAD ? UTF8_REPLACEMENT : s + i;
		size_t w = c == UTF8_BAD ? 3 : k;

		if (len + w >= size)
			break;
		memcpy(buf + len, from, w);
		len += w;
		i += k;
	}
	buf[len] = '\0';
	return len;
}

char *utf8__xdup(const char *s)
{
	/* a U+FFFD (3 bytes) per byte at most */
	size_t n = strlen(s), size = 3 * n + 1;
	char *buf = xmalloc(size);

	utf8__fix(buf, size, s);
	return buf;
}
