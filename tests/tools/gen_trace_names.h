/* SPDX-License-Identifier: MIT */
/* Names for tests/tools/gen_trace.c (included once, from there). */
static const char *ksyms[] = { "entry_SYSCALL_64", "do_syscall_64", "__x64_sys_ioctl",
			       "nvidia_ioctl" };

/*
 * --names: names that are not plain ASCII, for tests/shell/report_text.sh.
 * Characters of 2, 3 and 4 bytes, and bytes that are not UTF-8: 0xff, a
 * sequence cut short (what the kernel's 15-byte comm leaves of a longer
 * name), overlong forms, a CESU-8 surrogate (what a recorder that encoded
 * a lone surrogate of a Python string wrote). The kernel leaf and a GPU
 * kernel are longer than any box or buffer of the report (4-byte and
 * 3-byte characters, more than 4 KiB), so every output shortens them.
 */
#define GEN_LONG_4	1200	/* U+1F600s in the kernel leaf's name */
#define GEN_LONG_3	400	/* U+2211s in a GPU kernel's name */
static const char *const names_ksyms[] = {
	"entry_\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9",		/* entry_ünïcödé */
	"do_syscall_\xe2\x82\xac_\xe2\x9c\x93_\xff",			/* € ✓ 0xff */
	"__x64_sys_\xf0\x9f\x98\x80_\xed\xb3\xbf_\xe0\x80\xaf",	/* 😀, U+DCFF, '/' */
};
static const char *const names_comms[] = {
	"d\xc3\xa9j\xc3\xa0-vu\xff",					/* déjà-vu 0xff */
	"w\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xe4\xb8",	/* 3 U+1F600, cut */
	"c\xc0\xaf\xed\xa0\x80\xe2\x82",				/* overlong, U+D800, cut */
};
static const char *const names_kernels[] = {
	"matmul_\xc3\x9f_\xe2\x88\x91_\xf0\x9d\x94\xb8",		/* ß ∑ 𝔸 */
	"softmax_\xff\xfe_\xe2\x82",
};

/* "PREFIX" then nr copies of the character ch (a string). */
static char *gen__long(const char *prefix, const char *ch, int nr)
{
	size_t pl = strlen(prefix), cl = strlen(ch);
	char *s = malloc(pl + cl * (size_t)nr + 1);

	if (!s)
		gen__die("out of memory");
	memcpy(s, prefix, pl);
	for (int i = 0; i < nr; i++)
		memcpy(s + pl + cl * (size_t)i, ch, cl);
	s[pl + cl * (size_t)nr] = '\0';
	return s;
}
