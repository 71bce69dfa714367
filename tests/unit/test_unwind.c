// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of a copied stack through code built without frame
 * pointers: the test samples itself (registers + stack copy) inside a chain
 * main -> rt_level_a -> rt_level_b -> rt_level_c -> rt_leaf compiled with
 * -fomit-frame-pointer, writes a trace with its own mappings, and checks the
 * report's stacks reach main. Also samples from inside libc's qsort (a
 * comparator callback) to unwind through a system library.
 *
 * Run with "--write-trace FILE N [CHUNK_BYTES [LOST]]" it writes N such samples to
 * FILE and exits (used by tests/shell/report_cli.sh and for speed checks).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "report/output/output.h"
#include "report/session/session.h"

static struct rt_sample rt_smp;
static uint64_t rt_stack_end;
static struct xpu_writer *rt_w;

#pragma GCC push_options
#pragma GCC optimize("omit-frame-pointer")

__attribute__((noinline)) static int rt_leaf(int x)
{
	rt_capture(rt_smp.regs);
	rt_fill(&rt_smp, rt_stack_end);
	if (rt_w)
		rt_write_sample(rt_w, &rt_smp);
	return x * 3 + (int)(rt_smp.s.time & 1);
}

__attribute__((noinline)) static int rt_level_c(int x)
{
	volatile int pad[8] = { x };

	return rt_leaf(pad[0] + 1) + pad[0];
}

__attribute__((noinline)) static int rt_level_b(int x)
{
	volatile int pad[4] = { x };

	return rt_level_c(pad[0] + 1) * 2 + pad[0];
}

__attribute__((noinline)) int rt_level_a(int x)
{
	return rt_level_b(x + 1) + 7;
}

static int rt_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (x == 3 && y == 1)		/* once, from inside qsort */
		rt_leaf(0);
	return (x > y) - (x < y);
}

__attribute__((noinline)) int rt_sort(void)
{
	int v[] = { 3, 1, 2, 5, 4 };

	qsort(v, 5, sizeof(v[0]), rt_cmp);
	return v[0];
}

#pragma GCC pop_options

/* A function with a frame pointer: past its prologue the CFA is rbp + 16. */
#pragma GCC push_options
#pragma GCC optimize("no-omit-frame-pointer")
__attribute__((noinline)) static int rt_fp_frame(int x)
{
	volatile int pad[16] = { x };

	rt_capture(rt_smp.regs);
	rt_fill(&rt_smp, rt_stack_end);
	return pad[0] + pad[15];
}
#pragma GCC pop_options

static char rt_path[] = "/tmp/xpu-test-unwind-XXXXXX";

static int rt_write_trace(const char *path, int n, size_t chunk_size, uint64_t lost)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS,
				      .chunk_size = chunk_size };
	int sum = 0;

	rt_stack_end = rt_map_end((uint64_t)__builtin_frame_address(0));
	rt_w = xpu_writer__open(path, &wo);
	if (!rt_w)
		return -1;
	xpu_writer__meta(rt_w, "sample_freq", "99");
	rt_write_maps(rt_w, rt_now(), "test_unwind");
	for (int i = 0; i < n; i++)
		sum += (i % 4 == 3) ? rt_sort() : rt_level_a(i);
	if (lost) {
		struct xpu_lost l = { .time = rt_now(), .source = XPU_LOST_SAMPLES, .count = lost };

		xpu_writer__add(rt_w, XPU_REC_LOST, &l, sizeof(l));
	}
	struct xpu_finish fin = { .time = rt_now(), .nr_samples = (uint64_t)n, .nr_lost = lost };

	xpu_writer__add(rt_w, XPU_REC_FINISH, &fin, sizeof(fin));
	xpu_writer__close(rt_w);
	rt_w = NULL;
	return sum == 42 ? 1 : 0;	/* keep sum alive */
}

/* Names along stack id of the only entry whose leaf is rt_leaf. */
static int rt_find_chain(const struct profile *p, const char *const *want, size_t nwant)
{
	for (size_t i = 0; i < p->nr_entries; i++) {
		size_t n, k = 0;
		const uint32_t *fr = profile__stack(p, p->entries[i].stack, &n);

		for (size_t j = 0; j < n && k < nwant; j++)
			if (!strncmp(profile__frame(p, fr[j])->name, want[k], strlen(want[k])))
				k++;
		if (k == nwant)
			return 1;
	}
	return 0;
}

static void test_unwind_reaches_main(void)
{
	static const char *const chain[] = { "main", "rt_level_a", "rt_level_b",
					     "rt_level_c", "rt_leaf" };
	static const char *const sorted[] = { "main", "rt_sort", "qsort", "rt_cmp", "rt_leaf" };
	struct session s;
	size_t n;
	const uint32_t *fr;

	TEST_ASSERT(mkstemp(rt_path) >= 0);
	TEST_ASSERT(rt_write_trace(rt_path, 8, 0, 0) >= 0);
	TEST_ASSERT_EQ(session__open(&s, rt_path), 0);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	TEST_ASSERT_EQ(s.nr_samples, 8);
	TEST_ASSERT(profile__total(&s.profile, VIEW_CPU) == 8.0);
	/* the chain in order, root first (names match by prefix: qsort may be qsort_r) */
	TEST_ASSERT(rt_find_chain(&s.profile, chain, 5));
	/* through libc (no frame pointers, .eh_frame only) back to main */
	TEST_ASSERT(rt_find_chain(&s.profile, sorted, 5));
	/* the leaf frame is rt_leaf and the root is above main (libc start) */
	fr = profile__stack(&s.profile, s.profile.entries[0].stack, &n);
	TEST_ASSERT(n >= 5);
	TEST_ASSERT(!strcmp(profile__frame(&s.profile, fr[n - 1])->name, "rt_leaf"));
	session__close(&s);
	unlink(rt_path);
}

/*
 * A sample whose registers put the CFA at rbp + 16 = 0 (wrapped), with rsp
 * 0: the return address is read at 0xfffffffffffffff8, which is not in the
 * stack copy. The check "addr - sp + 8 <= size" wrapped to 0 and read the 8
 * bytes before the copy (the sample's saved rip) as a return address: a
 * second, made-up frame (found by fuzz_elf's review).
 */
static void test_unwind_wrapped_address(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS };
	char path[] = "/tmp/xpu-test-unwind-wrap-XXXXXX";
	struct session s;
	size_t n;

	TEST_ASSERT(mkstemp(path) >= 0);
	rt_w = xpu_writer__open(path, &wo);
	TEST_ASSERT(rt_w);
	rt_write_maps(rt_w, rt_now(), "test_unwind");
	rt_fp_frame(1);
	memset(rt_smp.stack, 0, 64);
	rt_smp.s = (struct xpu_sample){
		.time = rt_now(), .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
		.weight = 1,
		.stack = { .nr_regs = XPU_X86_NR_REGS, .arch = XPU_ARCH_X86_64, .stack_size = 64 },
	};
	rt_smp.regs[XPU_X86_RSP] = 0;
	rt_smp.regs[XPU_X86_RBP] = 0xfffffffffffffff0ULL;
	TEST_ASSERT_EQ(rt_write_sample(rt_w, &rt_smp), 0);
	TEST_ASSERT_EQ(xpu_writer__close(rt_w), 0);
	rt_w = NULL;
	TEST_ASSERT_EQ(session__open(&s, path), 0);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	TEST_ASSERT_EQ(s.profile.nr_entries, 1);
	profile__stack(&s.profile, s.profile.entries[0].stack, &n);
	TEST_ASSERT_EQ(n, 1);		/* the sampled pc only */
	session__close(&s);
	unlink(path);
}

/*
 * A process that also mapped an ELF file of another machine (a copy of this
 * test with e_machine EM_386), as its newest mapping. libdwfl took the
 * machine of the first module reported for the thread state, refused the
 * sample's x86-64 registers, and every sample left to it (no CFI at the pc:
 * its frame-pointer fallback) kept only its pc; with XPU_UNWIND_CHECK the
 * two unwinders differed (found by fuzz_elf). The sample's pc is in
 * rt_capture, which has no CFI; its frame pointer leads to the caller.
 */
static void test_unwind_foreign_module(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS };
	char path[] = "/tmp/xpu-test-unwind-i386-XXXXXX", elf[] = "/tmp/xpu-test-i386-XXXXXX";
	struct xpu_mmap mm = { .start = 0x10000000, .len = 4096, .prot = 5 };
	static uint8_t copy[1 << 16];
	struct iovec iov[2];
	struct session s;
	uint16_t em = 3;	/* EM_386 */
	int fd, in;
	ssize_t n;
	size_t nfr;

	/* the first 64 KiB of this test, relabelled (e_machine at offset 18) */
	in = open("/proc/self/exe", O_RDONLY);
	TEST_ASSERT(in >= 0);
	n = read(in, copy, sizeof(copy));
	close(in);
	TEST_ASSERT(n > 64);
	memcpy(copy + 18, &em, 2);
	fd = mkstemp(elf);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(write(fd, copy, n), n);
	close(fd);

	TEST_ASSERT(mkstemp(path) >= 0);
	rt_w = xpu_writer__open(path, &wo);
	TEST_ASSERT(rt_w);
	rt_write_maps(rt_w, rt_now(), "test_unwind");
	mm.time = rt_now();
	mm.pid = mm.tid = (uint32_t)getpid();
	iov[0] = (struct iovec){ &mm, sizeof(mm) };
	iov[1] = (struct iovec){ elf, strlen(elf) + 1 };
	TEST_ASSERT_EQ(xpu_writer__addv(rt_w, XPU_REC_MMAP, 0, iov, 2), 0);
	rt_stack_end = rt_map_end((uint64_t)__builtin_frame_address(0));
	rt_fp_frame(2);
	rt_smp.regs[XPU_X86_RIP] = (uint64_t)(uintptr_t)rt_capture + 1;
	TEST_ASSERT_EQ(rt_write_sample(rt_w, &rt_smp), 0);
	TEST_ASSERT_EQ(xpu_writer__close(rt_w), 0);
	rt_w = NULL;

	TEST_ASSERT_EQ(session__open(&s, path), 0);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	TEST_ASSERT_EQ(s.profile.nr_entries, 1);
	profile__stack(&s.profile, s.profile.entries[0].stack, &nfr);
	TEST_ASSERT(nfr >= 2);		/* rt_capture, then its caller's callers */
	session__close(&s);
	unlink(path);
	unlink(elf);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--write-trace"))
		return rt_write_trace(argv[2], atoi(argv[3]),
				      argc > 4 ? strtoul(argv[4], NULL, 0) : 0,
				      argc > 5 ? strtoull(argv[5], NULL, 0) : 0) < 0;
	TEST_RUN(test_unwind_reaches_main);
	TEST_RUN(test_unwind_wrapped_address);
	TEST_RUN(test_unwind_foreign_module);
	TEST_EXIT();
}
