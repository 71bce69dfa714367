// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "xalloc.h"

static void *check(void *p, size_t size)
{
	if (!p && size)
		die(XPU_EXIT_FAILURE, "out of memory allocating %zu bytes", size);
	return p;
}

void *xmalloc(size_t size) { return check(malloc(size), size); }
void *xzalloc(size_t size) { return check(calloc(1, size), size); }
void *xrealloc(void *ptr, size_t size) { return check(realloc(ptr, size), size); }

void *xcalloc(size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		die(XPU_EXIT_FAILURE, "allocation of %zu x %zu bytes overflows", n, size);
	return check(calloc(n, size), n * size);
}

void *xgrow(void *arr, size_t *cap, size_t n, size_t esize)
{
	size_t ncap = *cap ? *cap : 16;

	if (n <= *cap)
		return arr;
	while (ncap < n)
		ncap *= 2;
	if (ncap > (size_t)-1 / esize)
		die(XPU_EXIT_FAILURE, "array of %zu elements overflows", ncap);
	arr = xrealloc(arr, ncap * esize);
	*cap = ncap;
	return arr;
}

char *xstrdup(const char *s) { return check(strdup(s), strlen(s) + 1); }
char *xstrndup(const char *s, size_t n) { return check(strndup(s, n), n + 1); }

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die(XPU_EXIT_FAILURE, "out of memory formatting a string");
	return s;
}
