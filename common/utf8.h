/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 for the text a report writes. Names come from places nobody checked:
 * a thread name set with prctl() (any bytes, cut at 15 by the kernel, in the
 * middle of a character as often as not), symbol tables, CUDA kernel names,
 * Python strings read from the interpreter's memory. JSON, XML (SVG) and
 * protobuf strings must be valid UTF-8: one bad byte and a browser refuses
 * the whole flame graph, a JSON or protobuf parser the whole file. Folded
 * stacks and tables may pass bytes through, but a name shortened to fit
 * must not end inside a character.
 *
 * Strict UTF-8 (RFC 3629): overlong forms, surrogates (U+D800-DFFF, what
 * CESU-8 writes for a lone surrogate) and code points past U+10FFFF are not
 * UTF-8. A sequence that is not UTF-8 counts as one character per "maximal
 * subpart" and becomes one U+FFFD, as Unicode recommends (chapter 3, "U+FFFD
 * Substitution of Maximal Subparts") and Python's and browsers' decoders do.
 */
#ifndef XPU_COMMON_UTF8_H
#define XPU_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF8_BAD		UINT32_MAX	/* utf8__next: not UTF-8 */
#define UTF8_REPLACEMENT	"\xef\xbf\xbd"	/* U+FFFD */

/* The character at s[0..n), n > 0: its length, and its code point in *cp;
 * for bytes that are not UTF-8, the length of their maximal subpart (1-3)
 * and UTF8_BAD. */
size_t utf8__next(const char *s, size_t n, uint32_t *cp);

/* Code point c as UTF-8 into out (room for 4 bytes); a surrogate or a value
 * past U+10FFFF as U+FFFD. Returns the length. */
size_t utf8__put(char *out, uint32_t c);

/* Whether s[0..n) is UTF-8. */
bool utf8__valid(const char *s, size_t n);

/* The length of the longest prefix of string s, at most max bytes, that ends
 * between two characters (an invalid subpart is one). */
size_t utf8__cut(const char *s, size_t max);

/* The length of s[0..len) without a character cut short at its end (what
 * snprintf() leaves when the text did not fit). */
size_t utf8__trim(const char *s, size_t len);

/* The number of characters of string s (an invalid subpart is one). */
size_t utf8__count(const char *s);

/* The length in bytes of the first nr characters of string s (all of it
 * when it has fewer). */
size_t utf8__chars(const char *s, size_t nr);

/* String s as UTF-8 into buf (size > 0), each invalid subpart a U+FFFD, cut
 * between characters where it does not fit; NUL-terminated. Returns the
 * length. */
size_t utf8__fix(char *buf, size_t size, const char *s);

/* String s as UTF-8 (utf8__fix), in memory of its own (xmalloc). */
char *utf8__xdup(const char *s);

#endif
