// SPDX-License-Identifier: MIT
/*
 * record/files/stapsdt.c and elf_demangled.c: how xpu-record tells a
 * libc10_cuda.so's allocator probes (record/files/c10_cuda.c).
 *  - The USDT notes of this test's own executable, written by <sys/sdt.h>
 *    with a semaphore as PyTorch's (provider "pytorch", a semaphore
 *    variable in .probes each): found with their names and semaphores,
 *    and c10_cuda__read_fd() says USDT.
 *  - Hand-made note sections: a foreign note skipped, every truncation of a
 *    good section and a descriptor without its NULs refused, never read
 *    past the end (the buffer is exactly the section's size, for ASan).
 *  - Functions of this executable under the allocator's mangled names:
 *    found by their demangled names, at offsets whose bytes are the code.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include "record/files/c10_cuda.h"
#include "record/files/elf_demangled.h"
#include "record/files/stapsdt.h"
#include "tests/unit/test.h"

/* the semaphores, as PyTorch's static_tracepoint.h makes them */
unsigned short pytorch_malloc_semaphore __attribute__((section(".probes"), used));
unsigned short pytorch_free_semaphore __attribute__((section(".probes"), used));

__attribute__((noinline)) void test_probes_fire(void *ptr, int device, unsigned long size)
{
	if (pytorch_malloc_semaphore)
		STAP_PROBE4(pytorch, malloc, ptr, device, size, 0);
	if (pytorch_free_semaphore)
		STAP_PROBE1(pytorch, free, ptr);
}

static void test_own_notes(void)
{
	struct stapsdt_probe p[8];
	const struct stapsdt_probe *m, *f;
	struct c10_cuda_file cf = { .fd = -1 };
	int fd = open("/proc/self/exe", O_RDONLY), n;

	TEST_ASSERT(fd >= 0);
	n = stapsdt__read_fd(fd, p, 8);
	TEST_ASSERT_EQ(n, 2);
	m = stapsdt__find(p, n, "pytorch", "malloc");
	f = stapsdt__find(p, n, "pytorch", "free");
	TEST_ASSERT(m && f);
	TEST_ASSERT(!stapsdt__find(p, n, "pytorch", "plain"));
	if (m && f) {
		TEST_ASSERT(m->semaphore && f->semaphore && m->semaphore != f->semaphore);
		TEST_ASSERT(m->pc && m->pc != f->pc && m->base == f->base);
	}
	TEST_ASSERT_EQ(stapsdt__read_fd(fd, p, 1), 2);	/* the count, past max */
	c10_cuda__read_fd(fd, &cf);
	TEST_ASSERT_EQ(cf.probes, C10_CUDA_USDT);
	TEST_ASSERT_EQ(cf.nr_notes, 2);
	close(fd);
	test_probes_fire(NULL, 0, 0);
}

/* one note: owner, type, descriptor (pc, base, semaphore, strings) */
static size_t test_note(uint8_t *buf, const char *owner, uint32_t type, uint64_t pc,
			const char *strs, size_t strs_len)
{
	uint32_t namesz = (uint32_t)strlen(owner) + 1, descsz = 24 + (uint32_t)strs_len;
	uint64_t w[3] = { pc, 0x1000, pc ? pc + 0x100 : 0 };
	size_t pos = 12;

	memcpy(buf, &namesz, 4);
	memcpy(buf + 4, &descsz, 4);
	memcpy(buf + 8, &type, 4);
	memcpy(buf + pos, owner, namesz);
	pos += (namesz + 3) & ~3u;
	memcpy(buf + pos, w, 24);
	memcpy(buf + pos + 24, strs, strs_len);
	pos += (descsz + 3) & ~3u;
	return pos;
}

static void test_parse(void)
{
	static const char strs[] = "pytorch\0malloc\0-8@%rax -1@%dl 8@%rcx 8@%r8";
	uint8_t good[512] = { 0 }, *exact;
	struct stapsdt_probe p[4];
	size_t len = 0;

	len += test_note(good + len, "GNU", 3, 0x11, strs, sizeof(strs));	/* not ours */
	len += test_note(good + len, "stapsdt", 3, 0x2000, strs, sizeof(strs));
	len += test_note(good + len, "stapsdt", 4, 0x3000, strs, sizeof(strs));	/* other type */
	len += test_note(good + len, "stapsdt", 3, 0x4000, "pytorch\0free\0-8@%rdi", 21);
	exact = malloc(len);
	memcpy(exact, good, len);
	TEST_ASSERT_EQ(stapsdt__parse(exact, len, p, 4), 2);
	TEST_ASSERT_EQ(p[0].pc, 0x2000);
	TEST_ASSERT_EQ(p[0].semaphore, 0x2100);
	TEST_ASSERT(!strcmp(p[0].provider, "pytorch") && !strcmp(p[0].name, "malloc"));
	TEST_ASSERT(!strcmp(p[1].name, "free") && p[1].pc == 0x4000);
	/* every cut: the whole notes before it, or a refusal */
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		int n;

		memcpy(c, good, cut);
		n = stapsdt__parse(c, cut, p, 4);
		TEST_ASSERT(n == -22 || (n >= 0 && n <= 2));
		free(c);
	}
	free(exact);
	/* a descriptor whose strings lose their NULs */
	len = test_note(good, "stapsdt", 3, 0x2000, "pytorchmalloc", 13);
	exact = malloc(len);
	memcpy(exact, good, len);
	memset(exact + 12 + 8 + 24, 'x', len - 12 - 8 - 24);
	TEST_ASSERT_EQ(stapsdt__parse(exact, len, p, 4), -22);
	free(exact);
	/* a size past the end */
	len = test_note(good, "stapsdt", 3, 0x2000, strs, sizeof(strs));
	good[4] = 0xff;
	TEST_ASSERT_EQ(stapsdt__parse(good, len, p, 4), -22);
}

/* the allocator's two functions, under their mangled names */
__attribute__((noinline)) int test_fake_malloc(void *self, void **out, signed char dev,
					       unsigned long size, void *stream)
	__asm__("_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator6mallocEPPvamP11CUstream_st");
__attribute__((noinline)) int test_fake_malloc(void *self, void **out, signed char dev,
					       unsigned long size, void *stream)
{
	*out = (void *)(size * 3);
	return dev;
}

__attribute__((noinline)) void test_fake_free(void *self, void *ptr)
	__asm__("_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator4freeEPv");
__attribute__((noinline)) void test_fake_free(void *self, void *ptr)
{
	*(volatile char *)self = ptr != NULL;
}

static void test_demangled(void)
{
	const char *const names[3] = { C10_CUDA_MALLOC, C10_CUDA_FREE,
				       "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, int, unsigned long, CUstream_st*)" };
	const void *addrs[2] = { (const void *)test_fake_malloc, (const void *)test_fake_free };
	uint64_t offs[3];
	char key[80];
	int fd = open("/proc/self/exe", O_RDONLY);
	void *out;
	char c;

	TEST_ASSERT(elf_demangled__key(C10_CUDA_MALLOC, key, sizeof(key)) && !strcmp(key, "6malloc"));
	TEST_ASSERT(elf_demangled__key("f(int)", key, sizeof(key)) && !strcmp(key, "1f"));
	TEST_ASSERT(!elf_demangled__key("no_parens", key, sizeof(key)));
	TEST_ASSERT(fd >= 0);
	/* the old signature (int device) is another function: not found */
	TEST_ASSERT_EQ(elf_demangled__offsets(fd, names, 3, offs), 2);
	TEST_ASSERT_EQ(offs[2], 0);
	for (int i = 0; i < 2; i++) {
		uint8_t file[16];

		TEST_ASSERT(offs[i] != 0);
		TEST_ASSERT_EQ(pread(fd, file, sizeof(file), (off_t)offs[i]), (ssize_t)sizeof(file));
		TEST_ASSERT(!memcmp(file, addrs[i], sizeof(file)));
	}
	close(fd);
	test_fake_malloc(NULL, &out, 1, 2, NULL);
	test_fake_free(&c, out);
}

int main(void)
{
	TEST_RUN(test_own_notes);
	TEST_RUN(test_parse);
	TEST_RUN(test_demangled);
	TEST_EXIT();
}
